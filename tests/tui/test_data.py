"""Headless readers, exports, forms and launch helpers (no textual app involved)."""

from __future__ import annotations

import argparse
import csv
import json

import pytest

from robustlab.errors import InputError
from robustlab.studies.cross_domain.view import load_cross_domain
from robustlab.studies.learnability.view import load_learnability
from robustlab.studies.second_order.attack_view import load_attack
from robustlab.studies.second_order.bias_view import load_bias
from robustlab.tui import data, forms, launch, results
from robustlab.tui.specs import Plot, Series, Table, export


def test_statuses_of_every_fixture(runs):
    got = {name: data.read_run(path) for name, path in runs.items()}
    assert got["learn"].status == "done" and got["learn"].counts["done"] == 132
    assert got["learn-running"].status == "running"  # its pid is this test process: alive
    assert got["learn-running"].counts["running"] == 2
    assert got["died"].status == "died"
    assert "CUDA out of memory" in got["died"].error  # the reason comes from worker.log
    assert got["failed"].status == "failed" and got["failed"].counts["failed"] == 1
    assert got["corrupt"].status == "corrupt"
    assert "not a readable robustlab store" in got["corrupt"].error


def test_missing_directory_is_a_status_not_an_exception(tmp_path):
    run = data.read_run(tmp_path / "nope")
    assert run.status == "missing" and "does not exist" in run.error
    empty = tmp_path / "empty"
    empty.mkdir()
    assert "no run store" in data.read_run(empty).error


def test_died_without_log_names_the_failed_cell(runs, tmp_path):
    from tui import fixtures

    d = fixtures.failed(tmp_path / "f")
    import sqlite3

    conn = sqlite3.connect(d / "store.sqlite")
    conn.execute("UPDATE run SET status='running', pid=?", (fixtures.DEAD_PID,))
    conn.commit()
    conn.close()
    run = data.read_run(d)
    assert run.status == "died" and "system=s1" in run.error and "ValueError" in run.error


def test_find_run_dirs_expands_folders(runs):
    root = runs["learn"].parent
    found = data.find_run_dirs([root])
    assert {p.name for p in found} == {p.name for p in runs.values()}


def test_progress_orders_running_first_and_estimates_rate(runs):
    prog = data.read_progress(runs["learn-running"], now=0.0)
    assert [c.status for c in prog.cells[:2]] == ["running", "running"]
    assert prog.shown_of == 132
    assert prog.throughput == pytest.approx(60 / 7.0)  # fixture cells finish every 7 s
    assert prog.eta == pytest.approx(77 / (60 / 7.0) * 60 + 2 / (60 / 7.0) * 60)
    failed = data.read_progress(runs["failed"], status="failed")
    assert [c.key for c in failed.cells] == ["system=s1"] and "ValueError" in failed.cells[0].error


def test_learnability_view_uses_summary_and_partial_cells(runs):
    view = load_learnability(runs["learn"])
    assert len(view.table.rows) == 6 and not view.partial
    scatter = view.scatter_plot("robustness")
    assert "ρ=-0.940" in scatter.note and len(scatter.series[0].x) == 6
    assert "p=0.0048 (exact)" in scatter.note  # the p-value says how it was obtained
    # a run written before p_method existed: scipy's asymptotic p, said so
    assert "(asymptotic)" in view.scatter_plot("delta").note
    assert view.curve_plot("bow / typo").xlog
    partial = load_learnability(runs["learn-running"])
    assert partial.partial and partial.curves  # per-p means of the finished cells


def test_attack_view_and_example(runs):
    view = load_attack(runs["attack"])
    assert len(view.table.rows) == 30
    assert {r[2] for r in view.filtered("skipped").rows} == {"skipped"}
    ex = results.load_example(runs["attack"], view.table.keys[0])
    assert ex["result_type"] == "successful" and ex["perturbed"]


def test_word_diff_marks_exactly_the_changed_words():
    a, b = results.word_diff("the film is a charming story", "the film is one delightful story")
    assert [w for w, c in a if c] == ["a", "charming"]
    assert [w for w, c in b if c] == ["one", "delightful"]
    a, b = results.word_diff("same words", None)
    assert b == [] and not any(c for _, c in a)  # no vulnerable example: no highlight


def test_bias_and_cross_domain_views(runs):
    bias = load_bias(runs["bias"])
    assert bias.table.columns == ["pair", "k=0", "k=1", "k=2"] and len(bias.table.rows) == 3
    hist = bias.histogram(runs["bias"], "he/she", 1)
    assert len(hist.series[0].y) == 60
    xd = load_cross_domain(runs["xd"])
    assert len(xd.systems.rows) == 3 and "bleu" in xd.systems.columns
    assert len(xd.loo.rows) == 12 and len(xd.agreement.rows) == 3
    assert xd.gamma_plot("sysA").series[0].x == [1.0, 2.0, 5.0, 10.0, 20.0, 50.0]


def test_exports(tmp_path):
    table = Table("t", ["a", "b"], [[1, None], [2, 0.5]])
    export(table, tmp_path / "t.csv")
    assert list(csv.reader(open(tmp_path / "t.csv"))) == [["a", "b"], ["1", ""], ["2", "0.5"]]
    export(table, tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text()) == [{"a": 1, "b": None},
                                                               {"a": 2, "b": 0.5}]
    plot = Plot("p", "x", "y", [Series("s", [0.01, 0.1, 1.0], [0.1, 0.5, 0.9])], xlog=True)
    export(plot, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(InputError, match=".csv or .json"):
        export(table, tmp_path / "t.xlsx")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robustlab")
    sub = parser.add_subparsers()
    p = sub.add_parser("study", help="a study")
    p.add_argument("--out", required=True)
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--executor", choices=["sequential", "process"], default="sequential")
    p.add_argument("--fast", action="store_true")
    sub.add_parser("perturb").add_argument("text")  # no --out: not a study
    return parser


def test_forms_follow_the_parser():
    parser = _parser()
    [recipe] = forms.recipes(parser)
    kinds = {f.dest: f.kind for f in recipe.fields}
    assert kinds == {"out": "text", "seeds": "list", "executor": "choice", "fast": "flag"}
    argv = forms.build_argv(recipe, {"out": "runs/x", "seeds": "0 1 2", "executor": "process",
                                     "fast": True})
    assert argv == ["study", "--out", "runs/x", "--executor", "process", "--fast"]
    assert forms.validate(recipe, argv, parser) is None
    bad = forms.build_argv(recipe, {"out": "runs/x", "seeds": "zero"})
    assert "invalid int value" in forms.validate(recipe, bad, parser)


def test_pid_alive():
    import os

    from tui.fixtures import DEAD_PID

    assert launch.pid_alive(os.getpid()) and not launch.pid_alive(DEAD_PID)
    assert not launch.pid_alive(None)


def test_tui_command_rejects_bad_options(capsys):
    from robustlab.cli import main

    assert main(["tui", "--poll", "0"]) == 2
    assert "--poll must be positive" in capsys.readouterr().err
