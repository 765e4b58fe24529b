"""Feeding an execution its probes one test at a time, in the supervisor (``isolation.execution`` drives it).

The execution never receives the probes up front: it gets the next delivery (one test's probes and the setup
before them, ``judging.plan.Plan.deliveries``) only once every probe of the current one has answered on the result
channel, and after a test body only once what it started in its process group is killed (by the body runner before
its last answer, or by the loaded program when the runner ended, which it reports: ``{"k": "s"}``), so no test's
probes ever run with a later test's inputs in reach. A delivery for a new test body is preceded by a fork request when no
body runner is alive: the loaded program forks a process that runs the bodies that follow one after the other,
as pytest does, until one ends it or a module-level delivery comes (``isolation.child``). Where each delivery
was sent is recorded as an offset into the result channel (``sent_at``): the parent accepts a frame only between
its delivery's offset and the next one's, so a process that pretends to have answered gains nothing from the
inputs it then receives. A delivery holding a test class's set-up names its scope (``"o"``: run once per process,
``isolation.child._answer``). The supervisor parses the frames only to know when to go on (bounded: each complete
line once); the parent judges them.
Covered: pipelined writes that never block the supervisor, a test body whose process ends before it answered
(its later deliveries are skipped: ``skipped``), forged or garbled frames (the parent refuses them).
Not covered: judging anything; a process outside the body's group (in a session of its own, or started while the
program loaded) reading the job pipe and reporting a body's end (``{"k": "s"}``) itself: it then gets the next
test's inputs, holding only earlier ones (the sandbox docs' "not covered" list).
"""

from __future__ import annotations
import __future__

import json
import marshal
import os
import struct

_HEADER = struct.Struct(">I")  # as ``isolation.framing``
_RESULT = b'{"k": "r", "i": '  # how ``isolation.child`` writes a probe's frame (json.dumps of a dict in that order)
# Compiled probes, by (source, mode, probe index): a GRPO group sends the same tests with every completion.
_COMPILED: dict[tuple[str, str, int], object] = {}
_COMPILED_MAX = 4096
# As ``isolation.child`` compiles a probe it gets as text (its module's future import is inherited there).
_FLAGS = __future__.annotations.compiler_flag


class Feeder:
    """The supervisor's side of one execution's job pipe after the job itself: what to send next, and when."""

    def __init__(self, fd: int, probes: list, deliveries: list, once=()):
        self.fd = fd
        self.probes = probes
        self.deliveries = deliveries  # [unit, [probe indices], last of its unit]
        self.once = set(once)  # scopes run once per process (``judging.plan.Plan.once``)
        self.pending = bytearray()  # bytes queued for the job pipe
        self.next = 0  # the next delivery to send
        self.waiting: set[int] = set()  # probes of the last delivery sent that have not answered yet
        self.unit = 0  # the unit whose process reads the job pipe next
        self.last_unit = 0  # the unit of the last delivery sent
        self.loaded = False
        self.runner = False  # a body runner is alive: it reads the next body's deliveries
        self.quitting = False  # the runner exits after this body: nothing more is sent until its end is reported
        self.sent_at: list[int | None] = []  # per delivery: the result channel's length when it was sent
        self.parsed = 0  # how much of the result channel has been read as frames
        self.finished = False  # every delivery sent and answered: once written, the pipe is closed (EOF: exit)

    def prefetch(self) -> None:
        """Queue the first delivery (with the fork request before it when it is a test body's) before the program
        has loaded: the program may then see the first test's inputs while it loads, which tells it nothing the
        first test does not (every later test may know an earlier one's inputs anyway: a body runner starts from the
        loaded program, and the bodies share it); one round trip less per sample."""
        if self.deliveries:
            self._send_next(0)

    def feed(self, result: bytes | bytearray) -> None:
        """Read the new complete frames of the result channel, then queue whatever may be sent now."""
        end = result.rfind(b"\n") + 1
        if end > self.parsed:
            for line in bytes(result[self.parsed:end]).split(b"\n")[:-1]:
                self._frame(line)
            self.parsed = end
        while self.loaded and not self.waiting and not self._body_ending() and self.next < len(self.deliveries):
            self._send_next(len(result))
        self.finished = self.loaded and not self.waiting and self.next == len(self.deliveries)

    def _body_ending(self) -> bool:
        """A test body has answered its last delivery, its runner exits (``{"k": "q"}``, or no body comes next) and
        the loaded program has not yet reported its end (``{"k": "s"}``, sent once the runner's process group is
        killed): nothing more is sent until then, or a process the body left running could read the next test's
        inputs from the job pipe. A runner that takes the next body has killed that group before its last answer."""
        return self.unit == 0 and self.quitting

    def _frame(self, line: bytes) -> None:
        if line.startswith(_RESULT):  # the child's own frames start so: no need to parse a large value here
            head = line[len(_RESULT):len(_RESULT) + 12].split(b",", 1)[0].split(b"}", 1)[0]
            if head.isdigit():
                self.waiting.discard(int(head))
                return
        try:
            frame = json.loads(line)
        except (ValueError, RecursionError):
            return
        if type(frame) is not dict:
            return
        kind = frame.get("k")
        if kind == "load" and "e" not in frame:
            self.loaded = True
        elif kind == "r" and type(frame.get("i")) is int:
            self.waiting.discard(frame["i"])
        elif kind == "q":
            self.quitting = True
        elif kind == "s":  # the loaded program reaped the body runner
            self.runner = self.quitting = False
            if self.last_unit > 0 and self.waiting:
                self.waiting = set()  # the body's process ended before answering: the rest of it is skipped
                while self.next < len(self.deliveries) and self.deliveries[self.next][0] == self.last_unit:
                    self.sent_at.append(None)
                    self.next += 1
                self.unit = 0

    def _send_next(self, offset: int) -> None:
        unit, indices, last = self.deliveries[self.next]
        if unit != self.unit and unit > 0 and not self.runner:
            self._queue({"f": 1})
            self.runner = True
        self.unit = self.last_unit = unit
        final = self.next + 1 == len(self.deliveries)  # the child exits once it has answered: no EOF to wait for
        message = {"p": [[i, *compiled(self.probes[i], i)] for i in indices], "last": last, "end": final}
        once = {self.probes[i][2] for i in indices} & self.once if self.once else None
        if once:
            message["o"] = sorted(once)
        if unit > 0:
            message["b"] = 1  # a body's: the loaded program never runs it (it reads it only when the runner died)
            # the runner may take the next body once this one is done: no module-level delivery comes between
            message["stay"] = last and not final and self.deliveries[self.next + 1][0] > 0
            self.quitting = last and not message["stay"]
        self._queue(message)
        self.sent_at.append(offset)
        self.waiting = set(indices)
        self.next += 1
        if last and unit > 0:
            self.unit = 0  # between bodies: the runner reads the job pipe next, or the loaded program once it ended

    def _queue(self, message: dict) -> None:
        body = marshal.dumps(message)  # the child reads it with C code only (its builtins are the program's)
        self.pending += _HEADER.pack(len(body)) + body

    def write(self) -> None:
        """Write what the pipe takes now (the fd is non-blocking). A reader that is gone: the rest is dropped."""
        try:
            written = os.write(self.fd, self.pending[:1 << 16])
        except BlockingIOError:
            return
        except OSError:  # the execution is gone: nothing more will be read
            written = len(self.pending)
        del self.pending[:written]
        if self.finished and not self.pending:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def skipped(self) -> list[int | None]:
        """``sent_at`` for every delivery (None: never sent)."""
        return self.sent_at + [None] * (len(self.deliveries) - len(self.sent_at))


def compiled(probe: list, i: int) -> list:
    """Probe ``i`` (``[kind, source or leaf specs, scope]``) with each source compiled as ``isolation.child`` would
    compile it (``eval`` or ``exec``, file name ``<test i+1>``), so that the process that runs it only loads a code
    object: compiling in a test body's fresh fork copies ~40 pages of the loaded program (~0.25 ms a probe). A source
    that does not compile stays text: the execution then raises its error where it always did."""
    kind, body, scope = probe
    if kind == "leaves" and type(body) is list:
        return [kind, [_spec(spec, i) for spec in body], scope]
    return [kind, _code(body, i, "eval" if kind == "eval" else "exec"), scope]


def _spec(spec, i: int):
    """A leaf spec (``isolation.child._leaves``/``_value``) with its sources compiled."""
    if type(spec) is not list or not spec:
        return spec
    tag = spec[0]
    if tag in ("e", "n") and len(spec) > 1:
        return [tag, _code(spec[1], i, "eval"), *spec[2:]]
    if tag == "m" and len(spec) > 3:
        return [*spec[:3], _code(spec[3], i, "eval"), *spec[4:]]
    if tag == "k" and len(spec) == 3:
        return [tag, _spec(spec[1], i), _spec(spec[2], i)]
    if tag == "c" and len(spec) == 4 and type(spec[2]) is list and type(spec[3]) is list:
        return [tag, spec[1], [_spec(a, i) for a in spec[2]],
                [[pair[0], _spec(pair[1], i)] if type(pair) is list and len(pair) == 2 else pair for pair in spec[3]]]
    return spec


def _code(source, i: int, mode: str):
    if type(source) is not str:
        return source
    key = (source, mode, i)
    code = _COMPILED.get(key)
    if code is None:
        try:
            code = compile(source, f"<test {i + 1}>", mode, flags=_FLAGS, dont_inherit=True)
        except (SyntaxError, ValueError, OverflowError, RecursionError, MemoryError):
            return source
        if len(_COMPILED) >= _COMPILED_MAX:
            _COMPILED.clear()
        _COMPILED[key] = code
    return code
