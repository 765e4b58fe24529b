"""A public corpus of tasks whose natural solutions return Python's own types and lazy values, whose tests go both
ways (round trips), and whose tests are classes keeping state on ``self``: what a judge that compares only exact
built-ins, applies ``list``/``sum`` to a value that never crossed, hands every test's arguments to the program at
once, or ignores ``self`` would get wrong. Same shape as ``mutation_corpus`` (``Task``: a right program, wrong ones
with a "cheater" first, programs Python also accepts, and the checks as an assert list, test code and HumanEval's
``check``), checked in plain Python by ``test_python_semantics::test_the_corpus_means_what_it_says_in_plain_python``.
Written for this project; no task is taken from a dataset.

The cheaters: for round trips, a program that remembers what it was asked and answers the other direction with it
(it passes a later assert of the same body, as in Python, never all of them); for the rest, the plausible near miss.
"""

from __future__ import annotations

from .mutation_corpus import Task, _c

KINDS = ("python_types", "lazy_values", "round_trip", "test_classes")
_MIN_STACK_FIRST = _c("""
    class MinStack:
        def __init__(self):
            self.items = []

        def push(self, x):
            self.items.append(x)

        def pop(self):
            return self.items.pop()

        def get_min(self):
            return self.items[0]
""")

CORPUS: list[Task] = [
    # ------------------------------------------------------------------ Python's own types
    Task(
        name="word_counts",
        kind="python_types",
        shape="returns a collections.Counter, compared with a dict",
        entry_point="word_counts",
        correct="from collections import Counter\n\n\ndef word_counts(text):\n    return Counter(text.split())\n",
        wrong={
            "cheater": "from collections import Counter\n\n\ndef word_counts(text):\n    return Counter(text)\n",
            "first_only": "def word_counts(text):\n    return {w: 1 for w in text.split()}\n",
        },
        asserts=["assert word_counts('a b a') == {'a': 2, 'b': 1}", "assert word_counts('') == {}",
                 "assert word_counts('x y x x')['x'] == 3"],
        pytest=_c("""
            def test_counts():
                assert word_counts('a b a') == {'a': 2, 'b': 1}


            def test_empty():
                assert word_counts('') == {}


            def test_lookup():
                assert word_counts('x y x x')['x'] == 3
        """),
        check=_c("""
            def check(candidate):
                assert candidate('a b a') == {'a': 2, 'b': 1}
                assert candidate('') == {}
                assert candidate('x y x x')['x'] == 3
        """),
        also_right=(
            "def word_counts(text):\n    out = {}\n    for w in text.split():\n        out[w] = out.get(w, 0) + 1\n"
            "    return out\n",
            "from collections import defaultdict\n\n\ndef word_counts(text):\n    out = defaultdict(int)\n"
            "    for w in text.split():\n        out[w] += 1\n    return out\n",
        ),
    ),
    Task(
        name="group_anagrams",
        kind="python_types",
        shape="returns a defaultdict(list), compared with a dict of lists",
        entry_point="group_anagrams",
        correct=_c("""
            from collections import defaultdict


            def group_anagrams(words):
                groups = defaultdict(list)
                for w in words:
                    groups[''.join(sorted(w))].append(w)
                return groups
        """),
        wrong={
            "cheater": _c("""
                from collections import defaultdict


                def group_anagrams(words):
                    groups = defaultdict(list)
                    for w in words:
                        groups[w].append(w)
                    return groups
            """),
            "reversed_order": _c("""
                from collections import defaultdict


                def group_anagrams(words):
                    groups = defaultdict(list)
                    for w in reversed(words):
                        groups[''.join(sorted(w))].append(w)
                    return groups
            """),
        },
        asserts=["assert group_anagrams(['ab', 'ba', 'c']) == {'ab': ['ab', 'ba'], 'c': ['c']}",
                 "assert group_anagrams([]) == {}", "assert len(group_anagrams(['tea', 'eat', 'ate'])) == 1"],
        pytest=_c("""
            def test_groups():
                assert group_anagrams(['ab', 'ba', 'c']) == {'ab': ['ab', 'ba'], 'c': ['c']}
                assert group_anagrams([]) == {}


            def test_one_group():
                assert len(group_anagrams(['tea', 'eat', 'ate'])) == 1
        """),
        check=_c("""
            def check(candidate):
                assert candidate(['ab', 'ba', 'c']) == {'ab': ['ab', 'ba'], 'c': ['c']}
                assert candidate([]) == {}
                assert len(candidate(['tea', 'eat', 'ate'])) == 1
        """),
        also_right=(
            "def group_anagrams(words):\n    out = {}\n    for w in words:\n"
            "        out.setdefault(''.join(sorted(w)), []).append(w)\n    return out\n",
        ),
    ),
    Task(
        name="min_max",
        kind="python_types",
        shape="returns a namedtuple, compared with a tuple and read by field",
        entry_point="min_max",
        correct=_c("""
            from collections import namedtuple

            Bounds = namedtuple('Bounds', 'lo hi')


            def min_max(xs):
                return Bounds(min(xs), max(xs))
        """),
        wrong={
            "cheater": _c("""
                from collections import namedtuple

                Bounds = namedtuple('Bounds', 'lo hi')


                def min_max(xs):
                    return Bounds(xs[0], xs[-1])
            """),
            "swapped": "def min_max(xs):\n    return (max(xs), min(xs))\n",
        },
        asserts=["assert min_max([3, 1, 2]) == (1, 3)", "assert min_max([5]) == (5, 5)",
                 "assert min_max([4, 9, 2])[1] == 9", "assert list(min_max([2, 8])) == [2, 8]"],
        pytest=_c("""
            import unittest


            class TestMinMax(unittest.TestCase):
                def test_pairs(self):
                    self.assertEqual(min_max([3, 1, 2]), (1, 3))
                    self.assertEqual(min_max([5]), (5, 5))

                def test_fields(self):
                    self.assertEqual(min_max([4, 9, 2])[1], 9)
                    self.assertEqual(list(min_max([2, 8])), [2, 8])
        """),
        check=_c("""
            def check(candidate):
                assert candidate([3, 1, 2]) == (1, 3)
                assert candidate([5]) == (5, 5)
                assert candidate([4, 9, 2])[1] == 9
                assert list(candidate([2, 8])) == [2, 8]
        """),
        also_right=("def min_max(xs):\n    return min(xs), max(xs)\n",),
    ),
    Task(
        name="first_seen",
        kind="python_types",
        shape="returns an OrderedDict or a dict's keys view, compared and consumed",
        entry_point="first_seen",
        correct=_c("""
            from collections import OrderedDict


            def first_seen(text):
                return OrderedDict((c, text.index(c)) for c in text).keys()
        """),
        wrong={
            "cheater": "def first_seen(text):\n    return {c: 0 for c in sorted(text)}.keys()\n",
            "last_seen": "def first_seen(text):\n    return {c: 0 for c in reversed(text)}.keys()\n",
        },
        asserts=["assert list(first_seen('banana')) == ['b', 'a', 'n']", "assert first_seen('abca') == {'a', 'b', 'c'}",
                 "assert len(first_seen('')) == 0"],
        pytest=_c("""
            def test_order():
                assert list(first_seen('banana')) == ['b', 'a', 'n']


            def test_as_a_set():
                assert first_seen('abca') == {'a', 'b', 'c'}
                assert len(first_seen('')) == 0
        """),
        check=_c("""
            def check(candidate):
                assert list(candidate('banana')) == ['b', 'a', 'n']
                assert candidate('abca') == {'a', 'b', 'c'}
                assert len(candidate('')) == 0
        """),
        also_right=("def first_seen(text):\n    return dict.fromkeys(text).keys()\n",),
    ),
    # ------------------------------------------------------------------ lazy values
    Task(
        name="evens_upto",
        kind="lazy_values",
        shape="a generator, consumed by list, sum and next",
        entry_point="evens_upto",
        correct="def evens_upto(n):\n    for i in range(0, n + 1, 2):\n        yield i\n",
        wrong={
            "cheater": "def evens_upto(n):\n    yield 0\n",
            "exclusive": "def evens_upto(n):\n    yield from range(0, n, 2)\n",
        },
        asserts=["assert list(evens_upto(6)) == [0, 2, 4, 6]", "assert sum(evens_upto(4)) == 6",
                 "assert next(evens_upto(10)) == 0", "assert max(evens_upto(9)) == 8"],
        pytest=_c("""
            def test_all():
                assert list(evens_upto(6)) == [0, 2, 4, 6]


            def test_sum_and_first():
                assert sum(evens_upto(4)) == 6
                assert next(evens_upto(10)) == 0
                assert max(evens_upto(9)) == 8
        """),
        check=_c("""
            def check(candidate):
                assert list(candidate(6)) == [0, 2, 4, 6]
                assert sum(candidate(4)) == 6
                assert next(candidate(10)) == 0
                assert max(candidate(9)) == 8
        """),
        also_right=("def evens_upto(n):\n    return (i for i in range(n + 1) if i % 2 == 0)\n",
                    "def evens_upto(n):\n    return iter(range(0, n + 1, 2))\n"),
    ),
    Task(
        name="scaled",
        kind="lazy_values",
        shape="a map object, consumed by list, sum, sorted and join",
        entry_point="scaled",
        correct="def scaled(xs, k):\n    return map(lambda x: x * k, xs)\n",
        wrong={
            "cheater": "def scaled(xs, k):\n    return map(lambda x: x + k, xs)\n",
            "drops_last": "def scaled(xs, k):\n    return map(lambda x: x * k, xs[:-1])\n",
        },
        asserts=["assert list(scaled([1, 2, 3], 2)) == [2, 4, 6]", "assert sum(scaled(range(4), 3)) == 18",
                 "assert sorted(scaled([3, 1], -1)) == [-3, -1]", "assert ''.join(scaled(['a', 'b'], 2)) == 'aabb'"],
        pytest=_c("""
            def test_list():
                assert list(scaled([1, 2, 3], 2)) == [2, 4, 6]


            def test_consumers():
                assert sum(scaled(range(4), 3)) == 18
                assert sorted(scaled([3, 1], -1)) == [-3, -1]
                assert ''.join(scaled(['a', 'b'], 2)) == 'aabb'
        """),
        check=_c("""
            def check(candidate):
                assert list(candidate([1, 2, 3], 2)) == [2, 4, 6]
                assert sum(candidate(range(4), 3)) == 18
                assert sorted(candidate([3, 1], -1)) == [-3, -1]
                assert ''.join(candidate(['a', 'b'], 2)) == 'aabb'
        """),
        also_right=("def scaled(xs, k):\n    return [x * k for x in xs]\n",),
    ),
    # ------------------------------------------------------------------ round trips
    Task(
        name="run_length",
        kind="round_trip",
        shape="encode and decode tested both ways, each direction's argument the other's expected value",
        entry_point="rle_encode",
        correct=_c("""
            from itertools import groupby


            def rle_encode(s):
                return ''.join(f'{c}{len(list(g))}' for c, g in groupby(s))


            def rle_decode(s):
                return ''.join(s[i] * int(s[i + 1]) for i in range(0, len(s), 2))
        """),
        wrong={
            "cheater": _c("""
                asked = []


                def rle_encode(s):
                    asked.append(s)
                    return s


                def rle_decode(s):
                    return asked[-1] if asked else s
            """),
            "no_counts": _c("""
                def rle_encode(s):
                    return s


                def rle_decode(s):
                    return s
            """),
        },
        asserts=["assert rle_encode('aaab') == 'a3b1'", "assert rle_decode('a3b1') == 'aaab'",
                 "assert rle_encode('xy') == 'x1y1'", "assert rle_decode('x1y1') == 'xy'",
                 "assert rle_decode(rle_encode('zzz')) == 'zzz'"],
        pytest=_c("""
            def test_encode():
                assert rle_encode('aaab') == 'a3b1'
                assert rle_encode('xy') == 'x1y1'


            def test_decode():
                assert rle_decode('a3b1') == 'aaab'
                assert rle_decode('x1y1') == 'xy'


            def test_round_trip():
                assert rle_decode(rle_encode('zzz')) == 'zzz'
        """),
        check=_c("""
            def check(candidate):
                assert candidate('aaab') == 'a3b1'
                assert rle_decode('a3b1') == 'aaab'
                assert candidate('xy') == 'x1y1'
                assert rle_decode('x1y1') == 'xy'
                assert rle_decode(candidate('zzz')) == 'zzz'
        """),
    ),
    Task(
        name="caesar",
        kind="round_trip",
        shape="shift and unshift tested both ways",
        entry_point="shift",
        correct=_c("""
            def shift(s, k):
                return ''.join(chr((ord(c) - 97 + k) % 26 + 97) for c in s)


            def unshift(s, k):
                return shift(s, -k)
        """),
        wrong={
            "cheater": _c("""
                seen = {}


                def shift(s, k):
                    seen[k] = s
                    return s[::-1]


                def unshift(s, k):
                    return seen.get(k, s)
            """),
            "no_wrap": _c("""
                def shift(s, k):
                    return ''.join(chr(ord(c) + k) for c in s)


                def unshift(s, k):
                    return ''.join(chr(ord(c) - k) for c in s)
            """),
        },
        asserts=["assert shift('abc', 1) == 'bcd'", "assert unshift('bcd', 1) == 'abc'", "assert shift('xyz', 3) == 'abc'",
                 "assert unshift('abc', 3) == 'xyz'"],
        pytest=_c("""
            import unittest


            class TestCaesar(unittest.TestCase):
                def test_shift(self):
                    self.assertEqual(shift('abc', 1), 'bcd')
                    self.assertEqual(shift('xyz', 3), 'abc')

                def test_unshift(self):
                    self.assertEqual(unshift('bcd', 1), 'abc')
                    self.assertEqual(unshift('abc', 3), 'xyz')
        """),
        check=_c("""
            def check(candidate):
                assert candidate('abc', 1) == 'bcd'
                assert unshift('bcd', 1) == 'abc'
                assert candidate('xyz', 3) == 'abc'
                assert unshift('abc', 3) == 'xyz'
        """),
    ),
    # ------------------------------------------------------------------ test classes with state on self
    Task(
        name="bank_account",
        kind="test_classes",
        shape="a pytest class: setup_method keeps an account on self, each test changes it",
        entry_point="Account",
        correct=_c("""
            class Account:
                def __init__(self, balance=0):
                    self.total = balance

                def deposit(self, amount):
                    self.total += amount

                def withdraw(self, amount):
                    if amount > self.total:
                        raise ValueError('insufficient funds')
                    self.total -= amount

                def balance(self):
                    return self.total
        """),
        wrong={
            "cheater": _c("""
                class Account:
                    def __init__(self, balance=0):
                        self.total = balance

                    def deposit(self, amount):
                        pass

                    def withdraw(self, amount):
                        pass

                    def balance(self):
                        return self.total
            """),
            "overdraws": _c("""
                class Account:
                    def __init__(self, balance=0):
                        self.total = balance

                    def deposit(self, amount):
                        self.total += amount

                    def withdraw(self, amount):
                        self.total -= amount

                    def balance(self):
                        return self.total
            """),
        },
        asserts=["acct = Account(10)", "acct.deposit(5)", "assert acct.balance() == 15", "acct.withdraw(3)",
                 "assert acct.balance() == 12", "other = Account(1)",
                 "try:\n    other.withdraw(5)\n    refused = False\nexcept ValueError:\n    refused = True\nassert refused",
                 "assert other.balance() == 1"],
        pytest=_c("""
            class TestAccount:
                def setup_method(self, method):
                    self.acct = Account(10)

                def test_deposit(self):
                    self.acct.deposit(5)
                    assert self.acct.balance() == 15

                def test_withdraw(self):
                    self.acct.withdraw(3)
                    assert self.acct.balance() == 7

                def test_overdraft_refused(self):
                    try:
                        self.acct.withdraw(50)
                        refused = False
                    except ValueError:
                        refused = True
                    assert refused
                    assert self.acct.balance() == 10
        """),
        check=_c("""
            def check(candidate):
                acct = candidate(10)
                acct.deposit(5)
                assert acct.balance() == 15
                acct.withdraw(3)
                assert acct.balance() == 12
                try:
                    acct.withdraw(50)
                    refused = False
                except ValueError:
                    refused = True
                assert refused
        """),
    ),
    Task(
        name="min_stack",
        kind="test_classes",
        shape="a unittest class: setUp keeps a stack on self, setUpClass a value the tests compare with",
        entry_point="MinStack",
        correct=_c("""
            class MinStack:
                def __init__(self):
                    self.items = []

                def push(self, x):
                    low = min(x, self.items[-1][1]) if self.items else x
                    self.items.append((x, low))

                def pop(self):
                    return self.items.pop()[0]

                def get_min(self):
                    return self.items[-1][1]
        """),
        wrong={
            "cheater": _MIN_STACK_FIRST,
            "max_instead": _MIN_STACK_FIRST.replace("return self.items[0]", "return max(self.items)"),
        },
        asserts=["s = MinStack()", "s.push(5)", "s.push(2)", "s.push(7)", "assert s.get_min() == 2", "assert s.pop() == 7",
                 "s.pop()", "assert s.get_min() == 5"],
        pytest=_c("""
            import unittest


            class TestMinStack(unittest.TestCase):
                @classmethod
                def setUpClass(cls):
                    cls.low = 2

                def setUp(self):
                    self.s = MinStack()
                    for x in (5, 2, 7):
                        self.s.push(x)

                def test_min(self):
                    self.assertEqual(self.s.get_min(), self.low)

                def test_pop_keeps_min(self):
                    self.assertEqual(self.s.pop(), 7)
                    self.assertEqual(self.s.get_min(), self.low)

                def test_min_after_pops(self):
                    self.s.pop()
                    self.s.pop()
                    self.assertEqual(self.s.get_min(), 5)
        """),
        check=_c("""
            def check(candidate):
                s = candidate()
                for x in (5, 2, 7):
                    s.push(x)
                assert s.get_min() == 2
                assert s.pop() == 7
                s.pop()
                assert s.get_min() == 5
        """),
    ),
]
