"""Benchmark the trainable models on SST-2 (shared data) or the demo dataset.

For each torch family: wall and CPU seconds of one training of N steps, prediction throughput on
the dev set, dev accuracy, and the projected wall time of the learnability grid (192 trainings on
2 single-thread workers). Reference in the same run: scikit-learn's CountVectorizer +
LogisticRegression (the library baseline for "a bag-of-words classifier"). MiniLM: seconds per
fine-tuning step at a small size. Prints the machine load (``os.getloadavg``) with the numbers,
because the machine is shared.

    .venv/bin/python bench/bench_models.py [--families textrnn,bow] [--steps 200]
        [--minilm-steps 5] [--seeds 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robustlab.data.datasets import load_dataset  # noqa: E402
from robustlab.resources import shared_data_dir  # noqa: E402


def load() -> tuple:
    sst = shared_data_dir() / "sst"
    if (sst / "stsa.binary.train").exists():
        return (load_dataset(str(sst / "stsa.binary.train")),
                load_dataset(str(sst / "stsa.binary.dev")), "SST-2 (6,920 train / 872 dev)")
    demo = load_dataset("demo")
    tr, dv = demo.split(0.2, seed=0)
    return tr, dv, "demo (no shared data found)"


def load_str() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def bench_family(family: str, train, dev, steps: int, seed: int) -> dict:
    from robustlab.models.registry import make_model

    model = make_model(family, steps=steps, seed=seed)
    w0, c0 = time.perf_counter(), time.process_time()
    model.fit(train.texts, train.labels)
    w1, c1 = time.perf_counter(), time.process_time()
    pred = model.predict(dev.texts)
    w2, c2 = time.perf_counter(), time.process_time()
    return {"family": family, "steps": steps, "seed": seed,
            "fit_wall_s": w1 - w0, "fit_cpu_s": c1 - c0,
            "predict_wall_s": w2 - w1, "predict_cpu_s": c2 - c1,
            "predict_per_s": len(dev) / max(w2 - w1, 1e-9),
            "dev_accuracy": float(np.mean(pred == np.asarray(dev.labels))),
            "params": model.get_params(), "load": load_str()}


def bench_sklearn(train, dev) -> dict:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    w0, c0 = time.perf_counter(), time.process_time()
    vec = CountVectorizer(token_pattern=r"\S+")
    clf = LogisticRegression(solver="liblinear").fit(vec.fit_transform(train.texts), train.labels)
    w1, c1 = time.perf_counter(), time.process_time()
    acc = float(np.mean(clf.predict(vec.transform(dev.texts)) == np.asarray(dev.labels)))
    return {"family": "sklearn CountVectorizer+LogisticRegression", "fit_wall_s": w1 - w0,
            "fit_cpu_s": c1 - c0, "dev_accuracy": acc, "load": load_str()}


def bench_minilm(train, steps: int, batch_size: int = 32) -> dict:
    """Seconds per fine-tuning step: (fit of 1 + steps) minus (fit of 1), so loading the
    checkpoint and tokenizing are not counted as training."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from robustlab.models.registry import make_model

    sub = train.subsample(256, seed=0)
    times = []
    for n in (1, 1 + steps):
        model = make_model("minilm", steps=n, batch_size=batch_size, max_length=64)
        w0, c0 = time.perf_counter(), time.process_time()
        model.fit(sub.texts, sub.labels)
        times.append((time.perf_counter() - w0, time.process_time() - c0))
    per_wall = (times[1][0] - times[0][0]) / steps
    per_cpu = (times[1][1] - times[0][1]) / steps
    return {"family": "minilm", "steps": steps, "batch_size": batch_size,
            "wall_s_per_step": per_wall, "cpu_s_per_step": per_cpu,
            "one_step_fit_wall_s": times[0][0], "load": load_str()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--families", default="textrnn,bow,cnn,lstm,transformer")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--minilm-steps", type=int, default=5, help="0 to skip MiniLM")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    args = ap.parse_args()
    train, dev, what = load()
    print(f"data: {what}; cores: {os.cpu_count()}; {load_str()}", flush=True)
    rows = [bench_sklearn(train, dev)]
    ref = rows[0]
    print(f"{ref['family']:44s} fit {ref['fit_wall_s']:6.2f} s wall  dev acc "
          f"{ref['dev_accuracy']:.3f}   [{ref['load']}]", flush=True)
    for fam in args.families.split(","):
        for seed in range(args.seeds):
            r = bench_family(fam, train, dev, args.steps, seed)
            rows.append(r)
            grid = 192 * (r["fit_wall_s"] + r["predict_wall_s"] * 2) / 2 / 60
            print(f"{fam:12s} seed {seed} {args.steps} steps: fit {r['fit_wall_s']:6.2f} s wall "
                  f"({r['fit_cpu_s']:5.2f} s CPU; {r['fit_wall_s'] / ref['fit_wall_s']:5.1f}x "
                  f"sklearn)  predict {r['predict_per_s']:7.0f}/s  dev acc "
                  f"{r['dev_accuracy']:.3f}  192-training grid on 2 workers ≈ {grid:4.1f} min  "
                  f"[{r['load']}]", flush=True)
    if args.minilm_steps:
        r = bench_minilm(train, args.minilm_steps)
        rows.append(r)
        print(f"minilm       batch {r['batch_size']}, length <= 64: {r['wall_s_per_step']:.2f} "
              f"s/step wall ({r['cpu_s_per_step']:.2f} s CPU; a 1-step fit incl. loading "
              f"{r['one_step_fit_wall_s']:.1f} s)  [{r['load']}]", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
