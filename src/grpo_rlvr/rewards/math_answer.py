"""``math``: is the completion's final answer mathematically equal to the ground truth (math-verify)?

math-verify guards parsing and comparison with ``signal.alarm``, which only works on a main thread; TRL may
call rewards off it and then turns the timeouts off. Here the checks run in a persistent worker process
(``_math_worker``) where the alarms work, and the parent enforces a wall-clock deadline per item as well:
a worker that still hangs is killed and restarted, the item scores 0 with reason "timed out", and the batch
goes on. So a pathological expression can never hang training, in any thread.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import threading

from grpo_rlvr.errors import RewardError
from grpo_rlvr.rewards._answer import EXTRACT_MODES, describe_missing, extract_answer
from grpo_rlvr.rewards._reward import Reward, Scored, source_fingerprint
from grpo_rlvr.rewards.format import default_pattern, not_counted, structure_problem


class MathWorker:
    """One persistent ``_math_worker`` process, restarted on a hang or a crash. Thread-safe."""

    def __init__(self, timeout_s: float):
        self.timeout_s = timeout_s
        self._proc: subprocess.Popen | None = None
        self._lock = threading.Lock()
        self._warm = False  # the first answer of a new worker includes importing math-verify (seconds)

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        return subprocess.Popen([sys.executable, "-m", "grpo_rlvr.rewards._math_worker"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1, env=env)

    def _kill(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc = None

    def check(self, pairs: list[tuple[str, str]]) -> list[dict]:
        """Verdicts for (gold, pred) pairs, in order."""
        with self._lock:
            results: list[dict] = []
            while len(results) < len(pairs):
                results.extend(self._run(pairs[len(results):]))
            return results

    def _run(self, pairs: list[tuple[str, str]]) -> list[dict]:
        if self._proc is None or self._proc.poll() is not None:
            self._proc, self._warm = self._start(), False
        proc = self._proc
        first_grace_s = 0.0 if self._warm else 30.0
        payload = "".join(json.dumps({"gold": g, "pred": p, "timeout_s": self.timeout_s}) + "\n" for g, p in pairs)
        writer = threading.Thread(target=self._write, args=(proc, payload), daemon=True)
        writer.start()
        out: list[dict] = []
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        try:
            while len(out) < len(pairs):
                deadline = self.timeout_s * 2 + 1.0 + (first_grace_s if not out else 0.0)
                if not sel.select(timeout=deadline):
                    self._kill()
                    out.append({"status": "timeout"})
                    return out
                line = proc.stdout.readline()
                if not line:  # the worker died on this item
                    self._kill()
                    out.append({"status": "error", "error": "math worker crashed"})
                    return out
                out.append(json.loads(line))
                self._warm = True
        finally:
            sel.close()
        return out

    @staticmethod
    def _write(proc: subprocess.Popen, payload: str) -> None:
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

    def __init__(self, timeout_s: float, workers: int):
        self.workers = [MathWorker(timeout_s) for _ in range(workers)]

    def check(self, pairs: list[tuple[str, str]]) -> list[dict]:
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


def math_reward(extract: str = "tag", tag: str = "answer", timeout_s: float = 5.0,
                answer_column: str = "answer", require_format: bool = True, workers: int | None = None) -> Reward:
    """Build the math-equivalence correctness reward.

    Args:
        extract: where the answer is (``tag``, ``boxed``, ``last_number``, ``full``).
        tag: the tag for ``extract="tag"``.
        timeout_s: seconds allowed per parse/compare (enforced in any thread).
        answer_column: the dataset column holding the ground truth.
        require_format: with ``extract="tag"``, count the answer only in a well-formed completion (see
            ``exact_match``).
        workers: math-verify worker processes checking a batch in parallel (default: CPU count, at most 4).
    Raises:
        RewardError: bad parameters.
    """
    if extract not in EXTRACT_MODES:
        raise RewardError(f"reward 'math': params.extract is {extract!r}; use one of {', '.join(EXTRACT_MODES)}")
    if not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
        raise RewardError(f"reward 'math': params.timeout_s is {timeout_s!r}; use a positive number of seconds")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise RewardError(f"reward 'math': params.workers is {workers!r}; use a positive integer or null")
    worker = MathPool(float(timeout_s), workers or min(4, os.cpu_count() or 1))
    rx = re.compile(default_pattern(tag), re.DOTALL)

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        out: list[Scored | None] = [None] * len(texts)
        jobs, where = [], []
        for i, (text, row) in enumerate(zip(texts, rows, strict=True)):
            if answer_column not in row:
                raise RewardError(f"reward 'math' needs the dataset column {answer_column!r}; map it under "
                                  f"dataset.columns in the brief (available: {sorted(row)})")
            problem = structure_problem(text, rx, tag) if require_format and extract == "tag" else None
            if problem:
                out[i] = Scored(0.0, not_counted(problem, tag))
                continue
            got = extract_answer(text, extract, tag)
            if got is None or not got.strip():
                out[i] = Scored(0.0, describe_missing(extract, tag))
                continue
            # math-verify extracts from LaTeX/expressions; wrap bare answers so both forms parse.
            jobs.append((str(row[answer_column]), f"${got}$" if "$" not in got and "\\(" not in got else got))
            where.append((i, got))
        for (i, got), res in zip(where, worker.check(jobs), strict=True):
            out[i] = _verdict(res, got, rows[i][answer_column])
        return out  # type: ignore[return-value]

    params = {"extract": extract, "tag": tag, "timeout_s": timeout_s, "answer_column": answer_column,
              "require_format": require_format}
    reward = Reward("math", "correctness", params, scorer,
                    source_fingerprint(math_reward, MathWorker, extract_answer, extra=params),
                    columns=(answer_column,))
    return reward


def _verdict(res: dict, got: str, want: object) -> Scored:
    status = res.get("status")
    if status == "ok":
        if res["equal"]:
            return Scored(1.0, f"answer {got:.40} ≡ {want!s:.40}")
        return Scored(0.0, f"answer {got:.40} ≠ {want!s:.40}")
    if status == "unparsed":
        return Scored(0.0, f"answer {got:.40} is not a parseable expression")
    if status == "timeout":
        return Scored(0.0, f"timed out checking answer {got:.40}")
    if status == "bad_gold":
        return Scored(None, f"ground truth {want!s:.40} does not parse; sample skipped")
    return Scored(0.0, f"could not check answer {got:.40}: {res.get('error', 'unknown error')}")
