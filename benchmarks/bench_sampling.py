"""Benchmark: the rollout road (preflight's and inspect's sampling, through the run's own TRL trainer) against
plain ``model.generate``, and against the road with TRL's colocated vLLM engine where vLLM is installed; same
model, prompts and settings, in one run.

Columns:

- ``generate (direct)``: the naive way: ``AutoModelForCausalLM.generate`` on left-padded batches of 64 with the
  brief's sampling settings, as the project sampled before it sampled through the trainer;
- ``road, transformers``: ``rollout.road.roll_out`` with TRL's own transformers generation (what preflight and
  inspect run wherever training would not use vLLM);
- ``road, vLLM colocate``: the same with TRL's colocated vLLM engine (``sampling.engine: vllm``), when vLLM is
  installed (``.venv-vllm``: ``scripts/test-vllm.sh --prepare``).

Start-up (model load, trainer build and for vLLM the engine, plus one untimed pass of the whole job, since vLLM
compiles per batch shape on first use) is timed apart from generation. Prints tokens/s per column and the ratios to
the direct column. The road's extra cost per batch is TRL's own work around generation (one forward pass for the
old log-probabilities where TRL needs them, the group statistics); this measures it.

Models: the demo's tiny model (0.9M parameters; built here, nothing downloaded), or with ``--hidden/--layers`` a
larger randomly initialised one of the same family. Run:
``python benchmarks/bench_sampling.py [--hidden 1024 --layers 8] [--prompts 64 --k 8 --max-tokens 24]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import tempfile
import time
from pathlib import Path


def build_model(root: Path, hidden: int | None, layers: int | None) -> Path:
    from grpo_rlvr.demo import tiny_model

    shape = {}
    if hidden:
        heads = max(4, hidden // 64)
        shape = {"hidden_size": hidden, "intermediate_size": 3 * hidden, "num_attention_heads": heads,
                 "num_key_value_heads": heads, "max_position_embeddings": 512}
    if layers:
        shape["num_hidden_layers"] = layers
    tok = tiny_model.build_tokenizer()
    model = tiny_model.build_model(tok, seed=0, shape=shape)
    d = root / "model"
    tiny_model.save_pretrained(model, tok, d, {"seed": 0, "kind": "benchmark", **shape})
    return d


def write_brief(root: Path, max_tokens: int, engine: str) -> Path:
    import yaml

    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    write_jsonl_atomic(root / "data" / "train.jsonl", arithmetic_task.make_rows(256, seed=1))
    brief = {"model": {"name_or_path": "./model"}, "dataset": {"path": "./data/train.jsonl"},
             "rewards": [{"name": "format"}, {"name": "exact_match"}], "hardware": {"accelerator": "cpu"},
             "grpo": {"max_completion_length": max_tokens, "per_device_train_batch_size": 64,
                      "gradient_accumulation_steps": 1, "bf16": False},
             "sampling": {"engine": engine}}
    path = root / f"brief-{engine}.yaml"
    path.write_text(yaml.safe_dump(brief))
    return path


def direct(model_dir: Path, prompts: list, k: int, max_tokens: int, seed: int) -> tuple[float, float, int]:
    """(start-up s, generate s, tokens): plain transformers generation, batches of 64, left padding."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir).eval()
    encoded = [tok.apply_chat_template(p, add_generation_prompt=True, tokenize=True, return_dict=True)["input_ids"]
               for p in prompts]
    jobs = [ids for ids in encoded for _ in range(k)]

    def run(batch_jobs) -> int:
        n = 0
        for start in range(0, len(batch_jobs), 64):
            batch = batch_jobs[start:start + 64]
            width = max(map(len, batch))
            ids = torch.full((len(batch), width), tok.pad_token_id)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, row in enumerate(batch):
                ids[r, width - len(row):] = torch.tensor(row)
                mask[r, width - len(row):] = 1
            with torch.no_grad():
                out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=max_tokens, do_sample=True,
                                     temperature=1.0, top_p=1.0, top_k=0, pad_token_id=tok.pad_token_id,
                                     eos_token_id=tok.eos_token_id)
            for row in out[:, width:].tolist():
                n += row.index(tok.eos_token_id) + 1 if tok.eos_token_id in row else len(row)
        return n

    torch.manual_seed(seed)
    run(jobs[:16])   # warm-up
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    n = run(jobs)
    return startup, time.perf_counter() - t0, n


def road(brief_path: Path, k: int, prompts: int, seed: int) -> tuple[float, float, int]:
    """(start-up s, generate s, tokens): the rollout road, as preflight runs it."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.rollout import road as rollout

    brief = load_brief(brief_path)
    rows = load_rows(brief)[:prompts]
    t0 = time.perf_counter()
    rollout.roll_out(brief, rows, k, seed)   # builds the trainer (kept) and compiles; untimed for generation
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    drawn = rollout.roll_out(brief, rows, k, seed)
    spent = time.perf_counter() - t0
    rollout.release()
    return startup, spent, sum(t.num_tokens for t in drawn.trajectories)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--k", type=int, default=8, help="completions per prompt (preflight's k)")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=None, help="build a larger model: hidden size")
    ap.add_argument("--layers", type=int, default=None, help="build a larger model: layers")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    import torch

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows

    root = Path(tempfile.mkdtemp(prefix="bench-sampling-"))
    model_dir = build_model(root, args.hidden, args.layers)
    plain = write_brief(root, args.max_tokens, "transformers")
    prompts = [r["prompt"] for r in load_rows(load_brief(plain))[:args.prompts]]
    print(f"{len(prompts)} prompts × {args.k} samples, ≤ {args.max_tokens} tokens, temperature 1; torch threads "
          f"{torch.get_num_threads()}; load average {os.getloadavg()[0]:.2f}", flush=True)
    rows = {"generate (direct)": direct(model_dir, prompts, args.k, args.max_tokens, 3407),
            "road, transformers": road(plain, args.k, args.prompts, 3407)}
    if importlib.util.find_spec("vllm") is not None:
        rows["road, vLLM colocate"] = road(write_brief(root, args.max_tokens, "vllm"), args.k, args.prompts, 3407)
    else:
        print("vLLM is not installed here: the vLLM column needs .venv-vllm (scripts/test-vllm.sh --prepare)")
    print(f"{'column':<22}{'start-up s':>12}{'generate s':>12}{'tokens':>9}{'tokens/s':>11}{'ratio':>8}")
    base = rows["generate (direct)"][2] / rows["generate (direct)"][1]
    for name, (startup, spent, n) in rows.items():
        print(f"{name:<22}{startup:>12.1f}{spent:>12.2f}{n:>9}{n / spent:>11.0f}{n / spent / base:>7.2f}×")
    # the last line: the same as JSON (scripts/gpu-smoke.sh reads it)
    print(json.dumps({name: {"startup_s": round(a, 2), "generate_s": round(b, 3), "tokens": n,
                             "tokens_per_s": round(n / b, 1), "ratio_to_direct": round(n / b / base, 3)}
                      for name, (a, b, n) in rows.items()}))
    return 0


if __name__ == "__main__":   # vLLM's engine core is a spawned process that imports this file
    raise SystemExit(main())
