"""The review as the report states it: who read how many samples and when, each reward's error rate by the
person's own verdicts with a Wilson interval, and the disagreements shown as review shows them."""

from __future__ import annotations

import json
import math

from grpo_rlvr.report.review_record import error_rate, error_rates, review_facts


def test_the_error_rate_is_a_share_with_its_wilson_interval():
    none = error_rate(0, 64)      # a passing review: 0 of 64 wrong, and still up to 5.7% possible
    assert none["share"] == 0 and none["low"] == 0
    assert math.isclose(none["high"], 1.96 ** 2 / (64 + 1.96 ** 2), abs_tol=1e-4)   # 0.0566: Wilson at x = 0
    half = error_rate(50, 100)    # the textbook case: 0.404 to 0.596
    assert (half["low"], half["high"]) == (0.4038, 0.5962)
    assert error_rate(0, 0)["share"] is None and error_rate(0, 0)["high"] == 1.0   # nothing read: nothing known


def test_a_disagreement_blames_the_rewards_it_names_or_every_reward_when_it_names_none():
    samples = [{"verdict": {"verdict": "agree"}}] * 8 + [
        {"verdict": {"verdict": "disagree", "rewards": ["exact_match"]}},
        {"verdict": {"verdict": "disagree", "rewards": []}},
        {"verdict": None}]                                   # not reviewed: not counted
    rates = error_rates(samples, ["format", "exact_match"])
    assert rates["any"]["wrong"] == 2 and rates["any"]["reviewed"] == 10
    assert rates["exact_match"]["wrong"] == 2 and rates["format"]["wrong"] == 1


def test_the_review_of_a_run_with_its_disagreements_shown_as_review_shows_them(written_run):
    from grpo_rlvr.report.run_files import find_run

    review = review_facts(find_run(written_run).inspection)
    assert review["samples"] == review["reviewed"] == 64 and review["disagreements"] == 2
    assert review["reviewers"] == ["ada (human)", "tester (human)"]
    assert review["median_seconds"] == 4.0 and review["first_verdict"] <= review["last_verdict"]
    assert review["error_rates"]["exact_match"]["wrong"] == 2 and review["error_rates"]["format"]["wrong"] == 1
    assert review["signature"] == {"present": False, "required": False, "allowed_signers": [], "verified": None,
                                   "problems": []}
    shown = review["shown"][0]
    assert shown["note"] == "the answer is right: the reward misreads '07'" and shown["blamed"] == ["exact_match"]
    # a control character in model output is shown as an escape, never sent to the reader's screen
    assert shown["completion"] == [("assistant", "<answer>07</answer>\\x1b[2J hidden?")]
    assert set(shown["scores"]) == {"format", "exact_match"} and shown["scores"]["format"]["reason"]


def test_a_run_without_an_inspection_or_with_a_damaged_one_says_so(tmp_path):
    assert review_facts(None) is None
    (tmp_path / "manifest.json").write_text("{}")
    (tmp_path / "samples.jsonl").write_text("{not json\n")
    assert "samples.jsonl" in review_facts(tmp_path)["unreadable"]


def test_an_unreviewed_run_says_it_had_no_review(written_run):
    """A smoke test names an inspection that was never made: the report said "unreadable (… file not found; check
    the path; each line must be one JSON object)"; an inspection nobody read said "read by nobody; the reward was
    wrong on 0 (95% interval 0.0–100.0%)". Each now says what it is."""
    import shutil

    from grpo_rlvr.report import write_report
    from grpo_rlvr.report.run_files import find_run

    inspection = find_run(written_run).inspection
    for s in (inspection / "samples.jsonl",):
        rows = [json.loads(x) for x in s.read_text().splitlines()]
        s.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "verdict"}) + "\n" for r in rows))
    said = write_report(written_run).format()
    assert "review: not reviewed (0 of 64 samples read)" in said, said
    shutil.rmtree(inspection)
    assert review_facts(inspection) == {"inspection": str(inspection), "absent": True}
    result = write_report(written_run)
    assert f"review: none (no inspection at {inspection})" in result.format(), result.format()
    page = result.html.read_text()
    assert "does not exist (an unreviewed smoke test" in page and "cannot be read" not in page
