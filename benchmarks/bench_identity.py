"""Benchmark: the identity of a 1 GB model folder, as rule 4 and every ``load_brief`` take it.

Run: ``python benchmarks/bench_identity.py [--gb 1.0] [--repeat 20]``. It writes a model folder
(``config.json``, ``tokenizer.json``, one ``model.safetensors`` of GB gigabytes of random bytes) in a temporary
folder, waits out the hash cache's racy window, then measures side by side:

- size-only: how the identity was taken before (``config.json``'s bytes plus each weight file's name and size),
  which a same-size rewrite passes;
- content, cold: ``grpo_rlvr.identity.model_identity`` with an empty hash cache (the SHA-256 of every file under
  the folder, at any depth). The file was just written, so it is read from the page cache: this is the hashing
  cost, not the disk's;
- content, cold, before #34: the identity as it was taken before it covered sub-folders and names such as
  ``LICENSE*`` (top-level files only, some names skipped; copied here as ``top_level_identity``), on the same
  bytes, runs interleaved with the current code's, so the ratio is of the walk and not of the machine's mood;
- content, warm: the same call again, answered by the cache (one ``stat`` and one small read per file);
- run check: what the check before training pays, which does not trust the cache folder (anyone running as
  the user can write it) and reads every byte again;
- libraries (run check): what the run check adds to verify the installed libraries that sample and score
  against their RECORD (``grpo_rlvr.identity.installed``: every file of TRL, transformers, datasets, accelerate,
  peft, the Python files of torch and vLLM), read in full each time, as the run check does.

Each side's median over ``--repeat`` runs (cold: 5 runs each, the cache emptied before each). Prints the ratios.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace


def size_only_identity(folder: Path) -> str:
    """The identity before content hashing: config.json's bytes and each weight file's name and size."""
    cfg = folder / "config.json"
    h = hashlib.sha256(cfg.read_bytes() if cfg.is_file() else b"")
    for p in sorted(folder.glob("*.safetensors")):
        h.update(f"{p.name}:{p.stat().st_size}".encode())
    return h.hexdigest()


_BEFORE_SKIPPED = ("*.md", "LICENSE*", "NOTICE*", "USE_POLICY*", "trainer_state.json", "training_args.bin",
                   "*_results.json", "events.out.tfevents*", "*.png", "*.jpg", "*.jpeg", "*.gif")


def top_level_identity(folder: Path) -> dict:
    """The model folder's identity before #34 (its code then): the top-level files not skipped by name."""
    import fnmatch

    from grpo_rlvr.identity.hash_cache import sha256_files

    found = {p.name: p for p in folder.iterdir()
             if not p.name.startswith(".") and not any(fnmatch.fnmatch(p.name, pat) for pat in _BEFORE_SKIPPED)
             and p.is_file()}
    digests = sha256_files(list(found.values()))
    return {"kind": "folder", "files": {n: digests[p] for n, p in sorted(found.items())}}


def write_model(folder: Path, gb: float) -> None:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "qwen2", "hidden_size": 2048}')
    (folder / "tokenizer.json").write_text('{"version": "1.0"}' + " " * 4000)
    chunk = os.urandom(64 << 20)
    left = int(gb * (1 << 30))
    with open(folder / "model.safetensors", "wb") as fh:
        while left > 0:
            fh.write(chunk[:min(left, len(chunk))])
            left -= len(chunk)
        fh.flush()
        os.fsync(fh.fileno())


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0, help="size of model.safetensors in GiB")
    ap.add_argument("--repeat", type=int, default=20, help="runs of the size-only and warm sides")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["GRPO_RLVR_CACHE"] = str(Path(tmp) / "cache")
        from grpo_rlvr.identity import hash_cache, model_identity

        model = Path(tmp) / "model"
        write_model(model, args.gb)
        time.sleep(hash_cache.RACY_NS / 1e9 + 0.5)   # older than the racy window, so the cold run is cached
        spec = SimpleNamespace(is_local=True, resolved=str(model))

        size_s, _ = timed(lambda: size_only_identity(model), args.repeat)

        def fresh():
            shutil.rmtree(hash_cache.cache_dir(), ignore_errors=True)
            hash_cache.forget()   # and this process's memo: each run starts as a new process would

        def cold():
            fresh()
            return model_identity(spec)

        def cold_before():
            fresh()
            return top_level_identity(model)

        def warm():
            hash_cache.forget()
            return model_identity(spec)

        colds, befores = [], []
        for _ in range(5):   # interleaved: before, now, before, now ...
            before_s, old_ident = timed(cold_before, 1)
            now_s, ident = timed(cold, 1)
            befores.append(before_s)
            colds.append(now_s)
        cold_s, before_s = statistics.median(colds), statistics.median(befores)
        assert old_ident == ident, "the same bytes: the old and the new identity name the same files"
        warm_s, again = timed(warm, args.repeat)
        assert again == ident, "the warm identity must equal the cold one"
        hash_cache.distrust_disk_cache()
        check_s, checked = timed(warm, 3)
        assert checked == ident, "the run check's identity must equal the cold one"
        from grpo_rlvr.identity.installed import LIBRARIES, installed_problems, recorded_files

        records = {p: d for name in LIBRARIES for p, d in (recorded_files(name) or {}).items()}
        lib_mb = sum(os.path.getsize(p) for p in records if os.path.isfile(p)) / 1e6
        libs_s, lib_problems = timed(installed_problems, 3)
        assert lib_problems == [], lib_problems
    gib = args.gb
    print(f"model folder: {gib:.2f} GiB of weights + config.json + tokenizer.json")
    print(f"{'size-only (before)':<22} {size_s * 1e3:10.3f} ms   (a same-size rewrite passes it)")
    print(f"{'content, cold':<22} {cold_s * 1e3:10.1f} ms   ({gib / cold_s:.2f} GiB/s SHA-256, page cache)")
    print(f"{'content, cold, before':<22} {before_s * 1e3:10.1f} ms   (top-level files only, names skipped: "
          "the code before #34)")
    print(f"{'content, warm (cache)':<22} {warm_s * 1e3:10.3f} ms   ({'under' if warm_s < 1e-3 else 'OVER'} 1 ms)")
    print(f"{'run check (no cache)':<22} {check_s * 1e3:10.1f} ms   (before training: every byte read again)")
    print(f"{'libraries (run check)':<22} {libs_s * 1e3:10.1f} ms   (added to every run check: {len(records):,} "
          f"files, {lib_mb:.0f} MB of the installed libraries against their RECORD)")
    print(f"ratios: cold / size-only {cold_s / size_s:,.0f}x   warm / size-only {warm_s / size_s:.2f}x   "
          f"cold / warm {cold_s / warm_s:,.0f}x   cold now / cold before #34 {cold_s / before_s:.3f}x")


if __name__ == "__main__":
    main()
