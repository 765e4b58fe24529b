"""``grpo-rlvr demo``: every phase of the pipeline on CPU, on a tiny model built here, from a shipped brief.

build model → preflight (untrained: sft-first) → SFT warmup → preflight (grpo) → accuracy before →
inspect → oracle review (labelled as such) → gate → render → train (real GRPOTrainer, from the rendered
files) → accuracy after → diagnose → summary. The review is done by the task's independent oracle, which
only the demo may use; the artifact records it as the reviewer. ``task`` picks the task: ``arithmetic`` (the
default, ``arithmetic_task``) or ``spell_backward`` (reasoning-gym's task scored by its own verifier,
``spell_backward_task``); a task module gives its rows, target completions, oracle and brief. Each task has its
own default folder (``default_workdir``: ``runs/demo``, ``runs/demo-spell_backward``, ``runs/demo-code``), and
the demo never moves an inspection a person reviewed: it refuses a folder that holds one (exit 2) before it
writes anything. ``code`` (``code_task``) writes Python scored by unit tests in the sandbox, with the tiny
model's code alphabet (a task module's ``CHARACTERS``); its folder is where the by-hand pipeline starts from.
``tool`` (``tool_task``) gives the model a calculator through the brief's ``tools`` section: the tiny model gets a
tool-calling chat format (``tool_chat``), warms up on conversations, and every phase samples through TRL's tool loop
(``GRPOTrainer(tools=[add])``); the summary adds the tool-call rate before and after, and TRL's
``tools/call_frequency`` over training.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import shutil
import sys
import time
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType

from grpo_rlvr.demo import arithmetic_task as task
from grpo_rlvr.demo.model_cache import cache_key, cache_root
from grpo_rlvr.files import move_aside, write_json_atomic, write_jsonl_atomic
from grpo_rlvr.jsonl import read_jsonl
from grpo_rlvr.protected_targets import refuse_target
from grpo_rlvr.records.run_outputs import prior_outputs

TRAIN_ROWS = 2000
EVAL_PROMPTS = 100
# The warmup leaves a model that knows many answers but rarely says one well-formed when sampled at temperature
# 1: label smoothing keeps a floor of probability on every other token, so each of the ~16 tokens of
# "<answer>7</answer>" can go astray. It succeeds sometimes (sampled accuracy 0.06-0.09), and GRPO has two things
# to sharpen: the format and the answers it already half knows. At 150 steps with smoothing 0.075 the model knew
# fewer answers: GRPO then mostly learned the format, and at 2 of 10 seeds × CPU kernel sets the run collapsed
# onto well-formed wrong answers (entropy collapse, reward hacking) or fell short of 3×. At 250 steps with
# smoothing 0.1, every one of seeds 0-4 with both kernel sets was healthy and gained 4-8× (benchmarks/demo_range.py).
# At smoothing 0.3 sampled accuracy is 0 (preflight: SFT first).
WARMUP = {"steps": 250, "lr": 1e-3, "batch_size": 32, "label_smoothing": 0.1}
TASKS = {"arithmetic": "grpo_rlvr.demo.arithmetic_task", "spell_backward": "grpo_rlvr.demo.spell_backward_task",
         "code": "grpo_rlvr.demo.code_task", "tool": "grpo_rlvr.demo.tool_task"}
DEMO_OUTPUT = "out"  # the shipped demo briefs' output_dir (tests/demo/test_pipeline.py holds them to it)


def eval_sizes(samples: int) -> tuple[int, int, str | None]:
    """How ``--eval-samples SAMPLES`` is measured: (held-out prompts, samples per prompt, a note when the count
    used differs from ``samples``). Up to ``EVAL_PROMPTS``: that many prompts, one sample each; above, every one of
    the ``EVAL_PROMPTS`` prompts is sampled the same number of times, so a count that is not a multiple is rounded
    up, and the note says so."""
    samples = max(1, int(samples))
    if samples <= EVAL_PROMPTS:
        return samples, 1, None
    per = -(-samples // EVAL_PROMPTS)
    used = per * EVAL_PROMPTS
    note = None if used == samples else (
        f"note: --eval-samples {samples}: {used} samples are used ({per} for each of the {EVAL_PROMPTS} held-out "
        "prompts: every prompt is sampled as often as the others)")
    return EVAL_PROMPTS, per, note


def default_workdir(task_name: str) -> str:
    """Where ``grpo-rlvr demo --task NAME`` writes unless told: each task its own folder, so one demo never
    replaces another's brief, data, model link or inspection."""
    return "runs/demo" if task_name == "arithmetic" else f"runs/demo-{task_name}"


def refuse_a_persons_review(work: Path) -> None:
    """The demo reviews its inspection with the task's oracle and replaces the one an earlier demo left; an
    inspection in ``work`` that holds a person's verdicts is refused instead (nothing a person reviewed is moved).

    Raises:
        ConfigError: ``work``'s inspection folder holds verdicts by a person (exit 2).
    """
    from grpo_rlvr.errors import ConfigError
    from grpo_rlvr.inspection.run import reviewed_work

    insp = work / DEMO_OUTPUT / "inspection"
    n = reviewed_work(insp, count_oracle=False)
    if n:
        raise ConfigError(f"{insp}: holds {n} verdict(s) from a person's review; the demo would replace this "
                          "inspection with its oracle's, and it never moves a person's review. Run the demo in "
                          f"another folder (--workdir DIR), or move {insp} aside yourself")


def _task_module(name: str):
    """The task module ``name`` names (see ``TASKS``)."""
    if name not in TASKS:
        from grpo_rlvr.errors import ConfigError

        raise ConfigError(f"demo --task {name!r}: unknown task; choose one of {', '.join(TASKS)}")
    return importlib.import_module(TASKS[name])


def _correctness(t) -> str:
    return getattr(t, "CORRECTNESS", "exact_match")  # the correctness reward's name in the task's brief


class _Phases:
    """Prints each phase as it starts and records its duration."""

    def __init__(self, stream=sys.stderr):
        self.stream, self.times, self._cur, self._t = stream, {}, None, 0.0

    def start(self, name: str, what: str) -> None:
        self.stop()
        self._cur, self._t = name, time.monotonic()
        self.stream.write(f"[{name}] {what}\n")
        self.stream.flush()

    def stop(self) -> None:
        if self._cur is not None:
            self.times[self._cur] = round(time.monotonic() - self._t, 1)
            self._cur = None

    def note(self, text: str) -> None:
        self.stream.write(f"    {text}\n")
        self.stream.flush()

    def warmup_progress(self, step: int, steps: int, loss: float, seconds: float) -> None:
        """A line every few SFT warmup steps: step/total, the loss, the time so far and the ETA."""
        eta = seconds / step * (steps - step)
        self.stream.write(f"    warmup step {step}/{steps} | loss {loss:.3f} | {seconds:.0f}s"
                          + (f", ETA {eta:.0f}s" if step < steps else "") + "\n")
        self.stream.flush()

    def progress(self, done: int, total: int) -> None:
        """A terminal sees one line count up; a file or a pipe gets the finished count, one plain line."""
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError, OSError):
            tty = False
        if tty:
            self.stream.write(f"\r    sampling {done}/{total}" + ("\n" if done >= total else ""))
        elif done >= total:
            self.stream.write(f"    sampling {done}/{total}\n")
        self.stream.flush()


def _build_base_model(seed: int, fresh: bool, characters: list[str] | None = None,
                      tools: bool = False) -> tuple[Path, bool]:
    """The untrained tiny model's folder (with the alphabet ``characters``, default ``tiny_model.CHARACTERS``;
    ``tools``: the tool-calling chat format), and whether it came from the cache."""
    from grpo_rlvr.demo import tiny_model

    alphabet = {} if characters is None else {"characters": "".join(characters)}  # the default keeps its key
    if tools:
        alphabet["tools"] = True
    d = cache_root() / f"tiny-base-{cache_key(seed=seed, **alphabet)}"
    if not fresh and (d / "config.json").is_file():
        return d, True
    if tools:
        from grpo_rlvr.demo import tool_chat

        tok = tool_chat.build_tokenizer(characters)
    else:
        tok = tiny_model.build_tokenizer(characters)
    model = tiny_model.build_model(tok, seed)
    tiny_model.save_pretrained(model, tok, d, {"seed": seed, "kind": "untrained"})
    return d, False


def _warm_model(base: Path, rows: list[dict], seed: int, fresh: bool, t=task,
                warmup: dict | None = None, progress=None) -> tuple[Path, bool]:
    """The warmed-up model's folder (``warmup``: the SFT settings, default the task's), and whether it came from
    the cache. ``progress``: as ``warmup.sft_warmup``'s."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from grpo_rlvr.demo import tiny_model
    from grpo_rlvr.demo.warmup import sft_warmup, sft_warmup_chats

    warmup = warmup or getattr(t, "WARMUP", WARMUP)
    named = {} if t is task else {"task": t.NAME}  # the arithmetic demo's cache keeps its key
    if hasattr(t, "demonstrations"):   # a task that warms up on conversations (its code shapes them)
        named["task_code"] = hashlib.sha256(Path(t.__file__).read_bytes()).hexdigest()[:16]
    d = cache_root() / f"tiny-warm-{cache_key(seed=seed, **warmup, rows=len(rows), **named)}"
    if not fresh and (d / "config.json").is_file():
        return d, True
    tok = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base)
    if hasattr(t, "demonstrations"):
        losses = sft_warmup_chats(model, tok, t.demonstrations(rows, seed), seed=seed, tools=t.TOOLS,
                                  progress=progress, **warmup)
    else:
        losses = sft_warmup(model, tok, rows, [t.target_completion(r["answer"]) for r in rows], seed=seed,
                            progress=progress, **warmup)
    tiny_model.save_pretrained(model, tok, d, {"seed": seed, "kind": "sft-warmup", **warmup, **named,
                                               "final_loss": losses[-1]})
    return d, False


def sampled_accuracy(brief_path: Path, model_dir: Path, eval_rows: list[dict], per_prompt: int, seed: int,
                     t=task) -> dict:
    """Oracle-checked accuracy of ``model_dir``'s completions, sampled by the run's own trainer (the rollout road)
    with the brief's settings."""
    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.messages import last_user_text
    from grpo_rlvr.rollout.road import roll_out

    drawn = roll_out(load_brief(brief_path), eval_rows, per_prompt, seed, model=model_dir, batch_size=200)
    judged = [t.oracle_judgement(last_user_text(tr.prompt), tr.text) for tr in drawn.trajectories]
    n = len(judged)
    acc = {"samples": n, "accuracy": sum(c for _, c in judged) / n, "well_formed": sum(w for w, _ in judged) / n}
    if getattr(t, "TOOLS", None):   # a tool task: the share of samples that called a tool at least once
        acc["tool_call_rate"] = sum(tr.tool_calls > 0 for tr in drawn.trajectories) / n
    return acc


def oracle_review(inspection_dir: Path, t=task) -> dict:
    """Record the oracle's verdict on every sample: agree when the rewards say what the oracle says."""
    from grpo_rlvr.inspection import load_artifact
    from grpo_rlvr.inspection.artifact import make_verdict
    from grpo_rlvr.inspection.report import render_report
    from grpo_rlvr.messages import final_text, last_user_text

    art = load_artifact(inspection_dir)
    disagree = 0
    for s in art.samples:
        well_formed, correct = t.oracle_judgement(last_user_text(s["prompt"]), final_text(s["completion"]))
        fmt_ok = s["scores"]["format"]["score"] == 1.0
        name = _correctness(t)
        em_ok = s["scores"][name]["score"] == 1.0
        wrong = [n for n, ok, truth in (("format", fmt_ok, well_formed), (name, em_ok, correct)) if ok != truth]
        disagree += bool(wrong)
        s["verdict"] = make_verdict(art.manifest, s, "disagree" if wrong else "agree", t.ORACLE_REVIEWER,
                                    "oracle", None, rewards=wrong,
                                    note=f"oracle: well_formed={well_formed}, correct={correct}" if wrong else "")
    art.save_samples()
    render_report(art.dir, art.manifest, art.samples)
    return {"reviewed": len(art.samples), "disagree": disagree}


def run_demo(workdir=None, grpo_steps: int | None = None, seed: int = 0, eval_samples: int = 400,
             fresh: bool = False, brief_overrides: dict | None = None, summary_stream=None,
             task_name: str = "arithmetic", warmup_steps: int | None = None) -> dict:
    """Run the whole pipeline; returns the summary (also written to WORKDIR/demo_summary.json). ``workdir``
    defaults to the task's own folder (``default_workdir``); ``warmup_steps`` replaces the task's SFT warmup steps.

    ``brief_overrides`` updates sections of the shipped brief (the GPU smoke test sets hardware and bf16).
    Progress goes to stderr; the closing summary to ``summary_stream`` (stdout by default; ``--json`` sends
    it to stderr so that stdout holds only the JSON document), and so does the trainer's own output.
    """
    out = summary_stream or sys.stdout
    work = refuse_target(Path(workdir or default_workdir(task_name)), "--workdir").resolve()
    refuse_a_persons_review(work)   # before anything is written
    t = _task_module(task_name)
    threads = _prepare_process()
    t_all = time.monotonic()
    prompts, per_prompt, note = eval_sizes(eval_samples)
    run = _DemoRun(t, _Phases(), work, *_write_inputs(work, t, seed, brief_overrides, prompts),
                   per_prompt=per_prompt, seed=seed, fresh=fresh,
                   warmup={**getattr(t, "WARMUP", WARMUP), **({"steps": warmup_steps} if warmup_steps else {})})
    if note:
        run.ph.stream.write(note + "\n")
        run.ph.stream.flush()
    pre0, warm, pre = _models(run)
    if pre.verdict == "sft-first":
        run.ph.stop()
        return {"ok": False, "stopped": "preflight routed to SFT", "preflight": pre.to_dict()}
    from grpo_rlvr.brief import load_brief

    brief = load_brief(run.brief_path)
    s = brief.sampling()
    before = _accuracy(run, "eval-before", f"sampled accuracy before GRPO ({run.per_prompt * len(run.eval_rows)} "
                                           "samples)",
                       warm, s)
    gate = _inspect_review_gate(run)
    if not gate.passed:
        run.ph.stop()
        return {"ok": False, "stopped": "gate failed", "gate": gate.to_dict()}
    rr, tr = _render_and_train(run, grpo_steps or brief.grpo.get("max_steps"), grpo_steps, out)
    if not tr.ok:
        run.ph.stop()
        return {"ok": False, "stopped": f"training failed (exit {tr.returncode})"}
    after = _accuracy(run, "eval-after", "sampled accuracy after GRPO", rr.dir / "output" / "final", s)
    from grpo_rlvr.diagnosis import diagnose

    run.ph.start("diagnose", "diagnosing the run")
    diag = diagnose(rr.dir)
    run.ph.stop()
    curve = _curve(rr.dir / "output" / "metrics.jsonl", _correctness(t))
    summary = {
        "ok": True, "task": task_name, "correctness_reward": _correctness(t), "seed": seed,
        "grpo_steps": tr.global_step,
        "accuracy_before": before, "accuracy_after": after,
        "improvement": after["accuracy"] / before["accuracy"] if before["accuracy"] else None,
        "preflight_untrained": pre0.verdict, "preflight": pre.to_dict(), "gate_passed": gate.passed,
        "reward_curve": curve, **_tool_frequency(rr.dir / "output" / "metrics.jsonl", t),
        "diagnosis": diag.to_dict(), "phase_seconds": run.ph.times,
        "total_seconds": round(time.monotonic() - t_all, 1), "workdir": str(work),
        "cpu": {"torch_threads": threads, "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY")},
    }
    write_json_atomic(work / "demo_summary.json", summary)
    print(format_summary(summary, diag.format()), file=out)
    return summary


# --- the phases -------------------------------------------------------------------------------------------------

# The modules the phases use, imported before the clock starts: no phase's time counts their import.
_PHASE_MODULES = ("grpo_rlvr.diagnosis", "grpo_rlvr.gate.check", "grpo_rlvr.inspection", "grpo_rlvr.run.launch",
                  "grpo_rlvr.run.render", "grpo_rlvr.preflight.success_rate")


def _prepare_process() -> int:
    """OpenMP threads that sleep when idle (set before torch loads), the phases' modules loaded, the libraries'
    progress bars off, torch on every usable core. Returns torch's thread count."""
    from grpo_rlvr.cpu_threads import fit_torch_threads, passive_openmp

    passive_openmp()  # in effect only if torch is not loaded yet (the CLI's entry sets it earlier)
    from transformers.utils import logging as hf_logging

    for name in _PHASE_MODULES:
        importlib.import_module(name)
    hf_logging.disable_progress_bar()  # "Loading weights" bars would drown the phase lines
    return fit_torch_threads()


@dataclass
class _DemoRun:
    """What the phases share: the task, the phase clock, the work folder and the inputs written there."""

    t: ModuleType
    ph: _Phases
    work: Path
    brief_path: Path
    rows: list[dict]
    eval_rows: list[dict]
    per_prompt: int             # samples per evaluation prompt
    seed: int
    fresh: bool
    warmup: dict                # the SFT warmup's settings (the task's, --warmup-steps applied)


def _write_inputs(work: Path, t, seed: int, brief_overrides: dict | None, eval_prompts: int = EVAL_PROMPTS) \
        -> tuple[Path, list[dict], list[dict]]:
    """The demo brief (the task's shipped one, with ``brief_overrides``) and the training data, written into
    ``work``; returns the brief's path, the training rows and the evaluation rows (the first ``eval_prompts`` of
    the ``EVAL_PROMPTS`` held-out prompts: the same ones whatever their number)."""
    work.mkdir(parents=True, exist_ok=True)
    brief_path = work / "brief.yaml"
    shipped = resources.files(getattr(t, "BRIEF_PACKAGE", "grpo_rlvr.examples.arithmetic")).joinpath(
        "brief.yaml").read_text()
    if brief_overrides:
        import yaml

        data = yaml.safe_load(shipped)
        for key, value in brief_overrides.items():
            data[key] = {**data[key], **value} if isinstance(value, dict) and isinstance(data.get(key), dict) else value
        shipped = "# the demo brief with overrides\n" + yaml.safe_dump(data, sort_keys=False)
    brief_path.write_text(shipped)
    rows = t.make_rows(getattr(t, "TRAIN_ROWS", TRAIN_ROWS), seed=seed + 1)
    write_jsonl_atomic(work / "data" / "train.jsonl", rows)
    return brief_path, rows, t.make_rows(EVAL_PROMPTS, seed=seed + 99)[:eval_prompts]


def _models(run: _DemoRun):
    """build → preflight (untrained) → SFT warmup → preflight: the two preflight results and the warmed-up
    model's folder, which WORKDIR/model points at."""
    from grpo_rlvr.preflight.success_rate import preflight

    ph = run.ph
    ph.start("build", "building the tiny model (character tokenizer + ~0.9M-parameter Qwen2), cached on disk")
    base, cached = _build_base_model(run.seed, run.fresh, getattr(run.t, "CHARACTERS", None),
                                     tools=bool(getattr(run.t, "TOOLS", None)))
    model_link = run.work / "model"
    _point(model_link, base)
    ph.note(f"untrained model: {base}" + (" (cached: built by an earlier run with this seed; --fresh rebuilds)"
                                          if cached else ""))

    ph.start("preflight-untrained", "preflight on the untrained model (expect: SFT first)")
    pre0 = preflight(run.brief_path, prompts=32, batch_size=256)
    ph.note(pre0.format().splitlines()[0] + f" (pass@1 {pre0.pass_at_1:.3f})")

    ph.start("warmup", f"SFT warmup: {run.warmup['steps']} steps, so the model succeeds "
             "sometimes")
    warm, cached = _warm_model(base, run.rows, run.seed, run.fresh, run.t, run.warmup, progress=ph.warmup_progress)
    _point(model_link, warm)
    if cached:
        ph.note(f"cached: reused {warm}, warmed up by an earlier run with the same seed and settings "
                "(--fresh redoes it)")

    ph.start("preflight", "preflight on the warmed-up model")
    pre = preflight(run.brief_path, progress=ph.progress, batch_size=256)
    for line in pre.format().splitlines():
        ph.note(line)
    return pre0, warm, pre


def _accuracy(run: _DemoRun, phase: str, what: str, model_dir: Path, s: dict) -> dict:
    """A phase that measures sampled accuracy (before or after GRPO) with the brief's sampling settings."""
    run.ph.start(phase, what)
    acc = sampled_accuracy(run.brief_path, model_dir, run.eval_rows, run.per_prompt, run.seed + 7, run.t)
    run.ph.note(f"accuracy {acc['accuracy']:.3f}, well-formed {acc['well_formed']:.3f}"
                + (f", tool-call rate {acc['tool_call_rate']:.3f}" if "tool_call_rate" in acc else ""))
    return acc


def _inspect_review_gate(run: _DemoRun):
    """inspect → the oracle's review → the gate; returns the gate's result."""
    from grpo_rlvr.gate.check import check_gate
    from grpo_rlvr.inspection import inspect_rewards

    ph = run.ph
    ph.start("inspect", "sampling and scoring outputs for inspection")
    insp = inspect_rewards(run.brief_path, progress=ph.progress, batch_size=256, force=True)  # the demo's own oracle
    ph.note(insp.format().splitlines()[0])

    ph.start("review", "review by the task's oracle (the demo only; a person reviews real runs)")
    rev = oracle_review(insp.dir, run.t)
    ph.note(f"{rev['reviewed']} samples reviewed by {run.t.ORACLE_REVIEWER}, {rev['disagree']} disagreements")

    ph.start("gate", "the Phase 1 gate")
    gate = check_gate(insp.dir, brief=run.brief_path, demo=True)
    for line in gate.format().splitlines()[1:]:
        ph.note(line.strip())
    return gate


def _render_and_train(run: _DemoRun, steps, grpo_steps: int | None, out):
    """render → train (the rendered files, as a user launches them); returns both results."""
    from grpo_rlvr.run.launch import train
    from grpo_rlvr.run.render import render

    ph = run.ph
    ph.start("render", "rendering the run directory from templates")
    rr = render(run.brief_path, force=True)  # the demo's own folder: an earlier demo's outputs move aside
    ph.note(rr.format().splitlines()[0])
    if prior_outputs(rr.dir / "output"):   # an earlier demo with the same lock: a run folder holds one run
        ph.note(f"an earlier demo's training outputs moved to {move_aside(rr.dir / 'output')}")

    ph.start("train", f"GRPO with TRL's GRPOTrainer on CPU, {steps} steps, from {rr.dir / 'train.py'}")
    from grpo_rlvr.rollout.road import release

    release()   # the sampling trainer's model (and any vLLM engine) is freed before training loads its own
    tr = train(rr.dir, max_steps=grpo_steps, demo=True, stream=out if out is not sys.stdout else None)
    return rr, tr


def _point(link: Path, target: Path) -> None:
    """Make WORKDIR/model point at a cached model folder (a symlink; the brief names ./model)."""
    if link.is_symlink() or link.is_file():
        link.unlink()
    elif link.is_dir():
        shutil.rmtree(link)
    link.symlink_to(target, target_is_directory=True)


def _curve(metrics: Path, correctness: str = "exact_match") -> list[dict]:
    if not metrics.is_file():
        return []
    out = []
    for r in read_jsonl(metrics, "metrics"):
        if "reward" in r:
            out.append({"step": r["step"], "reward": round(r["reward"], 4),
                        "correctness": round(r.get(f"rewards/{correctness}/mean", float("nan")), 4),
                        "format": round(r.get("rewards/format/mean", float("nan")), 4)})
    return out


def _tool_frequency(metrics: Path, t) -> dict:
    """A tool task's ``tools/call_frequency`` (TRL's: tool calls per rollout) at the first and the last logged
    step of training; nothing for a task without tools."""
    if not getattr(t, "TOOLS", None) or not metrics.is_file():
        return {}
    logged = [r["tools/call_frequency"] for r in read_jsonl(metrics, "metrics") if "tools/call_frequency" in r]
    return {"tool_call_frequency": {"first": logged[0], "last": logged[-1]} if logged else None}


# Where the demo's closing summary sends a person next: the same steps on their own task.
BY_HAND = ("Next, on your own task: the README's \"The pipeline, by hand\" runs these steps one at a time (grpo-rlvr "
           "validate → preflight → inspect → review → gate → render → train → diagnose), and its \"Start from an "
           "example\" lists briefs to begin with.")


def format_summary(s: dict, diagnosis_text: str) -> str:
    b, a = s["accuracy_before"], s["accuracy_after"]
    ratio = f"{s['improvement']:.2f}×" if s["improvement"] else "n/a"
    lines = ["", "=" * 72, "grpo-rlvr demo — summary", "=" * 72,
             f"preflight: untrained model → {s['preflight_untrained']}; after SFT warmup → {s['preflight']['verdict']} "
             f"(pass@1 {s['preflight']['pass_at_1']:.3f}, pass@{s['preflight']['k']} {s['preflight']['pass_at_k']:.3f})",
             f"sampled accuracy before GRPO: {b['accuracy']:.3f} ({b['samples']} samples, well-formed {b['well_formed']:.3f})",
             f"sampled accuracy after GRPO:  {a['accuracy']:.3f} ({a['samples']} samples, well-formed {a['well_formed']:.3f})",
             f"improvement: {ratio}  (GRPO steps: {s['grpo_steps']}, seed {s['seed']})",
             *_tool_lines(s), "", f"reward curve (step: total / {s.get('correctness_reward', 'exact_match')} / format):"]
    curve = s["reward_curve"]
    pick = curve if len(curve) <= 8 else [curve[i * (len(curve) - 1) // 7] for i in range(8)]
    for c in pick:
        lines.append(f"  {c['step']:>4}: {c['reward']:.3f} / {c['correctness']:.3f} / {c['format']:.3f}")
    lines += ["", "time per phase (s): " + ", ".join(f"{k} {v}" for k, v in s["phase_seconds"].items()),
              f"total: {s['total_seconds']} s", "", diagnosis_text, f"\nEverything is in {s['workdir']}",
              BY_HAND]
    return "\n".join(lines)


def _tool_lines(s: dict) -> list[str]:
    """The summary's tool-use lines (a tool task only)."""
    b, a = s["accuracy_before"], s["accuracy_after"]
    if "tool_call_rate" not in b:
        return []
    lines = [f"tool-call rate (samples that called a tool): {b['tool_call_rate']:.3f} before → "
             f"{a['tool_call_rate']:.3f} after"]
    f = s.get("tool_call_frequency")
    if f:
        lines.append(f"TRL's tools/call_frequency (calls per rollout) in training: {f['first']:.3f} at the first "
                     f"logged step → {f['last']:.3f} at the last")
    return lines
