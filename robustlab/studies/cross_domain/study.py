"""Cross-domain consistency studies (paper 004): MT systems scored with sacreBLEU, precomputed
score tables, and (in :mod:`robustlab.studies.cross_domain.clf`) classifiers across domains.

The flow follows sacreBLEU's "statistics first, resampling second" habit: every segment (or
domain) is scored once; the consistency tables (mean, variance, CoV, γ, leave-one-domain-out,
bagging and design bagging) are then recomputed from the stored score matrix, vectorised over
all systems at once, with the *same* bags for every system so systems are compared on paired
samples. Output: one run directory per docs/run-directory.md, kind ``cross-domain``, one cell
per system (key ``system=<name>``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.errors import InputError
from robustlab.metrics import consistency as cons

KIND = "cross-domain"
RESAMPLING = ("bagging", "design")


@dataclass
class ConsistencyConfig:
    """Options that determine the consistency figures (stored in the run config)."""

    eps: tuple[float, ...] = cons.DEFAULT_EPS
    grid_max: int = 100  # γ curve over ε = 1..grid_max (Algorithm 1)
    n_bags: int = cons.N_BAGS
    fraction: float = cons.BAG_FRACTION
    seed: int = 0
    eps_grid: str = "fixed"  # "sigma": ε in units of the score spread (cons.eps_grid); eps = t

    def grid(self) -> np.ndarray:
        return np.arange(1, int(self.grid_max) + 1, dtype=float)

    def validate(self) -> None:
        if self.n_bags < 1:
            raise InputError(f"--bags must be >= 1, got {self.n_bags}")
        if not 0 < self.fraction <= 1:
            raise InputError(f"--bag-fraction must be in (0, 1], got {self.fraction}")
        if self.grid_max < 1:
            raise InputError(f"--eps-max must be >= 1, got {self.grid_max}")
        if not self.eps or any(e <= 0 for e in self.eps):
            raise InputError(f"--eps values must be positive, got {list(self.eps)}")
        if self.eps_grid not in cons.EPS_GRIDS:
            raise InputError(f"--eps-grid: unknown {self.eps_grid!r}; choose from "
                             f"{', '.join(cons.EPS_GRIDS)}")


def check_domains(labels: Sequence[str], where: str) -> list[str]:
    """The distinct domains; fewer than two makes leave-one-domain-out impossible."""
    names = list(dict.fromkeys(labels))
    if len(names) < 2:
        raise InputError(f"{where}: only one domain ({names[0] if names else 'none'}); "
                         "leave-one-domain-out needs at least two domains. Give a domain file "
                         "with several labels")
    return names


def consistency_tables(X: np.ndarray, labels: Sequence[str], cfg: ConsistencyConfig,
                       sigma_ref: float | None = None) -> list[dict[str, Any]]:
    """Per system (row of ``X``): mean, variance, CoV, γ at ``cfg.eps``, γ-AUC and γ curve,
    leave-one-domain-out rows, and the same under bagging and design bagging. With
    ``cfg.eps_grid == "sigma"`` the ε grid is in units of σ_ref (``sigma_ref``, else the spread
    of ``X``) and ``cfg.eps`` are multiples of it."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    grid, grid_info = cons.eps_grid(X, cfg.eps_grid, grid_max=cfg.grid_max, sigma_ref=sigma_ref)
    scale = grid_info.get("sigma_ref", 1.0)  # σ grid: cfg.eps are multiples of σ_ref
    eps = np.asarray(cfg.eps, dtype=float) * scale
    names = {cons._key(e): cons._key(t) for e, t in zip(eps, cfg.eps, strict=True)}
    curves = cons.gamma_curve(X, grid)
    g = np.asarray(cons.gamma(X, eps))
    tables = {}
    for method in (None, *RESAMPLING):
        tables[method] = cons.leave_one_out(X, labels, resample=method, n_bags=cfg.n_bags,
                                            fraction=cfg.fraction, seed=cfg.seed, eps=eps)
    out = []
    for s in range(X.shape[0]):
        res: dict[str, Any] = {
            "n": int(X.shape[1]), "mean": float(cons.mean(X[s])),
            "variance": float(cons.variance(X[s])), "cov": float(cons.cov(X[s])),
            "gamma": {cons._key(e): float(g[s, j]) for j, e in enumerate(cfg.eps)},
            "gamma_auc": float(curves[s].mean()), "gamma_curve": curves[s].tolist(),
        }
        if cfg.eps_grid != "fixed":  # the ε values of the curve, and which grid it was
            res["gamma_grid"] = grid.tolist()
            res["eps_grid"] = grid_info
        for method, rows in tables.items():
            mine = [_pick(r, s) for r in rows]
            for r in mine:  # γ keyed like cfg.eps (multiples of σ_ref on the σ grid)
                if "gamma" in r:
                    r["gamma"] = {names.get(k, k): v for k, v in r["gamma"].items()}
            if method is None:
                res["leave_one_out"] = mine[1:]
            else:
                res["bagging" if method == "bagging" else "design_bagging"] = {
                    **{k: mine[0][k] for k in ("mean", "variance", "cov", "gamma")},
                    "leave_one_out": mine[1:]}
        out.append(res)
    return out


def _pick(row: dict[str, Any], s: int) -> dict[str, Any]:
    """Row s of a leave-one-out row computed over a system matrix."""
    def one(v: Any) -> Any:
        if isinstance(v, list):
            return v[s]
        if isinstance(v, dict):
            return {k: one(x) for k, x in v.items()}
        return v
    return {k: one(v) for k, v in row.items()}


# ---- MT ------------------------------------------------------------------------------------------


@dataclass
class MTStudy:
    """An MT cross-domain study; the data is read by :mod:`robustlab.data.mt`."""

    score: str = "bleu"  # the per-segment score the consistency metrics use
    metrics: tuple[str, ...] = ("bleu", "chrf")
    tokenize: str | None = None
    consistency: ConsistencyConfig = field(default_factory=ConsistencyConfig)

    def validate(self) -> None:
        from robustlab.metrics.mt import MT_METRICS

        bad = [m for m in self.metrics if m not in MT_METRICS]
        if bad:
            raise InputError(f"--metrics: unknown {bad}; choose from {', '.join(MT_METRICS)}")
        if self.score not in self.metrics:
            raise InputError(f"--score {self.score!r} must be one of --metrics "
                             f"({', '.join(self.metrics)})")
        self.consistency.validate()

    def config(self, data: Any) -> dict[str, Any]:
        from robustlab.signature import fingerprint

        return {"task": "mt", "score": self.score, "metrics": list(self.metrics),
                "tokenize": self.tokenize, **asdict(self.consistency),
                "eps": list(self.consistency.eps), "files": data.files,
                "systems": list(data.systems), "domains": data.domain_names(),
                "n_segments": data.n_segments,
                "data_fingerprint": fingerprint([data.refs, data.domains,
                                                 sorted(data.systems.items())]),
                "human": data.human}


def score_mt(study: MTStudy, data: Any) -> dict[str, Any]:
    """Score every system (one pass, shared references) and compute all tables, vectorised."""
    from robustlab.metrics.mt import MTScorer

    t0 = time.perf_counter()
    scorer = MTScorer(data.refs, study.metrics, tokenize=study.tokenize)
    scores = scorer.score_many(data.systems)
    t_score = time.perf_counter() - t0
    names = list(data.systems)
    X = np.stack([scores[n].segment[study.score] for n in names])
    labels = np.asarray(data.domains, dtype=object)
    doms = data.domain_names()
    tables = consistency_tables(X, data.domains, study.consistency)
    sigs = scorer.signatures()
    results = {}
    for i, name in enumerate(names):
        sc = scores[name]
        detail = {}
        for d in doms:
            idx = np.flatnonzero(labels == d)
            xd = X[i, idx]
            detail[d] = {"n": int(idx.size), "corpus": sc.corpus(scorer, idx),
                         "mean": float(xd.mean()), "variance": float(cons.variance(xd)),
                         "cov": float(cons.cov(xd))}
        corpus = {**sc.corpus(scorer), "signature": sigs}
        results[name] = {"system": name, "score": study.score,
                         "per_domain": {d: detail[d]["corpus"][study.score] for d in doms},
                         "per_domain_detail": detail, **tables[i], "corpus": corpus}
    return {"results": results, "segments": {n: scores[n].segment for n in names},
            "seconds_scoring": t_score, "seconds_tables": time.perf_counter() - t0 - t_score}


def run_mt(study: MTStudy, data: Any, out_dir: str | os.PathLike[str], *,
           command: str | None = None, progress: bool = False, plots: bool = True,
           origin: str | Mapping[str, str] = "", log: Callable[[str], None] | None = None
           ) -> dict[str, Any]:
    """Validate, score, store one cell per system and write the run directory.

    Every file of ``data.files`` is recorded in the run with its checksum
    (:mod:`robustlab.runs.inputs`); ``origin`` says where each came from (one option for all,
    or per ``files`` key), and ``log`` shows them before scoring."""
    t0 = time.perf_counter()
    study.validate()
    check_domains(data.domains, data.files.get("domains", "--domains"))
    computed = score_mt(study, data)
    results = computed["results"]
    segs = computed["segments"]
    labels = data.domains

    def cell_fn(kind: str, params: dict[str, Any]) -> Any:
        from robustlab.runs.executor import CellOutput

        name = params["system"]
        seg = segs[name]
        records = [{"segment": i + 1, "domain": labels[i],
                    **{m: float(v[i]) for m, v in seg.items()}} for i in range(len(labels))]
        return CellOutput(result=results[name], records=records,
                          signature=_signature(study.consistency, score=study.score,
                                               sacrebleu=results[name]["corpus"]["signature"]
                                               [study.score]))

    def where(role: str) -> str:
        if isinstance(origin, str):
            return origin or "files"
        return origin.get(role) or origin.get(role.split(":")[0]) or "files"

    return _run(study.config(data), list(results), cell_fn, out_dir, command=command,
                progress=progress, plots=plots, human=data.human, started=t0,
                extra={"seconds_scoring": computed["seconds_scoring"],
                       "seconds_tables": computed["seconds_tables"]},
                inputs=[(role, path, where(role)) for role, path in data.files.items()],
                log=log)


def _signature(cfg: ConsistencyConfig, **fields: Any) -> str:
    from robustlab.signature import make_signature

    return make_signature(KIND, **fields, eps=",".join(f"{e:g}" for e in cfg.eps),
                          bags=f"{cfg.n_bags}x{cfg.fraction:g}", rs=cfg.seed)


def _run(config: dict[str, Any], systems: list[str] | dict[str, dict[str, Any]], cell_fn: Any,
         out_dir: str | os.PathLike[str], *, command: str | None, progress: bool, plots: bool,
         human: Mapping[str, float] | None, extra: dict[str, Any] | None = None,
         executor: str = "sequential", workers: int = 1, started: float | None = None,
         inputs: Sequence[tuple[str, str | None, str]] = (),
         log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Register one cell per system (``systems``: names, or {name: cell params}), run them and
    write the final files. A rerun into the same directory resumes. ``started``: the
    ``perf_counter`` time the study began (scoring included), for ``summary["seconds"]``.
    ``inputs`` (``(role, value, origin)``) are recorded under ``config["inputs"]`` with their
    checksums, shown through ``log``, and compared when the run resumes."""
    from robustlab.runs import inputs as run_inputs
    from robustlab.runs.executor import run_cells
    from robustlab.runs.store import Cell, RunStore
    from robustlab.signature import versions
    from robustlab.studies.cross_domain.report import write_outputs

    t0 = time.perf_counter() if started is None else started
    params = systems if isinstance(systems, dict) else {s: {} for s in systems}
    cells = [Cell(key=f"system={s}", kind=KIND, params={"system": s, **p})
             for s, p in params.items()]
    if config.get("eps_grid") == "fixed":
        config = {k: v for k, v in config.items() if k != "eps_grid"}  # runs made before the option
    recorded = run_inputs.collect(inputs)
    run_inputs.announce(recorded, log)
    config = {**config, run_inputs.KEY: recorded}
    store = RunStore(Path(out_dir))
    try:
        store.init_run(KIND, f"cross-domain {config.get('task')}: {len(systems)} systems",
                       config, command=command, versions=versions())
        report = run_cells(store, cells, cell_fn, executor=executor, workers=workers,
                           progress=progress, desc=KIND)
        summary = write_outputs(store, store.run_dir, seconds=time.perf_counter() - t0,
                                plots=plots, human=human, extra=extra or {})
        store.set_run_status("done" if report.complete else "failed",
                             None if report.complete else
                             f"{report.total - report.done} cells not done; rerun to retry them")
    finally:
        store.close()
    return summary


# ---- precomputed score tables --------------------------------------------------------------------


def read_score_table(path: str | os.PathLike[str], score_column: str = "score",
                     system_column: str = "system", domain_column: str = "domain"
                     ) -> dict[str, tuple[np.ndarray, list[str]]]:
    """A long table (CSV/TSV/JSONL with a header): one row per sample or per domain, columns
    system, domain, score → {system: (scores, domain labels)}."""
    from robustlab.data.files import read_rows

    table = read_rows(path, header=True)
    for col in (system_column, domain_column, score_column):
        if col not in table.columns:
            raise InputError(f"{path}: no {col!r} column (columns: {', '.join(table.columns)}); "
                             "expected a header with system, domain and score columns "
                             "(--system-column/--domain-column/--score-column rename them)")
    out: dict[str, tuple[list[float], list[str]]] = {}
    for row, line in zip(table.rows, table.lines, strict=True):
        try:
            v = float(row[score_column])
        except (TypeError, ValueError):
            raise InputError(f"{path}: line {line}: score {row[score_column]!r} is not a "
                             "number") from None
        if not np.isfinite(v):
            raise InputError(f"{path}: line {line}: score {v} is not finite")
        xs, ds = out.setdefault(str(row[system_column]), ([], []))
        xs.append(v)
        ds.append(str(row[domain_column]))
    if not out:
        raise InputError(f"{path}: no rows")
    for name, (_, ds) in out.items():
        check_domains(ds, f"{path} (system {name!r})")
    return {k: (np.asarray(x, dtype=float), d) for k, (x, d) in out.items()}


def common_sigma(vectors: Sequence[Any]) -> float:
    """One σ_ref for systems scored separately: the median of their spreads."""
    return float(np.median([cons.spread_scale(np.asarray(v, dtype=float)) for v in vectors]))


def analyze_scores(table: Mapping[str, tuple[np.ndarray, list[str]]], cfg: ConsistencyConfig
                   ) -> dict[str, dict[str, Any]]:
    """Consistency results per system of a precomputed table (systems may differ in rows)."""
    results = {}
    ref = common_sigma([x for x, _ in table.values()]) if cfg.eps_grid == "sigma" else None
    for name, (x, labels) in table.items():
        res = consistency_tables(x[None, :], labels, cfg, sigma_ref=ref)[0]
        lab = np.asarray(labels, dtype=object)
        per = {d: float(x[lab == d].mean()) for d in dict.fromkeys(labels)}
        results[name] = {"system": name, "score": "score", "per_domain": per, **res}
    return results


def run_scores(path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None,
               cfg: ConsistencyConfig, *, human: Mapping[str, float] | None = None,
               command: str | None = None, columns: Mapping[str, str] | None = None,
               plots: bool = True, table: Mapping[str, tuple[Any, list[str]]] | None = None,
               inputs: Sequence[tuple[str, str | None, str]] = (),
               log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """``robustlab cross-domain scores FILE``: results per system; a run directory if asked.
    ``table`` ({system: (scores, domains)}) replaces reading ``path`` (e.g. WMT DA segments)."""
    cfg.validate()
    if table is None:
        table = read_score_table(path, **(columns or {}))
    else:
        for name, (_, ds) in table.items():
            check_domains(ds, f"{path} (system {name!r})")
        table = {k: (np.asarray(x, dtype=float), list(d)) for k, (x, d) in table.items()}
    results = analyze_scores(table, cfg)
    if out_dir is None:
        from robustlab.studies.cross_domain.report import rank_and_agree

        return {"kind": KIND, "systems": list(results.values()),
                **rank_and_agree(list(results.values()), human)}
    config = {"task": "scores", "file": str(path), **asdict(cfg), "eps": list(cfg.eps),
              "human": dict(human) if human else None}

    def cell_fn(kind: str, params: dict[str, Any]) -> Any:
        from robustlab.runs.executor import CellOutput

        name = params["system"]
        x, labels = table[name]
        recs = [{"domain": d, "score": float(v)} for v, d in zip(x, labels, strict=True)]
        return CellOutput(result=results[name], records=recs, signature=_signature(cfg))

    return _run(config, list(results), cell_fn, out_dir, command=command, progress=False,
                plots=plots, human=human, inputs=[("scores", str(path), "FILE"), *inputs],
                log=log)
