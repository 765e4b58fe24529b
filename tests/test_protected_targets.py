"""No grpo-rlvr command writes over the trust anchors, a person's review or a run's records, whoever runs it.

The shapes the red team found (each wrote through a command the hook allows): ``inspect --out`` into or above
the allowed-signers folder, ``merge --out ... --force`` onto it, ``diagnose --apply`` onto the signers file,
``preflight --filter`` onto an inspection's samples. Each command is called for real (its own entry point, or the
CLI); the account's home is a folder of the test's (``protected_targets.account_home``), so a refusal that failed
would write there, never into the real home. The anchors' files are checked untouched afterwards."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from artifacts import make_artifact
from grpo_rlvr import protected_targets
from grpo_rlvr.errors import ConfigError
from paths import CLI

SIGNERS = "alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBaBa\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """The account's home as grpo-rlvr sees it, with the user's allowed-signers file in place."""
    home = tmp_path / "home"
    (home / ".config" / "grpo-rlvr").mkdir(parents=True)
    (home / ".config" / "grpo-rlvr" / "allowed_signers").write_text(SIGNERS)
    monkeypatch.setattr(protected_targets, "account_home", lambda: home)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


def _signers_untouched(home: Path) -> None:
    assert (home / ".config" / "grpo-rlvr" / "allowed_signers").read_text() == SIGNERS
    assert sorted(p.name for p in (home / ".config" / "grpo-rlvr").iterdir()) == ["allowed_signers"]


def _inspect(workspace, out, **kw):
    from grpo_rlvr.inspection import inspect_rewards

    return inspect_rewards(workspace / "brief.yaml", out_dir=out, **kw)


def _merge(workspace, out):
    from grpo_rlvr.merge.adapter import merge_adapter

    return merge_adapter(workspace / "model", out, force=True)


def _diagnose_apply(workspace, out):
    from grpo_rlvr.diagnosis import diagnose

    return diagnose(workspace, apply_to=out)


def _diagnose_out(workspace, out):
    from grpo_rlvr.diagnosis import diagnose

    return diagnose(workspace, out_dir=out)


def _preflight(workspace, out):
    from grpo_rlvr.preflight.success_rate import preflight

    return preflight(workspace / "brief.yaml", filter_out=out)


def _render(workspace, out):
    from grpo_rlvr.run.render import render

    return render(workspace / "brief.yaml", out=out)


def _demo(workspace, out):
    from grpo_rlvr.demo.pipeline import run_demo

    return run_demo(workdir=out)


@pytest.mark.parametrize("command,target,said", [
    (_inspect, ".config/grpo-rlvr", "it is "),                         # the folder itself: no verdicts, no --force
    (_inspect, ".config", "a folder above"),                           # replacing the folder above it
    (_inspect, ".", "a folder above"),                                 # or the home
    (_merge, ".config/grpo-rlvr", "it is "),                           # merge --out DIR --force
    (_merge, ".config", "a folder above"),
    (_diagnose_apply, ".config/grpo-rlvr/allowed_signers", "inside"),  # the brief written over the signers
    (_diagnose_out, ".config/grpo-rlvr", "it is "),                    # diagnosis.json into the folder
    (_preflight, ".config/grpo-rlvr/allowed_signers", "inside"),       # the learnable subset over the signers
    (_render, ".config/grpo-rlvr", "it is "),
    (_demo, ".config", "a folder above"),
])
def test_no_command_writes_in_or_above_the_allowed_signers(workspace, home, command, target, said):
    with pytest.raises(ConfigError) as e:
        command(workspace, home / target)
    assert str(home / ".config" / "grpo-rlvr") in str(e.value) and said in str(e.value), str(e.value)
    assert "allowed signers of signed reviews" in str(e.value) and "choose a folder of your own" in str(e.value)
    _signers_untouched(home)


@pytest.fixture
def reviewed(workspace):
    """A reviewed inspection (a person's verdicts) and a run folder with its records."""
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = workspace / "out" / "run"
    (run / "output").mkdir(parents=True)
    for name in ("brief.lock.json", "train.py"):
        (run / name).write_text("{}\n")
    (run / "output" / "checkpoints.json").write_text("{}\n")
    return art, run


def _before(folder: Path) -> dict:
    return {p: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command,target,said", [
    (_preflight, "out/inspection/samples.jsonl", "is inside the inspection"),   # verdict-shaped rows over a review
    (_preflight, "out/inspection/manifest.json", "is inside the inspection"),
    (_merge, "out/inspection", "is the inspection"),
    (_render, "out/inspection", "is the inspection"),
    (_diagnose_out, "out/inspection", "is the inspection"),
    (_inspect, "out/inspection/nested", "is inside the inspection"),
    (_diagnose_apply, "out/inspection/samples.jsonl", "is inside the inspection"),
    (_diagnose_apply, "out/run/train.py", "a run's rendered file"),
    (_preflight, "out/run/output/checkpoints.json", "a run's record"),
    (_merge, "out", "reviewed inspection"),                                      # replacing the folder above them
])
def test_no_command_writes_over_a_review_or_a_runs_records(workspace, reviewed, command, target, said):
    before = _before(workspace / "out")
    with pytest.raises(ConfigError) as e:
        command(workspace, workspace / target)
    assert said in str(e.value), str(e.value)
    assert _before(workspace / "out") == before


def test_inspect_still_replaces_its_own_inspection_and_render_its_own_run(workspace, monkeypatch, tmp_path):
    """The exceptions each command names: its own folder, as before (``--force`` keeps a reviewed one aside)."""
    from grpo_rlvr.run.render import render

    monkeypatch.setattr(protected_targets, "account_home", lambda: tmp_path / "home")
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection", verdict=None)
    protected_targets.refuse_target(art, "--out", own="inspection")
    assert render(workspace / "brief.yaml", out=workspace / "out" / "run", inspection=art).dir.is_dir()
    again = render(workspace / "brief.yaml", out=workspace / "out" / "run", inspection=art)   # re-render: same run
    assert (again.dir / "train.py").is_file()


def test_the_primitives_refuse_an_anchor_whoever_calls_them(home):
    """files.py, which every command writes through: an anchor is refused at the lowest layer too."""
    from grpo_rlvr.files import atomic_directory, move_aside, write_text_atomic

    for call in (lambda: write_text_atomic(home / ".config" / "grpo-rlvr" / "allowed_signers", "x"),
                 lambda: move_aside(home / ".config"),
                 lambda: atomic_directory(home / ".config").__enter__()):
        with pytest.raises(ConfigError, match="allowed signers"):
            call()
    _signers_untouched(home)


def test_the_cli_refuses_with_exit_2_and_names_the_anchor(workspace, tmp_path):
    """The real command line, against the anchor that the environment names ($XDG_CONFIG_HOME/grpo-rlvr) and the
    hash cache ($GRPO_RLVR_CACHE/file-hashes): exit 2, no traceback, the file as it was."""
    xdg = tmp_path / "xdg"
    (xdg / "grpo-rlvr").mkdir(parents=True)
    (xdg / "grpo-rlvr" / "allowed_signers").write_text(SIGNERS)
    cache = tmp_path / "cache"
    env = {**os.environ, "XDG_CONFIG_HOME": str(xdg), "GRPO_RLVR_CACHE": str(cache)}
    runs = [[*CLI, "inspect", str(workspace / "brief.yaml"), "--out", str(xdg)],
            [*CLI, "diagnose", str(workspace), "--apply", str(xdg / "grpo-rlvr" / "allowed_signers")],
            [*CLI, "preflight", str(workspace / "brief.yaml"), "--filter", str(cache / "file-hashes" / "1-2.json")]]
    for argv in runs:
        out = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (argv, out.stderr)
        assert "grpo-rlvr does not write it" in out.stderr and "choose a folder of your own" in out.stderr, out.stderr
    assert (xdg / "grpo-rlvr" / "allowed_signers").read_text() == SIGNERS
    assert not (cache / "file-hashes" / "1-2.json").exists()


def test_a_folder_about_to_be_replaced_is_walked_for_reviews_and_records(tmp_path):
    """refuse_replacing: a reviewed inspection or a run's records at any depth keep a folder from being replaced;
    an inspection without verdicts (the caller's own, re-inspected) does not."""
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (deep / "manifest.json").write_text("{}")
    (deep / "samples.jsonl").write_text(json.dumps({"id": "s0", "verdict": None}) + "\n")
    protected_targets.refuse_replacing(tmp_path / "a")
    (deep / "samples.jsonl").write_text(json.dumps({"id": "s0", "verdict": {"verdict": "agree"}}) + "\n")
    with pytest.raises(ConfigError, match="reviewed inspection"):
        protected_targets.refuse_replacing(tmp_path / "a")
    (deep / "samples.jsonl").unlink()
    (deep / "provenance.json").write_text("{}")
    with pytest.raises(ConfigError, match="a run's records"):
        protected_targets.refuse_replacing(tmp_path / "a")
