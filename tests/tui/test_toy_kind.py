"""The TUI lists a run of a kind declared by one package (tests/fixtures/toykind) and opens the
results screen that package declares."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from robustlab import studies
from robustlab.cli import main
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.runs import RunsScreen

from .test_app import wait_for

FIXTURES = Path(__file__).parents[1] / "fixtures"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setattr(studies, "PACKAGES", [*studies.PACKAGES, "toykind"])
    return studies.find("toy")


async def test_the_tui_lists_a_new_kind_and_opens_its_screen(toy, tmp_path, settings):
    from toykind.screen import ToyScreen

    run = tmp_path / "toy-run"
    assert main(["toy", "--n", "2", "--out", str(run), "--quiet"]) == 0
    app = RobustlabApp([run], settings)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        await wait_for(pilot, lambda: screen.runs)  # the list is scanned in a worker
        assert [(r.kind, r.status) for r in screen.runs] == [("toy", "done")]
        assert "toy" in str(screen.query_one("#runs", DataTable).get_row_at(0))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ToyScreen))
