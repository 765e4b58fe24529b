"""Rule 5 with a ``rubric_judge`` as the correctness part: it passes only when the judge agrees with the
person's verdicts at the stated Cohen's kappa (0.6 by default, ``inspection.judge_min_kappa`` in the brief).

The judge is the real ``rubric_judge`` reward talking HTTP to a STAND-IN judge server on loopback (no LLM can
run here): one stand-in grades exactly like the person, the other passes anything in ``<answer>`` tags."""

from __future__ import annotations

import contextlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from artifacts import make_artifact
from briefs import example_brief_text
from grpo_rlvr.gate.check import check_gate
from grpo_rlvr.inspection import load_artifact
from grpo_rlvr.inspection.artifact import make_verdict
from grpo_rlvr.rollout.trajectory import final_text, last_user_text


def _response(text: str) -> str:
    """The graded response: what rubric_judge puts between its ``<response-HASH>`` tags (or, for the person's
    side here, what follows ``COMPLETION:``)."""
    m = re.search(r"<(response-[0-9a-f]+)>\n(.*)\n</\1>", text, re.S)
    return m.group(2) if m else text.split("COMPLETION:")[-1]


def _truth(text: str) -> bool:
    """Right when the tagged number is the sum of the prompt's two digits."""
    q = re.search(r"(\d+)\s*\+\s*(\d+)", text)
    a = re.search(r"<answer>(-?\d+)</answer>\s*$", _response(text))
    return bool(q and a and int(q.group(1)) + int(q.group(2)) == int(a.group(1)))


class StandInJudge(BaseHTTPRequestHandler):
    lenient = False

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        text = " ".join(str(m["content"]) for m in body["messages"])
        ok = ("<answer>" in _response(text)) if self.server.lenient else _truth(text)
        score = 9 if ok else getattr(self.server, "wrong_pays", 1)   # a swapped judge pays wrong answers 7.7
        data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant",
                                                                "content": f"SCORE: {score}"}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def serve(lenient: bool, holder: list | None = None):
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), StandInJudge)
    httpd.lenient = lenient
    if holder is not None:
        holder.append(httpd)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(params=["faithful", "lenient"])
def judge(request):
    with serve(request.param == "lenient") as url:
        yield request.param, url


def judge_brief(workspace, url, min_kappa=None):
    data = yaml.safe_load(example_brief_text())
    data["rewards"] = [{"name": "format", "weight": 0.2},
                       {"name": "rubric_judge", "weight": 1.0,
                        "params": {"base_url": url, "model": "stand-in", "rubric": "Is the sum right?"}}]
    if min_kappa is not None:
        data["inspection"]["judge_min_kappa"] = min_kappa
    (workspace / "brief.yaml").write_text(yaml.safe_dump(data))
    return workspace / "brief.yaml"


def person_reviews(art_dir):
    """The person's verdicts: they blame the judge wherever its pass/fail differs from the true answer."""
    art = load_artifact(art_dir)
    for s in art.samples:
        right = _truth(f"{last_user_text(s['prompt'])} COMPLETION: {final_text(s['completion'])}")
        judged = s["scores"]["rubric_judge"]["score"] >= 0.5
        s["verdict"] = make_verdict(art.manifest, s, "agree" if judged == right else "disagree", "pat", "human", 3.0,
                                    rewards=[] if judged == right else ["rubric_judge"],
                                    note="" if judged == right else "the judge passed a wrong sum")
    art.save_samples()


def test_a_judge_passes_rule_5_only_at_the_stated_kappa(workspace, judge):
    kind, url = judge
    art = make_artifact(judge_brief(workspace, url), workspace / "out" / "inspection", verdict=None)
    person_reviews(art)
    res = check_gate(art)
    cal = res.calibration["rewards"]["rubric_judge"]
    rule5 = next(r for r in res.rules if r.id == 5)
    assert "needs kappa ≥ 0.60" in res.format()
    if kind == "faithful":
        assert cal["kappa"] == 1.0 and rule5.passed and res.passed, res.format()
    else:
        assert cal["kappa"] < 0.6 and not rule5.passed
        text = " ".join(rule5.problems)
        assert f"kappa against the person is {cal['kappa']:.2f}, below the required 0.60" in text
        assert "calibrate the judge first" in text and "calibrate the judge first" in rule5.fix


def test_the_brief_sets_the_kappa(workspace):
    with serve(lenient=True) as url:
        art = make_artifact(judge_brief(workspace, url, min_kappa=0.1), workspace / "out" / "inspection",
                            verdict=None)
        person_reviews(art)
        res = check_gate(art)
    rule5 = next(r for r in res.rules if r.id == 5)
    assert "needs kappa ≥ 0.10" in res.format()
    assert rule5.passed == (res.calibration["rewards"]["rubric_judge"]["kappa"] >= 0.1), rule5.problems


def test_a_judge_swapped_after_the_review_is_asked_again_and_refused(workspace):
    """The judge behind the same URL pays 7.7 of 10 for wrong answers after the review. The gate asks it afresh
    (never from a cache) on reviewed samples drawn at random, and refuses the answers that changed."""
    held = []
    with serve(lenient=False, holder=held) as url:
        brief = judge_brief(workspace, url)
        data = yaml.safe_load(brief.read_text())
        data["rewards"][1]["params"]["cache_dir"] = str(workspace / "judge-cache")   # cached at inspect
        brief.write_text(yaml.safe_dump(data))
        art = make_artifact(brief, workspace / "out" / "inspection", verdict=None)
        person_reviews(art)
        assert check_gate(art).passed
        held[0].wrong_pays = 7.7
        res = check_gate(art)
    rule3 = next(r for r in res.rules if r.id == 3)
    assert not rule3.passed, res.format()
    assert "the judge answers 0.77 now (asked afresh)" in " ".join(rule3.problems)
