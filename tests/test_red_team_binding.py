"""Red team against the review binding (issue #34): after a person reviewed, change what trains without `gate`,
`train` or the rendered train.py noticing, through the doors that binding left: bytecode Python prefers to a
reviewed source, code the loaders reach through a name the identity does not follow, and reward code that runs
inside the very check that judges it.

Each test performs the attack on real files and real loaders, shows that the attack reaches what it aims at, and
checks what stops it (or, marked ``xfail(strict=True)``, names the hole that docs/threat-model.md's "cannot stop"
table lists).
The doors tried before are in tests/test_red_team.py."""

from __future__ import annotations

import importlib.util
import json
import py_compile
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from artifacts import make_artifact
from briefs import SUM_REWARD
from paths import CLI

REVIEWED = SUM_REWARD
# The reviewed reward, except that it pays 1.0 for everything once TRL is imported (while training): the gate's
# re-scoring of the reviewed samples, which imports no TRL, still reproduces every score.
PAYS_IN_TRAINING = REVIEWED.replace("    out = []", "    import sys\n    if 'trl' in sys.modules:\n"
                                                   "        return [1.0 for _ in completions]\n    out = []")

def _reward_importing(helper: str) -> str:
    """A reward file that puts its own folder first on sys.path and scores with ``helper``'s ``check``."""
    return textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from {helper} import check

        def reward(completions, answer, **kw):
            return [check(c if isinstance(c, str) else c[-1]["content"], a) for c, a in zip(completions, answer)]
    """)



def cli(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, timeout=600, **kw)


def _with_user_reward(ws: Path, ref: str = "./sum_reward.py") -> Path:
    data = yaml.safe_load((ws / "brief.yaml").read_text())
    data["rewards"] = [{"name": "format", "weight": 0.2}, {"name": ref, "kind": "correctness", "weight": 1.0}]
    (ws / "brief.yaml").write_text(yaml.safe_dump(data))
    return ws / "brief.yaml"


def _forge_pyc(source_file: Path, code: str, tmp: Path) -> Path:
    """Write the bytecode Python loads for ``source_file`` instead of its source: an unchecked hash-based .pyc in
    its __pycache__ (Python never compares such a file with the source), compiled from ``code``."""
    evil = tmp / f"forged_{source_file.stem}.py"
    evil.write_text(code)
    cached = importlib.util.cache_from_source(str(source_file))
    py_compile.compile(str(evil), cfile=cached, dfile=str(source_file), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    return Path(cached)


SCORE = """
import sys
import trl  # noqa: F401  (as in train.py)
from pathlib import Path
from grpo_rlvr.rewards import build_reward
r = build_reward("./sum_reward.py", {}, base_dir=Path(sys.argv[1]), kind="correctness")
print("scores:", r(completions=["<answer>5</answer>"], answer=["4"], prompts=["2+2="]))
"""


def _scores_in_a_fresh_process(ws: Path) -> str:
    """How the reward scores a wrong answer when built as train.py builds it (a new process)."""
    out = subprocess.run([sys.executable, "-I", "-c", SCORE, str(ws)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.split("scores:")[1].strip()


# ---------------------------------------------------------------------------- bytecode in place of the source


def test_a_forged_pycache_for_the_reward_file_is_not_what_scores(own_model, tmp_path):
    """The reward file stays as reviewed (its hash, its fingerprint), but its __pycache__ gets bytecode that pays
    1.0 for everything. `spec_from_file_location` loads that bytecode: the gate would pass while training scored
    with unreviewed code. User reward code is compiled from its source, never taken from a .pyc."""
    (own_model / "sum_reward.py").write_text(REVIEWED)
    brief = _with_user_reward(own_model)
    art = make_artifact(brief, own_model / "out" / "inspection")
    assert _scores_in_a_fresh_process(own_model) == "[0.0]"
    pyc = _forge_pyc(own_model / "sum_reward.py", PAYS_IN_TRAINING, tmp_path)
    # the attack is real: Python's own loader runs the forged bytecode for the reviewed file
    spec = importlib.util.spec_from_file_location("plain_load", own_model / "sum_reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import trl  # noqa: F401
    assert module.reward(["<answer>5</answer>"], answer=["4"]) == [1.0]
    assert pyc.is_file()
    assert cli("gate", art, "--brief", brief).returncode == 0   # the review holds: the source is as reviewed ...
    assert _scores_in_a_fresh_process(own_model) == "[0.0]"   # ... and it is the source that scores


def test_a_forged_pycache_for_a_helper_of_the_reward_is_not_what_scores(own_model, tmp_path):
    """The same through a helper module the reward imports (bound by its source's hash in the closure)."""
    (own_model / "sum_helper_pyc.py").write_text(textwrap.dedent("""
        import re

        def check(completion, answer):
            m = re.search(r"<answer>(\\d+)</answer>", completion)
            return 1.0 if m and m.group(1) == str(answer) else 0.0
    """))
    (own_model / "sum_reward.py").write_text(_reward_importing("sum_helper_pyc"))
    brief = _with_user_reward(own_model)
    art = make_artifact(brief, own_model / "out" / "inspection")
    helper = (own_model / "sum_helper_pyc.py").read_text()
    _forge_pyc(own_model / "sum_helper_pyc.py", helper.replace("    m = re.search", "    import sys\n    if 'trl' in "
                                                                "sys.modules:\n        return 1.0\n    m = re.search"),
               tmp_path)
    out = subprocess.run([sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(own_model)!r}); "
                          "import trl, sum_helper_pyc; print(sum_helper_pyc.check('x', '4'))"],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "1.0"                   # the attack is real for a plain import
    assert cli("gate", art, "--brief", brief).returncode == 0
    assert _scores_in_a_fresh_process(own_model) == "[0.0]"


def test_a_helper_shipped_only_as_bytecode_is_bound(own_model, tmp_path):
    """A helper that exists only as `helper.pyc` beside the reward (Python imports such a file) was left out of the
    closure, which took only `.py` files: rewritten after the review, it changed the scores unseen."""
    from grpo_rlvr.gate.check import check_gate

    (tmp_path / "build").mkdir()
    src = tmp_path / "build" / "sum_helper_only_pyc.py"    # compiled elsewhere: beside the reward only the .pyc
    src.write_text("def check(completion, answer):\n    return 1.0 if completion == f'<answer>{answer}</answer>' "
                   "else 0.0\n")
    pyc = own_model / "sum_helper_only_pyc.pyc"
    py_compile.compile(str(src), cfile=str(pyc), doraise=True)
    (own_model / "sum_reward.py").write_text(_reward_importing("sum_helper_only_pyc"))
    brief = _with_user_reward(own_model)
    art = make_artifact(brief, own_model / "out" / "inspection")
    assert check_gate(art, brief=brief).passed
    src.write_text(src.read_text().replace("    return 1.0 if", "    import sys\n    if 'trl' in sys.modules:\n"
                                                           "        return 1.0\n    return 1.0 if"))
    py_compile.compile(str(src), cfile=str(pyc), doraise=True)
    out = cli("gate", art, "--brief", brief)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "reward 'sum_reward': source code changed since the inspection (fingerprint mismatch) in " \
        "sum_helper_only_pyc.pyc" in out.stdout + out.stderr


# ---------------------------------------------------------------------------- reward code that runs inside its own check

# Put at the top of the reviewed reward after the review: when the module is imported (by the gate's check, by
# `train`'s, by train.py), it makes the fingerprint of its own code come out as the one the inspection recorded,
# and it pays 1.0 for everything when TRL's trainer calls it. The gate's re-scoring, outside TRL, reproduces.
PATCHES_ITS_CHECK = '''
import json as _json, pathlib as _pathlib, traceback as _tb
import grpo_rlvr.rewards.user as _user
_recorded = _json.loads((_pathlib.Path(__file__).resolve().parent / "out" / "inspection" / "manifest.json")
                        .read_text())["rewards"]
_user.source_fingerprint = lambda *a, **k: next(r["fingerprint"] for r in _recorded if r["name"] == "sum_reward")
_user.changed_sources = lambda *a, **k: []
'''
IN_TRAINING = REVIEWED.replace("    out = []", "    if any('trl/trainer' in f.filename for f in _tb.extract_stack()):\n"
                                           "        return [1.0 for _ in completions]\n    out = []")


def test_a_reward_edited_to_forge_its_own_fingerprint_fails_the_gate(own_model):
    """Importing a reward runs its module code, and the gate imported it to fingerprint it: an edit after the review
    could make its own fingerprint come out as the reviewed one, and the gate passed. The inspection records the
    bytes of every file of the reward's code; the gate compares them before it imports anything."""
    (own_model / "sum_reward.py").write_text(REVIEWED)
    brief = _with_user_reward(own_model)
    art = make_artifact(brief, own_model / "out" / "inspection")
    (own_model / "sum_reward.py").write_text(PATCHES_ITS_CHECK + IN_TRAINING)    # after the review
    out = cli("gate", art, "--brief", brief)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "reward 'sum_reward': source code changed since the inspection (fingerprint mismatch) in sum_reward.py; " \
        "it was not imported" in out.stdout + out.stderr
    run = own_model / "out" / "run"
    from grpo_rlvr.run.render import render

    (own_model / "sum_reward.py").write_text(REVIEWED)
    render(brief)
    (own_model / "sum_reward.py").write_text(PATCHES_ITS_CHECK + IN_TRAINING)
    out = cli("train", run)
    assert out.returncode == 1 and "it was not imported (importing runs its code)" in out.stderr, out.stderr[-2000:]


# ---------------------------------------------------------------------------- code the loaders reach by a path


@pytest.mark.parametrize("where", ["checkpoint-1", "ABSOLUTE"])
def test_remote_code_that_auto_map_names_in_a_left_out_folder_is_refused(own_model, tmp_path, where):
    """With trust_remote_code, transformers imports `auto_map`'s module as a path under the folder:
    `checkpoint-1/modeling.Policy` runs checkpoint-1/modeling.py, which the identity leaves out (a model's
    top-level checkpoint-*/), and an absolute name runs a file outside the folder. Planted before `inspect`, that
    code could be rewritten after the review unseen. Such an auto_map is refused when the identity is taken."""
    import os

    from transformers import AutoModelForCausalLM

    from grpo_rlvr.errors import InputFileError

    model = own_model / "model"
    code_dir = model / "checkpoint-1" if where == "checkpoint-1" else tmp_path / "elsewhere"
    code_dir.mkdir()
    (code_dir / "modeling.py").write_text("import os\nfrom transformers import Qwen2ForCausalLM\n\n"
                                          "os.environ['RED_TEAM_PLANTED'] = 'ran'\n\n\n"
                                          "class Policy(Qwen2ForCausalLM):\n    pass\n")
    module = "checkpoint-1/modeling" if where == "checkpoint-1" else str(code_dir / "modeling")
    cfg = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**cfg, "auto_map": {"AutoModelForCausalLM": f"{module}.Policy"}}))
    AutoModelForCausalLM.from_pretrained(model, trust_remote_code=True)
    assert os.environ.pop("RED_TEAM_PLANTED") == "ran"          # the attack is real: the code ran
    data = yaml.safe_load((own_model / "brief.yaml").read_text())
    brief = own_model / "remote.yaml"
    brief.write_text(yaml.safe_dump({**data, "model": {**data["model"], "trust_remote_code": True}}))
    with pytest.raises(InputFileError, match=f"config.json auto_map names code at '{module}.py', which "
                                             "transformers would run from a path the review is not bound to"):
        make_artifact(brief, own_model / "out" / "inspection")
    out = cli("inspect", brief)
    assert out.returncode == 2 and "move the module to the folder's top level and name it 'modeling.Policy'" \
        in out.stderr, out.stderr[-2000:]


LOAD_AS_TRAIN_PY = """
import os, runpy, sys
ns = runpy.run_path(sys.argv[1], run_name="red_team")         # train.py's module code, as in a run
from transformers import AutoModelForCausalLM
from grpo_rlvr.trainer.trainer_build import load_policy
source = load_policy(ns["SETUP"], type("Config", (), {"gradient_checkpointing": False}))
AutoModelForCausalLM.from_pretrained(source, trust_remote_code=True)   # as TRL loads it
print("planted:", os.environ.get("RED_TEAM_PLANTED"))
"""


def test_remote_code_bytecode_forged_in_the_modules_cache_does_not_run_in_training(own_model, tmp_path):
    """transformers copies a model's remote code into HF_MODULES_CACHE and imports the copy with Python's own loader,
    which takes the copy's __pycache__ bytecode first. The reviewed LICENSE_impl.py keeps its hash while bytecode
    planted there runs. train.py gives transformers a modules cache of its own, so no planted bytecode is read."""
    model = own_model / "model"
    cfg = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**cfg, "auto_map": {"AutoModelForCausalLM": "LICENSE_impl.Policy"}}))
    reviewed = "from transformers import Qwen2ForCausalLM\n\n\nclass Policy(Qwen2ForCausalLM):\n    pass\n"
    (model / "LICENSE_impl.py").write_text(reviewed)
    data = yaml.safe_load((own_model / "brief.yaml").read_text())
    brief = own_model / "brief.yaml"
    brief.write_text(yaml.safe_dump({**data, "model": {**data["model"], "trust_remote_code": True}}))
    make_artifact(brief, own_model / "out" / "inspection")
    from grpo_rlvr.run.render import render

    run = render(brief).dir
    env = {**__import__("os").environ, "HF_MODULES_CACHE": str(tmp_path / "modules")}
    load = [sys.executable, "-I", "-c", LOAD_AS_TRAIN_PY, str(run / "train.py")]
    plain = [sys.executable, "-I", "-c", "import os, sys\nfrom transformers import AutoModelForCausalLM\n"
             "AutoModelForCausalLM.from_pretrained(sys.argv[1], trust_remote_code=True)\n"
             "print('planted:', os.environ.get('RED_TEAM_PLANTED'))", str(model)]
    first = subprocess.run(plain, env=env, capture_output=True, text=True, timeout=300)   # the cache inspect leaves
    assert "planted: None" in first.stdout, first.stderr[-2000:]
    (copy,) = (tmp_path / "modules").rglob("LICENSE_impl.py")
    _forge_pyc(copy, reviewed + "\nimport os\nos.environ['RED_TEAM_PLANTED'] = 'ran'\n", tmp_path)
    attacked = subprocess.run(plain, env=env, capture_output=True, text=True, timeout=300)
    assert "planted: ran" in attacked.stdout, attacked.stderr[-2000:]     # the attack is real
    out = subprocess.run(load, env=env, capture_output=True, text=True, timeout=300, cwd=run)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "planted: None" in out.stdout


# ---------------------------------------------------------------------------- the environment


def test_accelerate_mixed_precision_in_the_environment_does_not_change_a_reviewed_fp32_run(workspace, monkeypatch):
    """TrainingArguments reads ACCELERATE_MIXED_PRECISION when bf16 and fp16 are off (a CPU brief): exported before
    `grpo-rlvr train`, it made the reviewed fp32 run sample and train under bf16 autocast, and no file changed.
    train.py builds its GRPOConfig in the rendered precision."""
    from trl import GRPOConfig

    from grpo_rlvr.run.render import render
    from grpo_rlvr.trainer.trainer_build import grpo_config

    make_artifact(workspace / "brief.yaml", workspace / "out" / "inspection")
    run = render(workspace / "brief.yaml").dir
    cfg = yaml.safe_load((run / "grpo_config.yaml").read_text())
    cfg["output_dir"] = str(run / cfg["output_dir"])
    assert cfg["bf16"] is False and cfg["use_cpu"] is True
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "bf16")
    assert GRPOConfig(**cfg).mixed_precision == "bf16"                  # the attack is real for TRL's own config
    config = grpo_config(cfg)
    assert config.mixed_precision == "no"
    assert "config = grpo_config(cfg)" in (run / "train.py").read_text()


SHADOWS = '''
import json, pathlib
import grpo_rlvr.rewards.user as _user
_recorded = json.loads((pathlib.Path(__file__).resolve().parent / "out" / "inspection" / "manifest.json")
                       .read_text())["rewards"]
_user.source_fingerprint = lambda *a, **k: next(r["fingerprint"] for r in _recorded if r["name"] == "sum_reward")
'''


# A colorsys.py put beside the reward after the review: the reviewed reward's own `import colorsys` now runs it
# (its folder is first on sys.path), while the gate imports the reward, and it forges the reward's fingerprint.


@pytest.mark.xfail(strict=True, reason="a module added after the review beside a reward that puts its folder first "
                   "on sys.path, under a standard module's name the reviewed code imports, is not among the files the "
                   "inspection recorded, and runs when the gate imports the reward (docs/threat-model.md: cannot stop)")
def test_a_module_added_to_shadow_a_standard_import_of_the_reward_fails_the_gate(own_model):
    (own_model / "sum_reward.py").write_text(textwrap.dedent("""
        import os, sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import colorsys  # noqa: F401  (the standard module, at the review)
    """) + REVIEWED)
    brief = _with_user_reward(own_model)
    art = make_artifact(brief, own_model / "out" / "inspection")
    assert cli("gate", art, "--brief", brief).returncode == 0
    (own_model / "colorsys.py").write_text(SHADOWS)          # after the review; sum_reward.py is untouched
    out = cli("gate", art, "--brief", brief)
    assert out.returncode == 1, out.stdout + out.stderr
