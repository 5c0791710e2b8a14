"""The failing-examples screen shows exactly the failing examples stored in the run."""

from __future__ import annotations

from robustlab.runs.store import RunStore
from robustlab.studies.learnability.predictions import failing_examples
from robustlab.tui.app import RobustlabApp
from robustlab.tui.failures import EXAMPLE_TABLE_COLUMNS
from robustlab.tui.screens.failures import FailuresScreen
from robustlab.tui.specs import fmt

from .test_app import open_run, text_of, wait_for


def _shown(screen) -> list[list[str]]:
    table = screen.query_one("#fail-examples")
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _expected(rows) -> list[list[str]]:
    return [[fmt(e[c]) for c in EXAMPLE_TABLE_COLUMNS] for e in rows]


async def test_failing_examples_on_screen_equal_the_store(runs, settings):
    path = runs["learn"]
    with RunStore(path, readonly=True) as store:
        every = failing_examples(store)
        one_cell = failing_examples(store, model="bow", perturbation="negate", seed=1)
    assert every and one_cell  # the fixture has failures to show
    app = RobustlabApp([path.parent], settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await open_run(pilot, app, path.name)
        await wait_for(pilot, lambda: getattr(app.screen, "view", None) is not None)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FailuresScreen)
                       and app.screen.view is not None)
        screen = app.screen
        assert _shown(screen) == _expected(every)  # same rows, same (worst-first) order
        detail = text_of(screen.query_one("#fail-detail"))
        assert every[0]["original"] in detail and every[0]["perturbed"] in detail
        # choosing a pass/fail row restricts the examples to that model × perturbation × seed
        summary = screen.query_one("#fail-summary")
        rows = [summary.get_row_at(i) for i in range(summary.row_count)]
        summary.focus()
        summary.move_cursor(row=[(str(r[0]), str(r[1]), str(r[2])) for r in rows].index(
            ("bow", "negate", "1")))
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.cell is not None)
        assert _shown(screen) == _expected(one_cell)
        # the text filter, then back to every cell
        word = one_cell[0]["original"].split()[-1]
        await pilot.press("slash", *word)
        await wait_for(pilot, lambda: _shown(screen) == _expected(
            [e for e in one_cell if word in e["original"] or word in e["perturbed"]]))
        screen.query_one("#fail-examples").focus()
        await pilot.press("x")
        await wait_for(pilot, lambda: _shown(screen) == _expected(every))
