"""Consistency metrics of paper 004: CoV against the paper's tables, γ properties, bagging."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from robustlab.metrics import consistency as c


def _vector(mu: float, var: float) -> np.ndarray:
    """Two scores with mean mu and population variance var."""
    s = np.sqrt(var)
    return np.array([mu - s, mu + s])


# (mean, var, COR) rows of the paper's Table 1 (no resampling) and Table 3/5 (bagging)
TABLE_1 = [
    (32.52, 723.56, 0.83), (31.33, 684.75, 0.84), (32.35, 735.06, 0.84), (33.86, 714.98, 0.79),
    (32.51, 747.96, 0.84), (10.35, 206.43, 1.39), (10.55, 211.85, 1.38), (8.71, 171.72, 1.50),
    (11.44, 219.58, 1.30), (6.97, 173.38, 1.89), (6.2, 156.24, 2.02), (7.61, 186.79, 1.80),
    (15.36, 330.83, 1.18), (15.7, 328.59, 1.15), (14.66, 327.51, 1.23), (1.83, 49.20, 3.83),
    (1.72, 46.72, 3.98),
]
TABLE_3_5 = [(32.09, 706.49, 0.83), (8.56, 185.86, 1.59), (5.76, 150.79, 2.13),
             (12.67, 306.96, 1.38), (31.94, 703.93, 0.83), (4.76, 126.83, 2.37)]


def test_cov_of_the_issue_example() -> None:
    assert round(c.cov(_vector(32.52, 723.56)), 2) == 0.83


@pytest.mark.parametrize("mu,var,cor", TABLE_1 + TABLE_3_5)
def test_cov_reproduces_paper_cor_columns(mu: float, var: float, cor: float) -> None:
    """σ/μ recomputed from the printed Mean/Var lands on the printed COR, up to the rounding
    of the printed inputs (±0.005 on mean and variance, ±0.005 on COR)."""
    r = 0.005
    lo = np.sqrt(var - r) / (mu + r) - r
    hi = np.sqrt(var + r) / (mu - r) + r
    assert lo <= c.cov(_vector(mu, var)) <= hi
    assert lo <= cor <= hi
    assert abs(c.cov(_vector(mu, var)) - cor) < 0.012
    assert abs(c.dispersion_index(_vector(mu, var)) - cor) > 5  # Algorithm 3 as printed: no


def test_classification_tables_match_variance_over_mean_not_cov() -> None:
    """Documented inconsistency: Table 2 (classification) COR is var/mean·100, not σ/μ."""
    for mu, var, cor in [(64.33, 2.04, 3.18), (58.94, 0.60, 1.02), (64.45, 2.10, 3.26)]:
        x = _vector(mu, var)
        assert abs(100 * c.dispersion_index(x) - cor) <= 0.011
        assert abs(c.cov(x) - cor) > 1  # σ/μ is ~0.02 here: clearly not what Table 2 prints


def test_population_variance_and_sample_option() -> None:
    x = np.array([1.0, 2, 3, 4, 10])
    assert c.mean(x) == 4.0
    assert c.variance(x) == 10.0  # (9+4+1+0+36)/5, Algorithm 2
    assert c.variance(x, ddof=1) == 12.5
    assert c.cov(x) == pytest.approx(np.sqrt(10) / 4)


def test_gamma_hand_computed() -> None:
    # μ = 4, |dev| = [3,2,1,0,6], σ² (ddof=1, Algorithm 4) = 12.5
    x = np.array([1.0, 2, 3, 4, 10])
    assert c.gamma(x, 1.0) == pytest.approx(0.8 * 1 / 12.5)  # 4 of 5 deviate by >= 1
    assert c.gamma(x, 3.0) == pytest.approx(0.4 * 9 / 12.5)  # devs 3 and 6
    assert c.gamma(x, 5.0) == pytest.approx(0.2 * 25 / 12.5)
    assert c.gamma(x, 6.5) == 0.0
    np.testing.assert_allclose(c.gamma(x, [1.0, 5.0]), [0.064, 0.4])


def test_constant_vector_is_perfectly_robust_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = np.full(7, 42.0)
        assert c.cov(x) == 0.0
        assert c.variance(x) == 0.0
        assert np.all(c.gamma_curve(x) == 0.0)
        assert c.gamma_cov_scaled(x, 2.0) == 0.0
        z = np.zeros(3)
        assert c.cov(z) == 0.0 and np.all(c.gamma_curve(z) == 0)
        assert c.gamma(np.array([5.0]), 1.0) == 0.0  # a single score


def test_cov_with_zero_mean_and_spread_is_infinite() -> None:
    assert c.cov(np.array([-1.0, 1.0])) == np.inf


def test_gamma_cov_relation_eq7() -> None:
    x = np.array([10.0, 20, 30, 35, 80, 5])
    cv = c.cov(x, ddof=1)  # the σ of γ (Algorithm 4) is the sample σ, so is this one
    for ep in (0.5, 3.0, 40.0):
        assert c.gamma_cov_scaled(x, ep) == pytest.approx(c.gamma(x, ep * cv))
    # Eq. 6: with ε = ε'σ/μ the Chebyshev bound σ²/ε² is μ²/ε'²
    mu = c.mean(x)
    assert c.chebyshev_bound(x, 60 * c.cov(x, ddof=1), ddof=1) == pytest.approx(mu**2 / 60**2)


def test_vectorised_over_systems_equals_rows() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((4, 50)) * 100
    grid = np.arange(1, 101)
    np.testing.assert_allclose(c.gamma_curve(X), np.stack([c.gamma_curve(r) for r in X]))
    np.testing.assert_allclose(c.cov(X), [c.cov(r) for r in X])
    np.testing.assert_allclose(c.gamma_auc(X, grid), [c.gamma_auc(r, grid) for r in X])


def test_bad_eps_rejected() -> None:
    with pytest.raises(ValueError):
        c.gamma(np.arange(5.0), 0.0)
    with pytest.raises(ValueError):
        c.gamma(np.arange(5.0), [1.0, -2.0])


finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(arrays(float, st.integers(1, 40), elements=finite),
       st.lists(st.floats(min_value=1e-3, max_value=1e4), min_size=1, max_size=8))
def test_gamma_is_chebyshev_bounded(x: np.ndarray, eps: list[float]) -> None:
    g = np.asarray(c.gamma(x, eps))
    assert np.all(g >= 0)
    assert np.all(g <= 1 + 1e-9)


@settings(max_examples=100, deadline=None)
@given(arrays(float, st.integers(2, 40), elements=finite))
def test_gamma_reaches_zero_past_the_largest_deviation(x: np.ndarray) -> None:
    dev = np.abs(x - x.mean()).max()
    beyond = np.array([dev * 1.01 + 1e-6, dev * 2 + 1, dev * 10 + 5])
    assert np.all(np.asarray(c.gamma(x, beyond)) == 0)
    if dev > 1e-9:  # a spread vector is not robust at every ε
        assert np.asarray(c.gamma(x, [dev * 0.999])).max() > 0


# ---- bagging -------------------------------------------------------------------------------------


def test_bags_shape_distinct_and_seeded() -> None:
    b = c.bags(100, 30, 0.6, seed=4)
    assert b.shape == (30, 60)
    assert all(len(set(row)) == 60 for row in b.tolist())
    assert b.min() >= 0 and b.max() < 100
    np.testing.assert_array_equal(b, c.bags(100, 30, 0.6, seed=4))
    assert not np.array_equal(b, c.bags(100, 30, 0.6, seed=5))


@pytest.mark.parametrize("n,m,f", [(10, 3, 0.5), (2016, 30, 0.6), (7, 30, 0.6), (4, 3, 0.75),
                                   (50, 2, 0.5), (13, 5, 0.3)])
def test_design_bagging_covers_everything_before_reuse(n: int, m: int, f: float) -> None:
    bags, order = c.design_bags(n, m, f, seed=2, return_order=True)
    b = bags.shape[1]
    assert m * b >= n
    assert sorted(order[:n].tolist()) == list(range(n))  # first n placements: each element once
    assert all(len(set(row)) == len(row) for row in bags.tolist())  # no repeats inside a bag
    counts = np.bincount(bags.ravel(), minlength=n)
    assert counts.min() >= 1


def test_design_bagging_balances_use_where_random_bagging_does_not() -> None:
    counts = np.bincount(c.design_bags(2016, 30, 0.6, seed=0).ravel(), minlength=2016)
    assert counts.max() - counts.min() <= 1  # 36,300 draws over 2,016 elements: 18 or 19 each
    rand = np.bincount(c.bags(2016, 30, 0.6, seed=0).ravel(), minlength=2016)
    assert rand.max() - rand.min() > 5


def test_bagged_hand_computed() -> None:
    x = np.array([0.0, 1, 2, 3])
    idx = np.array([[0, 1], [2, 3]])
    assert c.bagged(x, idx, "mean") == 1.5
    assert c.bagged(x, idx, "variance") == 0.25
    assert c.bagged(x, idx, "cov") == pytest.approx((0.5 / 0.5 + 0.5 / 2.5) / 2)
    X = np.stack([x, 2 * x])
    np.testing.assert_allclose(c.bagged(X, idx, "mean"), [1.5, 3.0])


def test_leave_one_out_hand_computed() -> None:
    x = np.array([1.0, 2, 3, 10])
    rows = c.leave_one_out(x, ["a", "a", "b", "b"], eps=[2.0])
    assert [r["left_out"] for r in rows] == [None, "a", "b"]
    assert rows[0]["mean"] == 4.0 and rows[0]["n"] == 4
    assert rows[1]["mean"] == 6.5 and rows[1]["variance"] == 12.25
    assert rows[1]["cov"] == pytest.approx(3.5 / 6.5)
    assert rows[2]["mean"] == 1.5
    assert rows[1]["gamma"]["2"] == pytest.approx(1.0 * 4 / 24.5)


def test_leave_one_out_with_bagging_is_seeded_and_needs_two_domains() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(60)
    dom = ["a"] * 20 + ["b"] * 20 + ["c"] * 20
    r1 = c.leave_one_out(x, dom, resample="design", n_bags=5, fraction=0.5, seed=3)
    r2 = c.leave_one_out(x, dom, resample="design", n_bags=5, fraction=0.5, seed=3)
    assert r1 == r2
    with pytest.raises(ValueError, match="at least 2 domains"):
        c.leave_one_out(x, ["a"] * 60)
    with pytest.raises(ValueError, match="labels"):
        c.leave_one_out(x, ["a", "b"])


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 300), st.integers(1, 40), st.floats(0.05, 1.0), st.integers(0, 10**6))
def test_design_bagging_coverage_property(n: int, m: int, f: float, seed: int) -> None:
    bags, order = c.design_bags(n, m, f, seed=seed, return_order=True)
    b = bags.shape[1]
    assert all(len(set(row)) == len(row) for row in bags.tolist())
    k = min(n, m * b)
    assert len(set(order[:k].tolist())) == k  # no element twice before all have been used


# ---- values the mutation run found unchecked (bench/mutation.py): each one hand-computed -------

#: |x − 4| = [3, 2, 1, 0, 6]; population variance 50/5 = 10, sample variance 50/4 = 12.5
X5 = [1.0, 2.0, 3.0, 4.0, 10.0]


def test_mean_variance_cov_and_dispersion_hand_computed() -> None:
    assert c.mean(X5) == 4.0
    assert c.variance(X5) == 10.0 and c.variance(X5, ddof=1) == 12.5
    assert c.variance([5.0], ddof=1) == 0.0 and c.variance([5.0]) == 0.0
    assert c.variance([[1.0, 3.0], [2.0, 2.0]]).tolist() == [1.0, 0.0]
    assert c.cov(X5) == pytest.approx(np.sqrt(10) / 4)
    assert c.cov(X5, ddof=1) == pytest.approx(np.sqrt(12.5) / 4)
    assert c.cov([-1.0, -3.0]) == 0.5  # σ over |μ|
    assert c.dispersion_index(X5) == 2.5 and c.dispersion_index(X5, ddof=1) == 3.125
    assert c.dispersion_index([-1.0, -3.0]) == 0.5
    assert c.dispersion_index([2.0, 2.0]) == 0.0
    assert c.dispersion_index([-1.0, 1.0]) == np.inf
    for bad in (3.0, [], np.zeros((2, 0))):
        with pytest.raises(ValueError, match="^consistency metrics need at least one score "
                                             "along the last axis$"):
            c.mean(bad)


def test_gamma_and_its_bounds_hand_computed() -> None:
    # sample σ² = 12.5: γ(ε) = Pr[|x−μ| ≥ ε]·ε²/12.5
    assert c.gamma(X5, 1.0) == pytest.approx(0.8 / 12.5)
    assert c.gamma(X5, 2.0) == pytest.approx(0.6 * 4 / 12.5)
    assert c.gamma(X5, 3.0) == pytest.approx(0.4 * 9 / 12.5)   # a deviation equal to ε counts
    assert c.gamma(X5, 6.5) == 0.0
    assert c.gamma(X5, 5.0, ddof=0) == pytest.approx(0.2 * 25 / 10)
    assert c.chebyshev_bound(X5, 5.0) == 0.5
    assert c.chebyshev_bound(X5, 2.0) == 1.0  # 12.5/4 capped
    assert c.chebyshev_bound(X5, [5.0, 10.0]).tolist() == [0.5, 0.125]
    assert c.chebyshev_bound(X5, 5.0, ddof=0) == 0.4
    assert c.chebyshev_bound([[1.0, 3.0], [2.0, 2.0]], 1.0, ddof=0).tolist() == [1.0, 0.0]
    # the γ curve and its AUC over ε = 1..100: non-zero only for ε ≤ 6
    curve = c.gamma_curve(X5)
    head = [0.8 * 1, 0.6 * 4, 0.4 * 9, 0.2 * 16, 0.2 * 25, 0.2 * 36]
    assert curve.shape == (100,)
    assert curve[:6] == pytest.approx([h / 12.5 for h in head]) and not curve[6:].any()
    assert c.gamma_auc(X5) == pytest.approx(sum(head) / 12.5 / 100)
    assert c.gamma_auc(X5, [1.0, 2.0]) == pytest.approx((0.064 + 0.192) / 2)
    assert c.gamma_auc(X5, [5.0], ddof=0) == pytest.approx(0.5)


@pytest.mark.parametrize("eps", [0.0, -1.0, np.inf, np.nan, [[1.0, 2.0]], [1.0, 0.0]])
def test_eps_must_be_positive_finite_1d(eps: object) -> None:
    with pytest.raises(ValueError, match="^ε must be a positive finite number or a 1-D grid of "
                                         "them$"):
        c.gamma(X5, eps)


def test_gamma_cov_scaled_hand_computed() -> None:
    # CoV (sample σ) = √12.5/4, so ε = ε'·CoV has ε² = ε'²·12.5/16
    assert c.gamma_cov_scaled(X5, 2.0) == pytest.approx(0.6 * 3.125 / 12.5)  # ε ≈ 1.77
    assert c.gamma_cov_scaled(X5, 4.0) == pytest.approx(0.2)                # ε ≈ 3.54
    m = c.gamma_cov_scaled([X5, [5.0] * 5, [-1.0, 1.0, 0.0, 0.0, 0.0]], [2.0, 4.0])
    assert m.shape == (3, 2)
    assert m[0] == pytest.approx([0.15, 0.2]) and m[1:].tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert c.gamma_cov_scaled(X5, 2.0, ddof=0) == pytest.approx(0.6 * 2.5 / 10)  # ε² = 4·10/16


def test_spread_scale_median_then_pooled_then_one() -> None:
    # per-row sample σ: √2, 0, 2√2 → median √2
    assert c.spread_scale([[1.0, 3.0], [2.0, 2.0], [0.0, 4.0]]) == pytest.approx(np.sqrt(2))
    assert c.spread_scale([[1.0, 3.0], [2.0, 2.0], [0.0, 4.0]], ddof=0) == 1.0  # σ 1, 0, 2
    assert c.spread_scale([1.0, 3.0]) == pytest.approx(np.sqrt(2))  # one system
    pooled = [[1.0, 1.0], [2.0, 2.0], [0.0, 4.0]]  # median 0 → σ of all six scores
    assert c.spread_scale(pooled) == pytest.approx(np.std([1, 1, 2, 2, 0, 4], ddof=1))
    assert c.spread_scale([[5.0], [7.0]]) == pytest.approx(np.sqrt(2))  # one score a row
    assert c.spread_scale([[3.0, 3.0], [3.0, 3.0]]) == 1.0
    assert c.spread_scale([[5.0]]) == 1.0


def test_eps_grid_fixed_and_sigma_and_their_descriptions() -> None:
    x = [[1.0, 3.0], [2.0, 2.0], [0.0, 4.0]]  # σ_ref √2
    grid, desc = c.eps_grid(x)
    assert grid.tolist() == list(range(1, 101)) and desc == {"eps_grid": "fixed", "grid_max": 100}
    grid, desc = c.eps_grid(x, "fixed", grid_max=3)
    assert grid.tolist() == [1.0, 2.0, 3.0] and desc == {"eps_grid": "fixed", "grid_max": 3}
    assert c.eps_grid(x, grid_max=1)[0].tolist() == [1.0]
    grid, desc = c.eps_grid(x, "sigma", n=3, t_range=(0.5, 1.5))
    assert grid == pytest.approx(np.array([0.5, 1.0, 1.5]) * np.sqrt(2))
    assert desc == {"eps_grid": "sigma", "sigma_ref": pytest.approx(np.sqrt(2)), "t": [0.5, 1.5],
                    "n": 3}
    grid, desc = c.eps_grid(x, "sigma")
    assert grid.size == 100 and desc["n"] == 100 and desc["t"] == [0.05, 3.0]
    assert grid[0] == pytest.approx(0.05 * np.sqrt(2)) and grid[-1] == pytest.approx(3 * np.sqrt(2))
    assert c.eps_grid(x, "sigma", n=2, sigma_ref=2.0)[0].tolist() == [0.1, 6.0]
    assert c.eps_grid(x, "sigma", n=2, sigma_ref=2.0)[1]["sigma_ref"] == 2.0
    for ref in (0.0, -1.0, None):  # not a usable σ_ref: the scores' own
        assert c.eps_grid(x, "sigma", n=2, sigma_ref=ref)[1]["sigma_ref"] == pytest.approx(
            np.sqrt(2))


@pytest.mark.parametrize("kw,msg", [
    ({"grid_max": 0}, r"^grid_max must be >= 1, got 0$"),
    ({"kind": "sigma", "t_range": (0.0, 1.0)}, r"^σ grid needs 0 < t_lo < t_hi and n >= 2, got "
                                               r"\(0.0, 1.0\), 100$"),
    ({"kind": "sigma", "t_range": (1.0, 1.0)}, "σ grid needs"),
    ({"kind": "sigma", "t_range": (2.0, 1.0)}, "σ grid needs"),
    ({"kind": "sigma", "n": 1}, r"got \(0.05, 3.0\), 1$"),
    ({"kind": "linear"}, r"^unknown ε grid 'linear'; choose from fixed, sigma$"),
])
def test_eps_grid_refuses(kw: dict, msg: str) -> None:
    with pytest.raises(ValueError, match=msg):
        c.eps_grid([[1.0, 2.0]], **kw)


def test_normalize_curves_by_the_joint_maximum() -> None:
    out = c.normalize_curves([[0.0, 1.0, 2.0], [0.0, 4.0, 1.0]])
    assert out.tolist() == [[0.0, 0.25, 0.5], [0.0, 1.0, 0.25]]
    assert c.normalize_curves([[0.0, np.nan, 2.0]])[0, 2] == 1.0
    assert c.normalize_curves([[0.0, 0.0]]).tolist() == [[0.0, 0.0]]
    assert c.normalize_curves(np.zeros((0, 3))).shape == (0, 3)


def test_summarize_hand_computed() -> None:
    out = c.summarize(X5, eps=(1.0, 2.5, 5.0), grid=[1.0, 2.0])
    assert out == {"n": 5, "mean": 4.0, "variance": 10.0, "cov": pytest.approx(np.sqrt(10) / 4),
                   "gamma": {"1": pytest.approx(0.064), "2.5": pytest.approx(0.4 * 6.25 / 12.5),
                             "5": pytest.approx(0.4)},
                   "gamma_auc": pytest.approx(0.128)}
    default = c.summarize(X5)
    assert list(default["gamma"]) == ["1", "5", "10", "20", "50"]
    assert default["gamma"]["10"] == 0.0 and default["gamma"]["5"] == pytest.approx(0.4)
    assert default["gamma_auc"] == pytest.approx(c.gamma_auc(X5))
    with pytest.raises(ValueError, match=r"^summarize\(\) takes one score vector$"):
        c.summarize([X5, X5])


def test_bag_sizes_and_methods() -> None:
    assert c.bags(5, 2, 0.6).shape == (2, 3)
    assert c.bags(5, 4, 0.01).shape == (4, 1)
    assert c.bags(10).shape == (30, 6)  # the paper's 30 bags of 60 %
    whole = c.bags(5, 3, 1.0, seed=1)
    assert whole.shape == (3, 5) and all(sorted(r) == [0, 1, 2, 3, 4] for r in whole.tolist())
    assert not (c.bags(5, 3, 1.0, seed=1) == c.bags(5, 3, 1.0, seed=2)).all()
    for method in ("bagging", "bag"):
        assert (c.make_bags(20, method, 4, 0.5, seed=7) == c.bags(20, 4, 0.5, 7)).all()
    for method in ("design", "design_bagging"):
        assert (c.make_bags(20, method, 4, 0.5, seed=7) == c.design_bags(20, 4, 0.5, 7)).all()
    assert (c.make_bags(20) == c.bags(20)).all()
    with pytest.raises(ValueError, match=r"^unknown bagging method 'boot'; use 'bagging' or "
                                         r"'design'$"):
        c.make_bags(20, "boot")
    for f in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match=rf"^bag fraction must be in \(0, 1\], got {f}$"):
            c.bags(10, 2, f)
    with pytest.raises(ValueError, match="^cannot bag an empty pool$"):
        c.bags(0)
    assert c.design_bags(10).shape == (30, 6)
    assert c.design_bags(5, 2, 1.0).shape == (2, 5)


def test_design_bags_fall_back_when_the_least_used_are_in_the_bag() -> None:
    # one bag over all 3 elements: after two picks the least-used level holds only elements
    # already in the bag, so the explicit fallback must find the third
    out = c.design_bags(3, 1, 1.0, seed=0)
    assert sorted(out[0].tolist()) == [0, 1, 2]
    out, order = c.design_bags(4, 3, 0.75, seed=5, return_order=True)
    assert sorted(order[:4].tolist()) == [0, 1, 2, 3]
    counts = np.bincount(out.reshape(-1), minlength=4)
    assert counts.max() - counts.min() <= 1  # 9 uses over 4 elements: 3, 2, 2, 2
    assert all(len(set(r)) == 3 for r in out.tolist())


def test_bagged_averages_over_bags_per_system() -> None:
    x = np.array([[1.0, 2.0, 3.0, 6.0], [0.0, 0.0, 4.0, 4.0]])
    idx = np.array([[0, 1], [2, 3]])
    assert c.bagged(x, idx, "mean").tolist() == [(1.5 + 4.5) / 2, (0.0 + 4.0) / 2]
    assert c.bagged(x, idx, "variance").tolist() == [(0.25 + 2.25) / 2, 0.0]
    assert c.bagged(x[0], idx, lambda a: a.max(axis=-1)) == 4.0
    assert c.bagged(x[0], idx) == pytest.approx((0.5 / 1.5 + 1.5 / 4.5) / 2)  # CoV by default


def test_leave_one_out_rows_for_a_matrix_with_gamma_and_resampling() -> None:
    x = np.array([[1.0, 2.0, 3.0, 10.0], [2.0, 2.0, 2.0, 2.0]])
    rows = c.leave_one_out(x, ["a", "a", "b", "b"], eps=[2.0, 2.5])
    assert [(r["left_out"], r["n"]) for r in rows] == [(None, 4), ("a", 2), ("b", 2)]
    assert rows[1]["mean"] == [6.5, 2.0] and rows[1]["variance"] == [12.25, 0.0]
    assert rows[1]["cov"] == [pytest.approx(3.5 / 6.5), 0.0]
    assert rows[2]["gamma"] == {"2": [0.0, 0.0], "2.5": [0.0, 0.0]}  # |1.5−x| = 0.5
    assert rows[1]["gamma"]["2.5"] == [pytest.approx(6.25 / 24.5), 0.0]
    assert "gamma" not in c.leave_one_out(x, ["a", "a", "b", "b"])[0]
    bag = c.leave_one_out(x, ["a", "a", "b", "b"], resample="bagging", n_bags=3, fraction=0.5,
                          seed=4, eps=[1.0])
    for k, row in enumerate(bag):  # row k bagged with seed + k over what remains
        keep = [i for i, d in enumerate("aabb") if d != row["left_out"]]
        idx = c.make_bags(len(keep), "bagging", 3, 0.5, 4 + k)
        assert row["mean"] == pytest.approx(c.bagged(x[:, keep], idx, "mean").tolist())
        assert row["cov"] == pytest.approx(c.bagged(x[:, keep], idx, "cov").tolist())
        assert row["gamma"]["1"] == pytest.approx(
            c.bagged(x[:, keep], idx, lambda a: c.gamma(a, [1.0])).reshape(-1).tolist())
    with pytest.raises(ValueError, match=r"^3 domain labels for 4 scores$"):
        c.leave_one_out(x, ["a", "b", "b"])
    with pytest.raises(ValueError, match=r"^leave-one-domain-out needs at least 2 domains, got "
                                         r"\['a'\]$"):
        c.leave_one_out(x, ["a"] * 4)


def test_scalar_eps_gives_a_scalar_and_a_small_sigma_ref_is_used() -> None:
    assert isinstance(c.gamma_cov_scaled(X5, 2.0), float)
    assert c.gamma_cov_scaled(X5, [2.0]).shape == (1,)
    assert c.gamma_cov_scaled([X5, X5], 2.0).shape == (2,)
    assert c.eps_grid([[1.0, 3.0]], "sigma", n=2, sigma_ref=0.5)[1]["sigma_ref"] == 0.5


def test_dispersion_index_of_zero_mean_warns_nothing() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert c.dispersion_index([-1.0, 1.0]) == np.inf
        assert c.cov([-1.0, 1.0]) == np.inf


def test_design_bags_are_pinned_for_a_seed_and_order_is_indices() -> None:
    # pinned: stored bagged figures of a run must reproduce from its seed
    bags, order = c.design_bags(10, 3, 0.5, seed=1, return_order=True)
    assert bags.tolist() == [[8, 2, 3, 0, 7], [5, 6, 9, 2, 8], [1, 7, 4, 5, 6]]
    assert order.tolist() == [5, 8, 1, 6, 7, 2, 3, 9, 4, 0, 5, 2, 6, 8, 7]
    assert order.dtype == np.int64 and bags.dtype == np.int64
