"""Debian's headless Chromium, for the tests that open a page as a person would (the run report, trackio's
dashboard): the DOM it built, and a screenshot that is checked not to be blank. ``CHROMIUM`` is None where it is not
installed (scripts/test.sh installs it as root; elsewhere those tests skip, naming the package)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from pathlib import Path

CHROMIUM = shutil.which("chromium")
MISSING = "Chromium is absent: apt-get install chromium (Debian's headless browser) to open pages in tests"
_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars")


def stop(proc: subprocess.Popen | None) -> None:
    """End the process group a test started (a server or the browser and their children), whatever its state."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    except ProcessLookupError:
        pass


def chromium(url: str, profile: Path, *flags: str, timeout: float = 120) -> str:
    """Run Chromium on ``url`` with ``flags`` in a profile of its own; its stdout (the DOM for ``--dump-dom``)."""
    browser = subprocess.Popen([CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *flags, url],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = browser.communicate(timeout=timeout)
    finally:
        stop(browser)
    assert browser.returncode == 0, err[-3000:]
    return out


def dump_dom(url: str, profile: Path, virtual_time_ms: int = 20000) -> str:
    """The DOM after the page's scripts ran (virtual time lets its fetches and renders finish)."""
    return chromium(url, profile, f"--virtual-time-budget={virtual_time_ms}", "--dump-dom")


def screenshot(page: Path, png: Path, profile: Path, width: int = 1280, height: int = 2400) -> Path:
    """A screenshot of the local file ``page`` at ``width`` × ``height`` CSS pixels, written to ``png``."""
    chromium(Path(page).resolve().as_uri(), profile, f"--window-size={width},{height}", f"--screenshot={png}")
    assert png.is_file(), f"Chromium wrote no screenshot of {page}"
    return png


def ink(png: Path) -> tuple[float, int]:
    """How much of a screenshot is drawn: the share of pixels that are not the page's background (its most common
    colour), and how many distinct colours it has. A blank or failed page is one colour."""
    from PIL import Image

    image = Image.open(png).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 24)
    background = max(colours)[0]
    total = image.width * image.height
    return 1 - background / total, len(colours)


def assert_page_shows(page: Path, work: Path, *said: str) -> str:
    """Open ``page`` in Chromium as a person would: its screenshot is not blank and the DOM the browser built holds
    every text in ``said``; returns that DOM. Without Chromium, the file's own text is checked instead."""
    if CHROMIUM is None:
        dom = Path(page).read_text()
    else:
        png = screenshot(page, work / f"{Path(page).stem}.png", work / "chromium-profile")
        drawn, colours = ink(png)
        assert drawn > 0.03 and colours > 50, (png, drawn, colours)   # a blank page is one colour
        dom = dump_dom(Path(page).resolve().as_uri(), work / "chromium-profile")
    missing = [s for s in said if s not in dom]
    assert not missing, missing
    return dom
