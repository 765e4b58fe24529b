"""Where a run reports its metrics (``grpo.report_to``): the dashboards transformers' Trainer reports to.

A name transformers does not know fails only when the Trainer is built, after the model has loaded, and a
dashboard whose package is missing fails there too, with a traceback. ``validate`` refuses the first and warns of
the second (the run may train on another machine); the rendered train.py asks transformers itself, before the
model loads, and stops with a message (``run.guard.refuse_missing_dashboards``).

Limits: the names and modules below are transformers 5.17's; a test holds the names to transformers'
``INTEGRATION_TO_CALLBACK``. Whether a dashboard can reach its server (an account, a network) is not checked.
"""

from __future__ import annotations

import difflib
import importlib.util

# report_to name → the modules transformers looks for, any one of which will do (None: not a package: kubeflow
# reads its server from KUBEFLOW_TRAINER_SERVER_URL)
INTEGRATIONS: dict[str, tuple[str, ...] | None] = {
    "azure_ml": ("azureml",), "clearml": ("clearml",), "codecarbon": ("codecarbon",), "comet_ml": ("comet_ml",),
    "dagshub": ("dagshub",), "dvclive": ("dvclive",), "flyte": ("flytekit",), "kubeflow": None,
    "mlflow": ("mlflow",), "neptune": ("neptune",), "swanlab": ("swanlab",),
    "tensorboard": ("tensorboard", "tensorboardX"), "trackio": ("trackio",), "wandb": ("wandb",),
}
SPECIAL = ("none", "all")   # no dashboard; every dashboard installed where the run trains


def report_to_names(value) -> list[str] | None:
    """The names ``value`` (a name or a list of names) gives, or None when it is neither."""
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return names


def check_report_to(value) -> tuple[list[str], list[str]]:
    """Problems (a value transformers would refuse) and warnings (a dashboard not installed here) of
    ``grpo.report_to``."""
    names = report_to_names(value)
    if names is None:
        return [f"grpo.report_to: {value!r} is neither a dashboard's name nor a list of names; e.g. report_to: "
                "tensorboard, or report_to: [trackio, wandb], or none"], []
    problems, warnings = [], []
    known = sorted(INTEGRATIONS) + list(SPECIAL)
    for name in names:
        if name in SPECIAL:
            if len(names) > 1:
                problems.append(f"grpo.report_to: {name!r} stands alone; write report_to: {name}, or list only "
                                "dashboards")
            continue
        if name not in INTEGRATIONS:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"Did you mean {close[0]!r}? " if close else ""
            problems.append(f"grpo.report_to: unknown dashboard {name!r}. {hint}Available: {', '.join(known)}")
            continue
        modules = INTEGRATIONS[name]
        if modules and not any(_installed(m) for m in modules):
            warnings.append(f"grpo.report_to: {name!r} needs the {modules[0]} package on the training machine, and "
                            f"it is not installed here (pip install {modules[0]}); train.py stops before the model "
                            "loads where it is missing")
    return problems, warnings


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False
