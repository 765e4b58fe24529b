"""What a command line is made of, once read: simple commands (:class:`Cmd`) with their words and redirections,
gathered in a :class:`Reading`, and the text bash computes from literals alone (``$'...'``, ``printf``, ``echo``).

A word holds :data:`SUBST` where bash decides only at run time (a command substitution, a variable the line does
not set); such a word names no path the hook can check. Both readers (``bash_reading`` with tree-sitter-bash,
``bash_subset`` without it) produce a Reading; everything after them works on Readings only.
"""

from __future__ import annotations

import re

SUBST = "\x00S\x00"   # where bash puts a value known only at run time
SPLIT = "\x01"        # whitespace of an unquoted expansion: bash splits the word there
WRITE_OPS = {">", ">>", ">|", "&>", "&>>", "<>"}
STDIN_PATHS = {"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}   # a script or program read from stdin
SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox-sh", "fish", "yash", "posh"}
_ESCAPES = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
            "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
_ANSI_C = re.compile(r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))",
                     re.DOTALL)


class Cmd:
    """One simple command: ``words`` (its argv, expanded as bash would), ``redirects`` (``(op, target)``: ``>``,
    ``>>``, ``&>``, ``<``, ``dup`` for ``2>&1``…), ``stdin`` (a here-document's or here-string's text, when it has
    one) and ``piped`` (the command whose output it reads through a pipe, or None)."""

    __slots__ = ("words", "redirects", "stdin", "piped", "cwds")

    def __init__(self, words: list[str], redirects: list[tuple[str, str]] | None = None,
                 stdin: str | None = None, piped: Cmd | None = None):
        self.words, self.redirects, self.stdin, self.piped = words, redirects or [], stdin, piped
        self.cwds: tuple[str, ...] = ()   # the folders it may run in (set by the reader that made it)

    def written(self) -> list[str]:
        """The files its redirections write (``>``, ``>>``, ``&>``, ``<>``, ``>&FILE``), as bash reads them."""
        return [t for op, t in self.redirects if op in WRITE_OPS]

    def __repr__(self) -> str:   # for test failures
        return f"Cmd({self.words!r}, {self.redirects!r})"


class Reading:
    """What a command line does: ``commands`` (every simple command bash would run, those of substitutions, loops
    with each value, functions, ``eval`` and ``sh -c`` of known text included), ``nested`` (a quoted argument of
    another program read as a script, in case that program runs it), ``assigned`` (variables it sets),
    ``cwds`` (the folder it starts in and each it ``cd``s into), ``unreadable`` (values bash decides at run time,
    parts that do not parse) and ``opaque`` (code whose text exists only at run time: ``eval "$(…)"``,
    ``… | sh``, ``source <(…)``)."""

    __slots__ = ("commands", "nested", "assigned", "cwds", "unreadable", "opaque")

    def __init__(self, cwd: str | list[str] | tuple[str, ...] | None = None):
        self.commands: list[Cmd] = []
        self.nested: list[Cmd] = []
        self.assigned: dict[str, str] = {}
        self.cwds: list[str] = [cwd] if isinstance(cwd, str) else list(cwd or ())
        self.unreadable: list[str] = []
        self.opaque: list[str] = []

    def all_commands(self) -> list[Cmd]:
        return self.commands + self.nested

    def words(self) -> list[str]:
        """Every word of every command, redirection targets included."""
        return [w for c in self.all_commands() for w in (*c.words, *(t for _, t in c.redirects))]


# ------------------------------------------------------------------------------------------ text from literals


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


def unescape(text: str, quoted: bool) -> str:
    """Backslash escapes as bash applies them: outside quotes any character; inside double quotes only
    ``$ ` " \\`` and a newline."""
    if quoted:
        return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)
    return re.sub(r"\\(.)", lambda m: "" if m.group(1) == "\n" else m.group(1), text, flags=re.DOTALL)


_PRINTF_SPEC = re.compile(r"%(%|[sbcdiu])|%")
_PRINTF_ESC = re.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|(.))", re.DOTALL)
_B_ESC = re.compile(r"\\(?:0([0-7]{0,3})|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|(.))", re.DOTALL)


def _escape_one(octal, hexa, uni, other) -> str:
    if octal:
        return chr(int(octal, 8) & 0xFF)
    if hexa or uni:
        return chr(int(hexa or uni, 16))
    return _ESCAPES.get(other, "\\" + other)


def _printf_escapes(text: str) -> str:
    return _PRINTF_ESC.sub(lambda m: _escape_one(*m.groups()), text)


def _b_escapes(text: str) -> str:
    return _B_ESC.sub(lambda m: _escape_one(m.group(1) or m.group(2), m.group(3), m.group(4), m.group(5)), text)


def fold_printf(args: list[str]) -> str | None:
    """What ``printf FORMAT ARGS`` prints, for the plain conversions (``%s %b %c %d %%``), or None."""
    if not args or args[0].startswith("-"):
        return None
    fmt, rest, out = args[0], list(args[1:]), []
    while True:
        pieces, used, bad = [], 0, False
        pos = 0
        for m in _PRINTF_SPEC.finditer(fmt):
            pieces.append(_printf_escapes(fmt[pos:m.start()]))
            pos = m.end()
            conv = m.group(1)
            if conv is None:
                bad = True
                break
            if conv == "%":
                pieces.append("%")
                continue
            arg = rest[used] if used < len(rest) else ""
            used += 1
            if conv == "b":
                pieces.append(_b_escapes(arg))
            elif conv == "c":
                pieces.append(arg[:1])
            elif conv in "diu":
                if arg and not re.fullmatch(r"[+-]?\d+", arg):
                    return None
                pieces.append(str(int(arg or 0)))
            else:
                pieces.append(arg)
        if bad:
            return None
        pieces.append(_printf_escapes(fmt[pos:]))
        out.append("".join(pieces))
        rest = rest[used:]
        if not rest or used == 0:
            return "".join(out)


def fold_echo(args: list[str]) -> str | None:
    """What bash's ``echo`` prints (``-n``, ``-e``, ``-E``), or None when a backslash makes it differ between
    shells."""
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        newline = newline and "n" not in args[0]
        escapes = "e" in args[0] or (escapes and "E" not in args[0])
        args = args[1:]
    text = " ".join(args)
    if "\\" in text and not escapes:
        return None
    return (_b_escapes(text) if escapes else text) + ("\n" if newline else "")


def folded_output(cmd: Cmd) -> str | None:
    """The output of ``cmd`` when it is ``printf``/``echo`` of literal words, or ``cat`` of a literal
    here-document, with no other redirection; else None."""
    if not cmd.words or any(SUBST in w for w in cmd.words):
        return None
    name = cmd.words[0]
    if name == "cat" and cmd.words[1:] in ([], ["-"]) and cmd.stdin is not None and SUBST not in cmd.stdin:
        return cmd.stdin if all(op in ("<<", "<<<") for op, _ in cmd.redirects) else None
    if cmd.redirects:
        return None
    if name == "printf":
        return fold_printf(cmd.words[1:])
    if name == "echo":
        return fold_echo(cmd.words[1:])
    return None


# ------------------------------------------------------------------------------------ the program a command runs

# Programs that run the rest of their words as a command, with their options that take a value and how many
# operands come before that command. An option not listed here stops the unwrapping: the wrapper is then the
# program, judged as one the hook does not know (`time -o FILE`, `env -S TEXT`, `env -C DIR`).
WRAPPERS = {
    "sudo": ({"-u", "-g", "-h", "-p", "-r", "-t", "-T", "-U", "-C", "-D"}, {"-E", "-H", "-n", "-S", "-k", "-b", "-P",
                                                                             "-i", "-s", "--"}, 0),
    "doas": ({"-u", "-C"}, {"-n", "-s", "--"}, 0),
    "env": ({"-u", "--unset"}, {"-i", "--ignore-environment", "-0", "--null", "--"}, 0),
    "nice": ({"-n", "--adjustment"}, {"--"}, 0),
    "ionice": ({"-c", "-n", "--class", "--classdata"}, {"-t", "--ignore", "--"}, 0),
    "nohup": (set(), {"--"}, 0), "command": (set(), {"-p", "--"}, 0), "builtin": (set(), set(), 0),
    "exec": ({"-a"}, {"-c", "-l", "--"}, 0), "time": (set(), {"-p", "-v", "--verbose", "--portability", "--"}, 0),
    "stdbuf": ({"-i", "-o", "-e"}, {"--"}, 0), "setsid": (set(), {"-f", "-w", "--fork", "--wait", "--"}, 0),
    "timeout": ({"-s", "--signal", "-k", "--kill-after"}, {"--foreground", "--preserve-status", "-v", "--verbose",
                                                           "--"}, 1),
    "taskset": (set(), {"-a", "--all-tasks", "--"}, 1), "chrt": (set(), {"-b", "-f", "-i", "-o", "-r", "-d", "--"}, 1),
    "unbuffer": (set(), set(), 0), "catchsegv": (set(), set(), 0), "caffeinate": (set(), {"-i", "-d", "-s"}, 0),
}
ASSIGNMENT = re.compile(r"^[A-Za-z_]\w*=")


def _unwrap_one(words: list[str]) -> list[str] | None:
    """The words after one wrapper and its options, or None when an option of it is not one the hook knows."""
    valued, flags, operands = WRAPPERS[words[0].rsplit("/", 1)[-1]]
    k = 1
    while k < len(words):
        a = words[k]
        if a == "--":
            k += 1
            break
        if a in valued:
            k += 2
        elif a.split("=", 1)[0] in valued and "=" in a or (a[:2] in valued and len(a) > 2 and not a.startswith("--")):
            k += 1   # -n5, --signal=KILL
        elif a in flags or (words[0].endswith("env") and ASSIGNMENT.match(a)):
            k += 1
        elif re.fullmatch(r"-\d+", a):
            k += 1   # nice -5
        elif a.startswith("-") and len(a) > 1:
            return None
        else:
            break
    return words[k + operands:]


def unwrap(words: list[str]) -> list[str]:
    """A simple command without its prefix assignments and wrappers (``sudo``, ``env``, ``nohup``, ``timeout 5``…):
    the words of the program it runs. A wrapper with an option the hook does not know stays the program."""
    seen = 0
    while words and seen < 16:
        seen += 1
        if ASSIGNMENT.match(words[0]):
            words = words[1:]
        elif words[0].rsplit("/", 1)[-1] in WRAPPERS:
            rest = _unwrap_one(words)
            if rest is None:
                return words
            words = rest
        else:
            break
    return words


def program(words: list[str]) -> str:
    """The name of the program ``words`` runs (``/usr/bin/cp`` gives ``cp``)."""
    return words[0].rsplit("/", 1)[-1] if words else ""
