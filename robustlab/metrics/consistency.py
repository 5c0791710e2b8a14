"""Cross-domain consistency metrics of paper 004 (Yu, Khan & Xu, "Measuring Robustness for NLP").

Every function takes a score vector X (one score per test sample, e.g. sentence BLEU, or one per
domain, e.g. accuracy) along the **last axis** of a numpy array, so a whole matrix of systems
(``(S, N)``) or of bags (``(S, M, b)``) is scored in one vectorised call. All functions are pure;
the resampling ones take a ``seed`` and build their own ``numpy.random.Generator``.

Conventions settled here (the paper is loose about them):

* **Variance** is the *population* variance (divide by N) as in Algorithm 2
  ``V(T) = 1/I Σ (ε_i − mean)²``. ``ddof=1`` is available for the sample variance.
* **Coefficient of variation** is σ/μ with σ the square root of that variance. Algorithm 3 prints
  ``V(T)/mean`` (variance over mean, the *index of dispersion*); that is a typo for the MT tables:
  Table 1's COR column is σ/μ (32.52 and 723.56 → √723.56/32.52 = 0.83). Caveat found while
  checking: the *classification* Tables 2, 4 and 6 do match variance/mean (Table 2 dvd:
  2.04/64.33·100 = 3.17 ≈ 3.18), so the paper is internally inconsistent; :func:`dispersion_index`
  reproduces those columns, :func:`cov` is what robustlab reports everywhere.
* **(ε,γ)-robustness** (Eq. 1): ``Pr[|X−μ| < ε] = 1 − σ²/ε² · γ``, solved for γ:
  ``γ(ε) = (1 − Pr[|X−μ| < ε]) · ε²/σ²``. Algorithm 1/4 print ``Pr[|X−μ| = ε]``, another typo
  (equality has probability ~0 and would make γ grow without bound). σ uses ``ddof=1`` as
  Algorithm 4 states. By Chebyshev on the empirical distribution γ ∈ [0, 1]; lower is more robust;
  γ is 0 once ε exceeds the largest deviation, and a constant vector has γ ≡ 0 (perfectly robust,
  no division by zero).
* The paper does not define the "normalized" γ of its Figure 4. Here :func:`normalize_curves`
  divides a set of curves by their joint maximum, so they share a [0, 1] axis without losing
  their relative levels. The relation to CoV (Eq. 5–7) is the reparametrisation ε = ε'·σ/μ, under
  which the Chebyshev bound becomes μ²/ε'² (:func:`gamma_cov_scaled`, :func:`chebyshev_bound`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import numpy as np

DEFAULT_EPS_GRID = np.arange(1, 101, dtype=float)  # Algorithm 1: ε = 1..100 (BLEU scale)
DEFAULT_EPS = (1.0, 5.0, 10.0, 20.0, 50.0)  # the γ values reported in summaries
#: ε grids: "fixed" = the paper's ε = 1..max in score points; "sigma" = ε = t·σ_ref, following
#: the spread of the scores (see :func:`eps_grid`)
EPS_GRIDS = ("fixed", "sigma")
SIGMA_T = (0.05, 3.0)  # the σ grid runs over t ∈ [0.05, 3] (γ is 0 beyond the largest deviation)
SIGMA_EPS = (0.5, 1.0, 1.5, 2.0)  # γ reported at these multiples of σ_ref on the σ grid
N_BAGS = 30  # the paper's 30 bags ...
BAG_FRACTION = 0.6  # ... of 60 % each
METRICS = ("mean", "variance", "cov")

ArrayLike = Any


def _arr(x: ArrayLike) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError("consistency metrics need at least one score along the last axis")
    return a


def mean(x: ArrayLike) -> np.ndarray | float:
    """Mean score μ along the last axis."""
    return _out(_arr(x).mean(axis=-1))


def variance(x: ArrayLike, ddof: int = 0) -> np.ndarray | float:
    """Variance along the last axis; population (ddof=0, Algorithm 2) by default."""
    a = _arr(x)
    if a.shape[-1] - ddof <= 0:
        return _out(np.zeros(a.shape[:-1]))  # one score: no spread to measure
    return _out(a.var(axis=-1, ddof=ddof))


def cov(x: ArrayLike, ddof: int = 0) -> np.ndarray | float:
    """Coefficient of variation σ/μ (the paper's Table 1 COR). 0 for a constant vector;
    ``inf`` when μ = 0 but the scores vary (CoV is undefined there, reported as infinite)."""
    a = _arr(x)
    mu = a.mean(axis=-1)
    sd = np.sqrt(np.asarray(variance(a, ddof)))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(sd == 0, 0.0, np.where(mu == 0, np.inf, sd / np.abs(mu)))
    return _out(out)


def dispersion_index(x: ArrayLike, ddof: int = 0) -> np.ndarray | float:
    """Variance/mean: Algorithm 3 as printed (see the module docstring); not the CoV."""
    a = _arr(x)
    mu = a.mean(axis=-1)
    var = np.asarray(variance(a, ddof))
    with np.errstate(divide="ignore", invalid="ignore"):
        return _out(np.where(var == 0, 0.0, np.where(mu == 0, np.inf, var / np.abs(mu))))


def _eps(eps: ArrayLike) -> np.ndarray:
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    if e.ndim != 1 or np.any(~np.isfinite(e)) or np.any(e <= 0):
        raise ValueError("ε must be a positive finite number or a 1-D grid of them")
    return e


def gamma(x: ArrayLike, eps: ArrayLike, ddof: int = 1) -> np.ndarray | float:
    """(ε,γ)-robustness γ(ε) = (1 − Pr[|X−μ| < ε]) · ε²/σ² (Eq. 1, Algorithm 4).

    ``x`` has shape ``(..., N)``; ``eps`` a scalar or a 1-D grid ``(E,)``. Returns shape ``(...)``
    for a scalar ε and ``(..., E)`` for a grid. Where no score deviates by ε or more the tail
    probability is 0 and γ is 0 whatever σ is, so a constant vector is perfectly robust.
    """
    a = _arr(x)
    scalar = np.ndim(eps) == 0
    e = _eps(eps)
    tail = _tail(np.abs(a - a.mean(axis=-1, keepdims=True)), e)
    var = np.asarray(variance(a, ddof))[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(tail == 0, 0.0, tail * e**2 / var)
    return _out(g[..., 0] if scalar else g)


def _tail(dev: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Pr[dev >= ε] for every row of ``dev`` (..., N) and every ε: (..., E).

    Rows are sorted once (vectorised) and each ε grid is located by binary search, so a
    100-point grid over 300 bags of 1,200 scores costs a sort, not a 36M-element comparison."""
    n = dev.shape[-1]
    rows = np.sort(dev.reshape(-1, n), axis=-1)
    below = np.empty((rows.shape[0], e.size), dtype=np.int64)
    for i, r in enumerate(rows):
        below[i] = np.searchsorted(r, e, side="left")  # count of dev < ε (exact, no rounding)
    return ((n - below) / n).reshape(dev.shape[:-1] + (e.size,))


def spread_scale(x: ArrayLike, ddof: int = 1) -> float:
    """σ_ref: the typical spread of the systems' scores, the unit of the σ grid.

    The median over systems (rows) of their standard deviation (``ddof`` as γ's), so every system
    is scored on the same ε values (γ curves stay comparable) while the grid follows how much
    scores actually vary. Falls back to the pooled σ of all scores when the median is 0, and to
    1 when every score is equal (then γ ≡ 0 on any grid)."""
    a = np.atleast_2d(_arr(x))
    rows = a.reshape(-1, a.shape[-1])
    sd = np.sqrt(np.asarray(variance(rows, ddof))).reshape(-1)
    ref = float(np.median(sd)) if sd.size else 0.0
    if not ref > 0:
        ref = float(np.sqrt(variance(rows.reshape(-1), ddof))) if rows.size > 1 else 0.0
    return ref if ref > 0 else 1.0


def eps_grid(x: ArrayLike, kind: str = "fixed", *, n: int = 100, grid_max: int = 100,
             t_range: tuple[float, float] = SIGMA_T, sigma_ref: float | None = None
             ) -> tuple[np.ndarray, dict[str, Any]]:
    """(grid, description) of the ε grid for γ curves of the systems in ``x`` (``(S, N)``).

    ``fixed`` is the paper's Algorithm 1 grid ε = 1..grid_max in score points. It suits BLEU
    (segment scores spread over tens of points) but not accuracies that differ by a few points
    across domains: every deviation is below ε = 5, so γ is 0 over most of the grid and every
    system's γ-AUC is nearly the same. ``sigma`` puts ε in units of the scores' spread,
    ε = t·σ_ref for ``n`` values of t over ``t_range`` (:func:`spread_scale`), the
    reparametrisation paper 004 Eq. 5–7 use to relate ε to σ/μ. The description records which
    grid was used (``eps_grid``, ``sigma_ref``, ``t``) so a report can say it. ``sigma_ref``
    overrides σ_ref (systems scored one at a time must share one, or their curves differ in ε)."""
    if kind == "fixed":
        if grid_max < 1:
            raise ValueError(f"grid_max must be >= 1, got {grid_max}")
        return np.arange(1, int(grid_max) + 1, dtype=float), {"eps_grid": "fixed",
                                                               "grid_max": int(grid_max)}
    if kind == "sigma":
        lo, hi = t_range
        if not 0 < lo < hi or n < 2:
            raise ValueError(f"σ grid needs 0 < t_lo < t_hi and n >= 2, got {t_range}, {n}")
        ref = float(sigma_ref) if sigma_ref and sigma_ref > 0 else spread_scale(x)
        t = np.linspace(lo, hi, int(n))
        return t * ref, {"eps_grid": "sigma", "sigma_ref": ref, "t": [lo, hi], "n": int(n)}
    raise ValueError(f"unknown ε grid {kind!r}; choose from {', '.join(EPS_GRIDS)}")


def gamma_curve(x: ArrayLike, grid: ArrayLike = DEFAULT_EPS_GRID, ddof: int = 1) -> np.ndarray:
    """γ over an ε grid (Algorithm 1; default ε = 1..100 on the BLEU scale)."""
    return np.asarray(gamma(x, _eps(grid), ddof))


def gamma_auc(x: ArrayLike, grid: ArrayLike = DEFAULT_EPS_GRID, ddof: int = 1) -> np.ndarray | float:
    """Mean γ over the grid: one number per system for ranking by γ (lower = more robust).

    The paper ranks systems by their γ curves (Table 7) without saying how a curve becomes a
    rank; the average height over the ε grid is robustlab's choice."""
    return _out(gamma_curve(x, grid, ddof).mean(axis=-1))


def normalize_curves(curves: ArrayLike) -> np.ndarray:
    """Divide a set of γ curves by their joint maximum (Figure 4's "normalized" plot).

    Joint, not per curve, so a more robust system still draws lower. All-zero curves stay 0."""
    c = np.asarray(curves, dtype=float)
    top = np.nanmax(c) if c.size else 0.0
    return c / top if top > 0 else np.zeros_like(c)


def gamma_cov_scaled(x: ArrayLike, eps_prime: ArrayLike, ddof: int = 1) -> np.ndarray | float:
    """γ at ε = ε'·σ/μ (Eq. 7): the (ε,γ) definition re-expressed through the CoV.

    Under that substitution the Chebyshev bound σ²/ε² becomes μ²/ε'² (Eq. 6). σ is the same σ
    as γ's (``ddof``, sample by default). A constant vector (CoV 0) is perfectly robust: γ = 0."""
    a = _arr(x)
    c = np.asarray(cov(a, ddof))
    ep = _eps(eps_prime)
    scalar = np.ndim(eps_prime) == 0
    out = np.zeros(c.shape + ep.shape)
    flat_a = a.reshape(-1, a.shape[-1])
    flat_c = c.reshape(-1)
    flat_o = out.reshape(-1, ep.size)
    for i, (row, ci) in enumerate(zip(flat_a, flat_c, strict=True)):  # ε differs per row: one call per row
        if ci > 0 and np.isfinite(ci):
            flat_o[i] = gamma(row, ep * ci, ddof)
    out = flat_o.reshape(c.shape + ep.shape)
    return _out(out[..., 0] if scalar else out)


def chebyshev_bound(x: ArrayLike, eps: ArrayLike, ddof: int = 1) -> np.ndarray | float:
    """Chebyshev's upper bound σ²/ε² on Pr[|X−μ| ≥ ε] (Eq. 2), capped at 1."""
    a = _arr(x)
    e = _eps(eps)
    b = np.minimum(1.0, np.asarray(variance(a, ddof))[..., None] / e**2)
    return _out(b[..., 0] if np.ndim(eps) == 0 else b)


def summarize(x: ArrayLike, eps: Sequence[float] = DEFAULT_EPS,
              grid: ArrayLike = DEFAULT_EPS_GRID) -> dict[str, Any]:
    """mean, variance, CoV, γ at ``eps`` and the γ-AUC of one score vector, as plain floats."""
    a = _arr(x)
    if a.ndim != 1:
        raise ValueError("summarize() takes one score vector")
    g = gamma(a, np.asarray(eps, dtype=float))
    return {"n": int(a.size), "mean": float(mean(a)), "variance": float(variance(a)),
            "cov": float(cov(a)), "gamma": {_key(e): float(v) for e, v in zip(eps, g, strict=True)},
            "gamma_auc": float(gamma_auc(a, grid))}


# ---- resampling: bagging (Algorithm 5) and design bagging (Algorithm 6) ---------------------------


def _bag_size(n: int, fraction: float) -> int:
    if not 0 < fraction <= 1:
        raise ValueError(f"bag fraction must be in (0, 1], got {fraction}")
    if n < 1:
        raise ValueError("cannot bag an empty pool")
    return max(1, int(round(fraction * n)))


def bags(n: int, n_bags: int = N_BAGS, fraction: float = BAG_FRACTION, seed: int = 0) -> np.ndarray:
    """Algorithm 5: M bags of b = round(fraction·n) distinct indices, each drawn uniformly.

    Algorithm 5 fills the bags round-robin, each time adding a uniformly chosen element not yet
    in that bag; bags do not interact, so each bag is a uniform sample without replacement, drawn
    here in one vectorised step (argsort of uniform keys). Returns an ``(M, b)`` int array."""
    b = _bag_size(n, fraction)
    rng = np.random.default_rng(seed)
    keys = rng.random((n_bags, n))
    return np.argpartition(keys, b - 1, axis=1)[:, :b] if b < n else np.argsort(keys, axis=1)


def design_bags(n: int, n_bags: int = N_BAGS, fraction: float = BAG_FRACTION,
                seed: int = 0, return_order: bool = False
                ) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Algorithm 6: bags filled round-robin, each time with an element not in the bag chosen
    uniformly among those sampled least often so far.

    Consequence tested in tests: when M·b ≥ n every element is used before any is used twice.
    The loop runs M·b steps of O(1) expected work: candidates are drawn by rejection from the
    current least-used level (an element already in the bag is redrawn), falling back to an
    explicit mask only when that level is exhausted for this bag. ``return_order`` also returns
    the elements in the order they were placed (to check the coverage property)."""
    b = _bag_size(n, fraction)
    rng = np.random.default_rng(seed)
    count = np.zeros(n, dtype=np.int64)
    member = np.zeros((n_bags, n), dtype=bool)
    out = np.empty((n_bags, b), dtype=np.int64)
    order = np.empty(n_bags * b, dtype=np.int64)
    k = 0
    level = list(range(n))  # elements with the current minimum count (unordered)
    pos = {e: i for i, e in enumerate(level)}
    cur = 0  # current minimum count
    u = rng.random(4 * n_bags * b + 64)
    ui = 0

    def draw() -> float:
        nonlocal u, ui
        if ui >= u.size:
            u, ui = rng.random(u.size), 0
        ui += 1
        return float(u[ui - 1])

    def take(e: int) -> None:
        nonlocal level, pos, cur
        i = pos.pop(e)
        last = level.pop()
        if last != e:
            level[i] = last
            pos[last] = i
        count[e] += 1
        if not level:  # everyone reached cur+1: next level
            cur += 1
            level = [int(k) for k in np.flatnonzero(count == cur)]
            pos = {k: i for i, k in enumerate(level)}

    for step in range(b):
        for m in rng.permutation(n_bags):  # each round, bags in random order (all equally full)
            e = -1
            for _ in range(32):  # rejection: uniform among least-used elements not in bag m
                cand = level[int(draw() * len(level))]
                if not member[m, cand]:
                    e = cand
                    break
            if e < 0:
                e = _fallback(count, member[m], rng)
                if count[e] == cur:
                    take(e)
                else:
                    count[e] += 1
            else:
                take(e)
            member[m, e] = True
            out[m, step] = e
            order[k] = e
            k += 1
    return (out, order) if return_order else out


def _fallback(count: np.ndarray, in_bag: np.ndarray, rng: np.random.Generator) -> int:
    """Uniform among the least-used elements not in the bag (explicit mask; rare)."""
    c = np.where(in_bag, np.iinfo(np.int64).max, count)
    cands = np.flatnonzero(c == c.min())
    return int(rng.choice(cands))


def make_bags(n: int, method: str = "bagging", n_bags: int = N_BAGS,
              fraction: float = BAG_FRACTION, seed: int = 0) -> np.ndarray:
    """``method`` is ``bagging`` (Algorithm 5) or ``design`` (Algorithm 6)."""
    if method in ("bagging", "bag"):
        return bags(n, n_bags, fraction, seed)
    if method in ("design", "design_bagging"):
        return design_bags(n, n_bags, fraction, seed)
    raise ValueError(f"unknown bagging method {method!r}; use 'bagging' or 'design'")


MetricFn = Callable[[np.ndarray], Any]
_METRIC_FNS: dict[str, MetricFn] = {"mean": mean, "variance": variance, "cov": cov}


def bagged(x: ArrayLike, idx: np.ndarray, metric: str | MetricFn = "cov") -> np.ndarray | float:
    """AV(T) = 1/M Σ_m R(B_m): any metric averaged over bags ``idx`` (``(M, b)`` indices).

    ``x`` has shape ``(..., N)``; the bags index its last axis, so every system of a matrix is
    scored on the same bags (paired comparisons). ``metric`` is a name or a function of the last
    axis (e.g. ``lambda a: gamma(a, 10.0)``)."""
    fn = _METRIC_FNS[metric] if isinstance(metric, str) else metric
    a = _arr(x)
    vals = np.asarray(fn(a[..., idx]))  # (..., M) or (..., M, E)
    m_axis = a.ndim - 1
    return _out(vals.mean(axis=m_axis))


# ---- leave-one-domain-out tables (Tables 1-6) ----------------------------------------------------


def leave_one_out(x: ArrayLike, domains: Sequence[str], *, resample: str | None = None,
                  n_bags: int = N_BAGS, fraction: float = BAG_FRACTION, seed: int = 0,
                  eps: Sequence[float] = ()) -> list[dict[str, Any]]:
    """Rows {left_out, n, mean, variance, cov[, gamma]} for ``None`` (all) and each domain left out.

    ``x`` is ``(N,)`` or ``(S, N)`` (values become lists per system); ``domains`` labels the N
    scores (one label per score; for per-domain accuracies the labels are the domain names).
    With ``resample`` = ``bagging``/``design`` each metric is averaged over bags of the pool
    that remains (Tables 3–6); bags are seeded per row so rows are reproducible independently.
    """
    a = _arr(x)
    lab = np.asarray(list(domains), dtype=object)
    if lab.shape[0] != a.shape[-1]:
        raise ValueError(f"{lab.shape[0]} domain labels for {a.shape[-1]} scores")
    names = list(dict.fromkeys(lab.tolist()))
    if len(names) < 2:
        raise ValueError(f"leave-one-domain-out needs at least 2 domains, got {names}")
    rows = []
    for k, left in enumerate([None, *names]):
        keep = np.ones(lab.shape[0], bool) if left is None else lab != left
        sub = a[..., keep]
        row: dict[str, Any] = {"left_out": left, "n": int(keep.sum())}
        idx = None if resample is None else make_bags(sub.shape[-1], resample, n_bags, fraction,
                                                      seed + k)
        for name in METRICS:
            v = _METRIC_FNS[name](sub) if idx is None else bagged(sub, idx, name)
            row[name] = _plain(v)
        if len(eps):
            e = np.asarray(eps, dtype=float)
            g = gamma(sub, e) if idx is None else bagged(sub, idx, partial(gamma, eps=e))
            g = np.asarray(g)
            row["gamma"] = {_key(ev): _plain(g[..., j]) for j, ev in enumerate(eps)}
        rows.append(row)
    return rows


def _key(e: float) -> str:
    """ε as a JSON key: '10' for 10.0, '2.5' for 2.5."""
    return f"{float(e):g}"


def _plain(v: Any) -> Any:
    a = np.asarray(v, dtype=float)
    return float(a) if a.ndim == 0 else a.tolist()


def _out(a: np.ndarray) -> np.ndarray | float:
    a = np.asarray(a)
    return float(a) if a.ndim == 0 else a
