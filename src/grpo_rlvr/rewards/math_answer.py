"""``math``: is the completion's final answer mathematically equal to the ground truth (math-verify)?

The answer is found where models write it (``_answer``; the brief's tag when its ``format`` reward defines
one). Numbers compare exactly (rationals) or relatively (floats), never with an absolute tolerance
(``_math_compare``); math-verify's set, interval and equation semantics stay. math-verify guards parsing with
``signal.alarm``, which only works on a main thread; TRL may call rewards off it. Here the checks run in
persistent worker processes (``_math_worker``) where a timer works, warmed up before their first item, and the
parent enforces a wall-clock deadline per item as well: a worker that still hangs is killed and replaced, the
item scores 0 with reason "timed out", and the batch goes on. So a pathological expression can never hang
training, in any thread.

One final answer is paid, never a hedge: an answer that offers several values ("12 (or 13)", "\\boxed{12} or
\\boxed{13}", "12 = 13", "12 \\pm 1") scores 0 against a ground truth that is one value, however math-verify
would read it; it counts only against a ground truth that is itself several values (a set, a list, an interval).
An answer that leaves the work undone scores 0 as well: against a ground truth that is one number, an
expression that is not a number written out ("5+7", ``\\binom{8}{4}``; ``evaluated``), and, whatever the ground
truth, an expression copied word for word from the question (``\\sqrt{245}`` for "Simplify $\\sqrt{245}$").
The rules are ``_answer_shape``'s, applied by ``_math_text`` and, where the parsed ground truth decides,
``_math_worker``.
"""

from __future__ import annotations

import json
import math
import os
import selectors
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._answer import (
    BOXES,
    EXTRACT_MODES,
    SEVERAL,
    describe_missing,
    find_answer,
    find_answers,
)
from grpo_rlvr.rewards._math_compare import REL_TOL, install
from grpo_rlvr.rewards._math_text import gold_choice, written
from grpo_rlvr.rewards._reward import Reward, Scored, completion_text, ground_truth_check, source_fingerprint

# The clean start the gate's check uses: site-packages set up as ``site`` does (the venv, ``.pth`` path lines,
# an editable install's package folders) with no ``.pth`` code and no sitecustomize run.
_CLEAN_START = Path(__file__).resolve().parents[1] / "run" / "_clean_start.py"


def _spawn() -> subprocess.Popen:
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # `-I -S`: no PYTHONPATH, no user site, no working directory, no .pth code, no sitecustomize. The module path
    # is the interpreter's own, rebuilt by the clean start, never this process's sys.path (a test or a reward may
    # have put a folder first on it), so a worker started by the gate's clean check is as clean as the check.
    # The folder this process imported grpo_rlvr from comes first when the clean path lacks it (a checkout run with
    # its src/ on the path rather than installed), so the worker runs this very code.
    root = str(_CLEAN_START.parents[2])
    boot = (f"import runpy, sys; runpy.run_path({str(_CLEAN_START)!r})['setup_site'](); "
            f"sys.path[:0] = [] if {root!r} in sys.path else [{root!r}]; "
            "from grpo_rlvr.rewards._math_worker import main; main()")
    # Unbuffered binary pipes: lines are split here (``_read_line``), so none can sit in a buffer unseen by select.
    # stderr goes to a file, read back only to explain a worker that did not start.
    errors = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", boot], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=errors, bufsize=0, env=env)
    proc.errors = errors
    return proc


def _stderr_tail(proc: subprocess.Popen) -> str:
    errors = getattr(proc, "errors", None)
    if errors is None:
        return ""
    try:
        errors.seek(0)
        text = errors.read()[-2000:].decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""
    return f"; its last words: {text.splitlines()[-1][:300]}" if text else ""


WAIT_FOR_CPU = 10   # × an item's deadline: how long a worker that got too little CPU to finish is waited for


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used; infinity when /proc cannot say (then the clock decides,
    as it would without this)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return math.inf


class Spare:
    """One worker process kept warming in reserve, so a killed worker is replaced by a warm one at once."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def fill(self) -> None:
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._proc = _spawn()

    def take(self) -> subprocess.Popen:
        with self._lock:
            proc = self._proc if self._proc is not None and self._proc.poll() is None else _spawn()
            self._proc = _spawn()
            return proc

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                self._proc.kill()
                self._proc.wait()
                self._proc = None


class MathWorker:
    """One persistent ``_math_worker`` process, warmed before its first item and replaced on a hang or a crash.

    Bounds: an item's verdict is awaited ``2 × timeout_s + 1`` s from the moment the warm worker takes it, for the
    first item of a worker as for any other, and longer only while the worker has used less than its ``2 ×
    timeout_s`` of CPU on it (a loaded machine), up to ``WAIT_FOR_CPU`` times that; the worker's start-up (imports and a warm-up check,
    seconds) happens before any item is handed over and is bounded by ``STARTUP_S``, separately. A killed worker
    is replaced by the pool's spare, which has been warming meanwhile. Thread-safe.
    """

    STARTUP_S = 120.0  # a worker that is not ready by then is broken: RewardError, never a score

    def __init__(self, timeout_s: float, rel_tol: float, spare: Spare | None = None,
                 approximate_fractions: bool = True):
        self.timeout_s = timeout_s
        self.rel_tol = rel_tol
        self.approximate_fractions = approximate_fractions
        self._spare = spare
        self._proc: subprocess.Popen | None = None
        self._ready = False
        self._buf = b""  # bytes read from the process past the last full line
        self._lock = threading.Lock()

    def _use(self, proc: subprocess.Popen | None) -> None:
        self._proc, self._ready, self._buf = proc, False, b""

    def spawn(self) -> None:
        """Start the process (if none) without waiting for it; ``_ensure_ready`` waits."""
        if self._proc is None or self._proc.poll() is not None:
            self._use(self._spare.take() if self._spare is not None and self._proc is not None else _spawn())

    def _read_line(self, timeout_s: float) -> bytes | None:
        """The next line from the process within ``timeout_s`` (None: timed out; b"": the process ended)."""
        end = time.monotonic() + timeout_s
        fd = self._proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = end - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    return b""
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line + b"\n"

    def wait_ready(self) -> None:
        with self._lock:
            self._ensure_ready()

    def _ensure_ready(self) -> subprocess.Popen:
        self.spawn()
        proc = self._proc
        if not self._ready:
            line = self._read_line(self.STARTUP_S)
            if not line or b'"ready"' not in line:
                ended = line == b""
                self._kill()
                said = _stderr_tail(proc)
                raise RewardError(f"reward 'math': the math-verify worker "
                                  f"{'ended before it was ready' if ended else f'was not ready within {self.STARTUP_S:.0f} s'}"
                                  f" ({sys.executable} -I -S: grpo_rlvr.rewards._math_worker){said}; check that "
                                  "math-verify is installed in this environment")
            self._ready = True
        return proc

    def _kill(self, respawn: bool = False) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
        self._use(self._spare.take() if respawn and self._spare is not None else None)  # the spare is warm

    def check(self, pairs: list[tuple[str, str | list[str], dict]]) -> list[dict]:
        """Verdicts for (gold, pred, facts) items, in order; a list of preds is equal when every one is. ``facts``:
        what the worker needs to know of the written answer (``hedge``, ``number``, ``evaluated``)."""
        with self._lock:
            results: list[dict] = []
            while len(results) < len(pairs):
                results.extend(self._run(pairs[len(results):]))
            return results

    def _run(self, pairs: list[tuple[str, str | list[str], dict]]) -> list[dict]:
        proc = self._ensure_ready()
        payload = "".join(json.dumps({"gold": g, "pred": p, "timeout_s": self.timeout_s, "rel_tol": self.rel_tol,
                                      "approximate_fractions": self.approximate_fractions, **facts})
                          + "\n" for g, p, facts in pairs).encode()
        writer = threading.Thread(target=self._write, args=(proc, payload), daemon=True)
        writer.start()
        out: list[dict] = []
        budget_s = self.timeout_s * 2          # the worker's CPU for one item (its own timer holds it to that)
        deadline_s = budget_s + 1.0            # per item, from when the worker takes it (the previous verdict)
        starved_s = deadline_s * WAIT_FOR_CPU  # a worker the machine gives no CPU is waited for this long at most
        cpu, began = _cpu_s(proc.pid), time.monotonic()
        while len(out) < len(pairs):
            line = self._read_line(deadline_s)
            if line is None:
                if _cpu_s(proc.pid) - cpu < budget_s and time.monotonic() - began < starved_s:
                    continue   # past the clock but not its CPU budget: a loaded machine, not a hang
                self._kill(respawn=True)
                out.append({"status": "timeout"})
                return out
            if not line:  # the worker died on this item
                self._kill(respawn=True)
                out.append({"status": "error", "error": "math worker crashed"})
                return out
            out.append(json.loads(line))
            cpu, began = _cpu_s(proc.pid), time.monotonic()
        return out

    @staticmethod
    def _write(proc: subprocess.Popen, payload: bytes) -> None:
        try:
            proc.stdin.write(payload)
            proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass  # the reader notices the dead worker

    def close(self) -> None:
        with self._lock:
            self._kill()


class MathPool:
    """Several ``MathWorker``s; a batch is split into contiguous slices checked in parallel (one thread each)."""

    def __init__(self, timeout_s: float, workers: int, rel_tol: float, approximate_fractions: bool = True):
        self.spare = Spare()
        self.workers = [MathWorker(timeout_s, rel_tol, self.spare, approximate_fractions) for _ in range(workers)]

    def warm(self, wait: bool = False) -> None:
        """Start every worker and the spare now, in parallel (each warms up on its own); with ``wait``, block
        until every worker is ready."""
        for w in self.workers:
            with w._lock:
                w.spawn()
        self.spare.fill()
        if wait:
            for w in self.workers:
                w.wait_ready()

    def close(self) -> None:
        """End every worker and the spare (a later check starts them again)."""
        for w in self.workers:
            w.close()
        self.spare.close()

    def pids(self) -> list[int]:
        """Process ids of the workers and the spare (for measuring their CPU time)."""
        procs = [w._proc for w in self.workers] + [self.spare._proc]
        return [p.pid for p in procs if p is not None]

    def check(self, pairs: list[tuple[str, str | list[str], dict]]) -> list[dict]:
        if not pairs:
            return []
        self.warm()
        if len(pairs) < 8 or len(self.workers) == 1:
            return self.workers[0].check(pairs)
        k = len(self.workers)
        size = -(-len(pairs) // k)
        slices = [pairs[i:i + size] for i in range(0, len(pairs), size)]
        results: list[list[dict]] = [[] for _ in slices]

        def run(i: int) -> None:
            results[i] = self.workers[i].check(slices[i])

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(slices))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return [r for part in results for r in part]


def math_reward(extract: str = "auto", tag: str = "answer", timeout_s: float = 5.0, answer_column: str = "answer",
                rel_tol: float = REL_TOL, workers: int | None = None, several: str = "last", boxes: str = "join",
                thousands: bool = True, mixed_numbers: bool = True, choices: bool = True,
                percent_as_fraction: bool = True, approximate_fractions: bool = True, evaluated: bool = True) -> Reward:
    """Build the math-equivalence correctness reward.

    Args:
        extract: where the answer is: ``auto`` (an ``<answer>`` tag, ``\\boxed{}``, ``####``, "the answer is",
            inline math), ``tag``, ``boxed``, ``last_number``, ``full``; inside the brief's format tag when
            its ``format`` reward defines one.
        tag: the tag for ``extract="tag"`` (checked as the ``format`` reward checks it).
        timeout_s: seconds per parse-and-compare step; an item is given 2 × ``timeout_s`` in the worker and
            is cut off at 2 × ``timeout_s`` + 1 s, in any thread.
        answer_column: the dataset column holding the ground truth.
        rel_tol: relative tolerance when a float is compared (never an absolute one); rationals compare exactly.
        workers: math-verify worker processes checking a batch in parallel (default: CPU count, at most 4).
        several: when markers state different final answers ("#### 120", then "The answer is 121"): ``last``
            (the one written last counts), ``priority`` (tag, boxed, ####, "the answer is", the first present) or
            ``all`` (every one must be right).
        boxes: ``join``: boxes parted only by "and", "or", commas or "x =" are one answer ("\\boxed{5} and
            \\boxed{-2}" is the set {5, -2}); ``last``: the last box alone.
        thousands: drop thousands separators ("1,250", "1{,}250", "1\\,250" are 1250); a comma followed by exactly
            three digits, no space, inside a number.
        mixed_numbers: "2 1/2 pizzas" (a whole number, a space, a fraction) is 5/2; without it the text goes to
            math-verify as written, which does not read it so (it does read ``2\\frac{1}{2}`` as 5/2).
        choices: a ground truth that is one letter A–E is compared with the answer's choice label ("(C) 12"
            counts for C); a label before a value ("(C) 12" against 12) is dropped.
        percent_as_fraction: for a ground truth in percent (50\\%), the fraction counts too (0.5), as
            math-verify has it; false: only the percent number (50 or 50\\%) counts.
        approximate_fractions: a decimal within ``rel_tol`` counts for an exact fraction (0.3333333 for 1/3);
            false: it must equal it exactly (0.5 for 1/2 still counts), for data whose questions ask for exact
            forms ("express your answer as a common fraction").
        evaluated: for a ground truth that is one number (72, 0.5, \\frac{3}{4}), the answer must be a number
            written out too (a fraction, a mixed number, scientific notation count; "5+7", ``2^{10}``,
            ``\\binom{8}{4}`` do not: an unevaluated expression leaves the arithmetic undone); false: any
            expression equal to it counts. A ground truth written as an expression (``2^{10}``, ``\\sqrt{2}/2``)
            accepts any equal expression either way.
    Raises:
        RewardError: bad parameters.
    """
    if extract not in EXTRACT_MODES:
        raise RewardError(f"reward 'math': params.extract is {extract!r}; use one of {', '.join(EXTRACT_MODES)}")
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not 0 < timeout_s < 3600:
        raise RewardError(f"reward 'math': params.timeout_s is {timeout_s!r}; use a positive number of seconds")
    if isinstance(rel_tol, bool) or not isinstance(rel_tol, (int, float)) or not 0 <= rel_tol < 1:
        raise RewardError(f"reward 'math': params.rel_tol is {rel_tol!r}; use a number in [0, 1) (e.g. 1e-6)")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise RewardError(f"reward 'math': params.workers is {workers!r}; use a positive integer or null")
    for key, value, allowed in (("several", several, SEVERAL), ("boxes", boxes, BOXES)):
        if value not in allowed:
            raise RewardError(f"reward 'math': params.{key} is {value!r}; use one of {', '.join(allowed)}")
    flags = {"thousands": thousands, "mixed_numbers": mixed_numbers, "choices": choices,
             "percent_as_fraction": percent_as_fraction, "approximate_fractions": approximate_fractions,
             "evaluated": evaluated}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise RewardError(f"reward 'math': params.{key} is {value!r}; use true or false")
    pool = MathPool(float(timeout_s), workers or min(4, os.cpu_count() or 1), float(rel_tol), approximate_fractions)
    truth = ground_truth_check("math", answer_column)

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        out: list[Scored | None] = [None] * len(texts)
        jobs, where = [], []
        for i, (text, row) in enumerate(zip(texts, rows, strict=True)):
            gold = str(truth(row))
            found = [a for a in find_answers(text, extract, tag, several, boxes) if a.text.strip()]
            if not found:
                out[i] = Scored(0.0, describe_missing(extract, tag))
                continue
            shown = " and ".join(a.text for a in found)
            prompt = prompt_text(row.get("prompt"))
            forms = [written(a.text, gold, thousands=thousands, mixed_numbers=mixed_numbers, choices=choices,
                             bare=a.where == "the one-line completion", prompt=prompt) for a in found]
            bad = next((f.problem for f in forms if f.problem), None)
            letter = gold_choice(gold, choices)
            if bad is not None or letter is not None:
                ok = bad is None and all(f.choice == letter for f in forms)
                out[i] = Scored(float(ok), bad or f"answer {shown:.40} {'≡' if ok else '≠'} {gold:.40}")
                continue
            preds = [f.text for f in forms]
            if not percent_as_fraction and "%" in gold:
                preds = [p if "%" in p else _with_percent(p) for p in preds]
            facts = {"hedge": next((f.hedge for f in forms if f.hedge), None),
                     "number": all(f.number for f in forms), "evaluated": evaluated}
            jobs.append((gold, preds if len(preds) > 1 else preds[0], facts))
            where.append((i, shown))
        for (i, got), res in zip(where, pool.check(jobs), strict=True):
            out[i] = _verdict(res, got, rows[i][answer_column])
        return out  # type: ignore[return-value]

    # The workers end with the scorer: a process that builds rewards again and again (a notebook, a test suite)
    # would otherwise keep three idle interpreters for each one it built
    weakref.finalize(scorer, pool.close)
    params = {"extract": extract, "tag": tag, "timeout_s": timeout_s, "answer_column": answer_column,
              "rel_tol": rel_tol, "several": several, "boxes": boxes, **flags}
    return Reward("math", "correctness", params, scorer,
                  source_fingerprint(math_reward, MathWorker, find_answer, install, written, extra=params),
                  columns=(answer_column,), warmer=pool.warm, check_row=truth)


def prompt_text(prompt: object) -> str:
    """The text of a prompt: a string, or every message's content of a chat prompt (system prompt included)."""
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    if isinstance(prompt, (list, tuple)):
        return "\n".join(str(m.get("content", "")) if isinstance(m, dict) else str(m) for m in prompt)
    return completion_text(prompt)


def _with_percent(pred: str) -> str:
    """``pred`` (math-verify input) read as a percent: "$0.5$" becomes "$0.5\\%$"."""
    return pred[:-1] + "\\%$" if pred.endswith("$") else pred + "\\%"


def _verdict(res: dict, got: str, want: object) -> Scored:
    status = res.get("status")
    if status == "ok":
        if res["equal"]:
            return Scored(1.0, f"answer {got:.40} ≡ {want!s:.40}")
        return Scored(0.0, f"answer {got:.40} ≠ {want!s:.40}")
    if status == "unparsed":
        return Scored(0.0, f"answer {got:.40} is not a parseable expression")
    if status == "hedge":
        return Scored(0.0, f"answer {got:.40} hedges ({res.get('why', 'several values')}); the ground truth is "
                           "one value")
    if status == "unevaluated":
        return Scored(0.0, f"answer {got:.40} is not worked out to a number, and the ground truth is one")
    if status == "timeout":
        return Scored(0.0, f"timed out checking answer {got:.40}")
    if status == "bad_gold":
        return Scored(None, f"ground truth {want!s:.40} does not parse; sample skipped")
    return Scored(0.0, f"could not check answer {got:.40}: {res.get('error', 'unknown error')}")
