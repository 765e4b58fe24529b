"""Benchmark: ``grpo-rlvr train`` vs a hand-written plain TRL script with the identical GRPOConfig, on the tiny
model, same steps, side by side in one run (alternating, so drift hits both). Prints wall time and peak RSS of
each and the ratios (goal ≤ 1.05 each).

Run: ``python benchmarks/bench_train_overhead.py [--steps 30] [--repeats 2]``. Needs nothing downloaded.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

MEASURE = textwrap.dedent("""
    import json, resource, subprocess, sys, time
    t0 = time.perf_counter()
    rc = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    wall = time.perf_counter() - t0
    print(json.dumps({"rc": rc, "wall_s": wall,
                      "max_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
""")

PLAIN = textwrap.dedent('''
    # A plain TRL script: the same GRPOConfig (read from the rendered YAML), model, data and rewards.
    import re, sys, yaml
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    run, model, data, out = sys.argv[1:5]
    cfg = yaml.safe_load(open(f"{run}/grpo_config.yaml"))
    cfg["output_dir"] = out

    def format(completions, **kw):
        return [1.0 if re.fullmatch(r"<answer>[^<]*</answer>", c[0]["content"].strip()) else 0.0 for c in completions]

    def exact_match(completions, answer, **kw):
        out = []
        for c, a in zip(completions, answer):
            m = re.fullmatch(r"<answer>(.*?)</answer>", c[0]["content"].strip())
            out.append(1.0 if m and m.group(1).strip() == a else 0.0)
        return out

    trainer = GRPOTrainer(model=model, reward_funcs=[format, exact_match], args=GRPOConfig(**cfg),
                          train_dataset=load_dataset("json", data_files=data, split="train"))
    trainer.train()
    trainer.save_model(out + "/final")
''')


def measure(cmd: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    if res["rc"] != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}")
    return res


def setup(work: Path, steps: int) -> Path:
    import yaml

    from grpo_rlvr.demo import arithmetic_task, tiny_model
    from grpo_rlvr.files import write_jsonl_atomic
    from grpo_rlvr.gate.check import check_gate
    from grpo_rlvr.run.render import render

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from artifacts import make_artifact

    tok = tiny_model.build_tokenizer()
    tiny_model.save_pretrained(tiny_model.build_model(tok, 0), tok, work / "model", {"seed": 0})
    write_jsonl_atomic(work / "data" / "train.jsonl", arithmetic_task.make_rows(500, seed=1))
    from importlib import resources

    brief = yaml.safe_load(resources.files("grpo_rlvr.examples.arithmetic").joinpath("brief.yaml").read_text())
    brief["grpo"].update(max_steps=steps, save_steps=10_000, logging_steps=5)
    (work / "brief.yaml").write_text(yaml.safe_dump(brief))
    make_artifact(work / "brief.yaml", work / "out" / "inspection")
    assert check_gate(work / "out" / "inspection").passed
    return render(work / "brief.yaml").dir


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        run = setup(work, args.steps)
        plain = work / "plain.py"
        plain.write_text(PLAIN)
        ours_cmd = [sys.executable, "-m", "grpo_rlvr", "train", str(run)]
        plain_cmd = [sys.executable, str(plain), str(run), str(work / "model"), str(work / "data" / "train.jsonl"),
                     str(work / "plain-out")]
        ours, theirs = [], []
        for _ in range(args.repeats):
            ours.append(measure(ours_cmd))
            theirs.append(measure(plain_cmd))
    w_o, w_p = statistics.median(r["wall_s"] for r in ours), statistics.median(r["wall_s"] for r in theirs)
    m_o, m_p = statistics.median(r["max_rss_mb"] for r in ours), statistics.median(r["max_rss_mb"] for r in theirs)
    print(f"{args.steps} GRPO steps on the tiny model, median of {args.repeats} alternating runs")
    print(f"{'runner':<26}{'wall s':>10}{'peak RSS MB':>14}")
    print(f"{'grpo-rlvr train':<26}{w_o:>10.1f}{m_o:>14.0f}")
    print(f"{'plain TRL script':<26}{w_p:>10.1f}{m_p:>14.0f}")
    print(f"ratios ours/plain: wall {w_o / w_p:.3f}, peak RSS {m_o / m_p:.3f} (goal ≤ 1.05 each)")


if __name__ == "__main__":
    main()
