"""What the docs claim, checked against the code that makes the claim true, one test per kind of claim:

- numbers in prose come from the same function as the generated tables beside them (grpo-memory.md's Unsloth
  paragraph from ``compare_anchors``; its stated default lengths from ``MemoryInputs`` and the recipe);
- ratios in prose are the ratio of the code's values (SKILL.md's adapter learning rate);
- what a finding is said to recommend is what the detector returns (reward hacking: no variant);
- a documented flag behaves as documented (``train RUN --dry-run`` shows the exact commands, also before the gate
  passes; ``--allow-cpu`` is tested in test_cpu_time.py);
- no shipped file refers to a document that is not in the repository.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from grpo_rlvr.brief import RECIPE
from grpo_rlvr.brief.methods import METHOD_GRPO_DEFAULTS
from grpo_rlvr.brief.variants import VARIANTS
from grpo_rlvr.memory import compare_anchors, estimate_memory
from grpo_rlvr.memory.anchors import ANCHORS
from grpo_rlvr.memory.estimate import MemoryInputs
from paths import REPO

SKILL = REPO / "skills" / "grpo-rlvr-training" / "SKILL.md"
MEMORY_DOC = REPO / "skills" / "grpo-rlvr-training" / "references" / "grpo-memory.md"
FINETUNE = REPO / "commands" / "finetune.md"
CLI = [sys.executable, "-m", "grpo_rlvr"]
WORDS = {2: "twice", 5: "five times", 10: "ten times", 20: "twenty times", 50: "fifty times"}


def flat(path: Path) -> str:
    return " ".join(path.read_text(encoding="utf-8").split())


# --- numbers in prose ------------------------------------------------------------------------------------------

def test_the_unsloth_paragraph_is_what_compare_anchors_computes():
    text = flat(MEMORY_DOC)
    m = re.search(r"Unsloth 8B in 15 GB: ours is ([\d.]+) GiB \(\+(\d+)%\)", text)
    assert m, "the Unsloth 8B paragraph lost its numbers"
    row = next(r for r in compare_anchors() if r["key"] == "unsloth-8b-qlora")
    assert float(m.group(1)) == row["ours_gib"]
    assert int(m.group(2)) == round(100 * (row["ours_gib"] / row["published_gib"] - 1))
    anchor = next(a for a in ANCHORS if a.key == "unsloth-8b-qlora")
    est = estimate_memory(anchor.inputs, anchor.gpu)
    copy = re.search(r"NF4 for QLoRA: ([\d.]+) GiB here\)\. Without that copy our estimate is ([\d.]+) GiB", text)
    assert copy, "the paragraph no longer says what vLLM's own copy costs"
    assert float(copy.group(1)) == round(est.terms["vllm_weights"], 1)
    assert float(copy.group(2)) == round(est.total_gib - est.terms["vllm_weights"], 1)


def test_the_memory_defaults_the_doc_states_are_the_code():
    text = flat(MEMORY_DOC)
    m = re.search(r"(\d+)-token prompts and (\d+)-token completions", text)
    assert m and (int(m.group(1)), int(m.group(2))) == (MemoryInputs.max_prompt_length,
                                                        MemoryInputs.max_completion_length)
    assert f"renders `max_completion_length: {RECIPE['max_completion_length']}`" in text
    from grpo_rlvr.cli import build_parser

    args = build_parser().parse_args(["memory"])   # the CLI's defaults are the library's
    assert (args.completion_length, args.prompt_length, args.batch_size) == (
        MemoryInputs.max_completion_length, MemoryInputs.max_prompt_length, MemoryInputs.per_device_train_batch_size)


def test_the_adapter_learning_rate_ratio_is_the_codes():
    row = next(line for line in SKILL.read_text().splitlines() if line.startswith("| `learning_rate`"))
    full, lora = RECIPE["learning_rate"], METHOD_GRPO_DEFAULTS["lora"]["learning_rate"]
    shown = re.search(r"\| ([\d.e-]+) full; ([\d.e-]+) with `method: lora`", row)
    assert shown and (float(shown.group(1)), float(shown.group(2))) == (full, lora), row
    assert f"{WORDS[round(lora / full)]} this recipe's" in row, row
    assert METHOD_GRPO_DEFAULTS["qlora"]["learning_rate"] == lora


# --- what a finding recommends ---------------------------------------------------------------------------------

def test_reward_hacking_is_fixed_in_the_reward_not_by_a_variant(tmp_path):
    from grpo_rlvr.diagnosis import diagnose
    from histories import HEALTHY, history, write_state

    hack = {**HEALTHY, "rewards__format__mean": lambda i: min(1.0, 0.5 + 0.05 * i),
            "rewards__exact_match__mean": lambda i: 0.1}
    res = diagnose(write_state(tmp_path, history(**hack)), out_dir=tmp_path)
    finding = next(f for f in res.findings if f.id == "reward_hacking")
    assert finding.variant is None and res.data["recommended_variant"] is None
    assert "No variant fixes a broken reward" in finding.recommendation
    assert all("reward_hacking" not in v.failure_modes for v in VARIANTS.values())
    assert "no variant fixes a broken reward" in flat(FINETUNE)
    assert "format saturating" not in flat(SKILL)          # the Dr.GRPO row no longer claims it


# --- documented flags behave as documented -------------------------------------------------------------------

def test_train_dry_run_shows_the_exact_commands_before_the_gate_passes(workspace):
    """SKILL.md §7, /finetune phase 2 and the subagent promise the commands from `train RUN --dry-run`; before a
    review they are shown with the reasons training would be refused (exit 1), and nothing runs."""
    assert "--dry-run" in flat(SKILL) and "--dry-run --json` shows the exact commands" in flat(FINETUNE)
    run = json.loads(subprocess.run([*CLI, "render", str(workspace / "brief.yaml"), "--json"], capture_output=True,
                                    text=True).stdout)["dir"]
    r = subprocess.run([*CLI, "train", run, "--dry-run", "--json"], capture_output=True, text=True)
    doc = json.loads(r.stdout)
    assert r.returncode == 1 and doc["exit_code"] == 1 and doc["dry_run"] and not doc["ok"], r.stderr
    assert doc["command"][-1].endswith("train.py") and doc["env"]["PYTHONUNBUFFERED"] == "1"
    assert any("inspection" in reason for reason in doc["refused"]), doc["refused"]
    text = subprocess.run([*CLI, "train", run, "--dry-run"], capture_output=True, text=True).stdout
    assert text.startswith(f"Would run in {run}:") and "Training would be refused now:" in text
    assert not (Path(run) / "output").exists() or not any((Path(run) / "output").iterdir())


# --- references ---------------------------------------------------------------------------------------------------

SHIPPED = ("src", "examples", "skills", "commands", "agents", "hooks", "bin", "scripts", "benchmarks", "evals",
           "README.md", "docs", ".claude-plugin", "pyproject.toml", ".ci")
# A document cited the way people cite one: an upper-case name (DESIGN.md, STYLE.md), a path to a .md file, or any
# .md name with a section sign; and anything under /work/, which no clone has. Lower-case bare names without a
# section (diagnosis.md, which diagnose writes) are output files, not citations.
DOC_REF = re.compile(r"(?<![\w.-])(/work/[\w./-]+|(?:[\w.-]+/)+[\w.-]+\.md|[A-Z][A-Z0-9_-]*\.md|[\w.-]+\.md(?=\s*§))"
                     r"(?:\s*§\s*\d+[a-z]?(?:\.\d+)*)?")
# Tests name made-up paths as data (a hook test writes notes/todo.md); in them only upper-case citations count.
TEST_DOC_REF = re.compile(r"(?<![\w.-])(/work/[\w./-]+|[A-Z][A-Z0-9_-]*\.md)(?:\s*§\s*\d+[a-z]?(?:\.\d+)*)?")


def text_files(*where: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", *where], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout.split()
    return [REPO / p for p in out if (REPO / p).is_file() and (REPO / p).suffix in
            (".py", ".md", ".yaml", ".yml", ".j2", ".json", ".sh", ".toml", ".txt", "")]


@functools.cache
def markdown_names() -> frozenset[str]:
    return frozenset(p.name for p in text_files(".") if p.suffix == ".md")


def missing_documents(path: Path, text: str, pattern: re.Pattern = DOC_REF) -> list[str]:
    """Document names in ``text`` that resolve to no file: beside ``path``, from the repository root, or (a bare
    name) anywhere in the repository."""
    names = markdown_names()
    out = []
    for m in pattern.finditer(text):
        ref = m.group(1)
        word_start = max(text.rfind(c, 0, m.start()) for c in " \n\t(\"'<") + 1
        if "://" in text[word_start:m.start()]:
            continue   # part of a URL
        if not ref.startswith("/work/") and ((path.parent / ref).exists() or (REPO / ref).exists()
                                              or ("/" not in ref and ref in names)):
            continue
        out.append(m.group(0))
    return out


def test_no_shipped_file_refers_to_a_document_that_is_not_in_the_repository():
    problems = []
    for pattern, files in ((DOC_REF, text_files(*SHIPPED)), (TEST_DOC_REF, text_files("tests"))):
        for path in files:
            if path.name == Path(__file__).name:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            problems += [f"{path.relative_to(REPO)}: {ref}" for ref in missing_documents(path, text, pattern)]
    assert not problems, "references to documents the repository does not have:\n" + "\n".join(problems)


def test_the_reference_check_catches_a_missing_document(tmp_path):
    src = REPO / "src" / "grpo_rlvr" / "gate/check.py"
    assert missing_documents(src, '"""Rules of DESIGN.md §6."""') == ["DESIGN.md §6"]
    assert missing_documents(src, "see notes/PLAN.md") == ["notes/PLAN.md"]
    assert missing_documents(src, "see docs/design.md §3 and SKILL.md") == []


@pytest.mark.parametrize("section", ["pipeline", "artifacts", "command-line contract", "gate", "sandbox", "trl",
                                     "vllm", "module map"])
def test_the_design_doc_covers(section):
    text = (REPO / "docs" / "design.md").read_text(encoding="utf-8").lower()
    headings = " ".join(line for line in text.splitlines() if line.startswith("#"))
    assert section in headings, f"docs/design.md has no section on {section}"


def test_every_section_cited_in_the_design_doc_exists(workspace):
    design = REPO / "docs" / "design.md"
    sections = set(re.findall(r"^## (\d+)\. ", design.read_text(encoding="utf-8"), re.M))
    cited = []
    for path in text_files(*SHIPPED, "tests"):
        for n in re.findall(r"docs/design\.md\s*§\s*(\d+)", path.read_text(encoding="utf-8", errors="replace")):
            cited.append((path.relative_to(REPO), n))
    assert cited, "nothing cites docs/design.md by section"
    assert not [c for c in cited if c[1] not in sections], f"sections that do not exist: {cited}"
    out = subprocess.run([*CLI, "validate", str(workspace / "brief.yaml")], capture_output=True, text=True).stdout
    assert "[recipe] the skill's GRPO recipe (docs/design.md §2)" in out


def test_the_python_floor_is_stated_alike_everywhere():
    """requires-python's floor is the one the pins can install (constraints.txt: numpy 2.4, pandas 3.1 and
    matplotlib 3.11 need 3.11; identity/hash_cache.py uses hashlib.file_digest, new in 3.11), its cap is just above
    the newest Python CI tests (.ci/run's newer-Python lanes), every Python between them has its own CI lane, and
    every file that states or checks a floor says the same."""
    import tomllib

    spec = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    floor = re.fullmatch(r">=\s*3\.(\d+)", spec.split(",")[0].strip())
    assert floor and floor.group(1) == "11", spec
    assert sys.version_info >= (3, 11)   # what the tests run on satisfies it
    pins = dict(line.split("==") for line in (REPO / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.lstrip().startswith("#"))
    assert int(pins["numpy"].split(".")[0]) >= 2 and int(pins["numpy"].split(".")[1]) >= 3, pins["numpy"]  # 3.11+
    cap = re.fullmatch(r"<\s*3\.(\d+)", spec.split(",")[1].strip())
    # the lane entries only ("py313 scripts/test-newer-python.sh 3.13"), not a preparation or a comment
    lanes = {int(v) for v in re.findall(r'"py3\d+ scripts/test-newer-python\.sh 3\.(\d+)', (REPO / ".ci/run").read_text())}
    newest = max(lanes)
    assert cap and int(cap.group(1)) == newest + 1, (spec, newest)   # claimed up to the newest CI tests
    claimed = set(range(int(floor.group(1)) + 1, int(cap.group(1))))   # 3.11 itself runs every other lane
    assert lanes == claimed, f"claimed Pythons 3.{sorted(claimed)} but CI lanes for 3.{sorted(lanes)}"
    stated = {"README.md": r"Python 3\.(\d+) to 3\.14", "skills/grpo-rlvr-training/SKILL.md": r"Python 3\.(\d+) to 3\.14",
              "bin/grpo-rlvr-plugin": r"sys\.version_info >= \(3, (\d+)\)",
              "scripts/bootstrap.sh": r"sys\.version_info < \(3, (\d+)\)",
              "scripts/test-vllm.sh": r"sys\.version_info < \(3, (\d+)\)"}
    for name, pattern in stated.items():
        found = set(re.findall(pattern, (REPO / name).read_text(encoding="utf-8")))
        assert found == {"11"}, (name, found)
    assert "py311" in (REPO / "pyproject.toml").read_text()   # ruff's target-version
    caps = {"scripts/bootstrap.sh": r"sys\.version_info >= \(3, (\d+)\)",
            "scripts/test-vllm.sh": r"sys\.version_info >= \(3, (\d+)\)",
            "bin/grpo-rlvr-plugin": r"sys\.version_info\[:2\] < \(3, (\d+)\)"}
    for name, pattern in caps.items():   # the scripts that check a Python refuse the same newest one
        assert set(re.findall(pattern, (REPO / name).read_text(encoding="utf-8"))) == {cap.group(1)}, name


def test_the_by_hand_commands_say_how_grpo_rlvr_gets_on_path():
    """The README's by-hand pipeline runs `grpo-rlvr`, which the scripts install into .venv/: the block activates
    it first (the scripts put nothing on PATH themselves), then runs only grpo-rlvr, and changes folder only into
    the offline brief's folder that the demo it runs writes."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("## The pipeline, by hand", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    lines = block.splitlines()
    assert lines[0].startswith("source .venv/bin/activate"), lines[0]
    assert all(line.startswith(("grpo-rlvr ", "cd ")) for line in lines[1:]), lines
    from grpo_rlvr.demo.pipeline import default_workdir

    demo = next(line.split("#")[0].split() for line in lines if line.startswith("grpo-rlvr demo"))
    task = demo[demo.index("--task") + 1] if "--task" in demo else "arithmetic"
    assert [line.split("#")[0].split() for line in lines if line.startswith("cd ")] == [["cd", default_workdir(task)]]


def test_finetune_says_what_the_review_records():
    """review/session.py asks for a note only on a disagree (an agree records none), and /finetune says so."""
    import ast

    doc = flat(FINETUNE)
    assert "a note for every sample" not in doc
    assert "a disagree also records what is wrong (a note) and which reward is wrong" in doc
    tree = ast.parse((REPO / "src" / "grpo_rlvr" / "review/session.py").read_text())
    calls = {c.args[2].value: {k.arg for k in c.keywords} for c in ast.walk(tree) if isinstance(c, ast.Call)
             and getattr(c.func, "id", None) == "make_verdict" and isinstance(c.args[2], ast.Constant)}
    assert "note" not in calls["agree"] and "note" in calls["disagree"], calls


def test_each_row_of_what_the_gate_cannot_stop_names_its_test():
    """docs/threat-model.md's table of what no check on the same machine stops: every row ends with the test that
    shows where its line is (a test file, or a file and a test function, that exist), or says why none can."""
    text = (REPO / "docs" / "threat-model.md").read_text()
    table = text[text.index("**What the gate cannot stop on the same machine**"):]
    body = table[table.index("| --- |"):table.index("\n\n", table.index("| --- |"))]
    rows = [line for line in body.splitlines()[1:] if line.startswith("| ")]
    assert len(rows) >= 12, rows
    for row in rows:
        cell = row.rstrip(" |").rsplit(" | ", 1)[-1]
        if cell.startswith("(none:"):
            continue
        named = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`", cell)
        assert named, f"a row without its test: {row[:80]}"
        for path, function in named:
            source = (REPO / path).read_text()
            assert not function or f"def {function}(" in source, (path, function)


STUB_PYTHON = """#!/bin/bash
# A stand-in Python for scripts/bootstrap.sh: passes its version check, makes a venv of itself, logs pip's arguments
if [ "$1" = -c ]; then if [ -n "$STUB_C_FAIL" ] && [[ "$2" == *"$STUB_C_FAIL"* ]]; then exit 1; fi; exit 0; fi
if [ "$1" = -m ] && [ "$2" = venv ]; then mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && exit 0; fi
echo "$*" >> "$STUB_LOG"
"""


def bootstrap_copy(tmp_path) -> dict:
    """scripts/bootstrap.sh and what it reads, copied to ``tmp_path`` beside a stand-in Python (``STUB_PYTHON``);
    the environment to run it in, without the caller's GRPO_RLVR_TORCH settings."""
    import os
    import shutil

    (tmp_path / "scripts").mkdir()
    for name in ("pyproject.toml", "constraints.txt", "scripts/bootstrap.sh", "scripts/compile-venv.sh"):
        shutil.copy(REPO / name, tmp_path / name)
    stub = tmp_path / "python-stub"
    stub.write_text(STUB_PYTHON)
    stub.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRPO_RLVR_TORCH")}
    env["PYTHON"] = str(stub)
    return env


@pytest.mark.parametrize("torch,index", [(None, None), ("cpu", "https://download.pytorch.org/whl/cpu")])
def test_the_install_offers_torchs_cpu_only_build_as_the_readme_says(tmp_path, torch, index):
    """The README's install claim: the torch build is the package index's, and GRPO_RLVR_TORCH=cpu adds PyTorch's
    CPU-only index to the very pip command that installs the stack (a wrong value is refused, exit 2)."""

    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert ("`GRPO_RLVR_TORCH=cpu scripts/demo.sh` (or `test.sh`) adds it and pip prefers its `torch 2.13.0+cpu`"
            in readme)
    env = bootstrap_copy(tmp_path)
    env.update(STUB_LOG=str(tmp_path / "pip.log"), **({"GRPO_RLVR_TORCH": torch} if torch else {}))
    out = subprocess.run(["bash", str(tmp_path / "scripts/bootstrap.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    [pip, compiled] = (tmp_path / "pip.log").read_text().splitlines()   # then scripts/compile-venv.sh, on every core
    assert pip.startswith("-m pip install --no-compile") and "-c constraints.txt -e .[dev]" in pip, pip
    assert compiled.startswith("-m compileall") and "-j 0" in compiled, compiled
    assert (f"--extra-index-url {index}" in pip) if index else ("--extra-index-url" not in pip), pip
    env["GRPO_RLVR_TORCH"] = "cuda"
    bad = subprocess.run(["bash", str(tmp_path / "scripts/bootstrap.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "use GRPO_RLVR_TORCH=cpu" in bad.stderr, bad.stderr


def test_the_demo_phase_lines_the_docs_quote_are_the_ones_it_prints():
    """README and docs/demo.md quote the demo's phase lines (`[preflight-untrained] preflight on …`): each quoted
    one is a phase the demo starts with that name and that text (one once said `[preflight]`)."""
    source = (REPO / "src" / "grpo_rlvr" / "demo" / "pipeline.py").read_text()
    phases = set(re.findall(r'ph\.start\("([^"]+)", "([^"]+)"\)', source))
    assert len(phases) >= 5, phases
    quoted = [(doc, m) for doc in ("README.md", "docs/demo.md")
              for m in re.findall(r"`\[([a-z-]+)\] ([^`]+)`", (REPO / doc).read_text())]
    assert quoted
    for doc, (name, text) in quoted:
        assert (name, text) in phases, (doc, name, text, sorted(phases))


@pytest.mark.parametrize("fails,code,said", [
    ("urlopen", 2, "PyTorch's CPU-only index (https://download.pytorch.org/whl/cpu) cannot be reached from here"),
    ("torch.version.cuda", 1, "but pip installed a CUDA build of torch")])
def test_the_cpu_build_asked_for_is_the_cpu_build_installed(tmp_path, fails, code, said):
    """Where PyTorch's CPU index cannot be reached, pip took PyPI's CUDA build without a word (a plain user got 5.4
    GB after asking for the CPU build): bootstrap refuses before installing, and checks the build after it."""

    env = bootstrap_copy(tmp_path)
    env.update(STUB_LOG=str(tmp_path / "pip.log"), GRPO_RLVR_TORCH="cpu", STUB_C_FAIL=fails)
    out = subprocess.run(["bash", str(tmp_path / "scripts/bootstrap.sh")], env=env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == code and said in out.stderr, (out.returncode, out.stderr)
    assert not (tmp_path / ".venv" / ".grpo-rlvr-installed").exists()   # the next run tries again
    assert (tmp_path / "pip.log").exists() == (code == 1)               # refused before pip, or checked after it


def test_compile_venv_writes_the_bytecode_python_then_loads_where_pythondontwritebytecode_is_set(tmp_path):
    """scripts/compile-venv.sh byte-compiles an environment's packages even where PYTHONDONTWRITEBYTECODE is set (there
    Python itself never writes what it compiles, so each process would compile TRL again: 2.5x the CPU of its import,
    benchmarks/bench_import_compiled.py); a file that does not compile is left as it is, and the script succeeds."""
    import importlib.util
    import os
    import sys

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "installed_pkg").mkdir()
    (site / "installed_pkg" / "__init__.py").write_text("VALUE = 42\n")
    (site / "installed_pkg" / "py2_data.py").write_text("print 'old syntax'\n")   # test data some packages ship
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    out = subprocess.run(["bash", str(REPO / "scripts" / "compile-venv.sh"), str(venv)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    pyc = Path(importlib.util.cache_from_source(str(site / "installed_pkg" / "__init__.py")))
    assert pyc.read_bytes()[:4] == importlib.util.MAGIC_NUMBER
    assert not Path(importlib.util.cache_from_source(str(site / "installed_pkg" / "py2_data.py"))).exists()
    used = subprocess.run([str(venv / "bin" / "python"), "-v", "-c", "import installed_pkg; print(installed_pkg.VALUE)"],
                          env=env, capture_output=True, text=True, timeout=60)
    assert used.stdout == "42\n" and f"code object from '{pyc}'" in used.stderr, used.stderr[-2000:]


@pytest.mark.parametrize("flags", ["fpu sse4_2 avx avx2 fma", "fpu avx2 avx512f avx512bw avx512_vnni", "fpu avx2 avx_vnni"])
def test_the_avx2_lane_stops_only_where_it_would_repeat_the_main_lane(tmp_path, flags):
    """CI's AVX2 lane (`scripts/test-avx2.sh --unless-native`) runs nothing where the CPU's own kernels are AVX2 (torch
    picks AVX2 and the CPU has no AVX-512 or AVX-VNNI flag: the main lane ran those kernels); with either flag it goes
    on to hold the kernels to AVX2 and run pytest (here only collecting one file)."""
    import os

    python = REPO / ".venv" / "bin" / "python"
    if not python.exists():
        pytest.skip("the script runs the repository's .venv (scripts/bootstrap.sh makes it); this lane has none")
    native = subprocess.run([str(python), "-c", "import torch; print(torch.backends.cpu.get_cpu_capability())"],
                            env={k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"},
                            capture_output=True, text=True, check=True, timeout=120).stdout.strip()
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    out = subprocess.run(["bash", str(REPO / "scripts" / "test-avx2.sh"), "--unless-native", "--collect-only", "-q",
                          "-p", "no:cacheprovider", "tests/diagnosis/test_plain_trl.py"],
                         env={**os.environ, "GRPO_RLVR_CPUINFO": str(cpuinfo)}, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    skipped = "nothing to repeat" in out.stdout
    assert skipped == (native == "AVX2" and "512" not in flags and "vnni" not in flags), out.stdout[-2000:]
    assert skipped != ("test_plain_trl.py::" in out.stdout), out.stdout[-2000:]
