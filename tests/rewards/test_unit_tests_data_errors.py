"""A test that cannot run whatever the program is, is the data's fault, never the model's: an import of a module the
sandbox's Python lacks (it scored "1/1 passed": the failed import was skipped), and, in a row with a reference
solution, any test the reference does not pass (a name neither the tests nor the reference define, in setup or in
an assert's helper). `validate` names the row by file and line (exit 2); in training its samples are unscorable
(None, named), never 0 against the model. Without a reference, a missing name stays the program's 0, and the
reason says the tests may be at fault."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml

from briefs import example_brief_text
from grpo_rlvr.errors import BadColumn
from grpo_rlvr.rewards import build_reward

CLI = [sys.executable, "-m", "grpo_rlvr"]
PROGRAM = "```python\ndef f(x):\n    return x + 2\n```"
REFERENCE = "def f(x):\n    return x + 2\n"
BROKEN = {
    "an import of a missing module": "import nonexistent_module\nassert f(1) == 3\n",
    "an undefined name in setup": ["x = undefined_name", "assert f(1) == 3"],
    "an undefined helper in an assert": "def test_a():\n    assert helper(f(1)) == 3\n",
}


@pytest.fixture(scope="module")
def with_reference():
    return build_reward("unit_tests", {"require_format": False, "workers": 1, "reference_column": "reference"})


@pytest.fixture(scope="module")
def without_reference():
    return build_reward("unit_tests", {"require_format": False, "workers": 1})


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_test_the_reference_cannot_run_is_unscorable_in_training(with_reference, case):
    tests = BROKEN[case]
    good = ["assert f(1) == 3", "assert f(2) == 4"]
    got = with_reference.explain_tolerant([PROGRAM, PROGRAM], tests=[tests, good], reference=[REFERENCE, REFERENCE])
    assert got[0].score is None and got[0].raised, got[0]
    assert "the data's fault" in got[0].reason or "whatever the program is" in got[0].reason, got[0]
    assert (got[1].score, got[1].reason) == (1.0, "2/2 passed")
    assert with_reference(completions=[PROGRAM], tests=[tests], reference=[REFERENCE]) == [None]   # TRL's call


def test_the_reasons_name_the_fault():
    r = build_reward("unit_tests", {"require_format": False, "workers": 1, "reference_column": "reference"})
    with pytest.raises(BadColumn, match="the tests import 'nonexistent_module', which the sandbox's Python does not "
                                        "have, so they fail \\(or are skipped and pass\\) whatever the program is"):
        r.check_row({"tests": BROKEN["an import of a missing module"]})
    with pytest.raises(BadColumn, match="the row's reference solution \\(column 'reference'\\) fails: 0/1 passed; test "
                                        "1 failed: helper\\(f\\(1\\)\\) raised NameError: name 'helper' is not "
                                        "defined: a test its own reference cannot pass is the data's fault"):
        r.check_row({"tests": BROKEN["an undefined helper in an assert"], "reference": REFERENCE})
    r.check_row({"tests": "import math\nfrom __future__ import annotations\nassert f(1) == 3\n"})   # installed: fine
    r.check_row({"tests": ["assert f(1) == 3"], "reference": REFERENCE})


def test_without_a_reference_a_missing_name_is_the_programs_zero_and_the_reason_says_the_tests_may_be_at_fault(
        without_reference):
    got = without_reference.explain([PROGRAM, "```python\ndef g(x):\n    return x + 2\n```"],
                                    tests=[BROKEN["an undefined name in setup"], ["assert f(1) == 3"]])
    assert got[0].score == 0.0 and "(nothing defines 'undefined_name': if the tests should, the row is broken" \
        in got[0].reason
    assert got[1].score == 0.0 and "nothing defines 'f'" in got[1].reason   # a misnamed function earns no None


def test_validate_names_each_row_by_file_and_line(workspace):
    data = yaml.safe_load(example_brief_text())
    data["rewards"] = [{"name": "format", "weight": 0.2},
                       {"name": "unit_tests", "weight": 1.0, "params": {"reference_column": "reference"}}]
    data["dataset"] = {"path": "./data/rows.jsonl", "prompt_column": "prompt"}
    rows = [{"prompt": f"f(x) = x + 2, {i}", "tests": ["assert f(1) == 3"], "reference": REFERENCE} for i in range(12)]
    for line, tests in zip((4, 7, 11), BROKEN.values(), strict=True):
        rows[line - 1]["tests"] = tests
    (workspace / "data" / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    brief = workspace / "code.yaml"
    brief.write_text(yaml.safe_dump(data))
    out = subprocess.run([*CLI, "validate", str(brief)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert "dataset.path: 3 of 12 rows cannot be scored by their rewards" in out.stderr, out.stderr
    for line, says in ((4, "the tests import 'nonexistent_module'"), (7, "name 'undefined_name' is not defined"),
                       (11, "name 'helper' is not defined")):
        assert f"data/rows.jsonl, line {line}: " in out.stderr and says in out.stderr, (line, out.stderr)
