"""Per-example predictions of robustness cells, the failing examples and `robustlab failures`."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from learnability_toy import toy_spec

from robustlab.cli import main
from robustlab.data.files import read_rows
from robustlab.runs.store import SCHEMA_VERSION, RunStore
from robustlab.studies.learnability.predictions import (
    failing_examples,
    failure_summary,
    prediction_rows,
)
from robustlab.studies.learnability.study import LearnabilityStudy, clear_caches, run_study


def test_prediction_rows_known_values():
    proba_b = np.array([[0.9, 0.1], [0.2, 0.8]])
    proba_a = np.array([[0.3, 0.7], [0.1, 0.9]])
    rows = prediction_rows(["a", ("p", "q")], ["A", ("P", "Q")], [0, 1], proba_b, proba_a)
    assert rows[0] == {"idx": 0, "original": "a", "perturbed": "A", "label": 0,
                       "pred_before": 0, "prob_before": 0.9, "pred_after": 1, "prob_after": 0.3}
    assert rows[1]["original"] == "p ||| q" and rows[1]["prob_after"] == 0.9


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rob")
    clear_caches()
    st = LearnabilityStudy(models=("bow",), perturbations=("identity", "leet_letters"),
                           dataset=toy_spec(tmp / "data", n_train=120, n_test=60),
                           experiments=("standard", "robustness"), seeds=(0,), steps=30,
                           kind="robustness")
    run_study(st, tmp / "run", progress=False, plots=False)
    return tmp / "run"


def test_robustness_cells_store_every_test_example(run_dir):
    with RunStore(run_dir, readonly=True) as store:
        by_key = {c.key: c for c in store.cells("done")}
        summary = failure_summary(store)
        assert {s["perturbation"] for s in summary} == {"identity", "leet_letters"}
        for s in summary:
            cell = by_key[s["cell"]]
            assert cell.params["experiment"] == "robustness" and s["n"] == 60
            preds = store.predictions(s["cell"])
            # the stored predictions reproduce the cell's accuracies exactly
            acc_after = np.mean([p["pred_after"] == p["label"] for p in preds])
            acc_before = np.mean([p["pred_before"] == p["label"] for p in preds])
            assert acc_after == pytest.approx(cell.result["accuracy"])
            assert acc_before == pytest.approx(cell.result["accuracy_clean"])
            assert s["fail"] == sum(p["pred_after"] != p["pred_before"] for p in preds)
        identity = next(s for s in summary if s["perturbation"] == "identity")
        assert identity["fail"] == 0 and identity["pass"] == 60  # g(x) = x changes nothing
        leet = store.predictions(next(s["cell"] for s in summary
                                      if s["perturbation"] == "leet_letters"))
        assert sum(p["original"] != p["perturbed"] for p in leet) > 50


def test_failing_examples_are_sorted_and_filtered(run_dir):
    with RunStore(run_dir, readonly=True) as store:
        rows = failing_examples(store)
        assert all(r["pred_before"] != r["pred_after"] for r in rows)
        assert [r["drop"] for r in rows] == sorted((r["drop"] for r in rows), reverse=True)
        assert failing_examples(store, perturbation="identity") == []
        if rows:
            word = rows[0]["original"].split()[1]
            assert all(word in r["original"].lower() or word in r["perturbed"].lower()
                       for r in failing_examples(store, contains=word.upper()))


def test_run_report_lists_the_failing_examples(run_dir):
    with RunStore(run_dir, readonly=True) as store:
        expected, summary = failing_examples(store), failure_summary(store)
    report = read_rows(run_dir / "failing_examples.csv")
    assert report.column("perturbed") == [e["perturbed"] for e in expected]
    assert read_rows(run_dir / "failures.csv").column("fail") == [str(s["fail"]) for s in summary]


def test_failures_command_prints_and_exports(run_dir, tmp_path, capsys):
    out = tmp_path / "fail.csv"
    rc = main(["failures", str(run_dir), "--csv", str(out), "--limit", "3"])
    text = capsys.readouterr().out
    assert rc == 0 and "leet_letters" in text and "fail rate" in text
    with RunStore(run_dir, readonly=True) as store:
        expected = failing_examples(store)
    t = read_rows(out)
    assert len(t) == len(expected)
    assert t.column("original") == [e["original"] for e in expected]
    rc = main(["failures", str(run_dir), "--perturbation", "nope"])
    assert rc == 2 and "no stored predictions match" in capsys.readouterr().err
    rc = main(["failures", str(tmp_path)])
    assert rc == 2 and "not a robustlab run directory" in capsys.readouterr().err


def test_schema_1_store_still_opens(tmp_path):
    path = tmp_path / "store.sqlite"
    with RunStore(tmp_path) as store:
        store.init_run("robustness", "old", {})
    conn = sqlite3.connect(path)  # make it look like a store written before predictions existed
    conn.execute("DROP TABLE predictions")
    conn.execute("UPDATE meta SET value='1' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.predictions() == [] and ro.prediction_counts() == {}
        assert ro.run_info().name == "old"
    with RunStore(tmp_path) as rw:  # a writer upgrades it in place
        assert rw.has_predictions_table()
        version = rw.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        assert version[0] == str(SCHEMA_VERSION)
