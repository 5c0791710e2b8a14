"""The cross-domain consistency summary (robustlab/studies/cross_domain/consistency.py): options,
their checks, and the per-system tables against hand-computed values and against the metrics
applied to one system's vector (fast: the test selection of ``bench/mutation.py
consistency-summary``)."""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest

from robustlab.errors import InputError
from robustlab.metrics import consistency as cons
from robustlab.studies.cross_domain import consistency as C

X = np.array([[1.0, 2.0, 3.0, 10.0], [2.0, 2.0, 2.0, 2.0]])
LABELS = ["a", "a", "b", "b"]


def _parse(*argv: str) -> C.ConsistencyConfig:
    p = argparse.ArgumentParser()
    C.ConsistencyConfig.add_arguments(p)
    return C.ConsistencyConfig.from_args(p.parse_args(list(argv)))


def test_options_defaults_and_the_sigma_grids_own_eps() -> None:
    assert _parse() == C.ConsistencyConfig()
    assert _parse().eps == (1.0, 5.0, 10.0, 20.0, 50.0)
    assert _parse("--eps-grid", "sigma").eps == (0.5, 1.0, 1.5, 2.0)
    assert _parse("--eps-grid", "sigma", "--eps", "3").eps == (3.0,)
    assert _parse("--eps", "2", "7.5").eps == (2.0, 7.5)
    assert C.ConsistencyConfig(grid_max=3).grid().tolist() == [1.0, 2.0, 3.0]


def test_argv_writes_every_option_always() -> None:
    assert C.ConsistencyConfig().argv() == [
        "--eps", "1", "5", "10", "20", "50", "--eps-max", "100", "--eps-grid", "fixed",
        "--bags", "30", "--bag-fraction", "0.6", "--seed", "0"]
    cfg = C.ConsistencyConfig(eps=(2.5,), grid_max=3, n_bags=4, fraction=0.5, seed=2,
                              eps_grid="sigma")
    assert cfg.argv() == ["--eps", "2.5", "--eps-max", "3", "--eps-grid", "sigma", "--bags", "4",
                          "--bag-fraction", "0.5", "--seed", "2"]
    assert _parse(*cfg.argv()) == cfg


def test_helpers_format_and_show() -> None:
    assert [C._fmt(v) for v in (1.0, 0.5, 3, "x", 1e-7)] == ["1", "0.5", "3", "x", "1e-07"]
    show = C._always("--eps")
    assert show["always"] is True
    assert show["show"]((1.0, 2.5), None) == ["--eps", "1", "2.5"]
    assert show["show"](3, None) == ["--eps", "3"]


@pytest.mark.parametrize("kw,msg", [
    ({"n_bags": 0}, r"^--bags must be >= 1, got 0$"),
    ({"fraction": 0.0}, r"^--bag-fraction must be in \(0, 1\], got 0.0$"),
    ({"fraction": 1.5}, r"^--bag-fraction must be in \(0, 1\], got 1.5$"),
    ({"grid_max": 0}, r"^--eps-max must be >= 1, got 0$"),
    ({"eps": ()}, r"^--eps values must be positive and finite, got \[\]$"),
    ({"eps": (1.0, 0.0)}, r"^--eps values must be positive and finite, got \[1.0, 0.0\]$"),
    ({"eps": (-1.0,)}, "--eps values"), ({"eps": (math.inf,)}, "--eps values"),
    ({"eps": (math.nan,)}, "--eps values"),
    ({"eps_grid": "log"}, r"^--eps-grid: unknown 'log'; choose from fixed, sigma$"),
])
def test_validate_refuses_each_bad_option(kw: dict, msg: str) -> None:
    with pytest.raises(InputError, match=msg):
        C.ConsistencyConfig(**kw).validate()


@pytest.mark.parametrize("kw", [{}, {"n_bags": 1}, {"fraction": 1.0}, {"grid_max": 1},
                                {"eps": (0.1,)}, {"eps_grid": "sigma"}])
def test_validate_accepts_the_edges(kw: dict) -> None:
    C.ConsistencyConfig(**kw).validate()


def test_check_domains() -> None:
    assert C.check_domains(["b", "a", "b"], "x") == ["b", "a"]
    with pytest.raises(InputError, match=r"^dev.tsv: only one domain \(news\); "
                                         r"leave-one-domain-out needs at least two domains. Give "
                                         r"a domain file with several labels$"):
        C.check_domains(["news", "news"], "dev.tsv")
    with pytest.raises(InputError, match=r"^x: only one domain \(none\);"):
        C.check_domains([], "x")


def test_tables_hand_computed_on_the_fixed_grid() -> None:
    cfg = C.ConsistencyConfig(eps=(2.0,), grid_max=3, n_bags=3, fraction=0.5, seed=4)
    s0, s1 = C.consistency_tables(X, LABELS, cfg)
    # system 0: μ 4, deviations 3 2 1 6, sample σ² 50/3: γ(ε) = Pr[dev ≥ ε]·ε²·3/50
    curve = [1.0 * 1 * 3 / 50, 0.75 * 4 * 3 / 50, 0.5 * 9 * 3 / 50]
    assert s0["n"] == 4 and s0["mean"] == 4.0 and s0["variance"] == 12.5
    assert s0["cov"] == pytest.approx(math.sqrt(12.5) / 4)
    assert s0["gamma"] == {"2": pytest.approx(curve[1])}
    assert s0["gamma_curve"] == pytest.approx(curve)
    assert s0["gamma_auc"] == pytest.approx(sum(curve) / 3)
    assert "gamma_grid" not in s0 and "eps_grid" not in s0
    assert (s1["mean"], s1["variance"], s1["cov"], s1["gamma"], s1["gamma_auc"]) == (
        2.0, 0.0, 0.0, {"2": 0.0}, 0.0)
    # each system's rows equal the metrics applied to its own vector (same seeds, same bags)
    for s, res in enumerate((s0, s1)):
        plain = cons.leave_one_out(X[s], LABELS, eps=[2.0])
        assert res["leave_one_out"] == plain[1:]
        assert [r["left_out"] for r in res["leave_one_out"]] == ["a", "b"]
        for method, key in (("bagging", "bagging"), ("design", "design_bagging")):
            rows = cons.leave_one_out(X[s], LABELS, resample=method, n_bags=3, fraction=0.5,
                                      seed=4, eps=[2.0])
            assert res[key] == {**{k: rows[0][k] for k in ("mean", "variance", "cov", "gamma")},
                                "leave_one_out": rows[1:]}
    assert s0["bagging"] != s0["design_bagging"]


def test_tables_on_the_sigma_grid_key_gamma_by_multiples_of_sigma() -> None:
    cfg = C.ConsistencyConfig(eps=(1.0, 0.5), eps_grid="sigma", n_bags=2, fraction=0.5)
    s0 = C.consistency_tables(X, LABELS, cfg, sigma_ref=2.0)[0]
    assert s0["gamma"] == {"1": pytest.approx(cons.gamma(X[0], 2.0)),
                           "0.5": pytest.approx(cons.gamma(X[0], 1.0))}
    assert s0["eps_grid"] == {"eps_grid": "sigma", "sigma_ref": 2.0, "t": [0.05, 3.0], "n": 100}
    assert s0["gamma_grid"] == pytest.approx((np.linspace(0.05, 3.0, 100) * 2).tolist())
    assert s0["gamma_auc"] == pytest.approx(float(cons.gamma_auc(X[0], s0["gamma_grid"])))
    left_a = s0["leave_one_out"][0]
    assert left_a["gamma"] == {"1": pytest.approx(cons.gamma([3.0, 10.0], 2.0)),
                               "0.5": pytest.approx(cons.gamma([3.0, 10.0], 1.0))}
    assert set(s0["bagging"]["gamma"]) == {"1", "0.5"}
    assert set(s0["design_bagging"]["leave_one_out"][1]["gamma"]) == {"1", "0.5"}
    own = C.consistency_tables(X, LABELS, cfg)[0]  # σ_ref from X: the median row σ
    assert own["eps_grid"]["sigma_ref"] == pytest.approx(cons.spread_scale(X))
    one = C.consistency_tables(X[0], LABELS, C.ConsistencyConfig(eps=(2.0,), grid_max=2,
                                                                 n_bags=2))
    assert len(one) == 1 and one[0]["gamma"] == {"2": pytest.approx(0.75 * 4 * 3 / 50)}


def test_pick_and_common_sigma() -> None:
    row = {"left_out": "a", "n": 2, "mean": [1.0, 2.0], "gamma": {"1": [0.1, 0.2]}}
    assert C.pick(row, 1) == {"left_out": "a", "n": 2, "mean": 2.0, "gamma": {"1": 0.2}}
    assert C.pick(row, 0) == {"left_out": "a", "n": 2, "mean": 1.0, "gamma": {"1": 0.1}}
    # sample σ of each: √2, 2√2, 3√2 → median 2√2
    assert C.common_sigma([[1.0, 3.0], [0.0, 4.0], [0.0, 6.0]]) == pytest.approx(2 * math.sqrt(2))


def test_the_options_form_the_consistency_metrics_group() -> None:
    p = argparse.ArgumentParser()
    C.ConsistencyConfig.add_arguments(p)
    group = next(g for g in p._action_groups if g.title == "consistency metrics")
    assert [a.option_strings[0] for a in group._group_actions] == [
        "--eps", "--eps-max", "--eps-grid", "--bags", "--bag-fraction", "--seed"]
    assert "consistency metrics:" in p.format_help()
