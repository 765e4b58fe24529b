"""The Claude Code plugin surface: manifests that agree, docs whose links and paths resolve, CLI commands that
exist with the flags shown, reference code that runs, portable skill front matter, eval cases that parse, and
a backend wrapper that resolves the backend as documented.

Fast and offline: no model, no network. (scripts/validate-plugin.sh runs Claude Code's own validator.)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from grpo_rlvr.cli import build_parser
from grpo_rlvr.rewards import REGISTRY
from paths import REPO

# references/ at the root is a link into the skill folder (where the references live), so it is not walked twice.
DOC_DIRS = ("skills", "commands", "agents")
DOCS = sorted(p for d in DOC_DIRS for p in (REPO / d).rglob("*.md"))
# What a person reads first: the README and the pages it sends them to. Their links, commands, briefs and Python
# blocks are held to the same checks as the plugin's docs.
README = REPO / "README.md"
PAGES = sorted(DOCS + [README, *(REPO / "docs").glob("*.md")])
README_MAX_LINES = 220   # a newcomer's page: what it is, the two commands, the next step; the rest lives in docs/
SKILL = REPO / "skills" / "grpo-rlvr-training" / "SKILL.md"
REFERENCES = SKILL.parent / "references"
COMMAND = REPO / "commands" / "finetune.md"
AGENT = REPO / "agents" / "llm-finetuning-training-engineer.md"
WRAPPER = REPO / "bin" / "grpo-rlvr-plugin"

# The portable Agent Skills front matter keys; anything else is specific to one agent product.
PORTABLE_SKILL_KEYS = {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}

FENCE_RE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")
LINK_RE = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)\)")
PLUGIN_ROOT_RE = re.compile(r"\$\{CLAUDE_PLUGIN_ROOT\}/([A-Za-z0-9_./-]+)")
SHELL_LANGS = {"bash", "sh", "shell", "console", "zsh"}
SHELL_STOPS = {"|", "||", "&&", ";", "&", ">", ">>", "<", "2>", "2>&1"}


def rel(p: Path) -> str:
    return str(p.relative_to(REPO))


def split_front_matter(path: Path) -> tuple[dict, str]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\n"), f"{rel(path)}: no front matter"
    head, _, body = text[4:].partition("\n---\n")
    meta = yaml.safe_load(head)
    assert isinstance(meta, dict), f"{rel(path)}: front matter is not a mapping"
    return meta, body


def fences(text: str) -> list[tuple[str, str]]:
    return [(m.group(1).lower(), m.group(2)) for m in FENCE_RE.finditer(text)]


def prose(text: str) -> str:
    """The text with fenced code blocks removed (links inside code are not links)."""
    return FENCE_RE.sub("", text)


def github_slug(heading: str) -> str:
    s = heading.strip().lower().replace("`", "")
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    heads = re.findall(r"^#{1,6}\s+(.+?)\s*$", prose(path.read_text(encoding="utf-8")), re.M)
    return {github_slug(h) for h in heads}


# --- manifests --------------------------------------------------------------------------------------------

def test_plugin_manifest_and_marketplace_agree():
    manifest_path = REPO / ".claude-plugin" / "plugin.json"
    manifest = json.loads(manifest_path.read_text())
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())

    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", manifest["name"]), manifest["name"]
    entries = [p for p in market["plugins"] if p["name"] == manifest["name"]]
    assert len(entries) == 1, f"marketplace.json must list plugin {manifest['name']!r} exactly once"
    assert entries[0]["source"] in ("./", "."), "the marketplace entry must point at this repository's root"
    assert entries[0].get("version", manifest["version"]) == manifest["version"]

    # One version everywhere: the plugin is the package.
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(rf'^version = "{re.escape(manifest["version"])}"$', pyproject, re.M), \
        "plugin.json version differs from pyproject.toml"


def test_top_level_plugin_json_is_the_same_file():
    top = REPO / "plugin.json"
    assert top.is_symlink(), "plugin.json must be a link to .claude-plugin/plugin.json (one source of truth)"
    assert top.resolve() == (REPO / ".claude-plugin" / "plugin.json").resolve()


def test_icon_is_a_square_png_the_directory_accepts():
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    icon = REPO / manifest["icon"]
    data = icon.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{manifest['icon']} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])  # IHDR comes first
    assert width == height and 512 <= width <= 2048, (width, height)
    assert len(data) < 2 * 1024 * 1024
    assert (REPO / "scripts" / "make_icon.py").is_file(), "the icon's generator script is missing"


# --- links and paths --------------------------------------------------------------------------------------

@pytest.mark.parametrize("doc", PAGES, ids=rel)
def test_relative_links_resolve(doc: Path):
    broken = []
    for target in LINK_RE.findall(prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        dest = (doc.parent / path_part).resolve() if path_part else doc
        if not dest.exists():
            broken.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {rel(dest)}")
        elif REPO not in dest.parents and dest != REPO:
            broken.append(f"{target}: points outside the repository")
    assert not broken, f"{rel(doc)}:\n" + "\n".join(broken)


@pytest.mark.parametrize("doc", PAGES, ids=rel)
def test_plugin_root_paths_resolve(doc: Path):
    missing = [p for p in PLUGIN_ROOT_RE.findall(doc.read_text(encoding="utf-8"))
               if not (REPO / p.rstrip(".")).exists()]
    assert not missing, f"{rel(doc)}: ${{CLAUDE_PLUGIN_ROOT}}/… paths with no file: {missing}"


# --- CLI commands shown in the docs -----------------------------------------------------------------------

def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:  # argparse keeps subparsers here; there is no public accessor
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("grpo-rlvr has no subcommands")


def shown_commands(doc: Path) -> list[tuple[str, bool]]:
    """(command line, from a shell block) for every grpo-rlvr / grpo-rlvr-plugin invocation in the doc."""
    text = doc.read_text(encoding="utf-8")
    found = []
    for lang, body in fences(text):
        if lang not in SHELL_LANGS:
            continue
        for line in body.replace("\\\n", " ").splitlines():
            line = line.strip().removeprefix("$ ")
            if re.match(r"grpo-rlvr(-plugin)?\s", line):
                found.append((line, True))
    for span in INLINE_CODE_RE.findall(prose(text)):
        if re.match(r"grpo-rlvr(-plugin)?\s+\S", span):
            found.append((span, False))
    return found


def command_tokens(line: str) -> list[str]:
    """The words of one shell command line, up to a comment, pipe, redirection or command separator."""
    tokens = []
    for tok in shlex.split(line, comments=True):
        if tok in SHELL_STOPS or tok.startswith((">", "2>")):
            break
        tokens.append(tok)
    return tokens


def check_command(line: str, strict: bool) -> str | None:
    """None when the command exists with the flags shown, else what is wrong."""
    prog, *args = command_tokens(line)
    if args[:1] and re.fullmatch(r"<[^>]+>", args[0]):  # `grpo-rlvr <subcommand> ...`: a placeholder
        return None
    if prog == "grpo-rlvr-plugin" and args[:1] == ["--plugin-where"]:  # the wrapper's own flag
        args = args[1:]
        if not args:
            return None
    parser, subs = build_parser(), subparsers()
    while args and args[0] in ("-v", "--verbose"):
        args = args[1:]
    if not args or args[0] in ("--version", "-h", "--help"):
        return None
    if args[0] not in subs:
        return f"unknown subcommand {args[0]!r}; grpo-rlvr has {', '.join(subs)}"
    sub = subs[args[0]]
    for a in args[1:]:
        if a.startswith("-") and not re.fullmatch(r"-\d+(\.\d+)?", a):
            flag = a.split("=", 1)[0]
            if flag not in sub._option_string_actions:
                known = sorted(s for s in sub._option_string_actions if s.startswith("--"))
                return f"grpo-rlvr {args[0]} has no flag {flag}; it has {', '.join(known)}"
        if a.startswith("--reward=") or (args.index(a) > 0 and args[args.index(a) - 1] == "--reward"):
            name = a.split("=", 1)[-1]
            placeholder = re.fullmatch(r"[A-Z][A-Z_]*", name)  # NAME, REWARD: the reader fills it in
            if not placeholder and ":" not in name and not name.endswith(".py") and name not in REGISTRY:
                return f"--reward {name}: no such built-in reward; built-ins are {', '.join(REGISTRY)}"
    if strict:
        try:
            parser.parse_args(args)
        except SystemExit:
            return "argparse rejects it (missing or malformed arguments)"
    return None


DOCS_WITH_COMMANDS = [d for d in PAGES if shown_commands(d)]


@pytest.mark.parametrize("doc", DOCS_WITH_COMMANDS, ids=rel)
def test_cli_commands_in_docs_exist(doc: Path, capsys):
    problems = []
    for line, strict in shown_commands(doc):
        problem = check_command(line, strict)
        if problem:
            problems.append(f"{line}\n    -> {problem}")
    capsys.readouterr()  # argparse's own error text
    assert not problems, f"{rel(doc)}:\n" + "\n".join(problems)


def test_command_checker_rejects_what_does_not_exist(capsys):
    assert check_command("grpo-rlvr gate DIR --json", strict=True) is None
    assert check_command("grpo-rlvr-plugin --plugin-where", strict=True) is None
    assert "unknown subcommand" in check_command("grpo-rlvr launch RUN", strict=False)
    assert "no flag --fast" in check_command("grpo-rlvr train RUN --fast", strict=False)
    assert "no such built-in" in check_command("grpo-rlvr score --input x --reward exactmatch", strict=False)
    assert "argparse rejects" in check_command("grpo-rlvr score --input x", strict=True)
    capsys.readouterr()


def test_the_readme_is_a_page_a_newcomer_reads():
    """The README stays short (the lab notebook lives in docs/), and every page of docs/ is reachable from it."""
    text = README.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines; move detail to a docs/ page and link it"
    linked = {(README.parent / target.partition("#")[0]).resolve() for target in LINK_RE.findall(prose(text))}
    unlinked = [rel(p) for p in sorted((REPO / "docs").glob("*.md")) if p.resolve() not in linked]
    assert not unlinked, f"docs pages the README does not link: {unlinked}"


def test_the_docs_show_every_phase_command():
    shown = {command_tokens(line)[1] for d in DOCS for line, _ in shown_commands(d) if len(command_tokens(line)) > 1}
    for sub in ("validate", "preflight", "score", "inspect", "review", "gate", "render", "train", "diagnose",
                "memory"):
        assert sub in shown, f"no doc shows `grpo-rlvr {sub}`"


# --- reference code runs ----------------------------------------------------------------------------------

PY_BLOCKS = [(doc, i, body) for doc in sorted(REFERENCES.glob("*.md")) + [p for p in PAGES if p.parent != REFERENCES]
             for i, (lang, body) in enumerate(b for b in fences(doc.read_text(encoding="utf-8")) if b[0] == "python")]


@pytest.mark.parametrize("doc,index,code", PY_BLOCKS, ids=[f"{rel(d)}#{i}" for d, i, _ in PY_BLOCKS])
def test_reference_python_blocks_run(doc: Path, index: int, code: str, tmp_path: Path):
    script = tmp_path / f"block{index}.py"
    script.write_text(code)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, f"{rel(doc)} python block {index} failed:\n{run.stderr[-3000:]}"


def test_reward_reference_has_every_required_reward():
    text = (REFERENCES / "reward-functions.md").read_text()
    for fn in ("def exact_match_reward", "def json_schema_reward", "def unit_test_reward", "def with_length_penalty",
               "def make_rubric_judge", "def parse_judge_answer"):
        assert fn in text, f"reward-functions.md lost {fn}"
    assert "grpo-memory.md" in text


# --- YAML briefs shown in the docs match the brief schema ---------------------------------------------------

BRIEF_SCHEMA = json.loads((REPO / "src" / "grpo_rlvr" / "brief" / "schema.json").read_text())


@pytest.mark.parametrize("doc", PAGES, ids=rel)
def test_yaml_brief_blocks_match_the_schema(doc: Path):
    for lang, body in fences(doc.read_text(encoding="utf-8")):
        if lang not in ("yaml", "yml"):
            continue
        data = yaml.safe_load(body)
        if not isinstance(data, dict) or not set(data) <= set(BRIEF_SCHEMA["properties"]):
            continue  # not a brief (or a fragment of one)
        for key, value in data.items():  # a fragment is checked key by key
            jsonschema.Draft202012Validator(BRIEF_SCHEMA["properties"][key]).validate(value)
        if {"model", "dataset", "rewards"} <= set(data):
            jsonschema.Draft202012Validator(BRIEF_SCHEMA).validate(data)
        for r in data.get("rewards", []):
            name = r["name"]
            assert ":" in name or name.endswith(".py") or name in REGISTRY, f"{rel(doc)}: unknown reward {name}"


# --- the skill, the command, the agent ----------------------------------------------------------------------

def test_skill_front_matter_is_portable():
    meta, body = split_front_matter(SKILL)
    assert set(meta) <= PORTABLE_SKILL_KEYS, f"non-portable keys: {set(meta) - PORTABLE_SKILL_KEYS}"
    assert meta["name"] == SKILL.parent.name
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", meta["name"]) and len(meta["name"]) <= 64
    assert 0 < len(meta["description"]) <= 1024
    assert len(meta.get("compatibility", "")) <= 500
    assert isinstance(meta.get("allowed-tools", ""), str)
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in meta.get("metadata", {}).items())
    assert len(SKILL.read_text().splitlines()) < 500


def test_skill_description_routes_the_right_requests():
    desc = split_front_matter(SKILL)[0]["description"]
    for term in ("GRPO", "RLVR", "verifiable", "reward function", "reward hacking", "DAPO", "Dr.GRPO", "GSPO"):
        assert term in desc, f"description should mention {term!r} so such requests reach the skill"
    for other in ("preference pairs", "DPO", "demonstration", "SFT", "vision-language"):
        assert other in desc, f"description should name {other!r} as out of scope"


def test_skill_states_the_recipe_and_the_gate():
    text = SKILL.read_text()
    for fact in ("**8, a floor**", "5e-7", "0.01", '`"grpo"`', "colocate", "server", "50 to 100",
                 "grpo-rlvr-plugin gate", "**DAPO**", "**Dr.GRPO**", "**GSPO, required**"):
        assert fact in text, f"SKILL.md lost {fact!r}"
    # Related skills the plugin does not ship are named, never linked.
    assert not re.search(r"\]\([^)]*(dpo|sft)[^)]*\)", text, re.I)


def test_skill_builtin_reward_list_matches_the_registry():
    line = next(ln for ln in SKILL.read_text().splitlines() if ln.lstrip("- ").startswith("Built-ins:"))
    following = SKILL.read_text().split(line, 1)[1].split("\n- ", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", line + following))
    assert named == set(REGISTRY), f"SKILL.md built-ins {sorted(named)} != registry {sorted(REGISTRY)}"


def test_reward_reference_builtin_list_matches_the_registry():
    text = (REFERENCES / "reward-functions.md").read_text()
    listed = re.search(r"built-in rewards \(([^)]*)\)", text, re.S)
    assert listed, "reward-functions.md should list the built-in rewards"
    named = set(re.findall(r"`([a-z_]+)`", listed.group(1)))
    assert named == set(REGISTRY), f"reward-functions.md built-ins {sorted(named)} != registry {sorted(REGISTRY)}"


def assert_no_review_approval(tools: str) -> None:
    """The permission list names each subcommand the agent may run, and never ``review`` or a wildcard."""
    from grpo_rlvr.cli import build_parser

    subcommands = set(next(a for a in build_parser()._actions if a.choices and "gate" in a.choices).choices)
    for prog in ("grpo-rlvr", "grpo-rlvr-plugin"):
        granted = set(re.findall(rf"Bash\({re.escape(prog)} ([a-z-]+):\*\)", tools))
        assert granted == subcommands - {"review"}, (prog, sorted(granted))
        assert f"Bash({prog}:*)" not in tools and f"Bash({prog} review" not in tools


def test_skill_allowed_tools_leave_out_review():
    assert_no_review_approval(split_front_matter(SKILL)[0]["allowed-tools"])


def test_finetune_command():
    meta, body = split_front_matter(COMMAND)
    assert meta["description"] and meta["argument-hint"]
    assert_no_review_approval(meta["allowed-tools"])
    assert "$ARGUMENTS" in body
    for phase in range(5):
        assert re.search(rf"^## Phase {phase}\b", body, re.M), f"phase {phase} missing"
    assert "grpo-rlvr-plugin gate OUTPUT_DIR/inspection" in body and "--json" in body
    assert "You never review" in body and "grpo-rlvr review OUTPUT_DIR/inspection" in body
    assert "grpo-rlvr-plugin diagnose" in body and "grpo-rlvr-plugin train" in body


def test_training_engineer_agent():
    meta, body = split_front_matter(AGENT)
    assert meta["name"] == AGENT.stem and meta["description"] and meta["tools"]
    assert "RUN/output/metrics.jsonl" in body
    assert "Never edit a reward function" in body
    assert "grpo-rlvr-plugin train RUN" in body and "grpo-rlvr-plugin diagnose RUN" in body


# --- evals ------------------------------------------------------------------------------------------------

EVAL_CASES = sorted(p.parent for p in (REPO / "evals").glob("*/prompt.md"))
PROMPT_KEYS = {"max_turns", "timeout_seconds", "allowed_tools", "tags", "runs", "model", "append_system_prompt"}
GRADER_TYPES = {"regex", "tool_used", "tool_order", "file_exists", "llm", "baseline"}


@pytest.mark.parametrize("case", EVAL_CASES, ids=lambda p: p.name)
def test_eval_case_parses_and_has_graders(case: Path):
    meta, body = split_front_matter(case / "prompt.md")
    assert set(meta) <= PROMPT_KEYS, f"{case.name}: unknown prompt keys {set(meta) - PROMPT_KEYS}"
    assert body.strip(), f"{case.name}: empty prompt"
    graders = sorted((case / "graders").glob("*.md"))
    assert graders, f"{case.name}: no grader"
    for g in graders:
        gmeta, gbody = split_front_matter(g)
        assert gmeta.get("type") in GRADER_TYPES, f"{rel(g)}: type {gmeta.get('type')!r}"
        if gmeta["type"] == "llm":
            assert "PASS" in gbody and "FAIL" in gbody, f"{rel(g)}: criteria need PASS and FAIL conditions"
        if gmeta["type"] == "tool_used":
            assert gmeta.get("tool") and re.compile(gmeta.get("input_match", ""))
            lo, hi = gmeta.get("min", 0), gmeta.get("max", float("inf"))
            assert 0 <= lo <= hi, f"{rel(g)}: min {lo} > max {hi}"


def routing_grader(case: Path) -> dict:
    for g in (case / "graders").glob("*.md"):
        meta, _ = split_front_matter(g)
        if meta.get("type") == "tool_used" and meta.get("tool") == "Skill" \
                and re.search(meta["input_match"], "grpo-rlvr:grpo-rlvr-training"):
            return meta
    raise AssertionError(f"{case.name}: no tool_used grader on the grpo-rlvr-training skill")


def test_eval_suite_covers_routing_both_ways():
    must = {"route-reward-design-math", "route-length-explosion", "route-reward-hacking", "route-moe-instability"}
    must_not = {"not-preference-pairs-dpo", "not-demonstrations-sft", "not-vision-language-rl",
                "not-subjective-essay-quality"}
    names = {c.name for c in EVAL_CASES}
    assert must | must_not <= names, f"missing cases: {(must | must_not) - names}"
    assert sum(n.startswith("route-") for n in names) >= 10 and sum(n.startswith("not-") for n in names) >= 10
    for case in EVAL_CASES:
        g = routing_grader(case)
        if case.name.startswith("route-"):
            assert g.get("min", 0) >= 1, f"{case.name} must require the skill"
        else:
            assert g.get("max") == 0, f"{case.name} must forbid the skill"


# --- the backend wrapper ----------------------------------------------------------------------------------

def test_wrapper_is_valid_shell():
    subprocess.run(["bash", "-n", str(WRAPPER)], check=True)
    assert os.access(WRAPPER, os.X_OK), "bin/grpo-rlvr-plugin must be executable"
    if shutil.which("shellcheck"):
        run = subprocess.run(["shellcheck", str(WRAPPER), str(REPO / "scripts" / "validate-plugin.sh")],
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout


def fake_backend(folder: Path, name: str = "grpo-rlvr") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / name
    exe.write_text('#!/bin/sh\necho "fake backend: $*"\nexit 7\n')
    exe.chmod(0o755)
    return exe


def run_wrapper(args: list[str], tmp_path: Path, **env) -> subprocess.CompletedProcess:
    base = {"HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin", "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")}
    return subprocess.run([str(WRAPPER), *args], env={**base, **env}, capture_output=True, text=True, timeout=60)


@pytest.fixture
def bare_path():
    if shutil.which("grpo-rlvr", path="/usr/bin:/bin"):
        pytest.skip("a system-wide grpo-rlvr is installed; cannot test the no-backend path")


def test_wrapper_prefers_grpo_rlvr_bin(tmp_path):
    exe = fake_backend(tmp_path / "pinned")
    run = run_wrapper(["gate", "DIR", "--json"], tmp_path, GRPO_RLVR_BIN=str(exe))
    assert run.returncode == 7 and run.stdout.strip() == "fake backend: gate DIR --json"


def test_wrapper_uses_grpo_rlvr_on_path(tmp_path, bare_path):
    fake_backend(tmp_path / "bin")
    run = run_wrapper(["diagnose", "RUN"], tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert run.returncode == 7 and run.stdout.strip() == "fake backend: diagnose RUN"
    where = run_wrapper(["--plugin-where"], tmp_path, PATH=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert where.returncode == 0 and "(on PATH)" in where.stdout


def test_wrapper_says_where_it_would_install(tmp_path, bare_path):
    run = run_wrapper(["--plugin-where"], tmp_path)
    assert run.returncode == 1
    assert f"into {tmp_path / 'data' / 'venv'}" in run.stdout
    assert not (tmp_path / "data").exists(), "--plugin-where must not install anything"


def test_wrapper_refuses_to_install_when_told_not_to(tmp_path, bare_path):
    run = run_wrapper(["validate", "brief.yaml"], tmp_path, GRPO_RLVR_PLUGIN_NO_INSTALL="1")
    assert run.returncode == 1
    assert "not installed" in run.stderr and "pip install" in run.stderr
    assert not (tmp_path / "data" / "venv").exists()


def test_wrapper_rejects_a_bad_grpo_rlvr_bin(tmp_path):
    run = run_wrapper(["--version"], tmp_path, GRPO_RLVR_BIN=str(tmp_path / "nope"))
    assert run.returncode == 1 and "not an executable" in run.stderr
