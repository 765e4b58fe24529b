"""validate remembers GRPO settings TRL took (building TRL's GRPOConfig costs seconds of imports): an unchanged brief
validates again without importing TRL, a changed one is checked again, and refused settings are never remembered."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys
from grpo_rlvr.validate.accepted_settings import trl_refusals_remembered
print(trl_refusals_remembered({sys.argv[1]: sys.argv[2], "learning_rate": 1e-6}), 'trl' in sys.modules)
"""


def ask(tmp_path, key, value):
    out = subprocess.run([sys.executable, "-c", CODE, key, value], capture_output=True, text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "GRPO_RLVR_CACHE": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")[0]


def test_settings_trl_took_are_remembered_and_refused_ones_are_not(tmp_path):
    assert ask(tmp_path, "optim", "adamw_torch") == "([], []) True"     # checked: TRL imported
    assert ask(tmp_path, "optim", "adamw_torch") == "([], []) False"    # remembered: no TRL
    assert ask(tmp_path, "optim", "sgd").endswith("True")                # other settings: checked
    for _ in range(2):
        got = ask(tmp_path, "optim", "adamw_foo")
        assert "grpo.optim: TRL's GRPOConfig refuses" in got and got.endswith("True")
