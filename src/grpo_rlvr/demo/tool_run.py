"""The tool demo's own road while the brief's ``tools`` section is not yet wired through the phases (#47): the
trainers are TRL's, built by ``runtime.trainer_build.build_trainer`` from the brief as a rendered run builds them,
with the task's tools passed to TRL (``GRPOTrainer(tools=[add])``) by a subclass.

``grpo-rlvr demo --task tool`` runs: build (the tiny model with ``tool_chat``'s format) → SFT warmup on multi-turn
demonstrations → accuracy and tool-call rate before GRPO (sampled through TRL's tool loop, as training samples) →
GRPO with the tools → the same after → diagnose. Preflight, inspect, the review, the gate and render wait for the
brief's ``tools`` section: until preflight and inspect run the tool loop and the rendered ``train.py`` passes the
tools, they would judge and train a model without its tool, so this road does not pretend to run them; its summary
says so. Once they do, the tool task runs the demo's standard road (``pipeline.run_demo``) and this module goes.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from grpo_rlvr.files import write_json_atomic


def load_tool_brief(path: Path):
    """The brief at ``path``; while the brief schema has no ``tools`` section, the brief without it (written beside
    it as ``.brief-without-tools.yaml``, so its relative paths resolve as the brief's do)."""
    import yaml

    from grpo_rlvr.brief import load_brief
    from grpo_rlvr.brief.loader import _schema, read_yaml

    if "tools" in _schema()["properties"]:
        return load_brief(path)
    data = read_yaml(path)
    data.pop("tools", None)
    stripped = Path(path).with_name(".brief-without-tools.yaml")
    stripped.write_text("# written by grpo-rlvr demo --task tool: the brief without its tools section, which "
                        "this version's schema does not know yet\n" + yaml.safe_dump(data, sort_keys=False))
    return load_brief(stripped)


def with_tools(cls, tools: list):
    """A subclass of the trainer class ``cls`` that hands ``tools`` to TRL's GRPOTrainer."""

    class WithTools(cls):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, tools=list(tools), **kwargs)

    WithTools.__name__ = WithTools.__qualname__ = f"{cls.__name__}WithTools"
    return WithTools


def sample(brief, model_dir: Path, rows: list[dict], n: int, seed: int, tools: list, batch_size: int = 200):
    """``n`` trajectories (``rollout.trajectory.Trajectory``) for each row, prompt-major, sampled by TRL's tool loop
    in the rollout road's trainer with the brief's sampling settings."""
    from datasets import Dataset
    from transformers import set_seed

    from grpo_rlvr.rewards import from_brief
    from grpo_rlvr.rollout.road import rollout_config
    from grpo_rlvr.rollout.trainer_setup import trainer_setup
    from grpo_rlvr.rollout.trajectory import Trajectory
    from grpo_rlvr.runtime.rollout_trainer import RolloutTrainer
    from grpo_rlvr.runtime.trainer_build import build_trainer, grpo_config

    setup = {**trainer_setup(brief), "model": str(model_dir), "model_revision": None, "adapter": None}
    config = grpo_config({**rollout_config(brief, seed, "transformers"),
                          "output_dir": tempfile.mkdtemp(prefix="grpo-rlvr-tool-rollout-")})
    trainer = build_trainer(setup, config, from_brief(brief), Dataset.from_list([{"prompt": ""}]),
                            cls=with_tools(RolloutTrainer, tools))
    set_seed(seed)
    group = trainer.num_generations
    jobs = [row for row in rows for _ in range(n)]
    step = max(group, batch_size - batch_size % group)
    out = []
    for start in range(0, len(jobs), step):
        chunk = jobs[start:start + step]
        batch = [dict(r) for r in chunk] + [dict(chunk[-1]) for _ in range((-len(chunk)) % group)]
        for rec in trainer.roll_out(batch)[:len(chunk)]:
            out.append(Trajectory(rec["prompt"], rec["completion"], tuple(rec["prompt_ids"]),
                                  tuple(rec["completion_ids"]),
                                  None if rec["loss_mask"] is None else tuple(rec["loss_mask"]), rec["stop"]))
    return out


def train(brief, run_dir: Path, tools: list, max_steps: int | None, stream=None) -> int:
    """GRPO with ``tools`` on the brief's model and data, into ``run_dir/output`` (metrics.jsonl, the watchdog's
    log, checkpoints, ``final/``), with the callbacks the rendered ``train.py`` uses. Returns the steps trained."""
    from datasets import Dataset

    from grpo_rlvr.dataset.rows import load_rows
    from grpo_rlvr.diagnosis.watchdog import Watchdog
    from grpo_rlvr.rewards import from_brief
    from grpo_rlvr.rollout.trainer_setup import grpo_config_dict, trainer_setup
    from grpo_rlvr.runtime.final_model import save_final_model
    from grpo_rlvr.runtime.trainer_build import build_trainer, grpo_config, trainer_class
    from grpo_rlvr.runtime.training_callbacks import MetricsJsonl, ProgressLine

    output = run_dir / "output"
    cfg = {**grpo_config_dict(brief), "output_dir": str(output), "report_to": "none"}
    if max_steps is not None:
        cfg["max_steps"] = max_steps
    config = grpo_config(cfg)
    setup = trainer_setup(brief)
    watchdog = Watchdog(run_dir, output, **brief.watch.to_dict())
    trainer = build_trainer(setup, config, from_brief(brief), Dataset.from_list(load_rows(brief)),
                            cls=with_tools(trainer_class(setup), tools),
                            callbacks=[MetricsJsonl(output / "metrics.jsonl"), ProgressLine(stream), watchdog])
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    trainer.train()
    if not watchdog.stopped_run:
        save_final_model(trainer, output / "final")
    write_json_atomic(output / "train_summary.json", {"global_step": trainer.state.global_step,
                                                      "log_history": trainer.state.log_history})
    return trainer.state.global_step


def measured(task, trajectories) -> dict:
    """Oracle-checked accuracy, well-formed share and tool-call rate (share of samples that called a tool at
    least once) of ``trajectories``."""
    from grpo_rlvr.rollout.trajectory import last_user_text

    judged = [task.oracle_judgement(last_user_text(tr.prompt), tr.text) for tr in trajectories]
    n = len(judged)
    called = [tr.tool_calls > 0 for tr in trajectories]
    return {"samples": n, "accuracy": sum(c for _, c in judged) / n, "well_formed": sum(w for w, _ in judged) / n,
            "tool_call_rate": sum(called) / n,
            "accuracy_with_tool": _share([c for (_, c), k in zip(judged, called, strict=True) if k]),
            "accuracy_without_tool": _share([c for (_, c), k in zip(judged, called, strict=True) if not k])}


def _share(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def run_tool_demo(t, work: Path, seed: int, eval_samples: int, fresh: bool, grpo_steps: int | None,
                  brief_overrides: dict | None, out) -> dict:
    """The tool demo (module docstring); returns the summary, also written to ``work/demo_summary.json``."""
    from grpo_rlvr.demo import pipeline as p
    from grpo_rlvr.diagnosis import diagnose
    from grpo_rlvr.rollout.road import release

    threads = p._prepare_process()
    t_all = time.monotonic()
    ph = p._Phases()
    brief_path, rows, eval_rows = p._write_inputs(work, t, seed, brief_overrides)
    per_prompt = max(1, -(-eval_samples // p.EVAL_PROMPTS))
    ph.start("build", "building the tiny model (character tokenizer with tool calls + ~1M-parameter Qwen2), cached")
    base, cached = p._build_base_model(seed, fresh, getattr(t, "CHARACTERS", None), tools=True)
    p._point(work / "model", base)
    ph.start("warmup", f"SFT warmup on conversations: {t.WARMUP['steps']} steps, {t.TOOL_SHARE:.0%} of them call "
             "the tool")
    warm, cached = p._warm_model(base, rows, seed, fresh, t)
    p._point(work / "model", warm)
    if cached:
        ph.note(f"cached: reused {warm} (--fresh redoes it)")
    brief = load_tool_brief(brief_path)

    def evaluate(phase: str, what: str, model_dir: Path) -> dict:
        ph.start(phase, what)
        m = measured(t, sample(brief, model_dir, eval_rows, per_prompt, seed + 7, t.TOOLS))
        ph.note(f"accuracy {m['accuracy']:.3f}, tool-call rate {m['tool_call_rate']:.3f}, "
                f"well-formed {m['well_formed']:.3f}")
        return m

    before = evaluate("eval-before", f"accuracy and tool-call rate before GRPO ({per_prompt * p.EVAL_PROMPTS} "
                      "samples, through TRL's tool loop)", warm)
    run_dir = work / "out" / "tool-run"
    if run_dir.exists():
        from grpo_rlvr.files import move_aside

        ph.note(f"an earlier demo's run moved to {move_aside(run_dir)}")
    run_dir.mkdir(parents=True)
    steps = grpo_steps or brief.grpo.get("max_steps")
    ph.start("train", f"GRPO with TRL's GRPOTrainer(tools=[{', '.join(f.__name__ for f in t.TOOLS)}]) on CPU, "
             f"{steps} steps")
    release()
    global_step = train(brief, run_dir, t.TOOLS, grpo_steps, stream=out if out is not sys.stdout else None)
    after = evaluate("eval-after", "accuracy and tool-call rate after GRPO", run_dir / "output" / "final")
    ph.start("diagnose", "diagnosing the run")
    diag = diagnose(run_dir)
    ph.stop()
    summary = {
        "ok": True, "task": t.NAME, "correctness_reward": p._correctness(t), "seed": seed, "grpo_steps": global_step,
        "road": "tools (preflight, inspect, review, gate and render wait for the brief's tools section)",
        "accuracy_before": before, "accuracy_after": after,
        "improvement": after["accuracy"] / before["accuracy"] if before["accuracy"] else None,
        "reward_curve": p._curve(run_dir / "output" / "metrics.jsonl", p._correctness(t)),
        "diagnosis": diag.to_dict(), "phase_seconds": ph.times, "total_seconds": round(time.monotonic() - t_all, 1),
        "workdir": str(work), "cpu": {"torch_threads": threads},
    }
    write_json_atomic(work / "demo_summary.json", summary)
    print(format_summary(summary, diag.format()), file=out)
    return summary


def format_summary(s: dict, diagnosis_text: str) -> str:
    b, a = s["accuracy_before"], s["accuracy_after"]
    ratio = f"{s['improvement']:.2f}×" if s["improvement"] else "n/a"
    lines = ["", "=" * 72, "grpo-rlvr demo --task tool — summary", "=" * 72,
             f"before GRPO: accuracy {b['accuracy']:.3f}, tool-call rate {b['tool_call_rate']:.3f} "
             f"({b['samples']} samples, well-formed {b['well_formed']:.3f})",
             f"after GRPO:  accuracy {a['accuracy']:.3f}, tool-call rate {a['tool_call_rate']:.3f} "
             f"({a['samples']} samples, well-formed {a['well_formed']:.3f})",
             f"improvement: {ratio}  (GRPO steps: {s['grpo_steps']}, seed {s['seed']})",
             "accuracy when it called the tool / when it did not: "
             f"{_rate(b['accuracy_with_tool'])} / {_rate(b['accuracy_without_tool'])} before, "
             f"{_rate(a['accuracy_with_tool'])} / {_rate(a['accuracy_without_tool'])} after",
             f"road: {s['road']}", "", f"reward curve (step: total / {s['correctness_reward']} / format):"]
    curve = s["reward_curve"]
    for c in curve if len(curve) <= 8 else [curve[i * (len(curve) - 1) // 7] for i in range(8)]:
        lines.append(f"  {c['step']:>4}: {c['reward']:.3f} / {c['correctness']:.3f} / {c['format']:.3f}")
    lines += ["", "time per phase (s): " + ", ".join(f"{k} {v}" for k, v in s["phase_seconds"].items()),
              f"total: {s['total_seconds']} s", "", diagnosis_text, f"\nEverything is in {s['workdir']}"]
    return "\n".join(lines)


def _rate(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


__all__ = ["load_tool_brief", "measured", "run_tool_demo", "sample", "train", "with_tools"]
