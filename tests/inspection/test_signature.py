"""Signed reviews: with signing required, rule 2 fails on an unsigned review, on one signed by a key the
allowed-signers file does not list, and on verdicts changed after signing; it passes on a review signed with the
listed key. Keys are made in the test with OpenSSH's ssh-keygen; the signing is the real `review --sign` in a pty.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from artifacts import make_artifact
from briefs import write_brief
from grpo_rlvr.gate import check_gate
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
