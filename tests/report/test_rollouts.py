"""Training's own rollouts at the start, middle and end: the best-, middle- and worst-scored at each, by the
brief's weights, shown as review shows a sample."""

from __future__ import annotations

from grpo_rlvr.report.rollouts import picked_rollouts, reward_columns


def rows(step: int, scores: list[tuple[float | None, float | None]]) -> list[dict]:
    return [{"step": step, "prompt": [{"role": "user", "content": f"{i}+1="}],
             "completion": [{"role": "assistant", "content": f"<answer>{i}</answer>\x07"}],
             "format": f, "exact_match": e, "advantage": 0.1 * i} for i, (f, e) in enumerate(scores)]


def test_the_start_middle_and_end_with_the_best_middle_and_worst_of_each():
    logged = rows(5, [(1, 0), (1, 1), (0, 0), (1, 0)]) + rows(10, [(1, 1)] * 4) + rows(15, [(0, 0)] * 2) \
        + rows(20, [(None, None), (1, 1), (0, 1)])
    assert reward_columns(logged) == ["format", "exact_match"]
    picked = picked_rollouts(logged, {"format": 0.2, "exact_match": 1.0})
    assert [(g["when"], g["step"], g["logged"]) for g in picked] == [("start", 5, 4), ("middle", 15, 2),
                                                                     ("end", 20, 3)]
    start = picked[0]["rollouts"]
    assert [r["total"] for r in start] == [1.2, 0.2, 0]   # weighted: 0.2 format + 1.0 exact_match
    assert start[0]["completion"] == [("assistant", "<answer>1</answer>\\x07")]   # escaped, as review shows it
    assert start[0]["prompt"] == [("user", "1+1=")] and start[0]["advantage"] == 0.1
    end = picked[2]["rollouts"]
    assert [r["total"] for r in end] == [1.2, 1.0, None]   # a rollout no reward scored comes last, total unknown


def test_one_logged_step_and_none():
    assert [g["when"] for g in picked_rollouts(rows(3, [(1, 1)]), {})] == ["the one logged step"]
    assert picked_rollouts([], {}) == []
