"""System rankings and their agreement with a human ranking (paper 004, Tables 7–8): values
computed by hand and by scipy (``kendalltau``, ``spearmanr``, a brute-force permutation
distribution), not by the code under test."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from robustlab.metrics import ranking as r

#: the paper's orientation of each metric (higher is better?), written out by hand
ORIENTATION = {"bleu": True, "chrf": True, "ter": False, "mean": True, "human": True,
               "accuracy": True, "variance": False, "cov": False, "gamma": False,
               "gamma_auc": False}


@pytest.mark.parametrize("name,higher", sorted(ORIENTATION.items()))
def test_each_metric_has_the_papers_orientation(name: str, higher: bool) -> None:
    assert r.orient(name) is higher


def test_an_unknown_metric_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown orientation for metric 'bertscore'; known: "
                                         r"bleu, chrf, ter, mean, human, accuracy, variance, cov, "
                                         r"gamma, gamma_auc$"):
        r.orient("bertscore")


def test_rank_best_first_ties_broken_by_name() -> None:
    scores = {"b": 1.0, "a": 1.0, "c": 2.0, "d": 0.5}
    assert r.rank(scores) == ["c", "a", "b", "d"]
    assert r.rank(scores, higher_is_better=True) == ["c", "a", "b", "d"]
    assert r.rank(scores, higher_is_better=False) == ["d", "a", "b", "c"]
    assert r.rank({"x": "3", "y": "10"}) == ["y", "x"]  # numbers, not strings, are compared


def test_rankings_orient_each_metric_by_its_name() -> None:
    out = r.rankings({"bleu": {"A": 30.0, "B": 20.0, "C": 25.0},
                      "ter": {"A": 50.0, "B": 40.0, "C": 60.0}})
    assert out == {"by_bleu": ["A", "C", "B"], "by_ter": ["B", "A", "C"]}


def test_pairwise_agreement_hand_computed() -> None:
    a = {"A": 3.0, "B": 2.0, "C": 1.0, "only_a": 9.0}
    b = {"A": 1.0, "B": 2.0, "C": 3.0, "only_b": 0.0}
    # b reversed: every one of the 3 common pairs disagrees ...
    assert r.pairwise_agreement(a, b) == {"pairwise": 0.0, "n_pairs": 3, "agree": 0,
                                          "disagree": 3, "ties": 0}
    # ... and agrees once b is read lower-is-better (or a is)
    full = {"pairwise": 1.0, "n_pairs": 3, "agree": 3, "disagree": 0, "ties": 0}
    assert r.pairwise_agreement(a, b, True, False) == full
    assert r.pairwise_agreement(a, b, a_higher=False, b_higher=True) == full
    assert r.pairwise_agreement(a, b, a_higher=False, b_higher=False)["pairwise"] == 0.0


def test_pairwise_agreement_counts_a_tie_on_either_side_as_half() -> None:
    # pairs: (A,B) tied in a; (A,D) tied in b; (A,C), (B,C), (B,D), (C,D) agree; E is last
    # by a and first by b, so its 4 pairs disagree → (4 + 2 / 2) / 10
    a = {"A": 1.0, "B": 1.0, "C": 2.0, "D": 0.0, "E": -5.0}
    b = {"A": 1.0, "B": 2.0, "C": 3.0, "D": 1.0, "E": 9.0}
    assert r.pairwise_agreement(a, b) == {"pairwise": 0.5, "n_pairs": 10, "agree": 4,
                                          "disagree": 4, "ties": 2}


@pytest.mark.parametrize("a,b", [({}, {}), ({"A": 1.0}, {"A": 2.0}),
                                 ({"A": 1.0, "B": 2.0}, {"C": 1.0, "D": 2.0})])
def test_pairwise_agreement_without_a_common_pair(a: dict, b: dict) -> None:
    assert r.pairwise_agreement(a, b) == {"pairwise": None, "n_pairs": 0, "agree": 0,
                                          "disagree": 0, "ties": 0}


def test_kendall_tau_equals_scipy_on_the_common_systems() -> None:
    a = {"A": 3.0, "B": 1.0, "C": 2.0, "D": 5.0, "E": 4.0, "x": 0.0}
    b = {"A": 2.0, "B": 1.0, "C": 4.0, "D": 5.0, "E": 3.0, "y": 0.0}
    ref = stats.kendalltau([3, 1, 2, 5, 4], [2, 1, 4, 5, 3])
    out = r.kendall_tau(a, b)
    assert out["n"] == 5
    assert out["kendall_tau"] == pytest.approx(ref.statistic) == pytest.approx(0.6)
    assert out["p_value"] == pytest.approx(ref.pvalue)
    # lower-is-better on one side flips the sign; on both it does not
    assert r.kendall_tau(a, b, b_higher=False)["kendall_tau"] == pytest.approx(-0.6)
    assert r.kendall_tau(a, b, a_higher=False)["kendall_tau"] == pytest.approx(-0.6)
    assert r.kendall_tau(a, b, False, False)["kendall_tau"] == pytest.approx(0.6)


def test_kendall_tau_undefined_cases_are_none() -> None:
    assert r.kendall_tau({"A": 1.0}, {"A": 1.0}) == {"kendall_tau": None, "p_value": None, "n": 1}
    # a constant side: scipy's NaN becomes None, n still counted
    assert r.kendall_tau({"A": 1.0, "B": 1.0, "C": 1.0},
                         {"A": 1.0, "B": 2.0, "C": 3.0}) == {"kendall_tau": None,
                                                              "p_value": None, "n": 3}
    two = r.kendall_tau({"A": 1.0, "B": 2.0}, {"A": 1.0, "B": 2.0})
    assert two["n"] == 2 and two["kendall_tau"] == pytest.approx(1.0)
    assert two["p_value"] == pytest.approx(1.0)


def test_agreement_against_human_per_metric() -> None:
    human = {"A": 80.0, "B": 70.0, "C": 60.0, "D": 50.0}
    metrics = {"bleu": {"A": 40.0, "B": 30.0, "C": 35.0, "D": 10.0},   # one swap (B,C)
               "ter": {"A": 30.0, "B": 40.0, "C": 50.0, "D": 60.0}}    # lower better: all agree
    out = r.agreement(metrics, human)
    bleu_tau = stats.kendalltau([40, 30, 35, 10], [80, 70, 60, 50])
    assert out["bleu"] == {"pairwise": 5 / 6, "kendall_tau": pytest.approx(bleu_tau.statistic),
                           "p_value": pytest.approx(bleu_tau.pvalue), "n_systems": 4,
                           "n_pairs": 6, "agree": 5, "disagree": 1, "ties": 0}
    assert out["ter"]["pairwise"] == 1.0 and out["ter"]["kendall_tau"] == pytest.approx(1.0)
    assert (out["ter"]["agree"], out["ter"]["disagree"], out["ter"]["ties"]) == (6, 0, 0)
    # a human score where lower is better (e.g. an error count) reverses every verdict
    low = r.agreement(metrics, human, human_higher=False)
    assert low["ter"]["pairwise"] == 0.0 and low["ter"]["kendall_tau"] == pytest.approx(-1.0)
    assert low["bleu"]["pairwise"] == 1 / 6


def _exact_spearman_p(x: list[float], y: list[float]) -> float:
    """Two-sided p of Spearman's ρ over every pairing (brute force; scipy's ρ for each)."""
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    perms = np.array(list(itertools.permutations(ry)))
    xc = rx - rx.mean()
    yc = perms - perms.mean(axis=1, keepdims=True)
    rhos = (yc @ xc) / (np.sqrt((xc ** 2).sum()) * np.sqrt((yc ** 2).sum(axis=1)))
    rho = stats.spearmanr(x, y).statistic
    return float(np.mean(np.abs(rhos) >= abs(rho) - 1e-12))


def test_spearman_three_pairs_is_exact_one_third() -> None:
    out = r.spearman_test([1, 2, 3], [10, 20, 30])
    assert out == {"rho": pytest.approx(1.0), "p_value": pytest.approx(1 / 3), "n": 3,
                   "p_method": "exact"}


@pytest.mark.parametrize("n", [4, 6, 8])
def test_spearman_small_n_equals_brute_force_permutations(n: int) -> None:
    rng = np.random.default_rng(n)
    x = list(rng.normal(size=n))
    y = [v + w for v, w in zip(x, rng.normal(scale=1.0, size=n), strict=False)]
    out = r.spearman_test(x, y)
    assert out["p_method"] == "exact" and out["n"] == n
    assert out["rho"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert out["p_value"] == pytest.approx(_exact_spearman_p(x, y), abs=1e-9)


def test_spearman_with_ties_uses_average_ranks() -> None:
    x, y = [1, 2, 2, 3, 4, 5], [2, 1, 3, 3, 5, 4]
    out = r.spearman_test(x, y)
    assert out["rho"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert out["p_value"] == pytest.approx(_exact_spearman_p(x, y), abs=1e-9)


def test_spearman_middle_n_is_a_seeded_permutation_test_near_the_exact_p() -> None:
    rng = np.random.default_rng(9)
    x = list(rng.normal(size=9))
    y = [v + w for v, w in zip(x, rng.normal(scale=1.5, size=9), strict=False)]
    out = r.spearman_test(x, y, seed=3)
    assert out["p_method"] == "permutation" and out["n"] == 9
    exact = _exact_spearman_p(x, y)
    assert 0.02 < exact < 0.98
    assert out["p_value"] == pytest.approx(exact, abs=0.01)  # 19,999 resamples: SE < 0.004
    assert r.spearman_test(x, y, seed=3) == out
    assert r.spearman_test(x, y, seed=4)["p_value"] != out["p_value"]
    n19 = r.spearman_test(list(range(19)), list(range(19)))
    assert n19["p_method"] == "permutation" and n19["p_value"] < 0.001


def test_spearman_from_twenty_pairs_is_scipys_asymptotic_p() -> None:
    rng = np.random.default_rng(20)
    x = rng.normal(size=20)
    y = x + rng.normal(scale=2.0, size=20)
    ref = stats.spearmanr(x, y)
    assert r.spearman_test(x, y) == {"rho": pytest.approx(ref.statistic),
                                     "p_value": pytest.approx(ref.pvalue), "n": 20,
                                     "p_method": "asymptotic"}
    assert 0.001 < ref.pvalue < 0.999


def test_spearman_drops_non_finite_pairs_and_refuses_ragged_input() -> None:
    out = r.spearman_test([1, 2, np.nan, 3, 4], [1, 3, 5, np.inf, 2])
    ref = stats.spearmanr([1, 2, 4], [1, 3, 2])
    assert out["n"] == 3 and out["rho"] == pytest.approx(ref.statistic)
    with pytest.raises(ValueError, match=r"spearman: x and y differ in length \(\(3,\) vs \(2,\)\)"):
        r.spearman_test([1, 2, 3], [1, 2])


@pytest.mark.parametrize("x,y,n", [([1, 2], [2, 1], 2), ([1, 1, 1, 1], [1, 2, 3, 4], 4),
                                   ([1, 2, 3, 4], [5, 5, 5, 5], 4)])
def test_spearman_undefined_is_none(x: list, y: list, n: int) -> None:
    assert r.spearman_test(x, y) == {"rho": None, "p_value": None, "n": n, "p_method": None}
