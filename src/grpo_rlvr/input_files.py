"""Reading the files a user points at: bytes to text, then YAML, JSON or JSON lines, with limits.

Every failure is an ``InputFileError`` that names the file (and the line, where there is one), says what is
wrong and how to fix it; the CLI prints it as ``Error: …`` and exits 2. The limits hold before any value is
used or printed:

- text must be UTF-8 (a BOM is tolerated);
- nesting deeper than ``MAX_DEPTH`` is refused (a brief is four levels deep; Python's own parsers would
  otherwise overflow the stack);
- YAML aliases may not expand past ``MAX_YAML_NODES`` nodes (the "billion laughs" document is a few lines
  that expand to 10⁹ values), counted on the composed node graph, so nothing is ever expanded to count it; an
  alias inside the node it names (``a: &a [*a]``) is refused, since it would expand without end;
- a mapping key must be text (``text_keys=False``: a JSON scalar); a list, mapping, set, timestamp, binary
  value or NaN as a key is refused with the key as written and how to quote it;
- a value that a tag or YAML's resolver sends to a converter that cannot read it (``2024-13-45``,
  ``!!int x``) is an error at its line, not the converter's exception;
- duplicate keys are refused, in YAML and JSON alike: the parser would keep the last one silently, and
  consumers disagree about which value wins;
JSON lines are read by ``grpo_rlvr.jsonl`` on top of ``parse_json``. Not covered: parquet (read by pyarrow
where it is needed) and the size of a file (readers that may see large files stream them).
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import yaml

from grpo_rlvr.errors import InputFileError

MAX_DEPTH = 100
MAX_YAML_NODES = 200_000
_MERGE_TAG = "tag:yaml.org,2002:merge"


# --- text ---------------------------------------------------------------------------------------------------

def decode_text(data: bytes, source: str) -> str:
    """UTF-8 bytes to text; an error names the first bad byte and its offset."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        bad = data[e.start:e.start + 1].hex()
        raise InputFileError(f"{source}: not UTF-8 text (byte 0x{bad} at offset {e.start}); save the file as "
                             "UTF-8") from None


def open_binary(p: Path, what: str = "file"):
    """Open ``p`` for binary reading; missing, a folder, or unreadable: an InputFileError saying which."""
    try:
        return p.open("rb")
    except FileNotFoundError:
        raise InputFileError(f"{what} {p}: file not found; check the path") from None
    except IsADirectoryError:
        raise InputFileError(f"{what} {p}: is a folder, not a file; pass the file itself") from None
    except PermissionError:
        raise InputFileError(f"{what} {p}: permission denied; make it readable by this user") from None
    except OSError as e:
        raise InputFileError(f"{what} {p}: cannot read it ({e.strerror or e})") from None


def read_bytes(path: Path | str, what: str = "file") -> bytes:
    """The file's bytes (errors as in ``open_binary``)."""
    p = Path(path)
    with open_binary(p, what) as fh:
        try:
            return fh.read()
        except OSError as e:  # e.g. EISDIR on some systems only at read time
            raise InputFileError(f"{what} {p}: cannot read it ({e.strerror or e})") from None


def read_text(path: Path | str, what: str = "file") -> str:
    """The file as UTF-8 text, or an InputFileError naming it."""
    return decode_text(read_bytes(path, what), f"{what} {path}")


# --- YAML ---------------------------------------------------------------------------------------------------

class _LimitError(Exception):
    def __init__(self, message: str, mark=None):
        super().__init__(message)
        self.mark = mark


_KEY_KINDS = {int: "a number", float: "a number", bool: "a boolean (YAML reads yes/no/on/off so)",
              type(None): "null", datetime.date: "a date", datetime.datetime: "a timestamp",
              bytes: "binary data (!!binary)"}
_NODE_KINDS = {yaml.SequenceNode: "a list", yaml.MappingNode: "a mapping"}
_TAGGED_KINDS = {"set": "a set (!!set)", "omap": "an ordered mapping (!!omap)", "pairs": "a list of pairs (!!pairs)"}
# What PyYAML's scalar constructors raise on a value its resolver or a tag routed to them but cannot convert:
# `2024-13-45` (a date with month 13), `!!int x`, `!!bool maybe`, `!!timestamp x`, `!!int '-'`.
_SCALAR_FAILURES = (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError)


def _source_text(node, limit: int = 40) -> str:
    """The node as written in the document (its first ``limit`` characters), for messages."""
    start, end = node.start_mark, node.end_mark
    text = start.buffer[start.index:end.index] if start.buffer is not None else str(node.value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that bounds nesting while composing, refuses duplicate keys and keys that are not text (or,
    with ``text_keys=False``, not a JSON scalar), and turns a value its constructors cannot convert into an
    error at the value's line."""

    def __init__(self, stream, text_keys: bool):
        super().__init__(stream)
        self._depth = 0
        self._text_keys = text_keys

    def compose_node(self, parent, index):  # noqa: D102 - PyYAML hook
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _LimitError(f"nested deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node, deep=False):  # noqa: D102 - PyYAML hook
        try:
            return super().construct_object(node, deep=deep)
        except _SCALAR_FAILURES as e:
            kind = node.tag.rsplit(":", 1)[-1]
            raise _LimitError(f"{_source_text(node)!r} cannot be read as a YAML {kind} ({e}); quote it to keep it "
                              "as text, or write a valid value", node.start_mark) from None

    def _check_key(self, key_node):
        """The key's value, or a _LimitError saying why it cannot be a key and how to write it instead."""
        allowed = "text" if self._text_keys else "text, a number, a boolean or null"
        written = _source_text(key_node)
        quoted = json.dumps(written, ensure_ascii=False)  # a JSON string is a valid YAML double-quoted one
        if type(key_node) in _NODE_KINDS:  # unhashable once constructed: refuse before building it
            kind = _TAGGED_KINDS.get(key_node.tag.rsplit(":", 1)[-1], _NODE_KINDS[type(key_node)])
            raise _LimitError(f"a key is {kind} ({written}); a key must be {allowed}: quote it ({quoted}: …) or "
                              "move the structure into the value", key_node.start_mark)
        key = self.construct_object(key_node, deep=True)
        if isinstance(key, str):
            return key
        kind = _KEY_KINDS.get(type(key), f"a {type(key).__name__}")
        if self._text_keys or not isinstance(key, (int, float, type(None))):  # bool is an int
            raise _LimitError(f"key {written!r} is read as {kind}, not {allowed}; quote it ({quoted}: …)",
                              key_node.start_mark)
        if key != key:
            raise _LimitError(f"key {written!r} is read as NaN, which equals no other key, so duplicates of it "
                              f"cannot be found; quote it ({quoted}: …)", key_node.start_mark)
        return key

    def construct_mapping(self, node, deep=False):  # noqa: D102 - PyYAML hook
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self._check_key(key_node)
                if key in seen:
                    raise _LimitError(f"duplicate key {key!r} (first at line {seen[key] + 1}); keep one",
                                      key_node.start_mark)
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


def _children(node) -> list:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _expanded_size_and_depth(root) -> tuple[int, int]:
    """Nodes and depth of the tree the graph would expand to, memoised per node (linear in the graph).

    An alias inside the node it names (``a: &a [*a]``) would expand forever: that raises ``_LimitError``.
    """
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered and not yet counted: the path from the root to the current node
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in size:
            continue
        kids = _children(node)
        if not done:
            if key in open_nodes:
                raise _LimitError(f"an alias refers to a node that contains it ({_source_text(node)}), so it "
                                  "would expand without end; write the value out", node.start_mark)
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in size)
            continue
        open_nodes.discard(key)
        size[key] = 1 + sum(size[id(k)] for k in kids)
        depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
        if size[key] > MAX_YAML_NODES:  # stop counting early: the answer is already "too big"
            return size[key], depth[key]
    return size[id(root)], depth[id(root)]


def parse_yaml(text: str, source: str, text_keys: bool = True):
    """Parse one YAML document within the limits above. Returns the value (None for an empty document).

    ``text_keys`` refuses mapping keys that YAML reads as numbers, booleans or null (``1:``, ``yes:``).
    """
    loader = None
    try:
        loader = _BoundedLoader(text, text_keys)  # the reader refuses non-printable characters here already
        root = loader.get_single_node()
        if root is None:
            return None
        nodes, depth = _expanded_size_and_depth(root)
        if nodes > MAX_YAML_NODES:
            raise _LimitError(f"aliases expand to more than {MAX_YAML_NODES:,} values (an alias bomb?); "
                              "write the values out instead of nesting aliases")
        if depth > MAX_DEPTH:
            raise _LimitError(f"nested deeper than {MAX_DEPTH} levels once aliases are expanded")
        return loader.construct_document(root)
    except _LimitError as e:
        where = f" at line {e.mark.line + 1}" if e.mark is not None else ""
        raise InputFileError(f"{source}{where}: {e}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        raise InputFileError(f"{source}: not valid YAML{where}: {problem}; fix the syntax") from None
    except RecursionError:
        raise InputFileError(f"{source}: nested too deeply to parse; flatten it") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_yaml(path: Path | str, what: str = "file", text_keys: bool = True):
    return parse_yaml(read_text(path, what), f"{what} {path}", text_keys)


# --- JSON ---------------------------------------------------------------------------------------------------

class _DuplicateKey(ValueError):
    pass


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def json_depth(value, limit: int = MAX_DEPTH) -> int:
    """Depth of nested lists/dicts, counted without recursion; stops once past ``limit``."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((c, d + 1) for c in (v.values() if isinstance(v, dict) else v))
    return deepest


def parse_json(text: str, source: str, max_depth: int = MAX_DEPTH, strict: bool = True,
               fix: str = "fix the syntax"):
    """Parse JSON text: duplicate keys and nesting past ``max_depth`` are errors naming ``source``.

    ``strict=False`` accepts raw control characters inside strings (some writers leave them unescaped);
    ``fix`` ends the message of a syntax error.
    """
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicates, strict=strict)
    except _DuplicateKey as e:
        raise InputFileError(f"{source}: duplicate key {e.args[0]!r}; keep one") from None
    except json.JSONDecodeError as e:
        at = f"column {e.colno}" if "\n" not in text else f"line {e.lineno}, column {e.colno}"
        raise InputFileError(f"{source}: not valid JSON ({e.msg} at {at}); {fix}") from None
    except RecursionError:
        raise InputFileError(f"{source}: nested deeper than Python can parse; flatten it") from None
    except ValueError as e:  # an integer past Python's digit limit
        raise InputFileError(f"{source}: not valid JSON ({str(e)[:80]}); fix the value") from None
    if json_depth(value, max_depth) > max_depth:
        raise InputFileError(f"{source}: nested deeper than {max_depth} levels; flatten it")
    return value


def load_json(path: Path | str, what: str = "file", max_depth: int = MAX_DEPTH):
    return parse_json(read_text(path, what), f"{what} {path}", max_depth)
