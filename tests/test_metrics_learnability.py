"""Learnability / CENT metrics against hand-computed values (paper 000 Eq. 1–5, App. D/E)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robustlab.metrics.learnability import (
    DEFAULT_P_GRID,
    at_p_table,
    cent_sensitivity,
    learnability_ate,
    learnability_prob,
    log_auc,
    max_log_auc,
    post_augmentation_delta,
    robustness,
    seed_spread,
    spearman,
)


def test_log_auc_of_ones_is_exactly_three():
    assert log_auc(DEFAULT_P_GRID, [1.0] * 8) == 3.0
    assert max_log_auc() == 3.0


def test_log_auc_hand_computed():
    # two points: trapezoid over log10(0.01) .. log10(1) = 2 decades, mean height 0.5
    assert log_auc([0.01, 1.0], [0.0, 1.0]) == pytest.approx(1.0)
    # three points, log10 x = -2, -1, 0: 1*(0+0.5)/2 + 1*(0.5+1)/2 = 1.0
    assert log_auc([0.01, 0.1, 1.0], [0.0, 0.5, 1.0]) == pytest.approx(1.0)
    # only p = 1 learned on the default grid: last segment is log10(1) - log10(0.5)
    vals = [0, 0, 0, 0, 0, 0, 0, 1.0]
    assert log_auc(DEFAULT_P_GRID, vals) == pytest.approx(math.log10(2) / 2)
    assert log_auc(DEFAULT_P_GRID, [0.0] * 8) == 0.0


def test_log_auc_rejects_bad_grids():
    with pytest.raises(ValueError):
        log_auc([0.1, 0.01], [1, 1])
    with pytest.raises(ValueError):
        log_auc([0.0, 1.0], [1, 1])
    with pytest.raises(ValueError):
        log_auc([0.5], [1])
    with pytest.raises(ValueError):
        log_auc([0.1, 1.0], [1])


def test_accuracy_ate_hand_computed():
    labels = np.array([1, 1, 1, 1, 0, 0])
    treated = labels == 1
    clean = np.array([0, 0, 1, 0, 0, 1])  # correct on treated: 1 of 4
    pert = np.array([1, 1, 1, 0, 1, 1])   # correct on treated: 3 of 4
    assert learnability_ate(pert, clean, labels, treated) == pytest.approx(0.5)
    # untreated examples do not enter (their ITE is defined as 0 and left out)
    pert2 = pert.copy()
    pert2[4:] = [0, 0]
    assert learnability_ate(pert2, clean, labels, treated) == pytest.approx(0.5)
    # a model that fully learned the perturbation scores 1.0, not 0.5
    assert learnability_ate([1, 1], [0, 0], [1, 1], [True, True]) == 1.0
    assert cent_sensitivity is learnability_ate
    assert math.isnan(learnability_ate([1], [1], [0], [False]))


def test_probability_ate_hand_computed():
    # the paper's Appendix D example: P(l'=1) 0.1 before, 0.9 after -> ITE 0.8
    clean = np.array([[0.9, 0.1], [0.5, 0.5], [0.3, 0.7]])
    pert = np.array([[0.1, 0.9], [0.2, 0.8], [0.6, 0.4]])
    labels = np.array([1, 1, 0])
    got = learnability_prob(pert, clean, labels, labels == 1)
    assert got == pytest.approx((0.8 + 0.3) / 2)
    with pytest.raises(ValueError):
        learnability_prob(pert[:2], clean, labels)


def test_robustness_and_delta():
    assert robustness(0.7, 0.9) == pytest.approx(-0.2)
    assert post_augmentation_delta(0.85, 0.7) == pytest.approx(0.15)
    np.testing.assert_allclose(robustness([0.5, 0.6], [0.8, 0.8]), [-0.3, -0.2])


def test_seed_spread():
    s = seed_spread([0.2, 0.4, 0.6])
    assert s["mean"] == pytest.approx(0.4)
    assert s["std"] == pytest.approx(0.2)  # sample std of 0.2, 0.4, 0.6
    assert s["n"] == 3
    one = seed_spread([0.5])
    assert one["std"] == 0.0
    nan = seed_spread([float("nan"), 1.0])
    assert nan["n"] == 1 and nan["values"] == [None, 1.0]


def test_spearman_uses_scipy_and_handles_degenerate_input():
    from scipy import stats

    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    y = [5.0, 6.0, 7.0, 8.0, 7.5]
    got = spearman(x, y)
    ref = stats.spearmanr(x, y)
    assert got["rho"] == pytest.approx(ref.statistic)
    assert got["n"] == 5 and got["p_method"] == "exact"  # n ≤ 8: every pairing, not the t-approx.
    assert spearman([1, 2, 3], [1, 2, 3])["p_value"] == pytest.approx(1 / 3)
    big = list(range(30))
    assert spearman(big, big[::-1])["p_value"] == pytest.approx(stats.spearmanr(big, big[::-1]).pvalue)
    assert spearman([1, 2, 3], [3, 2, 1])["rho"] == pytest.approx(-1.0)
    assert spearman([1, 2], [1, 2])["rho"] is None
    assert spearman([1, 1, 1], [1, 2, 3])["rho"] is None
    assert spearman([1, 2, 3, float("nan")], [1, 2, 3, 4])["n"] == 3


def test_at_p_table():
    avg = [0.5, 1.0, 1.5, 2.0]
    table = at_p_table({0.01: [0.1, 0.2, 0.3, 0.4], 1.0: [1.0, 1.0, 1.0, 1.0]}, avg,
                       robustness_values=[-0.1, -0.2, -0.3, -0.4])
    assert table[0.01]["sigma"] == pytest.approx(np.std([0.1, 0.2, 0.3, 0.4]))
    assert table[0.01]["rho_with_avg"] == pytest.approx(1.0)
    assert table[0.01]["rho_with_robustness"] == pytest.approx(-1.0)
    assert table[1.0]["sigma"] == 0.0
    assert table[1.0]["rho_with_avg"] is None  # constant learnability@1: rho undefined
