"""What trained, by identity, and whether the run is proven to be the one its gate let start.

From the run's lock (the brief as resolved, the GRPOConfig, the launch), the inspection manifest the lock names
(the model's and data's identity as the review bound them: file hashes or a hub commit; each reward's kind, weight,
params and source fingerprint; the tools' fingerprint) and the run's signed records: the starts the run check
signed (``records/provenance``) and the checkpoints' proofs (``records/checkpoint_ledger``, read together by
``records/output_audit``).
"""

from __future__ import annotations

from pathlib import Path

from grpo_rlvr.records import run_key
from grpo_rlvr.records.checkpoint_ledger import read_ledger
from grpo_rlvr.records.output_audit import audit
from grpo_rlvr.records.provenance import read_starts, valid_starts
from grpo_rlvr.records.run_outputs import is_smoke_output
from grpo_rlvr.report.run_files import RunFiles

# The GRPOConfig settings a reader asks about first, in this order; the rest are in the lock.
CONFIG_KEYS = ("num_generations", "learning_rate", "beta", "loss_type", "temperature", "max_completion_length",
               "per_device_train_batch_size", "gradient_accumulation_steps", "max_steps", "num_train_epochs",
               "scale_rewards", "epsilon", "epsilon_high", "importance_sampling_level", "reward_weights", "use_vllm",
               "vllm_mode", "bf16", "seed", "report_to")
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".gguf")


def identity(ident) -> dict:
    """A model's or data's identity as a reader checks it: where it came from, and the hashes of what decides it
    (the weight files of a folder, a file's SHA-256, a hub commit)."""
    if not isinstance(ident, dict):
        return {"kind": "not recorded"}
    kind = ident.get("kind")
    out: dict = {"kind": kind}
    if kind == "hub":
        out.update({"id": ident.get("id"), "commit": ident.get("commit")})
    files = ident.get("files") if isinstance(ident.get("files"), dict) else {}
    if files:
        out["files"] = len(files)
        out["weights"] = {n: h for n, h in sorted(files.items()) if n.endswith(_WEIGHTS)} or None
    if kind == "file":
        out["sha256"] = ident.get("sha256")
    if ident.get("base"):
        out["base"] = identity(ident["base"]) if isinstance(ident["base"], dict) else ident["base"]
    return out


def _rewards(lock: dict, manifest: dict | None) -> list[dict]:
    """Each reward as reviewed (the manifest: kind, weight, params, fingerprint), else as the lock resolved it."""
    if manifest and isinstance(manifest.get("rewards"), list):
        return [{k: r.get(k) for k in ("name", "kind", "weight", "params", "fingerprint")}
                for r in manifest["rewards"] if isinstance(r, dict)]
    return [{"name": r.get("name"), "kind": None, "weight": r.get("weight", 1.0), "params": r.get("params"),
             "fingerprint": None} for r in (lock.get("resolved") or {}).get("rewards") or [] if isinstance(r, dict)]


def _tools(lock: dict, manifest: dict | None) -> dict | None:
    spec = (lock.get("resolved") or {}).get("tools")
    recorded = (manifest or {}).get("tools") if isinstance((manifest or {}).get("tools"), dict) else None
    if not spec and not recorded:
        return None
    sources = (recorded or {}).get("sources")
    return {"spec": spec or (recorded or {}).get("spec"), "fingerprint": (recorded or {}).get("fingerprint"),
            "sources": sorted(sources) if isinstance(sources, dict) else None}


def what_trained(files: RunFiles, manifest: dict | None) -> dict | None:
    """The model, data, rewards, tools and settings of the run (None for a run without a lock)."""
    lock = files.lock
    if lock is None:
        return None
    resolved = lock.get("resolved") or {}
    model, data = resolved.get("model") or {}, resolved.get("dataset") or {}
    config = lock.get("grpo_config") or {}
    manifest = manifest or {}
    return {
        "brief": {"name": files.brief_name, "path": lock.get("brief"), "fingerprint": lock.get("fingerprint")},
        "model": {"name": model.get("name_or_path"), "dtype": model.get("dtype"),
                  "identity": identity(manifest.get("model")), "method": resolved.get("method")},
        "data": {"path": data.get("path") or data.get("name"), "split": data.get("split"),
                 "held_out": data.get("eval_path") or data.get("eval_name"),
                 "identity": identity((manifest.get("dataset") or {}).get("source"))},
        "rewards": _rewards(lock, manifest),
        "tools": _tools(lock, manifest),
        "config": {k: config[k] for k in CONFIG_KEYS if k in config},
        "deviations": resolved.get("deviations") or {},
        "variant": lock.get("variant"),
        "launch": {"mode": (lock.get("launch") or {}).get("mode"), "layout": lock.get("accelerate"),
                   "processes": (lock.get("launch") or {}).get("processes")},
        "lock_files": sorted(lock.get("files") or {}),
    }


def provenance(files: RunFiles) -> dict:
    """Whether each training of the run started behind a passing run check (a start record signed with the user's
    run key), whether every checkpoint and ``final/`` carries a valid proof bound to such a start, and the problems
    ``diagnose`` would flag (``unproven_run``)."""
    out = files.output
    starts = read_starts(out)
    try:
        valid = valid_starts(out, run_key.load_key()) if starts else {}
        key_problem = None
    except run_key.RunKeyError as e:
        valid, key_problem = {}, str(e)
    ledger = read_ledger(out)
    saved = sorted(p.name for p in out.iterdir() if p.is_dir() and (p.name.startswith("checkpoint-")
                                                                       or p.name == "final")) if out.is_dir() else []
    problems = [f"the run's proofs cannot be checked: {key_problem}"] if key_problem else audit(out)
    return {
        "starts": [{"run_id": s.get("run_id"), "door": s.get("door"), "started_at": s.get("started_at"),
                    "host": s.get("host"), "resume": s.get("resume"), "valid": str(s.get("run_id")) in valid}
                   for s in starts if isinstance(s, dict)],
        "signed_start": bool(valid),
        "saved": [{"name": n, "in_ledger": n in ledger, "proof": bool((ledger.get(n) or {}).get("proof"))}
                  for n in _by_step(saved)],
        "proven": bool(valid) and not problems,
        "problems": problems,
        "smoke_test": is_smoke_output(out),
    }


def _by_step(names: list[str]) -> list[str]:
    def key(n: str):
        tail = n.rsplit("-", 1)[-1]
        return (n == "final", int(tail) if tail.isdigit() else 0)

    return sorted(names, key=key)


def inspection_manifest(inspection: Path | None) -> dict | None:
    from grpo_rlvr.report.run_files import read_json

    return read_json(inspection / "manifest.json") if inspection is not None else None
