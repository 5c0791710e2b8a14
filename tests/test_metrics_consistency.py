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
