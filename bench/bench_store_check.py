"""How long the integrity check on resume / in the TUI costs: ``PRAGMA quick_check`` on stores of
growing size (cells with per-example records, like a learnability or attack run).

Run: ``python bench/bench_store_check.py [CELLS ...]`` (default 1000 10000). Prints the file size
and the seconds of one quick_check (cold: first call; the TUI caches the verdict per file state),
and of the payload scan every resume makes (``RunStore.damaged_done``: every done cell's params,
result and records verified by their CRC-32) and of reading every result (``cells()``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from robustlab.runs.store import Cell, RunStore


def build(path: Path, n: int, records: int = 20) -> RunStore:
    store = RunStore(path)
    store.init_run("bench", "bench", {"n": n})
    store.add_cells([Cell(f"c={i:06d}", "bench", {"i": i}) for i in range(n)])
    for i in range(n):
        key = f"c={i:06d}"
        store.claim(key)
        store.finish(key, {"i": i, "accuracy": 0.5, "pad": "x" * 100},
                     records=[{"i": j, "p0": 0.25, "p1": 0.75} for j in range(records)])
    return store


def main(sizes: list[int]) -> None:
    for n in sizes:
        with tempfile.TemporaryDirectory() as d:
            store = build(Path(d), n)
            store.close()
            store = RunStore(d, readonly=True)
            size = Path(d, "store.sqlite").stat().st_size + Path(
                d, "store.sqlite-wal").stat().st_size if Path(d, "store.sqlite-wal").exists() \
                else Path(d, "store.sqlite").stat().st_size
            t0 = time.perf_counter()
            verdict = store.quick_check(cache=False)
            dt = time.perf_counter() - t0
            store.quick_check()  # fills the cache
            t1 = time.perf_counter()
            store.quick_check()
            cached = time.perf_counter() - t1
            t2 = time.perf_counter()
            damaged = store.damaged_done()
            scan = time.perf_counter() - t2
            t3 = time.perf_counter()
            store.cells()
            read = time.perf_counter() - t3
            print(f"{n:>7} cells x 20 records  {size / 1e6:7.1f} MB  quick_check {dt:.3f} s "
                  f"({verdict or 'ok'}); cached second call {cached * 1e3:.2f} ms; payload scan "
                  f"{scan:.3f} s ({len(damaged)} damaged); cells() {read:.3f} s")
            store.close()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 10000])
