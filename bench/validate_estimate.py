"""Validate the quick learnability estimate against a full learnability grid (issue 9 §2).

Given a full-grid run directory (``robustlab learnability`` with the whole p-grid and exp 0–4)
and, optionally, an independent estimate run directory (other seeds, ``--estimate quick`` or
``--p-grid 0.02,1 --experiments learnability``), prints and writes (Markdown) the tables:

* **agreement**: per model and pooled, Spearman ρ (scipy) between the estimate (learnability at
  ``--estimate-p``, mean over seeds) and the full log-AUC — the *same-seed* estimate from the
  grid's own p cells (it shares their seed noise with the log-AUC, so it flatters) and the
  *independent-seed* estimate from the second run (the honest figure) — plus the test–retest ρ
  between the two estimates;
* **hypothesis tests**: ρ and p-value of each measure (log-AUC, same-seed and independent
  estimate) with robustness (A1 − A0) and with Δ (A2 − A1) of the full grid;
* **cost**: trainings and cell seconds of the quick design (every seed at p, the first seed at
  p = 1) against the full learnability grid and against the whole study (exp 0–4);
* **seed noise** at every p of the grid: RMS seed std, σ across pairs (Table 4), their ratio and
  the reliability of the 3-seed mean, with ρ(learnability@p, log-AUC) (same seeds) and, at the
  estimate run's p, ρ with independent seeds.

Results are read through the project's own readers (``RunStore.done_results`` via
:func:`robustlab.studies.learnability.estimate.run_results`, ``summarize_pairs``); nothing is
recomputed that the study stores.

    python bench/validate_estimate.py /work/grids/grid-full [--estimate-run /work/grids/grid-est]
        [--estimate-p 0.02] [--md FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.metrics.learnability import (
    DEFAULT_ESTIMATE_P,
    most_discriminating_p,
    seed_noise,
    spearman,
)
from robustlab.outputs import atomic_write, write_json
from robustlab.studies.learnability.estimate import estimate_pairs, run_results
from robustlab.studies.learnability.report import correlations, summarize_pairs

TARGET_RHO, TARGET_COST = 0.85, 1 / 6


def _mean(v: Any) -> float:
    if isinstance(v, dict):
        v = v.get("mean")
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.nan


def _rho(x: Sequence[float], y: Sequence[float], ci: bool = False) -> dict[str, Any]:
    """Spearman ρ and p (scipy); with ``ci`` a 95 % percentile bootstrap interval over pairs
    (scipy.stats.bootstrap, paired resampling, 2,000 resamples, fixed seed)."""
    out = spearman(x, y)
    if ci and out["rho"] is not None:
        from scipy import stats

        a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        keep = np.isfinite(a) & np.isfinite(b)
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resamples with a constant side give NaN
            res = stats.bootstrap((a[keep], b[keep]),
                                  lambda u, v: stats.spearmanr(u, v).statistic, paired=True,
                                  vectorized=False, n_resamples=2000, method="percentile",
                                  rng=np.random.default_rng(0))
        lo, hi = res.confidence_interval
        out["ci95"] = [float(lo), float(hi)] if math.isfinite(lo) and math.isfinite(hi) else None
    return out


def _f(v: Any, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and not math.isfinite(v)) else \
        f"{v:+.{digits}f}" if isinstance(v, float) and v < 0 else f"{v:.{digits}f}"


def _rp(s: dict[str, Any]) -> str:
    if s.get("rho") is None:
        return f"– (n={s.get('n', 0)})"
    ci = s.get("ci95")
    return f"{s['rho']:+.3f}" + (f" [{ci[0]:+.2f}, {ci[1]:+.2f}]" if ci else "") + \
        f" (p={s['p_value']:.2g})"


def _md(head: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


def _trainings(results: list[dict[str, Any]]) -> int:
    """Trainings of a study: one per learnability / augmentation cell, one clean model per
    (model, seed) shared by exp 0 and 1."""
    n = sum(1 for r in results if r.get("experiment") in ("learnability", "augmentation"))
    clean = {(r["model"], r["seed"]) for r in results
             if r.get("experiment") in ("standard", "robustness")}
    return n + len(clean)


def _seconds(results: list[dict[str, Any]]) -> float:
    return float(sum(_mean(r.get("seconds")) for r in results
                     if math.isfinite(_mean(r.get("seconds")))))


def _cost(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Trainings, summed cell seconds and summed training seconds (inside fit) of cells."""
    # (exp 0 and 1 share a clean model: the cell that reused it has train_seconds 0)
    return {"trainings": _trainings(results), "seconds": _seconds(results),
            "train_seconds": float(sum(_mean(r.get("train_seconds")) for r in results
                                       if math.isfinite(_mean(r.get("train_seconds")))))}


def _design_cells(results: list[dict[str, Any]], est: dict[tuple[str, str], dict[str, Any]],
                  p: float) -> list[dict[str, Any]]:
    """The cells of the quick design that ``estimate_pairs`` used: every seed at p, the check
    seed at p = 1."""
    out = []
    for r in results:
        e = est.get((r.get("model"), r.get("perturbation")))
        if e is None or r.get("experiment") != "learnability":
            continue
        if math.isclose(float(r["p"]), p) and r["seed"] in e["seeds"] or \
                math.isclose(float(r["p"]), 1.0) and r["seed"] == e.get("check_seed"):
            out.append(r)
    return out


def _offset_share(m: np.ndarray, models: list[str]) -> float | None:
    """Share of the seed variance (pairs × seeds matrix ``m``, rows labelled by ``models``) that
    is a per-seed level shift common to all perturbations of a model (a two-way decomposition
    without interaction): such a shift moves every cell of a seed together and leaves the
    ranking of a model's perturbations unchanged."""
    tot = inter = 0.0
    for model in dict.fromkeys(models):
        rows = m[[i for i, x in enumerate(models) if x == model]]
        rows = rows[np.isfinite(rows).all(axis=1)]
        if rows.shape[0] < 2 or rows.shape[1] < 2:
            continue
        resid = rows - rows.mean(axis=1, keepdims=True)
        tot += float((resid ** 2).sum())
        inter += float(((resid - resid.mean(axis=0)) ** 2).sum())
    return 1.0 - inter / tot if tot > 0 else None


def _seed_matrix(results: list[dict[str, Any]], p: float,
                 pairs: list[tuple[str, str]]) -> np.ndarray:
    seeds = sorted({r["seed"] for r in results if r.get("experiment") == "learnability"})
    m = np.full((len(pairs), len(seeds)), np.nan)
    for r in results:
        if r.get("experiment") != "learnability" or not math.isclose(float(r["p"]), p):
            continue
        key = (r["model"], r["perturbation"])
        if key in pairs:
            m[pairs.index(key), seeds.index(r["seed"])] = _mean(r.get("learnability_acc"))
    return m


def validate(full_dir: Path, est_dir: Path | None, p: float) -> dict[str, Any]:
    """Every figure of the validation as a JSON-able dict (``render`` turns it into Markdown)."""
    info, full = run_results(full_dir)
    grid = [float(x) for x in info.config.get("p_grid", [])]
    if len(grid) < 3 or not any(math.isclose(p, g) for g in grid):
        sys.exit(f"error: {full_dir} is not a full grid containing p={p:g} (p-grid {grid})")
    pairs = summarize_pairs(full, grid)
    corr = correlations(pairs, grid)
    same = {(r["model"], r["perturbation"]): r for r in estimate_pairs(full, p)}
    indep: dict[tuple[str, str], dict[str, Any]] = {}
    est_results: list[dict[str, Any]] = []
    est_info = None
    if est_dir is not None:
        est_info, est_results = run_results(est_dir)
        indep = {(r["model"], r["perturbation"]): r for r in estimate_pairs(est_results, p)}
        overlap = ({r["seed"] for r in est_results} & {r["seed"] for r in full})
        if overlap:
            print(f"note: the estimate run shares seeds {sorted(overlap)} with the full grid: "
                  "its estimate is not independent", file=sys.stderr)
    keys = [(r["model"], r["perturbation"]) for r in pairs]
    models = list(dict.fromkeys(k[0] for k in keys))
    by_pair = {(r["model"], r["perturbation"]): r for r in pairs}

    def col(sel: list[tuple[str, str]], what: str) -> list[float]:
        if what == "auc":
            return [_mean(by_pair[k].get("avg_learnability")) for k in sel]
        if what in ("robustness", "delta"):
            return [_mean(by_pair[k].get(what)) for k in sel]
        src = same if what.startswith("same") else indep
        field = "learnability_estimate_area" if what.endswith("_area") else \
            "learnability_estimate"
        return [_mean((src.get(k) or {}).get(field)) for k in sel]

    agreement, tests = [], []
    for group in [*models, "pooled"]:
        sel = keys if group == "pooled" else [k for k in keys if k[0] == group]
        auc = col(sel, "auc")
        row = {"group": group, "n": len(sel),
               "same_vs_auc": _rho(col(sel, "same"), auc, ci=True),
               "indep_vs_auc": _rho(col(sel, "indep"), auc, ci=True) if indep else None,
               "retest": _rho(col(sel, "same"), col(sel, "indep")) if indep else None,
               "same_area_vs_auc": _rho(col(sel, "same_area"), auc, ci=True),
               "indep_area_vs_auc": _rho(col(sel, "indep_area"), auc, ci=True) if indep else None,
               "noise_at_p": seed_noise(_seed_matrix(full, p, sel))}
        agreement.append(row)
        t = {"group": group}
        for what in ("auc", "same", "indep", "same_area", "indep_area"):
            if what.startswith("indep") and not indep:
                continue
            for against in ("robustness", "delta"):
                t[f"{what}_vs_{against}"] = _rho(col(sel, what), col(sel, against))
        tests.append(t)
    # cost: the quick design (every seed at p + the first seed at 1, as estimate_pairs counts)
    learn_full = [r for r in full if r.get("experiment") == "learnability"]
    cost = {"full_learnability": _cost(learn_full), "full_study": _cost(full),
            "estimate_same_seed": _cost(_design_cells(full, same, p))}
    if indep:
        cost["estimate_independent"] = _cost(_design_cells(est_results, indep, p))
        rob_exps = [r for r in full if r.get("experiment") != "learnability"]
        cost["estimate_plus_exp012"] = {
            k: cost["estimate_independent"][k] + _cost(rob_exps)[k]
            for k in ("trainings", "seconds", "train_seconds")}
    for name, src in (("estimate_same_seed", same), ("estimate_independent", indep)):
        if src:  # the same accounting as the estimate's own cost (summary.json)
            assert cost[name]["trainings"] == sum(r["cost"]["trainings"] for r in src.values())
    # seed noise and agreement at every p (Table 4 with the noise beside it)
    noise = []
    auc_all = col(keys, "auc")
    for g in grid:
        m = _seed_matrix(full, g, keys)
        row = {"p": g, **seed_noise(m), "offset_share": _offset_share(m, [k[0] for k in keys]),
               "rho_with_auc": _rho(np.nanmean(m, axis=1) if m.size else [], auc_all)}
        if est_results and any(math.isclose(float(r["p"]), g) for r in est_results
                               if r.get("experiment") == "learnability"):
            mi = _seed_matrix(est_results, g, keys)
            row["rho_indep_with_auc"] = _rho(np.nanmean(mi, axis=1), auc_all)
            row["seed_std_indep"] = seed_noise(mi)["seed_std"]
        noise.append(row)
    not_learnable = [f"{k[0]}/{k[1]}" for k, r in (indep or same).items()
                     if r.get("learnable") is False]
    return {"full_run": str(full_dir), "estimate_run": str(est_dir) if est_dir else None,
            "estimate_p": p, "p_grid": grid,
            "full_seeds": info.config.get("seeds"),
            "estimate_seeds": est_info.config.get("seeds") if est_info else None,
            "steps": info.config.get("steps"), "models": models,
            "n_pairs": len(keys), "agreement": agreement, "tests": tests, "cost": cost,
            "seed_noise": noise,
            "most_discriminating_p": most_discriminating_p(corr.get("at_p") or {}),
            "not_learnable_at_1": not_learnable}


def render(v: dict[str, Any]) -> str:
    p = format(v["estimate_p"], "g")
    out = [f"Full grid: `{v['full_run']}` (seeds {v['full_seeds']}, p-grid "
           f"{', '.join(format(x, 'g') for x in v['p_grid'])}, {v['steps']} steps); "
           + (f"independent estimate: `{v['estimate_run']}` (seeds {v['estimate_seeds']})."
              if v["estimate_run"] else "no independent estimate run.")
           + f" Estimate = learnability@{p} (mean over seeds); {v['n_pairs']} pairs.", ""]
    indep = v["estimate_run"] is not None
    head = ["models", "n", f"ρ(est@{p} same seeds, log-AUC)"]
    if indep:
        head += [f"ρ(est@{p} independent seeds, log-AUC)", "ρ(est seeds A, est seeds B)"]
    head += [f"seed std @{p} / σ pairs", f"reliability of the {p} mean"]
    rows = []
    for a in v["agreement"]:
        r = [a["group"], a["n"], _rp(a["same_vs_auc"])]
        if indep:
            r += [_rp(a["indep_vs_auc"]), _rp(a["retest"])]
        nz = a["noise_at_p"]
        r += [_f(nz["noise_ratio"], 2), _f(nz["reliability"], 2)]
        rows.append(r)
    out += ["**Agreement with the full log-AUC** (Spearman ρ, scipy; [95 % bootstrap interval "
            "over pairs]; p-value)", "",
            _md(head, rows), ""]
    head = ["models", "ρ(area same seeds, log-AUC)"] + (
        ["ρ(area independent seeds, log-AUC)"] if indep else [])
    rows = [[a["group"], _rp(a["same_area_vs_auc"])]
            + ([_rp(a["indep_area_vs_auc"])] if indep else []) for a in v["agreement"]]
    out += [f"Variant from the same cells: `learnability_estimate_area`, the trapezoidal area "
            f"against log10 p of (0.001 → 0, {p} → estimate, 1 → learnability@1 of the first "
            "seed)", "", _md(head, rows), ""]
    head = ["models", "measure", "ρ with robustness", "ρ with Δ"]
    rows = []
    names = {"auc": "log-AUC (full grid)", "same": f"estimate@{p}, same seeds",
             "indep": f"estimate@{p}, independent seeds",
             "same_area": "three-point area, same seeds",
             "indep_area": "three-point area, independent seeds"}
    for t in v["tests"]:
        for what, name in names.items():
            if f"{what}_vs_robustness" in t:
                rows.append([t["group"], name, _rp(t[f"{what}_vs_robustness"]),
                             _rp(t[f"{what}_vs_delta"])])
    out += ["**Hypothesis tests** (robustness and Δ from the full grid)", "", _md(head, rows), ""]
    c = v["cost"]
    fl, fs = c["full_learnability"], c["full_study"]
    head = ["what", "trainings", "cell s", "training s",
            "÷ full learnability grid: trainings / cell s / training s",
            "÷ full study: trainings / cell s / training s"]

    def ratio(a: dict[str, Any], b: dict[str, Any]) -> str:
        return (f"{a['trainings'] / b['trainings']:.3f} / {a['seconds'] / b['seconds']:.3f} / "
                f"{a['train_seconds'] / b['train_seconds']:.3f}")

    rows = [[name, x["trainings"], f"{x['seconds']:.0f}", f"{x['train_seconds']:.0f}",
             ratio(x, fl), ratio(x, fs)]
            for name, x in (("full learnability grid (exp 3/4)", fl), ("full study (exp 0–4)", fs),
                            ("quick estimate, same seeds (grid's own cells)",
                             c["estimate_same_seed"]),
                            ("quick estimate, independent run", c.get("estimate_independent")),
                            ("quick estimate + exp 0–2 (for ρ with robustness/Δ)",
                             c.get("estimate_plus_exp012"))) if x]
    out += ["**Cost** (quick design: every seed at p, the first seed at p = 1; cell s = sum of "
            "the cells' own wall time, training s = the part inside fit)", "",
            _md(head, rows), ""]
    head = ["p", "RMS seed std", "σ across pairs", "seed std / σ", "reliability (3-seed mean)",
            "per-seed offset share", "ρ(learn.@p, log-AUC) same seeds"]
    if indep:
        head += ["ρ … independent seeds"]
    rows = []
    for n in v["seed_noise"]:
        r = [format(n["p"], "g"), _f(n["seed_std"]), _f(n["sigma_pairs"]), _f(n["noise_ratio"], 2),
             _f(n["reliability"], 2), _f(n["offset_share"], 2), _rp(n["rho_with_auc"])]
        if indep:
            r.append(_rp(n["rho_indep_with_auc"]) if "rho_indep_with_auc" in n else "")
        rows.append(r)
    md = v.get("most_discriminating_p") or {}
    out += ["**Seed noise at each p** (pooled pairs; per-seed offset share: the part of the seed "
            "variance that shifts all perturbations of a model together, which leaves their ranks "
            "unchanged)", "", _md(head, rows), ""]
    if md:
        out.append(f"Largest σ across pairs in the full grid: p = {md['p']:g} (σ = "
                   f"{md['sigma']:.3f}).")
    best = next(a for a in v["agreement"] if a["group"] == "pooled")
    headline = best["indep_vs_auc"] if indep else best["same_vs_auc"]
    cost = (c.get("estimate_independent") or c["estimate_same_seed"])
    frac = cost["trainings"] / fl["trainings"]
    if headline.get("rho") is not None:
        met = headline["rho"] >= TARGET_RHO and frac <= TARGET_COST + 1e-9
        out.append(f"Target (ρ ≥ {TARGET_RHO} with the full log-AUC at ≤ 1/6 of the trainings): "
                   f"{'MET' if met else 'MISSED'} — pooled ρ = {headline['rho']:.3f} "
                   f"({'independent' if indep else 'same'} seeds) at {frac:.3f} of the "
                   f"learnability trainings"
                   + ("" if met else f" (ρ short by {max(0.0, TARGET_RHO - headline['rho']):.3f})")
                   + ".")
    if v["not_learnable_at_1"]:
        out.append(f"Failed the p = 1 check (learnability@1 < 0.1): "
                   f"{', '.join(v['not_learnable_at_1'])}.")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("full_run", type=Path, help="run directory of the full grid")
    ap.add_argument("--estimate-run", type=Path, help="independent-seed estimate run directory")
    ap.add_argument("--estimate-p", type=float, default=DEFAULT_ESTIMATE_P)
    ap.add_argument("--md", type=Path, help="write the Markdown tables here")
    ap.add_argument("--json", type=Path, help="write every figure as JSON here")
    args = ap.parse_args(argv)
    v = validate(args.full_run, args.estimate_run, args.estimate_p)
    text = render(v)
    print(text)
    if args.md:
        atomic_write(args.md, lambda f: f.write(text))
    if args.json:
        write_json(args.json, v)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
