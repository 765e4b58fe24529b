"""The trackio dashboard of a real run, opened in a real headless browser (Debian's Chromium): trackio's own local
server (``trackio show``, the command docs/pipeline.md gives) serves its bundled frontend, no CDN, and the page the
browser rendered names the run's reward curves. Skipped only where Chromium is absent (``apt-get install
chromium``; CI installs it: scripts/test.sh)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from browser import CHROMIUM, MISSING, dump_dom, stop
from diagnosis.test_runs import prepare_run
from grpo_rlvr.run.launch import train

pytestmark = pytest.mark.e2e

PROJECT = "arithmetic-demo"   # the brief's name: grpo-rlvr names the trackio project after it


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, server: subprocess.Popen, log, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if server.poll() is not None:
            raise AssertionError(f"the trackio server exited ({server.returncode}): {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"the trackio server did not answer at {url} within {seconds} s")


@pytest.mark.skipif(CHROMIUM is None, reason=MISSING)
def test_the_trackio_dashboard_of_a_real_run_shows_its_reward_curves(workspace, tiny_model_dir, tmp_path,
                                                                     monkeypatch):
    store = tmp_path / "trackio"
    monkeypatch.setenv("TRACKIO_DIR", str(store))   # the training and the server inherit it
    run = prepare_run(workspace, tiny_model_dir, {"logging_steps": 1}, 0, steps=3,
                      sections={"watch": {"stop_on": "never"}})
    assert train(run).ok
    assert any(store.rglob("*.db")), list(store.rglob("*"))

    port, log = _free_port(), tmp_path / "trackio-server.log"
    server = browser_dom = None
    try:
        # the command docs/pipeline.md gives; its port from GRADIO_SERVER_PORT, its "open a browser" a no-op
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "trackio"), "show", "--project", PROJECT],
            env={**os.environ, "GRADIO_SERVER_PORT": str(port), "BROWSER": "true"},
            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}/"
        _wait_for(base, server, log)
        with urllib.request.urlopen(base, timeout=10) as r:
            served = r.read().decode()
        assert "/assets/" in served and "role/" not in served   # the bundled app, its charts drawn by its JS
        browser_dom = dump_dom(f"{base}?project={PROJECT}", tmp_path / "chromium-profile")
    finally:
        stop(server)
    assert server.poll() is not None
    for metric in ("rewards/exact_match/mean", "role/correctness/exact_match", "reward"):
        assert metric in browser_dom, (metric, browser_dom[-4000:])
