"""A shell command read as bash reads it, with tree-sitter-bash (the grammar editors and code hosts use).

:func:`read_command` gives every simple command of a command line as its words, the way bash would pass them:
quotes removed, ``$'...'`` (ANSI-C: ``\\x6e``, ``\\151``, ``\\u…``, ``\\n``…) and ``$"..."`` (locale) decoded,
backslash escapes applied, variables set earlier in the same command (``D=out/inspection; … $D``) and in the
hook's own environment (``$HOME``) followed, ``${X:-default}`` resolved when it can be. Redirections stay in the
words as an operator followed by its target (``>``, ``out/x``). Command and process substitutions become a
placeholder (:data:`SUBST`) in the word that holds them, and their bodies are read as commands of their own,
as are the substitutions of an unquoted here-document. A quoted argument that reads as a script (``sh -c '...'``)
is also read as commands, in :attr:`Reading.nested`.

What it cannot read is said, not guessed: a variable it cannot resolve (set at run time, a positional
parameter), an arithmetic expansion, a part of the line bash's grammar does not parse. Each is listed in
:attr:`Reading.unreadable`, and the decision denies such a command when it comes near a protected path.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

SUBST = "\x00S\x00"   # where a command substitution stood; its body is read as a command of its own
MAX_DEPTH = 8         # nested substitutions and scripts read, at most
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
            "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_C = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
                     re.DOTALL)
_PARSER = None


class ParserUnavailable(RuntimeError):
    """tree-sitter or its bash grammar is not importable in this interpreter."""


def parser():
    """The bash parser (built once per process). Raises ParserUnavailable."""
    global _PARSER
    if _PARSER is None:
        try:
            import tree_sitter_bash
            from tree_sitter import Language, Parser
        except ImportError as e:
            raise ParserUnavailable(str(e)) from None
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


def ansi_c(body: str) -> str:
    """The text of ``$'body'``, as bash decodes it."""
    def one(m: re.Match) -> str:
        hexa, uni, uni8, octal, ctrl, other = m.groups()
        if hexa or uni or uni8:
            code = int(hexa or uni or uni8, 16)
            return chr(code) if code <= 0x10FFFF else ""
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if ctrl:
            return chr(ord(ctrl.upper()) ^ 0x40) if ctrl != "?" else "\x7f"
        return _ESCAPES.get(other, "\\" + other)
    return _ANSI_C.sub(one, body)


def _unescape(text: str, quoted: bool) -> str:
    """Backslash escapes as bash applies them: outside quotes any character; inside double quotes only
    ``$ ` " \\`` and a newline."""
    if quoted:
        return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)
    return re.sub(r"\\(.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.DOTALL)


@dataclass
class Reading:
    """What a command line does, as words: ``segments`` (each simple command, with its redirections, and the
    bodies of its substitutions), ``nested`` (the commands of quoted scripts), ``assigned`` (variables it sets),
    ``unreadable`` (what bash decides only at run time, or what did not parse)."""

    segments: list[list[str]] = field(default_factory=list)
    nested: list[list[str]] = field(default_factory=list)
    assigned: dict[str, str] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)


class _Reader:
    def __init__(self, source: bytes, reading: Reading, cwd: str | None, depth: int):
        self.src, self.out, self.cwd, self.depth = source, reading, cwd, depth

    def text(self, node) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    # --- statements -------------------------------------------------------------------------------------------

    def statement(self, node) -> None:
        kind = node.type
        if kind == "command":
            self.command(node)
        elif kind == "redirected_statement":
            self.redirected(node)
        elif kind == "variable_assignment":
            self.assign(node)
            self.out.segments.append([self.text(node.child_by_field_name("name") or node) + "=" +
                                      self.value(node)])
        elif kind == "ERROR":
            self.out.unreadable.append(f"a part bash's grammar does not parse ({self.text(node)[:40]!r})")
            self.words_of(node)
        elif kind == "for_statement":
            self.for_loop(node)
        else:
            for child in node.named_children:
                if child.type in ("heredoc_body", "comment"):
                    continue
                self.statement(child) if self._is_statement(child) else self.word(child)

    @staticmethod
    def _is_statement(node) -> bool:
        return node.type not in ("word", "string", "raw_string", "concatenation", "simple_expansion", "expansion",
                                 "number", "ansi_c_string", "translated_string", "variable_name", "test_operator",
                                 "regex", "extglob_pattern")

    def for_loop(self, node) -> None:
        name = node.child_by_field_name("variable")
        values = [self.word(v) for v in node.children_by_field_name("value")]
        if name is not None and values:   # the loop's variable takes each value: read as the first
            self.out.assigned[self.text(name)] = values[0]
        seg = ["for", self.text(name) if name else "_", "in", *values]
        self.out.segments.append(seg)
        body = node.child_by_field_name("body")
        if body is not None:
            self.statement(body)

    def command(self, node, redirects: list[str] | None = None) -> None:
        seg: list[str] = []
        own: list[str] = []   # its redirections, put after its words
        children = list(node.children)
        end = node.start_byte
        for i, child in enumerate(children):
            seg += self.src[end:child.start_byte].decode(errors="replace").split()   # text the grammar skipped
            end = child.end_byte
            if child.type == "variable_assignment":
                value = self.value(child)
                self.assign(child, value)
                seg.append(self.text(child.child_by_field_name("name") or child) + "=" + value)
            elif child.type == "command_name":
                seg.append(self.word(child.named_children[0] if child.named_children else child))
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                own += self.redirect(child)
            elif child.type == "$" and i + 1 < len(children) and children[i + 1].type == "string":
                continue   # $"..." (locale): the string that follows is the text
            elif child.is_named:
                seg.append(self.word(child))
        self.out.segments.append(seg + own + (redirects or []))

    def redirected(self, node) -> None:
        body = node.child_by_field_name("body")
        redirects = [w for r in node.children if r.type.endswith("_redirect") for w in self.redirect(r)]
        if body is not None and body.type == "command":
            gap = self.src[body.end_byte:node.end_byte].decode(errors="replace")
            skipped = [w for w in re.split(r"\s+", gap.split("<<")[0]) if w == "-"]   # `python3 - <<EOF`
            self.command(body, skipped + redirects)
            return
        if body is not None:
            self.statement(body)
        if redirects:
            self.out.segments.append(["true", *redirects])   # the redirections of a compound statement

    def redirect(self, node) -> list[str]:
        op = "".join(self.text(c) for c in node.children if not c.is_named or c.type == "ERROR")
        if node.type == "heredoc_redirect":
            quoted = any(c.type == "heredoc_start" and re.search(r"['\"\\]", self.text(c)) for c in node.children)
            for body in (c for c in node.children if c.type == "heredoc_body"):
                if not quoted:   # an unquoted here-document still runs its substitutions
                    for sub in body.named_children:
                        if sub.type in ("command_substitution", "process_substitution"):
                            self.substitution(sub)
            return ["<<", "EOF"]
        target = "".join(self.word(c) for c in node.named_children if c.type not in ("file_descriptor", "ERROR"))
        return [op.strip() or ">", target]

    def assign(self, node, value: str | None = None) -> None:
        name = node.child_by_field_name("name")
        if name is not None:
            self.out.assigned[self.text(name)] = self.value(node) if value is None else value

    def value(self, node) -> str:
        value = node.child_by_field_name("value")
        return self.word(value) if value is not None else ""

    def words_of(self, node) -> None:
        words = [self.word(c) for c in node.named_children if not c.type.endswith("_redirect")]
        if words:
            self.out.segments.append(words)

    # --- words -----------------------------------------------------------------------------------------------

    def word(self, node) -> str:
        kind = node.type
        if kind == "word" or kind == "number":
            return _unescape(self.text(node), quoted=False)
        if kind == "raw_string":
            return self.text(node)[1:-1]
        if kind == "ansi_c_string":
            return ansi_c(self.text(node)[2:-1])
        if kind in ("string", "translated_string"):
            return "".join(self.string_part(c) for c in node.named_children) if node.named_children else ""
        if kind in ("concatenation", "command_name"):
            return "".join(self.word(c) for c in node.named_children)
        if kind in ("simple_expansion", "expansion"):
            return self.expansion(node)
        if kind in ("command_substitution", "process_substitution"):
            self.substitution(node)
            return SUBST
        if kind == "arithmetic_expansion":
            self.out.unreadable.append(f"an arithmetic expansion ({self.text(node)[:40]})")
            return "$" + SUBST
        if kind == "ERROR":
            self.out.unreadable.append(f"a part bash's grammar does not parse ({self.text(node)[:40]!r})")
        return self.text(node)

    def string_part(self, node) -> str:
        if node.type == "string_content":
            return _unescape(self.text(node), quoted=True)
        return self.word(node)

    def expansion(self, node) -> str:
        raw = self.text(node)
        name_node = next((c for c in node.named_children if c.type in ("variable_name", "special_variable_name")),
                         None)
        name = self.text(name_node) if name_node is not None else ""
        value = self.variable(name)
        operators = [self.text(c) for c in node.children if not c.is_named and c.type not in ("${", "}", "$")]
        if node.type == "expansion" and operators and operators[0] not in (":-", "-"):
            value = None   # ${#X}, ${X/a/b}, ${X:=y}: computed by bash at run time
        elif node.type == "expansion" and operators and value in (None, ""):
            default = [c for c in node.named_children if c is not name_node]
            value = "".join(self.word(c) for c in default) if default else ""
        if value is None:
            self.out.unreadable.append(f"{raw} (a value set at run time)")
            return raw
        return value

    def variable(self, name: str) -> str | None:
        if name in self.out.assigned:
            return self.out.assigned[name]
        if name == "PWD" and self.cwd:
            return self.cwd
        if re.fullmatch(r"[A-Za-z_]\w*", name) and name in os.environ:
            return os.environ[name]
        return None

    def substitution(self, node) -> None:
        if self.depth >= MAX_DEPTH:
            self.out.unreadable.append("substitutions nested too deep")
            return
        for child in node.named_children:
            self.statement(child)


def read_command(command: str, cwd: str | None = None, depth: int = 0) -> Reading:
    """Read ``command`` as bash would (see the module docstring). Raises ParserUnavailable."""
    text = command.replace("\\\n", "")   # a backslash-newline joins two lines into one word
    source = text.encode("utf-8", errors="replace")
    reading = Reading()
    tree = parser().parse(source)
    reader = _Reader(source, reading, cwd, depth)
    reader.statement(tree.root_node)
    if tree.root_node.has_error and not any("does not parse" in u for u in reading.unreadable):
        reading.unreadable.append("a part bash's grammar does not parse")
    reading.segments = [s for s in reading.segments if s]
    reading.unreadable = list(dict.fromkeys(reading.unreadable))
    if depth < MAX_DEPTH:   # a quoted argument with spaces may be a script (sh -c '...'): read it too
        for seg in list(reading.segments):
            for word in seg[1:]:
                if any(c.isspace() for c in word.strip()) and SUBST not in word:
                    inner = read_command(word, cwd, depth + 1)
                    reading.nested += inner.segments + inner.nested
    return reading
