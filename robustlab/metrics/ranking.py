"""System rankings by a metric and their agreement with a human ranking (paper 004, Tables 7–8).

Scores are dicts ``{system: value}``; each metric has an orientation: higher BLEU/chrF/human DA
is better, lower TER / CoV / variance / γ is better (:data:`HIGHER_IS_BETTER`). Agreement is
measured over the systems both rankings score:

* **pairwise agreement** (Table 8, Eq. 8): the share of system pairs that both rankings order
  the same way; a pair tied in either ranking counts as half agreement, so the figure does not
  depend on how ties are broken;
* **Kendall τ** (``scipy.stats.kendalltau``, τ-b, with its p-value).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations
from typing import Any

HIGHER_IS_BETTER = {"bleu": True, "chrf": True, "ter": False, "mean": True, "human": True,
                    "accuracy": True, "variance": False, "cov": False, "gamma": False,
                    "gamma_auc": False}


def orient(name: str) -> bool:
    if name not in HIGHER_IS_BETTER:
        raise ValueError(f"unknown orientation for metric {name!r}; known: "
                         f"{', '.join(HIGHER_IS_BETTER)}")
    return HIGHER_IS_BETTER[name]


def rank(scores: Mapping[str, float], higher_is_better: bool = True) -> list[str]:
    """Systems best first; ties broken by name so the order is stable."""
    sign = -1.0 if higher_is_better else 1.0
    return sorted(scores, key=lambda s: (sign * float(scores[s]), s))


def _goodness(scores: Mapping[str, float], higher_is_better: bool) -> dict[str, float]:
    return {k: (float(v) if higher_is_better else -float(v)) for k, v in scores.items()}


def pairwise_agreement(a: Mapping[str, float], b: Mapping[str, float], a_higher: bool = True,
                       b_higher: bool = True) -> dict[str, Any]:
    """Share of common system pairs ordered the same way by ``a`` and ``b`` (ties: ½)."""
    ga, gb = _goodness(a, a_higher), _goodness(b, b_higher)
    common = sorted(set(ga) & set(gb))
    pairs = list(combinations(common, 2))
    if not pairs:
        return {"pairwise": None, "n_pairs": 0, "agree": 0, "disagree": 0, "ties": 0}
    agree = disagree = ties = 0
    for s, t in pairs:
        da, db = ga[s] - ga[t], gb[s] - gb[t]
        if da == 0 or db == 0:
            ties += 1
        elif (da > 0) == (db > 0):
            agree += 1
        else:
            disagree += 1
    return {"pairwise": (agree + 0.5 * ties) / len(pairs), "n_pairs": len(pairs),
            "agree": agree, "disagree": disagree, "ties": ties}


def kendall_tau(a: Mapping[str, float], b: Mapping[str, float], a_higher: bool = True,
                b_higher: bool = True) -> dict[str, Any]:
    """Kendall τ-b between the two orientations-adjusted score sets (scipy)."""
    from scipy.stats import kendalltau

    ga, gb = _goodness(a, a_higher), _goodness(b, b_higher)
    common = sorted(set(ga) & set(gb))
    if len(common) < 2:
        return {"kendall_tau": None, "p_value": None, "n": len(common)}
    res = kendalltau([ga[s] for s in common], [gb[s] for s in common])
    tau = None if res.statistic != res.statistic else float(res.statistic)  # NaN -> None
    p = None if res.pvalue != res.pvalue else float(res.pvalue)
    return {"kendall_tau": tau, "p_value": p, "n": len(common)}


def agreement(metrics: Mapping[str, Mapping[str, float]], human: Mapping[str, float],
              human_higher: bool = True) -> dict[str, dict[str, Any]]:
    """{metric: {pairwise, kendall_tau, p_value, n_systems, n_pairs, …}} against ``human``."""
    out = {}
    for name, scores in metrics.items():
        hb = orient(name)
        pw = pairwise_agreement(scores, human, hb, human_higher)
        kt = kendall_tau(scores, human, hb, human_higher)
        out[name] = {"pairwise": pw["pairwise"], "kendall_tau": kt["kendall_tau"],
                     "p_value": kt["p_value"], "n_systems": kt["n"], "n_pairs": pw["n_pairs"],
                     "agree": pw["agree"], "disagree": pw["disagree"], "ties": pw["ties"]}
    return out


def rankings(metrics: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """{"by_<metric>": systems best first} for every metric (orientation from its name)."""
    return {f"by_{name}": rank(scores, orient(name)) for name, scores in metrics.items()}


# ---- correlation tests that stay honest at small n ------------------------------------------------

#: up to this many pairs the p-value is exact (all n! pairings); 8! = 40,320 orderings
EXACT_MAX_N = 8
#: below this many pairs (and above EXACT_MAX_N) a seeded Monte Carlo permutation test is used;
#: from here on scipy's t-approximation (``spearmanr``) is accurate enough
PERMUTATION_MAX_N = 20
N_RESAMPLES = 19_999


def spearman_test(x: Any, y: Any, *, seed: int = 0) -> dict[str, Any]:
    """Spearman ρ with a p-value that is honest at small n: ``{rho, p_value, n, p_method}``.

    ``p_method`` says how the two-sided p was obtained: ``exact`` (n ≤ :data:`EXACT_MAX_N`: the
    permutation distribution over every pairing, ``scipy.stats.permutation_test``),
    ``permutation`` (n < :data:`PERMUTATION_MAX_N`: :data:`N_RESAMPLES` seeded random
    pairings) or ``asymptotic`` (``scipy.stats.spearmanr``'s t-approximation). With 3 pairs
    and ρ = 1 the exact p is 1/3, where the t-approximation prints 0. Pairs with a non-finite
    member are dropped; with fewer than 3 pairs or a constant side ρ is undefined (None)."""
    import numpy as np
    from scipy import stats

    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"spearman: x and y differ in length ({a.shape} vs {b.shape})")
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    n = int(a.size)
    if n < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return {"rho": None, "p_value": None, "n": n, "p_method": None}
    res = stats.spearmanr(a, b)
    rho = float(res.statistic)
    if n >= PERMUTATION_MAX_N:
        return {"rho": rho, "p_value": float(res.pvalue), "n": n, "p_method": "asymptotic"}
    ra, rb = stats.rankdata(a), stats.rankdata(b)
    yc = rb - rb.mean()
    ynorm = float(np.sqrt((yc**2).sum()))

    def pearson_of_ranks(r: np.ndarray, axis: int = -1) -> np.ndarray:
        """ρ = Pearson correlation of the ranks (ties: average ranks, as spearmanr)."""
        xc = r - r.mean(axis=axis, keepdims=True)
        return (xc * yc).sum(axis=axis) / (np.sqrt((xc**2).sum(axis=axis)) * ynorm)

    exact = n <= EXACT_MAX_N
    perm = stats.permutation_test((ra,), pearson_of_ranks, permutation_type="pairings",
                                  vectorized=True, alternative="two-sided",
                                  n_resamples=np.inf if exact else N_RESAMPLES,
                                  rng=np.random.default_rng(seed))
    return {"rho": rho, "p_value": float(min(1.0, perm.pvalue)), "n": n,
            "p_method": "exact" if exact else "permutation"}
