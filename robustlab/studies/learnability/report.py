"""The learnability study's outputs: summary.json, results.jsonl, CSV tables and PNG plots.

Reads only finished cells from the run store, so it works on complete runs, on runs with failed
cells (``complete: false``) and, via ``robustlab correlate``, on any finished run directory.
Figures follow paper 000: learnability-vs-p curves (Figure 4), the model×perturbation table of
average learnability (Table 2), learnability vs robustness / Δ scatter with Spearman ρ
(Figures 1 and 5), and the σ / ρ table of learnability@p (Table 4). Everything is written
atomically through :mod:`robustlab.outputs`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.errors import InputError
from robustlab.metrics.learnability import log_auc
from robustlab.outputs import atomic_write, write_json, write_jsonl
from robustlab.perturbations.registry import display_label
from robustlab.runs.store import RunStore
from robustlab.studies.learnability.estimate import (
    blank_quick_average,
    is_quick,
    summarize_estimate,
    write_estimate_files,
)
from robustlab.studies.learnability.summary import (
    correlations,
    csv_text,
    mean_value,
    pair_name,
    summarize_pairs,
)
from robustlab.textfmt import align, echo, spread_text

RESULT_KEYS = ("model", "perturbation", "seed", "experiment", "p", "accuracy", "accuracy_clean",
               "accuracy_perturbed", "robustness", "learnability_acc", "learnability_prob",
               "n_train", "n_test", "n_treated", "noop_rate", "seconds", "train_seconds")


# ---- files --------------------------------------------------------------------------------------


def table2(pairs: list[dict[str, Any]], field: str = "avg_learnability"
           ) -> tuple[list[str], list[str], np.ndarray]:
    """Perturbations (sorted by the average over models, ascending like the paper) × models."""
    models = list(dict.fromkeys(r["model"] for r in pairs))
    perts = list(dict.fromkeys(r["perturbation"] for r in pairs))
    mat = np.full((len(perts), len(models)), np.nan)
    for r in pairs:
        mat[perts.index(r["perturbation"]), models.index(r["model"])] = mean_value(r.get(field))
    with np.errstate(all="ignore"):
        avg = np.array([np.nanmean(row) if np.isfinite(row).any() else np.nan for row in mat])
    order = np.argsort(np.where(np.isfinite(avg), avg, np.inf), kind="stable")
    return [perts[i] for i in order], models, mat[order]


def write_outputs(store: RunStore, out_dir: Path, *, seconds: float | None = None,
                  plots: bool = True) -> dict[str, Any]:
    """Write results.jsonl, summary.json, CSV tables and PNG plots for the run in ``store``.

    The learnability estimate (``summary["estimate"]``, its CSV/PNG) comes from
    :mod:`robustlab.studies.learnability.estimate`; a quick-estimate run gets no log-AUC figures.
    """
    info = store.run_info()
    if info is None:
        raise ValueError(f"{out_dir}: empty run store")
    config = info.config
    cells = store.cells()
    done = [c for c in cells if c.status == "done" and c.result is not None]
    failed = [c.key for c in cells if c.status != "done"]
    results = [c.result for c in done]
    p_grid = [float(p) for p in config.get("p_grid", [])]
    write_jsonl(out_dir / "results.jsonl", results)
    pairs = summarize_pairs(results, p_grid)
    blank_quick_average(pairs, config)  # a quick estimate has no log-AUC (learnability_estimate)
    corr = correlations(pairs, p_grid)
    estimate = summarize_estimate(results, config, pairs, corr)
    files: list[str] = []
    files += _write_tables(out_dir, pairs, p_grid, corr)
    if plots and pairs and not is_quick(config):
        files += _write_plots(out_dir, pairs, results, p_grid, corr)
    files += write_estimate_files(out_dir, estimate, plots)
    from robustlab.runs.predictions import write_failure_report

    files += write_failure_report(store, out_dir)  # CheckList-style failing examples
    # cells skipped because their stored data is damaged make the run incomplete, by name
    failed += [k for k in store.damaged if k not in failed]
    summary = {
        "kind": info.kind, "complete": not failed, "failed_cells": failed,
        "config": config, "signature": study_signature(info.kind, config),
        "versions": info.versions, "files": files, "seconds": seconds,
        "n_cells": len(cells), "n_done": len(done),
        "pairs": pairs, "correlations": corr, "estimate": estimate,
    }
    write_json(out_dir / "summary.json", summary)
    return summary


def study_signature(kind: str, config: dict[str, Any]) -> str:
    """The signature of the study whose stored configuration is ``config``: built from the
    configuration's own fields (:meth:`robustlab.runs.study.StudyConfig.signature`)."""
    from robustlab.runs.inputs import split_config
    from robustlab.studies.learnability.config import LearnabilityStudy

    own, _ = split_config(config)
    try:
        return LearnabilityStudy.from_dict(own).signature()
    except InputError:  # a run whose data or models are gone: the same fields, unchecked
        try:
            return LearnabilityStudy(**{k: tuple(v) if isinstance(v, list) else v
                                        for k, v in own.items()}).signature()
        except TypeError:  # not a configuration this version knows
            return f"{kind}|unknown"


def _write_tables(out_dir: Path, pairs: list[dict[str, Any]], p_grid: list[float],
                  corr: dict[str, Any]) -> list[str]:
    files = []
    header = ["model", "perturbation", "avg_learnability", "avg_learnability_std",
              "avg_learnability_prob", "robustness", "robustness_std", "delta", "delta_std",
              "accuracy_standard", "accuracy_robustness", "accuracy_augmentation", "noop_rate"]
    header += [f"learnability@{format(p, 'g')}" for p in p_grid]
    rows = []
    for r in pairs:
        row = [r["model"], r["perturbation"], mean_value(r.get("avg_learnability")),
               (r.get("avg_learnability") or {}).get("std"), mean_value(r.get("avg_learnability_prob")),
               mean_value(r.get("robustness")), (r.get("robustness") or {}).get("std"),
               mean_value(r.get("delta")), (r.get("delta") or {}).get("std"),
               mean_value(r.get("accuracy_standard")), mean_value(r.get("accuracy_robustness")),
               mean_value(r.get("accuracy_augmentation")), r.get("noop_rate")]
        row += [mean_value((r.get("learnability_at") or {}).get(format(p, "g"))) for p in p_grid]
        rows.append(row)
    atomic_write(out_dir / "pairs.csv", lambda f: f.write(csv_text(header, rows)))
    files.append("pairs.csv")
    if any(r.get("avg_learnability") for r in pairs):
        perts, models, mat = table2(pairs)
        body = [[display_label(p), *mat[i].tolist(), float(np.nanmean(mat[i])) if np.isfinite(mat[i]).any()
                 else None] for i, p in enumerate(perts)]
        atomic_write(out_dir / "learnability_table.csv",
                     lambda f: f.write(csv_text(["perturbation", *models, "average"], body)))
        files.append("learnability_table.csv")
    if corr.get("at_p"):
        keys = list(corr["at_p"])
        body = [[k, corr["at_p"][k].get("sigma"), corr["at_p"][k].get("rho_with_avg"),
                 corr["at_p"][k].get("rho_with_robustness"), corr["at_p"][k].get("rho_with_delta")]
                for k in keys]
        atomic_write(out_dir / "learnability_at_p.csv", lambda f: f.write(csv_text(
            ["p", "sigma", "rho_with_avg", "rho_with_robustness", "rho_with_delta"], body)))
        files.append("learnability_at_p.csv")
    return files


def _write_plots(out_dir: Path, pairs: list[dict[str, Any]], results: list[dict[str, Any]],
                 p_grid: list[float], corr: dict[str, Any]) -> list[str]:
    """learnability_curves.png, learnability_table.png, learnability_vs_robustness.png (drawn by
    :mod:`robustlab.plots`, the one plotting module)."""
    from robustlab import plots

    files = []
    if any(r.get("learnability_at") for r in pairs) and p_grid:
        plots.save_png(plots.learnability_curves_figure(pairs, p_grid),
                       out_dir / "learnability_curves.png")
        files.append("learnability_curves.png")
        perts, ms, mat = table2(pairs)
        vmax = log_auc(p_grid, [1.0] * len(p_grid)) if len(p_grid) >= 2 else 1
        plots.save_png(plots.learnability_table_figure(perts, ms, mat, vmax),
                       out_dir / "learnability_table.png")
        files.append("learnability_table.png")
    if any(r.get("robustness") for r in pairs) and any(r.get("avg_learnability") for r in pairs):
        plots.save_png(plots.learnability_scatter_figure(pairs, corr),
                       out_dir / "learnability_vs_robustness.png")
        files.append("learnability_vs_robustness.png")
    return files


def results_table(pairs: list[dict[str, Any]]) -> str:
    """The per-pair table printed on stdout at the end of a run."""
    def fmt(v: dict[str, Any] | None) -> str:
        return spread_text(v, plain="-")

    head = ["model", "perturbation [test]", "learnability", "robustness A1-A0 (INV)",
            "gain Δ A2-A1",
            "clean acc. A0", "no-op rate"]
    rows = [[r["model"], pair_name(r, display_label(r["perturbation"])),
             fmt(r.get("avg_learnability")),
             fmt(r.get("robustness")),
             fmt(r.get("delta")), fmt(r.get("accuracy_standard")),
             "-" if r.get("noop_rate") is None else f"{r['noop_rate']:.2f}"] for r in pairs]
    table = align(head, rows, rule=True)
    spread = "; x±y: mean ± standard deviation over seeds" if "±" in table else ""
    return f"{table}\n{TABLE_LEGEND}{spread}"


#: printed under :func:`results_table`: what each column is, in words (and what x±y is, when a
#: value has a spread: one seed prints none)
TABLE_LEGEND = ("learnability: average over p (log10-AUC, at most 3); A0/A1/A2: accuracy "
                "clean / perturbed test /\nperturbed test after augmented training")


def undertrained_text(pairs: list[dict[str, Any]]) -> str:
    """One warning line per seed whose clean accuracy is far below its model's other seeds
    (:func:`robustlab.studies.learnability.advice.undertrained_seeds`); '' when none."""
    from robustlab.studies.learnability.advice import UNDERTRAINED_MARGIN, undertrained_seeds

    return "\n".join(
        f"WARNING {m} seed {s}: clean accuracy A0 {a0:.3f} is more than "
        f"{UNDERTRAINED_MARGIN:.2f} below the median of its other seeds ({med:.3f}); that model "
        "probably under-trained and is included in the means above (more --steps, or leave the "
        "seed out with --seeds)"
        for (m, s), (a0, med) in sorted(undertrained_seeds(pairs).items(), key=str))


def correlations_text(corr: dict[str, Any]) -> str:
    out = []
    for name in ("learnability_vs_robustness", "learnability_vs_delta"):
        c = corr.get(name) or {}
        if c.get("rho") is None:
            out.append(f"{name}: ρ undefined (n={c.get('n', 0)}; needs ≥ 3 pairs that vary)")
        else:
            method = c.get("p_method") or "asymptotic"
            out.append(f"{name}: ρ = {c['rho']:+.3f}, p = {c['p_value']:.3g} ({method} p, "
                       f"n={c['n']})")
    return "\n".join(out)


def chance_text(pairs: list[dict[str, Any]], n_classes: int | None = None) -> str:
    """One warning line per model at chance accuracy ('' when none)."""
    from robustlab.studies.learnability.advice import chance_models

    return "\n".join(f"WARNING {m}: clean accuracy {a:.3f} is at chance level; its learnability "
                     "and robustness mean nothing (the model did not learn the task)"
                     for m, a in chance_models(pairs, n_classes).items())


def load_summary(run_dir: Path) -> dict[str, Any]:
    import json

    return json.loads((Path(run_dir) / "summary.json").read_text(encoding="utf-8"))


def correlate_dirs(run_dirs: list[Path], *, json_path: str | None = None,
                   write: bool = True) -> int:
    """``robustlab correlate``: Table 3/4 over the pairs of one or more finished run dirs."""
    from robustlab.errors import InputError
    from robustlab.runs.store import StoreError, is_run_dir

    pairs: list[dict[str, Any]] = []
    grids = set()
    for d in run_dirs:
        if not is_run_dir(d):
            raise InputError(f"{d}: not a run directory (no store.sqlite); pass a study's --out")
        try:
            store = RunStore(d, readonly=True)
            info = store.run_info()
        except StoreError as exc:
            raise InputError(str(exc)) from None
        if info is None or info.kind not in ("learnability", "robustness", "cent"):
            raise InputError(f"{d}: a {info.kind if info else 'empty'} run, not a learnability "
                             "study")
        grid = [float(p) for p in info.config.get("p_grid", [])]
        grids.add(tuple(grid))
        if write and len(run_dirs) == 1:
            summary = write_outputs(store, d)
            pairs = summary["pairs"]
        else:
            results = [c.result for c in store.cells("done") if c.result]
            pairs += summarize_pairs(results, grid)
        skipped = store.skipped_line()
        if skipped:
            echo(f"robustlab correlate: warning: {skipped}", file=sys.stderr)
        store.close()
    if len(grids) > 1:
        raise InputError(f"the runs use different p-grids {sorted(grids)}; average learnability "
                         "is only comparable over the same grid")
    grid = list(next(iter(grids)))
    corr = correlations(pairs, grid)
    echo(results_table(pairs))
    for warn in (chance_text(pairs), undertrained_text(pairs)):
        if warn:
            echo(warn)
    echo()
    echo(correlations_text(corr))
    if corr.get("at_p"):
        echo("\nlearnability@p (paper 000 Table 4): σ across pairs and Spearman ρ")
        echo(f"{'p':>6}  {'σ':>6}  {'ρ avg':>7}  {'ρ rob':>7}  {'ρ Δ':>7}")
        for p, row in corr["at_p"].items():
            cells = [row.get("sigma"), row.get("rho_with_avg"), row.get("rho_with_robustness"),
                     row.get("rho_with_delta")]
            echo(f"{p:>6}  " + "  ".join("      -" if v is None else f"{v:7.3f}" for v in cells))
    from robustlab.studies.learnability.advice import advice_text, advise

    adv = advise(pairs)
    echo()
    echo(advice_text(adv))
    if json_path:
        write_json(json_path, {"run_dirs": [str(d) for d in run_dirs], "pairs": pairs,
                               "correlations": corr, "advice": adv}, user=True)
    return 0
