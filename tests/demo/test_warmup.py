"""The demo's SFT warmup says how far it is: a line every ``PROGRESS_EVERY`` steps and at the last (step/total,
the loss, the seconds so far, the ETA), where it used to train for minutes without a word."""

from __future__ import annotations

import io

import pytest

from grpo_rlvr.demo import arithmetic_task
from grpo_rlvr.demo.pipeline import _Phases
from grpo_rlvr.demo.warmup import PROGRESS_EVERY, sft_warmup


@pytest.mark.e2e   # it trains (12 SFT steps of the tiny model, seconds)
def test_the_warmup_reports_its_progress_as_it_trains(tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok, model = AutoTokenizer.from_pretrained(tiny_model_dir), AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    rows = arithmetic_task.make_rows(8, seed=1)
    seen = []
    steps = PROGRESS_EVERY + 2
    losses = sft_warmup(model, tok, rows, [arithmetic_task.target_completion(r["answer"]) for r in rows],
                        steps=steps, lr=1e-4, batch_size=2, seed=0, progress=lambda *a: seen.append(a))
    assert [(s, n) for s, n, _, _ in seen] == [(PROGRESS_EVERY, steps), (steps, steps)]
    assert [loss for _, _, loss, _ in seen] == [losses[PROGRESS_EVERY - 1], losses[-1]]
    assert seen[0][3] <= seen[1][3]
    out = io.StringIO()
    ph = _Phases(out)
    ph.warmup_progress(*seen[0])
    ph.warmup_progress(*seen[1])
    first, last = out.getvalue().splitlines()
    assert first.startswith(f"    warmup step {PROGRESS_EVERY}/{steps} | loss {seen[0][2]:.3f} | ") and "ETA" in first
    assert last.startswith(f"    warmup step {steps}/{steps} | loss ") and "ETA" not in last
