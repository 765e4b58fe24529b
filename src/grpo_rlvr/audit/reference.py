"""The audit's reference: what the inspection sampled, kept whole in ``inspection/audit.json``.

``inspect`` writes one record per candidate it sampled and scored (``records.audit_rollouts.rollout_record``, plus
the candidate's outcome bucket and the digest of its trajectory), and the digest of every dataset row's prompt it
drew from (the population). The manifest holds the file's SHA-256 under its seal. The gate reads it back to check
that the samples the person read are exactly the ones ``inspection.selection.select`` picks from these candidates
with the recorded draw; the run check hands it to training, whose audit compares its own first rollouts with it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

from grpo_rlvr.errors import GateError

AUDIT_FILE = "audit.json"
FORMAT = 1
# Rows whose prompt digests are kept (8 bytes each: 16 MB at the cap). A larger dataset's prompts are not kept, and
# training's "prompts from the reviewed data" fact is not checked (the statistics still are).
MAX_POPULATION = 2_000_000


def encode_population(digests: list[str]) -> str:
    """Prompt digests (16 hex digits each) as one base64 string of their sorted bytes."""
    return base64.b64encode(b"".join(bytes.fromhex(d) for d in sorted(set(digests)))).decode()


def decode_population(blob: str) -> set[str]:
    raw = base64.b64decode(blob.encode(), validate=True)
    return {raw[i:i + 8].hex() for i in range(0, len(raw), 8)}


def build_reference(candidates: list[dict], population: list[str] | None, weights: dict[str, float],
                    kinds: dict[str, str], tools: bool, group_size: int) -> dict:
    """The content of ``audit.json``: the candidates' records, the population's digests (None: too large or not
    given), the rewards' weights and kinds and whether tools were offered, which the metrics need, and the group
    size training samples in (``num_generations``)."""
    pop = None
    if population is not None and len(population) <= MAX_POPULATION:
        pop = {"rows": len(population), "digests": encode_population(population)}
    return {"format": FORMAT, "rollouts": candidates, "population": pop, "weights": weights, "kinds": kinds,
            "tools": tools, "group_size": group_size}


def audited(reference: dict) -> list[dict]:
    """The candidates the audit compares: each prompt's first ``group_size``, a group as training draws one."""
    size, taken, out = int(reference.get("group_size") or 0), {}, []
    for r in reference["rollouts"]:
        key = repr(r.get("group"))
        taken[key] = taken.get(key, 0) + 1
        if not size or taken[key] <= size:
            out.append(r)
    return out


def reference_bytes(reference: dict) -> bytes:
    return json.dumps(reference, sort_keys=True, ensure_ascii=False, default=str).encode()


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def load_reference(inspection: Path, manifest: dict) -> dict:
    """``audit.json`` of an inspection folder, checked against the digest its manifest records.

    Raises:
        GateError: missing, unreadable, or not the file inspect wrote (re-inspect).
    """
    path = Path(inspection) / AUDIT_FILE
    recorded = (manifest.get("audit") or {}).get("digest") if isinstance(manifest.get("audit"), dict) else None
    if not recorded:
        raise GateError(f"{Path(inspection) / 'manifest.json'}: records no audit reference (an inspection made "
                        "before the review audit); re-run `grpo-rlvr inspect BRIEF --force` and review again")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise GateError(f"{path}: cannot be read ({e.strerror or e}); re-run `grpo-rlvr inspect BRIEF --force`") \
            from None
    if digest(data) != recorded:
        raise GateError(f"{path}: differs from what inspect wrote (its SHA-256 is not the manifest's); re-run "
                        "`grpo-rlvr inspect BRIEF --force` and review again")
    try:
        ref = json.loads(data)
    except ValueError as e:
        raise GateError(f"{path}: not JSON ({e}); re-run `grpo-rlvr inspect BRIEF --force`") from None
    if not isinstance(ref, dict) or ref.get("format") != FORMAT or not isinstance(ref.get("rollouts"), list):
        raise GateError(f"{path}: not an audit reference of format {FORMAT}; re-run `grpo-rlvr inspect BRIEF`")
    return ref
