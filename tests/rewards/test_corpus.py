"""The built-in rewards' verdicts on a fixed corpus (``tests/data/reward_corpus.jsonl``), through the command line
(``grpo-rlvr score --reward NAME --option KEY=VALUE --json``) as a user scores a file: each line names the reward,
its options, the completion, the ground-truth columns, the score it must get and why.

The corpus holds what broke across Python releases (a hedge written as two boxes parted by ``\\text{ or }``, a
number followed by unit words: both read through regular expressions) beside each reward's ordinary verdicts. It
needs no torch, so the unprivileged lane runs it again with the distribution's own Python
(``scripts/test-unprivileged.sh``: Debian 12's 3.11.2 here), where the main lane's is a newer 3.11."""

from __future__ import annotations

import json
import subprocess
from itertools import groupby

import pytest

from paths import CLI, DATA

CORPUS = DATA / "reward_corpus.jsonl"
_KEYS = ("reward", "options", "score", "note")


def _groups() -> dict[str, list[dict]]:
    rows = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    key = lambda r: json.dumps([r["reward"], r["options"]], sort_keys=True)  # noqa: E731
    return {k: list(g) for k, g in groupby(sorted(rows, key=key), key=key)}


GROUPS = _groups()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_the_cli_scores_the_corpus_as_written(group, tmp_path):
    rows = GROUPS[group]
    reward, options = json.loads(group)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({k: v for k, v in r.items() if k not in _KEYS}) + "\n" for r in rows))
    argv = [*CLI, "score", "--reward", reward, "--input", str(src), "--json"]
    for k, v in options.items():
        argv += ["--option", f"{k}={json.dumps(v) if not isinstance(v, str) else v}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    got = [json.loads(line) for line in done.stdout.splitlines()]
    wrong = [(r["note"], r["completion"][:80], r["score"], g["score"], g["reason"])
             for r, g in zip(rows, got, strict=True) if g["score"] != pytest.approx(r["score"])]
    assert not wrong, "\n".join(map(str, wrong))


def test_the_corpus_covers_every_reward_that_needs_no_model_or_endpoint():
    from grpo_rlvr.rewards import REGISTRY

    offline = set(REGISTRY) - {"rubric_judge"}   # a judge needs an OpenAI-compatible endpoint
    assert {json.loads(g)[0] for g in GROUPS} == offline
