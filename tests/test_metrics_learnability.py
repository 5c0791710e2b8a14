"""Learnability / CENT metrics against hand-computed values (paper 000 Eq. 1–5, App. D/E)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from robustlab.metrics import learnability as L
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


# ---- values the mutation run found unchecked (bench/mutation.py): each one hand-computed -------


def test_log_auc_trapezoid_and_messages() -> None:
    # x = log10 p = −2, −1, 0: (0 + 1)/2 + (1 + 1)/2
    assert L.log_auc([0.01, 0.1, 1.0], [0.0, 1.0, 1.0]) == 1.5
    assert L.max_log_auc() == 3.0 and L.max_log_auc([0.1, 1.0]) == 1.0
    assert L.log_auc([0.001, 1.0], [1.0, 1.0]) == 3.0
    for grid, vals, msg in [
        ([0.1, 1.0], [1.0], r"^p_grid and values differ in shape: \(2,\) vs \(1,\)$"),
        ([[0.1, 1.0]], [[1.0, 1.0]], r"differ in shape: \(1, 2\) vs \(1, 2\)$"),
        ([0.5], [1.0], "^log_auc needs at least two perturbation probabilities$"),
        ([0.0, 1.0], [1.0, 1.0], r"^perturbation probabilities must lie in \(0, 1\]$"),
        ([0.5, 1.5], [1.0, 1.0], r"^perturbation probabilities must lie in \(0, 1\]$"),
        ([0.5, 0.5], [1.0, 1.0], "^p_grid must be strictly increasing$"),
        ([0.5, 0.1], [1.0, 1.0], "^p_grid must be strictly increasing$")]:
        with pytest.raises(ValueError, match=msg):
            L.log_auc(grid, vals)


def test_probability_ate_treated_half_and_shapes() -> None:
    pp = [[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]]
    pc = [[0.5, 0.5], [0.9, 0.1], [0.3, 0.7]]
    # P(l'|x*) − P(l'|x): 0.8−0.5, 0.4−0.1, 0.5−0.3
    assert L.learnability_prob(pp, pc, [1, 1, 0], [True, True, False]) == pytest.approx(0.3)
    assert L.learnability_prob(pp, pc, [1, 1, 0]) == pytest.approx(0.8 / 3)
    assert L.learnability_prob(pp, pc, [0, 0, 1], [1, 0, 0]) == pytest.approx(-0.3)
    assert math.isnan(L.learnability_prob(pp, pc, [1, 1, 0], [False] * 3))
    with pytest.raises(ValueError, match=r"^shapes differ: perturbed \(3, 2\), clean \(2, 2\), "
                                         r"labels \(3,\)$"):
        L.learnability_prob(pp, pc[:2], [1, 1, 0])
    with pytest.raises(ValueError, match="shapes differ"):
        L.learnability_prob(pp, pc, [1, 1])
    with pytest.raises(ValueError, match="shapes differ"):
        L.learnability_prob([0.2, 0.8], [0.5, 0.5], [1, 1])
    with pytest.raises(ValueError, match=r"^treated mask has shape \(2,\), labels \(3,\)$"):
        L.learnability_prob(pp, pc, [1, 1, 0], [True, False])


def test_accuracy_ate_shapes_and_nothing_treated() -> None:
    assert L.learnability_ate([1, 1, 0], [0, 1, 0], [1, 1, 1]) == pytest.approx(1 / 3)
    assert L.learnability_ate([1, 1, 0], [0, 1, 0], [1, 1, 1], [1, 0, 1]) == 0.5
    assert math.isnan(L.learnability_ate([1], [0], [1], [False]))
    with pytest.raises(ValueError, match=r"^shapes differ: perturbed \(2,\), clean \(3,\), "
                                         r"labels \(3,\)$"):
        L.learnability_ate([1, 1], [0, 1, 0], [1, 1, 1])
    with pytest.raises(ValueError, match="shapes differ"):
        L.learnability_ate([[1]], [[0]], [[1]])
    with pytest.raises(ValueError, match="shapes differ"):
        L.learnability_ate([1, 1], [1, 1], [1, 1, 1])


def test_robustness_and_delta_directions() -> None:
    assert L.robustness(0.7, 0.9) == pytest.approx(-0.2)   # A1 − A0
    assert L.post_augmentation_delta(0.8, 0.7) == pytest.approx(0.1)  # A2 − A1


def test_seed_spread_cases() -> None:
    assert L.seed_spread([1.0, 3.0, math.nan]) == {"mean": 2.0, "std": pytest.approx(math.sqrt(2)),
                                                   "n": 2, "values": [1.0, 3.0, None]}
    assert L.seed_spread([5]) == {"mean": 5.0, "std": 0.0, "n": 1, "values": [5.0]}
    assert L.seed_spread([]) == {"mean": None, "std": None, "n": 0, "values": []}
    assert L.seed_spread([math.nan, math.inf]) == {"mean": None, "std": None, "n": 0,
                                                   "values": [None, None]}


def test_at_p_table_sigma_and_exact_rhos() -> None:
    vals = [0.1, 0.4, 0.2, 0.3]
    out = L.at_p_table({"0.02": vals, 0.5: [0.1, 0.1, math.nan, 0.1]}, [1, 4, 2, 3],
                       robustness_values=[-1, -4, -2, -3], delta_values=[4, 1, 2, 3])
    assert list(out) == [0.02, 0.5]
    row = out[0.02]
    delta = stats.spearmanr(vals, [4, 1, 2, 3])
    # σ: deviations ±0.15, ±0.05 around 0.25 → √(0.05/4); ρ = ±1 at n = 4: exact p = 2/24
    assert row == {"sigma": pytest.approx(math.sqrt(0.05 / 4)), "rho_with_avg": pytest.approx(1.0),
                   "p_value": pytest.approx(1 / 12), "rho_with_robustness": pytest.approx(-1.0),
                   "p_value_robustness": pytest.approx(1 / 12),
                   "rho_with_delta": pytest.approx(delta.statistic),
                   "p_value_delta": pytest.approx(L.spearman(vals, [4, 1, 2, 3])["p_value"])}
    assert out[0.5]["sigma"] == pytest.approx(0.0, abs=1e-15)  # NaN left out of σ
    assert out[0.5]["rho_with_avg"] is None
    bare = L.at_p_table({0.1: [math.nan, math.nan]}, [1, 2])
    assert bare == {0.1: {"sigma": None, "rho_with_avg": None, "p_value": None}}


def test_most_discriminating_p_largest_finite_sigma_first_on_ties() -> None:
    table = {"0.01": {"sigma": 0.2, "rho_with_avg": 0.5},
             0.02: {"sigma": 0.3, "rho_with_avg": 0.7},
             "avg": {"sigma": 9.0}, None: {"sigma": 8.0},
             0.5: {"sigma": None}, 1.0: {"sigma": math.nan}, 0.7: {"sigma": math.inf},
             0.1: {"sigma": 0.3, "rho_with_avg": 0.1}, 0.2: {"rho_with_avg": 0.9}}
    assert L.most_discriminating_p(table) == {"p": 0.02, "sigma": 0.3, "rho_with_avg": 0.7}
    assert L.most_discriminating_p({"0.01": {"sigma": 0.0}}) == {"p": 0.01, "sigma": 0.0,
                                                                 "rho_with_avg": None}
    assert L.most_discriminating_p({}) is None
    assert L.most_discriminating_p({0.5: {"sigma": None}, "avg": {"sigma": 1.0}}) is None


def test_seed_noise_hand_computed() -> None:
    m = [[1.0, 3.0], [2.0, 2.0], [5.0, math.nan], [math.nan, math.nan]]
    # seed variances (ddof 1) of the rows with 2 seeds: 2, 0 → seed_std 1; pair means 2, 2, 5:
    # population σ √2; k = mean seeds per pair 5/3; reliability 1 − (1/k)/2 = 0.7
    assert L.seed_noise(m) == {"seed_std": 1.0, "sigma_pairs": pytest.approx(math.sqrt(2)),
                               "noise_ratio": pytest.approx(1 / math.sqrt(2)),
                               "reliability": pytest.approx(0.7), "n_pairs": 3,
                               "n_seeds": pytest.approx(5 / 3)}
    assert L.seed_noise([[math.nan, math.nan]]) == {"seed_std": None, "sigma_pairs": None,
                                                    "noise_ratio": None, "reliability": None,
                                                    "n_pairs": 0, "n_seeds": 0.0}
    assert L.seed_noise([[1.0, 3.0]]) == {"seed_std": pytest.approx(math.sqrt(2)),
                                          "sigma_pairs": 0.0, "noise_ratio": None,
                                          "reliability": None, "n_pairs": 1, "n_seeds": 2.0}
    assert L.seed_noise([[1.0], [3.0]]) == {"seed_std": None, "sigma_pairs": 1.0,
                                            "noise_ratio": None, "reliability": None,
                                            "n_pairs": 2, "n_seeds": 1.0}
    with pytest.raises(ValueError, match=r"^seed_noise: expected a pairs × seeds matrix, got "
                                         r"shape \(2,\)$"):
        L.seed_noise([1.0, 2.0])


def test_most_discriminating_p_reads_past_rows_it_skips() -> None:
    assert L.most_discriminating_p({"avg": {"sigma": 9.0}, 0.1: {"sigma": 0.2}})["p"] == 0.1
    assert L.most_discriminating_p({0.5: {"sigma": None}, 0.1: {"sigma": 0.2}})["p"] == 0.1
    assert L.most_discriminating_p({0.5: {"sigma": math.nan}, 0.2: {"sigma": 0.1}})["p"] == 0.2
