"""The quick learnability estimate (issue 9 §2): its cells are the full grid's cells, known
answers (identity → 0, a planted token → ≈ 1 at p = 1), its own field/signature/files, the
hypothesis tests of ``robustlab correlate`` with it, and bad input."""

from __future__ import annotations

import json
import math

import pytest
from learnability_toy import toy_spec

from robustlab.cli import build_parser, main
from robustlab.metrics.learnability import most_discriminating_p, seed_noise
from robustlab.studies.learnability.estimate import estimate_area, estimate_pairs
from robustlab.studies.learnability.study import LearnabilityStudy, clear_caches, run_study


def _study(spec, **kw) -> LearnabilityStudy:
    base = dict(models=("bow",), perturbations=("identity", "append_token"), dataset=spec,
                seeds=(0, 1, 2), steps=40, experiments=("learnability",))
    base.update(kw)
    return LearnabilityStudy(**base)


def test_quick_cells_are_the_full_grids_cells(tmp_path):
    spec = toy_spec(tmp_path)
    quick = _study(spec, estimate="quick", experiments=("standard", "robustness", "learnability"))
    full = _study(spec, experiments=("standard", "robustness", "learnability"))
    q, f = quick.cells("fp"), {c.key: c for c in full.cells("fp")}
    learn = [c for c in q if c.params["experiment"] == "learnability"]
    # per pair: p = 0.02 for the three seeds, p = 1 for the first seed only: 4 of 24 trainings
    assert len(learn) == 2 * 4
    assert sorted((c.params["p"], c.params["seed"]) for c in learn
                  if c.params["perturbation"] == "identity") == [(0.02, 0), (0.02, 1),
                                                                 (0.02, 2), (1.0, 0)]
    for c in q:  # same keys, same parameters: an estimate run and a full run compute the same
        assert c.key in f and c.params == f[c.key].params
    assert quick.p_grid == (0.02, 1.0)
    # the full grid's stored configuration is what it was before the estimate existed (resume)
    assert "estimate" not in full.config() and "estimate_p" not in full.config()
    assert quick.config()["estimate"] == "quick" and quick.config()["estimate_p"] == 0.02
    other = _study(spec, estimate="quick", estimate_p=0.05)
    assert {c.params["p"] for c in other.cells()} == {0.05, 1.0}


def test_most_discriminating_p_and_seed_noise_known_values():
    table = {"0.01": {"sigma": 0.1, "rho_with_avg": 0.5}, "0.02": {"sigma": 0.3,
             "rho_with_avg": 0.9}, "1": {"sigma": 0.2}, "avg": {"sigma": 9.0}}
    assert most_discriminating_p(table) == {"p": 0.02, "sigma": 0.3, "rho_with_avg": 0.9}
    assert most_discriminating_p({"avg": {"sigma": 1.0}}) is None
    # two pairs × two seeds: seed std of each pair = sqrt(0.02) (values ±0.1 around the mean);
    # pair means 0.1 and 0.5: σ across pairs (ddof=0) = 0.2
    m = [[0.0, 0.2], [0.4, 0.6]]
    out = seed_noise(m)
    assert out["seed_std"] == pytest.approx(math.sqrt(0.02))
    assert out["sigma_pairs"] == pytest.approx(0.2)
    assert out["noise_ratio"] == pytest.approx(math.sqrt(0.02) / 0.2)
    # reliability of a mean of 2 seeds: 1 - (0.02 / 2) / 0.04 = 0.75
    assert out["reliability"] == pytest.approx(0.75)


def test_estimate_pairs_from_hand_made_cells():
    def cell(seed, p, acc, secs=1.0):
        return {"model": "m", "perturbation": "g", "experiment": "learnability", "seed": seed,
                "p": p, "learnability_acc": acc, "learnability_prob": acc / 2,
                "noop_rate": 0.0, "seconds": secs}

    results = [cell(0, 0.02, 0.2), cell(1, 0.02, 0.4), cell(2, 0.02, 0.6), cell(0, 1.0, 0.05),
               cell(1, 1.0, 0.9), cell(0, 0.5, 0.7),
               {"model": "m", "perturbation": "g", "experiment": "robustness", "seed": 0}]
    (rec,) = estimate_pairs(results, 0.02)
    assert rec["learnability_estimate"]["mean"] == pytest.approx(0.4)
    assert rec["learnability_estimate"]["std"] == pytest.approx(0.2)
    assert rec["learnability_prob_estimate"]["mean"] == pytest.approx(0.2)
    # the check is the first seed's p = 1 cell (0.05 < 0.1: not learnable), not seed 1's
    assert rec["check_seed"] == 0 and rec["learnability_at_1"] == pytest.approx(0.05)
    assert rec["learnable"] is False
    assert rec["cost"] == {"trainings": 4, "seconds": 4.0}
    # three-point area (0.001 → 0, 0.02 → 0.4, 1 → 0.05), trapezoids on log10 p, by hand:
    # 0.2 * log10(20) + 0.225 * log10(50)
    assert rec["learnability_estimate_area"] == pytest.approx(
        0.2 * math.log10(20) + 0.225 * math.log10(50))
    assert estimate_area(0.02, 1.0, 1.0) == pytest.approx(0.5 * math.log10(20) + math.log10(50))
    assert estimate_area(0.02, 0.4, None) is None
    assert estimate_pairs(results, 0.05) == []


def test_quick_study_known_answers_and_outputs(tmp_path):
    clear_caches()
    spec = toy_spec(tmp_path / "data", n_train=300, n_test=120)
    out = tmp_path / "quick"
    st = _study(spec, estimate="quick", seeds=(0, 1), steps=80,
                experiments=("standard", "robustness", "learnability"))
    summary = run_study(st, out, progress=False)
    est = summary["estimate"]
    assert est["measure"] == "learnability@p" and est["mode"] == "quick"
    assert est["signature"].startswith("learnability_estimate|measure:learnability@0.02|")
    by = {r["perturbation"]: r for r in est["pairs"]}
    # identity: nothing to learn, exactly 0 at p = 0.02 and at p = 1
    assert by["identity"]["learnability_estimate"]["mean"] == 0.0
    assert by["identity"]["learnability_at_1"] == 0.0 and by["identity"]["learnable"] is False
    # a token absent from the data, appended to every treated example at p = 1: fully learned
    assert by["append_token"]["learnability_at_1"] >= 0.95
    assert by["append_token"]["learnable"] is True
    # cost: 2 seeds at 0.02 + 1 check per pair, with the cells' seconds
    assert est["cost"]["trainings"] == 2 * 3
    assert est["cost"]["seconds"] > 0
    # never mixed up with the log-AUC: no average learnability, no curve figures
    for r in summary["pairs"]:
        assert r["avg_learnability"] is None
        # the pair record carries the estimate under its own name (robustlab report reads it)
        assert r["learnability_estimate"] == by[r["perturbation"]]["learnability_estimate"]
    assert "learnability_estimate.csv" in summary["files"]
    assert "learnability_estimate.png" in summary["files"]
    assert "learnability_curves.png" not in summary["files"]
    assert (out / "learnability_estimate.png").stat().st_size > 0
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["estimate"]["pairs"][0]["learnability_estimate"] == \
        est["pairs"][0]["learnability_estimate"]
    assert by["identity"]["robustness"]["mean"] == 0.0  # joined from the run's own exp 1


def test_full_grid_reports_the_estimate_from_its_own_cells(tmp_path):
    clear_caches()
    spec = toy_spec(tmp_path / "data")
    grid = (0.01, 0.02, 0.1, 1.0)
    full = run_study(_study(spec, p_grid=grid, seeds=(0,)), tmp_path / "full", progress=False,
                     plots=False)
    clear_caches()
    quick = run_study(_study(spec, estimate="quick", seeds=(0,)), tmp_path / "quick",
                      progress=False, plots=False)
    fe, qe = full["estimate"], quick["estimate"]
    assert fe["mode"] == "full" and fe["full_cost"]["trainings"] == 2 * len(grid)
    assert fe["cost"]["trainings"] == 2 * 2
    # the same cells give the same estimate in both runs (deterministic, same keys)
    for a, b in zip(fe["pairs"], qe["pairs"], strict=True):
        assert a["learnability_estimate"]["values"] == b["learnability_estimate"]["values"]
        assert a["learnability_at_1"] == b["learnability_at_1"]
    # Table 4 logic: the p with the largest σ across pairs of this grid is reported
    sig = {k: v["sigma"] for k, v in full["correlations"]["at_p"].items() if k != "avg"}
    assert fe["most_discriminating_p"]["p"] == float(max(sig, key=sig.get))
    assert "most_discriminating_p" not in qe
    # the validation script reads both runs through the store and accounts the cost
    v = _validator().validate(tmp_path / "full", tmp_path / "quick", 0.02)
    assert v["cost"]["full_learnability"]["trainings"] == 2 * len(grid)
    assert v["cost"]["estimate_same_seed"]["trainings"] == 4
    assert v["cost"]["estimate_independent"]["trainings"] == 4
    assert [n["p"] for n in v["seed_noise"]] == list(grid)
    text = _validator().render(v)
    assert "Agreement with the full log-AUC" in text and "Seed noise at each p" in text


def _validator():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "bench" / "validate_estimate.py"
    spec = importlib.util.spec_from_file_location("validate_estimate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _cli(spec, out, *extra):
    return ["learnability", "--model", "bow", "--data", spec["path"], "--test-data",
            spec["test_path"], "--format", "label-text", "--perturbations",
            "identity,append_token,leet_letters", "--seeds", "0,1", "--steps", "30", "--quiet",
            "--no-plots", "--out", str(out), *extra]


def test_cli_quick_estimate_and_correlate(tmp_path, capsys):
    spec = toy_spec(tmp_path / "data", n_train=120, n_test=60)
    out = tmp_path / "est"
    assert main(_cli(spec, out, "--estimate", "quick", "--experiments",
                     "standard,robustness,augmentation,learnability")) == 0
    printed = capsys.readouterr().out
    assert "learnability ESTIMATE (quick run)" in printed and "ρ(estimate, robustness)" in printed
    assert "no average learnability (log-AUC)" in printed  # never the log-AUC's tests
    assert "learnability_vs_robustness" not in printed
    from robustlab.runs.store import RunStore

    with RunStore(out, readonly=True) as store:
        command = store.run_info().command
    assert "--estimate quick --estimate-p 0.02" in command and "--p-grid" not in command
    assert main(["correlate", str(out), "--json", str(tmp_path / "c.json")]) == 0
    printed = capsys.readouterr().out
    assert "measure: learnability ESTIMATE = learnability at p=0.02" in printed
    # the augmentation advice the README promises, ranked with the estimate
    assert "augmentation advice" in printed and "(est.)" in printed
    saved = json.loads((tmp_path / "c.json").read_text())
    assert saved["advice"]["relation"]["learnability"] == "estimate"
    summary = json.loads((out / "summary.json").read_text())
    assert saved["estimate"]["correlations"]["estimate_vs_robustness"] == \
        summary["estimate"]["correlations"]["estimate_vs_robustness"]
    assert saved["estimate"]["correlations"]["estimate_vs_robustness"]["n"] == 3
    # a quick run has no log-AUC to test
    assert main(["correlate", str(out), "--measure", "log-auc"]) == 2
    assert "has no log-AUC" in capsys.readouterr().err
    # an estimate run without exp 0-2 joins a robustness run of the same pairs
    est_only = tmp_path / "est-only"
    assert main(_cli(spec, est_only, "--estimate", "quick", "--experiments", "learnability",
                     "--seeds", "0")) == 0
    rob = tmp_path / "rob"
    args = _cli(spec, rob, "--seeds", "0")
    args[0] = "robustness"
    assert main(args) == 0
    capsys.readouterr()
    assert main(["correlate", str(est_only), str(rob), "--json", str(tmp_path / "j.json")]) == 0
    joined = json.loads((tmp_path / "j.json").read_text())["estimate"]
    assert joined["correlations"]["estimate_vs_robustness"]["n"] == 3
    assert "ρ(estimate, robustness)" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (("--estimate", "quick", "--p-grid", "0.02,1"), "--p-grid does not go with --estimate quick"),
    (("--estimate", "quick", "--estimate-p", "0"), "--estimate-p must lie in (0, 1]"),
    (("--estimate", "quick", "--experiments", "standard,robustness"), "keep 'learnability'"),
])
def test_bad_estimate_options_fail_before_anything_is_written(tmp_path, capsys, extra, message):
    spec = toy_spec(tmp_path / "data", n_train=40, n_test=20)
    out = tmp_path / "never"
    assert main(_cli(spec, out, *extra)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def _mean(x):
    """A stored number: over seeds ({"mean": …}) or single."""
    return x["mean"] if isinstance(x, dict) else x


def test_tui_shows_the_estimate(tmp_path):
    from robustlab.studies.learnability.view import load_learnability, with_estimate

    clear_caches()
    out = tmp_path / "quick"
    run_study(_study(toy_spec(tmp_path / "data"), estimate="quick", seeds=(0,)), out,
              progress=False, plots=False)
    view = with_estimate(load_learnability(out), out)
    col = view.table.columns.index("estimate@0.02")
    values = {row[1]: row[col] for row in view.table.rows}
    at_1 = {row[1]: row[col + 1] for row in view.table.rows}
    summary = json.loads((out / "summary.json").read_text())
    stored = {e["perturbation"]: e for e in summary["estimate"]["pairs"]}
    # each row shows its own pair's stored numbers (the mean over seeds; not another row's,
    # not a default)
    assert values == {p: e["learnability_estimate"]["mean"] for p, e in stored.items()}
    assert at_1 == {p: _mean(e["learnability_at_1"]) for p, e in stored.items()}
    assert values["identity"] == 0.0  # identity cannot be learned: 0 by definition
    assert values["append_token"] == stored["append_token"]["learnability_estimate"]["values"][0]
    assert view.estimate["measure"] == "learnability@p"


def test_tui_screen_status_names_the_estimate_and_its_cost(tmp_path):
    pytest.importorskip("textual", reason="the TUI tests need textual")
    import asyncio

    from tui.test_app import wait_for

    from robustlab.studies.learnability.screen import LearnabilityScreen
    from robustlab.tui.app import RobustlabApp, Settings
    from robustlab.tui.screens.runs import RunsScreen

    clear_caches()
    out = tmp_path / "quick"
    run_study(_study(toy_spec(tmp_path / "data"), estimate="quick", seeds=(0,),
                     experiments=("standard", "robustness", "learnability")), out,
              progress=False, plots=False)

    async def drive() -> str:
        app = RobustlabApp([out], Settings(parser=build_parser, poll_seconds=0.2, cwd=tmp_path))
        async with app.run_test(size=(160, 40)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen)
                           and app.screen.runs)
            await pilot.press("enter")
            await wait_for(pilot, lambda: isinstance(app.screen, LearnabilityScreen)
                           and "estimate" in str(app.screen.query_one("#status").content))
            return str(app.screen.query_one("#status").content)

    status = asyncio.run(drive())
    assert "estimate = learnability@0.02 (4 trainings" in status
    assert "ρ(estimate, robustness)" not in status  # 2 pairs: ρ undefined, not shown
