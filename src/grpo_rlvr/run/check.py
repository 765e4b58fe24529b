"""The check that lets a rendered run train, computed where nothing can patch it: in the clean interpreter
(``clean_interpreter``, for ``grpo-rlvr train``, ``train.py`` and ``launch.sh``), or in the demo's own process.

It composes what it checks from the rooms above the trainer and its records: the lock and the rendered files (``lock``),
the files ``render`` makes from the brief now (``render.rendered``), the brief's fingerprint, the gate on the
recorded inspection, the checkpoint to resume from (``records.checkpoint_ledger``), and the installed libraries
that sample and score against their installer's record (``identity.installed``). It returns a
``records.checked_run.RunCheck``; ``run.guard`` asks for it by name through the clean interpreter, so
the trainer and the records import nothing above themselves, and this module imports nothing of ``run.guard``.
"""

from __future__ import annotations

import os
from pathlib import Path

from grpo_rlvr.brief import load_brief
from grpo_rlvr.errors import GateError, GrpoRlvrError
from grpo_rlvr.gate.check import check_gate, reward_files_changed
from grpo_rlvr.identity.hash_cache import checked_files, start_checking
from grpo_rlvr.identity.installed import installed_problems
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.records.checked_run import RunCheck
from grpo_rlvr.records.checkpoint_ledger import resume_problems
from grpo_rlvr.run.lock import LOCK, changed_files, read_lock, sha256_file
from grpo_rlvr.run.render import rendered


def check_run_here(run: Path, demo: bool = False, smoke: bool = False, resume: str | None = None,
                   start: str | None = None, trainer: int | None = None) -> RunCheck:
    """The run check (``run.guard.check_run``), computed in this process: in the clean interpreter, or by the
    demo with its oracle verdicts accepted (``demo``). A passing check carries what it verified, for the
    trainer's comparison after loading; with ``start`` (the door train.py reports), also a signed start record
    (``records.provenance``) for the process ``trainer`` (default: this one; the clean interpreter passes its
    parent, the process that asked)."""

    start_checking()   # what the trainer compares after loading: the files this check reads
    run = Path(run)
    lock = read_lock(run)
    problems = changed_files(run, lock)
    try:   # loading the brief imports its rewards: reward code edited since the inspection never runs here
        manifest = load_artifact(lock["inspection"]).manifest
        changed = reward_files_changed(manifest, Path(lock["brief"]).resolve().parent)
    except (GateError, KeyError, TypeError):
        manifest, changed = None, None   # no readable inspection: the gate below says so
    if changed:
        return RunCheck(lock, [*problems, changed])
    try:
        brief = load_brief(lock["brief"])
    except GrpoRlvrError as e:
        return RunCheck(lock, [*problems, f"the brief recorded in {LOCK} cannot be loaded: {e}"])
    if brief.fingerprint != lock.get("fingerprint"):
        problems.append(f"the brief {lock['brief']}, or the model or data it names, changed since this run was "
                        "rendered; run `grpo-rlvr render` again (and inspect again if the model, data or rewards "
                        "changed: the gate below says which)")
    else:
        problems += not_as_rendered(run, lock, brief)
    problems += resume_problems(run / "output", resume)
    problems += installed_problems()   # the libraries training imports are the ones pip installed
    if smoke:
        return RunCheck(lock, problems)
    try:
        gate = check_gate(lock["inspection"], brief=brief, demo=demo)  # the brief loaded above, not again
    except GateError as e:
        return RunCheck(lock, [*problems, str(e)])
    if not gate.passed:
        problems.append("the inspection gate does not pass:\n" + gate.format())
    if problems:
        return RunCheck(lock, problems)
    manifest = manifest or load_artifact(lock["inspection"]).manifest
    rewards = {r["name"]: r.get("fingerprint") for r in manifest["rewards"]}
    signed = None
    if start is not None:
        from grpo_rlvr.records.provenance import new_start

        signed = new_start(run, lock, start, os.getpid() if trainer is None else trainer, resume)
    return RunCheck(lock, [], {"checked": checked_files(), "rewards": rewards,
                               "audit": audit_for_training(lock["inspection"], manifest, brief)}, signed)


def audit_for_training(inspection: str, manifest: dict, brief) -> dict:
    """What the rendered train.py builds the review audit from: the reference the gate just verified (its file and
    digest: train.py reads it again and compares), the brief's ``audit`` section, and the draw."""
    from grpo_rlvr.audit.reference import AUDIT_FILE

    draw = manifest.get("draw") or {}
    return {"reference": str(Path(inspection) / AUDIT_FILE), "digest": manifest["audit"]["digest"],
            "settings": brief.audit.to_dict(), "inspection": str(inspection),
            "draw": {"number": draw.get("number"), "of": draw.get("of_brief")}}


def _only_the_dashboard_differs(lock: dict, expected: dict) -> str | None:
    """The message when the run differs from a render here only in ``report_to``, which follows whether trackio is
    installed where ``render`` runs (the brief did not choose it): the machines differ, not the brief."""
    was, now = lock.get("grpo_config"), expected.get("grpo_config")
    if not (isinstance(was, dict) and isinstance(now, dict)) or was.get("report_to") == now.get("report_to"):
        return None
    same_otherwise = ({k: v for k, v in was.items() if k != "report_to"} == {k: v for k, v in now.items()
                                                                            if k != "report_to"}
                      and {k: v for k, v in lock.items() if k not in ("files", "grpo_config")}
                      == {k: v for k, v in expected.items() if k != "grpo_config"})
    if not same_otherwise:
        return None
    return (f"the run reports to {was.get('report_to')!r}, but rendered on this machine it would report to "
            f"{now.get('report_to')!r}: the default dashboard is trackio where it is installed (pip install "
            "'grpo-rlvr[dashboard]'), and it is not installed here. Install it here, or set grpo.report_to in the "
            "brief (none, or a dashboard this machine has) and render again")


def not_as_rendered(run: Path, lock: dict, brief) -> list[str]:
    """The rendered files (and the lock) that differ from what ``render`` makes now from the brief the lock
    names, for the inspection it names. Files edited after render are reported by :func:`changed_files`."""
    try:
        files, expected = rendered(brief, Path(str(lock.get("inspection"))))
    except GrpoRlvrError as e:
        return [f"the run cannot be rendered again here to compare it: {e}"]
    recorded = lock.get("files") if isinstance(lock.get("files"), dict) else {}
    dashboard = _only_the_dashboard_differs(lock, expected)
    if dashboard:
        return [dashboard]
    out = []
    for name, text in files.items():
        p = Path(run) / name
        if p.is_file() and recorded.get(name) == sha256_file(p) and p.read_text(encoding="utf-8") != text:
            out.append(f"{p} is not what `grpo-rlvr render` makes from {lock.get('brief')} now (the brief, the "
                       f"commit it pins or grpo-rlvr changed since render, or {LOCK} was edited); run `grpo-rlvr "
                       "render` again")
    if {k: v for k, v in lock.items() if k != "files"} != expected:
        out.append(f"{Path(run) / LOCK} is not what `grpo-rlvr render` writes for {lock.get('brief')} and the "
                   f"inspection it names (it was edited, or the brief changed since render); run `grpo-rlvr render` "
                   "again")
    return out
