"""The ``grpo-rlvr`` command line: a thin shell over the package's functions.

Exit codes, the same for every command (``EXIT_CODES`` says what 0 and 1 mean for each; ``--help`` prints it and
``--json`` output carries it as ``"exit_code"``): 0 success or healthy, 1 the check failed or a failure mode was
found, 2 bad input or usage. Heavy imports (torch, transformers, trl) happen only inside the commands that need
them, so ``--help``, ``validate``, ``gate`` and ``score`` for rewards that need no model start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import signal
import sys
from collections.abc import Callable

from grpo_rlvr import __version__
from grpo_rlvr.cli.json_stdout import document, json_stdout
from grpo_rlvr.cpu_threads import passive_openmp
from grpo_rlvr.cpu_time import CPU_LIMIT_S
from grpo_rlvr.errors import ConfigError, GrpoRlvrError
from grpo_rlvr.plain_output import one_line_warnings

log = logging.getLogger("grpo_rlvr")


class _Parser(argparse.ArgumentParser):
    """argparse with the house error format: usage errors exit 2 and point at --help."""

    def error(self, message: str):  # noqa: D102
        self.exit(2, f"Error: {message}\nTry '{self.prog} --help'.\n")


# What 0 and 1 mean for each command; 2 is always bad input or usage. ``--help`` prints these lines, and a test
# holds docs/pipeline.md's table to them.
EXIT_CODES = {
    "demo": ("the demo ran every phase", "a phase failed"),
    "validate": ("the brief is valid and fits its hardware", "never (an invalid brief is bad input: 2)"),
    "preflight": ("the model succeeds sometimes: GRPO", "sft-first, lower-temperature or too-easy: not GRPO yet"),
    "score": ("every completion was scored", "never"),
    "inspect": ("the artifact was written", "never"),
    "review": ("every sample has a verdict", "the review stopped before the last sample"),
    "gate": ("the gate passes", "the gate fails (every failing rule listed)"),
    "render": ("the run folder was written", "never"),
    "train": ("training finished; with --dry-run, the gate passes and training would start",
              "the gate refuses, training failed, or the watchdog stopped it (a checkpoint is saved)"),
    "watch": ("the run ended (or, with --once, is running or not started)",
              "the watchdog stopped the run, it died (its crash record names why), it was stopped with Ctrl-C, no "
              "trainer runs it though it never ended, or --timeout passed"),
    "diagnose": ("healthy: no failure mode found", "a failure mode was found"),
    "report": ("the report was written", "never"),
    "memory": ("the estimate fits the GPU", "it does not fit"),
    "merge": ("the merged model was written", "never"),
}
BAD_INPUT = "bad input or usage (a brief, a file, a flag): the message names it and the fix"


def exit_code_help(command: str) -> str:
    ok, failed = EXIT_CODES[command]
    return f"Exit codes: 0 {ok}; 1 {failed}; 2 {BAD_INPUT}."


def _emit(result: dict, as_json: bool, text: Callable[[dict], str], code: int = 0) -> int:
    """Print ``result`` (as JSON with its ``exit_code``, or as text) and return ``code``."""
    if as_json:
        print(json.dumps({**result, "exit_code": code}, indent=2, default=str), file=document())
    else:
        print(text(result))
    return code


# --- commands -----------------------------------------------------------------------------------------------
# Each takes the parsed args and returns the exit code. Imports are local on purpose (start-up time).

def cmd_validate(args) -> int:
    from grpo_rlvr.cli.validate import format_validate_report
    from grpo_rlvr.validate.report import validate_report

    report = validate_report(args.brief, remote=args.remote)
    return _emit(report, args.json, format_validate_report)


def cmd_preflight(args) -> int:
    from grpo_rlvr.preflight.success_rate import preflight

    result = preflight(args.brief, prompts=args.prompts, k=args.k, filter_out=args.filter,
                       keep_share=args.keep_share, batch_size=args.batch_size, allow_cpu=args.allow_cpu)
    return _emit(result.to_dict(), args.json, lambda _: result.format(), 0 if result.verdict == "grpo" else 1)


def cmd_score(args) -> int:
    from grpo_rlvr.cli.score import format_scores
    from grpo_rlvr.score.scoring import score_file

    if args.list_params:
        from grpo_rlvr.rewards.reference import format_params, params_of

        if not args.reward:
            raise ConfigError("score --list-params: name the reward with --reward NAME (e.g. --reward math)")
        if args.json:
            print(json.dumps([{"name": p.name, "default": p.default, "meaning": p.meaning}
                              for p in params_of(args.reward)], default=str), file=document())
        else:
            print(format_params(args.reward))
        return 0
    if not args.input:
        raise ConfigError("score: --input FILE.jsonl is required (lines of {\"prompt\", \"completion\", ...}); "
                          "or use --list-params")
    rows = score_file(args.input, brief=args.brief, reward=args.reward, options=args.option)
    if args.json:
        for row in rows:
            print(json.dumps(row, default=str), file=document())
    else:
        print(format_scores(rows))
    return 0


def cmd_inspect(args) -> int:
    from grpo_rlvr.inspection import inspect_rewards

    result = inspect_rewards(args.brief, out_dir=args.out, samples=args.samples, batch_size=args.batch_size,
                             force=args.force, allow_cpu=args.allow_cpu)
    return _emit(result.to_dict(), args.json, lambda _: result.format())


def cmd_review(args) -> int:
    from grpo_rlvr.review.session import review

    return review(args.dir, reviewer=args.reviewer, sign=args.sign)


def cmd_gate(args) -> int:
    from grpo_rlvr.run.clean_interpreter import run_check

    # checked in a clean interpreter: a sitecustomize or .pth hook that patched this process changes nothing
    reply = run_check("gate", directory=str(args.dir), brief=str(args.brief) if args.brief else None)
    return _emit(reply["result"], args.json, lambda _: reply["text"], 0 if reply["passed"] else 1)


def cmd_render(args) -> int:
    from grpo_rlvr.run.render import render

    result = render(args.brief, out=args.out, inspection=args.inspection, force=args.force)
    return _emit(result.to_dict(), args.json, lambda _: result.format())


def cmd_train(args) -> int:
    from grpo_rlvr.run.launch import train

    result = train(args.run, resume=args.resume, dry_run=args.dry_run, max_steps=args.max_steps,
                   unreviewed_smoke_test=args.unreviewed_smoke_test, allow_cpu=args.allow_cpu)
    code = 0 if result.ok else 130 if result.stopped else 1   # 130: stopped by Ctrl-C, as a shell reports it
    return _emit(result.to_dict(), args.json, lambda _: result.format(), code)


def cmd_diagnose(args) -> int:
    from grpo_rlvr.diagnosis import diagnose

    result = diagnose(args.run, apply_to=args.apply, out_dir=args.out, roles=args.role)
    return _emit(result.to_dict(), args.json, lambda _: result.format(), 0 if result.healthy else 1)


def cmd_report(args) -> int:
    from grpo_rlvr.report import write_report

    result = write_report(args.run, out=args.out)
    return _emit(result.to_dict(), args.json, lambda _: result.format())


def cmd_watch(args) -> int:
    from grpo_rlvr.watch.view import watch

    return watch(args.run, once=args.once, as_json=args.json, interval=args.interval, timeout=args.timeout,
                 out=document())


def cmd_memory(args) -> int:
    from grpo_rlvr.cli.memory import run_memory

    return run_memory(args)


def cmd_merge(args) -> int:
    from grpo_rlvr.merge.adapter import merge_adapter

    result = merge_adapter(args.adapter, args.out, force=args.force)
    return _emit(result.to_dict(), args.json, lambda _: result.format())


def _at_least_one(text: str) -> int:
    """argparse type: a whole number of at least 1 (argparse names the flag and exits 2 otherwise)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give one of at least 1") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is below 1; give a whole number of at least 1")
    return n


def cmd_demo(args) -> int:
    from grpo_rlvr.demo.pipeline import run_demo

    result = run_demo(workdir=args.workdir, grpo_steps=args.steps, seed=args.seed, warmup_steps=args.warmup_steps,
                      eval_samples=args.eval_samples, fresh=args.fresh,
                      summary_stream=sys.stderr if args.json else None, task_name=args.task)
    code = 0 if result["ok"] else 1
    if args.json:
        print(json.dumps({**result, "exit_code": code}, indent=2, default=str), file=document())
    return code


# --- parser -------------------------------------------------------------------------------------------------
# One function per command adds its arguments; ``COMMANDS`` lists the commands in the order --help shows them.

def _brief_arg(sp) -> None:
    sp.add_argument("brief", metavar="BRIEF", help="the brief YAML")


def _batch_arg(sp) -> None:
    sp.add_argument("--batch-size", type=int, default=64, help="sequences generated at once (default 64)")


def _json_arg(sp) -> None:
    sp.add_argument("--json", action="store_true", help="machine-readable output")


def _allow_cpu_arg(sp, what: str) -> None:
    sp.add_argument("--allow-cpu", action="store_true",
                    help=f"{what} on this CPU even when the rough time estimate (model size × tokens at this "
                         f"machine's measured speed) is over {CPU_LIMIT_S // 60} min")


def _demo_args(sp) -> None:
    from grpo_rlvr.demo.pipeline import TASKS  # light: the heavy imports happen inside run_demo

    sp.add_argument("--workdir", default=None,
                    help="where the demo writes (default: runs/demo, or runs/demo-TASK for another --task); a folder "
                         "whose inspection a person reviewed is refused")

    sp.add_argument("--task", default="arithmetic", choices=list(TASKS),
                    help="arithmetic (default); spell_backward: reasoning-gym's task scored by its own verifier "
                         "(needs pip install 'grpo-rlvr[reasoning-gym]'); or code: write a Python function, scored "
                         "by unit tests in the sandbox; or tool: sums the model answers by calling a calculator tool "
                         "through TRL's tool loop")
    sp.add_argument("--steps", type=_at_least_one, default=None,
                    help="GRPO steps (default: the demo brief's max_steps)")
    sp.add_argument("--warmup-steps", type=_at_least_one, default=None,
                    help="SFT warmup steps (default: the task's; fewer leave a model that succeeds less often)")
    sp.add_argument("--seed", type=int, default=0, help="seed for the model, data and warmup (default 0)")
    sp.add_argument("--eval-samples", type=_at_least_one, default=400,
                    help="samples for accuracy before/after (default 400; fewer make the comparison noisy): up "
                         "to 100, that many held-out prompts sampled once; above, each of the 100 sampled alike, "
                         "so the count is rounded up to a multiple of 100, with a note")
    sp.add_argument("--fresh", action="store_true", help="rebuild the cached tiny model")
    _json_arg(sp)


def _validate_args(sp) -> None:
    _brief_arg(sp)
    sp.add_argument("--remote", action="store_true",
                    help="the brief is for another machine: report this machine's missing packages or GPU "
                         "(QLoRA's bitsandbytes, CUDA) as warnings, not errors")
    _json_arg(sp)


def _preflight_args(sp) -> None:
    _brief_arg(sp)
    sp.add_argument("--prompts", type=int, default=None, help="prompts to sample (default: brief.preflight.prompts)")
    sp.add_argument("--k", type=int, default=None, help="completions per prompt (default: num_generations)")
    sp.add_argument("--filter", metavar="OUT", default=None, help="write the learnable subset of the dataset here")
    sp.add_argument("--keep-share", type=float, default=0.1,
                    help="with --filter: share of never/always-solved prompts to keep (default 0.1)")
    _batch_arg(sp)
    _allow_cpu_arg(sp, "sample")
    _json_arg(sp)


def _score_args(sp) -> None:
    sp.add_argument("--input", metavar="FILE.jsonl",
                    help='lines of {"prompt", "completion", ...ground-truth columns} (required unless --list-params)')
    src = sp.add_mutually_exclusive_group(required=True)
    src.add_argument("--brief", metavar="BRIEF", help="use the brief's reward list and weights")
    src.add_argument("--reward", metavar="NAME", help="one reward by name, or module:function / file.py:function")
    sp.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                    help="a reward parameter (repeatable; values are parsed as JSON when they can be)")
    sp.add_argument("--list-params", action="store_true",
                    help="print the --reward's params with defaults and meanings, and its columns; score nothing")
    _json_arg(sp)


def _inspect_args(sp) -> None:
    _brief_arg(sp)
    sp.add_argument("--out", default=None, help="artifact folder (default: OUTPUT_DIR/inspection)")
    sp.add_argument("--samples", type=int, default=None, help="50–100 (default: brief.inspection.samples, 64)")
    sp.add_argument("--force", action="store_true",
                    help="replace a folder that holds verdicts (it is kept as inspection.bak-<time>/)")
    _batch_arg(sp)
    _allow_cpu_arg(sp, "sample")
    _json_arg(sp)


def _review_args(sp) -> None:
    sp.add_argument("dir", metavar="DIR", help="the inspection folder")
    sp.add_argument("--reviewer", default=None, help="your name for the record (default: $USER)")
    sp.add_argument("--sign", metavar="KEY", default=None,
                    help="when every sample has a verdict, sign the review with this SSH key (a private key file, or "
                         "a public key held by ssh-agent); required when the brief sets inspection.signing")


def _gate_args(sp) -> None:
    sp.add_argument("dir", metavar="DIR", help="the inspection folder")
    sp.add_argument("--brief", default=None, help="the brief to check against (default: the one recorded)")
    _json_arg(sp)


def _render_args(sp) -> None:
    _brief_arg(sp)
    sp.add_argument("--out", default=None, help="run folder (default: OUTPUT_DIR/run)")
    sp.add_argument("--inspection", default=None, help="inspection folder (default: OUTPUT_DIR/inspection)")
    sp.add_argument("--force", action="store_true",
                    help="render over training outputs of another lock (they move to output.bak-<time>/)")
    _json_arg(sp)


def _train_args(sp) -> None:
    sp.add_argument("run", metavar="RUN", help="the run folder written by render")
    sp.add_argument("--resume", action="store_true", help="continue from the newest complete checkpoint")
    sp.add_argument("--dry-run", action="store_true", help="print the commands and environment, run nothing")
    sp.add_argument("--max-steps", type=int, default=None, help="override max_steps (smoke runs)")
    sp.add_argument("--unreviewed-smoke-test", action="store_true",
                    help="skip the gate for at most 3 steps that save no checkpoint or model; marked in the outputs "
                         "and flagged by diagnose; never a training run")
    _allow_cpu_arg(sp, "train a hardware.accelerator: cpu run")
    _json_arg(sp)
    sp.epilog = (exit_code_help("train") + " Ctrl-C stops the run at the end of its step with a checkpoint (a second "
                 "Ctrl-C stops at once, without one), prints the resume command and exits 130. One trainer per run: "
                 "while one holds the run (its pid is named), another start is refused (exit 2).")


def _diagnose_args(sp) -> None:
    sp.add_argument("run", metavar="RUN", help="a grpo-rlvr run folder, a TRL output_dir, a trainer_state.json or a "
                    "metrics.jsonl")
    sp.epilog = (exit_code_help("diagnose") + " Reads metrics.jsonl, else the newest trainer_state.json (output_dir or "
                 "checkpoint-*/), the held-out evaluations, and the logged completions (completions/*.parquet). Not "
                 "TensorBoard event files. Each reward's role (format, correctness, length, other) is stated with "
                 "--role or inferred from the brief lock, its name or its behaviour, and printed. Writes "
                 "diagnosis.json, diagnosis.md and PNG plots into --out; by default the folder of the run's logs, or "
                 "the current folder for a lone file.")
    sp.add_argument("--role", metavar="NAME=ROLE", action="append", default=None,
                    help="state a reward's role: format, correctness, length or other (repeatable)")
    sp.add_argument("--out", metavar="DIR", default=None, help="where to write the diagnosis")
    sp.add_argument("--apply", metavar="NEW_BRIEF", default=None,
                    help="write a new brief with the recommended variant or dynamic_sampling section, and this "
                         "diagnosis")
    _json_arg(sp)


def _watch_args(sp) -> None:
    sp.add_argument("run", metavar="RUN", help="the run folder `grpo-rlvr render` wrote (or its output folder)")
    sp.add_argument("--once", action="store_true", help="print one frame and exit")
    sp.add_argument("--interval", type=float, default=2.0, help="seconds between reads (default 2)")
    sp.add_argument("--timeout", type=float, default=None, help="give up after this many seconds (exit 1)")
    sp.add_argument("--json", action="store_true", help="one JSON object a line: each frame that changed")
    sp.epilog = (exit_code_help("watch") + " Reads output/metrics.jsonl and output/watch.jsonl as they grow "
                 "(progress, rewards by role, held-out results, the watchdog's findings, samples no reward could "
                 "score by dataset row); returns when the run logs its summary, the watchdog stops it, or it dies "
                 "(output/crash.json: the exception, where it was raised, the fix).")


def _report_args(sp) -> None:
    sp.add_argument("run", metavar="RUN", help="the run folder `grpo-rlvr render` wrote (or its output folder; a "
                    "plain TRL output folder gets its curves, findings and rollouts)")
    sp.add_argument("--out", metavar="DIR", default=None, help="where to write report.html and report.json "
                    "(default: the run's output folder)")
    sp.epilog = (exit_code_help("report") + " One self-contained page (pictures inlined, no server, nothing "
                 "fetched; reads on a screen and in print): what trained by identity and whether the run is proven, "
                 "the review and each reward's error rate by it (95% Wilson interval), the live review audit, the "
                 "watchdog's and diagnose's findings with their fixes, the curves with those findings marked, and "
                 "training's own rollouts at the start, middle and end; report.json holds the same facts. Training "
                 "writes it when it ends, is stopped or dies; this command writes it for a run in progress or an "
                 "older one.")
    _json_arg(sp)


def _merge_args(sp) -> None:
    sp.add_argument("adapter", metavar="ADAPTER", help="the adapter folder (adapter_config.json names the base)")
    sp.add_argument("--out", metavar="DIR", required=True, help="where to write the merged model")
    sp.add_argument("--force", action="store_true", help="replace DIR when it exists")
    _json_arg(sp)


def _memory_args(sp) -> None:
    sp.add_argument("--size", default="7B", help="size class (0.5B … 70B), a parameter count, or a model folder")
    sp.add_argument("--method", choices=["full", "lora", "qlora"], default="full")
    sp.add_argument("--gpu", default="80GB", help="GPU type: 24GB, 40GB, 48GB, 80GB, 141GB, dgx-spark")
    sp.add_argument("--num-gpus", type=int, default=1, help="training GPUs (sharded with --sharding)")
    sp.add_argument("--sharding", default="none", choices=["none", "zero2", "zero3", "fsdp2"])
    sp.add_argument("--vllm-mode", default="colocate", choices=["colocate", "server", "off"])
    from grpo_rlvr.memory.estimate import MemoryInputs  # light (no torch); the defaults are the library's own

    sp.add_argument("--completion-length", type=int, default=MemoryInputs.max_completion_length,
                    help=f"max_completion_length (default {MemoryInputs.max_completion_length}: a reasoning budget to "
                         "plan for; a brief's own value is what validate uses)")
    sp.add_argument("--prompt-length", type=int, default=MemoryInputs.max_prompt_length,
                    help=f"longest prompt, tokens (default {MemoryInputs.max_prompt_length})")
    sp.add_argument("--batch-size", type=int, default=MemoryInputs.per_device_train_batch_size,
                    help=f"per_device_train_batch_size (default {MemoryInputs.per_device_train_batch_size})")
    _json_arg(sp)


# (name, command, one-line help, the function that adds its arguments), in the order --help lists them.
COMMANDS: tuple[tuple[str, Callable, str, Callable], ...] = (
    ("demo", cmd_demo, "the whole pipeline on CPU with a tiny model built locally", _demo_args),
    ("validate", cmd_validate, "schema + semantic checks, memory fit; prints the resolved config", _validate_args),
    ("preflight", cmd_preflight, "base success rate from k samples per prompt; routes to SFT or GRPO",
     _preflight_args),
    ("score", cmd_score, "score completions from a JSONL file with the brief's rewards or one reward", _score_args),
    ("inspect", cmd_inspect, "sample 50–100 outputs, score them, write the inspection artifact", _inspect_args),
    ("review", cmd_review, "a person's review in a terminal: agree/disagree with each scored sample; resumable "
     "(refuses piped input)", _review_args),
    ("gate", cmd_gate, "the Phase 1 checker: passes only on a complete, current, human-reviewed inspection",
     _gate_args),
    ("render", cmd_render, "write the run directory (config, train.py, accelerate.yaml, launch.sh)", _render_args),
    ("train", cmd_train, "launch a rendered run directory (refuses without a passing gate)", _train_args),
    ("diagnose", cmd_diagnose, "read a run's logs, name failure modes, recommend a variant", _diagnose_args),
    ("watch", cmd_watch, "follow a run while it trains: progress, rewards by role, the watchdog's findings",
     _watch_args),
    ("report", cmd_report, "one page for a run: what trained, its review and the reward's error rate, what "
     "happened, in pictures", _report_args),
    ("merge", cmd_merge, "merge a PEFT LoRA adapter folder (an SFT output) into its base: one model folder, as vLLM "
     "needs", _merge_args),
    ("memory", cmd_memory, "GPU memory estimate for a model size / method / GPU, with tactics to fit", _memory_args),
)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="grpo-rlvr", description="GRPO / RLVR on TRL: verifiable rewards, a human reward-inspection "
                "gate, validated configs, launch and diagnosis.",
                epilog="Exit codes, every command: 0 success or healthy; 1 the check failed or a failure mode was "
                       f"found (each command's --help says which); 2 {BAD_INPUT}. With --json, stdout holds one JSON "
                       'document that carries "exit_code" (score --json: JSON lines, one per completion).')
    p.add_argument("--version", action="version", version=f"grpo-rlvr {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="log diagnostics to stderr")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, fn, help_, add_args in COMMANDS:
        sp = sub.add_parser(name, help=help_, description=help_, epilog=exit_code_help(name))
        sp.set_defaults(func=fn)
        add_args(sp)
    return p


def _library_output(verbose: bool) -> None:
    """Quiet by default: the libraries' progress bars ("Loading weights", "Generating train split") are off
    here and in the processes we start (they inherit the environment), where our own progress lines say
    what happens. ``--verbose`` shows them, and the trainer's tqdm bar (read by the rendered train.py).
    A value the user set in the environment wins. vLLM logs to stderr (its default is stdout, where ``--json``
    output goes), at WARNING unless verbose."""
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    if verbose:
        os.environ["GRPO_RLVR_VERBOSE"] = "1"
        return
    for var in ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(var, "1")
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")


def _quiet_broken_pipe() -> int:
    """The reader of stdout went away (``grpo-rlvr gate DIR | head``): stop quietly, as ``cat`` does.

    stdout is pointed at /dev/null so that the interpreter's final flush cannot raise again.
    """
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE


def _run_command(args) -> int:
    try:
        return args.func(args)
    except GrpoRlvrError as e:
        print(f"Error: {e}", file=sys.stderr)
        if getattr(args, "json", False):  # stdout still holds exactly one JSON document
            print(json.dumps({"ok": False, "error": str(e), "exit_code": e.exit_code}), file=document())
        return e.exit_code
    except KeyboardInterrupt:
        print("Interrupted.", file=sys.stderr)
        return 130


def main(argv: list[str] | None = None) -> int:
    passive_openmp()  # before any command imports torch: libgomp reads it once, when it loads
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    # huggingface_hub gives its logger a handler of its own and leaves it propagating: beside the root's handler
    # above, each of its warnings ("Retrying in 1s [Retry 1/5].") would print twice
    logging.getLogger("huggingface_hub").propagate = False
    one_line_warnings()   # preflight and inspect build TRL's trainer: its warnings as train.py prints them
    _library_output(args.verbose)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        try:
            with json_stdout(getattr(args, "json", False)):   # what the command runs prints to stderr
                return _run_command(args)
        finally:
            sys.stdout.flush()  # a broken pipe shows up here for short outputs
    except BrokenPipeError:
        return _quiet_broken_pipe()


if __name__ == "__main__":
    sys.exit(main())
