"""The programs the hook knows, as tables: what each one writes, read from its words (:data:`WRITERS`); which only
read (:data:`READERS`, and :data:`CHECKED_READERS` with the options that make them write); which read whole
folders (:func:`reads_recursively`); which run code (:data:`INTERPRETERS`).

A writer's entry gives a :class:`Writes` (the files it creates or overwrites, the paths it removes, the folders it
writes into or removes whole, and for a copy each source with where it lands), or None when an option makes it
do what the hook cannot follow (``tar --to-command``, ``rsync -e``, ``zip -TT``): such a command is then judged as
a program the hook does not know. Operands that are only known at run time hold ``SUBST``.
"""

from __future__ import annotations

import os
import re

from grpo_guard.shell_words import SUBST

INTERPRETERS = re.compile(r"^(?:python[\d.]*|pypy[\d.]*|perl|ruby|node|nodejs|deno|bun|php|lua|Rscript|julia|"
                          r"osascript)$")
# Programs that only read (stdout is theirs to write), with no option that writes a file or runs a program.
READERS = {"cat", "tac", "head", "tail", "more", "wc", "ls", "stat", "du", "df", "diff", "cmp", "sha256sum",
           "sha1sum", "sha512sum", "sha224sum", "sha384sum", "md5sum", "b2sum", "cksum", "grep", "egrep", "fgrep",
           "zgrep", "zcat", "bzcat", "xzcat", "jq", "yq", "echo", "printf", "true", "false", "test", "[", "[[", "pwd",
           "basename", "dirname", "realpath", "readlink", "nl", "od", "hexdump", "strings", "cut", "tr", "comm",
           "paste", "join", "fold", "column", "tree", "cd", "pushd", "popd", "type", "which", "whoami", "id", "date",
           "uname", "printenv", "sleep", "wait", "jobs", "exit", "return", ":", "set", "shopt", "export", "declare",
           "typeset", "local", "readonly", "unset", "alias", "unalias", "history", "clear", "hash", "umask",
           "expr", "seq", "numfmt", "fmt", "pr", "expand", "unexpand", "rev", "look", "file", "tput", "stty",
           "hostname", "nproc", "free", "uptime", "ps", "pgrep", "lsof", "getconf", "locale", "iconv"}
# Readers with a flag that writes a file or runs a program: what is refused in their arguments (readers.py).
CHECKED_READERS = {"rg", "less", "file", "sort", "uniq", "xxd", "base64", "sed", "find", "xargs", "iconv", "awk",
                   "gawk", "tar", "unzip"}
# Programs that list names and sizes and never print what a file holds.
NAMES_ONLY = {"ls", "du", "df", "stat", "tree", "find", "cd", "pushd", "popd", "pwd", "realpath", "readlink",
              "basename", "dirname", "test", "[", "echo", "printf", "true", "false", "wc"}


class Writes:
    """What one command writes: ``files`` (created or overwritten), ``removed`` (deleted or moved away),
    ``into`` (folders it writes below), ``removed_trees`` (folders deleted whole), ``whole_trees`` (folders it may
    write anywhere in, files unnamed: a patch), ``copies`` ((source, where it lands) for each copied operand),
    ``linked`` (files given another name: a hard link to an inspection file is a name the hook does not know)."""

    __slots__ = ("files", "removed", "into", "removed_trees", "whole_trees", "copies", "linked")

    def __init__(self, files=(), removed=(), into=(), removed_trees=(), whole_trees=(), copies=(), linked=()):
        self.files, self.removed, self.into = list(files), list(removed), list(into)
        self.removed_trees, self.whole_trees, self.copies = list(removed_trees), list(whole_trees), list(copies)
        self.linked = list(linked)

    def targets(self) -> list[str]:
        return self.files + self.removed + self.into + self.removed_trees + self.whole_trees + self.linked


class Args:
    """A program's arguments: its options (``flags``, and the ``values`` of those that take one) and operands."""

    def __init__(self, args: list[str], valued: set[str] = frozenset()):
        self.flags: list[str] = []
        self.values: dict[str, list[str]] = {}
        self.operands: list[str] = []
        k, ended = 0, False
        while k < len(args):
            a = args[k]
            if ended or a == "-" or not a.startswith("-"):
                self.operands.append(a)
            elif a == "--":
                ended = True
            elif a.startswith("--") and "=" in a:
                name, value = a.split("=", 1)
                self._add(name, value)
            elif a in valued:
                self._add(a, args[k + 1] if k + 1 < len(args) else "")
                k += 1
            elif not a.startswith("--") and a[:2] in valued:
                self._add(a[:2], a[2:])
            else:
                self.flags.append(a)
            k += 1

    def _add(self, name: str, value: str) -> None:
        self.flags.append(name)
        self.values.setdefault(name, []).append(value)

    def value(self, *names: str) -> str | None:
        return next((v[-1] for n in names if (v := self.values.get(n))), None)

    def short(self) -> str:
        """The letters of the short options (``-rf`` gives ``rf``)."""
        return "".join(f[1:] for f in self.flags if re.match(r"^-[A-Za-z]", f))

    def has(self, letters: str = "", *long: str) -> bool:
        return any(c in self.short() for c in letters) or any(f in long for f in self.flags)


# ------------------------------------------------------------------------------------------------ the writers


def _landing(dest: str, source: str) -> str:
    return os.path.join(dest, os.path.basename(source.rstrip("/")) or source)


def _copy(args: list[str], is_dir, valued=frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode",
                                                     "-o", "--owner", "-g", "--group", "-Z", "--context"})):
    """cp, install: the destination, or where each source lands in it; a recursive copy writes into it."""
    a = Args(args, valued)
    tdir = a.value("-t", "--target-directory")
    ops = a.operands
    if tdir is None and len(ops) < 2:
        return Writes()
    dest, sources = (tdir, ops) if tdir is not None else (ops[-1], ops[:-1])
    recursive = a.has("rRa", "--recursive", "--archive")
    into_dir = tdir is not None or len(sources) > 1 or dest.endswith("/") or (
        not a.has("T", "--no-target-directory") and is_dir(dest))
    landed = [(s, _landing(dest, s) if into_dir else dest) for s in sources if s.rstrip("/")]
    links = a.has("ls", "--link", "--symbolic-link")
    return Writes(files=[d for _, d in landed] + ([dest] if into_dir else []),
                  into=[d for _, d in landed] if recursive else [],
                  copies=[] if links else landed, linked=sources if links else [])


def _move(args: list[str], is_dir):
    a = Args(args, {"-t", "--target-directory", "-S", "--suffix"})
    tdir = a.value("-t", "--target-directory")
    ops = a.operands
    if tdir is None and len(ops) < 2:
        return Writes()
    dest, sources = (tdir, ops) if tdir is not None else (ops[-1], ops[:-1])
    into_dir = tdir is not None or len(sources) > 1 or (not a.has("T", "--no-target-directory") and is_dir(dest))
    landed = [_landing(dest, s) if into_dir else dest for s in sources]
    return Writes(files=landed, into=landed, removed_trees=sources)


def _remove(args: list[str], is_dir):
    a = Args(args)
    if a.has("rR", "--recursive", "-d", "--dir"):
        return Writes(removed_trees=a.operands)
    return Writes(removed=a.operands)


def _link(args: list[str], is_dir):
    """ln: the link it makes, and the files it links to (a hard link to an inspection file is a name the hook
    does not know)."""
    a = Args(args, {"-t", "--target-directory", "-S", "--suffix"})
    tdir = a.value("-t", "--target-directory")
    ops = a.operands
    if tdir is None and len(ops) < 2:   # ln TARGET: a link of that name here
        return Writes(files=[os.path.basename(o.rstrip("/")) for o in ops], linked=ops)
    dest, targets = (tdir, ops) if tdir is not None else (ops[-1], ops[:-1])
    into_dir = tdir is not None or len(targets) > 1 or is_dir(dest)
    return Writes(files=[_landing(dest, t) if into_dir else dest for t in targets] + ([dest] if into_dir else []),
                  linked=targets)


def _operands(valued=frozenset(), recursive="", skip_first=0):
    def writes(args: list[str], is_dir):
        a = Args(args, set(valued))
        ops = a.operands[0 if "--reference" in a.values else skip_first:]
        if recursive and a.has(recursive, "--recursive"):
            return Writes(files=ops, into=ops)
        return Writes(files=ops)
    return writes


def _in_place(args: list[str], is_dir):
    """sed -i, perl -i, ruby -i: the files named after the script."""
    inplace = any(x.startswith("--in-place") or (x.startswith("-") and not x.startswith("--")
                                                  and "i" in x[1:].split("=")[0]) for x in args)
    if not inplace:
        return Writes()
    a = Args(args, {"-e", "--expression", "-f", "--file", "-l", "-I", "-M", "-m"})
    scripted = a.value("-e", "--expression", "-f", "--file") is not None
    return Writes(files=a.operands if scripted else a.operands[1:])


def _awk(args: list[str], is_dir):
    a = Args(args, {"-f", "-v", "-F", "-i", "--include", "-E"})
    if "inplace" in (a.values.get("-i", []) + a.values.get("--include", [])) or "-iinplace" in args:
        return Writes(files=a.operands[1:])
    return Writes()


_TAR_RUNS = ("--to-command", "--use-compress-program", "-I", "--checkpoint-action", "--info-script", "-F",
             "--new-volume-script", "--rsh-command", "--rmt-command", "--index-file")
_TAR_VALUED = {"-f", "--file", "-C", "--directory", "-T", "--files-from", "-X", "--exclude-from", "-b",
               "--blocking-factor", "-I", "--use-compress-program", "-F", "--info-script", "-g",
               "--listed-incremental", "-K", "-L", "-N", "-V", "--label", "--exclude", "--transform",
               "--xform", "--owner", "--group", "--mode", "--mtime", "--format", "-H"}


def _tar_words(args: list[str]) -> list[str]:
    """tar's old-style first word (``czf out.tgz``) as separate options."""
    if args and not args[0].startswith("-") and re.fullmatch(r"[A-Za-z]+", args[0]):
        letters, rest = args[0], list(args[1:])
        out = []
        for c in letters:
            if c in "fCTXbgIFKLNVH" and rest:
                out += [f"-{c}", rest.pop(0)]
            else:
                out.append(f"-{c}")
        return out + rest
    return args


def _members(archive: str, cwds, kind: str) -> list[str] | None:
    """The member names of an archive on disk (tar or zip), or None when it cannot be read."""
    for c in cwds or (os.getcwd(),):
        path = os.path.join(c, os.path.expanduser(archive))
        try:
            if kind == "zip":
                import zipfile

                with zipfile.ZipFile(path) as zf:
                    return zf.namelist()[:5000]
            import tarfile

            with tarfile.open(path) as tf:
                return tf.getnames()[:5000]
        except Exception:   # noqa: BLE001 - any archive the hook cannot list is judged by where it lands
            continue
    return None


def _tar(args: list[str], is_dir, cwds=()):
    words = _tar_words(args)
    a = Args(words, _TAR_VALUED)
    if any(f in _TAR_RUNS for f in a.flags):
        return None
    archives = a.values.get("-f", []) + a.values.get("--file", [])
    if a.has("x", "--extract", "--get"):
        dest = a.value("-C", "--directory") or "."
        members = None if SUBST in "".join(archives) else _members(archives[0] if archives else "-", cwds, "tar")
        if members is None:
            return Writes(into=[dest])
        return Writes(files=[os.path.join(dest, m) for m in members])
    removed = a.operands if a.has("", "--remove-files") else []
    if a.has("cru", "--create", "--append", "--update", "--delete", "--concatenate", "-A"):
        return Writes(files=[f for f in archives if f != "-"], removed_trees=removed)
    return Writes(removed_trees=removed)   # -t: lists


def _zip(args: list[str], is_dir):
    a = Args(args, {"-b", "-n", "-t", "-tt", "-x", "-i", "-P", "--password", "-O", "--output-file", "-s", "-sp"})
    if "-TT" in args or "--unzip-command" in args:
        return None
    if not a.operands:
        return Writes()
    archive = a.operands[0] if os.path.splitext(a.operands[0])[1] else a.operands[0] + ".zip"
    out = a.value("-O", "--output-file")
    removed = a.operands[1:] if a.has("m", "--move") else []
    return Writes(files=[archive] + ([out] if out else []), removed_trees=removed)


def _unzip(args: list[str], is_dir, cwds=()):
    a = Args(args, {"-d", "-x", "-P"})
    if a.has("lvtpz") or not a.operands:   # lists, tests or prints: reads only
        return Writes()
    dest = a.value("-d") or "."
    members = None if SUBST in a.operands[0] else _members(a.operands[0], cwds, "zip")
    if members is None:
        return Writes(into=[dest])
    return Writes(files=[os.path.join(dest, m) for m in members])


_COMPRESSED = {"gzip": ".gz", "bzip2": ".bz2", "xz": ".xz", "lzma": ".lzma", "zstd": ".zst", "lz4": ".lz4",
               "pigz": ".gz", "pbzip2": ".bz2", "compress": ".Z"}
_DECOMPRESS = {"gunzip": ".gz", "bunzip2": ".bz2", "unxz": ".xz", "unlzma": ".lzma", "unzstd": ".zst",
               "uncompress": ".Z"}


def _compressor(name: str):
    """gzip FILE replaces FILE with FILE.gz (zstd and lz4 keep it unless --rm); gunzip the other way round."""
    def writes(args: list[str], is_dir):
        a = Args(args, {"-S", "--suffix", "-o", "-b", "-T", "--threads", "-L"})
        decompress = name in _DECOMPRESS or a.has("d", "--decompress", "--uncompress")
        if a.has("ctl", "--stdout", "--to-stdout", "--test", "--list") or not a.operands:
            return Writes()
        keeps = a.has("k", "--keep") or (name in ("zstd", "lz4", "unzstd") and not a.has("", "--rm"))
        suffix = _COMPRESSED.get(name) or _DECOMPRESS.get(name) or ".gz"
        made = [o[:-len(suffix)] if decompress and o.endswith(suffix) else o + suffix for o in a.operands]
        if a.value("-o"):
            made = [a.value("-o")]
        trees = a.operands if a.has("r", "--recursive") else []
        return Writes(files=made, into=trees, removed=[] if keeps else a.operands,
                      removed_trees=[] if keeps else trees)
    return writes


_RSYNC_RUNS = ("-e", "--rsh", "--rsync-path", "--info", "--debug")
_RSYNC_VALUED = {"-e", "--rsh", "--rsync-path", "--exclude", "--include", "--filter", "-f", "--exclude-from",
                 "--include-from", "--files-from", "--backup-dir", "--suffix", "--log-file", "--partial-dir",
                 "-T", "--temp-dir", "--link-dest", "--copy-dest", "--compare-dest", "--chmod", "--chown",
                 "-B", "--block-size", "--bwlimit", "--timeout", "--port", "--max-size", "--min-size",
                 "--password-file", "--out-format", "--log-file-format", "--usermap", "--groupmap",
                 "--contimeout", "--modify-window", "--max-delete", "--iconv", "--checksum-choice",
                 "--compress-choice", "--compress-level", "--skip-compress"}


def _rsync(args: list[str], is_dir):
    a = Args(args, _RSYNC_VALUED)
    if any(f in _RSYNC_RUNS for f in a.flags) or len(a.operands) < 2:
        return None if any(f in _RSYNC_RUNS for f in a.flags) else Writes()
    dest, sources = a.operands[-1], a.operands[:-1]
    if re.match(r"^[\w.-]*(@[\w.-]+)?:", dest) and not dest.startswith("/"):
        return Writes()   # to another machine: here it only reads
    landed = [(s, dest if s.endswith("/") else _landing(dest, s)) for s in sources]
    logs = [v for n in ("--log-file", "--backup-dir", "--partial-dir", "-T", "--temp-dir") for v in a.values.get(n, [])]
    removed = sources if a.has("", "--remove-source-files", "--remove-sent-files") else []
    return Writes(files=[dest, *logs, *(d for _, d in landed)], into=[dest, *(d for _, d in landed)],
                  removed_trees=removed, copies=landed)


def _scp(args: list[str], is_dir):
    a = Args(args, {"-i", "-o", "-P", "-F", "-c", "-l", "-S", "-J", "-D", "-X"})
    if "-S" in a.flags or len(a.operands) < 2:
        return None if "-S" in a.flags else Writes()
    dest = a.operands[-1]
    if re.match(r"^[\w.-]*(@[\w.-]+)?:", dest):
        return Writes()
    landed = [(s, _landing(dest, s) if is_dir(dest) else dest) for s in a.operands[:-1]]
    return Writes(files=[d for _, d in landed], into=[d for _, d in landed] if a.has("r") else [], copies=landed)


def _dd(args: list[str], is_dir):
    return Writes(files=[x[3:] for x in args if x.startswith("of=")])


def _sort(args: list[str], is_dir):
    a = Args(args, {"-o", "--output", "-T", "--temporary-directory", "-k", "--key", "-t", "--field-separator",
                    "-S", "--buffer-size", "--compress-program", "--files0-from", "--parallel", "--batch-size"})
    if a.value("--compress-program"):
        return None
    return Writes(files=[v for n in ("-o", "--output") for v in a.values.get(n, [])],
                  into=[v for n in ("-T", "--temporary-directory") for v in a.values.get(n, [])])


def _uniq(args: list[str], is_dir):
    ops = Args(args, {"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"}).operands
    return Writes(files=ops[1:2])


def _xxd(args: list[str], is_dir):
    ops = Args(args, {"-c", "-g", "-l", "-s", "-o", "-n", "-cols", "-len", "-seek", "-groupsize", "-offset",
                      "-name"}).operands
    return Writes(files=ops[1:2])


def _patch(args: list[str], is_dir):
    a = Args(args, {"-d", "--directory", "-i", "--input", "-o", "--output", "-p", "-B", "--prefix", "-r",
                    "--reject-file", "-z", "--suffix", "-D", "--ifdef", "-F", "--fuzz"})
    if a.value("-o", "--output"):
        return Writes(files=[a.value("-o", "--output")])
    named = a.operands[:1]   # patch FILE [PATCHFILE]: that file
    return Writes(files=named) if named else Writes(whole_trees=[a.value("-d", "--directory") or "."])


# What each writer writes, by program name. Programs that also read (cp, tar, sort) are judged by these writes
# alone when they come near a protected path.
WRITERS = {
    "cp": _copy, "install": _copy, "mv": _move, "rm": _remove, "unlink": _remove, "rmdir": _remove,
    "shred": _operands({"-n", "--iterations", "-s", "--size", "--random-source"}),
    "ln": _link, "link": _link, "touch": _operands({"-r", "--reference", "-d", "--date", "-t"}),
    "truncate": _operands({"-s", "--size", "-r", "--reference"}), "mkdir": _operands({"-m", "--mode"}),
    "mkfifo": _operands({"-m", "--mode"}), "tee": _operands(),
    "chmod": _operands({"--reference"}, recursive="R", skip_first=1),
    "chown": _operands({"--reference", "--from"}, recursive="R", skip_first=1),
    "chgrp": _operands({"--reference"}, recursive="R", skip_first=1),
    "setfacl": _operands({"-m", "-x", "-M", "-X", "--set", "--set-file"}, recursive="R"),
    "chattr": _operands({"-v", "-p"}, recursive="R", skip_first=1), "dd": _dd,
    "sed": _in_place, "perl": _in_place, "ruby": _in_place, "awk": _awk, "gawk": _awk,
    "tar": _tar, "bsdtar": _tar, "zip": _zip, "unzip": _unzip, "rsync": _rsync, "scp": _scp,
    "sort": _sort, "uniq": _uniq, "xxd": _xxd, "patch": _patch,
    "sponge": _operands(), "vi": _operands({"-c", "-S", "-u", "-U", "-i", "-W"}),
    "vim": _operands({"-c", "-S", "-u", "-U", "-i", "-W"}), "nvim": _operands({"-c", "-S", "-u", "-i"}),
    "ed": _operands(), "ex": _operands({"-c", "-S"}), "nano": _operands(), "emacs": _operands(),
    "sqlite3": _operands(skip_first=0),
    **{name: _compressor(name) for name in (*_COMPRESSED, *_DECOMPRESS)},
}
_NEEDS_CWDS = {"tar", "bsdtar", "unzip"}


def writes_of(words: list[str], is_dir, cwds=()) -> Writes | None:
    """What the command ``words`` (already unwrapped) writes: a Writes (empty for a program not on the list), or
    None when it does what the hook cannot follow."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    fn = WRITERS.get(name)
    if fn is None:
        return Writes()
    if name in _NEEDS_CWDS:
        return fn(words[1:], is_dir, cwds)
    return fn(words[1:], is_dir)


# ------------------------------------------------------------------------------------------ folders read whole

_GREP_RECURSIVE = re.compile(r"^-[A-Za-z]*[rR]")


def reads_recursively(words: list[str]) -> list[str] | None:
    """The folders a program reads whole, file contents included (``grep -r``, ``rg``, ``cp -r``, ``tar c``,
    ``zip -r``, ``rsync``), with ``.`` where it reads its working folder by default; None when it does not.
    ``rg`` and ``ag`` skip hidden folders unless told otherwise: a ``.``-folder on the way is said with a
    leading ``!`` (``!hidden``)."""
    name = words[0].rsplit("/", 1)[-1] if words else ""
    args = words[1:]
    a = Args(args, {"-e", "-f", "--regexp", "--file", "-m", "--max-count", "-A", "-B", "-C", "--include",
                    "--exclude", "--exclude-dir", "-g", "--glob", "-t", "--type", "-T", "--type-not", "-d",
                    "--directories", "-D", "--devices", "--color", "--colour", "-j", "--threads", "-M",
                    "--max-columns", "--max-depth", "--maxdepth"})
    if name in ("grep", "egrep", "fgrep", "zgrep"):
        recursive = any(_GREP_RECURSIVE.match(f) for f in a.flags) or "--recursive" in a.flags or \
            "--dereference-recursive" in a.flags or a.value("-d", "--directories") == "recurse"
        if not recursive:
            return None
        pattern_given = a.value("-e", "--regexp", "-f", "--file") is not None
        return (a.operands if pattern_given else a.operands[1:]) or ["."]
    if name in ("rg", "ag", "ack", "ack-grep", "pt", "ugrep", "sift"):
        pattern_given = a.value("-e", "--regexp", "-f", "--file") is not None
        roots = (a.operands if pattern_given or "--files" in a.flags else a.operands[1:]) or ["."]
        hidden = a.has("u", "--hidden", "--unrestricted", "--no-ignore-dot", "-a", "--all-types") or name in (
            "ack", "ack-grep", "ugrep", "sift")
        return roots if hidden else ["!hidden"] + roots
    if name in ("cp", "scp") and a.has("rRa", "--recursive", "--archive"):
        return a.operands
    if name in ("rsync", "tar", "bsdtar", "zip", "7z", "7za", "cpio", "pax", "sync", "rclone", "restic", "borg"):
        return a.operands or ["."]
    return None
