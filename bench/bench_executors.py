"""Benchmark: the executors (sequential, process pool, Ray) on small cells, and 1 → 2 workers.

Two measurements, each printed with the machine load (``uptime``) since the machine is shared:

* **Per-cell overhead** of an executor: a study of no-op cells run with ``n`` and ``4n`` cells;
  (wall(4n) − wall(n)) / 3n is the cost of one cell (claim, dispatch, result, SQLite write)
  with the backend's start-up cancelled out. Start-up (spawning the pool / workers, for Ray the
  first task's worker) is reported on its own.
* **Speedup 1 → 2 workers** for real studies — learnability (bow, demo data), attack (SO-Beam
  against a saved bow model, table source) and bias (two pairs, k = 0..2) — on the process pool
  and on Ray (one local ``ray.init(num_cpus=2)`` shared by the runs, so its start-up is not
  counted; Ray's own start-up is printed once). Results are checked equal to the sequential
  run's (timings aside) before a time is reported.

    .venv/bin/python bench/bench_executors.py [--quick] [--skip-ray]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TIMING = {"seconds", "train_seconds", "predict_seconds", "model_seconds", "signature"}


def noop_cell(kind: str, params: dict) -> dict:
    """The smallest cell: what the executor costs around a cell that does nothing."""
    return {"i": params["i"], "square": params["i"] ** 2}


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _cells(n: int):
    from robustlab.runs.store import Cell

    return [Cell(f"i={i:05d}", "noop", {"i": i}) for i in range(n)]


def run_noop(executor: str, n: int, workers: int, tmp: Path) -> float:
    from robustlab.runs.executor import run_cells
    from robustlab.runs.store import RunStore

    out = tmp / f"noop-{executor}-{n}-{time.perf_counter_ns()}"
    with RunStore(out) as store:
        store.init_run("noop", "noop", {"n": n})
        t0 = time.perf_counter()
        rep = run_cells(store, _cells(n), noop_cell, executor=executor, workers=workers,
                        progress=False)
        wall = time.perf_counter() - t0
    assert rep.complete, rep
    return wall


def overhead(executors: list[str], n: int, tmp: Path) -> None:
    print(f"\n## per-cell overhead (no-op cells, {n} and {4 * n} cells, 2 workers)   [{load()}]")
    print(f"{'executor':>10s} {'start-up + ' + str(n) + ' cells':>20s} {'per cell':>10s}")
    for ex in executors:
        w1 = run_noop(ex, n, 2, tmp)
        w4 = run_noop(ex, 4 * n, 2, tmp)
        per = (w4 - w1) / (3 * n)
        print(f"{ex:>10s} {w1:>18.2f} s {per * 1000:>8.2f} ms")


# ---- real studies ----------------------------------------------------------------------------


def _stable(path: Path) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in TIMING} for r in rows]


def learnability(tmp: Path, executor: str, workers: int, quick: bool) -> Path:
    from robustlab.studies.learnability.study import LearnabilityStudy, clear_caches, run_study

    clear_caches()
    study = LearnabilityStudy(models=("bow",), perturbations=("identity", "leet_letters",
                                                               "shuffle_word"),
                              p_grid=(0.1, 0.5, 1.0) if quick else (0.01, 0.1, 0.5, 1.0),
                              seeds=(0,) if quick else (0, 1), steps=60,
                              max_train=200, max_test=100)
    out = tmp / f"learn-{executor}-{workers}"
    run_study(study, out, executor=executor, workers=workers, progress=False, plots=False)
    return out


def _toy(d: Path) -> Path:
    """A saved bow model, a dev file, a neighbour table, patch pairs and gender pairs."""
    if (d / "bow").exists():
        return d
    from robustlab.models.registry import make_model

    rng = random.Random(0)

    def rows(n):
        out = []
        for _ in range(n):
            y = rng.randint(0, 1)
            out.append((y, f"{rng.choice(['he', 'she', 'the man', 'his friend'])} said the "
                           f"{rng.choice(['film', 'plot'])} was really "
                           f"{rng.choice(['good', 'great', 'fine'] if y else ['bad', 'dull'])} ."))
        return out

    d.mkdir(parents=True, exist_ok=True)
    train = rows(200)
    m = make_model("bow", seed=0, steps=60)
    m.fit([t for _, t in train], [y for y, _ in train], steps=60)
    m.save(d / "bow")
    (d / "dev.txt").write_text("".join(f"{y} {t}\n" for y, t in rows(40)))
    (d / "table.json").write_text(json.dumps({
        "good": ["great", "fine"], "great": ["good"], "bad": ["poor", "dull"], "dull": ["bad"],
        "film": ["movie", "picture"], "plot": ["story"], "really": ["truly", "very"],
        "said": ["thought", "felt"]}))
    (d / "pairs.json").write_text(json.dumps({"film": ["movie"], "plot": ["story"]}))
    (d / "gender.txt").write_text("he she\nman woman\n")
    return d


def attack(tmp: Path, executor: str, workers: int, quick: bool) -> Path:
    from robustlab.cli import main

    d = _toy(tmp / "toy")
    out = tmp / f"attack-{executor}-{workers}"
    rc = main(["attack", "--recipe", "so-beam", "--model", str(d / "bow"), "--dataset",
               str(d / "dev.txt"), "-n", "16" if quick else "40", "--source",
               f"table:{d / 'table.json'}", "--patch-table", str(d / "pairs.json"),
               "--max-distance", "3", "--beam-width", "4", "--out", str(out), "--no-progress",
               "--executor", executor, "--workers", str(workers)])
    assert rc == 0
    return out


def bias(tmp: Path, executor: str, workers: int, quick: bool) -> Path:
    from robustlab.cli import main

    d = _toy(tmp / "toy")
    out = tmp / f"bias-{executor}-{workers}"
    rc = main(["bias", "--model", str(d / "bow"), "--dataset", str(d / "dev.txt"), "--pairs",
               str(d / "gender.txt"), "--k", "0,1,2" if quick else "0,1,2,3", "--source",
               f"table:{d / 'table.json'}", "--budget", "200", "--parents", "40", "--out",
               str(out), "--no-progress", "--executor", executor, "--workers", str(workers)])
    assert rc == 0
    return out


def speedups(executors: list[str], tmp: Path, quick: bool) -> None:
    print(f"\n## speedup 1 -> 2 workers (wall seconds; results checked equal to sequential)"
          f"   [{load()}]")
    print(f"{'study':>13s} {'executor':>9s} {'sequential':>11s} {'1 worker':>9s} "
          f"{'2 workers':>10s} {'speedup':>8s}")
    for name, fn in (("learnability", learnability), ("attack", attack), ("bias", bias)):
        t0 = time.perf_counter()
        ref = fn(tmp, "sequential", 1, quick)
        seq = time.perf_counter() - t0
        want = _stable(ref / "results.jsonl")
        for ex in executors:
            walls = []
            for w in (1, 2):
                t0 = time.perf_counter()
                out = fn(tmp, ex, w, quick)
                walls.append(time.perf_counter() - t0)
                if _stable(out / "results.jsonl") != want:
                    raise SystemExit(f"{name} on {ex} with {w} workers differs from sequential")
            print(f"{name:>13s} {ex:>9s} {seq:>9.1f} s {walls[0]:>7.1f} s {walls[1]:>8.1f} s "
                  f"{walls[0] / walls[1]:>7.2f}x", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller studies")
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--cells", type=int, default=50, help="no-op cells (n; 4n run too)")
    args = ap.parse_args()
    executors = ["process"] + ([] if args.skip_ray else ["ray"])
    print(f"# bench_executors  {sys.platform}, {os.cpu_count()} cores   [{load()}]")
    if not args.skip_ray:
        import ray

        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": {"PYTHONPATH": str(ROOT)}})
        print(f"ray.init (local, 2 CPUs): {time.perf_counter() - t0:.1f} s (not counted below)")
    with tempfile.TemporaryDirectory(prefix="bench-exec-") as tmp:
        overhead(["sequential", *executors], args.cells, Path(tmp))
        speedups(executors, Path(tmp), args.quick)
    print(f"\n[{load()}]")


if __name__ == "__main__":
    main()
