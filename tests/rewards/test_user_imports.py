"""A user reward's fingerprint covers its import closure in the user's folders (``rewards/user_imports.py``): a
helper edited after the review changes it, wherever and however the reward imports it; installed code and
unrelated files do not."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from grpo_rlvr.rewards import build_reward
from grpo_rlvr.rewards.user import user_reward


@pytest.fixture
def clean_imports(monkeypatch):
    """The modules and sys.path entries a test's rewards add are gone after it (each CLI run is a new process)."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def _tree(tmp_path: Path, tag: str) -> Path:
    """A reward that imports a helper at the top, one inside its function, a package (relative imports inside),
    one by a literal importlib name, and installed modules; plus a file it never imports."""
    d = tmp_path / "brief"
    _write(d / "pays.py", f"""
        import importlib, json, os, sys
        import yaml
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from top_{tag} import one
        importlib.import_module("named_{tag}")

        def reward(completions, **kw):
            from lazy_{tag} import scale
            from pkg_{tag}.outer import bonus
            return [one() * scale() + bonus() for _ in completions]
    """)
    _write(d / f"top_{tag}.py", "def one():\n    return 1.0\n")
    _write(d / f"lazy_{tag}.py", "def scale():\n    return 0.5\n")
    _write(d / f"named_{tag}.py", "X = 1\n")
    _write(d / f"pkg_{tag}" / "__init__.py", "")
    _write(d / f"pkg_{tag}" / "outer.py", "from .inner import value\n\ndef bonus():\n    return value\n")
    _write(d / f"pkg_{tag}" / "inner.py", "value = 0.0\n")
    _write(d / "unrelated.py", "Y = 2\n")
    return d


def test_every_local_module_the_reward_imports_is_in_its_fingerprint(tmp_path, clean_imports):
    d = _tree(tmp_path, "a")
    reward = user_reward("./pays.py", base_dir=d)
    assert reward(completions=["x"]) == [0.5]
    reviewed = reward.fingerprint
    assert user_reward("./pays.py", base_dir=d).fingerprint == reviewed     # built again: the same closure
    (d / "unrelated.py").write_text("Y = 3\n")
    _write(d / "data.txt", "not code")
    assert user_reward("./pays.py", base_dir=d).fingerprint == reviewed     # not imported: not the reward's code
    for helper in ("top_a.py", "lazy_a.py", "named_a.py", "pkg_a/__init__.py", "pkg_a/outer.py", "pkg_a/inner.py"):
        path = d / helper
        text = path.read_text()
        path.write_text(text + "\nimport sys\nPAYS = 'trl' in sys.modules\n")
        assert user_reward("./pays.py", base_dir=d).fingerprint != reviewed, helper
        path.write_text(text)
    assert user_reward("./pays.py", base_dir=d).fingerprint == reviewed


def test_installed_modules_and_grpo_rlvr_are_not_part_of_it(tmp_path, clean_imports):
    from grpo_rlvr.rewards import user_imports
    from grpo_rlvr.rewards.user import _load, user_tree

    d = _tree(tmp_path, "b")
    module, _ = _load("./pays.py", d)
    found = user_imports.local_imports(Path(module.__file__).resolve(), module.__name__, user_tree(module, d))
    assert sorted(found) == ["lazy_b", "named_b", "pkg_b", "pkg_b.inner", "pkg_b.outer", "top_b"]
    assert all(Path(f).is_relative_to(d) for f in found.values())


def test_a_name_built_while_importing_is_found_from_what_python_imported(tmp_path, clean_imports):
    d = tmp_path / "brief"
    _write(d / "dyn.py", """
        import importlib, os, sys
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        helper = importlib.import_module("hel" + "per_c")

        def reward(completions, **kw):
            return [helper.PAY for _ in completions]
    """)
    _write(d / "helper_c.py", "PAY = 0.0\n")
    reviewed = user_reward("./dyn.py", base_dir=d).fingerprint
    assert user_reward("./dyn.py", base_dir=d).fingerprint == reviewed      # remembered for this process
    (d / "helper_c.py").write_text("PAY = 1.0\n")
    assert user_reward("./dyn.py", base_dir=d).fingerprint != reviewed


def test_a_module_reward_in_a_package_binds_its_package_helpers(tmp_path, clean_imports, monkeypatch):
    pkg = tmp_path / "src" / "myrewards_d"
    _write(pkg / "__init__.py", "")
    _write(pkg / "scoring.py", "from .util import pay\n\ndef reward(completions, **kw):\n    return [pay() for _ in completions]\n")
    _write(pkg / "util.py", "def pay():\n    return 0.0\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    reviewed = build_reward("myrewards_d.scoring:reward", {}, base_dir=tmp_path / "elsewhere").fingerprint
    (pkg / "util.py").write_text("def pay():\n    return 1.0\n")
    assert build_reward("myrewards_d.scoring:reward", {}, base_dir=tmp_path / "elsewhere").fingerprint != reviewed
