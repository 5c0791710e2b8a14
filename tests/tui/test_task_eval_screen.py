"""The TUI on an eval run of a task (issue 31): an NER run's screen names entity F1 and the
failure rule, fits 80 columns, and its failing examples show the tokens whose tags changed."""

from __future__ import annotations

import json

from robustlab.studies.eval.screen import EvalScreen
from robustlab.tasks.examples import TaggedExample
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.failures import FailuresScreen
from robustlab.tui.specs import fmt

from .test_app import open_run, text_of, wait_for


class CapitalTagger:
    """Tags a capitalised word B-PER, a word with a digit B-LOC: a letter swapped to the front
    changes its tag, so char_swap has failures to show."""

    def predict_tags(self, token_lists):
        return [tuple("B-PER" if t[:1].isupper() else "B-LOC" if any(c.isdigit() for c in t)
                      else "O" for t in toks) for toks in token_lists]


def _examples():
    out = []
    for i, (name, place) in enumerate([("Peter", "Rome"), ("Maria", "Oslo"), ("John", "Lima"),
                                       ("Anna", "Kyiv")] * 3):
        out.append(TaggedExample((name, "visits", place, f"in{i}2"),
                                 ("B-PER", "O", "B-LOC", "O")))
    return out


async def test_an_ner_run_shows_entity_f1_and_marked_tags(tmp_path, settings):
    from robustlab.studies.eval.tasks import evaluate_task

    run = tmp_path / "runs" / "ner-cap"
    evaluate_task(CapitalTagger(), run, task="ner", examples=_examples(),
                  perturbations=["char_swap", "letter_case"], seeds=[0], name="capital",
                  progress=False, plots=False)
    summary = json.loads((run / "summary.json").read_text())
    app = RobustlabApp([run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                       and app.screen.view is not None)
        screen = app.screen
        status = text_of(screen.query_one("#status"))
        assert f"clean entity F1 {fmt(summary['clean_metric'])}" in status
        table = screen.query_one("#eval")
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert {r[1] for r in rows} == {"entities"}
        assert [r[0] for r in rows] == [r["label"] for r in summary["perturbations"]]
        # the column names stdout prints for a task ("pert-clean", "moved"), shortened
        heads = [str(c.label) for c in table.columns.values()]
        assert "p-c" in heads and "moved" in heads and "changed" not in heads, heads
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FailuresScreen)
                       and app.screen.view is not None)
        fails = app.screen
        assert fails.query_one("#fail-examples").row_count > 0
        await wait_for(pilot, lambda: "->" in text_of(fails.query_one("#fail-detail")))
        detail = text_of(fails.query_one("#fail-detail"))
        assert "[" in detail and ("B-PER->" in detail or "->B-PER" in detail)
