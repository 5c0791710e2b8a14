"""The quick learnability estimate: learnability at one p instead of the whole curve.

Paper 000 Table 4 finds that learnability at a single small p ranks model-perturbation pairs
almost as the log-AUC over the whole grid does. Its σ across pairs peaks at p = 0.01; p = 0.02
is the default because there (accuracy-based) learnability@p has its highest Spearman ρ with
average learnability (0.816), robustness (−0.636) and post-augmentation Δ (0.743). On SST-2
with robustlab's CPU models learnability@0.02 ranks pairs like the log-AUC with ρ = 0.871
(the SST-2 grid of docs/learnability.md). ``robustlab learnability --estimate quick`` therefore trains
only the cells at ``estimate_p`` (every seed) plus one cell at p = 1 (the first seed: is the
perturbation learnable at all?), i.e. 4 trainings per pair at 3 seeds instead of 24.

The estimate is reported as an *estimate*, never as the average learnability: its own block
``summary.json["estimate"]`` with its own signature (``learnability_estimate|measure:…``), its own
per-pair field ``learnability_estimate``, its cost (trainings and cell seconds), its own CSV and
PNG (``learnability_estimate.csv`` / ``.png``) and its own line in stdout. A full grid gets the
same block computed from its own cells at ``estimate_p`` (so the two are comparable), plus the
p with the largest σ across pairs. :func:`correlate_estimate` is ``robustlab correlate`` over
estimate runs (alone or joined with robustness runs of the same pairs).
"""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.metrics.learnability import (
    CHECK_P,
    DEFAULT_ESTIMATE_P,
    LEARNABLE_MIN,
    most_discriminating_p,
    seed_noise,
    seed_spread,
    spearman,
)
from robustlab.outputs import atomic_write, save_figure, write_json
from robustlab.signature import make_signature
from robustlab.studies.learnability.advice import advice_text, advise
from robustlab.studies.learnability.summary import csv_text, summarize_pairs
from robustlab.textfmt import align, echo

MEASURE = "learnability@p"
ESTIMATE_FILES = ("learnability_estimate.csv", "learnability_estimate.png")


def settings(config: dict[str, Any]) -> tuple[str, float]:
    """(mode, estimate_p) of a study's stored configuration (full grids written before the
    estimate existed have neither key: full, the default p)."""
    return (str(config.get("estimate", "full")),
            float(config.get("estimate_p", DEFAULT_ESTIMATE_P)))


def is_quick(config: dict[str, Any]) -> bool:
    return settings(config)[0] == "quick"


def _same_p(a: Any, b: float) -> bool:
    return a is not None and math.isclose(float(a), b, rel_tol=1e-9, abs_tol=1e-12)


def _num(v: Any) -> float:
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else math.nan


def estimate_pairs(results: list[dict[str, Any]], estimate_p: float) -> list[dict[str, Any]]:
    """Per model×perturbation estimate from finished learnability cells.

    ``learnability_estimate`` = mean ± sample std over seeds of the accuracy-based learnability
    at ``estimate_p`` (``learnability_prob_estimate`` the probability-based one); the check is
    the p = 1 cell of the smallest seed that has one (``learnability_at_1``, ``learnable`` =
    at least :data:`LEARNABLE_MIN`). ``cost`` counts the trainings used and their cell seconds.
    Pairs without a cell at ``estimate_p`` are left out.
    """
    at_p: dict[tuple[str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    at_1: dict[tuple[str, str], dict[int, dict[str, Any]]] = defaultdict(dict)
    order: list[tuple[str, str]] = []
    for r in results:
        if r.get("experiment") != "learnability":
            continue
        key = (r["model"], r["perturbation"])
        if key not in order:
            order.append(key)
        if _same_p(r.get("p"), float(estimate_p)):
            at_p[key][int(r["seed"])] = r
        if _same_p(r.get("p"), CHECK_P):
            at_1[key][int(r["seed"])] = r
    out = []
    for key in order:
        cells = at_p.get(key)
        if not cells:
            continue
        seeds = sorted(cells)
        rec: dict[str, Any] = {"model": key[0], "perturbation": key[1], "seeds": seeds}
        rec["learnability_estimate"] = seed_spread([_num(cells[s].get("learnability_acc"))
                                                    for s in seeds])
        rec["learnability_prob_estimate"] = seed_spread(
            [_num(cells[s].get("learnability_prob")) for s in seeds])
        used = [cells[s] for s in seeds]
        check = at_1.get(key) or {}
        if check and not math.isclose(float(estimate_p), CHECK_P):
            seed = min(check)
            v = _num(check[seed].get("learnability_acc"))
            rec["check_seed"], rec["learnability_at_1"] = seed, None if math.isnan(v) else v
            used.append(check[seed])
        elif math.isclose(float(estimate_p), CHECK_P):
            v = rec["learnability_estimate"]["mean"]
            rec["check_seed"], rec["learnability_at_1"] = seeds[0], v
        else:
            rec["check_seed"], rec["learnability_at_1"] = None, None
        a1 = rec["learnability_at_1"]
        rec["learnable"] = None if a1 is None else bool(a1 >= LEARNABLE_MIN)
        rec["learnability_estimate_area"] = estimate_area(
            float(estimate_p), rec["learnability_estimate"]["mean"], a1)
        noop = [_num(cells[s].get("noop_rate")) for s in seeds]
        rec["noop_rate"] = seed_spread(noop)["mean"]
        rec["cost"] = {"trainings": len(used),
                       "seconds": float(sum(_num(c.get("seconds")) for c in used
                                            if math.isfinite(_num(c.get("seconds")))))}
        out.append(rec)
    return out


def estimate_area(p: float, at_p: float | None, at_1: float | None) -> float | None:
    """Area under the three-point curve (p_min → 0, p → learnability@p, 1 → learnability@1)
    against log10 p (trapezoidal, as the log-AUC): a coarse stand-in for the log-AUC from the
    estimate's own two cells. p_min is the paper grid's smallest p (0.001), where nothing is
    learnable in the papers' figures; the value is *not* the log-AUC (max 2.35 at p = 0.02)."""
    from robustlab.metrics.learnability import DEFAULT_P_GRID, log_auc

    if at_p is None or at_1 is None or not p < CHECK_P:
        return None
    p_min = DEFAULT_P_GRID[0]
    if p <= p_min:
        return log_auc([p, CHECK_P], [at_p, at_1])
    return log_auc([p_min, p, CHECK_P], [0.0, at_p, at_1])


def _mean(v: Any) -> float:
    if isinstance(v, dict):
        v = v.get("mean")
    return _num(v)


def _learn_cost(results: list[dict[str, Any]]) -> dict[str, Any]:
    learn = [r for r in results if r.get("experiment") == "learnability"]
    return {"trainings": len(learn),
            "seconds": float(sum(_num(r.get("seconds")) for r in learn
                                 if math.isfinite(_num(r.get("seconds")))))}


def summarize_estimate(results: list[dict[str, Any]], config: dict[str, Any],
                       pairs: list[dict[str, Any]] | None = None,
                       corr: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The ``summary.json["estimate"]`` block (docs/learnability.md, "Quick estimate").

    ``pairs`` / ``corr`` are the study's own per-pair records and correlations (robustness, Δ,
    average learnability, Table 4); they are joined, not recomputed, and each pair record gets
    ``learnability_estimate`` (what ``robustlab report`` and its augmentation advice read). None
    when the run has no learnability cell at ``estimate_p``.
    """
    mode, p = settings(config)
    est = estimate_pairs(results, p)
    if not est:
        return None
    by_pair = {(r["model"], r["perturbation"]): r for r in pairs or []}
    for r in est:
        src = by_pair.get((r["model"], r["perturbation"])) or {}
        if src:  # the per-pair record carries the estimate under its own name (never avg_*)
            src["learnability_estimate"] = r["learnability_estimate"]
        r["robustness"] = src.get("robustness")
        r["delta"] = src.get("delta")
        if (src.get("avg_learnability") or {}).get("mean") is not None:  # (None when quick)
            r["avg_learnability"] = src["avg_learnability"]
    block: dict[str, Any] = {
        "measure": MEASURE, "mode": mode, "estimate_p": p, "check_p": CHECK_P,
        "learnable_min": LEARNABLE_MIN,
        "signature": make_signature(
            "learnability_estimate", measure=f"learnability@{p:g}", check="p1-first-seed",
            models=",".join(config.get("models", [])),
            perts=len(config.get("perturbations", [])),
            seeds=",".join(str(s) for s in config.get("seeds", [])), steps=config.get("steps")),
        "cost": {"trainings": sum(r["cost"]["trainings"] for r in est),
                 "seconds": float(sum(r["cost"]["seconds"] for r in est))},
        "pairs": est,
    }
    block["correlations"] = estimate_correlations(est)
    matrix = _seed_matrix(est)
    block["seed_noise"] = seed_noise(matrix) if matrix.size else None
    if mode == "full" and len(config.get("p_grid", [])) >= 3:  # a curve, not two points
        block["full_cost"] = _learn_cost(results)
        table = (corr or {}).get("at_p") or {}
        if sum(1 for k in table if k != "avg") >= 3:
            block["most_discriminating_p"] = most_discriminating_p(table)
    return block


def _seed_matrix(est: list[dict[str, Any]]) -> np.ndarray:
    seeds = sorted({s for r in est for s in r["seeds"]})
    m = np.full((len(est), len(seeds)), np.nan)
    for i, r in enumerate(est):
        vals = (r["learnability_estimate"] or {}).get("values") or []
        for s, v in zip(r["seeds"], vals, strict=True):
            m[i, seeds.index(s)] = math.nan if v is None else v
    return m


def estimate_correlations(est: list[dict[str, Any]]) -> dict[str, Any]:
    """Spearman ρ (scipy) of the estimate with robustness, Δ and (full grids) the log-AUC."""
    x = [_mean(r.get("learnability_estimate")) for r in est]
    out = {"estimate_vs_robustness": spearman(x, [_mean(r.get("robustness")) for r in est]),
           "estimate_vs_delta": spearman(x, [_mean(r.get("delta")) for r in est])}
    if any(r.get("avg_learnability") for r in est):
        out["estimate_vs_avg_learnability"] = spearman(
            x, [_mean(r.get("avg_learnability")) for r in est])
    return out


def blank_quick_average(pairs: list[dict[str, Any]], config: dict[str, Any]) -> None:
    """A quick estimate has no curve: drop the (meaningless) two-point log-AUC from its pairs so
    that nothing downstream can mistake it for the average learnability."""
    if not is_quick(config):
        return
    for r in pairs:
        for k in ("avg_learnability", "avg_learnability_prob"):
            if k in r:
                r[k] = None


# ---- files and text -------------------------------------------------------------------------------


def _fmt(v: Any) -> str:
    if isinstance(v, dict):
        if v.get("mean") is None:
            return "-"
        sd = v.get("std")
        return f"{v['mean']:.3f}" + (f"±{sd:.3f}" if v.get("n", 0) > 1 and sd is not None else "")
    return "-" if v is None or not math.isfinite(float(v)) else f"{float(v):.3f}"


def estimate_table(block: dict[str, Any]) -> str:
    p = format(block["estimate_p"], "g")
    head = ["model", "perturbation", f"estimate: learnability@{p}", "learnability@1",
            "learnable", "3-point area", "robustness A1-A0", "gain Δ A2-A1"]
    rows = [[r["model"], r["perturbation"], _fmt(r.get("learnability_estimate")),
             _fmt(r.get("learnability_at_1")),
             {True: "yes", False: "NO", None: "?"}[r.get("learnable")],
             _fmt(r.get("learnability_estimate_area")),
             _fmt(r.get("robustness")), _fmt(r.get("delta"))] for r in block["pairs"]]
    return align(head, rows, rule=True)


def estimate_text(block: dict[str, Any] | None, *, table: bool = True) -> str:
    """What stdout says about the estimate (a separate section: never the log-AUC); ``table``
    False leaves out the per-pair table (a full grid already printed its own)."""
    if not block:
        return ""
    p = format(block["estimate_p"], "g")
    cost = block["cost"]
    what = "runs merged cell by cell" if block["mode"] == "merged" else f"{block['mode']} run"
    lines = [f"learnability ESTIMATE ({what}): learnability at p={p} over seeds, "
             f"p=1 check on the first seed; {cost['trainings']} trainings, "
             f"{cost['seconds']:.0f} s of cells"]
    if block.get("full_cost"):
        fc = block["full_cost"]
        lines[0] += (f" (the full grid: {fc['trainings']} trainings, {fc['seconds']:.0f} s)")
    if table:
        lines.append(estimate_table(block))
    for name, label in (("estimate_vs_robustness", "robustness"), ("estimate_vs_delta", "Δ"),
                        ("estimate_vs_avg_learnability", "average learnability (log-AUC)")):
        c = (block.get("correlations") or {}).get(name)
        if c is None:
            continue
        if c.get("rho") is None and not c.get("n"):
            lines.append(f"ρ(estimate, {label}): not measured in these runs (exp 0–2: add them, "
                         "or pass a `robustlab robustness` run of the same pairs to correlate)")
        elif c.get("rho") is None:
            lines.append(f"ρ(estimate, {label}): undefined (n={c.get('n', 0)})")
        else:
            lines.append(f"ρ(estimate, {label}) = {c['rho']:+.3f}, p = {c['p_value']:.3g} "
                         f"(n={c['n']})")
    md = block.get("most_discriminating_p")
    if md:
        lines.append(f"largest σ across pairs in this grid: p={md['p']:g} (σ={md['sigma']:.3f}); "
                     f"the estimate uses p={p}")
    not_learn = [f"{r['model']}/{r['perturbation']}" for r in block["pairs"]
                 if r.get("learnable") is False]
    if not_learn:
        lines.append(f"not learnable even at p=1 (learnability@1 < {block['learnable_min']}): "
                     + ", ".join(not_learn))
    return "\n".join(lines)


def write_estimate_files(out_dir: Path, block: dict[str, Any] | None,
                         plots: bool = True) -> list[str]:
    """``learnability_estimate.csv`` and (with ``plots``) ``learnability_estimate.png``."""
    if not block:
        return []

    header = ["model", "perturbation", "learnability_estimate", "learnability_estimate_std",
              "learnability_prob_estimate", "learnability_at_1", "learnable",
              "learnability_estimate_area", "robustness", "delta", "trainings", "seconds"]
    rows = [[r["model"], r["perturbation"], _mean(r.get("learnability_estimate")),
             (r.get("learnability_estimate") or {}).get("std"),
             _mean(r.get("learnability_prob_estimate")), r.get("learnability_at_1"),
             r.get("learnable"), r.get("learnability_estimate_area"), _mean(r.get("robustness")),
             _mean(r.get("delta")),
             r["cost"]["trainings"], r["cost"]["seconds"]] for r in block["pairs"]]
    atomic_write(Path(out_dir) / ESTIMATE_FILES[0], lambda f: f.write(csv_text(header, rows)))
    files = [ESTIMATE_FILES[0]]
    if plots:
        _plot(Path(out_dir) / ESTIMATE_FILES[1], block)
        files.append(ESTIMATE_FILES[1])
    return files


def _plot(path: Path, block: dict[str, Any]) -> None:
    """The estimate's PNG, drawn by the one plotting module (:mod:`robustlab.plots`)."""
    from robustlab.plots import learnability_estimate_figure

    save_figure(learnability_estimate_figure(block), path, dpi=110)


# ---- robustlab correlate over estimate runs -------------------------------------------------------


def run_results(run_dir: Path, *, results: bool = True) -> tuple[Any, list[dict[str, Any]]]:
    """(run info, finished cells' results) of a learnability run directory, via the RunStore
    (``results=False``: the info only)."""
    from robustlab.errors import InputError
    from robustlab.runs.store import RunStore, StoreError, is_run_dir

    if not is_run_dir(run_dir):
        raise InputError(f"{run_dir}: not a run directory (no store.sqlite); pass a study's --out")
    try:
        with RunStore(run_dir, readonly=True) as store:
            info = store.run_info()
            done = [r for _, r in store.done_results()] if results else []
            skipped = store.skipped_line()
        if skipped:
            echo(f"robustlab correlate: warning: {skipped}", file=sys.stderr)
    except StoreError as exc:
        raise InputError(str(exc)) from None
    if info is None or info.kind not in ("learnability", "robustness", "cent"):
        raise InputError(f"{run_dir}: a {info.kind if info else 'empty'} run, not a learnability "
                         "study")
    return info, done


def merged_results(run_dirs: list[Path]) -> tuple[list[dict[str, Any]], list[Any], int]:
    """Finished results of several runs, one per cell (model, perturbation, experiment, p,
    seed); a cell present in two runs (the same deterministic cell) is kept once. Returns the
    results, the run infos and the number of duplicates dropped."""
    seen: set[tuple[Any, ...]] = set()
    out, infos, dup = [], [], 0
    for d in run_dirs:
        info, results = run_results(Path(d))
        infos.append(info)
        for r in results:
            key = (r.get("model"), r.get("perturbation"), r.get("experiment"),
                   None if r.get("p") is None else float(r["p"]), r.get("seed"))
            if key in seen:
                dup += 1
                continue
            seen.add(key)
            out.append(r)
    return out, infos, dup


def correlate_estimate(run_dirs: list[Path], *, estimate_p: float | None = None,
                       json_path: str | None = None) -> int:
    """``robustlab correlate --measure estimate``: the hypothesis tests with the estimate.

    Results of all runs are merged by cell, so an estimate run (``--experiments learnability``)
    can be paired with a ``robustlab robustness`` run of the same models and perturbations.
    """
    from robustlab.errors import InputError

    results, infos, dup = merged_results(run_dirs)
    ps = {settings(i.config)[1] for i in infos if i.kind != "robustness"}
    p = float(estimate_p) if estimate_p is not None else (ps.pop() if len(ps) == 1 else None)
    if p is None:
        raise InputError(f"the runs estimate at different p {sorted(ps)}; choose one with "
                         "--estimate-p")
    pairs = summarize_pairs(results, [])
    full = [i for i in infos if settings(i.config)[0] == "full" and i.kind != "robustness"]
    grids = {tuple(float(x) for x in i.config.get("p_grid", [])) for i in full}
    grids = {g for g in grids if len(g) >= 3}  # a curve, not two points
    if len(grids) == 1:  # the log-AUC of the full grid, to compare the estimate with
        grid = list(next(iter(grids)))
        by_key = {(r["model"], r["perturbation"]): r
                  for r in summarize_pairs(results, grid)}
        for r in pairs:
            r["avg_learnability"] = (by_key.get((r["model"], r["perturbation"])) or {}).get(
                "avg_learnability")
    mode = ("merged" if len(infos) > 1 else
            "full" if full and len(full[0].config.get("p_grid", [])) >= 3 else "quick")
    config = {"estimate": mode, "estimate_p": p,
              "models": list(dict.fromkeys(m for i in infos for m in i.config.get("models", []))),
              "perturbations": list(dict.fromkeys(x for i in infos
                                                  for x in i.config.get("perturbations", []))),
              "p_grid": list(next(iter(grids))) if grids else [],
              "seeds": sorted({int(r["seed"]) for r in results if r.get("seed") is not None}),
              "steps": next(iter({i.config.get("steps") for i in infos}), None)}
    block = summarize_estimate(results, config, pairs, None)
    if block is None:
        raise InputError(f"no learnability cell at p={p:g} in {', '.join(map(str, run_dirs))}; "
                         "run `robustlab learnability --estimate quick` or pass --estimate-p")
    echo(f"measure: learnability ESTIMATE = learnability at p={p:g} (mean over seeds), not the "
         f"log-AUC average learnability")
    if dup:
        echo(f"({dup} cells present in more than one run were counted once)")
    echo(estimate_text(block))
    # the augmentation advice, ranked by the estimate where exp 2 did not measure Δ
    adv = advise(block["pairs"])
    echo()
    echo(advice_text(adv))
    if json_path:
        write_json(json_path, {"run_dirs": [str(d) for d in run_dirs], "measure": MEASURE,
                               "estimate": block, "advice": adv}, user=True)
    return 0
