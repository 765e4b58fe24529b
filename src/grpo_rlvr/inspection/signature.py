"""Signed reviews: the person signs their verdicts with an SSH key the agent cannot use; the gate verifies.

Why: on one machine, a program that fakes a terminal and waits between keys can pose as the person in
``grpo-rlvr review``, and whoever can run code as the user can edit the package. A signature made with a key
that needs the person (a passphrase typed at the prompt, a hardware key's touch, ``ssh-add -c``, or a key on
another machine) is the check those cannot forge.

How: ``grpo-rlvr review DIR --sign KEY`` (a private key file, or a public key whose private half is in
ssh-agent) signs, when every sample has a verdict, the review's payload with ``ssh-keygen -Y sign`` in the
namespace ``grpo-rlvr-review`` and writes ``review.sig`` beside the samples. The payload is the manifest's seal
and every verdict as recorded (history left out), so changing any verdict after signing breaks the signature.
The gate (rule 2) requires it when an allowed-signers file applies (``signing_policy``: the brief's
``inspection.signing.allowed_signers``, the user's ``~/.config/grpo-rlvr/allowed_signers`` found from the
password database, or one recorded in the manifest when inspect ran, which later edits to the brief cannot
remove), and verifies it with ``ssh-keygen -Y find-principals`` / ``-Y verify`` against each of those files
(OpenSSH's format: ``<principal> <key type> <base64 key>`` per line), with the system's ssh-keygen at a fixed
path.

Limits: the allowed-signers file is the trust anchor: keep it where the agent cannot write (the plugin's hook
denies the user-level one; a root-owned file is stronger). Needs OpenSSH's ``ssh-keygen`` (8.2 or newer).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

from grpo_rlvr.errors import ReviewError
from grpo_rlvr.files import write_text_atomic
from grpo_rlvr.inspection.signing_policy import files_to_verify, recorded_required, ssh_keygen

NAMESPACE = "grpo-rlvr-review"
SIGNATURE = "review.sig"


def payload(manifest: dict, samples: list[dict]) -> bytes:
    """What a signature covers: the manifest's seal and every verdict as recorded, in sample order."""
    verdicts = [[s.get("id"), {k: v for k, v in (s.get("verdict") or {}).items() if k != "history"}]
                for s in samples]
    return json.dumps({"seal": manifest.get("seal"), "verdicts": verdicts}, sort_keys=True,
                      ensure_ascii=False).encode()


def sign_review(directory: Path, manifest: dict, samples: list[dict], key: str | Path) -> Path:
    """Sign the review's payload with ``key``; write ``DIR/review.sig``. ssh-keygen asks for a passphrase itself.

    Raises:
        ReviewError: a sample has no verdict yet, or ssh-keygen refused (its message included).
    """
    if any(not s.get("verdict") for s in samples):
        raise ReviewError(f"{directory}: sign after every sample has a verdict; finish the review first")
    proc = subprocess.run([ssh_keygen(), "-Y", "sign", "-f", str(Path(key).expanduser()), "-n", NAMESPACE],
                          input=payload(manifest, samples), capture_output=True)
    if proc.returncode != 0 or not proc.stdout:
        raise ReviewError(f"signing with {key} failed: {proc.stderr.decode(errors='replace').strip()}; pass --sign "
                          "a private key file, or a public key whose private half is loaded in ssh-agent")
    target = Path(directory) / SIGNATURE
    write_text_atomic(target, proc.stdout.decode())
    return target


def signing_problems(directory: Path, manifest: dict, samples: list[dict], brief) -> list[str]:
    """Why the review's signature does not hold (empty when it does, or when no allowed-signers file applies):
    against every file recorded at inspect and every one that applies now (``signing_policy``)."""
    files, problems = files_to_verify(manifest, brief)
    why = (" (signing was required when this inspection was made, and stays required whatever the brief says "
           "now)" if recorded_required(manifest) else "")
    for signers in files:
        problems += signature_problems(directory, manifest, samples, signers, why)
    return list(dict.fromkeys(problems))


def signature_problems(directory: Path, manifest: dict, samples: list[dict], signers: Path, why: str = "") \
        -> list[str]:
    """Why the review's signature does not hold against ``signers`` (empty when it does); ``why`` says why
    signing is required, beside a missing signature."""
    how = f"the person signs it: `grpo-rlvr review {directory} --sign ~/.ssh/id_ed25519`"
    sig = Path(directory) / SIGNATURE
    if not Path(signers).is_file():
        return [f"signing is required but the allowed-signers file {signers} does not exist; create it (one line "
                "per reviewer: `<name> <key type> <public key>`) or fix inspection.signing.allowed_signers"]
    if not sig.is_file():
        return [f"the review is not signed ({sig.name} is missing) and signing is required by {signers}{why}; {how}"]
    data = payload(manifest, samples)
    keygen = ssh_keygen()
    found = subprocess.run([keygen, "-Y", "find-principals", "-s", str(sig), "-f", str(signers)],
                           capture_output=True, text=True)
    principals = found.stdout.split()
    if found.returncode != 0 or not principals:
        return [f"{sig.name} is not signed by a key listed in {signers}; {how}"]
    check = subprocess.run([keygen, "-Y", "verify", "-f", str(signers), "-I", principals[0], "-n", NAMESPACE,
                            "-s", str(sig)], input=data, capture_output=True)
    if check.returncode != 0:
        digest = hashlib.sha256(data).hexdigest()[:12]
        return [f"{sig.name} by {principals[0]} does not match the verdicts as they are now (payload {digest}): a "
                f"verdict changed after signing; {how}"]
    return []
