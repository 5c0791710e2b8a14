"""Benchmark: the cross-domain MT report on WMT22 ru-en (10 systems × 2,016 segments).

Measures, in one process and one run:

1. robustlab scoring (sentence BLEU + chrF, one sacreBLEU object per metric, references cached
   once, shared hypotheses scored once) — wall time and segments/s;
2. the plain loop of ``sacrebleu.sentence_bleu`` (+ ``sentence_chrf``) over the same segments, and
   the ratio; the scores are checked to be identical;
3. the full consistency tables (mean/var/CoV/γ curves, leave-one-domain-out, 30×60 % bagging and
   design bagging), vectorised over systems;
4. the whole ``robustlab cross-domain mt`` report into a temporary run directory (store, CSV,
   JSON, PNG) — the issue's target is < 30 s.

Usage: ``.venv/bin/python bench/bench_cross_domain.py [--pair ru-en] [--no-plain]``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pair", default="ru-en")
    ap.add_argument("--no-plain", action="store_true", help="skip the slow plain loops")
    args = ap.parse_args()

    import sacrebleu

    from robustlab.data.mt import load_wmt22
    from robustlab.metrics.mt import MTScorer
    from robustlab.resources import shared_data_dir
    from robustlab.studies.cross_domain.study import (
        ConsistencyConfig,
        MTStudy,
        consistency_tables,
        run_mt,
    )

    print(f"load average at start: {os.getloadavg()}, cpus: {os.cpu_count()}")
    t = time.perf_counter()
    data = load_wmt22(shared_data_dir() / "wmt22_general", args.pair)
    n_sys, n_seg = len(data.systems), data.n_segments
    total = n_sys * n_seg
    print(f"read {n_sys} systems x {n_seg} segments ({total} segment scores) in "
          f"{time.perf_counter() - t:.2f}s")

    def fast(metrics: tuple[str, ...]) -> tuple[float, float, dict]:
        t0, c0 = time.perf_counter(), time.process_time()
        scorer = MTScorer(data.refs, metrics)
        out = scorer.score_many(data.systems)
        return time.perf_counter() - t0, time.process_time() - c0, out

    t_fast_b, c_fast_b, fast_b = fast(("bleu",))
    t_fast, c_fast, scores = fast(("bleu", "chrf"))
    print(f"robustlab sentence BLEU:        {t_fast_b:7.2f}s wall {c_fast_b:6.2f}s cpu  "
          f"{total / t_fast_b:8.0f} seg/s")
    print(f"robustlab sentence BLEU + chrF: {t_fast:7.2f}s wall {c_fast:6.2f}s cpu  "
          f"{total / t_fast:8.0f} seg/s  (load {_load():.1f})")

    if not args.no_plain:
        refs = data.refs
        t0, c0 = time.perf_counter(), time.process_time()
        plain_b = {k: np.array([sacrebleu.sentence_bleu(h, [r[i] for r in refs]).score
                                for i, h in enumerate(v)]) for k, v in data.systems.items()}
        t_plain_b, c_plain_b = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        plain_c = {k: np.array([sacrebleu.sentence_chrf(h, [r[i] for r in refs]).score
                                for i, h in enumerate(v)]) for k, v in data.systems.items()}
        t_plain_c, c_plain_c = time.perf_counter() - t0, time.process_time() - c0
        print(f"cpu-time ratios (less sensitive to load): BLEU {c_plain_b / c_fast_b:.2f}x, "
              f"BLEU + chrF {(c_plain_b + c_plain_c) / c_fast:.2f}x")
        same = all(np.array_equal(plain_b[k], scores[k].segment["bleu"]) and
                   np.array_equal(plain_c[k], scores[k].segment["chrf"]) for k in data.systems)
        print(f"plain sacrebleu.sentence_bleu loop:          {t_plain_b:7.2f}s  "
              f"{total / t_plain_b:8.0f} seg/s  ratio {t_plain_b / t_fast_b:.2f}x")
        print(f"plain sentence_bleu + sentence_chrf loops:   {t_plain_b + t_plain_c:7.2f}s  "
              f"{total / (t_plain_b + t_plain_c):8.0f} seg/s  ratio "
              f"{(t_plain_b + t_plain_c) / t_fast:.2f}x  (load {_load():.1f})")
        print(f"identical scores: {same}")

    X = np.stack([scores[k].segment["bleu"] for k in data.systems])
    cfg = ConsistencyConfig()
    t0 = time.perf_counter()
    consistency_tables(X, data.domains, cfg)
    t_tab = time.perf_counter() - t0
    print(f"consistency tables (none/bagging/design x all + {len(data.domain_names())} "
          f"left-out, 30x60%, gamma grid 1..100): {t_tab:.2f}s")

    with tempfile.TemporaryDirectory() as tmp:
        t0, c0 = time.perf_counter(), time.process_time()
        data2 = load_wmt22(shared_data_dir() / "wmt22_general", args.pair)
        summary = run_mt(MTStudy(), data2, os.path.join(tmp, "run"))
        t_all, c_all = time.perf_counter() - t0, time.process_time() - c0
    print(f"whole report (read + score + tables + store + CSV/JSON/PNG): {t_all:.2f}s wall, "
          f"{c_all:.2f}s cpu "
          f"(scoring {summary['seconds_scoring']:.2f}s, tables {summary['seconds_tables']:.2f}s)"
          f"  target < 30s  (load {_load():.1f})")


if __name__ == "__main__":
    main()
