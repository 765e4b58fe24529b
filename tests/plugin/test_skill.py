"""The skill as an agent reads it: it installs on its own (its folder copied alone resolves every link and
reference), what it says matches the code (recipe numbers, the judge's kappa, the variant deltas, the VLM
refusal, the gate's enforcement points, the MoE detection), the subagent preloads it, /finetune is the
user's to start and routes before it samples, and the manifest declares the hosts the plugin reaches.

Fast and offline except where noted: `validate` runs as a subprocess on briefs written here.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.brief import RECIPE
from grpo_rlvr.brief.grpo_rules import NUM_GENERATIONS_FLOOR
from grpo_rlvr.brief.recipe import DEFAULT_JUDGE_KAPPA
from grpo_rlvr.brief.variants import VARIANTS
from grpo_rlvr.gate.check import MIN_MEDIAN_SECONDS
from paths import REPO

SKILL_DIR = REPO / "skills" / "grpo-rlvr-training"
SKILL = SKILL_DIR / "SKILL.md"
COMMAND = REPO / "commands" / "finetune.md"
AGENT = REPO / "agents" / "llm-finetuning-training-engineer.md"
LINK_RE = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE_RE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)
SIBLINGS = ("finetuning-method-selection", "lora-qlora-recipes", "preference-optimization", "eval-harness-first",
            "dgx-spark-ops")


def front_matter(path: Path) -> tuple[dict, str]:
    head, _, body = path.read_text(encoding="utf-8")[4:].partition("\n---\n")
    return yaml.safe_load(head), body


def flat(path: Path) -> str:
    """The file's text with every run of whitespace made one space (Markdown wraps lines anywhere)."""
    return " ".join(path.read_text(encoding="utf-8").split())


def validate(brief: Path, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grpo_rlvr", "validate", str(brief), *extra],
                          capture_output=True, text=True)


# --- a standalone install of the skill folder ----------------------------------------------------------------

def test_the_skill_folder_alone_resolves_every_link(tmp_path):
    """Copy skills/grpo-rlvr-training, and nothing else, as an Agent Skills install would; every relative link
    and every `references/...` path named in its Markdown must resolve inside the copy."""
    alone = tmp_path / "installed" / "grpo-rlvr-training"
    shutil.copytree(SKILL_DIR, alone, symlinks=False)
    docs = sorted(alone.rglob("*.md"))
    assert len(docs) >= 5, [d.name for d in docs]
    broken = []
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        for target in LINK_RE.findall(FENCE_RE.sub("", text)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
                continue
            dest = (doc.parent / target.partition("#")[0]).resolve()
            if not dest.exists() or alone.resolve() not in (dest, *dest.parents):
                broken.append(f"{doc.relative_to(alone)}: {target}")
        for named in re.findall(r"`(references/[\w./-]+\.md)`", text):
            if not (alone / named).is_file():
                broken.append(f"{doc.relative_to(alone)}: `{named}`")
    assert not broken, "links that break when the skill is installed alone:\n" + "\n".join(broken)
    # the references the skill names are in the skill folder itself
    for name in ("reward-functions.md", "grpo-memory.md", "rewards.md", "diagnosing-runs.md"):
        assert (alone / "references" / name).is_file(), name


def test_root_references_is_the_skill_folders():
    top = REPO / "references"
    assert top.is_symlink() and top.resolve() == (SKILL_DIR / "references").resolve()
    assert (top / "reward-functions.md").is_file() and (top / "grpo-memory.md").is_file()


# --- the skill's rules, against the code ---------------------------------------------------------------------

def test_the_skill_names_its_siblings_and_the_standing_rule():
    text = flat(SKILL)
    for name in SIBLINGS:
        assert f"`{name}`" in text, f"SKILL.md does not name {name}"
    assert "DPO for taste, GRPO for reasoning" in text
    assert "SFT first" in text and "preflight" in text


def test_the_recipe_table_is_the_code():
    text = SKILL.read_text()
    row = {m.group(1): m.group(2) for m in re.finditer(r"^\| `(\w+)`[^|]*\| ([^|]+) \|", text, re.M)}
    assert row["num_generations"].startswith(f"**{NUM_GENERATIONS_FLOOR}, a floor**")
    assert float(row["learning_rate"].split()[0]) == RECIPE["learning_rate"]
    assert float(row["beta"].strip()) == RECIPE["beta"]
    assert row["loss_type"].strip() == f'`"{RECIPE["loss_type"]}"`'
    assert f"{RECIPE['per_device_train_batch_size']} per device × {RECIPE['gradient_accumulation_steps']}" in text
    assert f"{RECIPE['seed']}, every {RECIPE['logging_steps']} steps" in text


def test_the_variant_table_is_the_code():
    text = SKILL.read_text()
    for name, label in (("dapo", "**DAPO**"), ("dr_grpo", "**Dr.GRPO**"), ("gspo", "**GSPO, required**")):
        line = next(ln for ln in text.splitlines() if ln.startswith("|") and label in ln)
        for key, value in VARIANTS[name].delta.items():
            if isinstance(value, dict):
                continue
            assert f"`{key}" in line, f"SKILL.md's {name} row omits {key}"
            if isinstance(value, (str, float)) and not isinstance(value, bool):
                shown = f"{value:g}" if isinstance(value, float) else value
                assert f"{key}: {shown}" in line, f"SKILL.md's {name} row shows another {key} than {shown}"


def test_the_judge_is_placed_behind_calibration_at_the_gates_kappa():
    text = flat(SKILL)
    assert "A rubric judge is not a verifiable reward" in text and "`eval-harness-first`" in text
    assert f"at least {DEFAULT_JUDGE_KAPPA:g}, `inspection.judge_min_kappa`" in text
    assert f"a median of at least {MIN_MEDIAN_SECONDS:g} s per sample" in text


def test_the_vlm_reasons_are_in_the_skill_and_in_validates_refusal(workspace):
    text = flat(SKILL)
    for reason in ("ms-swift", "EasyR1", "no single command", "without using the image"):
        assert reason in text, reason
    data = yaml.safe_load(example_brief_text())
    # a hub id not in the local cache: its facts come from the brief (a local folder's config.json would win)
    data["model"] = {"name_or_path": "Qwen/Qwen2-VL-7B-Instruct", "params": "8B", "vision": True, "moe": False}
    (workspace / "vlm.yaml").write_text(yaml.safe_dump(data))
    out = validate(workspace / "vlm.yaml")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    for reason in ("reference-only", "ms-swift", "EasyR1", "no single command", "ignoring the image"):
        assert reason in out.stderr, reason


def test_what_the_skill_says_about_gate_enforcement_is_true():
    text = flat(SKILL)
    assert "enforced twice" not in text
    assert "`render` itself does not check the gate" in text
    render_src = (REPO / "src" / "grpo_rlvr" / "run" / "render.py").read_text()
    assert "check_gate" not in render_src and "check_run" not in render_src  # render really does not gate
    train_tpl = (REPO / "src" / "grpo_rlvr" / "templates" / "train.py.j2").read_text()
    assert "grpo_rlvr.run.guard import" in train_tpl  # the rendered train.py checks it itself
    ref = (REFERENCES := SKILL_DIR / "references").joinpath("reward-functions.md").read_text()
    assert "enforces it twice" not in ref and REFERENCES.is_dir()


def test_gspo_detection_is_described_as_it_works():
    text = SKILL.read_text()
    assert "applied automatically" not in text
    for source in ("`config.json`", "`model.moe`", "name", "`model.moe: true`"):
        assert source in text.split("## 8.")[1].split("## 9.")[0], source
    for doc in (COMMAND, AGENT):
        assert "(required, and applied automatically)" not in doc.read_text(), doc.name


def test_the_demo_does_not_claim_to_download_nothing():
    text = flat(SKILL)
    assert "downloads nothing" not in text
    assert "installs grpo-rlvr from the package index" in text


# --- the subagent, the command, the manifest ------------------------------------------------------------------

def test_the_subagent_preloads_the_skill_instead_of_repeating_it():
    meta, body = front_matter(AGENT)
    assert meta["skills"] == [front_matter(SKILL)[0]["name"]]
    for threshold in ("0.5", "0.28", "5e-7", "0.01"):  # the skill's numbers live in the skill
        assert threshold not in body, f"the agent repeats the skill's {threshold}"


def test_finetune_is_the_users_to_start_and_routes_before_it_samples():
    meta, body = front_matter(COMMAND)
    assert meta["disable-model-invocation"] is True
    phase0 = " ".join(body.split("## Phase 0")[1].split("## Phase 1")[0].split())
    first_sample = phase0.index("grpo-rlvr-plugin preflight")
    for route in ("preference pairs", "demonstrations", "vision-language", "DPO for taste, GRPO for reasoning"):
        assert route in phase0[:first_sample], f"/finetune routes {route!r} only after sampling"
    assert phase0.index("grpo-rlvr-plugin validate") < first_sample


def test_finetune_output_dir_comes_from_validates_json(workspace):
    body = COMMAND.read_text()
    named = set(re.findall(r"its `(\w+)`", body.split("## Phase 0")[1].split("## Phase 1")[0]))
    assert {"output_dir", "inspection_dir", "run_dir"} <= named, named
    out = validate(workspace / "brief.yaml", "--json")
    data = json.loads(out.stdout)
    for key in named | {"recipe_deviations", "variant"}:
        assert key in data, f"/finetune reads `{key}`, which validate --json does not print"
    assert Path(data["inspection_dir"]) == Path(data["output_dir"]) / "inspection"
    assert Path(data["run_dir"]) == Path(data["output_dir"]) / "run"


def test_the_manifest_declares_the_hosts_the_plugin_reaches():
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    hosts = set(manifest["network"]["hosts"])
    assert {"pypi.org", "files.pythonhosted.org"} <= hosts  # the wrapper's first install (pip)
    assert "huggingface.co" in hosts and {"*.huggingface.co", "*.hf.co"} <= hosts  # the hub and its CDNs
    wrapper = (REPO / "bin" / "grpo-rlvr-plugin").read_text()
    assert "pip install" in wrapper
    # judge endpoints are the user's own; the skill says so rather than pretending to list them
    assert "judge endpoint" in flat(SKILL).lower()


@pytest.mark.parametrize("doc", [SKILL, COMMAND, AGENT], ids=lambda p: p.name)
def test_no_doc_points_at_reference_material_that_does_not_exist(doc):
    assert "reference material" not in doc.read_text()
