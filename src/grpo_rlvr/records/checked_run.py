"""What one run check found and verified, as a value: ``run.check`` makes it (in the clean interpreter, or in the
demo's process), the clean interpreter sends it back as JSON, ``run.guard.check_run`` returns it, and the rendered
``train.py`` hands it on: to ``run.guard.refuse_if_changed_since_check`` after loading, and to the checkpoint
ledger, which signs each save with the ``start`` it carries. Nothing about a check is kept in module state, so a
check that did not run (or a wrapper that replaced it) leaves nothing verified behind.

Both sides import this module, which imports nothing of grpo_rlvr: the check (above the trainer) and the trainer
meet here instead of in each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RunCheck:
    """The outcome of the run check.

    Attributes:
        lock: the run's ``brief.lock.json`` as read by the check.
        problems: every reason the run may not train (empty when it may).
        verified: what a passing, gated check verified (empty otherwise): ``checked``, the stamps of every file it
            hashed (``identity.hash_cache.checked_files``), and ``rewards``, each reward's reviewed fingerprint.
        start: the signed start record (``provenance.new_start``) a passing check made for the process that asked,
            when it was asked with a door; None otherwise.
    """

    lock: dict
    problems: list[str] = field(default_factory=list)
    verified: dict = field(default_factory=dict)
    start: dict | None = None

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict:
        return {"lock": self.lock, "problems": list(self.problems), "verified": self.verified, "start": self.start}

    @classmethod
    def from_dict(cls, data: dict) -> RunCheck:
        """The check sent back by the clean interpreter (see :meth:`to_dict`)."""
        return cls(lock=data.get("lock") or {}, problems=list(data.get("problems") or []),
                   verified=data.get("verified") or {}, start=data.get("start"))
