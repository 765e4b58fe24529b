"""Reward roles without a brief lock: from names, from behaviour, stated with --role; and the two textbook
failures of a plain TRL script with user-named rewards, diagnosed from logs shaped as TRL 1.16 writes them
(every key GRPOTrainer logs, rewards/<function name>/mean and /std)."""

from __future__ import annotations

import json
import math
import subprocess

import pytest

from grpo_rlvr.diagnosis import diagnose
from grpo_rlvr.diagnosis.roles import role_from_name, words
from grpo_rlvr.errors import ConfigError
from paths import CLI, DATA

BATCH = 64   # completions per step: TRL's std is Bessel-corrected over them


def binary_std(mean: float, scale: float = 1.0) -> float:
    p = mean / scale
    return scale * math.sqrt(max(p * (1 - p), 0.0) * BATCH / (BATCH - 1))


def trl_history(n: int, length, rewards: dict, weights: dict | None = None) -> list[dict]:
    """A TRL 1.16 log_history: ``rewards`` maps a function name to (mean(i), std(i) or "binary")."""
    weights = weights or {}
    out = []
    for i in range(n):
        rec = {"clip_ratio/high_max": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/low_mean": 0.0,
               "clip_ratio/low_min": 0.0, "clip_ratio/region_mean": 0.0, "completions/clipped_ratio": 0.0,
               "completions/max_length": length(i) * 1.6, "completions/mean_length": length(i),
               "completions/min_length": length(i) * 0.4, "entropy": 0.9 - 0.01 * i, "epoch": i / n,
               "frac_reward_zero_std": 0.2, "grad_norm": 0.3, "kl": 0.0, "learning_rate": 1e-6, "loss": 0.01,
               "num_tokens": 1000.0 * (i + 1), "step": 10 * (i + 1), "step_time": 2.0}
        total = 0.0
        for name, (mean, std) in rewards.items():
            m = mean(i)
            rec[f"rewards/{name}/mean"] = m
            rec[f"rewards/{name}/std"] = binary_std(m) if std == "binary" else std(i)
            total += weights.get(name, 1.0) * m
        rec["reward"], rec["reward_std"] = total, 0.4
        out.append(rec)
    return out


def diagnose_state(tmp_path, records, **kw):
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"global_step": records[-1]["step"] if records else 0, "log_history": records}))
    return diagnose(p, out_dir=tmp_path / "diag", **kw)


def ramp(a, b, n=20):
    return lambda i: a + (b - a) * i / (n - 1)


def flat(v):
    return lambda i: v


# --- names -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,role", [
    # TRL's docs and its trl.rewards module
    ("accuracy_reward", "correctness"), ("think_format_reward", "format"),
    ("soft_overlong_punishment_reward", "length"), ("reward_len", "length"),
    # open-r1's registry
    ("format_reward", "format"), ("tag_count_reward", "format"), ("len_reward", "length"),
    ("code_reward", "correctness"), ("binary_code_reward", "correctness"), ("code_format_reward", "format"),
    ("reasoning_steps_reward", None), ("repetition_penalty_reward", None), ("cosine_scaled_reward", None),
    # the GSM8K GRPO demo script that most TRL tutorials copy
    ("correctness_reward_func", "correctness"), ("int_reward_func", "format"), ("xmlcount_reward_func", "format"),
    ("strict_format_reward_func", "format"), ("soft_format_reward_func", "format"),
    # other community names
    ("match_format_exactly", "format"), ("check_answer", "correctness"), ("equation_reward_func", "correctness"),
    ("acc_reward_func", "correctness"), ("reward_math_output", "correctness"), ("returns_int_reward_func", "format"),
    ("length_bonus", "length"), ("LengthPenalty", "length"), ("strictFormatReward", "format"),
    ("correctnessReward", "correctness"), ("exact_match", "correctness"), ("unit_tests", "correctness"),
    ("reward_function", None), ("r2", None), ("lens_reward", None), ("stagecount", None),
])
def test_role_from_name(name, role):
    assert role_from_name(name) == role, words(name)


def test_words_split_case_digits_and_separators():
    assert words("strictFormatReward_v2") == ["strict", "format", "reward", "v", "2"]
    assert words("XMLCount-reward.fn") == ["xml", "count", "reward", "fn"]


# --- the two textbook failures, with user-named rewards ------------------------------------------------------

def test_length_grows_while_correctness_stays_and_a_length_bonus_climbs(tmp_path):
    recs = trl_history(20, ramp(190, 1270), {"format_reward": (flat(0.95), "binary"),
                                             "correctness_reward": (lambda i: 0.35 + 0.01 * (-1) ** i, "binary"),
                                             "length_bonus": (ramp(0.15, 0.95), flat(0.2))})
    res = diagnose_state(tmp_path, recs)
    roles = {n: r["role"] for n, r in res.data["roles"].items()}
    assert roles == {"correctness_reward": "correctness", "format_reward": "format", "length_bonus": "length"}
    f = next((x for x in res.findings if x.id == "length_reward_coupling"), None)
    assert f is not None, res.format()
    assert f.evidence[0].startswith("mean length 246.8 → 1156.3 tokens (+368%"), f.evidence   # window means
    assert any(e.startswith("length_bonus (a length reward)") for e in f.evidence), f.evidence
    assert res.data["recommended_variant"] == "dr_grpo" and not res.healthy
    text = res.format()
    assert "length_bonus: length (name)" in text and "correctness_reward: correctness (name)" in text


def test_format_saturates_while_correctness_stays(tmp_path):
    recs = trl_history(20, flat(200.0), {"format_reward": (lambda i: min(1.0, 0.3 + 0.07 * i), "binary"),
                                         "correctness_reward": (flat(0.1), "binary")})
    res = diagnose_state(tmp_path, recs)
    f = next((x for x in res.findings if x.id == "reward_hacking"), None)
    assert f is not None, res.format()
    assert f.evidence[0].startswith("format_reward mean 0.3") and "correctness_reward mean 0.100" in f.evidence[1]


def test_without_a_correctness_role_the_diagnosis_says_what_it_could_not_check(tmp_path):
    """The same failure, with every reward stated 'other': nothing to tell format from correctness, and the
    diagnosis says what it could not check instead of calling the run healthy."""
    recs = trl_history(20, flat(200.0), {"format_reward": (lambda i: min(1.0, 0.3 + 0.07 * i), "binary"),
                                         "correctness_reward": (flat(0.1), "binary")})
    res = diagnose_state(tmp_path, recs, roles=["format_reward=other", "correctness_reward=other"])
    assert "reward_hacking" not in {f.id for f in res.findings}
    f = next(x for x in res.findings if x.id == "missing_key_metrics")
    assert any("no reward is known to be the correctness part" in e for e in f.evidence)
    assert not res.healthy


# --- behaviour, where the names say nothing ------------------------------------------------------------------

def test_roles_from_behaviour(tmp_path):
    recs = trl_history(20, ramp(190, 1270), {"r1": (lambda i: min(1.0, 0.3 + 0.07 * i), "binary"),
                                             "r2": (flat(0.1), "binary"),
                                             "r3": (lambda i: (190 + 56.8 * i) / 1400, flat(0.15))})
    res = diagnose_state(tmp_path, recs)
    roles = res.data["roles"]
    assert {n: r["role"] for n, r in roles.items()} == {"r1": "format", "r2": "correctness", "r3": "length"}
    assert roles["r3"]["how"].startswith("behaviour: follows completion length (r = +1.00 over 20 logs)")
    assert roles["r2"]["how"] == "behaviour: binary 0/1, like a correctness check"
    assert {"reward_hacking", "length_reward_coupling"} <= {f.id for f in res.findings}, res.format()


def test_a_scaled_binary_reward_is_binary_and_a_continuous_one_is_not(tmp_path):
    recs = trl_history(20, flat(200.0), {"r1": (ramp(0.05, 0.45), lambda i: binary_std(0.05 + 0.4 * i / 19, 0.5)),
                                         "r2": (ramp(0.1, 0.2), flat(0.3))})
    roles = diagnose_state(tmp_path, recs).data["roles"]
    assert roles["r1"] == {"role": "correctness", "how": "behaviour: binary 0/0.5, like a correctness check"}
    assert roles["r2"]["role"] == "other"


def test_roles_from_the_logged_completions(tmp_path):
    """Per-completion rewards in TRL's completions parquet: a 0/1 column is binary, a column that follows the
    completion's length is a length reward."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    recs = trl_history(20, flat(30.0), {"a": (flat(0.5), flat(0.5)), "b": (flat(0.5), flat(0.3))})
    (tmp_path / "completions").mkdir()
    for step in (10, 20, 30, 40):
        rows = [{"step": step, "prompt": f"p{g}", "completion": "x" * (5 + k), "a": float(k % 2),
                 "b": (5 + k) / 12, "advantage": 0.0} for g in range(4) for k in range(8)]
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / "completions" / f"completions_{step:05d}.parquet")
    roles = diagnose_state(tmp_path, recs).data["roles"]
    assert roles["a"]["role"] == "correctness" and roles["b"]["role"] == "length"
    assert roles["b"]["how"] == "behaviour: follows completion length (r = +1.00 over 128 completions)"


# --- stating roles ---------------------------------------------------------------------------------------------

def test_stated_roles_win_over_names(tmp_path):
    recs = trl_history(20, flat(200.0), {"format_reward": (ramp(0.3, 1.0), "binary"),
                                         "bonus": (flat(0.1), "binary")})
    res = diagnose_state(tmp_path, recs, roles=["bonus=correctness", "format_reward=format"])
    assert res.data["roles"]["bonus"] == {"role": "correctness", "how": "stated (--role)"}
    assert "reward_hacking" in {f.id for f in res.findings}


@pytest.mark.parametrize("spec,message", [
    ("bonus", "write NAME=ROLE"), ("bonus=speed", "unknown role 'speed'"),
    ("nope=format", "which the run did not log; its rewards are: bonus, format_reward"),
])
def test_bad_role_is_a_clear_error(tmp_path, spec, message):
    recs = trl_history(20, flat(200.0), {"format_reward": (flat(0.5), "binary"), "bonus": (flat(0.1), "binary")})
    with pytest.raises(ConfigError, match=message):
        diagnose_state(tmp_path, recs, roles=[spec])


def test_cli_role_and_out(tmp_path):
    recs = trl_history(20, flat(200.0), {"format_reward": (ramp(0.3, 1.0), "binary"),
                                         "bonus": (flat(0.1), "binary")})
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": recs}))
    out = tmp_path / "elsewhere"
    p = subprocess.run([*CLI, "diagnose", str(tmp_path / "trainer_state.json"), "--role", "bonus=correctness",
                        "--out", str(out)], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 1, p.stderr   # a failure mode named: exit 1, so `diagnose RUN || alert` alerts
    assert "bonus: correctness (stated (--role))" in p.stdout and "reward_hacking" not in p.stdout
    assert "The format part rises while correctness does not" in p.stdout
    assert (out / "diagnosis.md").is_file() and "| bonus | correctness | stated (--role) |" in (
        out / "diagnosis.md").read_text()
    bad = subprocess.run([*CLI, "diagnose", str(tmp_path / "trainer_state.json"), "--role", "bonus=fast"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 2 and "unknown role 'fast'" in bad.stderr and "Traceback" not in bad.stderr


def test_roles_from_behaviour_on_a_real_run(tmp_path):
    """tests/data/demo_trainer_state.json is the checkpoint-150 trainer_state.json of a real demo run (TRL 1.16,
    batch 64, logging every 5 steps: format 0.37 → 0.91, exact_match 0.06 → 0.29). With the names replaced by
    r1 and r2, their behaviour alone gives the same roles the names give."""

    real = (DATA / "demo_trainer_state.json").read_text()
    p = tmp_path / "trainer_state.json"
    p.write_text(real)
    named = diagnose(p, out_dir=tmp_path / "a")
    assert {n: r["role"] for n, r in named.data["roles"].items()} == {"exact_match": "correctness",
                                                                    "format": "format"}
    p.write_text(real.replace("rewards/format/", "rewards/r1/").replace("rewards/exact_match/", "rewards/r2/"))
    anon = diagnose(p, out_dir=tmp_path / "b")
    assert anon.data["roles"] == {
        "r1": {"role": "format", "how": "behaviour: binary 0/1, the nearest its ceiling at the end (90%)"},
        "r2": {"role": "correctness", "how": "behaviour: binary 0/1, like a correctness check"}}
    assert named.healthy and anon.healthy, anon.format()


def test_every_reward_kind_has_a_role_entry():
    """One table from the rewards' kinds to diagnosis roles: a new kind must say what role (if any) it implies."""
    from grpo_rlvr.diagnosis.roles import ROLE_OF_KIND, ROLES
    from grpo_rlvr.rewards import KINDS

    assert set(ROLE_OF_KIND) == set(KINDS)
    assert {r for r in ROLE_OF_KIND.values() if r} <= set(ROLES)
