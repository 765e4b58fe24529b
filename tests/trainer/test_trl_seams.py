"""The one list of TRL's private seams training relies on: complete, present in the installed TRL, and a TRL that
lacks one is refused when the trainer is built, never a feature switched off in silence.

The refusals are shown by changing TRL's own class in this process (pytest's monkeypatch deletes or replaces a
method of ``trl.GRPOTrainer`` and puts it back after the test): a later TRL release is what this stands in for."""

from __future__ import annotations

import pytest
import trl
from trl import GRPOTrainer

from grpo_rlvr.errors import MachineError
from grpo_rlvr.trainer import trl_seams
from grpo_rlvr.trainer.trainer_build import build_trainer
from paths import REPO
from trl_private import private_trl_uses

TRAINER = REPO / "src" / "grpo_rlvr" / "trainer"


def test_the_installed_trl_has_every_seam():
    assert trl_seams.missing() == []
    trl_seams.check()
    assert {s.name for s in trl_seams.SEAMS} <= trl_seams.trl_private_names()


def test_the_list_names_every_private_trl_name_the_trainer_uses_and_nothing_else():
    """Read from the trainer's source (tests/trl_private.py), as the layer test reads every other room's."""
    names = trl_seams.trl_private_names()
    used = {name: f"{p.name}:{line}" for p in sorted(TRAINER.glob("*.py")) if p.name != "trl_seams.py"
            for line, name, _ in private_trl_uses(p.read_text(), names)}
    assert "" not in used, f"an import from a private module of TRL: {used['']}"
    listed = {s.name for s in trl_seams.SEAMS}
    assert set(used) - listed == set(), {n: used[n] for n in set(used) - listed}
    assert listed - set(used) == set(), f"listed but used nowhere in trainer/: {sorted(listed - set(used))}"
    assert all(s.kind in ("method", "attribute") and s.used_for for s in trl_seams.SEAMS)
    assert len(listed) == len(trl_seams.SEAMS), "a seam is listed twice"


def refusal() -> str:
    """What building a trainer says: the check runs before anything loads, so no model is needed to see it."""
    with pytest.raises(MachineError) as e:
        build_trainer({}, None, [], None)
    return str(e.value)


def test_a_method_trl_renamed_is_refused_at_build(monkeypatch):
    monkeypatch.delattr(GRPOTrainer, "_tool_call_loop")
    msg = refusal()
    assert "`_tool_call_loop` (method, used for: a turn's tool calls run at once" in msg, msg
    assert f"installed TRL {trl.__version__}" in msg and f"read from TRL {trl_seams.READ_FROM}" in msg, msg
    assert "pip install 'trl==1.16.*'" in msg and "constraints.txt" in msg, msg
    assert "_calculate_rewards`" not in msg and "_logs" not in msg, msg   # only what is missing


def _generate_and_score_completions(self, inputs):
    """TRL's method as a later release might write it: the per-rollout tools under another name."""
    self._sync_tool_dicts_by_rollout = []
    self._async_tool_dicts = []


def test_a_renamed_sync_tool_dicts_is_refused_not_switched_off(monkeypatch):
    """The trainer once read ``getattr(self, "_sync_tool_dicts", None)``: under a TRL that renamed it, tool calls
    would quietly run one after another again. Now the build refuses it, naming the attribute."""
    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", _generate_and_score_completions)
    assert [s.name for s in trl_seams.missing()] == ["_sync_tool_dicts"]
    msg = refusal()
    assert "`_sync_tool_dicts` (attribute, used for: each rollout's synchronous tools" in msg, msg
    assert "lacks this private seam" in msg, msg


def test_several_missing_seams_are_named_together(monkeypatch):
    monkeypatch.delattr(GRPOTrainer, "_calculate_rewards")
    monkeypatch.delattr(GRPOTrainer, "_tool_call_loop")
    assert [s.name for s in trl_seams.missing()] == ["_calculate_rewards", "_tool_call_loop"]
    msg = refusal()
    assert "lacks these private seams" in msg and "`_tool_call_loop` (method" in msg and "`_calculate_rewards`" in msg, msg
