"""User rewards: ``module:function`` or ``path/to/file.py:function`` (``:function`` defaults to ``reward``).

The function follows TRL's contract (``fn(prompts=..., completions=..., **columns) -> list[float | None]``).
It may also return ``(score, reason)`` pairs, which inspection then shows. Its source file and every local
module it imports (``user_imports``: the helpers in the reward's folder or the brief's, at any depth) are
fingerprinted, so editing any of them after an inspection fails the gate. Importing a reward runs its module code,
which could forge that comparison if it ran first; so the inspection also records each of those files by its bytes
(``notes["sources"]``, relative to the brief's folder), and the gate compares them before it imports the reward
(:func:`changed_sources`). The code that runs is compiled from those sources, never from bytecode beside them
(``user_imports.SourceOnlyLoader``).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import re
import sys
import traceback
from pathlib import Path

from grpo_rlvr.errors import RewardError
from grpo_rlvr.identity.hash_cache import sha256_file
from grpo_rlvr.rewards import user_imports
from grpo_rlvr.rewards._reward import KINDS, Reward, Scored, source_fingerprint


def load_callable(ref: str, base_dir: Path | None = None):
    """Import the function named by ``ref``; relative ``.py`` paths resolve against ``base_dir``."""
    return _load(ref, base_dir)[1]


def _load(ref: str, base_dir: Path | None, what: str = "user reward", default: str = "reward"):
    """(the module ``ref`` names, the function (or class) in it). ``what`` names the kind of user code in messages,
    ``default`` the name taken when ``ref`` names none (a tool module's function must be named)."""
    target, _, func_name = ref.partition(":") if not ref.endswith(".py") else (ref, "", "")
    func_name = func_name or default
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise RewardError(f"{what} {ref!r}: file {path} not found; give a path relative to the brief")
        mod_name = f"grpo_rlvr_user_reward_{abs(hash(str(path.resolve())))}"
        user_imports.import_from_source()   # the reviewed sources run, not bytecode put beside them
        spec = importlib.util.spec_from_file_location(mod_name, path,
                                                      loader=user_imports.SourceOnlyLoader(mod_name, str(path)))
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        before = user_imports.start_import(path.resolve())
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            raise RewardError(f"{what} {ref!r}: importing {path} failed: {type(e).__name__}: {e}") from e
        user_imports.end_import(path.resolve(), before, user_tree(module, base_dir))
    else:
        user_imports.import_from_source()
        spec = _find_spec(target)
        origin = Path(spec.origin).resolve() if spec is not None and spec.has_location else None
        before = user_imports.start_import(origin) if origin else set()
        try:
            module = importlib.import_module(target)
        except Exception as e:
            raise RewardError(f"{what} {ref!r}: cannot import module {target!r}: {type(e).__name__}: {e}; "
                              "install it or use a path to a .py file") from e
        if origin is not None:
            user_imports.end_import(origin, before, user_tree(module, base_dir))
    fn = getattr(module, func_name, None)
    if not callable(fn):
        raise RewardError(_missing(ref, what, func_name, module))
    return module, fn


def _missing(ref: str, what: str, name: str, module) -> str:
    """``ref`` names nothing callable in its module: said against the person's file (never the name it was imported
    under), with the closest name there and the names it holds."""
    import difflib

    kind = "class" if what.endswith("environment") else "function"
    names = sorted(n for n, v in vars(module).items() if callable(v) and not n.startswith("_"))
    file = getattr(module, "__file__", None)
    where = file if module.__name__.startswith("grpo_rlvr_user_reward_") or not file else \
        f"module {module.__name__} ({file})"
    close = difflib.get_close_matches(name, names, n=1)
    return (f"{what} {ref!r}: no {kind} {name!r} in {where}" + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; callables there: {', '.join(names) or 'none'}")


def _find_spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None


def user_tree(module, base_dir: Path | None) -> list[Path]:
    """The folders whose modules count as the reward's own code: the brief's folder, the reward file's folder,
    and, for a module inside a package, that package's top-level folder."""
    roots = [Path(base_dir).resolve()] if base_dir is not None else []
    file = getattr(module, "__file__", None)
    if not file:
        return roots
    top = module.__name__.split(".")[0]
    if top.startswith("grpo_rlvr_user_reward_") or "." not in module.__name__ and not hasattr(module, "__path__"):
        return [*roots, Path(file).resolve().parent]
    top_mod = sys.modules.get(top)
    path = list(getattr(top_mod, "__path__", None) or [])
    return [*roots, *(Path(p).resolve() for p in path)]


def _closure(module, fn, base_dir: Path | None) -> dict[str, str]:
    """``module name -> file`` of every local module the reward's module imports (``user_imports``), and of the
    module's own file (``<reward module>``) when the function is defined elsewhere (imported from a helper)."""
    file = getattr(module, "__file__", None)
    if not file:
        return {}
    origin = Path(file).resolve()
    found = user_imports.local_imports(origin, module.__name__, user_tree(module, base_dir))
    src = inspect.getsourcefile(fn)
    if not src or Path(src).resolve() != origin:
        found["<reward module>"] = str(origin)
    return found


def _hashes(files: dict[str, str]) -> dict[str, str]:
    try:
        return {name: sha256_file(file) for name, file in files.items()}
    except OSError as e:
        raise RewardError(f"user reward: cannot read {e.filename}, a module it imports ({e.strerror}); make it "
                          "readable") from None


def imports_fingerprint(module, fn, base_dir: Path | None) -> dict[str, str]:
    """``module name -> SHA-256`` of every local module the reward's module imports (``user_imports``), and of
    the module's own file when the function is defined elsewhere (imported into it from a helper)."""
    return _hashes(_closure(module, fn, base_dir))


def code_record(module, obj, base_dir: Path | None) -> tuple[dict[str, str], dict[str, str]]:
    """What user code (a reward, a tool) is made of: ``(imports, sources)``. ``imports``: module name → SHA-256 of
    each local module it imports (its fingerprint's part); ``sources``: every file of its code by the path the
    manifest records → SHA-256, which the gate compares before it imports anything."""
    closure = _closure(module, obj, base_dir)
    src = inspect.getsourcefile(obj)
    own = [f for f in (getattr(module, "__file__", None), src) if f]
    return _hashes(closure), _hashes({_as_recorded(f, base_dir): f for f in [*own, *closure.values()]})


def _as_recorded(file: str, base_dir: Path | None) -> str:
    """A reward file's name in ``notes["sources"]``: relative to the brief's folder when under it (the folder may
    move, as a model folder may), else absolute."""
    real = Path(file).resolve()
    if base_dir is not None and real.is_relative_to(Path(base_dir).resolve()):
        return real.relative_to(Path(base_dir).resolve()).as_posix()
    return str(real)


def changed_sources(recorded, base_dir: Path | None = None) -> list[str]:
    """The files of a ``notes["sources"]`` record (``path -> SHA-256``, what the reward's code was made of at
    inspect) whose bytes are not the recorded ones now, or that are gone. Reads the files, imports nothing: the
    gate asks before it imports a reward, since importing runs the reward's module code, and code edited after
    the review could make its own fingerprint come out as the reviewed one."""
    if not isinstance(recorded, dict):
        return []
    out = []
    for path, digest in sorted(recorded.items()):
        try:
            same = sha256_file(Path(base_dir or ".") / path) == digest
        except (OSError, TypeError):
            same = False
        if not same:
            out.append(str(path))
    return out


def _is_score(v) -> bool:
    """What ``_scored`` reads: a number, None, or a (number or None, reason) pair."""
    if isinstance(v, tuple) and len(v) == 2:
        v = v[0]
    if v is None:
        return True
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _scored(v) -> Scored:
    if isinstance(v, tuple) and len(v) == 2:
        return Scored(None if v[0] is None else float(v[0]), str(v[1]))
    return Scored(None if v is None else float(v), "user reward")


def raised_at(e: BaseException, source: str | None) -> str:
    """``file.py:LINE: Type: message`` for the deepest frame of the traceback inside the reward's own file (else
    the deepest frame), so the message points at the line to fix."""
    frames = traceback.extract_tb(e.__traceback__)
    mine = [f for f in frames if source and Path(f.filename) == Path(source)]
    frame = (mine or frames or [None])[-1]
    where = f"{frame.filename}:{frame.lineno}" if frame else "?"
    return f"{where}: {type(e).__name__}: {str(e)[:200]}"


def logged_name(ref: str, fn_name: str | None = None) -> str:
    """The name TRL logs (``rewards/<name>/mean``) for the user reward ``ref``: a file's default function
    ``reward`` is named after the file (``pays_length.py`` → ``pays_length``), any other function after itself.
    ``fn_name`` is the loaded function's ``__name__`` when known; without it (diagnosis reads a lock and imports
    nothing), the name the reference gives."""
    target, _, fn = ref.partition(":") if not ref.endswith(".py") else (ref, "", "")
    fn = fn_name or fn or "reward"
    return re.split(r"[/\\]", target)[-1].removesuffix(".py") if fn == "reward" and target.endswith(".py") else fn


def user_reward(ref: str, name: str | None = None, kind: str = "custom", params: dict | None = None,
                base_dir: Path | None = None) -> Reward:
    """Wrap a user function as a ``Reward``; ``params`` are passed to it as keyword arguments."""
    if kind not in KINDS:
        raise RewardError(f"user reward {ref!r}: kind {kind!r} is not one of {', '.join(KINDS)}")
    module, fn = _load(ref, base_dir)
    params = dict(params or {})
    label = name or logged_name(ref, getattr(fn, "__name__", None) or "user_reward")

    src = inspect.getsourcefile(fn)

    def call(texts: list[str], rows: list[dict]):
        columns: dict = {}
        for key in {k for r in rows for k in r} - {"prompt", "completion_ids"}:
            columns[key] = [r.get(key) for r in rows]
        prompts = [r.get("prompt") for r in rows]
        ids = [r.get("completion_ids") for r in rows]
        return fn(prompts=prompts, completions=texts, completion_ids=ids, **columns, **params)

    def scorer(texts: list[str], rows: list[dict]) -> list[Scored]:
        try:
            values = call(texts, rows)
        except Exception:  # noqa: BLE001 - the function is called again per completion, to name the one(s) it raises on
            return [one(t, r) for t, r in zip(texts, rows, strict=True)]
        return checked(values, len(texts))

    def one(text: str, row: dict) -> Scored:
        try:
            values = call([text], [row])
        except Exception as e:  # noqa: BLE001 - a user reward's bug is reported where it raised, not as a crash
            where = raised_at(e, src)
            return Scored(None, f"not scored: the reward raised at {where}", raised=where)
        return checked(values, 1)[0]

    def checked(values, n: int) -> list[Scored]:
        if values is None or len(values) != n:
            raise RewardError(f"user reward {label!r} returned {None if values is None else len(values)} "
                              f"values for {n} completions; return one per completion")
        try:
            return [_scored(v) for v in values]
        except (TypeError, ValueError):
            bad = next(v for v in values if not _is_score(v))
            raise RewardError(f"user reward {label!r} returned {bad!r} ({type(bad).__name__}) for a completion; "
                              "return a number, None (not applicable) or a (number, reason) pair for each") from None

    imports, sources = code_record(module, fn, base_dir)
    fp = source_fingerprint(fn, extra={"ref": ref, "params": params, "source": src and Path(src).name,
                                       **({"imports": imports} if imports else {})})
    return Reward(label, kind, {"ref": ref, **params}, scorer, fp, notes={"sources": sources})
