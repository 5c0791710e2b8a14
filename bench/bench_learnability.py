"""Benchmark: the learnability grid (paper 000) for TextRNN on SST-2 train, and MiniLM smaller.

Runs the real study (``robustlab.studies.learnability.study.run_study``, sequential executor) into a
temporary run directory and reports wall time, time per cell, and where the time went:

* ``train loop``   — forward/backward/optimiser steps (TorchClassifier._train / HF training)
* ``predict``      — forward passes at test time (predict_proba minus its encoding)
* ``encode``       — tokenization, vocabulary building and id matrices (inside fit/predict)
* ``perturb``      — computing perturbed copies of the splits (cache misses only)
* ``store+engine`` — everything else: executor loop, SQLite writes, labels, metrics, outputs

"overhead" = share of wall time outside model forward/backward (train loop + predict).
Full grid: 8 perturbations × 8 p × 3 seeds = 192 learnability trainings + exp 0–2.
``--quick`` runs a reduced grid. Prints the machine load (``uptime``) with the numbers.

    .venv/bin/python bench/bench_learnability.py [--quick] [--skip-minilm] [--steps N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from robustlab.resources import shared_data_dir  # noqa: E402
from robustlab.studies.learnability.study import PAPER_PERTURBATIONS, LearnabilityStudy  # noqa: E402

T: dict[str, float] = defaultdict(float)


_IN_PREDICT = [False]


def _timed(obj, name: str, bucket: str, predict: bool = False):
    """Wrap ``obj.name`` to add its wall time to ``T[bucket]`` (returns an undo function).

    ``bucket`` may be a callable choosing the bucket at call time; ``predict`` marks the
    prediction entry point so encoding inside it is told apart from encoding inside fit.
    """
    orig = getattr(obj, name)

    def wrapper(*a, **kw):
        b = bucket() if callable(bucket) else bucket
        if predict:
            _IN_PREDICT[0] = True
        t0 = time.perf_counter()
        try:
            return orig(*a, **kw)
        finally:
            T[b] += time.perf_counter() - t0
            if predict:
                _IN_PREDICT[0] = False

    setattr(obj, name, wrapper)
    return lambda: setattr(obj, name, orig)


def instrument() -> list:
    """Time the model's training loop, prediction, encoding and the study's perturbation."""
    from robustlab.models import torch_models
    from robustlab.studies.learnability import study as learnability

    tc = torch_models.TorchClassifier
    undo = [
        _timed(tc, "_train", "train_loop"),
        _timed(tc, "predict_proba", "predict_total", predict=True),
        _timed(tc, "_encode", lambda: "encode_predict" if _IN_PREDICT[0] else "encode_fit"),
        _timed(tc, "fit", "fit_total"),
        _timed(learnability, "perturb_examples", "perturb"),
    ]
    try:
        from robustlab.models import hf

        undo.append(_timed(hf.HFClassifier, "fit", "hf_fit"))
        undo.append(_timed(hf.HFClassifier, "predict_proba", "hf_predict", predict=True))
    except (ImportError, AttributeError):
        pass
    return undo


def run(label: str, study: LearnabilityStudy, minilm: bool = False, executor: str = "sequential",
        workers: int = 1) -> dict[str, float]:
    from robustlab.studies.learnability.study import clear_caches, run_study

    T.clear()
    clear_caches()
    undo = instrument() if executor == "sequential" else []
    out = Path(tempfile.mkdtemp(prefix="bench-learn-"))
    n_cells = len(study.cells())
    t0 = time.perf_counter()
    try:
        summary = run_study(study, out, progress=False, plots=True, executor=executor,
                            workers=workers)
    finally:
        for u in undo:
            u()
    wall = time.perf_counter() - t0
    if executor != "sequential":
        return _report_parallel(label, out, wall, n_cells, workers, summary)
    if minilm:  # HF: fit includes its own tokenization (not split out here)
        train_loop, predict_fwd, encode = T["hf_fit"], T["hf_predict"], 0.0
    else:
        train_loop = T["train_loop"]
        predict_fwd = T["predict_total"] - T["encode_predict"]
        encode = (T["fit_total"] - train_loop) + T["encode_predict"]
    model_time = train_loop + predict_fwd
    other = wall - model_time - encode - T["perturb"]
    print(f"\n== {label}")
    print(f"cells {n_cells}   wall {wall:8.1f} s   per cell {wall / n_cells:6.2f} s   "
          f"complete={summary['complete']}")
    for name, v in (("train loop (fwd/bwd)", train_loop), ("predict (fwd)", predict_fwd),
                    ("encode/tokenize/vocab", encode), ("perturb", T["perturb"]),
                    ("store+engine+outputs", other)):
        print(f"  {name:24s} {v:8.1f} s  {100 * v / wall:5.1f} %")
    print(f"  overhead (outside model forward/backward): {100 * (wall - model_time) / wall:.1f} %")
    print(f"  run dir: {out}")
    return {"wall": wall, "cells": n_cells, "overhead": (wall - model_time) / wall}


def _report_parallel(label: str, out: Path, wall: float, n_cells: int, workers: int,
                     summary: dict) -> dict[str, float]:
    """Worker processes cannot be instrumented from here: use the cells' own timings
    (``model_seconds`` = fit + predict, tokenization inside fit included, so this overhead is
    a lower bound) against the workers' total capacity (wall × workers)."""
    import json

    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    model = sum(r.get("model_seconds") or 0.0 for r in rows)
    cells = sum(r.get("seconds") or 0.0 for r in rows)
    cap = wall * workers
    print(f"\n== {label}  [{workers} worker processes]")
    print(f"cells {n_cells}   wall {wall:8.1f} s   per cell {wall / n_cells:6.2f} s (wall)   "
          f"complete={summary['complete']}")
    print(f"  fit+predict in cells     {model:8.1f} s  {100 * model / cap:5.1f} % of wall×workers")
    print(f"  rest of cells            {cells - model:8.1f} s  {100 * (cells - model) / cap:5.1f} %")
    print(f"  outside cells (engine, store, idle workers, outputs) "
          f"{cap - cells:8.1f} s  {100 * (cap - cells) / cap:5.1f} %")
    print(f"  overhead (outside fit/predict): {100 * (cap - model) / cap:.1f} %")
    print(f"  run dir: {out}")
    return {"wall": wall, "cells": n_cells, "overhead": (cap - model) / cap}


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return f"loadavg {os.getloadavg()}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="reduced grid (a few minutes)")
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--skip-textrnn", action="store_true")
    ap.add_argument("--steps", type=int, default=200, help="TextRNN training steps (default 200)")
    ap.add_argument("--minilm-steps", type=int, default=20)
    ap.add_argument("--executor", choices=("sequential", "process"), default="sequential",
                    help="sequential gives the detailed breakdown; process uses --workers")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    sst = shared_data_dir() / "sst"
    if not (sst / "stsa.binary.train").exists():
        print(f"SKIP: needs SST-2 at {sst} (the team's shared data)")
        return 0
    spec = {"path": str(sst / "stsa.binary.train"), "test_path": str(sst / "stsa.binary.test"),
            "format": "label-text"}
    print(f"start: {uptime()}  (cpus: {os.cpu_count()})")
    if args.quick:
        textrnn = LearnabilityStudy(models=("textrnn",), perturbations=("leet_letters",
                                    "shuffle_word"), dataset=spec, p_grid=(0.01, 0.1, 1.0),
                                    seeds=(0,), steps=args.steps, max_train=2000, max_test=500)
    else:
        textrnn = LearnabilityStudy(models=("textrnn",), perturbations=PAPER_PERTURBATIONS,
                                    dataset=spec, seeds=(0, 1, 2), steps=args.steps)
    r = None
    if not args.skip_textrnn:
        r = run(f"TextRNN on SST-2 train ({'quick' if args.quick else 'full grid'}, "
                f"{args.steps} steps)", textrnn, executor=args.executor, workers=args.workers)
        print(f"after TextRNN: {uptime()}")
    if not args.skip_minilm:
        minilm = LearnabilityStudy(models=("minilm",), perturbations=("leet_letters",
                                   "shuffle_word"), dataset=spec, p_grid=(0.01, 0.1, 1.0),
                                   seeds=(0,), steps=args.minilm_steps, max_train=500,
                                   max_test=200)
        run(f"MiniLM (500 train / 200 test, 2 perturbations × 3 p × 1 seed, "
            f"{args.minilm_steps} steps)", minilm, minilm=True)
        print(f"after MiniLM: {uptime()}")
    if r is None:
        return 0
    target = 15 * 60
    print(f"\nTextRNN grid: {r['wall'] / 60:.1f} min (aim < 15 min: "
          f"{'met' if r['wall'] < target else 'NOT met'}), overhead {100 * r['overhead']:.1f} % "
          f"(aim < 10 %: {'met' if r['overhead'] < 0.10 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
