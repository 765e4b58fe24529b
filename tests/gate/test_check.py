"""The Phase 1 gate: a valid artifact passes, and every tampering fails with a reason that names it."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from artifacts import completions_for, make_artifact, review_all
from grpo_rlvr.errors import GateError, GateRefused
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.artifact import sample_digest


@pytest.fixture
def artifact(workspace):
    return make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")


def failing(result) -> dict[int, str]:
    return {r.id: " | ".join(r.problems) for r in result.rules if not r.passed}


def edit_samples(path, fn):
    art = load_artifact(path)
    fn(art.samples)
    art.save_samples()


def test_valid_artifact_passes(artifact, workspace):
    res = check_gate(artifact, brief=workspace / "brief.yaml")
    assert res.passed, res.format()
    assert res.calibration["rewards"]["format"]["agreement"] == 1.0


def test_a_loaded_brief_gives_the_same_result_as_its_path(artifact, workspace):
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.gate.check import RULES

    edit_samples(artifact, lambda ss: ss[3].update(total=ss[3]["total"] + 0.5))  # one rule fails, the same way
    by_path, by_brief = (check_gate(artifact, brief=b) for b in (workspace / "brief.yaml",
                                                                  load_brief(workspace / "brief.yaml")))
    assert not by_path.passed and by_brief.to_dict() == by_path.to_dict()
    assert [r.id for r in by_brief.rules] == [rule_id for rule_id, _, _ in RULES] == [1, 2, 3, 4, 5, 6]


def test_gate_cli_json_and_speed(artifact, workspace):
    t0 = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "gate", str(artifact), "--json"], capture_output=True,
                         text=True)
    elapsed = time.monotonic() - t0
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["passed"] and len(data["rules"]) == 6
    print(f"gate CLI wall time: {elapsed:.2f}s")  # reported, not asserted (noisy machines)


def test_gate_imports_no_torch(artifact):
    code = ("import sys; from grpo_rlvr.gate.check import check_gate; r = check_gate(sys.argv[1]); "
            "print(r.passed, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(artifact)], capture_output=True, text=True)
    assert out.stdout.split() == ["True", "False"], out.stderr


def test_reward_source_edited_after_inspection(artifact, workspace):
    from grpo_rlvr.rewards import build_reward

    real = build_reward("exact_match")
    # stand-in for an edit: the installed reward's source fingerprint no longer matches the recorded one
    m = json.loads((artifact / "manifest.json").read_text())
    for r in m["rewards"]:
        if r["name"] == "exact_match":
            r["fingerprint"] = "0" * 64
    (artifact / "manifest.json").write_text(json.dumps(m))
    assert real.fingerprint != "0" * 64
    assert "exact_match" in failing(check_gate(artifact))[3] and "source code changed" in failing(check_gate(artifact))[3]


def test_user_reward_file_edited_after_inspection(workspace):
    (workspace / "my_format.py").write_text(
        "def reward(completions, **kw):\n    return [1.0 if c.startswith('<answer>') else 0.0 for c in completions]\n")
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("  - name: format   ", "  - name: my_format.py\n    kind: format\n#")
                     # a user format reward defines no answer tag for exact_match: say it, as a user would
                     .replace("    weight: 1.0\n", "    weight: 1.0\n    params: {extract: tag}\n", 1))
    art = make_artifact(brief, workspace / "insp")
    assert check_gate(art).passed, check_gate(art).format()
    (workspace / "my_format.py").write_text(
        "def reward(completions, **kw):\n    return [1.0 for c in completions]\n")
    # loading the brief would import (run) the edited code: the gate refuses before it, naming the file
    with pytest.raises(GateRefused, match=r"reward 'my_format': source code changed since the inspection "
                                          r"\(fingerprint mismatch\) in my_format.py; it was not imported"):
        check_gate(art)


def test_reward_params_changed(artifact, workspace):
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("  - name: exact_match              # the number inside the tag "
                                               "equals the sum\n    weight: 1.0",
                                               "  - name: exact_match\n    weight: 1.0\n    params: {case_sensitive: true}"))
    fails = failing(check_gate(artifact, brief=brief))
    assert "params changed" in fails[3]


@pytest.mark.parametrize("tamper,rule,words", [
    (lambda s: s.pop(), 1, "samples were removed"),
    (lambda s: s.append(dict(s[0])), 1, "duplicate sample ids"),
    (lambda s: s[3]["scores"]["exact_match"].update(score=1.0), 3, "stored exact_match score"),
    (lambda s: s[5].update(total=9.0), 3, "stored total"),
    (lambda s: s[7].update(completion="<answer>0</answer>"), 1, "samples edited"),
    (lambda s: s[2].update(verdict=None), 2, "without a verdict"),
    (lambda s: s[4]["verdict"].update(verdict="disagree", note="format score is wrong"), 2, "marked disagree"),
])
def test_tampered_samples_fail(artifact, tamper, rule, words):
    edit_samples(artifact, tamper)
    fails = failing(check_gate(artifact))
    assert rule in fails and words in fails[rule], fails


def test_removed_sample_with_edited_manifest_count_still_fails(artifact):
    edit_samples(artifact, lambda s: s.pop())
    m = json.loads((artifact / "manifest.json").read_text())
    m["sample_count"] -= 1
    (artifact / "manifest.json").write_text(json.dumps(m))
    assert "samples edited, removed" in failing(check_gate(artifact))[1]


def test_sample_count_bounds(workspace):
    few = make_artifact(workspace / "brief.yaml", workspace / "few", n=40, prompts=20)
    assert "40 samples" in failing(check_gate(few))[1]
    many = make_artifact(workspace / "brief.yaml", workspace / "many", n=120, prompts=60)
    assert "120 samples" in failing(check_gate(many))[1]


def test_oracle_review_only_in_demo(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "o", reviewer_kind="oracle")
    assert "oracle" in failing(check_gate(art))[2]
    assert check_gate(art, demo=True).passed


def test_artifact_from_another_dataset(artifact, workspace):
    from grpo_rlvr.demo import arithmetic_task
    from grpo_rlvr.files import write_jsonl_atomic

    write_jsonl_atomic(workspace / "data" / "train.jsonl", arithmetic_task.make_rows(200, seed=2))
    fails = failing(check_gate(artifact))
    assert 4 in fails and "dataset" in fails[4]


def test_artifact_from_another_model(artifact, workspace, tmp_path):
    from grpo_rlvr.demo import tiny_model

    other = tmp_path / "other-model"
    tok = tiny_model.build_tokenizer()
    tiny_model.save_pretrained(tiny_model.build_model(tok, seed=1), tok, other, {"seed": 1})
    (workspace / "model").unlink()
    (workspace / "model").symlink_to(other, target_is_directory=True)
    fails = failing(check_gate(artifact))
    assert 4 in fails and "model" in fails[4]


def test_artifact_from_another_brief_rewards(artifact, workspace):
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("weight: 0.2", "weight: 0.3"))
    fails = failing(check_gate(artifact, brief=brief))
    assert 4 in fails and "reward specs" in fails[4]


def test_format_only_reward_is_not_composite(workspace):
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("  - name: exact_match ", "#  - name: exact_match ")
                     .replace("    weight: 1.0\n", "", 1))
    art = make_artifact(brief, workspace / "fo")
    res = check_gate(art)
    assert "no correctness reward" in failing(res)[5]
    assert next(r for r in res.rules if r.id == 5).fix.startswith("add a correctness reward")


def test_malformed_outscoring_well_formed_wrong_fails(workspace):
    brief = workspace / "brief.yaml"
    brief.write_text(brief.read_text().replace("weight: 0.2", "weight: 0.0"))
    art = make_artifact(brief, workspace / "w0")
    res = check_gate(art)
    assert "does not outscore" in failing(res)[5]
    fix = next(r for r in res.rules if r.id == 5).fix  # the brief has a format reward: not "add a format reward"
    assert "add a `format` reward" not in fix and "require_format" in fix


def test_all_scores_equal_and_zero_correctness(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "eq", complete=lambda a, i: "no answer here")
    fails = failing(check_gate(art))
    assert "same total" in fails[6] and "route to SFT" in fails[6]


def test_zero_correctness_with_varied_format(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "zc",
                        complete=lambda a, i: f"<answer>{int(a) + 1}</answer>" if i % 2 else "x")
    fails = failing(check_gate(art))
    assert "no sample earns any correctness" in fails[6] and "same total" not in fails[6]


def test_unusable_folder_is_exit_2(tmp_path):
    with pytest.raises(GateError, match="not found"):
        check_gate(tmp_path / "nope")
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "gate", str(tmp_path)], capture_output=True, text=True)
    assert out.returncode == 2 and "manifest.json: missing" in out.stderr and "Traceback" not in out.stderr


def test_disagreement_then_fix_then_pass(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "d", verdict="disagree")
    assert not check_gate(art).passed
    review_all(art, "agree")
    assert check_gate(art).passed
    assert load_artifact(art).manifest["samples_digest"] == sample_digest(load_artifact(art).samples)


# --- the verdicts are a person's, given for these samples ------------------------------------------------------

def test_a_verdict_with_no_kind_fails(artifact):
    edit_samples(artifact, lambda s: s[6]["verdict"].pop("reviewer_kind"))
    fails = failing(check_gate(artifact))
    assert "no reviewer kind" in fails[2] and "s006" in fails[2]


def test_a_verdict_with_no_reading_time_or_reviewer_fails(artifact):
    edit_samples(artifact, lambda s: (s[1]["verdict"].pop("seconds"), s[2]["verdict"].update(reviewer="")))
    fails = failing(check_gate(artifact))
    assert "record no reading time" in fails[2] and "s001" in fails[2] and "name no reviewer" in fails[2]


def test_a_too_fast_review_fails_with_the_numbers(workspace):
    art = make_artifact(workspace / "brief.yaml", workspace / "fast", verdict=None)
    review_all(art, seconds=0.3)
    fails = failing(check_gate(art))
    assert "median 0.30 s per sample" in fails[2] and "64 samples in 19 s" in fails[2] and "at least 1.0 s" in fails[2]
    review_all(art, seconds=1.0)
    assert check_gate(art).passed


def test_verdicts_copied_from_another_inspection_fail(workspace):
    a = make_artifact(workspace / "brief.yaml", workspace / "a")
    b = make_artifact(workspace / "brief.yaml", workspace / "b", verdict=None,
                      complete=lambda ans, i: completions_for(ans, i + 1))
    mine, theirs = load_artifact(b), load_artifact(a)
    for s, t in zip(mine.samples, theirs.samples, strict=True):
        s["verdict"] = t["verdict"]
    mine.save_samples()
    fails = failing(check_gate(b))
    assert "given for another manifest" in fails[2] and "different text or different scores" in fails[2]


def test_a_verdict_given_before_its_scores_changed_fails(artifact):
    art = load_artifact(artifact)
    art.samples[9]["verdict"]["sample_digest"] = "0" * 64
    art.save_samples()
    assert "different text or different scores" in failing(check_gate(artifact))[2]


# --- the manifest is what inspect wrote -------------------------------------------------------------------------

@pytest.mark.parametrize("edit", [
    lambda m: m["rewards"][1]["params"].update(case_sensitive=True),
    lambda m: m["rewards"][0].update(fingerprint="f" * 64),
    lambda m: m["rewards"][0].update(weight=0.5),
    lambda m: m["sampling"].update(temperature=0.1),
    lambda m: m.update(samples_digest="0" * 64),
])
def test_any_manifest_edit_fails_the_gate(artifact, edit):
    m = json.loads((artifact / "manifest.json").read_text())
    edit(m)
    (artifact / "manifest.json").write_text(json.dumps(m))
    fails = failing(check_gate(artifact))
    assert "manifest.json differs from what inspect wrote" in fails[1]


def test_a_resealed_manifest_edit_is_still_caught(artifact):
    """Editing the params and recomputing the seal: the verdicts were bound to the old seal, and rule 3
    compares the recorded params with the brief's."""
    from grpo_rlvr.inspection.artifact import manifest_seal

    m = json.loads((artifact / "manifest.json").read_text())
    m["rewards"][1]["params"] = {"case_sensitive": True}
    m["seal"] = manifest_seal(m)
    (artifact / "manifest.json").write_text(json.dumps(m))
    fails = failing(check_gate(artifact))
    assert 1 not in fails and "given for another manifest" in fails[2] and "records params" in fails[3]


def test_the_gate_writes_nothing_into_the_artifact(artifact):
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in artifact.iterdir()}
    assert check_gate(artifact).passed
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "gate", str(artifact), "--json"], capture_output=True,
                         text=True)
    assert out.returncode == 0
    assert {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in artifact.iterdir()} == before
