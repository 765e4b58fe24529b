"""Finding the program in a completion."""

from __future__ import annotations

from grpo_rlvr.sandbox.judging.extract import extract_program


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


def test_fence_after_a_tag_on_the_same_line_and_closed_at_a_code_line_end():
    """What code_mbpp's prompt asks for: the ```python block inside <answer></answer>."""
    text = "<answer>```python\ndef add(a, b):\n    return a + b```</answer>"
    assert extract_program(text) == "def add(a, b):\n    return a + b"
    assert extract_program("Here it is: ```python\nx = 1\n```") == "x = 1\n"


def test_one_line_fence():
    assert extract_program("```python print(1)```") == "print(1)"
    assert extract_program("```x = 2```") == "x = 2"  # no language: the word is code


def test_nested_fences_take_the_innermost_block():
    assert extract_program("````markdown\n```python\nx = 1\n```\n````") == "x = 1\n"
    assert extract_program("```markdown\n```python\nx = 2\n```\n```") == "x = 2\n"
    assert extract_program("````\n```\ny = 3\n```\n````") == "y = 3\n"


def test_unterminated_fence_inside_a_tag_runs_to_the_end():
    assert extract_program("<answer>\n```python\ndef f():\n    return 1") == "def f():\n    return 1"


def test_misspelled_or_versioned_python_tags_count_as_python():
    for tag in ("pythhon", "pyhton", "pyton", "Python", "PY", "py3", "python3.11", "ipython"):
        text = f"```{tag}\nx = 1\n```\n```bash\nls\n```"
        assert extract_program(text) == "x = 1\n", tag
    assert extract_program("```untagged\ny = 2\n```\n```pythhon\nx = 1\n```") == "x = 1\n"
    assert extract_program("```javascript\nlet x = 1\n```") == ""   # another language is still not Python
    assert extract_program("```php\n$x = 1;\n```") == ""


def test_text_right_after_the_closing_fence_does_not_open_a_block():
    assert extract_program("```python\nx = 1\n```Hope this helps!") == "x = 1\n"
    assert extract_program("```python\nx = 1\n```.") == "x = 1\n"
    assert extract_program("```python\nx = 1\n```Done.\nAnything else?") == "x = 1\n"
    assert extract_program("```python\ndef f():\n    return 1```end of answer") == "def f():\n    return 1"
    assert extract_program("```pythhon\nx = 1\n```This works") == "x = 1\n"
