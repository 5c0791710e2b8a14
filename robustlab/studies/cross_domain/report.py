"""Final files of a cross-domain run: results.jsonl, summary.json, CSV tables, γ-curve PNG.

Written at the end, atomically (``robustlab.outputs``), from the cells in the store, so a
resumed or partially failed run produces the same files from whatever is done.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.metrics import consistency as cons
from robustlab.metrics import ranking
from robustlab.outputs import atomic_write, write_json, write_jsonl
from robustlab.runs import payloads
from robustlab.runs.store import RunStore
from robustlab.signature import make_signature
from robustlab.studies.cross_domain.consistency import (
    ConsistencyConfig,
    common_sigma,
    consistency_tables,
)


def _accuracy_metrics(results: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, float]]:
    """The "accuracy" scores to rank by: corpus metrics for MT, else the mean score."""
    out: dict[str, dict[str, float]] = {}
    for r in results:
        corpus = r.get("corpus") or {}
        for m in ("bleu", "chrf", "ter"):
            if m in corpus:
                out.setdefault(m, {})[r["system"]] = float(corpus[m])
    if not out:
        out["mean"] = {r["system"]: float(r["mean"]) for r in results}
    return out


def rank_and_agree(results: Sequence[Mapping[str, Any]],
                   human: Mapping[str, float] | None) -> dict[str, Any]:
    """``rankings`` {by_bleu|by_mean, by_cov, by_gamma, human} and ``agreement`` with human."""
    metrics = _accuracy_metrics(results)
    metrics["cov"] = {r["system"]: float(r["cov"]) for r in results}
    metrics["gamma"] = {r["system"]: float(r["gamma_auc"]) for r in results}
    ranks: dict[str, Any] = ranking.rankings(metrics)
    out: dict[str, Any] = {"rankings": ranks}
    if human:
        known = {r["system"] for r in results}
        h = {k: float(v) for k, v in human.items() if k in known}
        ranks["human"] = ranking.rank(h, True)
        out["agreement"] = ranking.agreement(metrics, h)
        out["human_missing"] = sorted(known - set(h))
    return out


def write_outputs(store: RunStore, out_dir: Path, *, seconds: float | None = None,
                  plots: bool = True, human: Mapping[str, float] | None = None,
                  extra: Mapping[str, Any] | None = None, signature: str | None = None
                  ) -> dict[str, Any]:
    info = store.run_info()
    if info is None:
        raise ValueError(f"{out_dir}: empty run store")
    cells = store.cells()
    done = [c for c in cells if c.status == "done" and c.result is not None]
    failed = [c.key for c in cells if c.status != "done"]
    results = common_sigma_grid([c.result for c in done], info.config)
    write_jsonl(out_dir / "results.jsonl", results)
    files = _write_tables(out_dir, results, human)
    if plots and results:
        files.append(_plot_curves(out_dir, results, info.config))
    cfg = info.config
    summary: dict[str, Any] = {
        "kind": info.kind, "complete": not failed, "failed_cells": failed, "config": cfg,
        "signature": signature or make_signature(
            info.kind, task=cfg.get("task"), score=cfg.get("score"), systems=len(cells),
            bags=f"{cfg.get('n_bags')}x{cfg.get('fraction')}", rs=cfg.get("seed")),
        "versions": info.versions, "files": files, "seconds": seconds,
        "systems": results, **rank_and_agree(results, human), **(extra or {}),
    }
    write_json(out_dir / "summary.json", summary)
    return summary


def common_sigma_grid(results: list[dict[str, Any]], cfg: Mapping[str, Any]
                      ) -> list[dict[str, Any]]:
    """Classifier cells are scored one system at a time, so on the σ grid each used its own
    σ_ref; recompute their consistency tables (deterministic: same bags, same seed) on one
    shared σ_ref, the median spread, so their γ curves share the ε axis. Other runs unchanged."""
    if cfg.get("eps_grid") != "sigma" or cfg.get("task") != "clf" or not results:
        return results
    cc = ConsistencyConfig(eps=tuple(float(e) for e in cfg.get("eps") or ()),
                           grid_max=int(cfg.get("grid_max", 100)),
                           n_bags=int(cfg.get("n_bags", cons.N_BAGS)),
                           fraction=float(cfg.get("fraction", cons.BAG_FRACTION)),
                           seed=int(cfg.get("seed", 0)), eps_grid="sigma")
    ref = common_sigma([list(r["per_domain"].values()) for r in results])
    out = []
    for r in results:
        tables = consistency_tables(np.array([list(r["per_domain"].values())]),
                                    list(r["per_domain"]), cc, sigma_ref=ref)[0]
        out.append({**r, **tables})
    return out


def _csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    def w(f: io.TextIOBase) -> None:
        wr = csv.writer(f, lineterminator="\n")
        wr.writerow(header)
        wr.writerows([[_fmt(v) for v in row] for row in rows])

    atomic_write(path, w)
    return path.name


def _fmt(v: Any) -> Any:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else v


#: what every cross-domain cell's result holds (runs of every version): what the summaries,
#: tables and rankings index (see docs/run-directory.md)
payloads.register_result("cross-domain", {
    "system": str, "per_domain": {str: payloads.NUMBER}, "mean": payloads.NUMBER,
    "variance": payloads.NUMBER, "cov": payloads.NUMBER, "gamma": {str: payloads.NUMBER},
    "leave_one_out": [{"left_out": str, "mean": payloads.NUMBER,
                       "variance": payloads.NUMBER, "cov": payloads.NUMBER}]})


def _write_tables(out: Path, results: Sequence[Mapping[str, Any]],
                  human: Mapping[str, float] | None) -> list[str]:
    if not results:
        return []
    eps = sorted(results[0]["gamma"], key=float)
    acc = _accuracy_metrics(results)
    head = ["system", *acc, "mean", "variance", "cov", *[f"gamma@{e}" for e in eps],
            "gamma_auc", "bag_mean", "bag_variance", "bag_cov", "design_mean",
            "design_variance", "design_cov", "human"]
    rows = []
    for r in results:
        s = r["system"]
        rows.append([s, *[acc[m][s] for m in acc], r["mean"], r["variance"], r["cov"],
                     *[r["gamma"][e] for e in eps], r["gamma_auc"],
                     *[r[b][k] for b in ("bagging", "design_bagging")
                       for k in ("mean", "variance", "cov")],
                     None if not human else human.get(s)])
    files = [_csv(out / "systems.csv", head, rows)]
    rows = []
    for r in results:
        det = r.get("per_domain_detail") or {}
        for d, v in r["per_domain"].items():
            x = det.get(d, {})
            rows.append([r["system"], d, x.get("n"), v, x.get("mean"), x.get("variance"),
                         x.get("cov")])
    files.append(_csv(out / "per_domain.csv",
                      ["system", "domain", "n", "score", "mean", "variance", "cov"], rows))
    rows = []
    for r in results:
        for method, table in (("none", {"mean": r["mean"], "variance": r["variance"],
                                        "cov": r["cov"], "leave_one_out": r["leave_one_out"]}),
                              ("bagging", r["bagging"]), ("design", r["design_bagging"])):
            rows.append([r["system"], method, "", table["mean"], table["variance"], table["cov"]])
            for row in table["leave_one_out"]:
                rows.append([r["system"], method, row["left_out"], row["mean"], row["variance"],
                             row["cov"]])
    files.append(_csv(out / "leave_one_out.csv",
                      ["system", "resampling", "left_out", "mean", "variance", "cov"], rows))
    curves = np.array([r["gamma_curve"] for r in results])
    norm = cons.normalize_curves(curves)
    axis = _eps_axis(results) or list(range(1, curves.shape[1] + 1))
    rows = [[r["system"], axis[j], curves[i, j], norm[i, j]]
            for i, r in enumerate(results) for j in range(curves.shape[1])]
    files.append(_csv(out / "gamma_curves.csv", ["system", "eps", "gamma", "gamma_normalized"],
                      rows))
    ra = rank_and_agree(results, human)
    rk = ra["rankings"]
    n = max(len(v) for v in rk.values())
    files.append(_csv(out / "rankings.csv", ["rank", *rk],
                      [[i + 1, *[v[i] if i < len(v) else None for v in rk.values()]]
                       for i in range(n)]))
    if "agreement" in ra:
        files.append(_csv(out / "agreement.csv",
                          ["metric", "pairwise", "kendall_tau", "p_value", "n_systems"],
                          [[m, a["pairwise"], a["kendall_tau"], a["p_value"], a["n_systems"]]
                           for m, a in ra["agreement"].items()]))
    return files


def _plot_curves(out: Path, results: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any]) -> str:
    """γ(ε) of every system on one PNG: raw (left) and jointly normalized (right)."""
    from robustlab import plots

    path = out / "gamma_curves.png"
    plots.save_png(plots.gamma_curves_figure(results, cfg, _eps_axis(results)), path)
    return path.name


def _eps_axis(results: Sequence[Mapping[str, Any]]) -> list[float] | None:
    """The ε values of the γ curves when the run recorded them (σ-scaled grid), else None
    (the fixed grid ε = 1..N)."""
    eps = results[0].get("gamma_grid") if results else None
    return [float(e) for e in eps] if eps else None
