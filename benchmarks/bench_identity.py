"""Benchmark: the identity of a 1 GB model folder, as rule 4 and every ``load_brief`` take it.

Run: ``python benchmarks/bench_identity.py [--gb 1.0] [--repeat 20]``. It writes a model folder
(``config.json``, ``tokenizer.json``, one ``model.safetensors`` of GB gigabytes of random bytes) in a temporary
folder, waits out the hash cache's racy window, then measures side by side:

- size-only: how the identity was taken before (``config.json``'s bytes plus each weight file's name and size),
  which a same-size rewrite passes;
- content, cold: ``grpo_rlvr.identity.model_identity`` with an empty hash cache (the SHA-256 of every file). The
  file was just written, so it is read from the page cache: this is the hashing cost, not the disk's;
- content, warm: the same call again, answered by the cache (one ``stat`` and one small read per file);
- run check: what the check before training pays, which does not trust the cache folder (anyone running as
  the user can write it) and reads every byte again.

Each side's median over ``--repeat`` runs (cold: 3 runs, the cache emptied before each). Prints the ratios.
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

        def cold():
            shutil.rmtree(hash_cache.cache_dir(), ignore_errors=True)
            hash_cache.forget()   # and this process's memo: each run starts as a new process would
            return model_identity(spec)

        def warm():
            hash_cache.forget()
            return model_identity(spec)

        cold_s, ident = timed(cold, 3)
        warm_s, again = timed(warm, args.repeat)
        assert again == ident, "the warm identity must equal the cold one"
        hash_cache.distrust_disk_cache()
        check_s, checked = timed(warm, 3)
        assert checked == ident, "the run check's identity must equal the cold one"
    gib = args.gb
    print(f"model folder: {gib:.2f} GiB of weights + config.json + tokenizer.json")
    print(f"{'size-only (before)':<22} {size_s * 1e3:10.3f} ms   (a same-size rewrite passes it)")
    print(f"{'content, cold':<22} {cold_s * 1e3:10.1f} ms   ({gib / cold_s:.2f} GiB/s SHA-256, page cache)")
    print(f"{'content, warm (cache)':<22} {warm_s * 1e3:10.3f} ms")
    print(f"{'run check (no cache)':<22} {check_s * 1e3:10.1f} ms   (before training: every byte read again)")
    print(f"ratios: cold / size-only {cold_s / size_s:,.0f}x   warm / size-only {warm_s / size_s:.2f}x   "
          f"cold / warm {cold_s / warm_s:,.0f}x")


if __name__ == "__main__":
    main()
