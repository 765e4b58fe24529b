"""The hook's reading of a command when tree-sitter-bash is not importable: a small part of bash's grammar, read
exactly, and nothing else.

Read: words made of plain characters, single-quoted text, double-quoted text without ``$``, backquotes or
backslashes, globs and braces inside words, ``~``, comments, the separators ``;`` ``&&`` ``||`` ``|`` ``&`` and a
newline, and the redirections ``<`` ``>`` ``>>`` ``>|`` ``&>`` ``&>>`` ``<>`` and ``N>&M``. That is every command the
plugin's docs give the agent (``grpo-rlvr-plugin gate DIR --json``, ``… > RUN/train.log 2>&1 &``), so the gate
never waits for a parser. Anything else (``$``, backquotes, backslashes, parentheses, here-documents, ``if``,
``for``…) makes the whole line unreadable: the decision then denies it wherever something protected is near.
The test suite checks that on every command this reader accepts, it reads what tree-sitter-bash reads.
"""

from __future__ import annotations

import re

from grpo_guard.paths import cd_into
from grpo_guard.shell_words import ASSIGNMENT, Cmd, Reading, program, unwrap

_TOKEN = re.compile(r"""
    (?P<space>[ \t]+)
  | (?P<newline>\n)
  | (?P<comment>\#[^\n]*)
  | (?P<dup>[0-9]*[<>]&(?:[0-9]+|-))
  | (?P<redirect>&>>|&>|[0-9]*(?:>>|>\||<>|>|<))
  | (?P<op>&&|\|\||;|\||&)
  | (?P<word>(?:[A-Za-z0-9_./:=,+@%^~*?\[\]{}-]|'[^']*'|"[^"$`\\]*")+)
""", re.VERBOSE)
RESERVED = {"if", "then", "else", "elif", "fi", "for", "in", "while", "until", "do", "done", "case", "esac",
            "select", "function", "{", "}", "[[", "]]", "!", "coproc"}
HIDDEN = re.compile(r"[$`\\]")   # what can spell any name at run time


class NotInSubset(ValueError):
    """The command uses a part of bash this reader does not read."""


def _unquote(word: str) -> str:
    return re.sub(r"""'([^']*)'|"([^"]*)\"""", lambda m: m.group(1) if m.group(1) is not None else m.group(2), word)


def _tokens(command: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(command):
        m = _TOKEN.match(command, pos)
        if m is None:
            raise NotInSubset(f"{command[pos:pos + 20]!r}")
        kind = m.lastgroup
        if kind == "comment" and out and out[-1][0] not in ("space", "newline", "op"):
            raise NotInSubset("'#' inside a word")
        out.append((kind, m.group()))
        pos = m.end()
    return [t for t in out if t[0] not in ("space", "comment")]


def _commands(tokens: list[tuple[str, str]]) -> list[Cmd]:
    cmds: list[Cmd] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    piped = None
    pending = None   # a redirection operator waiting for its target
    for kind, text in tokens + [("newline", "\n")]:
        if pending is not None:
            if kind != "word":
                raise NotInSubset(f"a redirection without a target ({pending})")
            redirects.append((pending, _unquote(text)))
            pending = None
        elif kind == "word":
            if not words and text in RESERVED:
                raise NotInSubset(f"the shell word {text!r}")
            words.append(_unquote(text))
        elif kind == "redirect":
            pending = re.sub(r"^[0-9]+", "", text)
        elif kind == "dup":
            redirects.append(("dup", text.split("&", 1)[1]))
        else:   # a separator ends the command
            if words or redirects:
                cmd = Cmd(words or ["{…}"], redirects, piped=piped)   # `&> f` alone: a redirection of nothing
                cmds.append(cmd)
                piped = cmd if text == "|" else None
            elif text != "\n":
                raise NotInSubset(f"{text!r} with no command before it")
            words, redirects = [], []
    return cmds


def read_subset(command: str, cwd: str | list[str] | None = None) -> Reading:
    """Read ``command`` when it is in the subset; else a Reading that says it could not (the line's words are
    kept as one command, for what they name)."""
    reading = Reading(cwd)
    try:
        reading.commands = _commands(_tokens(command))
    except NotInSubset as e:
        reading.unreadable.append(f"without its parser the hook reads only plain commands, and this one has {e}")
        if HIDDEN.search(command):
            reading.opaque.append("quoting, variables or substitutions the hook cannot read without its parser")
        words = [w for w in re.split(r"[\s;&|<>()`$\"'\\{}]+", command) if w]
        reading.commands = [Cmd(["{unread}", *words])]   # no program: what the words name is all that counts
        return reading
    for cmd in reading.commands:
        cmd.cwds = tuple(reading.cwds)
        if all(ASSIGNMENT.match(w) for w in cmd.words) and not cmd.redirects:   # D=x: a variable, not a command
            reading.assigned.update(w.split("=", 1) for w in cmd.words)
        words = unwrap(cmd.words)
        if program(words) in ("cd", "pushd"):
            folder, why = cd_into(words[1:], reading.cwds[-1] if reading.cwds else None)
            reading.cwds += [folder] if folder else []
            reading.unreadable += [why] if why else []
    reading.commands = [c for c in reading.commands if not (all(ASSIGNMENT.match(w) for w in c.words)
                                                            and not c.redirects)]
    for cmd in reading.commands:
        for word in cmd.words[1:]:   # a quoted argument with spaces may be a script another program runs
            if any(c.isspace() for c in word.strip()):
                inner = read_subset(word, list(cmd.cwds) or cwd)
                reading.nested += inner.commands + inner.nested
    return reading
