"""How fast the TUI opens big runs: a 10,000-cell learnability store and a 10,000-example attack.

Tables show one page of 500 rows (sorting and export cover every row). Prints, for each screen, the time from the key press to the screen showing its data (headless
Textual app at 160×48), the time of the headless reader alone, the reference read of the same
store through ``RunStore.cells()`` (every cell's full JSON), and the longest stall of the event
loop while the screen loaded (a 10 ms ticker: a stall near the load time would mean blocking).

    .venv/bin/python bench/bench_tui.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from tui import fixtures  # noqa: E402  (tests/tui/fixtures.py: realistic run dirs)

from robustlab.cli import build_parser
from robustlab.runs.store import RunStore  # noqa: E402
from robustlab.tui import data, results  # noqa: E402

MODELS = [f"m{i}" for i in range(10)]
PERTS = [f"pert{i}" for i in range(23)]  # 10 × 23 pairs × 4 seeds × 11 cells = 10,120 cells


def build(root: Path) -> dict[str, Path]:
    if (root / "attack-10k" / "summary.json").exists():  # --keep DIR from an earlier run
        print(f"reusing the fixtures in {root}")
        return {"learn": root / "learn-10k", "attack": root / "attack-10k"}
    t0 = time.perf_counter()
    learn = fixtures.learnability(root / "learn-10k", models=MODELS, perts=PERTS,
                                  seeds=(0, 1, 2, 3))
    attack = fixtures.attack(root / "attack-10k", n=10_000)
    print(f"built fixtures through the RunStore API in {time.perf_counter() - t0:.1f} s")
    return {"learn": learn, "attack": attack}


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def reference(path: Path) -> None:
    with RunStore(path, readonly=True) as store:
        store.cells()


async def open_screen(path: Path, kind: str, ready) -> tuple[float, float]:
    """Seconds from the open action to ``ready(screen)``, and the longest event-loop stall."""
    from robustlab.tui.app import RobustlabApp, Settings

    app = RobustlabApp([path], Settings(parser=build_parser, poll_seconds=0.5))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.5)
        ticks: list[float] = []
        app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
        await pilot.pause(0.1)
        t0 = time.perf_counter()
        if kind == "progress":
            app.open_progress(path)
        else:
            app.open_results(path, kind)
        while not ready(app.screen):
            await asyncio.sleep(0.005)
        elapsed = time.perf_counter() - t0
        await pilot.pause(0.05)
        window = [t for t in ticks if t >= t0 - 0.02]
        stall = max((b - a for a, b in zip(window, window[1:], strict=False)), default=0.0)
    return elapsed, stall


def rows_of(selector: str, n: int):
    def ready(screen) -> bool:
        found = screen.query(selector)
        return bool(found) and found.first().row_count >= n
    return ready


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", type=Path, help="build the fixtures here and keep them")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} (1/5 min), "
          f"{os.cpu_count()} cpus")
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-tui-"))
    runs = build(root)
    n_learn = RunStore(runs["learn"], readonly=True).counts()["done"]
    print("\nheadless readers (best of 3) vs RunStore.cells() on the same store")
    for name, path, fn in [
        ("runs list row", runs["learn"], lambda: data.read_run(runs["learn"])),
        ("progress (10k cells)", runs["learn"], lambda: data.read_progress(runs["learn"])),
        ("learnability results", runs["learn"], lambda: results.load_learnability(runs["learn"])),
        ("attack results (10k)", runs["attack"], lambda: results.load_attack(runs["attack"])),
        ("one attack example", runs["attack"],
         lambda: results.load_example(runs["attack"], "ex=005000")),
    ]:
        ours, ref = timed(fn), timed(lambda p=path: reference(p))
        print(f"  {name:24} {ours * 1000:8.1f} ms   RunStore.cells(): {ref * 1000:7.1f} ms   "
              f"ratio {ours / ref:5.2f}")
    print(f"\nopening screens in the app (key press → data on screen; {n_learn} learnability "
          "cells, 10,000 attack examples)")
    cases = [
        ("progress (10k cells)", runs["learn"], "progress", rows_of("#cells", 500)),
        ("learnability results", runs["learn"], "learnability", rows_of("#pairs", 230)),
        ("attack results (10k)", runs["attack"], "attack", rows_of("#examples", 500)),
    ]
    for name, path, kind, ready in cases:
        elapsed, stall = asyncio.run(open_screen(path, kind, ready))
        print(f"  {name:24} {elapsed:6.3f} s   longest event-loop stall {stall * 1000:6.1f} ms")
    print(f"\nload after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
