"""The exception tree. The CLI catches ``GrpoRlvrError`` once and prints ``Error: <message>`` without a traceback.

Every message says what is wrong, the offending value, and how to fix it. ``exit_code`` is what the CLI
returns: 2 for bad input (a brief, a file, a flag), 1 for a check or run that failed.
"""

from __future__ import annotations


class GrpoRlvrError(Exception):
    """Base of every error this package raises on purpose."""

    exit_code = 2


class ConfigError(GrpoRlvrError):
    """A brief, a config value or a command-line option is invalid. Carries every problem found, not just one."""

    def __init__(self, problems: list[str] | str, source: str | None = None):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        if len(self.problems) == 1:
            msg = head + self.problems[0]
        else:
            msg = head + f"{len(self.problems)} problems:\n" + "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(msg)


class InputFileError(GrpoRlvrError):
    """A file the user pointed at is missing, unreadable or malformed."""


class MachineError(GrpoRlvrError):
    """This machine cannot run what the brief asks (a package or a GPU is missing). Names what to install or where
    to run instead."""


class RewardError(GrpoRlvrError):
    """A reward cannot be built (unknown name, bad parameters, a user module that fails to import)."""


class RowError(RewardError):
    """One dataset row cannot be scored by a reward: a ground-truth column is missing or its value is not what the
    reward reads (``column`` names it). ``validate`` refuses such a row by file and line; during training the
    row's samples are left unscored (None) and named, never a fake score (docs/design.md §5)."""

    reward: str
    column: str


class MissingColumn(RowError):
    """A reward needs a ground-truth column the data does not have. The fix depends on where the data came
    from: a brief maps it under ``dataset.columns``; ``score --reward`` names it with ``--option PARAM=COLUMN``."""

    def __init__(self, reward: str, column: str, param: str, available: list[str]):
        self.reward, self.column, self.param, self.available = reward, column, param, available
        super().__init__(f"reward {reward!r} needs the dataset column {column!r}; map it under dataset.columns in "
                         f"the brief (available: {available})")


class BadColumn(RowError):
    """A row's ground-truth value is not what the reward reads (tests that do not parse, an invalid JSON Schema,
    a malformed expected call, an empty answer); the message says what is wrong and the fix."""

    def __init__(self, reward: str, column: str, message: str):
        self.reward, self.column = reward, column
        super().__init__(message)


class SandboxError(GrpoRlvrError):
    """The sandbox itself is broken (not the model's code). Never turned into a reward of 0."""

    exit_code = 1


class GateError(GrpoRlvrError):
    """The inspection artifact is unusable (missing, unreadable). A gate that *fails* returns a result instead."""


class GateRefused(GrpoRlvrError):
    """Training refused: the inspection gate does not pass for this brief and reward code, or the brief changed
    since the run folder was rendered."""

    exit_code = 1


class StartupHookError(GrpoRlvrError):
    """A startup hook that grpo-rlvr did not install patches it; nothing is checked or trained until it is gone."""

    exit_code = 1


class ReviewError(GrpoRlvrError):
    """A review cannot run here: not an interactive terminal, or another review holds the artifact's lock."""


class RunFolderInUse(GrpoRlvrError):
    """A trainer of the run is alive, or the run folder's output already holds a run: training again there would
    mix two runs. Names the live trainer, or ``--resume`` and how to start a fresh run (exit 2: a usage error,
    nothing started)."""


class LaunchError(GrpoRlvrError):
    """A run directory cannot be launched, or the launched run failed."""

    exit_code = 1


class RunKeyError(GrpoRlvrError):
    """grpo-rlvr's per-user run key (``records/run_key.py``) cannot be created, or is not private to the user."""


class AuditStop(GrpoRlvrError):
    """The review audit stopped a run: training's own first rollouts differ from what the person reviewed
    (``grpo_rlvr.audit``). Raised on every rank before the optimizer steps; ``train.py`` exits 1."""

    exit_code = 1
