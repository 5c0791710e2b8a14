"""Learnability / CENT, robustness and post-augmentation Δ: pure numpy/scipy functions.

Definitions follow paper 000 ("Interpreting the Robustness of Neural NLP Models to Textual
Perturbations", Table 1, Eq. 1–5, Algorithm 1, Appendix D/E) and SPEC §2:

* robustness(f, g)        = A1 − A0                                   (Eq. 1)
* Δ_post_aug(f, g)        = A2 − A1                                   (Eq. 2)
* learnability(f, g, p)   = ATE over the treated (l'=1) test half:
  mean_i 1[f(g(x_i)) = l'_i] − 1[f(x_i) = l'_i]                       (Eq. 4, 8)
  probability-based variant: P_f(l'_i | g(x_i)) − P_f(l'_i | x_i)     (Appendix D, Eq. 11–14)
* average learnability    = trapezoidal area under learnability(p) against log10(p) (Eq. 5);
  over the default grid {0.001 … 1.0} its maximum is 3.0
* learnability@p and its σ / ρ against the average across model×perturbation pairs (Appendix E,
  Table 4); Spearman ρ with p-values between average learnability and robustness / Δ (Table 3).
* the quick **learnability estimate**: learnability at one p (0.02 by default) instead of the
  whole curve, with p = 1 as a learnable-at-all check. In Table 4 σ across pairs peaks at
  p = 0.01 (0.263; 0.257 at 0.02); 0.02 is chosen because there the Spearman ρ of
  (accuracy-based) learnability@p with average learnability (0.816), robustness (−0.636) and
  post-augmentation Δ (0.743) peak. :func:`most_discriminating_p` finds the p of largest σ in a
  grid (Table 4's σ column), :func:`seed_noise` measures how much of the spread across pairs
  at one p is seed noise.

CENT (paper 003) is the same estimand, read as "sensitivity to an injected spurious feature":
:func:`cent_sensitivity` is :func:`learnability_ate` under that name.

Everything here is a pure function of arrays; the experiment engine lives in
:mod:`robustlab.studies.learnability.study`. Statistics come from scipy (``spearmanr``), never
re-implemented.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "CHECK_P",
    "DEFAULT_ESTIMATE_P",
    "DEFAULT_P_GRID",
    "LEARNABLE_MIN",
    "at_p_table",
    "cent_sensitivity",
    "cent_sensitivity_prob",
    "learnability_ate",
    "learnability_prob",
    "log_auc",
    "max_log_auc",
    "most_discriminating_p",
    "post_augmentation_delta",
    "robustness",
    "seed_noise",
    "seed_spread",
    "spearman",
]

#: the papers' perturbation probabilities (paper 000 §4.2)
DEFAULT_P_GRID: tuple[float, ...] = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0)
#: the quick estimate's p. Paper 000 Table 4 (accuracy-based): σ across pairs peaks at p = 0.01
#: (0.263 vs 0.257 at 0.02), but at 0.02 learnability@p correlates best with average learnability
#: (ρ = 0.816), robustness (−0.636) and post-augmentation Δ (0.743); on SST-2 with robustlab's CPU
#: models its ρ with the log-AUC is 0.871 (docs/learnability.md)
DEFAULT_ESTIMATE_P = 0.02
#: the p of the learnable-at-all check (every treated training example perturbed)
CHECK_P = 1.0
#: learnability@1 below this counts as "not learnable at all" (fewer than 1 in 10 treated test
#: examples flipped to l' by the perturbation): a reporting convention, not a fitted value
LEARNABLE_MIN = 0.1


def _treated_mask(labels: np.ndarray, treated: Sequence[bool] | np.ndarray | None) -> np.ndarray:
    if treated is None:
        return np.ones(len(labels), dtype=bool)
    mask = np.asarray(treated, dtype=bool)
    if mask.shape != labels.shape:
        raise ValueError(f"treated mask has shape {mask.shape}, labels {labels.shape}")
    return mask


def learnability_ate(
    pred_perturbed: Sequence[int] | np.ndarray,
    pred_clean: Sequence[int] | np.ndarray,
    labels: Sequence[int] | np.ndarray,
    treated: Sequence[bool] | np.ndarray | None = None,
) -> float:
    """Accuracy-based learnability: mean over treated i of 1[f(x*_i)=l'_i] − 1[f(x_i)=l'_i].

    ``pred_perturbed[i]`` is the prediction on the perturbed text g(x_i), ``pred_clean[i]`` on
    x_i, ``labels`` the random labels l'. ``treated`` selects the l'=1 half (paper 000 Eq. 8 and
    footnote 3: untreated examples have ITE 0 and are left out); None means every example is
    treated. Returns NaN when no example is treated (nothing to estimate).
    """
    pp, pc, y = (np.asarray(a) for a in (pred_perturbed, pred_clean, labels))
    if not (pp.shape == pc.shape == y.shape) or y.ndim != 1:
        raise ValueError(f"shapes differ: perturbed {pp.shape}, clean {pc.shape}, labels {y.shape}")
    mask = _treated_mask(y, treated)
    if not mask.any():
        return math.nan
    ite = (pp[mask] == y[mask]).astype(np.float64) - (pc[mask] == y[mask]).astype(np.float64)
    return float(ite.mean())


def learnability_prob(
    proba_perturbed: np.ndarray,
    proba_clean: np.ndarray,
    labels: Sequence[int] | np.ndarray,
    treated: Sequence[bool] | np.ndarray | None = None,
) -> float:
    """Probability-based learnability (paper 000 Appendix D): mean P_f(l'|x*) − P_f(l'|x).

    ``proba_*`` are (n, n_classes) class-probability arrays. Smoother than the accuracy-based
    ATE (ITE in (−1, 1) rather than {−1, 0, 1}), hence the papers report it second.
    """
    a, b = np.asarray(proba_perturbed, dtype=np.float64), np.asarray(proba_clean, dtype=np.float64)
    y = np.asarray(labels)
    if a.shape != b.shape or a.ndim != 2 or a.shape[0] != y.shape[0]:
        raise ValueError(f"shapes differ: perturbed {a.shape}, clean {b.shape}, labels {y.shape}")
    mask = _treated_mask(y, treated)
    if not mask.any():
        return math.nan
    idx = np.flatnonzero(mask)
    ite = a[idx, y[idx]] - b[idx, y[idx]]
    return float(ite.mean())


#: CENT (paper 003) is the same causal estimand, called sensitivity to a spurious feature.
cent_sensitivity = learnability_ate
cent_sensitivity_prob = learnability_prob


def log_auc(p_grid: Sequence[float], values: Sequence[float]) -> float:
    """Average learnability: trapezoidal area under ``values`` against log10(p) (Eq. 5).

    Over the default grid the x-range is log10(1) − log10(0.001) = 3, so a curve of ones gives
    exactly 3.0 (the scale of the papers' Table 2). ``p_grid`` must be strictly increasing and
    positive. NaN in ``values`` propagates (an incomplete curve has no area).
    """
    p = np.asarray(p_grid, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if p.shape != v.shape or p.ndim != 1:
        raise ValueError(f"p_grid and values differ in shape: {p.shape} vs {v.shape}")
    if len(p) < 2:
        raise ValueError("log_auc needs at least two perturbation probabilities")
    if (p <= 0).any() or (p > 1).any():
        raise ValueError("perturbation probabilities must lie in (0, 1]")
    if (np.diff(p) <= 0).any():
        raise ValueError("p_grid must be strictly increasing")
    return float(np.trapezoid(v, np.log10(p)))


def max_log_auc(p_grid: Sequence[float] = DEFAULT_P_GRID) -> float:
    """The log-AUC of a curve that is 1 everywhere (3.0 for the default grid)."""
    return log_auc(p_grid, [1.0] * len(p_grid))


def robustness(a1: Any, a0: Any) -> Any:
    """Robustness = A1 − A0 (Eq. 1): accuracy on the perturbed minus the clean test set."""
    return np.subtract(a1, a0)


def post_augmentation_delta(a2: Any, a1: Any) -> Any:
    """Post-augmentation Δ = A2 − A1 (Eq. 2): what augmenting with g buys on the perturbed test."""
    return np.subtract(a2, a1)


def _finite(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def seed_spread(values: Sequence[float]) -> dict[str, Any]:
    """Mean and spread over seeds: ``{mean, std, n, values}``.

    ``std`` is the sample standard deviation (ddof=1: the seed-to-seed variation we would see
    again), 0.0 for a single seed; NaN values are dropped and reported via ``n``. Non-finite
    results become None so the JSON stays strict.
    """
    vals = [float(v) for v in values]
    ok = np.array([v for v in vals if math.isfinite(v)], dtype=np.float64)
    if len(ok) == 0:
        return {"mean": None, "std": None, "n": 0, "values": [_finite(v) for v in vals]}
    std = float(ok.std(ddof=1)) if len(ok) > 1 else 0.0
    return {"mean": float(ok.mean()), "std": std, "n": int(len(ok)),
            "values": [_finite(v) for v in vals]}


def spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman ρ with an honest two-sided p over paired finite values (one home:
    :func:`robustlab.metrics.ranking.spearman_test` — exact at n ≤ 8, permutation below 20,
    scipy's t-approximation above; ``p_method`` says which). Fewer than 3 pairs or a constant
    side: ρ and p are None (never a made-up number)."""
    from robustlab.metrics.ranking import spearman_test

    return spearman_test(x, y)


def at_p_table(
    learn_at_p: Mapping[float, Sequence[float]],
    avg: Sequence[float],
    robustness_values: Sequence[float] | None = None,
    delta_values: Sequence[float] | None = None,
) -> dict[float, dict[str, Any]]:
    """Paper 000 Table 4: for each p, σ of learnability@p across pairs and its Spearman ρ.

    ``learn_at_p[p]`` and ``avg`` (and optionally robustness / Δ) are aligned lists over the
    model×perturbation pairs. σ is the population standard deviation across the pairs studied
    (ddof=0; it describes how well the figure separates these pairs). Returns
    ``{p: {sigma, rho_with_avg, p_value, rho_with_robustness, p_value_robustness,
    rho_with_delta, p_value_delta}}``.
    """
    out: dict[float, dict[str, Any]] = {}
    for p, vals in learn_at_p.items():
        v = np.asarray(vals, dtype=np.float64)
        finite = v[np.isfinite(v)]
        row: dict[str, Any] = {"sigma": float(finite.std()) if len(finite) else None}
        s = spearman(v, avg)
        row["rho_with_avg"], row["p_value"] = s["rho"], s["p_value"]
        if robustness_values is not None:
            s = spearman(v, robustness_values)
            row["rho_with_robustness"], row["p_value_robustness"] = s["rho"], s["p_value"]
        if delta_values is not None:
            s = spearman(v, delta_values)
            row["rho_with_delta"], row["p_value_delta"] = s["rho"], s["p_value"]
        out[float(p)] = row
    return out


def most_discriminating_p(table: Mapping[Any, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The p of an :func:`at_p_table` (or ``summary.json`` ``at_p``) with the largest σ across
    pairs — Table 4's measure of how well one p separates pairs (largest at p = 0.01 in the
    paper, whose default 0.02 is chosen by ρ instead).

    Keys that are not probabilities (the ``avg`` row) are ignored. Returns ``{p, sigma,
    rho_with_avg}`` or None when no p has a finite σ.
    """
    best: tuple[float, float, Any] | None = None
    for key, row in table.items():
        try:
            p = float(key)
        except (TypeError, ValueError):
            continue
        sigma = row.get("sigma")
        if sigma is None or not math.isfinite(sigma):
            continue
        if best is None or sigma > best[1]:
            best = (p, float(sigma), row.get("rho_with_avg"))
    if best is None:
        return None
    return {"p": best[0], "sigma": best[1], "rho_with_avg": best[2]}


def seed_noise(values: np.ndarray | Sequence[Sequence[float]]) -> dict[str, Any]:
    """How much of the spread across pairs at one p is seed noise.

    ``values`` is a pairs × seeds matrix (NaN for a missing cell). Returns ``seed_std`` (the
    root-mean-square over pairs of the sample std across seeds, ddof=1: the typical seed noise of
    one cell), ``sigma_pairs`` (population std across pairs of the seed means, as in Table 4),
    their ratio ``noise_ratio`` and ``reliability`` = 1 − (seed variance / n_seeds) / variance of
    the pair means: the share of the spread of the seed means that is not seed noise (the
    classical reliability of a mean of k noisy measurements; None when undefined).
    """
    m = np.asarray(values, dtype=np.float64)
    if m.ndim != 2:
        raise ValueError(f"seed_noise: expected a pairs × seeds matrix, got shape {m.shape}")
    rows = [r[np.isfinite(r)] for r in m]
    var = [float(r.var(ddof=1)) for r in rows if len(r) >= 2]
    means = np.array([r.mean() for r in rows if len(r)], dtype=np.float64)
    seed_std = math.sqrt(float(np.mean(var))) if var else None
    sigma = float(means.std()) if len(means) else None
    ratio = seed_std / sigma if seed_std is not None and sigma else None
    k = float(np.mean([len(r) for r in rows if len(r)])) if len(means) else 0.0
    rel = (1.0 - (seed_std ** 2 / k) / sigma ** 2
           if seed_std is not None and sigma and k else None)
    return {"seed_std": seed_std, "sigma_pairs": sigma, "noise_ratio": ratio,
            "reliability": rel, "n_pairs": int(len(means)), "n_seeds": k}
