"""A public corpus of MBPP/LeetCode-style tasks whose tests do something to a value after making it: an
expected value the test mutates (item and slice assignment, ``+=``, ``append``/``extend``/``sort``/``del``/
``setdefault``, aliasing, a ``setUp`` or a loop that fills it) before comparing, an argument the program must
change in place (rotate, sort, reverse, transpose, remove duplicates and return the length, fill a dict or a
set), and ``!=`` / ``not in`` where Python's ``True == 1`` decides.

Each task carries one right program, wrong ones (``"cheater"`` first: the one a judge that does not follow the
test's own Python would pay: it returns the expected value as first written, changes nothing in place, or
returns ``1``/``0`` where Python compares it equal to ``True``/``False``), programs Python also accepts
(``also_right``), and the same checks in three formats: an assert list (setup lines included), test code
(pytest ``test_*`` functions, or a ``unittest.TestCase``) and HumanEval's ``check(candidate)``. Written for
this project; no task is taken from a dataset. What each format means in plain Python is checked by
``test_python_semantics::test_the_corpus_means_what_it_says_in_plain_python``.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

FORMATS = ("asserts", "pytest", "check")
KINDS = ("in_place", "mutated_expected", "python_semantics")


@dataclass(frozen=True)
class Task:
    name: str
    kind: str  # one of KINDS
    shape: str  # what the test does, in a few words
    entry_point: str
    correct: str
    wrong: dict[str, str]  # "cheater" first
    asserts: list[str]
    pytest: str  # pytest test_* functions, or a unittest.TestCase
    check: str  # HumanEval: def check(candidate)
    also_right: tuple[str, ...] = field(default=())  # other programs plain Python accepts

    def tests(self, fmt: str):
        return {"asserts": self.asserts, "pytest": self.pytest, "check": self.check}[fmt]

    def entry_for(self, fmt: str) -> str | None:
        return self.entry_point if fmt == "check" else None

    @property
    def uses_unittest(self) -> bool:
        return "unittest.TestCase" in self.pytest


def _c(text: str) -> str:
    """Code written indented inside this module, as a file would hold it."""
    return textwrap.dedent(text).lstrip("\n")


CORPUS: list[Task] = [
    # ------------------------------------------------------------------ expected values the test mutates
    Task(
        name="center_mark",
        kind="mutated_expected",
        shape="item assignment into a nested expected list",
        entry_point="center_mark",
        correct=_c("""
            def center_mark(n):
                grid = [[0] * n for _ in range(n)]
                grid[n // 2][n // 2] = 1
                return grid
        """),
        wrong={
            "cheater": "def center_mark(n):\n    return [[0] * n for _ in range(n)]\n",
            "corner": _c("""
                def center_mark(n):
                    grid = [[0] * n for _ in range(n)]
                    grid[0][0] = 1
                    return grid
            """),
        },
        asserts=[
            "expected = [[0] * 3 for _ in range(3)]",
            "expected[1][1] = 1",
            "assert center_mark(3) == expected",
            "big = [[0] * 5 for _ in range(5)]",
            "big[2][2] = 1",
            "assert center_mark(5) == big",
        ],
        pytest=_c("""
            def test_three():
                expected = [[0] * 3 for _ in range(3)]
                expected[1][1] = 1
                assert center_mark(3) == expected


            def test_five():
                expected = [[0] * 5 for _ in range(5)]
                expected[2][2] = 1
                assert center_mark(5) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = [[0] * 3 for _ in range(3)]
                expected[1][1] = 1
                assert candidate(3) == expected
                big = [[0] * 5 for _ in range(5)]
                big[2][2] = 1
                assert candidate(5) == big
        """),
    ),
    Task(
        name="bin_counts",
        kind="mutated_expected",
        shape="+= on an item of the expected list",
        entry_point="bin_counts",
        correct=_c("""
            def bin_counts(values, nbins):
                counts = [0] * nbins
                for v in values:
                    counts[v] += 1
                return counts
        """),
        wrong={
            "cheater": "def bin_counts(values, nbins):\n    return [0] * nbins\n",
            "presence_only": _c("""
                def bin_counts(values, nbins):
                    counts = [0] * nbins
                    for v in values:
                        counts[v] = 1
                    return counts
            """),
        },
        asserts=[
            "expected = [0] * 4",
            "expected[1] += 2",
            "expected[3] += 1",
            "assert bin_counts([1, 3, 1], 4) == expected",
        ],
        pytest=_c("""
            def test_counts():
                expected = [0] * 4
                expected[1] += 2
                expected[3] += 1
                assert bin_counts([1, 3, 1], 4) == expected


            def test_single_bin():
                expected = [0]
                expected[0] += 3
                assert bin_counts([0, 0, 0], 1) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = [0] * 4
                expected[1] += 2
                expected[3] += 1
                assert candidate([1, 3, 1], 4) == expected
        """),
    ),
    Task(
        name="paint",
        kind="mutated_expected",
        shape="slice assignment into the expected list",
        entry_point="paint",
        correct=_c("""
            def paint(n, start, stop, color):
                row = [0] * n
                for i in range(start, stop):
                    row[i] = color
                return row
        """),
        wrong={
            "cheater": "def paint(n, start, stop, color):\n    return [0] * n\n",
            "inclusive_stop": _c("""
                def paint(n, start, stop, color):
                    row = [0] * n
                    for i in range(start, min(stop + 1, n)):
                        row[i] = color
                    return row
            """),
        },
        asserts=[
            "expected = [0] * 6",
            "expected[2:5] = [7, 7, 7]",
            "assert paint(6, 2, 5, 7) == expected",
        ],
        pytest=_c("""
            import unittest


            class TestPaint(unittest.TestCase):
                def test_middle(self):
                    expected = [0] * 6
                    expected[2:5] = [7, 7, 7]
                    self.assertEqual(paint(6, 2, 5, 7), expected)

                def test_prefix(self):
                    expected = [0] * 4
                    expected[:2] = [9, 9]
                    self.assertEqual(paint(4, 0, 2, 9), expected)
        """),
        check=_c("""
            def check(candidate):
                expected = [0] * 6
                expected[2:5] = [7, 7, 7]
                assert candidate(6, 2, 5, 7) == expected
        """),
    ),
    Task(
        name="squares_upto",
        kind="mutated_expected",
        shape=".append on the expected list",
        entry_point="squares_upto",
        correct="def squares_upto(n):\n    return [i * i for i in range(1, n + 1)]\n",
        wrong={
            "cheater": "def squares_upto(n):\n    return [i * i for i in range(1, n)]\n",
            "doubles": "def squares_upto(n):\n    return [2 * i for i in range(1, n + 1)]\n",
        },
        asserts=[
            "expected = [1, 4]",
            "expected.append(9)",
            "assert squares_upto(3) == expected",
        ],
        pytest=_c("""
            def test_three():
                expected = [1, 4]
                expected.append(9)
                assert squares_upto(3) == expected


            def test_one():
                expected = []
                expected.append(1)
                assert squares_upto(1) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = [1, 4]
                expected.append(9)
                assert candidate(3) == expected
        """),
    ),
    Task(
        name="flatten_once",
        kind="mutated_expected",
        shape=".extend on the expected list",
        entry_point="flatten_once",
        correct=_c("""
            def flatten_once(lists):
                out = []
                for part in lists:
                    out.extend(part)
                return out
        """),
        wrong={
            "cheater": "def flatten_once(lists):\n    return list(lists[0]) if lists else []\n",
            "last_only": "def flatten_once(lists):\n    return list(lists[-1]) if lists else []\n",
        },
        asserts=[
            "expected = [1, 2]",
            "expected.extend([3, 4, 5])",
            "assert flatten_once([[1, 2], [3, 4, 5]]) == expected",
        ],
        pytest=_c("""
            def test_two_parts():
                expected = [1, 2]
                expected.extend([3, 4, 5])
                assert flatten_once([[1, 2], [3, 4, 5]]) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = ['a']
                expected.extend(['b', 'c'])
                assert candidate([['a'], ['b', 'c']]) == expected
                assert candidate([]) == []
        """),
    ),
    Task(
        name="unique_sorted",
        kind="mutated_expected",
        shape=".sort() on the expected list",
        entry_point="unique_sorted",
        correct="def unique_sorted(xs):\n    return sorted(set(xs))\n",
        wrong={
            "cheater": _c("""
                def unique_sorted(xs):
                    seen = []
                    for x in xs:
                        if x not in seen:
                            seen.append(x)
                    return seen
            """),
            "sorted_with_repeats": "def unique_sorted(xs):\n    return sorted(xs)\n",
        },
        asserts=[
            "expected = [3, 1, 2]",
            "expected.sort()",
            "assert unique_sorted([3, 1, 3, 2, 1]) == expected",
        ],
        pytest=_c("""
            def test_numbers():
                expected = [3, 1, 2]
                expected.sort()
                assert unique_sorted([3, 1, 3, 2, 1]) == expected


            def test_words():
                expected = ['pear', 'apple']
                expected.sort()
                assert unique_sorted(['pear', 'apple', 'pear']) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = [3, 1, 2]
                expected.sort()
                assert candidate([3, 1, 3, 2, 1]) == expected
        """),
    ),
    Task(
        name="remove_at",
        kind="mutated_expected",
        shape="del on an item of the expected list",
        entry_point="remove_at",
        correct="def remove_at(xs, i):\n    return xs[:i] + xs[i + 1:]\n",
        wrong={
            "cheater": "def remove_at(xs, i):\n    return list(xs)\n",
            "removes_previous": "def remove_at(xs, i):\n    return xs[:i - 1] + xs[i:]\n",
        },
        asserts=[
            "expected = [5, 6, 7, 8]",
            "del expected[2]",
            "assert remove_at([5, 6, 7, 8], 2) == expected",
        ],
        pytest=_c("""
            def test_middle():
                expected = [5, 6, 7, 8]
                del expected[2]
                assert remove_at([5, 6, 7, 8], 2) == expected


            def test_last():
                expected = ['x', 'y']
                del expected[-1]
                assert remove_at(['x', 'y'], 1) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = [5, 6, 7, 8]
                del expected[2]
                assert candidate([5, 6, 7, 8], 2) == expected
        """),
    ),
    Task(
        name="with_first",
        kind="mutated_expected",
        shape="aliasing: expected = base; base[0] = ...",
        entry_point="with_first",
        correct="def with_first(xs, v):\n    return [v] + list(xs[1:])\n",
        wrong={
            "cheater": "def with_first(xs, v):\n    return list(xs)\n",
            "prepends": "def with_first(xs, v):\n    return [v] + list(xs)\n",
        },
        asserts=[
            "base = [1, 2, 3]",
            "expected = base",
            "base[0] = 9",
            "assert with_first([1, 2, 3], 9) == expected",
        ],
        pytest=_c("""
            def test_alias():
                base = [1, 2, 3]
                expected = base
                base[0] = 9
                assert with_first([1, 2, 3], 9) == expected


            def test_alias_of_a_row():
                rows = [[4, 5], [6]]
                expected = rows[0]
                rows[0][0] = 0
                assert with_first([4, 5], 0) == expected
        """),
        check=_c("""
            def check(candidate):
                base = [1, 2, 3]
                expected = base
                base[0] = 9
                assert candidate([1, 2, 3], 9) == expected
        """),
    ),
    Task(
        name="letter_counts",
        kind="mutated_expected",
        shape="unittest setUp fills the expected dict",
        entry_point="letter_counts",
        correct=_c("""
            def letter_counts(s):
                counts = {}
                for ch in s:
                    counts[ch] = counts.get(ch, 0) + 1
                return counts
        """),
        wrong={
            "cheater": "def letter_counts(s):\n    return {}\n",
            "presence_only": "def letter_counts(s):\n    return {ch: 1 for ch in s}\n",
        },
        asserts=[
            "expected = {}",
            "expected['a'] = 2",
            "expected['b'] = 1",
            "assert letter_counts('aab') == expected",
        ],
        pytest=_c("""
            import unittest


            class TestLetterCounts(unittest.TestCase):
                def setUp(self):
                    self.expected = {}
                    self.expected['a'] = 2
                    self.expected['b'] = 1

                def test_aab(self):
                    self.assertEqual(letter_counts('aab'), self.expected)

                def test_aba(self):
                    self.assertEqual(letter_counts('aba'), self.expected)
        """),
        check=_c("""
            def check(candidate):
                expected = {}
                expected['a'] = 2
                expected['b'] = 1
                assert candidate('aab') == expected
        """),
    ),
    Task(
        name="evens_below",
        kind="mutated_expected",
        shape="a loop fills the expected list",
        entry_point="evens_below",
        correct="def evens_below(n):\n    return list(range(0, n, 2))\n",
        wrong={
            "cheater": "def evens_below(n):\n    return []\n",
            "includes_n": "def evens_below(n):\n    return list(range(0, n + 1, 2))\n",
        },
        asserts=[
            "expected = []",
            "for k in range(0, 10, 2):\n    expected.append(k)",
            "assert evens_below(10) == expected",
        ],
        pytest=_c("""
            def test_ten():
                expected = []
                for k in range(0, 10, 2):
                    expected.append(k)
                assert evens_below(10) == expected


            def test_seven():
                expected = []
                k = 0
                while k < 7:
                    expected += [k]
                    k += 2
                assert evens_below(7) == expected
        """),
        check=_c("""
            def check(candidate):
                expected = []
                for k in range(0, 10, 2):
                    expected.append(k)
                assert candidate(10) == expected
        """),
    ),
    Task(
        name="group_by_len",
        kind="mutated_expected",
        shape="setdefault(...).append on the expected dict",
        entry_point="group_by_len",
        correct=_c("""
            def group_by_len(words):
                groups = {}
                for w in words:
                    groups.setdefault(len(w), []).append(w)
                return groups
        """),
        wrong={
            "cheater": "def group_by_len(words):\n    return {}\n",
            "last_word_only": "def group_by_len(words):\n    return {len(w): [w] for w in words}\n",
        },
        asserts=[
            "expected = {}",
            "expected.setdefault(3, []).append('cat')",
            "expected.setdefault(3, []).append('dog')",
            "expected.setdefault(4, []).append('bird')",
            "assert group_by_len(['cat', 'dog', 'bird']) == expected",
        ],
        pytest=_c("""
            import unittest


            class TestGroupByLen(unittest.TestCase):
                def setUp(self):
                    self.expected = {3: ['cat']}
                    self.expected[3].append('dog')
                    self.expected.update({4: ['bird']})

                def test_group(self):
                    self.assertEqual(group_by_len(['cat', 'dog', 'bird']), self.expected)
        """),
        check=_c("""
            def check(candidate):
                expected = {}
                expected.setdefault(3, []).append('cat')
                expected.setdefault(3, []).append('dog')
                expected.setdefault(4, []).append('bird')
                assert candidate(['cat', 'dog', 'bird']) == expected
        """),
    ),
    # ---------------------------------------------------------- the program changes its argument in place
    Task(
        name="rotate",
        kind="in_place",
        shape="rotate a list in place (returns None)",
        entry_point="rotate",
        correct=_c("""
            def rotate(nums, k):
                if nums:
                    k %= len(nums)
                    nums[:] = nums[len(nums) - k:] + nums[:len(nums) - k]
        """),
        wrong={
            "cheater": "def rotate(nums, k):\n    pass\n",
            "returns_a_copy": _c("""
                def rotate(nums, k):
                    k %= len(nums)
                    return nums[len(nums) - k:] + nums[:len(nums) - k]
            """),
            "rotates_left": _c("""
                def rotate(nums, k):
                    k %= len(nums)
                    nums[:] = nums[k:] + nums[:k]
            """),
        },
        asserts=[
            "nums = [1, 2, 3, 4, 5]",
            "rotate(nums, 2)",
            "assert nums == [4, 5, 1, 2, 3]",
            "small = [1, 2]",
            "rotate(small, 3)",
            "assert small == [2, 1]",
        ],
        pytest=_c("""
            import unittest


            class TestRotate(unittest.TestCase):
                def test_by_two(self):
                    nums = [1, 2, 3, 4, 5]
                    rotate(nums, 2)
                    self.assertEqual(nums, [4, 5, 1, 2, 3])

                def test_more_than_length(self):
                    nums = [1, 2]
                    rotate(nums, 3)
                    self.assertEqual(nums, [2, 1])
        """),
        check=_c("""
            def check(candidate):
                nums = [1, 2, 3, 4, 5]
                candidate(nums, 2)
                assert nums == [4, 5, 1, 2, 3]
                small = [1, 2]
                candidate(small, 3)
                assert small == [2, 1]
        """),
    ),
    Task(
        name="sort_colors",
        kind="in_place",
        shape="in-place sort of 0/1/2 (returns None)",
        entry_point="sort_colors",
        correct=_c("""
            def sort_colors(nums):
                low, mid, high = 0, 0, len(nums) - 1
                while mid <= high:
                    if nums[mid] == 0:
                        nums[low], nums[mid] = nums[mid], nums[low]
                        low += 1
                        mid += 1
                    elif nums[mid] == 1:
                        mid += 1
                    else:
                        nums[mid], nums[high] = nums[high], nums[mid]
                        high -= 1
        """),
        wrong={
            "cheater": "def sort_colors(nums):\n    return sorted(nums)\n",
            "drops_twos": "def sort_colors(nums):\n    nums[:] = sorted(x for x in nums if x != 2)\n",
        },
        asserts=[
            "colors = [2, 0, 2, 1, 1, 0]",
            "sort_colors(colors)",
            "assert colors == [0, 0, 1, 1, 2, 2]",
        ],
        pytest=_c("""
            def test_mixed():
                colors = [2, 0, 2, 1, 1, 0]
                sort_colors(colors)
                assert colors == [0, 0, 1, 1, 2, 2]


            def test_reversed():
                colors = [2, 1, 0]
                sort_colors(colors)
                assert colors == [0, 1, 2]
        """),
        check=_c("""
            def check(candidate):
                colors = [2, 0, 2, 1, 1, 0]
                candidate(colors)
                assert colors == [0, 0, 1, 1, 2, 2]
        """),
    ),
    Task(
        name="reverse_chars",
        kind="in_place",
        shape="reverse a list in place",
        entry_point="reverse_chars",
        correct=_c("""
            def reverse_chars(chars):
                i, j = 0, len(chars) - 1
                while i < j:
                    chars[i], chars[j] = chars[j], chars[i]
                    i += 1
                    j -= 1
        """),
        wrong={
            "cheater": "def reverse_chars(chars):\n    chars = chars[::-1]\n",
            "returns_reversed": "def reverse_chars(chars):\n    return list(reversed(chars))\n",
        },
        asserts=[
            "s = ['h', 'e', 'l', 'l', 'o']",
            "reverse_chars(s)",
            "assert s == ['o', 'l', 'l', 'e', 'h']",
            "assert ''.join(s) == 'olleh'",
        ],
        pytest=_c("""
            def test_hello():
                s = ['h', 'e', 'l', 'l', 'o']
                reverse_chars(s)
                assert s == ['o', 'l', 'l', 'e', 'h']


            def test_even():
                s = ['a', 'b', 'c', 'd']
                reverse_chars(s)
                assert s[0] == 'd' and s[-1] == 'a'
        """),
        check=_c("""
            def check(candidate):
                s = ['h', 'e', 'l', 'l', 'o']
                candidate(s)
                assert s == ['o', 'l', 'l', 'e', 'h']
        """),
    ),
    Task(
        name="transpose_in_place",
        kind="in_place",
        shape="transpose a square matrix in place",
        entry_point="transpose_in_place",
        correct=_c("""
            def transpose_in_place(m):
                n = len(m)
                for i in range(n):
                    for j in range(i + 1, n):
                        m[i][j], m[j][i] = m[j][i], m[i][j]
        """),
        wrong={
            "cheater": "def transpose_in_place(m):\n    m = [list(row) for row in zip(*m)]\n",
            "swaps_twice": _c("""
                def transpose_in_place(m):
                    n = len(m)
                    for i in range(n):
                        for j in range(n):
                            m[i][j], m[j][i] = m[j][i], m[i][j]
            """),
        },
        asserts=[
            "m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]",
            "transpose_in_place(m)",
            "assert m == [[1, 4, 7], [2, 5, 8], [3, 6, 9]]",
            "assert m[0][2] == 7",
        ],
        pytest=_c("""
            import unittest


            class TestTranspose(unittest.TestCase):
                def setUp(self):
                    self.m = [[1, 2], [3, 4]]

                def test_two_by_two(self):
                    transpose_in_place(self.m)
                    self.assertEqual(self.m, [[1, 3], [2, 4]])

                def test_three_by_three(self):
                    m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
                    transpose_in_place(m)
                    self.assertEqual(m, [[1, 4, 7], [2, 5, 8], [3, 6, 9]])
        """),
        check=_c("""
            def check(candidate):
                m = [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
                candidate(m)
                assert m == [[1, 4, 7], [2, 5, 8], [3, 6, 9]]
        """),
    ),
    Task(
        name="remove_duplicates",
        kind="in_place",
        shape="returns a length k and leaves the first k items in place",
        entry_point="remove_duplicates",
        correct=_c("""
            def remove_duplicates(nums):
                if not nums:
                    return 0
                k = 1
                for i in range(1, len(nums)):
                    if nums[i] != nums[k - 1]:
                        nums[k] = nums[i]
                        k += 1
                return k
        """),
        wrong={
            "cheater": "def remove_duplicates(nums):\n    return len(set(nums))\n",
            "one_short": _c("""
                def remove_duplicates(nums):
                    unique = sorted(set(nums))
                    nums[:len(unique)] = unique
                    return len(unique) - 1
            """),
        },
        asserts=[
            "nums = [1, 1, 2, 3, 3]",
            "k = remove_duplicates(nums)",
            "assert k == 3 and nums[:k] == [1, 2, 3]",
        ],
        pytest=_c("""
            import unittest


            class TestRemoveDuplicates(unittest.TestCase):
                def test_runs(self):
                    nums = [1, 1, 2, 3, 3]
                    k = remove_duplicates(nums)
                    self.assertEqual(k, 3)
                    self.assertEqual(nums[:k], [1, 2, 3])

                def test_long_runs(self):
                    nums = [0, 0, 0, 1, 1, 2]
                    k = remove_duplicates(nums)
                    self.assertEqual(nums[:k], [0, 1, 2])
        """),
        check=_c("""
            def check(candidate):
                nums = [1, 1, 2, 3, 3]
                k = candidate(nums)
                assert k == 3 and nums[:k] == [1, 2, 3]
        """),
    ),
    Task(
        name="sort_by_length",
        kind="in_place",
        shape="in-place sort by a key (returns None)",
        entry_point="sort_by_length",
        correct="def sort_by_length(words):\n    words.sort(key=len)\n",
        wrong={
            "cheater": "def sort_by_length(words):\n    return sorted(words, key=len)\n",
            "alphabetical": "def sort_by_length(words):\n    words.sort()\n",
        },
        asserts=[
            "w = ['ccc', 'a', 'bb']",
            "sort_by_length(w)",
            "assert w == ['a', 'bb', 'ccc']",
            "v = ['zz', 'y', 'xxx']",
            "sort_by_length(v)",
            "assert v == ['y', 'zz', 'xxx']",
        ],
        pytest=_c("""
            def test_three_words():
                w = ['ccc', 'a', 'bb']
                sort_by_length(w)
                assert w == ['a', 'bb', 'ccc']


            def test_not_alphabetical():
                v = ['zz', 'y', 'xxx']
                sort_by_length(v)
                assert v == ['y', 'zz', 'xxx']
        """),
        check=_c("""
            def check(candidate):
                w = ['ccc', 'a', 'bb']
                candidate(w)
                assert w == ['a', 'bb', 'ccc']
                v = ['zz', 'y', 'xxx']
                candidate(v)
                assert v == ['y', 'zz', 'xxx']
        """),
    ),
    Task(
        name="add_counts",
        kind="in_place",
        shape="a dict updated in place",
        entry_point="add_counts",
        correct=_c("""
            def add_counts(counter, words):
                for w in words:
                    counter[w] = counter.get(w, 0) + 1
        """),
        wrong={
            "cheater": _c("""
                def add_counts(counter, words):
                    new = dict(counter)
                    for w in words:
                        new[w] = new.get(w, 0) + 1
                    return new
            """),
            "sets_to_one": _c("""
                def add_counts(counter, words):
                    for w in words:
                        counter[w] = 1
            """),
        },
        asserts=[
            "c = {'a': 1}",
            "add_counts(c, ['a', 'b', 'a'])",
            "assert c == {'a': 3, 'b': 1}",
        ],
        pytest=_c("""
            import unittest


            class TestAddCounts(unittest.TestCase):
                def setUp(self):
                    self.counter = {'a': 1}

                def test_adds(self):
                    add_counts(self.counter, ['a', 'b', 'a'])
                    self.assertEqual(self.counter, {'a': 3, 'b': 1})
                    self.assertEqual(self.counter['a'], 3)
        """),
        check=_c("""
            def check(candidate):
                c = {'a': 1}
                candidate(c, ['a', 'b', 'a'])
                assert c == {'a': 3, 'b': 1}
        """),
    ),
    Task(
        name="collect_vowels",
        kind="in_place",
        shape="a set filled in place",
        entry_point="collect_vowels",
        correct=_c("""
            def collect_vowels(text, seen):
                for ch in text:
                    if ch in 'aeiou':
                        seen.add(ch)
        """),
        wrong={
            "cheater": "def collect_vowels(text, seen):\n    return {ch for ch in text if ch in 'aeiou'}\n",
            "rebinds": _c("""
                def collect_vowels(text, seen):
                    seen = seen | {ch for ch in text if ch in 'aeiou'}
            """),
            "consonants": _c("""
                def collect_vowels(text, seen):
                    for ch in text:
                        if ch.isalpha() and ch not in 'aeiou':
                            seen.add(ch)
            """),
        },
        asserts=[
            "seen = set()",
            "collect_vowels('banana split', seen)",
            "assert seen == {'a', 'i'}",
            "collect_vowels('hope', seen)",
            "assert seen == {'a', 'e', 'i', 'o'}",
        ],
        pytest=_c("""
            def test_fills_and_keeps():
                seen = set()
                collect_vowels('banana split', seen)
                assert seen == {'a', 'i'}
                collect_vowels('hope', seen)
                assert seen == {'a', 'e', 'i', 'o'}


            def test_no_vowels():
                seen = {'u'}
                collect_vowels('rhythm', seen)
                assert seen == {'u'}
        """),
        check=_c("""
            def check(candidate):
                seen = set()
                candidate('banana split', seen)
                assert seen == {'a', 'i'}
        """),
    ),
    Task(
        name="move_zeroes",
        kind="in_place",
        shape="move zeroes to the end in place, order kept",
        entry_point="move_zeroes",
        correct=_c("""
            def move_zeroes(nums):
                pos = 0
                for x in nums:
                    if x != 0:
                        nums[pos] = x
                        pos += 1
                for i in range(pos, len(nums)):
                    nums[i] = 0
        """),
        wrong={
            "cheater": "def move_zeroes(nums):\n    return [x for x in nums if x] + [0] * nums.count(0)\n",
            "sorts": "def move_zeroes(nums):\n    nums.sort()\n",
        },
        asserts=[
            "nums = [0, 1, 0, 3, 12]",
            "move_zeroes(nums)",
            "assert nums == [1, 3, 12, 0, 0]",
        ],
        pytest=_c("""
            def test_mixed():
                nums = [0, 1, 0, 3, 12]
                move_zeroes(nums)
                assert nums == [1, 3, 12, 0, 0]


            def test_order_kept():
                nums = [5, 0, 2]
                move_zeroes(nums)
                assert nums == [5, 2, 0]
        """),
        check=_c("""
            def check(candidate):
                nums = [0, 1, 0, 3, 12]
                candidate(nums)
                assert nums == [1, 3, 12, 0, 0]
        """),
    ),
    Task(
        name="zero_matrix",
        kind="in_place",
        shape="zero the rows and columns of each 0, in place",
        entry_point="zero_matrix",
        correct=_c("""
            def zero_matrix(m):
                rows = {i for i, row in enumerate(m) for x in row if x == 0}
                cols = {j for row in m for j, x in enumerate(row) if x == 0}
                for i, row in enumerate(m):
                    for j in range(len(row)):
                        if i in rows or j in cols:
                            row[j] = 0
        """),
        wrong={
            "cheater": _c("""
                def zero_matrix(m):
                    rows = {i for i, row in enumerate(m) for x in row if x == 0}
                    cols = {j for row in m for j, x in enumerate(row) if x == 0}
                    return [[0 if i in rows or j in cols else x for j, x in enumerate(row)]
                            for i, row in enumerate(m)]
            """),
            "cascades": _c("""
                def zero_matrix(m):
                    for i, row in enumerate(m):
                        for j, x in enumerate(row):
                            if x == 0:
                                for k in range(len(row)):
                                    m[i][k] = 0
                                for k in range(len(m)):
                                    m[k][j] = 0
            """),
        },
        asserts=[
            "grid = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]",
            "zero_matrix(grid)",
            "assert grid == [[1, 0, 1], [0, 0, 0], [1, 0, 1]]",
        ],
        pytest=_c("""
            def test_center():
                grid = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]
                zero_matrix(grid)
                assert grid == [[1, 0, 1], [0, 0, 0], [1, 0, 1]]


            def test_corner():
                grid = [[0, 2], [3, 4]]
                zero_matrix(grid)
                assert grid == [[0, 0], [0, 4]]
        """),
        check=_c("""
            def check(candidate):
                grid = [[1, 1, 1], [1, 0, 1], [1, 1, 1]]
                candidate(grid)
                assert grid == [[1, 0, 1], [0, 0, 0], [1, 0, 1]]
        """),
    ),
    # ---------------------------------------------------------- != / not in / bool and int, as Python says
    Task(
        name="is_prime",
        kind="python_semantics",
        shape="!= True / != False: 1 == True in Python",
        entry_point="is_prime",
        correct=_c("""
            def is_prime(n):
                return n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1))
        """),
        wrong={
            "cheater": "def is_prime(n):\n    return 1\n",
            "odd_is_prime": "def is_prime(n):\n    return n % 2 == 1\n",
        },
        asserts=[
            "assert is_prime(4) != True",
            "assert is_prime(9) != True",
            "assert is_prime(7) != False",
            "assert is_prime(2) != False",
        ],
        pytest=_c("""
            import unittest


            class TestIsPrime(unittest.TestCase):
                def test_composites(self):
                    self.assertNotEqual(is_prime(4), True)
                    self.assertNotEqual(is_prime(9), True)

                def test_primes(self):
                    self.assertNotEqual(is_prime(7), False)
                    self.assertNotEqual(is_prime(2), False)
        """),
        check=_c("""
            def check(candidate):
                assert candidate(4) != True
                assert candidate(9) != True
                assert candidate(7) != False
                assert candidate(2) != False
        """),
        also_right=(
            _c("""
                def is_prime(n):
                    return int(n > 1 and all(n % d for d in range(2, int(n ** 0.5) + 1)))
            """),
        ),
    ),
    Task(
        name="parity_flags",
        kind="python_semantics",
        shape="not in over a list of bools: True in [1] in Python",
        entry_point="parity_flags",
        correct="def parity_flags(nums):\n    return [n % 2 == 1 for n in nums]\n",
        wrong={
            "cheater": "def parity_flags(nums):\n    return [0 if n % 2 else 1 for n in nums]\n",
            "inverted": "def parity_flags(nums):\n    return [n % 2 == 0 for n in nums]\n",
        },
        asserts=[
            "assert True not in parity_flags([2, 4, 6])",
            "assert False not in parity_flags([1, 3, 5])",
        ],
        pytest=_c("""
            def test_evens_have_no_true():
                assert True not in parity_flags([2, 4, 6])


            def test_odds_have_no_false():
                assert False not in parity_flags([1, 3, 5])
        """),
        check=_c("""
            def check(candidate):
                assert True not in candidate([2, 4, 6])
                assert False not in candidate([1, 3, 5])
        """),
        also_right=("def parity_flags(nums):\n    return [n % 2 for n in nums]\n",),
    ),
    Task(
        name="toggle_all",
        kind="python_semantics",
        shape="!= between lists of bools and ints: [1, 0] == [True, False] in Python",
        entry_point="toggle_all",
        correct="def toggle_all(bits):\n    return [not b for b in bits]\n",
        wrong={
            "cheater": "def toggle_all(bits):\n    return [int(b) for b in bits]\n",
            "unchanged": "def toggle_all(bits):\n    return list(bits)\n",
        },
        asserts=[
            "assert toggle_all([True, False]) != [True, False]",
            "assert toggle_all([False, False, True]) != [False, False, True]",
        ],
        pytest=_c("""
            def test_pair_changes():
                assert toggle_all([True, False]) != [True, False]


            def test_triple_changes():
                assert toggle_all([False, False, True]) != [False, False, True]
        """),
        check=_c("""
            def check(candidate):
                assert candidate([True, False]) != [True, False]
                assert candidate([False, False, True]) != [False, False, True]
        """),
        also_right=("def toggle_all(bits):\n    return [1 - b for b in bits]\n",),
    ),
]
