"""GPU smoke test: the demo pipeline on one CUDA GPU (bf16, transformers generation, no vLLM), reporting the
GRPO step time and peak GPU memory next to the memory model's estimate for the same configuration.

Run: ``scripts/gpu-smoke.sh`` (or ``python -m grpo_rlvr.demo.gpu_smoke --workdir DIR``). No internet needed.
Exit 2 when there is no CUDA device.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from grpo_rlvr.jsonl import read_jsonl


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--workdir", default="runs/gpu-smoke")
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--gpu-type", default="141GB", help="the memory model's GPU class for the comparison")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("Error: no CUDA device: the GPU smoke test needs one NVIDIA GPU (use `grpo-rlvr demo` on CPU).",
              file=sys.stderr)
        return 2
    from grpo_rlvr.demo.pipeline import run_demo

    overrides = {"hardware": {"accelerator": "gpu", "num_gpus": 1, "gpu_type": args.gpu_type},
                 "grpo": {"use_vllm": False, "bf16": True}}
    summary = run_demo(workdir=args.workdir, grpo_steps=args.steps, brief_overrides=overrides)
    run = Path(args.workdir) / "out" / "run"
    rows = read_jsonl(run / "output" / "metrics.jsonl", "metrics")
    step_times = [r["step_time"] for r in rows if "step_time" in r]
    peak = max((r.get("gpu/max_memory_allocated_gib", 0.0) for r in rows), default=0.0)
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.cli.memory import brief_memory

    mem = brief_memory(load_brief(Path(args.workdir) / "brief.yaml"))
    report = {"device": torch.cuda.get_device_name(0), "ok": summary.get("ok"),
              "accuracy_before": summary.get("accuracy_before"), "accuracy_after": summary.get("accuracy_after"),
              "step_time_s_median": statistics.median(step_times) if step_times else None,
              "peak_memory_allocated_gib": round(peak, 3),
              "memory_model_estimate_gib": mem and mem["total_gib"], "memory_model_terms": mem and mem["terms"]}
    print(json.dumps(report, indent=2))
    (Path(args.workdir) / "gpu_smoke.json").write_text(json.dumps(report, indent=2))
    return 0 if summary.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
