"""pytest's built-in fixtures as a test body in the sandbox gets them: ``tmp_path``, ``tmp_path_factory``, ``capsys``,
``capfd``, ``monkeypatch`` and ``request`` (``judging.plan_pytest`` plans the calls). Loaded in the template, so the
jail, which hides this project's source, still has it; it runs in the program's process and only makes values the
test then reads (its output, a directory), which cross as any program value does.
Covered: what tests commonly call on them (``readouterr``, ``disabled``; ``setattr``/``delattr``/``setitem``/
``delitem``/``setenv``/``delenv``/``syspath_prepend``/``chdir``/``context``/``undo``; ``request.param``,
``request.node.name``, ``addfinalizer``). Not covered: the rest of pytest's API on them.
"""

from __future__ import annotations

import os
import sys


def tmp_path():
    """A fresh directory in the execution's own working directory, as a ``pathlib.Path``."""
    import pathlib
    import tempfile

    return pathlib.Path(tempfile.mkdtemp(prefix="pytest-", dir=os.getcwd()))


class TempPathFactory:
    def mktemp(self, basename: str = "tmp", numbered: bool = True):
        import pathlib
        import tempfile

        if numbered:
            return pathlib.Path(tempfile.mkdtemp(prefix=f"{basename}-", dir=os.getcwd()))
        path = pathlib.Path(os.getcwd()) / basename
        path.mkdir()
        return path

    def getbasetemp(self):
        import pathlib

        return pathlib.Path(os.getcwd())


class CaptureResult(tuple):
    """``(out, err)``, also as ``.out`` and ``.err`` (pytest's ``CaptureResult``)."""

    __slots__ = ()

    def __new__(cls, out: str, err: str):
        return super().__new__(cls, (out, err))

    @property
    def out(self) -> str:
        return self[0]

    @property
    def err(self) -> str:
        return self[1]


class Capture:
    """``capsys`` (``fd`` False: ``sys.stdout``/``sys.stderr``) or ``capfd`` (``fd`` True: file descriptors 1 and 2,
    so a subprocess's output is caught too)."""

    def __init__(self, fd: bool):
        import io
        import tempfile

        self.fd = fd
        self._saved = (sys.stdout, sys.stderr)
        self._streams = (io.StringIO(), io.StringIO())
        self._files = self._fds = None
        if fd:
            sys.stdout.flush()
            sys.stderr.flush()
            self._files = (tempfile.TemporaryFile(dir=os.getcwd()), tempfile.TemporaryFile(dir=os.getcwd()))
            self._fds = (os.dup(1), os.dup(2))
            os.dup2(self._files[0].fileno(), 1)
            os.dup2(self._files[1].fileno(), 2)
            self._streams = (open(1, "w", closefd=False, encoding="utf-8"), open(2, "w", closefd=False, encoding="utf-8"))
        sys.stdout, sys.stderr = self._streams
        self._read = [0, 0]

    def readouterr(self) -> CaptureResult:
        if not self.fd:
            out, err = (s.getvalue() for s in self._streams)
            for s in self._streams:
                s.seek(0)
                s.truncate()
            return CaptureResult(out, err)
        texts = []
        for k, (stream, file) in enumerate(zip(self._streams, self._files, strict=True)):
            stream.flush()
            file.seek(self._read[k])
            data = file.read()
            self._read[k] += len(data)
            texts.append(data.decode("utf-8", "replace"))
        return CaptureResult(*texts)

    def disabled(self):
        import contextlib

        @contextlib.contextmanager
        def off():
            current = sys.stdout, sys.stderr
            sys.stdout, sys.stderr = self._saved
            try:
                yield
            finally:
                sys.stdout, sys.stderr = current
        return off()

    def close(self) -> None:
        sys.stdout, sys.stderr = self._saved
        if self.fd:
            for stream in self._streams:
                stream.flush()
            os.dup2(self._fds[0], 1)
            os.dup2(self._fds[1], 2)


_NOTSET = object()


class MonkeyPatch:
    """pytest's ``monkeypatch``: every change undone by ``undo`` (at the test's end)."""

    def __init__(self):
        self._undo: list = []

    def setattr(self, target, name, value=_NOTSET, raising: bool = True):
        if value is _NOTSET:  # setattr("module.attr", value)
            if not isinstance(target, str):
                raise TypeError("use setattr(target, name, value) or setattr(target, value) with target a dotted path")
            value, (target, name) = name, _resolve(target)
        old = getattr(target, name, _NOTSET)
        if raising and old is _NOTSET:
            raise AttributeError(f"{target!r} has no attribute {name!r}")
        self._undo.append(lambda: setattr(target, name, old) if old is not _NOTSET else delattr(target, name))
        setattr(target, name, value)

    def delattr(self, target, name=_NOTSET, raising: bool = True):
        if name is _NOTSET:
            target, name = _resolve(target)
        if not hasattr(target, name):
            if raising:
                raise AttributeError(name)
            return
        old = getattr(target, name)
        self._undo.append(lambda: setattr(target, name, old))
        delattr(target, name)

    def setitem(self, mapping, name, value):
        old = mapping.get(name, _NOTSET)
        self._undo.append(lambda: mapping.__setitem__(name, old) if old is not _NOTSET else mapping.pop(name, None))
        mapping[name] = value

    def delitem(self, mapping, name, raising: bool = True):
        if name not in mapping:
            if raising:
                raise KeyError(name)
            return
        old = mapping[name]
        self._undo.append(lambda: mapping.__setitem__(name, old))
        del mapping[name]

    def setenv(self, name: str, value, prepend=None):
        value = str(value)
        if prepend and name in os.environ:
            value = value + prepend + os.environ[name]
        self.setitem(os.environ, name, value)

    def delenv(self, name: str, raising: bool = True):
        self.delitem(os.environ, name, raising)

    def syspath_prepend(self, path):
        saved = list(sys.path)
        self._undo.append(lambda: sys.path.__setitem__(slice(None), saved))
        sys.path.insert(0, str(path))

    def chdir(self, path):
        saved = os.getcwd()
        self._undo.append(lambda: os.chdir(saved))
        os.chdir(path)

    def context(self):
        import contextlib

        @contextlib.contextmanager
        def scoped():
            inner = MonkeyPatch()
            try:
                yield inner
            finally:
                inner.undo()
        return scoped()

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def _resolve(path: str):
    import importlib

    module_name, _, attr = path.rpartition(".")
    parts = module_name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            target = getattr(target, part)
        return target, attr
    raise AttributeError(f"cannot import {module_name!r}")


def warned(records) -> list:
    """What a block recorded by ``warnings.catch_warnings(record=True)`` warned: per warning, its category's
    ancestry (``module.qualname``) and its text, as plain data (the parent decides ``pytest.warns``)."""
    out = []
    for w in records:
        names = [f"{c.__module__}.{c.__qualname__}" for c in getattr(w.category, "__mro__", ())]
        out.append([names, str(w.message)[:4096]])
    return out


class _Node:
    def __init__(self, name: str):
        self.name = name
        self.nodeid = name

    def get_closest_marker(self, name):
        return None


class Request:
    """pytest's ``request``: ``param`` (a parametrized fixture's value), ``node.name``, ``addfinalizer``."""

    def __init__(self, name: str, param=_NOTSET):
        self.node = _Node(name)
        self.fixturename = None
        self._finalizers: list = []
        if param is not _NOTSET:
            self.param = param

    def addfinalizer(self, fn) -> None:
        self._finalizers.append(fn)

    def finish(self) -> None:
        while self._finalizers:
            self._finalizers.pop()()
