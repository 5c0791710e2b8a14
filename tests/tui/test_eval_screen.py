"""The TUI shows an eval run (a trained model tested as it is): its results screen holds the
summary's numbers, and ``f`` opens the failing examples the run stored."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robustlab.runs.store import RunStore
from robustlab.studies.eval.screen import EvalScreen
from robustlab.studies.learnability.predictions import failing_examples
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.failures import FailuresScreen
from robustlab.tui.specs import fmt

from .test_app import open_run, text_of, wait_for

POS = ("good", "great", "fine")


class KeywordModel:
    """A tiny trained-as-it-is model: positive when a positive word appears (case-sensitive,
    so a perturbation of that word changes its prediction)."""

    def predict_proba(self, texts):
        p = np.array([0.9 if any(w in t.split() for w in POS) else 0.2 for t in texts])
        return np.stack([1 - p, p], axis=1)


@pytest.fixture
def eval_run(tmp_path):
    from robustlab.studies.eval.study import evaluate

    examples = [(f"the film was {w}", 1) for w in ("good", "great", "fine", "dull")] + \
               [(f"a {w} plot", 0) for w in ("bad", "weak", "good", "poor")]
    evaluate(KeywordModel(), tmp_path / "runs" / "eval-kw", examples=examples,
             perturbations=["leet_letters", "random_upper_transformation"], seeds=[0, 1],
             name="keyword", progress=False, plots=False)
    return tmp_path / "runs" / "eval-kw"


async def test_an_eval_run_shows_its_table_and_failing_examples(eval_run, settings):
    summary = json.loads((eval_run / "summary.json").read_text())
    with RunStore(eval_run, readonly=True) as store:
        every = failing_examples(store)
    assert every  # the fixture has failures to show
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        screen = app.screen
        table = screen.query_one("#eval")
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        expected = summary["perturbations"]
        assert [r[0] for r in shown] == [r["label"] for r in expected]
        for row, r in zip(shown, expected, strict=True):
            assert row[1] == "INV"
            assert row[3] == fmt(r["a1"]["mean"]) and row[6] == fmt(r["failure_rate"]["mean"])
        assert fmt(summary["clean_accuracy"]) in text_of(screen.query_one("#status"))
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FailuresScreen)
                       and app.screen.view is not None)
        fails = app.screen.query_one("#fail-examples")
        assert fails.row_count == len(every)


async def test_a_finished_run_without_its_summary_is_not_in_progress(eval_run, settings):
    """Every cell done but no summary.json (a resume writing it, a worker stopped before): the
    status says so, not "run in progress", and the screen picks the summary up when it comes."""
    summary = (eval_run / "summary.json").read_bytes()
    (eval_run / "summary.json").unlink()
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        status = text_of(app.screen.query_one("#status"))
        assert "every cell done; summary not written yet" in status
        assert "in progress" not in status
        (eval_run / "summary.json").write_bytes(summary)
        await wait_for(pilot, lambda: not app.screen.view.partial, timeout=60)
        assert "summary not written" not in text_of(app.screen.query_one("#status"))


async def test_o_marks_the_sorted_column_in_its_header(eval_run, settings):
    app = RobustlabApp([eval_run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, eval_run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        table = app.screen.query_one("#eval")
        heads = lambda: [str(c.label) for c in table.ordered_columns]  # noqa: E731
        assert not any(h.endswith(("▲", "▼")) for h in heads())
        await pilot.press("o")
        await wait_for(pilot, lambda: heads()[0] == "perturbation ▲")
        await pilot.press("o")
        await wait_for(pilot, lambda: heads()[1] == "test ▲" and heads()[0] == "perturbation")
        await pilot.press("O")
        await wait_for(pilot, lambda: heads()[1] == "test ▼")
