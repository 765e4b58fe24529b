"""What a git command can write in the work tree, judged by what git tracks.

A branch switch, merge, rebase, pull, cherry-pick, revert, ``stash pop`` or ``reset --hard`` writes the files that
differ between the commits it moves between, and only those: a file that no such commit tracks (an ignored
``out/`` with an inspection, an untracked run folder) is left alone. Git *does* overwrite an ignored file that the
incoming commit tracks, silently, so the hook asks git: is any protected path in the tree tracked in the index,
and does any commit between HEAD and each revision the command names touch one (:func:`tracked_or_incoming`)?
A revision this repository cannot resolve (a branch only the fetch will bring) is judged by every commit the
repository holds. What a ``pull`` fetches in the same command is not known before it runs: docs/threat-model.md
names it.

Subcommands that name their paths (``restore``, ``rm``, ``mv``, ``checkout -- PATH``) are judged by those
paths; ``clean``, ``stash -u``, ``bisect``, ``read-tree``, ``worktree``, ``submodule``… by the whole tree as
before (denied where it holds an inspection); ``apply`` and ``am`` by the paths their patch names.
"""

from __future__ import annotations

import os
import re

from grpo_guard.programs import Args, Writes
from grpo_guard.protected import protected_below

TIMEOUT_S = 2.0   # each git query; past it the command is denied
# Subcommands judged by the revisions they bring into the work tree.
BY_REVISIONS = {"checkout", "switch", "merge", "rebase", "pull", "cherry-pick", "revert", "stash", "reset"}
# Subcommands that write the whole tree in ways the hook does not follow.
WHOLE_TREE = {"clean", "read-tree", "checkout-index", "bisect", "worktree", "filter-branch", "sparse-checkout",
              "submodule", "filter-repo"}
# Their verbs that only report.
REPORTS = {"worktree": {"list", "lock", "unlock", "prune"}, "submodule": {"status", "summary", "foreach"},
           "bisect": {"log", "visualize", "view", "terms"}, "sparse-checkout": {"list"}}
# -c keys that make git run a program (the hook does not follow it). Git folds the case of ASCII letters only (and
# re.ASCII makes this a compile of under a millisecond, against tens with Unicode case folding).
RUNS = re.compile(r"^(?:core\.(?:fsmonitor|hookspath|pager|editor|sshcommand|askpass|gitproxy)|alias\.|filter\.|"
                  r"diff\.\w*\.?(?:external|textconv|command)|merge\.\w+\.driver|credential\.|sequence\.editor|"
                  r"gpg\.|pager\.|interactive\.difffilter|uploadpack\.|protocol\.ext)", re.IGNORECASE | re.ASCII)
_GLOBAL_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
_SUB_VALUED = {"-m", "--message", "-F", "--file", "-s", "--strategy", "-X", "--strategy-option", "--onto",
               "-b", "-B", "-c", "-C", "--orphan", "--source", "-S", "--gpg-sign", "--conflict", "--exec", "-x",
               "--pathspec-from-file", "--into-name", "--cleanup", "--depth", "--shallow-since", "--upstream",
               "--recurse-submodules", "-o", "--output", "--output-directory", "--format", "--prefix",
               "--reference", "--separate-git-dir", "--template", "--origin", "--branch", "-j", "--jobs"}


class GitVerdict:
    """Why a git command is denied (``reason``), or what it writes that the caller judges as paths (``writes``).
    ``runs`` says git would run a program the hook does not follow (``-c core.fsmonitor=…``)."""

    __slots__ = ("reason", "writes", "runs")

    def __init__(self, reason: str | None = None, writes: Writes | None = None, runs: str | None = None):
        self.reason, self.writes, self.runs = reason, writes or Writes(), runs


def repository_top(folder: str) -> str | None:
    """The top of the git work tree that holds ``folder`` (None outside one)."""
    here = os.path.realpath(folder)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _git(top: str, *args: str) -> tuple[int, str]:
    """(exit status, stdout) of a read-only git query in ``top``; 127 when git is not installed."""
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    try:
        done = subprocess.run(["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-C", top,
                               *args], capture_output=True, text=True, timeout=TIMEOUT_S, env=env,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return 127, ""
    except (OSError, ValueError, subprocess.SubprocessError) as e:
        return 1, f"git did not answer: {e}"
    return done.returncode, done.stdout


def tracked_or_incoming(top: str, paths: list[str], revisions: list[str], picks: list[str] = ()) -> str | None:
    """Why git may write one of ``paths`` (relative to ``top``) when it moves the work tree to ``revisions``
    (and applies the commits ``picks``), or None when no commit involved touches them."""
    code, out = _git(top, "ls-files", "-z", "--", *paths)
    if code == 127:
        return "git is not installed here, so the hook cannot ask which files it tracks"
    if code != 0:
        return f"git cannot list what it tracks here ({out.strip()[:120] or 'exit ' + str(code)})"
    if out:
        return f"git tracks {out.split(chr(0))[0]}"
    unresolved = False
    for rev, spec in [(r, [f"HEAD...{r}"]) for r in revisions] + [(p, [f"{p}^!"]) for p in picks]:
        if "\0" in rev or rev.startswith("-"):   # known only at run time, or not a revision: every commit counts
            unresolved = True
            continue
        code, out = _git(top, "rev-list", "-n1", *spec, "--", *paths)
        if code != 0:
            unresolved = True
        elif out.strip():
            return f"commit {out.strip()[:12]} (between HEAD and {rev}) tracks it"
    if unresolved:
        code, out = _git(top, "rev-list", "-n1", "--all", "--", *paths)
        if code != 0 or out.strip():
            return f"commit {out.strip()[:12]} in this repository tracks it" if code == 0 else \
                "git cannot say which commits touch it"
    return None


def _revisions(sub: str, a: Args) -> tuple[list[str], list[str]] | None:
    """(revisions the work tree moves to, commits applied one by one), or None when it writes no file."""
    ops = a.operands
    if sub in ("checkout", "switch"):
        start = [v for v in (a.value("-b", "-B", "-c", "-C", "--orphan"),) if v is not None]
        if start:
            return (ops[:1], []) if ops else None   # a new branch where HEAD is writes nothing
        target = ops[:1] or ([a.value("--detach")] if a.value("--detach") else [])
        return ([{"-": "@{-1}"}.get(t, t) for t in target], []) if target else ([], [])
    if sub == "stash":
        verb = ops[0] if ops else "push"
        if verb in ("list", "show", "drop", "clear", "create", "store"):
            return None
        if verb in ("pop", "apply", "branch"):
            ref = ops[2] if verb == "branch" and len(ops) > 2 else (ops[1] if verb != "branch" and len(ops) > 1
                                                                     else "stash@{0}")
            return [ref], []
        return [], []   # push/save: tracked files only
    if sub == "reset":
        if not a.has("", "--hard", "--merge", "--keep"):
            return None
        return ops[:1], []
    if sub in ("cherry-pick", "revert"):
        return [], [o for o in ops if not o.startswith("-")]
    if sub == "rebase":
        if a.has("", "--abort", "--quit"):
            return ["ORIG_HEAD"], []
        return ops + [v for v in [a.value("--onto")] if v] or ["@{u}"], []
    if sub == "merge":
        if a.has("", "--abort", "--quit", "--continue"):
            return [], []
        return ops or ["@{u}"], []
    if sub == "pull":
        return ([f"{ops[0]}/{ops[1]}"] if len(ops) > 1 else ["@{u}"]), []
    return [], []


def _patch_paths(files: list[str], cwd: str) -> list[str] | None:
    """The paths the diffs in ``files`` name (``--- a/x``, ``+++ b/x``, ``rename to``), or None when one cannot
    be read."""
    found: list[str] = []
    for name in files:
        try:
            with open(os.path.join(cwd, os.path.expanduser(name)), encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
        except (OSError, ValueError):
            return None
        for m in re.finditer(r"^(?:\+\+\+|---) (\S+)|^diff --git (\S+) (\S+)|^(?:rename|copy) (?:from|to) (\S+)",
                             text, re.M):
            for p in m.groups():
                if p and p != "/dev/null":
                    found += [p, re.sub(r"^[ab]/", "", p)]
    return list(dict.fromkeys(found))


def judge_git(words: list[str], cwd: str) -> GitVerdict:
    """What ``git …`` (its words, unwrapped) writes in the work tree under ``cwd``, or why it is denied."""
    args, k = words[1:], 0
    while k < len(args) and args[k].startswith("-"):   # git -C DIR / -c key=value before the subcommand
        flag = args[k].split("=", 1)[0]
        value = args[k].split("=", 1)[1] if "=" in args[k] else (args[k + 1] if k + 1 < len(args) else "")
        if flag == "-c" and RUNS.match(value):
            return GitVerdict(runs=f"git -c {value.split('=', 1)[0]} runs a program")
        if flag in ("--git-dir", "--work-tree", "--exec-path"):
            return GitVerdict(runs=f"git {flag} points git at a tree the hook does not look at")
        if flag == "-C":
            cwd = os.path.join(cwd, value)
        k += 1 if "=" in args[k] or flag not in _GLOBAL_VALUED else 2
    sub, rest = (args[k], args[k + 1:]) if k < len(args) else ("", [])
    a = Args(rest, _SUB_VALUED)
    paths = rest[rest.index("--") + 1:] if "--" in rest else []
    return _judge_sub(sub, a, paths, cwd)


def _judge_sub(sub: str, a: Args, paths: list[str], cwd: str) -> GitVerdict:
    files = [v for n in ("-o", "--output", "--output-directory") for v in a.values.get(n, [])]
    if sub in ("clone", "init") and a.operands:
        return GitVerdict(writes=Writes(files=files + a.operands[-1:], into=a.operands[-1:]))
    if sub in ("restore", "rm", "mv") or (sub == "checkout" and paths):
        named = paths or a.operands
        if named and "." not in named and ":/" not in named:
            return GitVerdict(writes=Writes(files=files + named, removed=named if sub in ("rm", "mv") else ()))
    if sub in ("apply", "am"):
        named = _patch_paths(a.operands, cwd) if a.operands and not a.has("", "--check", "--stat", "--numstat",
                                                                          "--summary") else []
        if named is not None:
            return GitVerdict(writes=Writes(files=files + named))
        return _whole_tree(sub, cwd, files)
    if sub == "worktree" and a.operands[:1] == ["add"] and len(a.operands) > 1:
        return GitVerdict(writes=Writes(files=files + a.operands[1:2], into=a.operands[1:2]))
    reports = sub in REPORTS and a.operands[:1] and a.operands[0] in REPORTS[sub]
    if sub in WHOLE_TREE and not a.has("n", "--dry-run") and not reports:
        return _whole_tree(sub, cwd, files)
    if sub == "stash" and a.has("ua", "--include-untracked", "--all"):
        return _whole_tree("stash -u", cwd, files)
    if sub not in BY_REVISIONS and sub not in ("restore", "checkout"):
        return GitVerdict(writes=Writes(files=files))
    moves = _revisions(sub, a) if sub in BY_REVISIONS else ([a.value("--source")] if a.value("--source") else [], [])
    if moves is None:
        return GitVerdict(writes=Writes(files=files))
    return _by_revisions(sub, cwd, moves, files)


def _whole_tree(sub: str, cwd: str, files: list[str]) -> GitVerdict:
    top = repository_top(cwd) or os.path.realpath(cwd)
    found = protected_below(top, None, review_only=True)
    if found:
        return GitVerdict(reason=f"{found[0]} (`git {sub}` writes files anywhere in {top}, which holds an inspection "
                                 "or a run's files and records)", writes=Writes(files=files))
    return GitVerdict(writes=Writes(files=files))


def _by_revisions(sub: str, cwd: str, moves: tuple[list[str], list[str]], files: list[str]) -> GitVerdict:
    top = repository_top(cwd)
    if top is None:   # outside a repository git writes nothing
        return GitVerdict(writes=Writes(files=files))
    found = protected_below(top, None, review_only=True)
    if not found:
        return GitVerdict(writes=Writes(files=files))
    relative = [os.path.relpath(p, top) for p in found]
    why = tracked_or_incoming(top, relative, *moves)
    if why:
        return GitVerdict(reason=f"{found[0]} (`git {sub}` writes what git tracks, and {why}: files under "
                                 f"inspection/ and a run's records are written only by grpo-rlvr)",
                          writes=Writes(files=files))
    return GitVerdict(writes=Writes(files=files))
