"""Finding the program in a model's completion text.

Covered: Markdown fences wherever they stand: at a line start or after other text on the same line
(``<answer>```python``), closed at the end of a code line (``return a```</answer>``), on one line
(```` ```python print(1)``` ````), nested (a ```` ```` ```` or ```` ```markdown ```` block holding a
```` ```python ```` one: the innermost blocks count), and unterminated at the end of the text (a completion cut at
``max_completion_length`` runs to the end). A run of three or more backticks followed by a word opens a block
(the word is its language when a line break or a known language name follows); a bare run closes the innermost
open block whose run was no longer, or else opens an untagged one; so does a run with text right after it
(```` ```Hope this helps ````), unless that text is a language name. Of the innermost blocks, the last
tagged Python wins; otherwise the last untagged one; otherwise the whole text. A Python tag is ``python``, ``py``,
any case, with a version (``py3``, ``python3.11``), or misspelled by a letter or two (``pythhon``, ``pyhton``:
close to ``python`` by difflib's ratio ≥ 0.8, which also takes ``ipython``, ``jython`` and ``cython``). Not
covered: other languages, several blocks that only work when concatenated (the last one is taken: models
usually repeat the full program at the end), a run of backticks inside a string literal of the program.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_RUN = re.compile(r"`{3,}")
_INFO = re.compile(r"([A-Za-z0-9_+.-]+)([^\S\n]*)(\n?)")
_BLANK = re.compile(r"[^\S\n]*\n")
_PYTHON_TAGS = {"python", "py", "python3", "py3"}
_LANGUAGES = _PYTHON_TAGS | {"javascript", "js", "typescript", "ts", "java", "c", "cpp", "c++", "go", "rust",
                             "bash", "sh", "shell", "json", "yaml", "text", "markdown", "md", "sql", "ruby"}


def _is_python(tag: str) -> bool:
    """``tag`` (lowercased) names Python: a Python tag, with a version, or a near miss of ``python``."""
    base = tag.rstrip("0123456789.")
    return tag in _PYTHON_TAGS or base in _PYTHON_TAGS or bool(difflib.get_close_matches(base, ["python"], 1, 0.8))


def _is_language(tag: str) -> bool:
    return tag in _LANGUAGES or _is_python(tag)


@dataclass
class _Block:
    ticks: int
    lang: str
    start: int  # where the code starts
    end: int = -1  # where it ends (-1: still open)
    has_inner: bool = False


def _blocks(text: str) -> list[_Block]:
    """Every fenced block of ``text``, innermost ones marked by ``has_inner`` on their parents."""
    done: list[_Block] = []
    stack: list[_Block] = []
    for m in _RUN.finditer(text):
        ticks, after = len(m.group()), m.end()
        info = _INFO.match(text, after)
        word = info.group(1).lower() if info else ""
        # inside a block, a run long enough to close it closes it, also with text right after it ("```Hope this
        # helps", "```Done.\n"), unless a language name follows ("```python\n" opens a nested block)
        if stack and ticks >= stack[-1].ticks and not _is_language(word):
            block = stack.pop()
            block.end = m.start()
            done.append(block)
            continue
        blank = _BLANK.match(text, after)
        lang, start = "", blank.end() if blank else after
        if info is not None:
            if info.group(3) or info.end() == len(text) or _is_language(word):
                lang, start = word, info.end()  # "```python\n", "```python print(1)```"
        if stack:
            stack[-1].has_inner = True
        stack.append(_Block(ticks, lang, start))
    for block in stack:  # unterminated: runs to the end of the text
        block.end = len(text)
        done.append(block)
    return sorted(done, key=lambda b: b.start)


def extract_program(text: str) -> str:
    """The code to run, or ``""`` when the completion holds no code at all."""
    if not isinstance(text, str):
        return ""
    blocks = [b for b in _blocks(text) if not b.has_inner]
    bodies = [(b.lang, text[b.start:b.end]) for b in blocks]
    python = [body for lang, body in bodies if lang and _is_python(lang) and body.strip()]
    plain = [body for lang, body in bodies if not lang and body.strip()]
    if python:
        code = python[-1]
    elif plain:
        code = plain[-1]
    elif blocks:  # fenced, but only in other languages
        return ""
    else:
        code = text
    return code if code.strip() else ""
