"""The learnability study's per-pair summary and correlation tables as pure functions of stored
results, against records computed by hand (fast: the test selection of ``bench/mutation.py
learnability-summary``)."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from robustlab.studies.learnability import summary as S

SQ02 = math.sqrt(0.02)  # sample std of two values 0.1 apart


def _l(seed: int, p: float, acc: float, prob: float, noop: float) -> dict:
    return {"model": "m", "perturbation": "g", "seed": seed, "experiment": "learnability", "p": p,
            "learnability_acc": acc, "learnability_prob": prob, "noop_rate": noop}


def _a(exp: str, seed: int, acc: float, pert: str = "g", **kw: float) -> dict:
    return {"model": "m", "perturbation": pert, "seed": seed, "experiment": exp, "accuracy": acc,
            **kw}


RESULTS = [
    _l(1, 0.1, 0.4, 0.3, 0.1), _a("standard", 0, 0.9, pert="h"), _l(1, 1.0, 0.8, 0.5, 0.1),
    _l(0, 0.1, 0.2, 0.1, 0.0), _l(0, 1.0, 0.6, 0.5, 0.2),
    _a("standard", 0, 0.9), _a("standard", 1, 0.8),
    _a("robustness", 0, 0.7, accuracy_clean=0.85), _a("robustness", 1, 0.6),  # clean: A0 0.8
    _a("augmentation", 0, 0.75), _a("augmentation", 1, 0.7),
]


def test_summarize_pairs_hand_computed() -> None:
    g, h = S.summarize_pairs(RESULTS, [0.1, 1.0])
    assert (g["model"], g["perturbation"], g["seeds"]) == ("m", "g", [0, 1])
    # log-AUC over log10 p = −1, 0: seed 0 (0.2 + 0.6)/2, seed 1 (0.4 + 0.8)/2
    assert g["avg_learnability"] == {"mean": pytest.approx(0.5), "std": pytest.approx(SQ02),
                                     "n": 2, "values": [pytest.approx(0.4), pytest.approx(0.6)]}
    assert g["avg_learnability_prob"]["values"] == [pytest.approx(0.3), pytest.approx(0.4)]
    assert g["learnability_at"] == {
        "0.1": {"mean": pytest.approx(0.3), "std": pytest.approx(SQ02), "n": 2,
                "values": [0.2, 0.4]},
        "1": {"mean": pytest.approx(0.7), "std": pytest.approx(SQ02), "n": 2,
              "values": [0.6, 0.8]}}
    assert g["learnability_prob_at"]["0.1"]["values"] == [0.1, 0.3]
    assert g["noop_rate"] == pytest.approx(0.1)
    assert g["accuracy_standard"]["values"] == [0.9, 0.8]
    assert g["accuracy_robustness"]["values"] == [0.7, 0.6]
    assert g["accuracy_augmentation"]["values"] == [0.75, 0.7]
    # robustness = A1 − A0 (A0 of the robustness run when stored, else the standard run's)
    assert g["robustness"]["values"] == [pytest.approx(-0.15), pytest.approx(-0.2)]
    assert g["delta"]["values"] == [pytest.approx(0.05), pytest.approx(0.1)]  # A2 − A1
    assert h == {"model": "m", "perturbation": "h", "seeds": [0],
                 "accuracy_standard": {"mean": 0.9, "std": 0.0, "n": 1, "values": [0.9]},
                 "accuracy_robustness": None, "accuracy_augmentation": None,
                 "robustness": None, "delta": None}


def test_an_incomplete_curve_has_no_area() -> None:
    rows = [r for r in RESULTS if not (r["seed"] == 1 and r.get("p") == 1.0)]
    g = S.summarize_pairs(rows, [0.1, 1.0])[0]
    assert g["avg_learnability"]["n"] == 1 and g["avg_learnability"]["values"][1] is None
    assert g["learnability_at"]["1"] == {"mean": 0.6, "std": 0.0, "n": 1, "values": [0.6, None]}
    one = S.summarize_pairs(RESULTS, [0.1])[0]  # one p: no area at all
    assert one["avg_learnability"] == {"mean": None, "std": None, "n": 0,
                                       "values": [None, None]}
    nan = [dict(r, learnability_acc=math.nan) if r.get("p") == 0.1 else r for r in RESULTS]
    assert S.summarize_pairs(nan, [0.1, 1.0])[0]["avg_learnability"]["n"] == 0
    no_aug = [r for r in RESULTS if r["experiment"] != "augmentation"]
    g = S.summarize_pairs(no_aug, [0.1, 1.0])[0]
    assert g["delta"] is None and g["accuracy_augmentation"] is None
    assert g["robustness"]["n"] == 2
    no_rob = [r for r in RESULTS if r["experiment"] != "robustness"]
    g = S.summarize_pairs(no_rob, [0.1, 1.0])[0]
    assert g["delta"] is None and g["robustness"] is None and g["accuracy_robustness"] is None
    assert g["accuracy_augmentation"]["n"] == 2


def test_mean_value_and_csv_text() -> None:
    for v in (None, {}, {"mean": None}):
        assert math.isnan(S.mean_value(v))
    assert S.mean_value({"mean": 2}) == 2.0
    text = S.csv_text(["a", "b,c", "d", "e", "f"], [[None, math.nan, 0.123456, 3, "x,y"]])
    assert text == 'a,"b,c",d,e,f\n,,0.1235,3,"x,y"\n'


def _pair(avg: float, rob: float, delta: float, at: float, prob_at: float | None = None) -> dict:
    rec = {"avg_learnability": {"mean": avg}, "robustness": {"mean": rob}, "delta": {"mean": delta},
           "learnability_at": {"0.1": {"mean": at}}}
    if prob_at is not None:
        rec["avg_learnability_prob"] = {"mean": avg}
        rec["learnability_prob_at"] = {"0.1": {"mean": prob_at}}
    return rec


def test_correlations_tables_3_and_4_hand_computed() -> None:
    avg, rob, delta, at = [1, 2, 3, 4], [-1, -2, -3, -4], [2, 1, 4, 3], [0.1, 0.3, 0.2, 0.4]
    pairs = [_pair(*v, prob_at=p) for v, p in zip(zip(avg, rob, delta, at, strict=False), [4, 3, 2, 1], strict=False)]
    out = S.correlations(pairs, [0.1])
    # ρ = ±1 at n = 4: the exact two-sided p is 2/24
    assert out["learnability_vs_robustness"] == {"rho": pytest.approx(-1.0),
                                                 "p_value": pytest.approx(1 / 12), "n": 4,
                                                 "p_method": "exact"}
    assert out["learnability_vs_delta"]["rho"] == pytest.approx(
        stats.spearmanr(avg, delta).statistic)
    assert out["robustness_vs_delta"]["rho"] == pytest.approx(
        stats.spearmanr(rob, delta).statistic)
    row = out["at_p"]["0.1"]
    assert row["sigma"] == pytest.approx(math.sqrt(0.0125))  # population σ of `at`
    assert row["rho_with_avg"] == pytest.approx(stats.spearmanr(at, avg).statistic)
    assert row["rho_with_robustness"] == pytest.approx(stats.spearmanr(at, rob).statistic)
    assert row["rho_with_delta"] == pytest.approx(stats.spearmanr(at, delta).statistic)
    assert row["p_method"] == "exact"
    for other, key in ((avg, ""), (rob, "_robustness"), (delta, "_delta")):
        assert row[f"p_value{key}"] == S.spearman_test(at, other)["p_value"]
    assert out["at_p"]["avg"] == {"sigma": pytest.approx(math.sqrt(1.25)), "rho_with_avg": 1.0,
                                  "p_value": None, "rho_with_robustness": pytest.approx(-1.0),
                                  "p_value_robustness": pytest.approx(1 / 12),
                                  "rho_with_delta": pytest.approx(
                                      stats.spearmanr(avg, delta).statistic),
                                  "p_value_delta": S.spearman_test(avg, delta)["p_value"]}
    prob = out["at_p_prob"]["0.1"]
    assert prob["rho_with_avg"] == pytest.approx(-1.0)  # prob_at 4, 3, 2, 1 against avg
    assert prob["p_value"] == pytest.approx(1 / 12)


def test_correlations_without_curves_or_with_too_few_pairs() -> None:
    pairs = [{"robustness": {"mean": r}, "delta": {"mean": d}} for r, d in [(1, 2), (2, 1), (3, 3)]]
    out = S.correlations(pairs, [0.1])
    assert set(out) == {"learnability_vs_robustness", "learnability_vs_delta",
                        "robustness_vs_delta"}
    assert out["learnability_vs_robustness"]["rho"] is None
    assert out["robustness_vs_delta"]["rho"] == pytest.approx(0.5)
    two = S.correlations([_pair(1, -1, 2, 0.1), _pair(2, -2, 1, 0.3)], [0.1])
    assert two["at_p"]["avg"]["rho_with_avg"] is None  # fewer than 3 pairs: no ρ
    assert two["at_p"]["avg"]["sigma"] == pytest.approx(0.5)
    assert two["at_p_prob"]["avg"]["sigma"] is None  # no probability curves stored
    assert two["at_p_prob"]["0.1"]["sigma"] is None


def test_correlation_tables_are_keyed_by_p_as_printed() -> None:
    pairs = [{"avg_learnability": {"mean": a}, "learnability_at": {"1": {"mean": a},
                                                                    "0.001": {"mean": -a}}}
             for a in (1.0, 2.0, 3.0)]
    out = S.correlations(pairs, [0.001, 1.0])
    assert list(out["at_p"]) == ["0.001", "1", "avg"]
    assert out["at_p"]["1"]["rho_with_avg"] == pytest.approx(1.0)
    assert out["at_p"]["0.001"]["rho_with_avg"] == pytest.approx(-1.0)
