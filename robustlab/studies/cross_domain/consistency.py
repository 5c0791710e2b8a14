"""The consistency analysis of paper 004 on one score matrix (systems x domains): its options
and the tables (variance, CoV, (ε,γ)-robustness, bagging). The studies (:mod:`.study`,
:mod:`.clf`) compute the scores; this module, below them and the report, turns scores into
tables."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustlab.errors import InputError
from robustlab.metrics import consistency as cons
from robustlab.options import add_seed_option
from robustlab.runs import fields as field_options
from robustlab.runs.fields import in_cell, option

RESAMPLING = ("bagging", "design")


def _eps(args: Any) -> tuple[float, ...]:
    """``--eps``, by default the grid's own (the paper's ε, or multiples of σ)."""
    if args.eps:
        return tuple(args.eps)
    return cons.SIGMA_EPS if args.eps_grid == "sigma" else cons.DEFAULT_EPS


def _fmt(v: Any) -> str:
    return format(v, "g") if isinstance(v, float) else str(v)


def _always(flag: str) -> dict[str, Any]:
    """``show``: the option written whatever its value (the consistency options always were)."""
    return {"always": True, "show": lambda v, _: [flag, *(_fmt(x) for x in v)]
            if isinstance(v, tuple) else [flag, _fmt(v)]}


@dataclass(frozen=True)
class ConsistencyConfig:
    """Options that determine the consistency figures (stored in the run config); each field
    is its option (:mod:`robustlab.runs.fields`), in the "consistency metrics" group of every
    ``cross-domain`` command."""

    # in_cell: what enters each cell's signature (eps, bags, rs, after the study's own parts);
    # grid_max and eps_grid never did, so they stay out: adding them would re-run old runs
    eps: tuple[float, ...] = field(default=cons.DEFAULT_EPS, metadata={**option(
        "--eps", type=float, nargs="+", default=None, metavar="E", read=_eps,
        help="ε values whose γ is reported (default 1 5 10 20 50)", **_always("--eps")),
        **in_cell("eps", 1, lambda v, _: ",".join(f"{e:g}" for e in v))})
    grid_max: int = field(default=100, metadata=option(  # γ curve over ε = 1..grid_max (Alg. 1)
        "--eps-max", type=int, metavar="EPS_MAX", **_always("--eps-max"),
        help=lambda d: f"γ curve over ε = 1..EPS_MAX (default {d}, the BLEU scale)"))
    n_bags: int = field(default=cons.N_BAGS, metadata={**option(
        "--bags", type=int, metavar="BAGS", **_always("--bags"),
        help=lambda d: f"number of bags M (default {d})"),
        **in_cell("bags", 2, lambda v, c: f"{v}x{c.fraction:g}")})  # with the fraction
    fraction: float = field(default=cons.BAG_FRACTION, metadata=option(
        "--bag-fraction", type=float, metavar="BAG_FRACTION", **_always("--bag-fraction"),
        help=lambda d: f"share of the pool in each bag (default {d:g})"))
    seed: int = field(default=0, metadata={**option(
        add=lambda g: add_seed_option(g, help="seed of the bags (and of training; default 0)"),
        read=lambda a: a.seed, **_always("--seed")), **in_cell("rs", 3)})
    # "sigma": ε in units of the score spread (cons.eps_grid); eps = t
    eps_grid: str = field(default="fixed", metadata=option(
        "--eps-grid", choices=("fixed", "sigma"), order=1.5, argv_order=1.5,
        **_always("--eps-grid"),
        help="fixed: the paper's ε = 1..EPS_MAX in score points (default); sigma: ε in units "
        "of the scores' spread σ (0.05σ..3σ), so γ separates systems whose scores differ by a "
        "few points; --eps are then multiples of σ (default 0.5 1 1.5 2)"))

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        """The "consistency metrics" group of a ``cross-domain`` command."""
        field_options.add_arguments(cls, parser.add_argument_group("consistency metrics"))

    @classmethod
    def from_args(cls, args: Any) -> ConsistencyConfig:
        return field_options.from_args(cls, args)

    def grid(self) -> np.ndarray:
        return np.arange(1, int(self.grid_max) + 1, dtype=float)

    def argv(self) -> list[str]:
        """The consistency options, for the command line shown to people."""
        return field_options.argv(self, ())

    def validate(self) -> None:
        if self.n_bags < 1:
            raise InputError(f"--bags must be >= 1, got {self.n_bags}")
        if not 0 < self.fraction <= 1:
            raise InputError(f"--bag-fraction must be in (0, 1], got {self.fraction}")
        if self.grid_max < 1:
            raise InputError(f"--eps-max must be >= 1, got {self.grid_max}")
        if not self.eps or any(not (e > 0 and math.isfinite(e)) for e in self.eps):
            raise InputError(f"--eps values must be positive and finite, got {list(self.eps)}")
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
            mine = [pick(r, s) for r in rows]
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


def pick(row: dict[str, Any], s: int) -> dict[str, Any]:
    """Row s of a leave-one-out row computed over a system matrix."""
    def one(v: Any) -> Any:
        if isinstance(v, list):
            return v[s]
        if isinstance(v, dict):
            return {k: one(x) for k, x in v.items()}
        return v
    return {k: one(v) for k, v in row.items()}


def common_sigma(vectors: Sequence[Any]) -> float:
    """One σ_ref for systems scored separately: the median of their spreads."""
    return float(np.median([cons.spread_scale(np.asarray(v, dtype=float)) for v in vectors]))
