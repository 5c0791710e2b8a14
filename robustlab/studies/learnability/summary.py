"""The learnability study's per-pair summary and its Spearman tests, as pure functions of the
stored results: shared by the outputs (:mod:`.report`) and the quick estimate (:mod:`.estimate`),
which is why they live below both."""

from __future__ import annotations

import csv
import io
import math
from collections import defaultdict
from typing import Any

import numpy as np

from robustlab.metrics.learnability import at_p_table, log_auc, seed_spread
from robustlab.metrics.ranking import spearman_test


def mean_value(v: dict[str, Any] | None) -> float:
    return math.nan if not v or v.get("mean") is None else float(v["mean"])


def summarize_pairs(results: list[dict[str, Any]], p_grid: list[float]) -> list[dict[str, Any]]:
    """Per model×perturbation records (docs/run-directory.md, ``summary.json["pairs"]``)."""
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    order: list[tuple[str, str]] = []
    for r in results:
        key = (r["model"], r["perturbation"])
        if key not in by_pair:
            order.append(key)
        by_pair[key].append(r)
    pairs = []
    for model, pert in order:
        rows = by_pair[(model, pert)]
        seeds = sorted({r["seed"] for r in rows})
        exp = defaultdict(dict)  # experiment -> seed -> row (learnability: (seed, p) -> row)
        for r in rows:
            k = (r["seed"], float(r["p"])) if r["experiment"] == "learnability" else r["seed"]
            exp[r["experiment"]][k] = r
        rec: dict[str, Any] = {"model": model, "perturbation": pert, "seeds": seeds}
        learn = exp.get("learnability", {})
        if learn:
            for variant, field in (("", "learnability_acc"), ("_prob", "learnability_prob")):
                avg = []
                for s in seeds:
                    curve = [learn.get((s, float(p)), {}).get(field) for p in p_grid]
                    ok = len(p_grid) >= 2 and all(v is not None and math.isfinite(v)
                                                  for v in curve)
                    avg.append(log_auc(p_grid, curve) if ok else math.nan)
                rec[f"avg_learnability{variant}"] = seed_spread(avg)
                rec[f"learnability{variant}_at"] = {
                    format(p, "g"): _spread([learn.get((s, float(p)), {}).get(field)
                                             for s in seeds]) for p in p_grid}
            rec["noop_rate"] = _spread([r.get("noop_rate") for r in learn.values()])["mean"]
        a0 = {s: r["accuracy"] for s, r in exp.get("standard", {}).items()}
        a1 = {s: r["accuracy"] for s, r in exp.get("robustness", {}).items()}
        a1_clean = {s: r.get("accuracy_clean", a0.get(s))
                    for s, r in exp.get("robustness", {}).items()}
        a2 = {s: r["accuracy"] for s, r in exp.get("augmentation", {}).items()}
        rec["accuracy_standard"] = _spread([a0.get(s) for s in seeds]) if a0 else None
        rec["accuracy_robustness"] = _spread([a1.get(s) for s in seeds]) if a1 else None
        rec["accuracy_augmentation"] = _spread([a2.get(s) for s in seeds]) if a2 else None
        rec["robustness"] = _spread([_sub(a1.get(s), a1_clean.get(s)) for s in seeds]) \
            if a1 else None
        rec["delta"] = _spread([_sub(a2.get(s), a1.get(s)) for s in seeds]) if a2 and a1 else None
        rob = next(iter(exp.get("robustness", {}).values()), None)
        if rob is not None:  # its CheckList test: INV, or DIR / changed without an A1
            from robustlab.metrics.checklist_tests import header

            rec["test"] = header(rob.get("test", "INV"), rob.get("expectation"))
        pairs.append(rec)
    return pairs


def pair_name(r: dict[str, Any], name: str | None = None) -> str:
    """A pair's perturbation as tables name it, tagged with its CheckList test where it is not
    INV (``negation [DIR flip]``: its robustness is not A1 − A0, the label no longer holds)."""
    test = r.get("test")
    name = str(r.get("perturbation")) if name is None else name
    return name if test in (None, "INV") else f"{name} [{test}]"


def _sub(a: float | None, b: float | None) -> float:
    return math.nan if a is None or b is None else float(a) - float(b)


def _spread(values: list[Any]) -> dict[str, Any]:
    return seed_spread([math.nan if v is None else float(v) for v in values])


def correlations(pairs: list[dict[str, Any]], p_grid: list[float]) -> dict[str, Any]:
    """Paper 000 Table 3 (ρ of average learnability vs robustness / Δ) and Table 4 (at p)."""
    avg = [mean_value(r.get("avg_learnability")) for r in pairs]
    rob = [mean_value(r.get("robustness")) for r in pairs]
    delta = [mean_value(r.get("delta")) for r in pairs]
    out: dict[str, Any] = {  # exact / permutation p at small n (ranking.spearman_test)
        "learnability_vs_robustness": spearman_test(avg, rob),
        "learnability_vs_delta": spearman_test(avg, delta),
        "robustness_vs_delta": spearman_test(rob, delta),
    }
    have = [r for r in pairs if r.get("learnability_at")]
    if have and len(p_grid) >= 1:
        for variant in ("", "_prob"):
            at = {p: [mean_value(r.get(f"learnability{variant}_at", {}).get(format(p, "g")))
                      for r in pairs] for p in p_grid}
            avg_v = [mean_value(r.get(f"avg_learnability{variant}")) for r in pairs]
            table = at_p_table(at, avg_v, rob, delta)
            for p, row in table.items():  # honest p at small n, as Table 3 (same ρ)
                for other, key in ((avg_v, ""), (rob, "_robustness"), (delta, "_delta")):
                    if f"p_value{key}" in row:
                        test = spearman_test(at[p], other)
                        row[f"p_value{key}"] = test["p_value"]
                        row.setdefault("p_method", test["p_method"])
            finite = [v for v in avg_v if math.isfinite(v)]
            table_out = {format(p, "g"): row for p, row in table.items()}
            table_out["avg"] = {"sigma": float(np.std(finite)) if finite else None,
                                "rho_with_avg": 1.0 if len(finite) >= 3 else None,
                                "p_value": None,
                                **_prefixed(spearman_test(avg_v, rob), "robustness"),
                                **_prefixed(spearman_test(avg_v, delta), "delta")}
            out["at_p" if not variant else "at_p_prob"] = table_out
    return out


def _prefixed(s: dict[str, Any], name: str) -> dict[str, Any]:
    return {f"rho_with_{name}": s["rho"], f"p_value_{name}": s["p_value"]}


def csv_text(header: list[str], rows: list[list[Any]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        w.writerow(["" if v is None or (isinstance(v, float) and math.isnan(v))
                    else (f"{v:.4f}" if isinstance(v, float) else v) for v in r])
    return buf.getvalue()
