"""Benchmark: SO-Beam / SO-Enum / random baseline on SST-2 dev against small trained models.

For every (model, source, recipe): attack success rate, mean ℓ0, seconds and model queries per
example, and where the time goes — model forward passes (the goal function's choke point),
masked-LM forward passes (the source), and everything else (TextAttack bookkeeping, search).
As a library reference it also times TextAttack's own PWWS (a first-order WordNet attack that
runs offline) on the same examples and prints the seconds-per-example ratio.

    .venv/bin/python bench/bench_attacks.py --quick          # 50 sentences, textrnn + bow
    .venv/bin/python bench/bench_attacks.py                  # 872 sentences, four models

Models are trained here with robustlab's registry (``--steps`` optimiser steps on SST-2 train)
and cached under ``--work``. Needs ../shared/data (and ../shared/models/minilm-mlm for mlm).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def sst(split: str) -> list[tuple[str, int]]:
    from robustlab.resources import shared_data_dir

    path = shared_data_dir() / "sst" / f"stsa.binary.{split}"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        label, _, text = line.partition(" ")
        out.append((text, int(label)))
    return out


def trained(family: str, work: Path, steps: int):
    from robustlab.models.registry import load_model, make_model

    d = work / f"{family}-{steps}"
    if (d / "robustlab_model.json").exists():
        return load_model(str(d))
    train = sst("train")
    t0 = time.perf_counter()
    m = make_model(family).fit([t for t, _ in train], [y for _, y in train], steps=steps)
    m.save(d)
    print(f"trained {family} ({steps} steps) in {time.perf_counter() - t0:.0f}s", flush=True)
    return m


def accuracy(model, data) -> float:
    import numpy as np

    pred = model.predict([t for t, _ in data])
    return float(np.mean(pred == np.array([y for _, y in data])))


def bench_one(model, recipe: str, source, examples, pairs: str) -> dict:
    from robustlab.integrations.victims import textattack_wrapper
    from robustlab.studies.second_order.study import example_record, recipe_module

    attack = recipe_module(recipe).build(textattack_wrapper(model), source=source, pairs=pairs)
    lm0 = getattr(source, "lm_seconds", 0.0)
    recs, t_all = [], time.perf_counter()
    for i, (text, y) in enumerate(examples):
        t0 = time.perf_counter()
        res = attack.attack(text, y)
        recs.append(example_record(res, attack, i, time.perf_counter() - t0))
    total = time.perf_counter() - t_all
    goal = attack.goal_function
    lm = getattr(source, "lm_seconds", 0.0) - lm0
    att = [r for r in recs if r["result_type"] != "skipped"]
    succ = [r for r in att if r["result_type"] == "successful"]
    n = len(recs)
    return {
        "recipe": recipe, "source": source.name, "n": n, "attacked": len(att),
        "skipped": n - len(att),
        "success_rate": len(succ) / len(att) if att else None,
        "mean_l0": sum(r["l0"] for r in succ) / len(succ) if succ else None,
        "x0_vulnerable": sum(r["l0"] == 0 for r in succ),
        "s_per_example": total / n, "queries_per_example": goal.total_model_queries / n,
        "model_share": goal.total_model_seconds / total, "mlm_share": lm / total,
        "other_share": 1 - (goal.total_model_seconds + lm) / total,
    }


def bench_pwws(model, examples) -> float:
    """Seconds per example of TextAttack's stock PWWS on the same model (library reference)."""
    from textattack.attack_recipes import PWWSRen2019

    from robustlab.integrations.victims import textattack_wrapper

    attack = PWWSRen2019.build(textattack_wrapper(model))
    t0 = time.perf_counter()
    for text, y in examples:
        attack.attack(text, y)
    return (time.perf_counter() - t0) / len(examples)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="50 sentences, textrnn and bow")
    ap.add_argument("--n", type=int, default=None, help="number of dev sentences (default 872)")
    ap.add_argument("--models", default=None, help="comma list (default textrnn,cnn,bow,lstm)")
    ap.add_argument("--recipes", default="so-beam,so-enum,so-random")
    ap.add_argument("--sources", default="table,mlm", help="table | wordnet | mlm, comma list")
    ap.add_argument("--steps", type=int, default=400, help="training steps per model")
    ap.add_argument("--pwws", type=int, default=20, help="examples for the PWWS reference (0: off)")
    ap.add_argument("--work", default="/tmp/robustlab-bench", help="model cache directory")
    ap.add_argument("--json", default=None, help="also write the rows to this JSON file")
    args = ap.parse_args(argv)
    from robustlab.resources import minilm_mlm_path, shared_data_dir
    from robustlab.studies.second_order.neighbourhood import (
        MaskedLMSource,
        TableSource,
        WordNetSource,
    )

    n = args.n or (50 if args.quick else 872)
    families = (args.models or ("textrnn,bow" if args.quick else "textrnn,cnn,bow,lstm")).split(",")
    dev = sst("dev")[:n]
    table = shared_data_dir() / "synonyms" / "counterfitted_neighbors.json"
    work = Path(args.work)
    print(f"load: {os.getloadavg()}; {n} SST-2 dev sentences; patch pairs: {table.name}",
          flush=True)
    rows = []
    for fam in families:
        model = trained(fam, work, args.steps)
        print(f"\n{fam}: dev accuracy {accuracy(model, dev):.3f}", flush=True)
        for sname in args.sources.split(","):
            for recipe in args.recipes.split(","):
                # a fresh source per recipe: no recipe profits from another's cache
                if sname == "table":
                    source = TableSource(table)
                elif sname == "wordnet":
                    source = WordNetSource()
                else:
                    source = MaskedLMSource(str(minilm_mlm_path()))
                    source._load()  # loading is not part of the per-example time
                sub = dev if not (recipe == "so-enum" and sname == "mlm") else dev[: max(5, n // 10)]
                r = bench_one(model, recipe, source, sub, str(table))
                r["model"] = fam
                rows.append(r)
                sr = "n/a" if r["success_rate"] is None else f"{r['success_rate']:.1%}"
                l0 = "n/a" if r["mean_l0"] is None else f"{r['mean_l0']:.2f}"
                print(f"  {recipe:9s} {r['source']:32s} n={r['n']:4d} success {sr:>6s} "
                      f"l0 {l0:>4s} (l0=0: {r['x0_vulnerable']:2d})  {r['s_per_example']:.3f} s/ex  "
                      f"{r['queries_per_example']:8.0f} q/ex  model {r['model_share']:.0%}  "
                      f"mlm {r['mlm_share']:.0%}  other {r['other_share']:.0%}", flush=True)
        if args.pwws:
            t = bench_pwws(model, dev[: args.pwws])
            beam = [r for r in rows if r["model"] == fam and r["recipe"] == "so-beam"
                    and r["source"].startswith("table")]
            ratio = f"; SO-Beam(table)/PWWS = {beam[0]['s_per_example'] / t:.2f}" if beam else ""
            print(f"  TextAttack PWWS (reference, {args.pwws} ex): {t:.3f} s/ex{ratio}",
                  flush=True)
    print(f"\nload at end: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
