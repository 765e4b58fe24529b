"""The report page opened as a person opens it, in headless Chromium (Debian's; skipped where it is absent): the
screenshot is not blank, and the page the browser built names the run's model, its review and its findings. Model
output on the page is text, never markup."""

from __future__ import annotations

import pytest

from browser import CHROMIUM, MISSING, assert_page_shows, chromium
from grpo_rlvr.report import write_report
from report.conftest import write_audit

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason=MISSING)


@needs_chromium
def test_a_stopped_runs_report_in_a_browser_names_its_model_review_audit_and_findings(written_run, tmp_path):
    out = written_run / "output"
    write_audit(out, diverge=True)
    page = write_report(written_run).html
    dom = assert_page_shows(page, tmp_path, "Run report: arithmetic-demo", "./model", "ada (human)", "tester (human)",
                            "training's own rollouts differ from the reviewed inspection",
                            "Many completions are truncated", "STOPPED the run before the optimizer stepped",
                            "Raise max_completion_length", "Proven run.")
    assert dom.count('<img src="data:image/svg+xml;base64,') >= 8   # the curves, inlined
    pdf = tmp_path / "report.pdf"
    chromium(page.as_uri(), tmp_path / "profile", f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    assert pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 50_000   # it prints


@needs_chromium
def test_a_crashed_runs_report_in_a_browser_names_the_death_and_its_fix(crashed_run, tmp_path):
    page = write_report(crashed_run).html
    assert_page_shows(page, tmp_path, "died after step 15: RewardError", "./model", "tester (human)",
                      "The run died: RewardError", "the message names what is wrong and the fix")


def test_model_output_on_the_page_is_text_not_markup(written_run):
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = sorted((written_run / "output" / "completions").glob("*.parquet"))[-1]
    rows = pq.read_table(f).to_pylist()
    for r in rows:
        r["completion"] = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
    pq.write_table(pa.Table.from_pylist(rows), f)
    html = write_report(written_run).html.read_text()
    assert "<script>alert(2)" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
