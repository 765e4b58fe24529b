"""Content identity (``grpo_rlvr.identity``): the hash cache holds against rewrites an adversary would try, hub
snapshots resolve through a cache laid out on disk, and identities hold content, not path spelling."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from grpo_rlvr.identity import compute, hash_cache, model_changes
from grpo_rlvr.identity.compute import dataset_identity, hub_identity, local_model_identity
from hub_cache_layout import add_snapshot

C1, C2 = "1" * 40, "2" * 40


@pytest.fixture
def reads(monkeypatch, tmp_path):
    """Counts the files hash_cache reads from disk; the cache is fresh and every file old enough to cache."""
    monkeypatch.setenv("GRPO_RLVR_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(hash_cache, "RACY_NS", 0)
    seen: list[str] = []
    real = hash_cache.hashlib.file_digest

    def counting(fh, name):
        seen.append(fh.name)
        return real(fh, name)

    monkeypatch.setattr(hash_cache.hashlib, "file_digest", counting)
    return seen


def _write(p: Path, data: bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def test_a_cached_hash_is_reused_without_reading_the_file(tmp_path, reads):
    f = _write(tmp_path / "w.bin", os.urandom(4096))
    first = hash_cache.sha256_file(f)
    assert first == hashlib.sha256(f.read_bytes()).hexdigest()
    assert hash_cache.sha256_file(f) == first
    assert reads == [str(f)]


def test_same_size_rewrite_with_mtime_restored_is_read_again(tmp_path, reads):
    f = _write(tmp_path / "w.bin", b"a" * 4096)
    before = hash_cache.sha256_file(f)
    st = f.stat()
    with f.open("r+b") as fh:          # rewritten in place: same inode, same size
        fh.write(b"b" * 4096)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))   # `touch -d` back to the old mtime
    assert (f.stat().st_size, f.stat().st_mtime_ns, f.stat().st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    after = hash_cache.sha256_file(f)
    assert after != before and after == hashlib.sha256(b"b" * 4096).hexdigest()
    assert len(reads) == 2


def test_a_file_replaced_by_rename_is_read_again(tmp_path, reads):
    f = _write(tmp_path / "w.bin", b"a" * 100)
    before = hash_cache.sha256_file(f)
    _write(tmp_path / "new.bin", b"c" * 100).replace(f)
    assert hash_cache.sha256_file(f) != before and len(reads) == 2


def test_a_file_written_moments_ago_is_not_cached(tmp_path, reads, monkeypatch):
    monkeypatch.setattr(hash_cache, "RACY_NS", 2_000_000_000)
    f = _write(tmp_path / "w.bin", b"fresh")
    hash_cache.sha256_file(f)
    hash_cache.sha256_file(f)
    assert len(reads) == 2 and not hash_cache.cache_dir().exists()


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = _write(tmp_path / "not-a-folder", b"")
    monkeypatch.setenv("GRPO_RLVR_CACHE", str(blocker))   # mkdir under a file fails
    monkeypatch.setattr(hash_cache, "RACY_NS", 0)
    f = _write(tmp_path / "w.bin", b"x" * 10)
    assert hash_cache.sha256_file(f) == hashlib.sha256(b"x" * 10).hexdigest()


def test_a_model_folder_is_its_content_not_its_spelling(tmp_path, reads):
    m = tmp_path / "m"
    _write(m / "config.json", b"{}")
    _write(m / "model.safetensors", os.urandom(256))
    _write(m / "README.md", b"card")
    _write(m / "trainer_state.json", b"{}")
    _write(m / "checkpoint-5" / "model.safetensors", b"old")
    _write(m / ".cache" / "huggingface" / "download" / "config.json.metadata", b"c1\netag\n1700000000.0\n")
    _write(m / ".git" / "HEAD", b"ref: refs/heads/main\n")
    ident = local_model_identity(m)
    assert ident["kind"] == "folder"
    assert sorted(ident["files"]) == ["README.md", "config.json", "model.safetensors", "trainer_state.json"]
    copy = shutil.copytree(m, tmp_path / "elsewhere" / "copy")
    (tmp_path / "link").symlink_to(m)
    assert local_model_identity(copy) == ident == local_model_identity(tmp_path / "link")
    assert local_model_identity(tmp_path / "elsewhere" / ".." / "m") == ident
    _write(m / ".cache" / "huggingface" / "download" / "config.json.metadata", b"c1\netag\n1800000000.0\n")
    _write(m / "checkpoint-5" / "model.safetensors", b"new")      # places no loader reads: the same model
    assert local_model_identity(m) == ident
    (m / "README.md").write_text("edited card")                    # any other file counts, whatever its name
    assert model_changes(ident, local_model_identity(m)) == [
        "model config changed since the review (README.md): re-inspect and review"]


@pytest.mark.parametrize("added", ["additional_chat_templates/default.jinja", "LICENSE_impl.py", "a/b/c/d.json",
                                   ".hidden", "LICENSE"])
def test_a_file_added_anywhere_in_a_model_folder_changes_its_identity(tmp_path, reads, added):
    m = tmp_path / "m"
    _write(m / "config.json", b"{}")
    before = local_model_identity(m)
    _write(m / added, b"x")
    assert model_changes(before, local_model_identity(m)) == [
        f"model files added since the review ({added}): re-inspect and review"]


def test_linked_folders_are_followed_and_a_loop_is_part_of_the_identity(tmp_path, reads):
    """A folder linked in is read through the link; a link back up is recorded, not walked forever, so adding
    one (which makes a reviewed file loadable under a new name) is seen."""
    m = tmp_path / "m"
    _write(m / "config.json", b"{}")
    _write(m / "default.jinja", b"{{ x }}")
    _write(tmp_path / "templates" / "default.jinja", b"{{ y }}")
    before = local_model_identity(m)
    (m / "additional_chat_templates").symlink_to(tmp_path / "templates", target_is_directory=True)
    now = local_model_identity(m)
    assert now["files"]["additional_chat_templates/default.jinja"] == hashlib.sha256(b"{{ y }}").hexdigest()
    (m / "additional_chat_templates").unlink()
    (m / "additional_chat_templates").symlink_to(m, target_is_directory=True)   # -> the folder itself
    (m / "sub").mkdir()
    (m / "sub" / "up").symlink_to(m / "sub", target_is_directory=True)
    looped = local_model_identity(m)
    assert looped["files"]["additional_chat_templates/"] == "loop:."
    assert looped["files"]["sub/up/"] == "loop:sub"
    assert model_changes(before, looped) == [
        "model files added since the review (additional_chat_templates/, sub/up/): re-inspect and review"]


def test_a_shard_an_index_names_in_a_left_out_folder_still_counts(tmp_path, reads):
    """checkpoint-*/ is left out of a model folder, but a shard the index names there loads as weights."""
    m = tmp_path / "m"
    _write(m / "config.json", b"{}")
    _write(m / "model.safetensors.index.json", b'{"weight_map": {"w": "checkpoint-9/model-1.safetensors"}}')
    _write(m / "checkpoint-9" / "model-1.safetensors", b"shard")
    _write(m / "checkpoint-9" / "optimizer.pt", b"state")
    ident = local_model_identity(m)
    assert sorted(ident["files"]) == ["checkpoint-9/model-1.safetensors", "config.json", "model.safetensors.index.json"]
    _write(m / "checkpoint-9" / "model-1.safetensors", b"other")
    assert model_changes(ident, local_model_identity(m)) == [
        "model weights changed since the review (checkpoint-9/model-1.safetensors): re-inspect and review"]


def test_a_folder_with_too_many_names_is_refused(tmp_path, reads, monkeypatch):
    from grpo_rlvr.errors import InputFileError

    m = tmp_path / "m"
    for i in range(3):
        _write(m / "sub" / f"{i}.json", b"{}")
    monkeypatch.setattr(compute, "MAX_FILES", 2)
    with pytest.raises(InputFileError, match="more than 2 files under it"):
        local_model_identity(m)


def test_adapter_identity_holds_its_files_and_its_base(tmp_path, reads):
    base = tmp_path / "base"
    _write(base / "config.json", b"{}")
    _write(base / "model.safetensors", b"base weights")
    adapter = tmp_path / "sft" / "adapter"
    _write(adapter / "adapter_config.json", b'{"base_model_name_or_path": "../../base", "peft_type": "LORA"}')
    _write(adapter / "adapter_model.safetensors", b"adapter one")
    ident = local_model_identity(adapter)
    assert ident["kind"] == "adapter" and ident["base"] == local_model_identity(base)
    _write(base / "model.safetensors", b"base weight2")
    problems = model_changes(ident, local_model_identity(adapter))
    assert problems == ["base model weights changed since the review (model.safetensors): re-inspect and review"]


def test_adapter_on_a_hub_base_pins_the_base_commit(tmp_path, reads, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    src = _write(tmp_path / "src" / "config.json", b"{}").parent
    add_snapshot(tmp_path / "hub", "org/base", src, C1)
    adapter = tmp_path / "adapter"
    _write(adapter / "adapter_config.json", b'{"base_model_name_or_path": "org/base"}')
    _write(adapter / "adapter_model.safetensors", b"a")
    assert local_model_identity(adapter)["base"]["commit"] == C1


def test_hub_identity_resolves_the_revision_through_the_cache(tmp_path, monkeypatch, reads):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    src = tmp_path / "src"
    _write(src / "config.json", b'{"a": 1}')
    _write(src / "model.safetensors", b"weights")
    add_snapshot(tmp_path / "hub", "org/m", src, C1)
    add_snapshot(tmp_path / "hub", "org/m", src, C2, ref="v2")
    main = hub_identity("org/m", None)
    assert main["commit"] == C1 and main["files"]["model.safetensors"] == hashlib.sha256(b"weights").hexdigest()
    assert hub_identity("org/m", "main") == main == hub_identity("org/m", C1)
    assert hub_identity("org/m", "v2")["commit"] == C2
    assert hub_identity("org/other", None) == {"kind": "hub", "id": "org/other", "revision": None, "commit": None}
    # each blob is read once, to check its bytes against its name; every later lookup (both commits share the
    # blobs) is answered by the hash cache
    assert sorted(Path(r).name for r in reads) == ["config.json", "model.safetensors"]


def test_a_repointed_snapshot_link_changes_the_identity(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    src = tmp_path / "src"
    _write(src / "model.safetensors", b"weights")
    _write(src / "other.bin", b"other weights")
    snap = add_snapshot(tmp_path / "hub", "org/m", src, C1)
    before = hub_identity("org/m", None)
    link = snap / "model.safetensors"
    target = (snap / "other.bin").readlink()
    link.unlink()
    link.symlink_to(target)
    assert model_changes(before, hub_identity("org/m", None)) == [
        "model org/m (cached snapshot) weights changed since the review (model.safetensors): re-inspect and review"]


def test_hub_dataset_is_pinned_to_its_commit(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    src = _write(tmp_path / "src" / "train.jsonl", b'{"prompt": "1+1="}\n').parent
    add_snapshot(tmp_path / "hub", "org/data", src, C1, repo_type="dataset")
    spec = SimpleNamespace(split="train", prompt_column="prompt", columns={}, prompt={}, subset=None,
                           is_local=False, resolved="org/data")
    before = dataset_identity(spec)
    assert before["source"]["commit"] == C1
    add_snapshot(tmp_path / "hub", "org/data", src, C2, repo_type="dataset")
    from grpo_rlvr.identity import dataset_changes

    (problem,) = dataset_changes(before, dataset_identity(spec), "org/data")
    assert f"resolves to commit {C2[:12]} now, but the review read commit {C1[:12]}" in problem


def test_a_local_dataset_file_is_its_bytes(tmp_path, reads):
    a = _write(tmp_path / "a" / "train.jsonl", b'{"x": 1}\n')
    b = _write(tmp_path / "b" / "renamed.jsonl", b'{"x": 1}\n')

    def spec(p):
        return SimpleNamespace(split="train", prompt_column="prompt", columns={}, prompt={}, subset=None,
                               is_local=True, resolved=str(p))

    assert dataset_identity(spec(a)) == dataset_identity(spec(b))
    assert compute.dataset_identity(spec(a.parent))["source"]["files"] == {"train.jsonl": dataset_identity(
        spec(a))["source"]["sha256"]}


def test_an_inspection_from_before_content_identity_says_so(tmp_path, reads):
    from grpo_rlvr.identity import dataset_changes

    _write(tmp_path / "m" / "config.json", b"{}")
    (problem,) = model_changes({"path": "./model", "content": "ab12"}, local_model_identity(tmp_path / "m"))
    assert "by name and file sizes (made by an older grpo-rlvr)" in problem and "re-inspect and review" in problem
    (problem,) = dataset_changes({"path": "./data.jsonl", "split": "train"}, {"source": {}}, "./data.jsonl")
    assert "records the dataset by path" in problem
