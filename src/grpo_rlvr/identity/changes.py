"""What changed between the identity a review was bound to and the identity now, said the way a user acts on it:
"model weights changed since the review (model.safetensors): re-inspect and review", not "another brief".
"""

from __future__ import annotations

import fnmatch

from grpo_rlvr.identity.hub_cache import ALTERED

AGAIN = "re-inspect and review"
_KINDS = (
    ("weights", ("*.safetensors", "*.bin", "*.pt", "*.pth", "*.ckpt", "*.gguf", "*.h5", "*.msgpack",
                 "*.index.json")),
    ("tokenizer", ("tokenizer*", "vocab*", "merges.txt", "special_tokens_map.json", "added_tokens.json", "*.model",
                   "*.tiktoken", "chat_template*", "*.jinja")),
    ("code", ("*.py",)),
)
_SETTINGS = ("split", "subset", "prompt_column", "columns", "prompt")


def _kind(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return next((k for k, pats in _KINDS if any(fnmatch.fnmatch(base, p) for p in pats)), "config")


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:4])
    return shown + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def _describe(ident: dict) -> str:
    kind = ident.get("kind")
    if kind == "hub":
        commit = ident.get("commit")
        return f"hub repo {ident.get('id')}" + (f" at commit {commit[:12]}" if commit else "")
    return {"folder": "a local folder", "adapter": "a PEFT adapter folder", "file": "a local file"}.get(kind, str(kind))


def _file_changes(old: dict, new: dict, role: str, kinds: bool = True) -> list[str]:
    """Changed files grouped by what they are to a model (weights, tokenizer, code, config), or all as "files"."""
    before, after = old.get("files") or {}, new.get("files") or {}
    out = []
    changed = [n for n in sorted(before) if n in after and after[n] != before[n]]
    by_kind: dict[str, list[str]] = {}
    for n in changed:
        by_kind.setdefault(_kind(n) if kinds else "files", []).append(n)
    for kind, names in by_kind.items():
        out.append(f"{role} {kind} changed since the review ({_names(names)}): {AGAIN}")
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    if added:
        out.append(f"{role} files added since the review ({_names(added)}): {AGAIN}")
    if removed:
        out.append(f"{role} files removed since the review ({_names(removed)}): {AGAIN}")
    return out


def _hub_changes(old: dict, new: dict, role: str) -> list[str]:
    kinds = role != "dataset"
    repo, was = old.get("id"), old.get("commit")
    if new.get("id") != repo:
        return [f"the {role} is now {_describe(new)}; the review read {_describe(old)}: {AGAIN}"]
    if new.get("commit") is None:
        pin = f" --revision {was}" if was else ""
        return [f"{role} {repo} is not in this machine's Hugging Face cache, so the reviewed commit "
                f"{(was or '?')[:12]} cannot be confirmed here; fetch it first (`hf download "
                f"{'--repo-type dataset ' if role == 'dataset' else ''}{repo}{pin}`) or run this where it was "
                "inspected"]
    if new.get("commit") != was:
        return [f"{role} {repo} resolves to commit {new['commit'][:12]} now, but the review read commit "
                f"{(was or '?')[:12]} (an id without a revision is pinned to the commit inspect saw): set "
                f"{'dataset' if role == 'dataset' else 'model'}.revision: {was} in the brief to train what was "
                f"reviewed, or {AGAIN}"]
    files = new.get("files") or {}
    altered = sorted(n for n, h in files.items() if str(h).startswith(ALTERED))
    if altered:   # the blob's bytes no longer match its name: the cache was written to, not the hub
        kind = "--repo-type dataset " if role == "dataset" else ""
        return [f"{role} {repo}: the cached {_names(altered)} no longer match the hashes they were downloaded "
                f"under (rewritten in place in {_describe(new)}'s blobs); restore them with `hf download {kind}{repo} "
                f"--revision {new['commit']} --force-download`"]
    return [p.replace(f"{role} ", f"{role} {repo} (cached snapshot) ", 1) for p in _file_changes(old, new, role, kinds)]


def model_changes(old, new: dict, role: str = "model") -> list[str]:
    """Why the model identity ``new`` is not the reviewed ``old``, one line per part (empty when equal)."""
    if old == new:
        return []
    if not isinstance(old, dict) or "kind" not in old:
        return [f"the inspection records the {role} by name and file sizes (made by an older grpo-rlvr), which "
                f"does not bind a review to the weights: {AGAIN}"]
    if old.get("kind") != new.get("kind"):
        return [f"the {role} is now {_describe(new)}; the review read {_describe(old)}: {AGAIN}"]
    if new["kind"] == "hub":
        return _hub_changes(old, new, role)
    out = _file_changes(old, new, "adapter" if new["kind"] == "adapter" else role)
    if new["kind"] == "adapter":
        out += model_changes(old.get("base"), new.get("base") or {}, role="base model")
    return out or [f"the {role} identity differs from the review's: {AGAIN}"]


def dataset_changes(old, new: dict, name: str) -> list[str]:
    """Why the dataset identity ``new`` is not the reviewed ``old``; ``name`` is the path or id the brief gives."""
    if old == new:
        return []
    if not isinstance(old, dict) or "source" not in old:
        return [f"the inspection records the dataset by path (made by an older grpo-rlvr), which does not bind a "
                f"review to the data: {AGAIN}"]
    out = [f"dataset.{k} changed since the review ({old.get(k)!r} → {new.get(k)!r}): {AGAIN}"
           for k in _SETTINGS if old.get(k) != new.get(k)]
    src_old, src_new = old.get("source") or {}, new.get("source") or {}
    if src_old == src_new:
        return out
    if src_old.get("kind") != src_new.get("kind"):
        out.append(f"the dataset is now {_describe(src_new)}; the review read {_describe(src_old)}: {AGAIN}")
    elif src_new.get("kind") == "hub":
        out += _hub_changes(src_old, src_new, "dataset")
    elif src_new.get("kind") == "file":
        out.append(f"dataset file changed since the review ({name}): {AGAIN}")
    else:
        out += [p.replace("dataset ", f"dataset folder {name}: ", 1)
                for p in _file_changes(src_old, src_new, "dataset", kinds=False)]
    return out


def setting_changes(old, new: dict) -> list[str]:
    """Why the bound settings ``new`` (``brief/bound_settings.py``) are not the reviewed ``old``: one line per key
    that changed, with its reviewed and current value and the fix."""
    if old == new:
        return []
    if not isinstance(old, dict):
        return ["the inspection binds only temperature, top_p and max_completion_length (made by an older "
                f"grpo-rlvr), not the whole sampling setting: {AGAIN}"]
    out = []
    for key in sorted(set(old) | set(new)):
        if key in old and key in new and old[key] == new[key]:
            continue
        was = repr(old[key]) if key in old else "unset"
        now = repr(new[key]) if key in new else "unset (TRL's default)"
        back = f"set it back to {was}" if key in old else "remove it"
        out.append(f"{key} changed since the review ({was} → {now}), which changes what is sampled or how it is "
                   f"scored: {back}, or {AGAIN}")
    return out
