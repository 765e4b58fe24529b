"""Which rows a person reads is drawn afresh each time, and every draw stays in view: in the folder's log, in the
account's log, in the manifest; and the samples must be the pick the draw makes from what was sampled."""

from __future__ import annotations

import json
import shutil

import pytest

from artifacts import make_artifact, review_all
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import draws, load_artifact
from grpo_rlvr.inspection.artifact import manifest_seal, sample_digest


def test_two_draws_differ_and_each_is_recorded(workspace):
    a = make_artifact(workspace / "brief.yaml", workspace / "a", verdict=None)
    b = make_artifact(workspace / "brief.yaml", workspace / "b", verdict=None)
    da, db = (load_artifact(x).manifest["draw"] for x in (a, b))
    assert da["seed"] != db["seed"] and da["number"] == db["number"] == 1
    assert db["of_brief"] == da["of_brief"] + 1    # the account's log holds both, under the brief's fingerprint
    assert [d["seed"] for d in draws.for_brief(load_artifact(a).manifest["brief"]["fingerprint"])][-2:] == \
        [da["seed"], db["seed"]]


def test_drawing_again_into_a_folder_carries_the_earlier_draws_with_how_they_ended(workspace):
    out = workspace / "out" / "inspection"
    make_artifact(workspace / "brief.yaml", out, verdict=None)
    first = load_artifact(out).manifest["draw"]
    make_artifact(workspace / "brief.yaml", out, verdict=None)   # a draw nobody reviewed, replaced
    log = draws.read_log(out / draws.DRAWS)
    assert [d["number"] for d in log] == [1, 2] and log[0]["seed"] == first["seed"]
    assert log[0]["verdicts_when_replaced"] == 0 and "replaced" in log[0]
    assert load_artifact(out).manifest["draw"]["number"] == 2


def test_a_forced_draw_names_where_the_reviewed_one_went(workspace):
    out = workspace / "out" / "inspection"
    make_artifact(workspace / "brief.yaml", out)            # reviewed
    with pytest.raises(Exception, match="--force"):
        make_artifact(workspace / "brief.yaml", out, verdict=None)
    from artifacts import synthetic_trajectory
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.inspection.run import write_artifact

    brief = load_brief(workspace / "brief.yaml")
    rows = load_rows(brief)[:32]
    cands = [{"prompt_index": p, "trajectory": synthetic_trajectory(r["prompt"], f"<answer>{r['answer']}</answer>"
                                                                    if j % 2 else "junk")}
             for p, r in enumerate(rows) for j in range(4)]
    write_artifact(brief, cands, [r for r in rows for _ in range(4)], 64, out, sampling=brief.sampling(), force=True)
    log = draws.read_log(out / draws.DRAWS)
    assert log[0]["verdicts_when_replaced"] == 64 and ".bak-" in log[0]["kept_as"]


def test_the_gate_refuses_a_hidden_draw_and_samples_that_are_not_the_pick(workspace):
    out = make_artifact(workspace / "brief.yaml", workspace / "insp")
    assert check_gate(out).passed
    saved = (out / draws.DRAWS).read_bytes()
    (out / draws.DRAWS).write_text("")                       # the earlier draws, hidden
    result = check_gate(out)
    assert not result.rules[0].passed and "log of draws" in " ".join(result.rules[0].problems)
    (out / draws.DRAWS).write_bytes(saved)

    # samples swapped for other candidates of the same draw, every digest and seal recomputed: not the pick
    art = load_artifact(out)
    samples = art.samples
    samples[0], samples[1] = samples[1], samples[0]
    for i, s in enumerate(samples):
        s["id"] = f"s{i:03d}"
    art.manifest["samples_digest"] = sample_digest(samples)
    art.manifest["seal"] = manifest_seal(art.manifest)
    (out / "manifest.json").write_text(json.dumps(art.manifest))
    art.save_samples()
    review_all(out)
    result = check_gate(out)
    assert not result.rules[0].passed
    assert "not the ones inspect picked" in " ".join(result.rules[0].problems), result.format()


def test_the_gate_refuses_an_audit_reference_it_did_not_write(workspace, tmp_path):
    out = make_artifact(workspace / "brief.yaml", workspace / "insp")
    shutil.copy(out / "audit.json", tmp_path / "saved.json")
    ref = json.loads((out / "audit.json").read_text())
    ref["rollouts"][0]["scores"]["format"] = 1.0 - (ref["rollouts"][0]["scores"]["format"] or 0)
    (out / "audit.json").write_text(json.dumps(ref))
    result = check_gate(out)
    assert not result.rules[0].passed and "audit.json" in " ".join(result.rules[0].problems)
