"""Signed reviews: with signing required, rule 2 fails on an unsigned review, on one signed by a key the
allowed-signers file does not list, and on verdicts changed after signing; it passes on a review signed with the
listed key. The policy recorded at inspect holds whatever the brief says later; the user-level file is found
from the password database, not HOME; the verifier is the system's ssh-keygen, not the first on PATH. Keys are made in the test with OpenSSH's ssh-keygen; the signing is the real `review --sign` in a pty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from briefs import write_brief
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.signature import SIGNATURE, sign_review
from paths import CLI
from terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")


def keypair(folder, name):
    key = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(key)], check=True)
    return key


@pytest.fixture
def signed_setup(workspace, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))   # no user-level file unless a test makes one
    keys = tmp_path / "keys"
    keys.mkdir()
    alice, mallory = keypair(keys, "alice"), keypair(keys, "mallory")
    (workspace / "allowed_signers").write_text(f"alice {(keys / 'alice.pub').read_text()}")
    brief = write_brief(workspace, "signed.yaml",
                        inspection={"samples": 64, "signing": {"allowed_signers": "allowed_signers"}})
    art = make_artifact(brief, workspace / "out" / "inspection")
    return brief, art, alice, mallory


def rule2(result):
    r = next(r for r in result.rules if r.id == 2)
    return r.passed, " | ".join(r.problems)


def sign(art, key):
    a = load_artifact(art)
    return sign_review(a.dir, a.manifest, a.samples, key)


def test_an_unsigned_review_fails_rule_2(signed_setup):
    brief, art, _, _ = signed_setup
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "the review is not signed" in problems and "--sign" in problems


def test_a_review_signed_by_an_unlisted_key_fails_rule_2(signed_setup):
    brief, art, _, mallory = signed_setup
    sign(art, mallory)
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "not signed by a key listed in" in problems


def test_a_review_signed_in_the_terminal_with_the_listed_key_passes(signed_setup):
    brief, art, alice, _ = signed_setup
    t = Terminal([*CLI, "review", str(art), "--reviewer", "alice", "--sign", str(alice)])
    t.expect("Signed the review with")
    assert t.wait() == 0 and (art / SIGNATURE).is_file()
    result = check_gate(art, brief=brief)
    assert result.passed, result.format()


def test_a_verdict_changed_after_signing_fails_rule_2(signed_setup):
    brief, art, alice, _ = signed_setup
    sign(art, alice)
    assert rule2(check_gate(art, brief=brief))[0]
    a = load_artifact(art)
    a.samples[3]["verdict"]["note"] = "added after signing"
    a.save_samples()
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "does not match the verdicts as they are now" in problems


def test_a_user_level_allowed_signers_file_requires_signing_whatever_the_brief_says(workspace, monkeypatch,
                                                                                     tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    alice = keypair(tmp_path, "alice")
    (tmp_path / "config" / "grpo-rlvr").mkdir(parents=True)
    (tmp_path / "config" / "grpo-rlvr" / "allowed_signers").write_text(f"alice {(tmp_path / 'alice.pub').read_text()}")
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")   # the brief asks for nothing
    assert not rule2(check_gate(art, brief=workspace / "brief.yaml"))[0]
    sign(art, alice)
    assert check_gate(art, brief=workspace / "brief.yaml").passed


# --- the signing policy is part of what was reviewed (signing_policy.py) -----------------------------------------

def test_the_manifest_records_the_policy_with_each_files_digest_and_principals(signed_setup, workspace):
    import hashlib

    _, art, _, _ = signed_setup
    rec = load_artifact(art).manifest["signing"]
    data = (workspace / "allowed_signers").read_bytes()
    assert rec == {"required": True, "allowed_signers": [{"path": str((workspace / "allowed_signers").resolve()),
                                                          "sha256": hashlib.sha256(data).hexdigest(),
                                                          "principals": ["alice"]}]}


def test_deleting_the_briefs_signing_after_inspect_leaves_signing_required(signed_setup, workspace):
    brief, art, _, _ = signed_setup
    data = yaml.safe_load(brief.read_text())
    del data["inspection"]["signing"]
    brief.write_text(yaml.safe_dump(data))
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "the review is not signed" in problems
    assert "stays required whatever the brief says now" in problems


def test_pointing_the_brief_at_another_allowed_signers_file_does_not_replace_the_recorded_one(signed_setup,
                                                                                              workspace):
    brief, art, _, mallory = signed_setup
    (workspace / "agent_signers").write_text(f"mallory {mallory.with_suffix('.pub').read_text()}")
    data = yaml.safe_load(brief.read_text())
    data["inspection"]["signing"]["allowed_signers"] = "agent_signers"
    brief.write_text(yaml.safe_dump(data))
    sign(art, mallory)
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and f"not signed by a key listed in {(workspace / 'allowed_signers').resolve()}" in problems


def test_an_allowed_signers_file_rewritten_with_another_key_after_inspect_is_refused(signed_setup, workspace):
    brief, art, _, mallory = signed_setup
    (workspace / "allowed_signers").write_text(f"alice {mallory.with_suffix('.pub').read_text()}")
    sign(art, mallory)   # verifies against the file as it is now, but not as it was recorded
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "changed since the inspection was made" in problems and "principals then: alice" in problems


def test_the_user_level_file_is_found_from_the_password_database_not_home(monkeypatch, tmp_path):
    import pwd

    from grpo_rlvr.inspection.signing_policy import user_allowed_signers

    (tmp_path / "empty").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "empty"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "empty"))
    home = pwd.getpwuid(os.getuid()).pw_dir
    assert user_allowed_signers() == Path(home) / ".config" / "grpo-rlvr" / "allowed_signers"


def _account_config() -> Path:
    import pwd

    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config"


def _can_bind_mount() -> bool:
    if shutil.which("unshare") is None or not _account_config().is_dir():
        return False
    return subprocess.run(["unshare", "--mount", "--propagation", "private", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_bind_mount(), reason="needs a private mount namespace (unshare --mount) and an existing "
                                                   "~/.config to give the account a policy file without touching its "
                                                   "real one")
def test_home_and_xdg_pointed_at_empty_folders_do_not_hide_the_user_policy(workspace, tmp_path):
    """The account's ``~/.config`` (home from the password database) holds an allowed-signers file only inside a
    private mount namespace, where a scratch folder is bind-mounted over it; the gate runs there with HOME and
    XDG_CONFIG_HOME pointing at an empty folder."""
    alice = keypair(tmp_path, "alice")
    config = tmp_path / "config"
    (config / "grpo-rlvr").mkdir(parents=True)
    (config / "grpo-rlvr" / "allowed_signers").write_text(f"alice {alice.with_suffix('.pub').read_text()}")
    (tmp_path / "empty").mkdir()
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")   # made outside: no policy
    script = 'mount --bind "$1" "$2" && shift 2 && exec "$@"'
    env = {**os.environ, "HOME": str(tmp_path / "empty"), "XDG_CONFIG_HOME": str(tmp_path / "empty")}
    gate = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(config),
                           str(_account_config()), *CLI, "gate", str(art), "--brief", str(workspace / "brief.yaml")],
                          capture_output=True, text=True, env=env, timeout=120)
    assert gate.returncode == 1 and "the review is not signed" in gate.stdout, gate.stdout + gate.stderr
    assert str(_account_config() / "grpo-rlvr" / "allowed_signers") in gate.stdout
    sign(art, alice)
    again = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(config),
                            str(_account_config()), *CLI, "gate", str(art), "--brief", str(workspace / "brief.yaml")],
                           capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr


def test_a_fake_ssh_keygen_first_on_path_is_not_what_verifies(signed_setup, monkeypatch, tmp_path):
    from grpo_rlvr.inspection.signing_policy import SSH_KEYGEN_PATHS, ssh_keygen

    brief, art, _, mallory = signed_setup
    sign(art, mallory)
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "ssh-keygen").write_text("#!/bin/sh\necho alice\nexit 0\n")
    (fake / "ssh-keygen").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    assert shutil.which("ssh-keygen") == str(fake / "ssh-keygen")
    assert ssh_keygen() in SSH_KEYGEN_PATHS
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "not signed by a key listed in" in problems
    cli = subprocess.run([*CLI, "gate", str(art), "--brief", str(brief)], capture_output=True, text=True)
    assert cli.returncode == 1 and "not signed by a key listed in" in cli.stdout


# ---------------------------------------------------------------------------- the system's policy: the anchor

needs_root = pytest.mark.skipif(os.getuid() != 0, reason="the system policy must be root's: the test makes one as root")


@pytest.fixture
def system_policy(workspace, tmp_path, monkeypatch):
    """A system policy (root's folder, root's file, alice's key) at a folder of the test's, the user-level file
    gone, and a brief that names no signers: only the anchor requires signing."""
    from grpo_rlvr import protected_targets

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setattr(protected_targets, "account_home", lambda: tmp_path / "home")
    keys = tmp_path / "keys"
    keys.mkdir()
    alice, mallory = keypair(keys, "alice"), keypair(keys, "mallory")
    etc = tmp_path / "etc" / "grpo-rlvr"
    etc.mkdir(parents=True, mode=0o755)
    (etc / "allowed_signers").write_text(f"alice {alice.with_suffix('.pub').read_text()}")
    (etc / "allowed_signers").chmod(0o644)
    monkeypatch.setattr(protected_targets, "SYSTEM_POLICY", etc / "allowed_signers")
    art = make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    return workspace / "brief.yaml", art, alice, mallory, etc


@needs_root
def test_the_system_policy_requires_signing_with_no_user_file_at_all(system_policy, tmp_path):
    """Removing ~/.config/grpo-rlvr (the red team's commands did) leaves signing required: the anchor is root's."""
    brief, art, alice, mallory, etc = system_policy
    assert not (tmp_path / "home" / ".config").exists()
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "the review is not signed" in problems and str(etc / "allowed_signers") in problems
    sign(art, mallory)
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "not signed by a key listed in" in problems
    sign(art, alice)
    assert rule2(check_gate(art, brief=brief)) == (True, "")


@needs_root
@pytest.mark.parametrize("change,said", [
    (lambda etc: (etc / "allowed_signers").chmod(0o646), "is writable by others"),
    (lambda etc: etc.chmod(0o775), "is writable by its group"),
    (lambda etc: os.chown(etc / "allowed_signers", 65534, -1), "is owned by uid 65534, not root"),
    (lambda etc: os.chown(etc.parent, 65534, -1), "is owned by uid 65534, not root"),   # a folder above it
    (lambda etc: (etc / "allowed_signers").unlink(), "exists but holds no allowed_signers"),
])
def test_a_system_policy_that_is_not_roots_alone_fails_closed(system_policy, change, said):
    """A policy someone else could change anchors nothing: the gate fails, naming why and the fix, even with a
    review signed by the listed key."""
    brief, art, alice, _, etc = system_policy
    sign(art, alice)
    change(etc)
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and said in problems, problems
    assert "sudo" in problems


@needs_root
def test_the_system_policy_is_recorded_at_inspect_and_held_by_the_gate(system_policy, workspace):
    """inspect records the anchor in the sealed manifest; a later change of its content fails the gate."""
    brief, art, alice, mallory, etc = system_policy
    recorded = load_artifact(art).manifest["signing"]
    assert recorded["required"] is True and recorded["allowed_signers"][0]["path"] == str(etc / "allowed_signers")
    sign(art, alice)
    (etc / "allowed_signers").write_text(f"alice {mallory.with_suffix('.pub').read_text()}")
    passed, problems = rule2(check_gate(art, brief=brief))
    assert not passed and "changed since the inspection was made" in problems
