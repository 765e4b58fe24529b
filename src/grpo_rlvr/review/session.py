"""``grpo-rlvr review``: a person reads every inspected sample and records agree / disagree.

One sample at a time: prompt, completion, each reward's score and reason. Keys: ``a`` agree, ``d`` disagree
(then a note, and which rewards are wrong), ``b`` back, ``t`` the chat template's text of the prompt and
completion (what the model read and wrote, token for token) instead of the messages, ``q`` quit. Before the first
sample it says which draw this is and lists every earlier draw of the brief. Every verdict is saved at once (atomic
write), so quitting and coming back loses nothing; the review resumes at the first sample without a verdict.

What makes the record a person's:
- verdicts are taken only from an interactive terminal (stdin and stdout are TTYs); piped or redirected
  input is refused (exit 2);
- each sample stays on screen ``DWELL_S`` seconds before a key is accepted, and keys typed meanwhile are
  discarded; the seconds each sample was on screen are recorded with its verdict (the gate judges them);
- one review at a time (``inspection/review_lock.py``), and each save merges with what is on disk, so a write
  from a stale session never removes a verdict it did not see: a disagreement always survives;
- control characters and invisible format characters in model output are shown as escapes (``\\x1b``), so
  a completion cannot hide its text or scores from the reader.

Limits: a program that fakes a terminal and waits between keys can still pose as a person; the gate's reading
time rule and the plugin's hook (which denies the agent ``grpo-rlvr review``) are the further layers.
"""

from __future__ import annotations

import getpass
import json
import os
import sys
import termios
import textwrap
import time
import unicodedata
from pathlib import Path

from grpo_rlvr.errors import ReviewError
from grpo_rlvr.files import write_jsonl_atomic
from grpo_rlvr.inspection.artifact import SAMPLES, load_artifact, make_verdict
from grpo_rlvr.inspection.report import render_report
from grpo_rlvr.inspection.review_lock import review_lock
from grpo_rlvr.inspection.signature import sign_review
from grpo_rlvr.rollout.trajectory import turns

DWELL_S = 0.5   # a sample is on screen at least this long before a key counts
PROMPT = "[a]gree  [d]isagree  [b]ack  [t]emplate text  [q]uit, then Enter > "
_KEEP = {"\n", "\t"}


def inert(text) -> str:
    """``text`` with every control, format and separator character shown as an escape instead of acting."""
    out = []
    for ch in str(text):
        if ch in _KEEP or unicodedata.category(ch) not in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs"):
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else f"\\U{ord(ch):08x}")
    return "".join(out)


def _line(text) -> str:
    return inert(text).replace("\n", "\\n").replace("\t", " ")


def require_terminal(stdin, stdout) -> None:
    """Raise ReviewError unless both streams are interactive terminals."""
    bad = [name for name, f in (("stdin", stdin), ("stdout", stdout)) if not _isatty(f)]
    if bad:
        raise ReviewError(f"grpo-rlvr review records a person's verdicts, so it runs only in an interactive terminal; "
                          f"{' and '.join(bad)} {'is' if len(bad) == 1 else 'are'} not a terminal (piped or "
                          "redirected). Open a terminal and run `grpo-rlvr review DIR` there yourself")


def _isatty(f) -> bool:
    try:
        return bool(f.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _ask(prompt: str, stdin, stdout) -> str | None:
    stdout.write(prompt)
    stdout.flush()
    line = stdin.readline()
    return None if line == "" else line.strip()


def _settle(stdin, stdout) -> None:
    """Keep the sample on screen for DWELL_S, then drop whatever was typed meanwhile."""
    stdout.flush()
    time.sleep(DWELL_S)
    try:
        termios.tcflush(stdin.fileno(), termios.TCIFLUSH)
    except (termios.error, OSError, ValueError):
        pass


WIDTH = 100   # characters per shown line; longer lines wrap, nothing is cut


def _block(conversation, out) -> None:
    """Every turn of a prompt or completion, labelled, each line wrapped at WIDTH (never cut)."""
    for label, text in turns(conversation):
        if label:
            out.write(f"  [{_line(label)}]\n")
        for line in inert(text or "<empty>").splitlines() or [""]:
            for piece in textwrap.wrap(line, WIDTH, replace_whitespace=False, drop_whitespace=False) or [""]:
                out.write(f"    {piece}\n" if label else f"  {piece}\n")


def reward_columns_read(manifest: dict) -> set[str] | None:
    """The dataset columns the inspected rewards read (``rewards.reference.columns_read``), or None when a user
    reward is among them: what it reads is not declared, so every column is shown."""
    from grpo_rlvr.rewards.reference import columns_read

    read: set[str] = set()
    for r in manifest.get("rewards") or []:
        cols = columns_read(r.get("name", ""), r.get("params") or {})
        if cols is None:
            return None
        read.update(cols)
    return read


def _truth_lines(name: str, value) -> list[str]:
    """One ground-truth column whole, wrapped at ``WIDTH``: a list one item a line (``- assert f(1) == 2``), text
    line by line with its indentation, anything else as JSON."""
    items = value if isinstance(value, list) else [value]
    lead = "    - " if isinstance(value, list) else "    "
    out = [f"  {_line(name)}:"]
    for item in items:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
        for k, para in enumerate(inert(text).replace("\t", "    ").splitlines() or [""]):
            first = lead if k == 0 else " " * len(lead)
            out += textwrap.wrap(para, WIDTH, initial_indent=first, subsequent_indent=" " * (len(lead) + 2),
                                 break_on_hyphens=False) or [first.rstrip()]
    return out


STATE_SHOWN = 4000   # characters of an environment's state shown (a state can be large)


def _text(text, out) -> None:
    for line in inert(text or "<empty>").splitlines() or [""]:
        for piece in textwrap.wrap(line, WIDTH, replace_whitespace=False, drop_whitespace=False) or [""]:
            out.write(f"  {piece}\n")


def _show(s: dict, i: int, n: int, out, read: set[str] | None = None, template: bool = False) -> None:
    bar = "─" * 72
    out.write(f"\n{bar}\nSample {i + 1}/{n}  ({_line(s['id'])}, {_line(s.get('outcome', '?'))})\n{bar}\n")
    rendered = s.get("rendered") if isinstance(s.get("rendered"), dict) else None
    if template and rendered:
        out.write("PROMPT AS THE MODEL READ IT (the chat template's text of its tokens; [t] for the messages):\n")
        _text(rendered.get("prompt"), out)
        out.write(f"COMPLETION AS THE MODEL WROTE IT{' (truncated)' if s.get('truncated') else ''} (tool output "
                  "included):\n")
        _text(rendered.get("completion"), out)
    else:
        if template:
            out.write("(this inspection kept no template text: re-inspect to see it)\n")
        out.write("PROMPT (every message the model saw; [t] for the chat template's text):\n")
        _block(s["prompt"], out)
        out.write(f"COMPLETION{' (truncated)' if s.get('truncated') else ''}:\n")
        _block(s["completion"], out)
    gt = s.get("columns") or {}
    shown = {k: v for k, v in gt.items() if read is None or k in read}
    if shown:
        out.write("GROUND TRUTH:\n")
        for name, value in shown.items():
            out.writelines(f"{line}\n" for line in _truth_lines(name, value))
    if s.get("environment_state") is not None:   # what the environment held when the rollout ended
        out.write("ENVIRONMENT STATE (when the rollout ended; rewards read it):\n")
        state = json.dumps(s["environment_state"], indent=1, ensure_ascii=False, default=str)
        _text(state if len(state) <= STATE_SHOWN else f"{state[:STATE_SHOWN]}\n… ({len(state):,} characters in all; "
              "the whole state is in samples.jsonl)", out)
    out.write("SCORES:\n")
    for name, sc in s["scores"].items():
        out.write(f"  {_line(name):<16} {sc['score']!s:<6} {_line(sc['reason'])}\n")
    out.write(f"  {'total':<16} {s['total']:.3f}\n")
    if s.get("verdict"):
        v = s["verdict"]
        out.write(f"(current verdict: {_line(v['verdict'])}{': ' + _line(v['note']) if v.get('note') else ''})\n")


def save_verdict(directory: Path, sample_id: str, new: dict, seen: dict | None) -> tuple[list[dict], str | None]:
    """Write one verdict, merged with the file as it is now. Returns the samples on disk and a notice or None.

    Only this sample changes; every other sample keeps what is on disk. If this sample's verdict on disk is not
    the one this session was shown (another session wrote it), a disagreement wins over an agreement it has not
    seen, and the replaced verdict is kept in ``history``: nothing is ever dropped.
    """
    art = load_artifact(directory)
    notice = None
    for s in art.samples:
        if s.get("id") != sample_id:
            continue
        disk = s.get("verdict")
        history = list((disk or {}).get("history") or [])
        if disk is not None:
            history.append({k: v for k, v in disk.items() if k != "history"})
        if disk is not None and disk != seen and disk.get("verdict") == "disagree" and new["verdict"] != "disagree":
            notice = (f"{sample_id}: another session recorded a disagreement "
                      f"({disk.get('reviewer')}: {disk.get('note') or 'no note'}); it is kept\n")
            kept = dict(disk)
            kept["history"] = (disk.get("history") or []) + [new]
            s["verdict"] = kept
        else:
            s["verdict"] = {**new, "history": history} if history else new
        break
    write_jsonl_atomic(art.dir / SAMPLES, art.samples)
    return art.samples, notice


def review(directory, reviewer: str | None = None, stdin=None, stdout=None, sign: str | None = None) -> int:
    """Run the review loop. Returns 0 when every sample has a verdict, 1 when quit early.

    Args:
        sign: an SSH key; when every sample has a verdict, the review is signed with it (``review.sig``, see
            ``inspection/signature.py``). ssh-keygen asks for the key's passphrase on this terminal.
    Raises:
        ReviewError: stdin or stdout is not a terminal, another review is running on this folder, or signing
            failed.
    """
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout
    require_terminal(stdin, out)
    art = load_artifact(directory)
    reviewer = reviewer or os.environ.get("USER") or getpass.getuser()
    with review_lock(art.dir, reviewer, notice=out.write):
        try:
            done = _loop(art, reviewer, stdin, out)
            if done == 0 and sign:
                final = load_artifact(art.dir)
                path = sign_review(final.dir, final.manifest, final.samples, sign)
                out.write(f"Signed the review with {sign}: {path}\n")
            return done
        except KeyboardInterrupt:
            left = sum(1 for x in load_artifact(art.dir).samples if not x.get("verdict"))
            out.write(f"\nInterrupted. Saved verdicts are kept; {left} sample(s) left. "
                      f"Run `grpo-rlvr review {art.dir}` to continue.\n")
            return 1


def _loop(art, reviewer: str, stdin, out) -> int:
    samples = art.samples
    n = len(samples)
    i = next((k for k, s in enumerate(samples) if not s.get("verdict")), n)
    if i and i < n:
        out.write(f"Resuming at sample {i + 1} of {n} ({i} already reviewed).\n")
    out.write("Read each completion and its scores. Do the scores say what you would say? Type a key, then "
              "press Enter.\n")
    names = list(samples[0]["scores"]) if samples else []
    read = reward_columns_read(art.manifest)
    out.writelines(f"{line}\n" for line in draw_lines(art))
    out.writelines(f"{line}\n" for line in tool_lines(art.manifest))
    template = False
    while i < n:
        s = samples[i]
        _show(s, i, n, out, read, template)
        shown = time.monotonic()
        _settle(stdin, out)
        key = _ask(PROMPT, stdin, out)
        if key is None or key.lower() in ("q", "quit"):
            render_report(art.dir, art.manifest, samples)
            left = sum(1 for x in samples if not x.get("verdict"))
            out.write(f"\nSaved. {n - left} of {n} reviewed; run `grpo-rlvr review {art.dir}` to continue.\n")
            return 1
        key = key.lower()
        if key in ("b", "back"):
            i = max(0, i - 1)
            continue
        if key in ("t", "template"):   # the same sample again, the other way round; no verdict
            template = not template
            continue
        if key in ("a", "agree"):
            new = make_verdict(art.manifest, s, "agree", reviewer, "human", time.monotonic() - shown)
        elif key in ("d", "disagree"):
            seconds = time.monotonic() - shown
            note = _ask("What is wrong with the scores? > ", stdin, out) or ""
            blamed = _ask(f"Which reward is wrong? ({', '.join(names)}; empty = all) > ", stdin, out) or ""
            wrong = [x.strip() for x in blamed.replace(",", " ").split() if x.strip() in names]
            new = make_verdict(art.manifest, s, "disagree", reviewer, "human", seconds, note=note, rewards=wrong)
        else:
            out.write("Please answer a, d, b, t or q.\n")
            continue
        samples, notice = save_verdict(art.dir, s["id"], new, s.get("verdict"))
        if notice:
            out.write(_line(notice) + "\n")
        i += 1
    render_report(art.dir, art.manifest, samples)
    out.write(summary(samples, art.dir))
    return 0


def tool_lines(manifest: dict) -> list[str]:
    """What the model was offered besides text, from the manifest's record of the brief's tools (none: no line)."""
    spec = (manifest.get("tools") or {}).get("spec") if isinstance(manifest.get("tools"), dict) else None
    if not isinstance(spec, dict):
        return []
    offered = [f"function {_line(f)}" for f in spec.get("functions") or ()]
    if spec.get("environment"):
        offered.append(f"environment {_line(spec['environment'])} (one per rollout; its public methods are tools; "
                       "each sample shows its state at the end)")
    if spec.get("python") not in (None, False):
        offered.append("python (model-written code run in the sandbox)")
    return [f"Tools offered to the model: {'; '.join(offered)}."] if offered else []


def draw_lines(art) -> list[str]:
    """What the person is told about the draw before the first sample: which draw this is, and every earlier draw
    of this brief (in this folder and on this account), so that drawing again until the sample looks good shows."""
    from grpo_rlvr.inspection.draws import DRAWS, earlier_for_brief, read_log

    draw = art.manifest.get("draw") if isinstance(art.manifest.get("draw"), dict) else {}
    folder = [d for d in read_log(art.dir / DRAWS) if d.get("seed") != draw.get("seed")]
    account = earlier_for_brief((art.manifest.get("brief") or {}).get("fingerprint", ""), draw.get("seed"))
    lines = [f"These samples are draw {draw.get('number', '?')} made into this folder and draw "
             f"{draw.get('of_brief', '?')} for this brief on this account (rows chosen at random when inspect ran)."]
    earlier = {d.get("seed"): d for d in account}
    earlier.update({d.get("seed"): d for d in folder})   # the folder's records say how each draw ended
    if earlier:
        lines.append(f"Earlier draws of this brief ({len(earlier)}; if you did not ask for them, ask why), the "
                     f"latest {min(8, len(earlier))}:")
        for d in list(earlier.values())[-8:]:
            ended = (f"replaced holding {d['verdicts_when_replaced']} verdicts" if "verdicts_when_replaced" in d
                     else "in another folder")
            lines.append(f"  {d.get('time', '?')}: {d.get('samples', '?')} samples, outcomes {d.get('outcomes', '?')}, "
                         f"{ended}: {d.get('folder', '?')}")
    audit = (art.manifest.get("bound_settings") or {}).get("audit")
    if isinstance(audit, dict) and (audit.get("stop_on") == "never" or (audit.get("alpha") or 1) < 1e-3):
        lines.append(f"The brief loosens the review audit ({audit}): a run whose rollouts differ from these will "
                     + ("only be recorded, not stopped." if audit.get("stop_on") == "never" else
                        "be stopped less often."))
    return lines


def summary(samples: list[dict], directory: Path) -> str:
    dis = [s for s in samples if (s.get("verdict") or {}).get("verdict") == "disagree"]
    lines = [f"\nReview complete: {len(samples)} samples, {len(samples) - len(dis)} agree, {len(dis)} disagree."]
    if dis:
        blamed: dict[str, int] = {}
        for s in dis:
            for r in s["verdict"].get("rewards") or ["(unspecified)"]:
                blamed[r] = blamed.get(r, 0) + 1
        lines.append("Disagreements point at: " + ", ".join(f"{k} ×{v}" for k, v in sorted(blamed.items())))
        for s in dis[:10]:
            lines.append(f"  {s['id']}: {_line(s['verdict'].get('note') or '(no note)')}")
        lines.append("Fix the reward, then re-run `grpo-rlvr inspect --force` (this review is kept as a backup) and "
                     "review again; the gate will not pass.")
    else:
        lines.append(f"Next: grpo-rlvr gate {directory}")
    return "\n".join(lines) + "\n"
