"""What a strong assert's leaf is in the parent once its frame is decoded: plain data, or a marker saying how it
crossed (``Crossed``: as a subclass or a value that only compares as a built-in), that it could not cross
(``NotPlain``), or that evaluating it raised (``Raised``).

A marker is read only where the assert reads that leaf (``read``), as Python would: ``f(1) == 2 or g(2)`` never
reads ``g(2)`` when the first part holds, so what ``g(2)`` raised does not fail it. The truth of a value that is not
plain data is the one thing the parent takes from the sandbox about such a value (``truth``): it is that value's
own ``__bool__``, the program's to define.
Covered: the three markers, built from the leaf frames ``isolation.child`` writes (``from_frame``). Not covered: a
marker inside a container (a list holding an unplain value does not cross at all).
"""

from __future__ import annotations

from .plaindata import PLAIN_TYPES, crossed_as, decode, short_repr, type_name


class LeafError(Exception):
    """Reading leaf ``index``, which raised or is not plain data (``marker``); the assert fails, saying which."""

    def __init__(self, index: int, marker):
        super().__init__(index)
        self.index, self.marker = index, marker

    def reason(self, source: str) -> str:
        if type(self.marker) is Raised:
            return f"{source} raised {self.marker.describe()}"
        what = self.marker.what
        return f"{source} returned {what}" if what.endswith("not plain data") else f"{source} returned {what}, not plain data"


class Crossed:
    """A value that crossed as a built-in it is not exactly: ``kind`` "@" (a subclass of it) or "~" (it only
    compares as it: a numpy scalar, a keys view); ``name`` its type's name in the sandbox."""

    __slots__ = ("kind", "name", "value")

    def __init__(self, value, kind: str, name: str):
        self.value, self.kind, self.name = value, kind, name


class NotPlain:
    """A value that could not cross (``what`` says why), with its truth as its own ``__bool__`` gave it (None when
    that raised) and the plain built-in types it is an instance of (``isa``, by name)."""

    __slots__ = ("isa", "truth", "what")

    def __init__(self, what: str, truth: bool | None = None, isa: tuple[str, ...] = ()):
        self.what, self.truth, self.isa = what, truth, isa


class Raised:
    """Evaluating the leaf raised: ``names`` the exception's class and its ancestors (``builtins.ValueError``...),
    ``message`` its text."""

    __slots__ = ("message", "names")

    def __init__(self, names: tuple[str, ...], message: str):
        self.names, self.message = names, message

    @property
    def type_name(self) -> str:
        return self.names[0].rpartition(".")[2] if self.names else "an exception"

    def describe(self) -> str:
        return f"{self.type_name}: {self.message}"[:300] if self.message else self.type_name


class ForeignType:
    """``type(x)`` of a value whose type is not a plain built-in: equal only to itself, never to ``int``, ``list``..."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<class {self.name!r}>"


def from_frame(item):
    """One leaf of a frame: the decoded value, or a marker. Raises ValueError/TypeError on a malformed item."""
    if type(item) is list and item and item[0] == "x" and len(item) in (2, 4) and type(item[1]) is str:
        truth, isa = (item[2], item[3]) if len(item) == 4 else (None, [])
        if truth not in (None, True, False) or type(isa) is not list or not all(n in PLAIN_TYPES for n in isa):
            raise ValueError("malformed not-plain marker")
        return NotPlain(item[1], truth, tuple(isa))
    if type(item) is list and len(item) == 3 and item[0] == "!":
        names, message = item[1], item[2]
        if type(names) is not list or not all(type(n) is str for n in names) or type(message) is not str:
            raise ValueError("malformed exception marker")
        return Raised(tuple(n[:200] for n in names[:32]), message[:4096])
    value = decode(item)
    kind = crossed_as(item)
    return Crossed(value, kind, type_name(item)) if kind else value


def read(value, index: int):
    """The plain value leaf ``index`` holds; raises ``LeafError`` for one that raised or is not plain data."""
    if type(value) is Crossed:
        return value.value
    if type(value) in (Raised, NotPlain):
        raise LeafError(index, value)
    return value


def crossed_name(value) -> str:
    """The sandbox type's name of a value that crossed as another built-in (for reasons), else ""."""
    return value.name if type(value) is Crossed else ""


def shown(value, limit: int = 80) -> str:
    """A leaf's value as a reason shows it."""
    if type(value) is Crossed:
        return short_repr(value.value, limit)
    if type(value) is Raised:
        return f"an exception ({value.describe()})"[:limit]
    if type(value) is NotPlain:
        return value.what[:limit]
    return short_repr(value, limit)
