"""Honest statistics at small n, the σ-scaled γ grid, augmentation advice and paper-ready plots:
known answers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from robustlab import plots
from robustlab.metrics import consistency as cons
from robustlab.metrics.ranking import spearman_test
from robustlab.studies.learnability.advice import advice_text, advise, chance_models
from robustlab.studies.learnability.report import chance_text, correlations_text
from robustlab.textfmt import spread_text

# ---- Spearman p at small n ------------------------------------------------------------------------


def test_exact_p_for_three_and_four_pairs():
    # n=3, ρ=1: 1 of the 3! = 6 orderings reaches ρ=1 (and 1 reaches -1): two-sided p = 2/6
    r = spearman_test([1, 2, 3], [10, 20, 30])
    assert r == {"rho": 1.0, "p_value": pytest.approx(1 / 3), "n": 3, "p_method": "exact"}
    assert stats.spearmanr([1, 2, 3], [10, 20, 30]).pvalue < 1e-6  # what the t-approx. says
    # n=4, y = (1,3,2,4): ρ = 0.8; orderings with ρ ≥ 0.8: identity + 3 adjacent swaps with
    # Σd² = 2 → 4 of 24 each side → p = 8/24
    r = spearman_test([1, 2, 3, 4], [1, 3, 2, 4])
    assert r["rho"] == pytest.approx(0.8) and r["p_value"] == pytest.approx(1 / 3)
    # NaN pairs dropped; two finite pairs: undefined, never a made-up number
    assert spearman_test([1, 2, math.nan], [1, 2, 3])["rho"] is None


def test_permutation_then_asymptotic_as_n_grows():
    rng = np.random.default_rng(0)
    x = rng.random(12)
    y = x + rng.random(12)
    r = spearman_test(x, y)
    assert r["p_method"] == "permutation" and r["rho"] == pytest.approx(
        stats.spearmanr(x, y).statistic)
    assert r == spearman_test(x, y)  # seeded: reproducible
    x, y = rng.random(30), rng.random(30)
    r = spearman_test(x, y)
    assert r["p_method"] == "asymptotic" and r["p_value"] == pytest.approx(
        stats.spearmanr(x, y).pvalue)


def test_stdout_says_which_p_and_prints_no_spread_for_one_seed():
    assert spread_text({"mean": 0.5, "std": 0.0, "n": 1, "values": [0.5]}) == "0.500"
    assert spread_text({"mean": 0.5, "std": 0.1, "n": 2}) == "0.500±0.100"
    assert spread_text(None) == "-"
    text = correlations_text({"learnability_vs_robustness": spearman_test([1, 2, 3], [3, 2, 1]),
                              "learnability_vs_delta": {"rho": None, "n": 2}})
    assert "ρ = -1.000, p = 0.333 (exact p, n=3)" in text and "undefined (n=2" in text


def test_chance_level_model_is_flagged():
    pairs = [{"model": "tiny-bert", "perturbation": "p", "accuracy_standard": {"mean": 0.5}},
             {"model": "bow", "perturbation": "p", "accuracy_standard": {"mean": 0.81}}]
    assert chance_models(pairs) == {"tiny-bert": 0.5}
    assert chance_models(pairs, n_classes=3) == {}  # 0.5 beats 1/3 chance
    assert "tiny-bert: clean accuracy 0.500 is at chance level" in chance_text(pairs)


# ---- γ on a grid that follows the spread ----------------------------------------------------------


def test_sigma_grid_separates_systems_the_fixed_grid_cannot():
    # per-domain accuracies (%) of three classifiers, spread over a few points
    X = np.array([[80.0, 82.0, 79.0, 85.0], [70.0, 71.0, 70.5, 72.0], [60.0, 66.0, 58.0, 75.0]])
    grid, info = cons.eps_grid(X, "fixed")
    assert np.array_equal(grid, np.arange(1, 101)) and info == {"eps_grid": "fixed",
                                                                 "grid_max": 100}
    sd = np.sqrt(X.var(axis=1, ddof=1))
    assert cons.spread_scale(X) == pytest.approx(np.median(sd))
    sgrid, sinfo = cons.eps_grid(X, "sigma", n=50)
    assert sinfo["sigma_ref"] == pytest.approx(np.median(sd)) and sinfo["t"] == [0.05, 3.0]
    assert sgrid[0] == pytest.approx(0.05 * np.median(sd)) and sgrid[-1] == pytest.approx(
        3.0 * np.median(sd)) and len(sgrid) == 50
    fixed, scaled = cons.gamma_auc(X, grid), cons.gamma_auc(X, sgrid)
    assert np.ptp(fixed) < 0.02 < np.ptp(scaled)  # pressed against 0 vs apart
    assert cons.eps_grid(X, "sigma", sigma_ref=2.0)[1]["sigma_ref"] == 2.0
    assert cons.spread_scale(np.full((2, 4), 7.0)) == 1.0  # constant scores: any unit works
    with pytest.raises(ValueError, match="unknown ε grid"):
        cons.eps_grid(X, "log")


# ---- augmentation advice ----------------------------------------------------------------------------


def _pair(model, pert, learn, delta=None, n=3):
    r = {"model": model, "perturbation": pert, "avg_learnability": {"mean": learn, "n": n},
         "accuracy_standard": {"mean": 0.85}}
    if delta is not None:
        r["delta"] = {"mean": delta, "n": n}
    return r


def test_advice_ranks_by_measured_delta_and_says_when_to_trust_it():
    pairs = [_pair("bow", f"p{i}", 0.1 * i, 0.01 * i) for i in range(6)]
    adv = advise(pairs)
    rel = adv["relation"]
    assert rel["rho"] == pytest.approx(1.0) and rel["n"] == 6 and rel["p_method"] == "exact"
    assert rel["p_value"] == pytest.approx(2 / math.factorial(6)) and rel["trusted"]
    assert [r["perturbation"] for r in adv["models"]["bow"]] == [f"p{i}" for i in range(5, -1,
                                                                                       -1)]
    assert adv["models"]["bow"][0]["basis"] == "measured Δ (3 seeds)"
    # too few pairs: the relation is reported but not trusted
    few = advise(pairs[:3])
    assert not few["relation"]["trusted"] and "too weak to trust" in few["relation"]["verdict"]
    # the quick estimate when a run has no full figure; Δ predicted when the relation is trusted
    quick = [{"model": "bow", "perturbation": f"p{i}", "learnability_estimate": {"mean": 0.1 * i},
              "delta": {"mean": 0.01 * i, "n": 1}} for i in range(6)]
    extra = {"model": "cnn", "perturbation": "q", "learnability_estimate": {"mean": 0.25},
             "accuracy_standard": {"mean": 0.8}}
    adv = advise([*quick, extra])
    assert adv["relation"]["learnability"] == "estimate" and adv["relation"]["trusted"]
    row = adv["models"]["cnn"][0]
    assert row["learnability_source"] == "estimate" and row["learnability"] == 0.25
    assert row["expected_delta"] == pytest.approx(0.025)  # the fitted line Δ = 0.1·learnability
    assert row["basis"] == "Δ predicted from learnability"
    assert adv["models"]["bow"][0]["basis"] == "measured Δ (1 seed)"
    # full log-AUC and quick estimates are different scales: never fitted together
    adv = advise([*pairs, extra])
    assert adv["relation"]["learnability"] == "full" and adv["relation"]["n"] == 6
    assert adv["models"]["cnn"][0]["basis"] == "learnability only (hypothesis H2)"
    # no exp 2 at all: ranked by learnability, labelled a hypothesis
    adv = advise([_pair("bow", "a", 0.2), _pair("bow", "b", 0.9)])
    assert [r["perturbation"] for r in adv["models"]["bow"]] == ["b", "a"]
    assert "hypothesis" in adv["models"]["bow"][0]["basis"]
    assert "exp 2 did not run" in adv["relation"]["verdict"]
    rob = [{"model": "bow", "perturbation": p, "delta": {"mean": d}} for p, d in (("a", 0.01),
                                                                                  ("b", 0.05))]
    adv = advise(rob)  # a robustness-only run: measured Δ, no learnability
    assert [r["perturbation"] for r in adv["models"]["bow"]] == ["b", "a"]
    assert "robustness-only" in adv["relation"]["verdict"]
    assert "bow:" in advice_text(adv)


def test_negative_relation_is_not_advice():
    pairs = [_pair("bow", f"p{i}", 0.1 * i, -0.01 * i) for i in range(6)]
    adv = advise(pairs)
    assert not adv["relation"]["trusted"] and "does NOT predict" in adv["relation"]["verdict"]


# ---- figures fit for a paper ------------------------------------------------------------------------

NLA = ("nlaugmenter:transformations.butter_fingers_perturbation.transformation."
       "ButterFingersPerturbation")


def test_short_display_names():
    assert plots.short_name(NLA) == "nla:ButterFingersPerturbation"
    assert plots.short_name("textattack:WordSwapWordNet") == "textattack:WordSwapWordNet"
    assert plots.short_name("x" * 40, 10) == "x" * 9 + "…"
    names = plots.display_names(["a.b.Same", "c.d.Same", "typo"])
    assert names == {"a.b.Same": "Same", "c.d.Same": "Same#2", "typo": "typo"}


def _inside(fig) -> None:
    """Everything drawn (tick labels, colour bar and its label, legends, titles) lies within the
    canvas: the figure's tight bounding box (inches) fits in the figure."""
    fig.canvas.draw()
    tb = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    assert tb.x0 >= -0.01 and tb.y0 >= -0.01 and tb.x1 <= w + 0.01 and tb.y1 <= h + 0.01, tb


def test_figures_are_not_clipped_and_legends_do_not_cover_curves():
    grid = [0.01, 0.1, 1.0]
    pairs = [{"model": m, "perturbation": p, "avg_learnability": {"mean": 0.5 + i},
              "robustness": {"mean": -0.1 * i}, "delta": {"mean": 0.02 * i},
              "learnability_at": {format(x, "g"): {"mean": 0.2 * i, "std": 0.01} for x in grid}}
             for m in ("bow", "cnn") for i, p in enumerate((NLA, "typo", "leet_letters"))]
    fig = plots.learnability_curves_figure(pairs, grid)
    _inside(fig)
    legend = fig.legends[0]
    r = fig.canvas.get_renderer()
    lb = legend.get_window_extent(r)
    for ax in fig.axes:
        assert not lb.overlaps(ax.get_window_extent(r))  # outside every panel
    assert "nla:ButterFingersPerturbation" in [t.get_text() for t in legend.get_texts()]
    mat = np.array([[0.5, 0.6], [1.5, 1.6], [2.5, 2.6]])
    _inside(plots.learnability_table_figure([NLA + ":prob=0.1", "typo", "leet"], ["bow", "cnn"],
                                            mat, 2.0))
    fig = plots.learnability_scatter_figure(pairs, {"learnability_vs_robustness":
                                                    spearman_test([1, 2, 3], [3, 2, 1])})
    _inside(fig)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("typo") == 1  # every perturbation labelled, once (not once per model)
    assert "p = 0.33\n(exact, n=3)" in fig.axes[0].get_title()
    texts = [t for ax in fig.axes for t in ax.texts]
    assert min(t.get_fontsize() for t in texts) >= 9  # legible: ≥ 9 pt


def test_table4_p_values_are_exact_at_small_n():
    from robustlab.studies.learnability.report import correlations

    grid = [0.1, 1.0]
    pairs = [{"model": "bow", "perturbation": f"p{i}", "avg_learnability": {"mean": float(i)},
              "robustness": {"mean": -0.1 * i}, "delta": {"mean": 0.01 * i},
              "learnability_at": {"0.1": {"mean": 0.1 * i}, "1": {"mean": 0.2 * i}}}
             for i in range(4)]
    corr = correlations(pairs, grid)
    row = corr["at_p"]["0.1"]
    assert row["rho_with_avg"] == pytest.approx(1.0) and row["p_method"] == "exact"
    assert row["p_value"] == pytest.approx(2 / 24)  # 1 of 4! orderings each way
    assert row["p_value_delta"] == pytest.approx(2 / 24)
    assert corr["learnability_vs_delta"]["p_method"] == "exact"


def test_classifier_cells_share_one_sigma_grid_in_the_final_files():
    """clf cells are scored one system at a time (each on its own σ); the run's final files
    re-table them on one shared σ_ref so their γ curves have the same ε axis."""
    from robustlab.studies.cross_domain.report import common_sigma_grid
    from robustlab.studies.cross_domain.study import ConsistencyConfig, consistency_tables

    cc = ConsistencyConfig(eps=cons.SIGMA_EPS, n_bags=4, fraction=0.5, eps_grid="sigma")
    per = {"bow@books": {"dvd": 80.0, "electronics": 82.0, "kitchen": 79.0},
           "cnn@books": {"dvd": 70.0, "electronics": 76.0, "kitchen": 71.0}}
    cells = [{"system": s, "per_domain": p,
              **consistency_tables(np.array([list(p.values())]), list(p), cc)[0]}
             for s, p in per.items()]
    assert cells[0]["eps_grid"]["sigma_ref"] != cells[1]["eps_grid"]["sigma_ref"]
    cfg = {"task": "clf", "eps_grid": "sigma", "eps": list(cons.SIGMA_EPS), "n_bags": 4,
           "fraction": 0.5, "seed": 0, "grid_max": 100}
    out = common_sigma_grid(cells, cfg)
    sd = [np.std(list(p.values()), ddof=1) for p in per.values()]
    assert out[0]["eps_grid"]["sigma_ref"] == pytest.approx(np.median(sd))
    assert out[0]["gamma_grid"] == out[1]["gamma_grid"]
    assert common_sigma_grid(cells, {**cfg, "eps_grid": "fixed"}) is cells  # unchanged
