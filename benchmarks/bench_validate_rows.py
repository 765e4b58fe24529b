"""Benchmark: ``validate``'s row checks on a 100,000-row JSON Lines file: one pass that hands each row to every
check (``validate.rows.check_rows``) against the naive way, one pass over the file per check (the prompt, then each
reward's column check, each reading and parsing the whole file again).

Run: ``python benchmarks/bench_validate_rows.py [--rows 100000] [--scenario answers|code|both]``. It writes the
data and a brief into a temporary folder and measures each side in its own subprocess (wall time, peak resident
memory), so neither inherits the other's caches. Scenarios:

- ``answers``: five rewards on one file (format, exact_match, math, json_schema over 100 distinct schemas,
  tool_call with an expected call per row): the checks are cheap, reading the file is the cost.
- ``code``: format and unit_tests, each row with its own three assert tests: planning each row's tests in the
  sandbox's planner process (what the reward does before it runs a program) is the cost, about 1 ms a row; once
  the first rows show that cost, ``validate/rows.py`` shares the rows among worker processes (one per usable core). The
  third side holds the pass to one process.

The numbers measured on this project's shared 2-core machine are in docs/pipeline.md ("Every row, before cost").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grpo_rlvr.cpu_threads import usable_cores

SCENARIOS = {
    "answers": [{"name": "format", "weight": 0.2}, {"name": "exact_match", "weight": 1.0},
                {"name": "math", "weight": 0.0}, {"name": "json_schema", "weight": 0.5},
                {"name": "tool_call", "weight": 0.5}],
    "code": [{"name": "format", "weight": 0.2}, {"name": "unit_tests", "weight": 1.0}],
}


def row(i: int, scenario: str) -> dict:
    out = {"prompt": [{"role": "user", "content": f"Problem {i}: what is {i} + {i + 1}?"}]}
    if scenario == "answers":
        k = i % 100
        out["answer"] = str(2 * i + 1)
        out["schema"] = json.dumps({"type": "object", "properties": {f"field{k}": {"type": "integer"}},
                                    "required": [f"field{k}"]})
        out["tool"] = json.dumps({"name": "add", "arguments": {"a": i, "b": i + 1}})
    else:
        out["tests"] = [f"assert add({i}, {j}) == {i + j}" for j in range(3)]
    return out


def write_case(folder: Path, rows: int, scenario: str) -> Path:
    import yaml

    data = folder / f"{scenario}.jsonl"
    with data.open("w") as fh:
        for i in range(rows):
            fh.write(json.dumps(row(i, scenario)) + "\n")
    model = folder / "model"
    if not model.exists():
        from grpo_rlvr.demo import tiny_model

        tok = tiny_model.build_tokenizer()
        tiny_model.save_pretrained(tiny_model.build_model(tok, seed=0), tok, model, {"kind": "bench"})
    brief = folder / f"{scenario}.yaml"
    brief.write_text(yaml.safe_dump({
        "name": f"bench-{scenario}", "model": {"name_or_path": "./model"},
        "dataset": {"path": f"./{data.name}", "prompt_column": "prompt"},
        "rewards": SCENARIOS[scenario], "hardware": {"accelerator": "cpu"}, "output_dir": "./out",
        "grpo": {"max_completion_length": 24}}))   # the tiny model's context is 256 tokens
    return brief


ONE_PASS = """
from grpo_rlvr.brief import load_brief
from grpo_rlvr.validate.rows import check_rows
n = check_rows(load_brief(BRIEF))
"""

# The same pass held to this one process (no worker processes for costly checks).
ONE_PROCESS = """
import grpo_rlvr.cpu_threads
grpo_rlvr.cpu_threads.usable_cores = lambda: 1
""" + ONE_PASS

# The naive way: one pass per check, each reading and parsing the file again.
PER_CHECK = """
from pathlib import Path
from grpo_rlvr.brief import load_brief
from grpo_rlvr.validate.rows import dataset_rows, row_problems
from grpo_rlvr.rewards import from_brief
brief = load_brief(BRIEF)
ds = brief.dataset
checks = [(r.name, r.check_row) for r in from_brief(brief) if r.check_row is not None]
n = 0
for one in [[]] + [[c] for c in checks]:   # the prompt alone, then each reward's check
    shown, bad, n = row_problems(dataset_rows(Path(ds.resolved)), one, ds.prompt_column, dict(ds.columns),
                                 dict(ds.prompt) or None)
    assert bad == 0, shown
"""


def measure(code: str, brief: Path) -> tuple[float, float, int]:
    """(seconds, peak MiB, rows) of ``code`` in a fresh interpreter; the imports are not timed."""
    prog = (f"import resource, time\nBRIEF = {str(brief)!r}\nimport grpo_rlvr.brief, grpo_rlvr.rewards, "
            "grpo_rlvr.validate.rows, jsonschema\nt0 = time.perf_counter()\n" + code +
            "\nprint(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, n)")
    out = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, check=True)
    s, mib, n = out.stdout.split()[-3:]
    return float(s), float(mib), int(n)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--scenario", choices=["answers", "code", "both"], default="both")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for scenario in (["answers", "code"] if args.scenario == "both" else [args.scenario]):
            t0 = time.perf_counter()
            brief = write_case(folder, args.rows, scenario)
            mb = (folder / f"{scenario}.jsonl").stat().st_size / 1e6
            checks = len(SCENARIOS[scenario]) - 1 + 1   # each reward with a column check, and the prompt
            print(f"{scenario}: {args.rows:,} rows, {mb:.1f} MB, {checks} checks (written in "
                  f"{time.perf_counter() - t0:.1f} s)")
            one = measure(ONE_PASS, brief)
            alone = measure(ONE_PROCESS, brief)
            naive = measure(PER_CHECK, brief)
            assert one[2] == alone[2] == naive[2] == args.rows, (one, alone, naive)
            for label, (s, mib, _) in (("one pass, every check", one), ("the same in one process", alone),
                                       ("one pass per check (naive)", naive)):
                print(f"  {label:<28} {s:8.2f} s  {s / args.rows * 1e6:7.1f} µs/row  peak {mib:6.0f} MiB")
            print(f"  ratio naive / one pass: {naive[0] / one[0]:.2f}x; one process / one pass: "
                  f"{alone[0] / one[0]:.2f}x ({usable_cores()} usable cores)")


if __name__ == "__main__":
    main()
