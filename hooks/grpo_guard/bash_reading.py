"""A shell command read as bash reads it, with tree-sitter-bash (the grammar editors and code hosts use).

:func:`read_command` gives a :class:`~grpo_guard.shell_words.Reading`: every simple command bash would run, with
its words as bash passes them (quotes removed, ``$'...'`` and ``$"..."`` decoded, backslashes and
backslash-newlines applied where bash applies them, variables the line sets followed, unquoted expansions split)
and its redirections as ``(op, target)`` pairs (``2>&1`` duplicates a descriptor; it writes no file). Comments and
here-documents end where bash ends them. A loop's body is read once for each value. Text bash computes from
literals alone (``$(printf '\\151…')``, ``echo``) is computed; ``eval``, ``sh -c`` and ``source`` of known text
are read as commands. What exists only at run time is said, not guessed: a value set at run time or a part the
grammar does not parse goes to ``unreadable``; code whose text is made at run time (``eval "$(curl …)"``,
``… | sh``, ``source <(…)``) to ``opaque``.
"""

from __future__ import annotations

import os
import re
import sys

from grpo_guard.paths import cd_into
from grpo_guard.shell_words import (
    SHELLS,
    SPLIT,
    STDIN_PATHS,
    SUBST,
    Cmd,
    Reading,
    ansi_c,
    folded_output,
    program,
    unescape,
    unwrap,
)

MAX_DEPTH = 8           # nested substitutions and scripts read, at most
MAX_LOOP_READS = 64     # loop bodies read (one per value), at most, in one command line
# Tools whose output is their own shell set-up (eval "$(ssh-agent -s)", source <(kubectl completion bash)).
INIT_GENERATORS = {"ssh-agent", "pyenv", "pyenv-virtualenv", "rbenv", "nodenv", "goenv", "jenv", "conda", "mamba",
                   "micromamba", "direnv", "starship", "zoxide", "dircolors", "keychain", "brew", "fnm", "mise",
                   "rtx", "opam", "rustup", "kubectl", "helm", "gh", "uv", "poetry", "pipx", "npm", "pnpm",
                   "register-python-argcomplete", "thefuck", "atuin", "fzf", "just", "docker", "minikube", "kind",
                   "gcloud", "terraform", "oh-my-posh", "fasd", "nvm", "sdkman", "volta", "pixi", "hatch", "rye"}
_CONTINUATION = re.compile(r"(?:\\\r?\n)+")
_PARSER = None


class ParserUnavailable(RuntimeError):
    """tree-sitter or its bash grammar is not importable in this interpreter."""


def _package_dir(name: str) -> str | None:
    for entry in sys.path:
        folder = os.path.join(entry or ".", name)
        if os.path.isdir(folder):
            return folder
    return None


def _load_parser():
    """The compiled modules of tree-sitter and its bash grammar, loaded without their packages' ``__init__``
    (which import ``typing`` and ``importlib.resources``: a third of the hook's start-up)."""
    import types

    stubs = []
    try:
        for name in ("tree_sitter", "tree_sitter_bash"):
            if name not in sys.modules:
                folder = _package_dir(name)
                if folder is None:
                    raise ImportError(f"No module named {name!r}")
                stub = types.ModuleType(name)
                stub.__path__ = [folder]
                sys.modules[name] = stub
                stubs.append(name)
        from tree_sitter._binding import Language, Parser
        from tree_sitter_bash._binding import language

        return Parser(Language(language()))
    except (ImportError, ValueError, OSError) as e:
        raise ParserUnavailable(str(e)) from None
    finally:
        for name in stubs:
            sys.modules.pop(name, None)


def parser():
    """The bash parser (built once per process). Raises ParserUnavailable."""
    global _PARSER
    if _PARSER is None:
        _PARSER = _load_parser()
    return _PARSER


_WORDS = {"word", "string", "raw_string", "concatenation", "simple_expansion", "expansion", "number",
          "ansi_c_string", "translated_string", "variable_name", "test_operator", "regex", "extglob_pattern",
          "command_substitution", "process_substitution", "arithmetic_expansion", "special_variable_name",
          "brace_expression"}
_SKIPPED = {"comment", "heredoc_body", "heredoc_start", "heredoc_end", "file_descriptor"}


class _Reader:
    def __init__(self, source: bytes, reading: Reading, depth: int):
        self.src, self.out, self.depth = source, reading, depth
        self.pipe_prev: Cmd | None = None
        self.loop_reads = 0

    def text(self, node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def gap(self, start: int, end: int) -> str:
        return self.src[start:end].decode("utf-8", errors="replace")

    def emit(self, cmd: Cmd) -> None:
        cmd.cwds = tuple(self.out.cwds)
        self.out.commands.append(cmd)

    def unreadable(self, why: str) -> None:
        self.out.unreadable.append(why)

    # --- statements -------------------------------------------------------------------------------------------

    def statement(self, node) -> None:
        handler = _HANDLERS.get(node.type)
        if handler is not None:
            handler(self, node)
            return
        for child in node.named_children:
            if child.type in _SKIPPED:
                continue
            if child.type in _WORDS:
                self.word(child)   # for what its substitutions run
            else:
                self.statement(child)

    def error(self, node) -> None:
        self.unreadable(f"a part bash's grammar does not parse ({self.text(node)[:40]!r})")
        words = [self.word(c) for c in node.named_children if c.type in _WORDS]
        if words:
            self.emit(Cmd(words))
        for child in node.named_children:
            if child.type not in _WORDS and child.type not in _SKIPPED:
                self.statement(child)

    def pipeline(self, node) -> None:
        self.pipe_through(node.named_children, None)

    def pipe_through(self, nodes, prev: Cmd | None, keep: bool = False) -> None:
        """Each command reads the output of the one before it (``prev`` for the first); with ``keep``, the
        command read next reads the last one's."""
        for child in nodes:
            self.pipe_prev = prev
            start = len(self.out.commands)
            self.statement(child)
            simple = child.type in ("command", "redirected_statement") and len(self.out.commands) > start
            prev = self.out.commands[-1] if simple else Cmd(["{…}"])   # a compound's output folds to nothing
        self.pipe_prev = prev if keep else None

    def assignment(self, node) -> None:
        self.assign(node)

    def assignments(self, node) -> None:
        for child in node.named_children:
            if child.type == "variable_assignment":
                self.assign(child)

    def declaration(self, node) -> None:
        """``export``/``declare``/``local``/``readonly``/``typeset``: a command whose arguments may assign."""
        words = [self.text(node.children[0])] if node.children else []
        for child in node.named_children:
            if child.type == "variable_assignment":
                value = self.assign(child)
                words.append(f"{self.name_of(child)}={value}")
            elif child.type in _WORDS:
                words.extend(self.fields(self.word(child)))
        self.emit(Cmd(words))

    def test(self, node) -> None:
        """``[ -d build ]``, ``[[ … ]]``: a command of its own, its words in order."""
        words: list[str] = []

        def walk(n) -> None:
            for c in n.children:
                if c.type in _WORDS:
                    words.extend(self.fields(self.word(c)))
                elif not c.is_named:
                    words.append(self.text(c))
                else:
                    walk(c)
        walk(node)
        self.emit(Cmd(words))

    def for_loop(self, node) -> None:
        """Each value of the loop, one at a time: the body is read once for each (``for d in a inspection``)."""
        name_node = node.child_by_field_name("variable")
        name = self.text(name_node) if name_node is not None else ""
        values = [g for v in node.children_by_field_name("value") for f in self.fields(self.word(v))
                  for g in (self.glob(f) if v.type == "word" else [f])]
        body = node.child_by_field_name("body")
        if not values and node.children_by_field_name("value") == []:
            values = [SUBST]   # `for x; do`: the positional parameters
        for value in values:
            self.loop_reads += 1
            if self.loop_reads > MAX_LOOP_READS:
                self.unreadable(f"a loop over more than {MAX_LOOP_READS} values")
                self.out.assigned[name] = SUBST
                if body is not None:
                    self.statement(body)
                return
            self.out.assigned[name] = value
            if body is not None:
                self.statement(body)

    def glob(self, pattern: str) -> list[str]:
        """What an unquoted glob in a loop's values expands to now (bash keeps the pattern when nothing matches)."""
        if not re.search(r"[*?\[]", pattern) or SUBST in pattern:
            return [pattern]
        import glob

        try:
            found = sorted(glob.glob(pattern, root_dir=self.out.cwds[-1] if self.out.cwds else None))
        except (OSError, ValueError, RecursionError):
            found = []
        return found[:MAX_LOOP_READS + 1] or [pattern]

    def redirected(self, node) -> None:
        body = node.child_by_field_name("body")
        redirects, stdin, trailing = [], None, []
        first = None
        for child in node.children:
            if child.type.endswith("_redirect"):
                first = child if first is None else first
                r, text = self.redirect(child, trailing)
                redirects += r
                stdin = text if text is not None else stdin
        if body is not None and body.type == "command":
            # what the grammar leaves between the command and its first redirection (`python3 - <<EOF`)
            extra = self.gap(body.end_byte, first.start_byte).split() if first is not None else []
            self.command(body, redirects, stdin, extra)
        elif body is not None:
            self.redirect_last(body, redirects, stdin)
        elif redirects:
            self.emit(Cmd(["{…}"], redirects, stdin))
        self.rest_of_line(trailing)

    def redirect_last(self, node, redirects, stdin) -> None:
        """``a && b > f``, ``a | b 2>&1``: the grammar gives the redirection to the list or the pipeline; bash
        gives it to the last command. A compound statement (``{ …; } > f``, a loop) keeps it."""
        if node.type == "command":
            self.command(node, redirects, stdin)
        elif node.type in ("pipeline", "list") and node.named_children:
            if node.type == "pipeline":
                self.pipe_through(node.named_children[:-1], None, keep=True)
            else:
                for child in node.named_children[:-1]:
                    self.statement(child)
            self.redirect_last(node.named_children[-1], redirects, stdin)
        elif node.type in ("declaration_command", "unset_command") and redirects:
            self.statement(node)   # `export X=1 2>&1`: a command of its own
            self.out.commands[-1].redirects += redirects
        else:
            self.statement(node)
            if redirects:
                self.emit(Cmd(["{…}"], redirects, stdin))   # the redirections of a compound statement

    def rest_of_line(self, nodes) -> None:
        """What follows a here-document's start on its line (``cat <<EOF | sh``, ``<<EOF && rm …``), which the
        grammar puts inside the here-document: a pipe from the command just read, or more commands."""
        before = self.out.commands[-1] if self.out.commands else None
        for node in nodes:
            if node.type == "pipeline" and self.text(node).lstrip().startswith("|"):
                self.pipe_through(node.named_children, before)
            elif node.type == "command" and self.text(node) and before is not None and self._piped_after(node):
                self.pipe_prev = before
                self.statement(node)
            else:
                self.statement(node)

    def _piped_after(self, node) -> bool:
        prev = node.prev_sibling
        return prev is not None and not prev.is_named and self.text(prev) == "|"

    # --- a simple command -------------------------------------------------------------------------------------

    def command(self, node, redirects=None, stdin=None, extra=()) -> None:
        piped, self.pipe_prev = self.pipe_prev, None
        redirects = list(redirects or [])
        trailing: list = []
        groups: list[list] = []
        assigns: list[str] = []
        last_end = None
        children = list(node.children)
        for i, child in enumerate(children):
            kind = child.type
            if kind == "variable_assignment":
                assigns.append(f"{self.name_of(child)}={self.value_of(child)}")   # for this command only
            elif kind.endswith("_redirect"):
                r, text = self.redirect(child, trailing)
                redirects += r
                stdin = text if text is not None else stdin
            elif kind == "$" and i + 1 < len(children) and children[i + 1].type == "string":
                last_end = child.end_byte if last_end is None else last_end   # $"..." (locale): the string is the text
            elif child.is_named and kind != "comment":
                node_ = child.named_children[0] if kind == "command_name" and child.named_children else child
                joined = last_end is not None and groups and (
                    child.start_byte == last_end or _CONTINUATION.fullmatch(self.gap(last_end, child.start_byte)))
                if joined:
                    groups[-1].append(node_)
                else:
                    groups.append([node_])
                last_end = child.end_byte
        words = [f for g in groups for f in self.fields("".join(self.word(n) for n in g))] + list(extra)
        cmd = Cmd(assigns + words, redirects, stdin, piped)
        self.emit(cmd)
        self.after(cmd, node, words)
        self.rest_of_line(trailing)

    def fields(self, word: str) -> list[str]:
        """The words bash makes of one: split where an unquoted expansion held whitespace."""
        if SPLIT not in word:
            return [word]
        return [f for f in word.split(SPLIT) if f]

    def after(self, cmd: Cmd, node, words: list[str]) -> None:
        """What a command does to the reading of the rest: ``cd``, and code it runs from text (``eval``,
        ``sh -c``, ``source``, a shell or interpreter reading a pipe)."""
        words = unwrap(words)
        if not words:
            return
        name = program(words)
        if name in ("cd", "pushd"):
            self.cd(words[1:])
        elif name == "eval":
            self.run_text(" ".join(words[1:]), "eval", node)
        elif name in ("source", "."):
            self.source(node, words)
        elif name in SHELLS:
            self.shell(cmd, node, words)

    def cd(self, args: list[str]) -> None:
        folder, why = cd_into(args, self.out.cwds[-1] if self.out.cwds else None)
        if folder is None:
            self.unreadable(why)
        else:
            self.out.cwds.append(folder)

    def run_text(self, text: str, how: str, node=None) -> None:
        if SUBST in text and not (node is not None and self.init_only(node)):
            self.out.opaque.append(f"{how} of text made at run time")
        elif SUBST not in text and text.strip():
            self.nested(text, into_commands=True)

    def init_only(self, node) -> bool:
        """Every substitution in ``node`` is a tool printing its own shell set-up (``ssh-agent -s``, ``pyenv
        init -``, ``kubectl completion bash``): trusted by its name, as a reader is."""
        subs, stack = [], [node]
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution"):
                subs.append(n)
            else:
                stack.extend(n.named_children)
        for sub in subs:
            body = [c for c in sub.named_children if c.type != "comment"]
            if len(body) != 1 or body[0].type != "command":
                return False
            name = body[0].child_by_field_name("name")
            if name is None or self.text(name).rsplit("/", 1)[-1] not in INIT_GENERATORS:
                return False
        return bool(subs)

    def source(self, node, words: list[str]) -> None:
        args = [c for c in node.named_children if c.type not in ("command_name", "variable_assignment")
                and not c.type.endswith("_redirect")]
        if args and args[0].type == "process_substitution":
            self.run_text(self.fold(args[0]) or SUBST, "source <(…)", node)
        elif len(words) > 1 and SUBST in words[1]:
            self.out.opaque.append("source of a file chosen at run time")

    def shell(self, cmd: Cmd, node, words: list[str]) -> None:
        """``sh -c TEXT``, ``bash <(…)``, ``… | sh``, ``sh <<EOF``: the code it runs, when the line holds it."""
        args = words[1:]
        skip = False
        for k, a in enumerate(args):
            if skip:
                skip = False
                continue
            if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
                skip = True
                continue
            if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a) and not a.startswith("--"):
                self.run_text(args[k + 1] if k + 1 < len(args) else "", f"{words[0]} -c")
                return
            if a in STDIN_PATHS:
                break   # `bash /dev/stdin <<EOF`: the here-document is the script
            if not a.startswith(("-", "+")):
                kids = [c for c in node.named_children if c.type == "process_substitution"]
                if SUBST in a:
                    self.run_text(self.fold(kids[0]) or SUBST if kids else SUBST, f"{words[0]} <(…)")
                return   # a script file: the agent's own program, judged as one
        if cmd.stdin is not None:
            self.run_text(cmd.stdin, f"{words[0]} <<here-document")
        elif cmd.piped is not None:
            self.run_text(folded_output(cmd.piped) or SUBST, f"… | {words[0]}")

    # --- redirections -----------------------------------------------------------------------------------------

    def redirect(self, node, trailing: list | None = None) -> tuple[list[tuple[str, str]], str | None]:
        """(its ``(op, target)`` pairs, the text it feeds to stdin or None). Statements the grammar nests in a
        here-document's redirection go to ``trailing``."""
        if node.type == "heredoc_redirect":
            return self.heredoc(node, trailing if trailing is not None else [])
        if node.type == "herestring_redirect":
            value = "".join(self.word(c) for c in node.named_children if c.type in _WORDS)
            return [("<<<", "")], value.replace(SPLIT, " ")
        op = "".join(self.text(c) for c in node.children if not c.is_named).strip() or ">"
        parts = []
        for c in node.named_children:
            if c.type == "ERROR" and op == "<" and self.text(c) == ">" and not parts:
                op = "<>"   # the grammar does not know `<>` (read and write): bash opens the file for both
            elif c.type == "ERROR":
                self.unreadable(f"a redirection bash's grammar does not parse ({self.text(node)[:40]!r})")
                break
            elif c.type != "file_descriptor":
                parts.append(self.word(c))
        target = "".join(parts).replace(SPLIT, " ")
        if op in (">&", "<&") and (re.fullmatch(r"\d+-?|-", target)):
            return [("dup", target)], None       # 2>&1, >&2, <&0, 1>&-: a descriptor, no file
        if op in (">&-", "<&-"):
            return [("dup", "-")], None
        if op == ">&":
            op = "&>"                             # >&FILE writes FILE, as &>FILE
        if op == "<&":
            op = "<"
        return [(op, target)], None

    def heredoc(self, node, trailing: list) -> tuple[list[tuple[str, str]], str | None]:
        quoted = any(c.type == "heredoc_start" and re.search(r"['\"\\]", self.text(c)) for c in node.children)
        pairs, text = [("<<", "")], ""
        for child in node.children:
            if child.type == "heredoc_body":
                text = self.text(child)
                if not quoted:   # an unquoted here-document runs its substitutions and expands its variables
                    for sub in child.named_children:
                        if sub.type in _WORDS:
                            self.word(sub)
                    if re.search(r"[$`\\]", text):
                        text += SUBST
            elif child.type.endswith("_redirect"):   # `cat <<EOF > file`: the grammar nests the next one
                more, _ = self.redirect(child, trailing)
                pairs += more
            elif child.is_named and child.type not in _SKIPPED:
                trailing.append(child)
        return pairs, text

    # --- words ------------------------------------------------------------------------------------------------

    def assign(self, node) -> str:
        value = self.value_of(node)
        name = self.name_of(node)
        if name:
            self.out.assigned[name] = value
        return value

    def name_of(self, node) -> str:
        name = node.child_by_field_name("name")
        return self.text(name) if name is not None else ""

    def value_of(self, node) -> str:
        value = node.child_by_field_name("value")
        return self.word(value, quoted=True) if value is not None else ""   # no splitting in an assignment

    def word(self, node, quoted: bool = False) -> str:
        handler = _WORD_HANDLERS.get(node.type)
        if handler is not None:
            return handler(self, node, quoted)
        if node.type == "ERROR":
            self.unreadable(f"a part bash's grammar does not parse ({self.text(node)[:40]!r})")
        return self.text(node)

    def plain_word(self, node, quoted: bool) -> str:
        return unescape(self.text(node), quoted=False)

    def raw_string(self, node, quoted: bool) -> str:
        return self.text(node)[1:-1]

    def ansi_string(self, node, quoted: bool) -> str:
        return ansi_c(self.text(node)[2:-1])

    def string(self, node, quoted: bool) -> str:
        out = []
        for c in node.named_children:
            out.append(unescape(self.text(c), quoted=True) if c.type == "string_content" else self.word(c, True))
        return "".join(out)

    def concatenation(self, node, quoted: bool) -> str:
        return "".join(self.word(c, quoted) for c in node.named_children)

    def arithmetic(self, node, quoted: bool) -> str:
        self.unreadable(f"an arithmetic expansion ({self.text(node)[:40]})")
        for c in node.named_children:
            self.statement(c)
        return SUBST

    def substitution_word(self, node, quoted: bool) -> str:
        value = self.fold(node) if node.type == "command_substitution" else None
        if value is None:
            if node.type == "process_substitution":
                self.fold(node)
            return SUBST
        value = value.rstrip("\n")
        return value if quoted else re.sub(r"\s+", SPLIT, value)

    def fold(self, node) -> str | None:
        """Read a substitution's body; its output when bash computes it from literals alone (printf, echo)."""
        if self.depth >= MAX_DEPTH:
            self.unreadable("substitutions nested too deep")
            return None
        start = len(self.out.commands)
        saved, self.pipe_prev = self.pipe_prev, None
        for child in node.named_children:
            self.statement(child)
        self.pipe_prev = saved
        new = self.out.commands[start:]
        return folded_output(new[0]) if len(new) == 1 else None

    def expansion(self, node, quoted: bool) -> str:
        raw = self.text(node)
        name_node = next((c for c in node.named_children if c.type in ("variable_name", "special_variable_name")),
                         None)
        name = self.text(name_node) if name_node is not None else ""
        value = self.variable(name)
        operators = [self.text(c) for c in node.children if not c.is_named and c.type not in ("${", "}", "$")]
        rest = [c for c in node.named_children if c is not name_node]
        if node.type == "expansion" and operators and operators[0] in ("%", "%%", "#", "##") and value is not None:
            value = _trim(value, operators[0], "".join(self.word(c, True) for c in rest))
        elif node.type == "expansion" and operators and operators[0] not in (":-", "-"):
            value = None   # ${#X}, ${X/a/b}, ${X:=y}: computed by bash at run time
        elif node.type == "expansion" and operators and value in (None, ""):
            value = "".join(self.word(c, quoted) for c in rest) if rest else ""
        if value is None:
            self.unreadable(f"{raw} (a value set at run time)")
            return SUBST
        return value if quoted or SUBST in value else re.sub(r"\s+", SPLIT, value)

    def variable(self, name: str) -> str | None:
        if name in _NUMBERS:
            return "0"   # $? $$ $! $#: a number, never a path
        if name in self.out.assigned:
            return self.out.assigned[name]
        if name == "PWD" and self.out.cwds:
            return self.out.cwds[-1]
        if re.fullmatch(r"[A-Za-z_]\w*", name) and name in os.environ:
            return os.environ[name]
        return None

    # --- scripts inside a command ----------------------------------------------------------------------------

    def nested(self, text: str, into_commands: bool) -> None:
        if self.depth >= MAX_DEPTH:
            self.unreadable("scripts nested too deep")
            return
        inner = read_command(text, self.out.cwds, self.depth + 1)
        target = self.out.commands if into_commands else self.out.nested
        target += inner.commands
        self.out.nested += inner.nested
        self.out.assigned.update(inner.assigned)
        self.out.unreadable += inner.unreadable
        self.out.opaque += inner.opaque
        self.out.cwds += inner.cwds[len(self.out.cwds):]


_NUMBERS = {"?", "$", "!", "#"}


def _trim(value: str, op: str, pattern: str) -> str | None:
    """``${X%pat}``, ``${X%%pat}``, ``${X#pat}``, ``${X##pat}`` of a known value (None when it is not known)."""
    if SUBST in value or SUBST in pattern:
        return None
    from fnmatch import fnmatchcase

    n = len(value)
    if op in ("%", "%%"):
        cuts = range(n, -1, -1) if op == "%" else range(0, n + 1)
        return next((value[:i] for i in cuts if fnmatchcase(value[i:], pattern)), value)
    cuts = range(0, n + 1) if op == "#" else range(n, -1, -1)
    return next((value[j:] for j in cuts if fnmatchcase(value[:j], pattern)), value)


_HANDLERS = {
    "command": _Reader.command, "redirected_statement": _Reader.redirected, "pipeline": _Reader.pipeline,
    "variable_assignment": _Reader.assignment, "variable_assignments": _Reader.assignments,
    "declaration_command": _Reader.declaration, "unset_command": _Reader.declaration, "test_command": _Reader.test,
    "for_statement": _Reader.for_loop, "ERROR": _Reader.error,
}
_WORD_HANDLERS = {
    "word": _Reader.plain_word, "number": _Reader.plain_word, "raw_string": _Reader.raw_string,
    "ansi_c_string": _Reader.ansi_string, "string": _Reader.string, "translated_string": _Reader.string,
    "concatenation": _Reader.concatenation, "command_name": _Reader.concatenation,
    "simple_expansion": _Reader.expansion, "expansion": _Reader.expansion,
    "command_substitution": _Reader.substitution_word, "process_substitution": _Reader.substitution_word,
    "arithmetic_expansion": _Reader.arithmetic,
}


def read_command(command: str, cwd: str | list[str] | None = None, depth: int = 0) -> Reading:
    """Read ``command`` as bash would (see the module docstring). Raises ParserUnavailable."""
    source = command.encode("utf-8", errors="replace")
    reading = Reading(cwd)
    tree = parser().parse(source)
    reader = _Reader(source, reading, depth)
    reader.statement(tree.root_node)
    if tree.root_node.has_error and not any("does not parse" in u for u in reading.unreadable):
        reading.unreadable.append("a part bash's grammar does not parse")
    reading.commands = [c for c in reading.commands if c.words or c.redirects]
    if depth < MAX_DEPTH:   # a quoted argument with spaces may be a script another program runs (watch, ssh…)
        for cmd in list(reading.commands):
            for word in cmd.words[1:]:
                if any(c.isspace() for c in word.strip()) and SUBST not in word:
                    inner = read_command(word, cmd.cwds or cwd, depth + 1)
                    reading.nested += inner.commands + inner.nested
    reading.unreadable = list(dict.fromkeys(reading.unreadable))
    reading.opaque = list(dict.fromkeys(reading.opaque))
    return reading
