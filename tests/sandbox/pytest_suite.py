"""A pytest suite written the way public projects write theirs (this repository's own text, in their style): a small
inventory module and its tests, with parametrize (ids, stacked, ``pytest.param`` with ids and marks, indirect),
fixtures (data, ``yield``, depending on each other, parametrized with ``request.param``, ``autouse``, module-scoped,
conftest-style in the module), pytest's built-in ``tmp_path``, ``capsys``, ``capfd``, ``monkeypatch`` and
``request``, marks (``skip``, ``skipif``, ``xfail``, custom ones), ``pytest.raises``/``warns``/``approx``, and a
test class with fixtures and ``setup_method``. ``tests/sandbox/test_real_suites.py`` runs it in plain pytest and in
the sandbox."""

PROGRAM = '''\
import json
import os
import sys
import warnings


class OutOfStock(Exception):
    pass


class Inventory:
    def __init__(self, items=None):
        self.items = dict(items or {})

    def add(self, name, count=1):
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        self.items[name] = self.items.get(name, 0) + count
        return self.items[name]

    def remove(self, name, count=1):
        have = self.items.get(name, 0)
        if count > have:
            raise OutOfStock(f"only {have} {name} left")
        self.items[name] = have - count
        if not self.items[name]:
            del self.items[name]
        return self.items.get(name, 0)

    def total(self):
        return sum(self.items.values())

    def names(self):
        return sorted(self.items)

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self.items, f, sort_keys=True)

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f))


def price(count, unit, discount=0.0):
    return round(count * unit * (1 - discount), 2)


def average(values):
    if not values:
        raise ZeroDivisionError("no values")
    return sum(values) / len(values)


def slug(text):
    return "-".join(text.lower().split())


def report(inventory):
    for name in inventory.names():
        print(f"{name}: {inventory.items[name]}")
    print(f"total: {inventory.total()}", file=sys.stderr)


def shout(text):
    os.write(1, (text.upper() + "\\n").encode())


def currency():
    return os.environ.get("CURRENCY", "EUR")


def legacy_total(inventory):
    warnings.warn("legacy_total is deprecated; use Inventory.total", DeprecationWarning)
    return inventory.total()
'''

SUITE = '''\
import json
import sys

import pytest

pytestmark = [pytest.mark.inventory]

CASES = [("apple", 3), ("pear", 1)]


@pytest.fixture
def stock():
    return {"apple": 5, "pear": 2}


@pytest.fixture
def inventory(stock):
    return Inventory(stock)


@pytest.fixture
def saved(inventory, tmp_path):
    path = tmp_path / "inventory.json"
    inventory.save(path)
    yield path
    path.unlink()


@pytest.fixture(params=[0.0, 0.1, 0.5], ids=["none", "ten", "half"])
def discount(request):
    return request.param


@pytest.fixture(scope="module")
def catalogue():
    return {"apple": 0.5, "pear": 0.75}


@pytest.fixture(autouse=True)
def euro(monkeypatch):
    monkeypatch.setenv("CURRENCY", "EUR")


@pytest.mark.parametrize("name, count", CASES)
def test_add_counts(inventory, name, count):
    before = inventory.items.get(name, 0)
    assert inventory.add(name, count) == before + count


@pytest.mark.parametrize(
    "count",
    [pytest.param(0, id="zero"), pytest.param(-1, id="negative"), pytest.param(-5, marks=pytest.mark.skip)],
)
def test_add_refuses_non_positive(inventory, count):
    with pytest.raises(ValueError, match="must be positive"):
        inventory.add("apple", count)


def test_remove_too_many(inventory):
    with pytest.raises(OutOfStock):
        inventory.remove("pear", 3)


@pytest.mark.parametrize("count", [1, 2])
@pytest.mark.parametrize("unit", [0.5, 1.25])
def test_price_scales(count, unit, discount):
    assert price(count, unit, discount) == pytest.approx(count * unit * (1 - discount), abs=0.01)


@pytest.mark.parametrize("values, expected", [([1, 2, 3], 2), ([2.5], 2.5), ([0.1, 0.2], 0.15)],
                         ids=["ints", "one", "floats"])
def test_average(values, expected):
    assert average(values) == pytest.approx(expected)


def test_average_of_nothing():
    with pytest.raises(ZeroDivisionError):
        average([])


@pytest.mark.parametrize("text, expected", [("Hello World", "hello-world"), ("  a  b ", "a-b")])
def test_slug(text, expected):
    assert slug(text) == expected


def test_round_trip(saved, inventory):
    assert Inventory.load(saved).items == inventory.items


def test_saved_file_is_sorted_json(saved):
    assert json.loads(saved.read_text()) == {"apple": 5, "pear": 2}


def test_report(inventory, capsys):
    report(inventory)
    captured = capsys.readouterr()
    assert captured.out == "apple: 5\\npear: 2\\n"
    assert captured.err == "total: 7\\n"


def test_shout_writes_to_the_fd(capfd):
    shout("hi")
    out, err = capfd.readouterr()
    assert out == "HI\\n"


def test_currency_from_the_environment(monkeypatch):
    assert currency() == "EUR"
    monkeypatch.setenv("CURRENCY", "USD")
    assert currency() == "USD"


def test_names_of_a_catalogue(catalogue):
    assert Inventory({k: 1 for k in catalogue}).names() == ["apple", "pear"]


def test_request_knows_the_test(request):
    assert request.node.name == "test_request_knows_the_test"


def test_legacy_total_warns(inventory):
    with pytest.warns(DeprecationWarning, match="deprecated"):
        legacy_total(inventory)


@pytest.mark.skip(reason="not written yet")
def test_future():
    assert Inventory().restock() == 1


@pytest.mark.skipif(sys.version_info < (3, 0), reason="python 2")
def test_total_is_sum(inventory):
    assert inventory.total() == 7


@pytest.mark.xfail(reason="known bug: names are case sensitive")
def test_case_insensitive_names(inventory):
    inventory.add("Apple")
    assert inventory.names() == ["apple", "pear"]


@pytest.mark.slow
def test_many_adds():
    inventory = Inventory()
    for _ in range(1000):
        inventory.add("x")
    assert inventory.total() == 1000


class TestRemove:
    def setup_method(self, method):
        self.start = {"apple": 2}

    @pytest.fixture
    def small(self):
        return Inventory(self.start)

    def test_remove_one(self, small):
        assert small.remove("apple") == 1

    @pytest.mark.parametrize("count, left", [(1, 1), (2, 0)])
    def test_remove_counts(self, small, count, left):
        assert small.remove("apple", count) == left
        assert small.total() == left

    def test_remove_all_forgets_the_name(self, small):
        small.remove("apple", 2)
        assert "apple" not in small.names()
'''

# Programs wrong in one way each: every one fails some test of SUITE in plain pytest.
WRONG = {
    "add does not check": PROGRAM.replace('        if count <= 0:\n            raise ValueError(f"count must be positive, '
                                          'got {count}")\n', ""),
    "no discount": PROGRAM.replace("round(count * unit * (1 - discount), 2)", "round(count * unit, 2)"),
    "integer average": PROGRAM.replace("return sum(values) / len(values)", "return sum(values) // len(values)"),
    "report to stdout only": PROGRAM.replace('print(f"total: {inventory.total()}", file=sys.stderr)',
                                             'print(f"total: {inventory.total()}")'),
    "no warning": PROGRAM.replace('warnings.warn("legacy_total is deprecated; use Inventory.total", '
                                  'DeprecationWarning)\n', ""),
    "remove keeps zero": PROGRAM.replace("        if not self.items[name]:\n            del self.items[name]\n", ""),
}
