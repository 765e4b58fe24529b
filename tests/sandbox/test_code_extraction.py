"""Finding the program in a completion."""

from __future__ import annotations

from grpo_rlvr.sandbox._extract import extract_program


def test_last_python_block_wins():
    text = "First try:\n```python\ndef f(): return 1\n```\nBetter:\n```python\ndef f(): return 2\n```\nDone."
    assert extract_program(text) == "def f(): return 2\n"


def test_python_block_preferred_over_untagged_and_other_languages():
    text = "```python\nx = 1\n```\n```\noutput: 1\n```\n```bash\nls\n```"
    assert extract_program(text) == "x = 1\n"


def test_untagged_block_when_no_python_block():
    assert extract_program("Here:\n```\ny = 2\n```") == "y = 2\n"


def test_unterminated_fence_runs_to_end():
    assert extract_program("```py\nz = 3\nprint(z)") == "z = 3\nprint(z)"


def test_plain_text_is_the_program():
    assert extract_program("def f():\n    return 1\n") == "def f():\n    return 1\n"


def test_no_code():
    assert extract_program("   \n") == ""
    assert extract_program("```bash\nls\n```") == ""
    assert extract_program(None) == ""
