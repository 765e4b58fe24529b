"""``grpo-rlvr demo --task tool`` end to end, short: every phase through TRL's tool loop (preflight, inspect, the
oracle's review, the gate, the rendered train.py with ``GRPOTrainer(tools=[add])``), five GRPO steps. It checks what
happened, not how well it learned (the demo's outcome is a measurement in docs/measurements.md): the model called
the tool in training, TRL ran each call (a tool turn in the logged completions holds the sum of the call's arguments), and the
rewards and TRL's tool metrics were logged. Half the demo's warmup (500 steps, about 150 s less) already leaves a
model that calls the tool and sometimes answers right (seed 0: tool-call rate 0.45, accuracy 0.13), which is all
this test needs; 300 steps do not (no sample right: the gate refuses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from browser import assert_page_shows


@pytest.mark.e2e
def test_the_tool_demo_calls_its_tool_through_every_phase(tmp_path):
    work = tmp_path / "demo"
    out = subprocess.run([sys.executable, "-m", "grpo_rlvr", "demo", "--task", "tool", "--workdir", str(work),
                          "--steps", "5", "--warmup-steps", "500", "--json"], capture_output=True, text=True,
                         timeout=2400,
                         env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert out.returncode == 0, out.stderr[-3000:]
    s = json.loads((work / "demo_summary.json").read_text())
    assert s["preflight_untrained"] == "sft-first" and s["gate_passed"] and s["grpo_steps"] == 5
    assert 0 < s["accuracy_before"]["tool_call_rate"] < 1 and "tool_call_rate" in s["accuracy_after"]

    samples = [json.loads(x) for x in (work / "out" / "inspection" / "samples.jsonl").read_text().splitlines()]
    assert any(m["role"] == "tool" for x in samples for m in x["completion"])    # inspect ran the tool loop

    output = work / "out" / "run" / "output"
    metrics = [json.loads(x) for x in (output / "metrics.jsonl").read_text().splitlines()]
    logged = [m for m in metrics if "rewards/exact_match/mean" in m]
    assert logged and all("rewards/format/mean" in m for m in logged)
    assert any(m.get("tools/call_frequency", 0) > 0 for m in logged)

    executed = 0
    for f in sorted((output / "completions").glob("*.parquet")):
        for completion in pd.read_parquet(f)["completion"]:
            messages = list(completion)
            for call, reply in zip(messages, messages[1:], strict=False):
                if call.get("tool_calls") is None or len(call["tool_calls"]) == 0 or reply["role"] != "tool":
                    continue
                args = json.loads(call["tool_calls"][0]["function"]["arguments"])
                if all(type(args.get(k)) is int for k in ("a", "b")) and len(args) == 2:
                    assert reply["content"] == str(args["a"] + args["b"]), (call, reply)
                    executed += 1
    assert executed > 0     # TRL called add with what the model wrote and sent its sum back

    # the run's report, written as training ended, opened as a person opens it: the model, the review, the tool
    report = json.loads((output / "report.json").read_text())
    assert report["state"]["state"] == "finished" and report["trained"]["tools"]["spec"]
    assert "tools" in {c["key"] for c in report["curves"]} and report["rollouts"][-1]["step"] == 5
    # and its findings: each present at the end by its title, or the page says there was none
    present = [x["title"] for x in report["findings"] if x["present"]] or ["No finding at the end"]
    assert report["audit"]["recorded"] and report["audit"]["checks"], report["audit"]   # the live review audit ran
    assert_page_shows(output / "report.html", tmp_path, "Run report: tool-demo", "./model",
                      "oracle:tool-demo (oracle)", "tool calls per rollout", "grpo_rlvr.examples.tool.tools:add",
                      "[assistant → call]", report["audit"]["sentence"], *present)
