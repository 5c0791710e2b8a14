"""Pilot-driven tests of every screen, on fixture run directories written through the store."""

from __future__ import annotations

import csv

from rich.text import Text
from textual.widgets import DataTable, Static

from robustlab.cli import build_parser
from robustlab.studies.cross_domain.screen import CrossDomainScreen
from robustlab.studies.learnability.screen import LearnabilityScreen
from robustlab.studies.second_order.attack_screen import AttackScreen
from robustlab.studies.second_order.bias_screen import BiasScreen
from robustlab.tui.app import RobustlabApp
from robustlab.tui.messages import RunProgress
from robustlab.tui.screens.dialogs import ConfirmScreen, ExportScreen
from robustlab.tui.screens.progress import ProgressScreen
from robustlab.tui.screens.runs import RunsScreen
from robustlab.tui.widgets.heat_table import HeatTable
from robustlab.tui.widgets.plot import SpecPlot


def text_of(widget: Static | None) -> str:
    if widget is None:
        return ""
    content = widget.content
    return content.plain if isinstance(content, Text) else str(content)


async def wait_for(pilot, predicate, timeout: float = 180.0) -> None:
    """Pause until ``predicate()`` holds (workers report asynchronously): an event with a
    generous ceiling on the monotonic clock, never a fixed sleep then an assert, so a loaded
    machine only makes it slower (tests pass under load, issue 35). The ceiling only bounds a
    failure: at load ~15 on 2 cores a worker that imports the study commands (~10 CPU-s) takes
    over a minute (issue 32), so short per-call ceilings are not used."""
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached in {timeout:g} s")
        await pilot.pause(0.05)


async def settled(pilot) -> None:
    """Wait until what a key started is drawn: scheduled animations done, then the screen's
    message queue processed (Textual's own events, not a fixed clock). Loaders are waited on
    by the callers' conditions (``view is not None``): the runs list polls forever, so "every
    worker finished" never comes."""
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()


async def open_run(pilot, app, name: str) -> None:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    await wait_for(pilot, lambda: len(screen.runs) > 0)
    row = [r.path.name for r in screen.runs].index(name)
    screen.query_one("#runs", DataTable).move_cursor(row=row)
    await pilot.pause()
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.screen is not screen)  # the run's screen is up


async def test_runs_list_shows_every_run_with_its_status(runs, settings):
    app = RobustlabApp([runs["learn"].parent], settings)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.runs) == len(runs))
        status = {r.path.name: r.status for r in screen.runs}
        assert status == {"learn-done": "done", "learn-running": "running", "attack-sobeam": "done",
                          "bias-gender": "done", "xd-mt": "done", "attack-died": "died",
                          "xd-failed": "failed", "corrupt": "corrupt"}
        table = screen.query_one("#runs", DataTable)
        assert table.row_count == len(runs)
        row = table.get_row(str(runs["learn-running"]))
        # cells are Text (plain, never markup): compare what they show
        assert "53/132" in str(row[3]) and str(row[5]) == "1h00m"  # fixed clock: 1 h after start
        # the died run explains itself in the detail line
        await open_run(pilot, app, "attack-died")
        assert isinstance(app.screen, ProgressScreen)  # died runs open on their progress
        await wait_for(pilot, lambda: app.screen.progress is not None)
        assert "CUDA out of memory" in text_of(app.screen.query_one("#status", Static))


async def test_corrupt_and_missing_stores_give_a_message_not_a_crash(runs, settings, tmp_path):
    app = RobustlabApp([runs["corrupt"], tmp_path / "does-not-exist"], settings)
    async with app.run_test(size=(100, 24)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.runs) == 2)
        assert [r.status for r in screen.runs] == ["corrupt", "missing"]
        assert "not a readable robustlab store" in text_of(screen.query_one("#run-detail"))
        await pilot.press("enter")
        # its answer is a notification (the event), and no screen opened on an unreadable run
        await wait_for(pilot, lambda: any("not a readable" in n.message
                                          for n in app._notifications))
        assert isinstance(app.screen, RunsScreen)
        # a results screen pointed at a corrupt store shows the error in place
        app.open_results(runs["corrupt"], "attack")
        await wait_for(pilot, lambda: isinstance(app.screen, AttackScreen) and
                       "cannot read" in text_of(app.screen.query("#status").first()
                                                if app.screen.query("#status") else None))


async def test_attaching_follows_a_run_written_through_the_store(runs, settings):
    """The progress screen of a running run: counts, running cells first, live update."""
    from robustlab.runs.store import RunStore

    seen: list[RunProgress] = []
    app = RobustlabApp([runs["learn-running"]], settings)
    async with app.run_test(size=(120, 30), message_hook=lambda m: isinstance(
            m, RunProgress) and seen.append(m)) as pilot:
        await open_run(pilot, app, "learn-running")
        screen = app.screen
        assert isinstance(screen, ProgressScreen)
        await wait_for(pilot, lambda: screen.progress is not None)
        assert screen.progress.run.counts["done"] == 53
        cells = screen.query_one("#cells", HeatTable)
        assert str(cells.get_row_at(0)[0]) == "running"
        # a writer (like the command line) finishes a running cell: the screen follows
        key = cells.row_values(0)[1]
        with RunStore(runs["learn-running"]) as store:
            store.finish(key, {"accuracy": 0.5})
        await wait_for(pilot, lambda: screen.progress.run.counts["done"] == 54)
        assert seen, "progress arrives as RunProgress messages"
        with RunStore(runs["learn-running"]) as store:  # leave the fixture as it was
            store.conn.execute("UPDATE cells SET status='running', result=NULL WHERE key=?",
                               (key,))
        await pilot.press("f")  # filter: running only
        await wait_for(pilot, lambda: screen.progress.shown_of == 2)


async def test_attack_example_browser_highlights_changed_words(runs, settings):
    app = RobustlabApp([runs["attack"]], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_run(pilot, app, "attack-sobeam")
        screen = app.screen
        assert isinstance(screen, AttackScreen)
        table = screen.query_one("#examples", HeatTable)
        await wait_for(pilot, lambda: table.row_count == 30)
        detail = screen.query_one("#detail", Static)
        await wait_for(pilot, lambda: "example 0" in text_of(detail))
        text = detail.content
        marked = [text.plain[s.start:s.end] for s in text.spans if "reverse" in str(s.style)]
        assert marked == ["a", "charming", "one", "delightful", "movie"]  # x̃ ⊕ p: film→movie
        assert "film → movie" in text.plain and "queries 40" in text.plain
        assert "0 [0.736, 0.264]  →  0 [0.520, 0.480]  ⊕ p: 1 [0.410, 0.590]" in text.plain
        await pilot.press("down")
        await wait_for(pilot, lambda: "example 1" in text_of(detail))
        assert "failed" in text_of(detail) and "vulnerable —" in text_of(detail)
        await pilot.press("f")  # filter → successful
        await wait_for(pilot, lambda: table.row_count == 15)
        assert {str(table.get_row_at(i)[2]) for i in range(15)} == {"successful"}
        await pilot.press("f", "f")  # → skipped
        await wait_for(pilot, lambda: table.row_count == 5)
        await pilot.press("down")
        await wait_for(pilot, lambda: "skipped (no patch word)" in text_of(detail))


async def test_learnability_screen_table_curves_scatter_and_export(runs, settings, tmp_path):
    app = RobustlabApp([runs["learn"]], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_run(pilot, app, "learn-done")
        screen = app.screen
        assert isinstance(screen, LearnabilityScreen)
        table = screen.query_one("#pairs", HeatTable)
        await wait_for(pilot, lambda: table.row_count == 6)
        assert "ρ(learnability, robustness)=-0.940" in text_of(screen.query_one("#status"))
        # heat colours on the numeric columns
        cell = table.get_row_at(0)[2]
        assert isinstance(cell, Text) and " on #" in str(cell.style)
        # o: sort by the next column (model, perturbation, avg_learnability); O: reverse
        await pilot.press("o", "o", "o", "O")
        assert table.border_subtitle == "sorted by avg_learnability ↓"
        assert table.row_values(0)[:2] == ["cnn", "negate"]
        await pilot.press("3")
        scat = screen.query_one("#scat", SpecPlot)
        assert "ρ=-0.940" in scat.spec.note
        await pilot.press("y")
        assert "delta" in scat.spec.title or "Δ" in scat.spec.title
        await pilot.press("2")
        assert screen.query_one("#curve", SpecPlot).spec.series[0].label == "cnn / negate"
        # export the (sorted) table from the screen
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen))
        path_input = app.screen.query_one("#path")
        path_input.value = str(tmp_path / "pairs.csv")
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "pairs.csv").exists())
        rows = list(csv.reader(open(tmp_path / "pairs.csv")))
        assert rows[0][:3] == ["model", "perturbation", "avg_learnability"]
        assert rows[1][:2] == ["cnn", "negate"] and len(rows) == 7
        # and a plot to PNG
        await wait_for(pilot, lambda: app.screen is screen)  # the export dialog closed
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen))
        from textual.widgets import Select

        what, path = app.screen.query_one("#what", Select), app.screen.query_one("#path")
        what.value = "learnability vs robustness"
        # the dialog's answer to the choice (its default file name), before ours replaces it
        await wait_for(pilot, lambda: path.value.endswith(".png"))
        app.screen.query_one("#path").value = str(tmp_path / "scatter.png")
        await pilot.press("enter")
        await wait_for(pilot, lambda: (tmp_path / "scatter.png").exists())
        assert (tmp_path / "scatter.png").read_bytes()[:4] == b"\x89PNG"


async def test_bias_screen_histogram_follows_the_cursor(runs, settings):
    app = RobustlabApp([runs["bias"]], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_run(pilot, app, "bias-gender")
        screen = app.screen
        assert isinstance(screen, BiasScreen)
        table = screen.query_one("#bias", HeatTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        await pilot.press("right", "right", "down")  # his/her, k=1
        hist = screen.query_one("#hist", SpecPlot)
        await wait_for(pilot, lambda: hist.spec is not None and "his/her, k=1" in hist.spec.title)
        assert len(hist.spec.series[0].y) == 60


async def test_cross_domain_screen_tabs(runs, settings):
    app = RobustlabApp([runs["xd"]], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await open_run(pilot, app, "xd-mt")
        screen = app.screen
        assert isinstance(screen, CrossDomainScreen)
        await wait_for(pilot, lambda: screen.query_one("#sys", HeatTable).row_count == 3)
        assert screen.query_one("#loo-table", HeatTable).row_count == 12
        assert screen.query_one("#agree", HeatTable).row_count == 3
        await pilot.press("down", "4")
        plot = screen.query_one("#gplot", SpecPlot)
        assert [s.label for s in plot.spec.series] == ["sysB"]
        await pilot.press("a")
        assert len(plot.spec.series) == 3


async def test_theme_toggle_and_back_navigation(runs, settings):
    app = RobustlabApp([runs["learn"]], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        assert app.theme == "textual-dark"
        await pilot.press("t")
        assert app.theme == "textual-light"
        await pilot.press("question_mark")  # every key of the screen, in a side panel
        await wait_for(pilot, lambda: bool(app.screen.query("HelpPanel")))
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: not app.screen.query("HelpPanel"))
        await open_run(pilot, app, "learn-done")
        assert isinstance(app.screen, LearnabilityScreen)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_delete_asks_for_confirmation(settings, tmp_path):
    from tui import fixtures

    run = fixtures.bias(tmp_path / "runs" / "b")
    app = RobustlabApp([run], settings)
    async with app.run_test(size=(100, 24)) as pilot:
        await wait_for(pilot, lambda: len(app.screen.runs) == 1)
        runs_screen = app.screen
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await wait_for(pilot, lambda: app.screen is runs_screen)  # answered: the dialog closed
        assert run.exists()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_for(pilot, lambda: not run.exists())


async def test_no_runs_yet_is_an_empty_list_with_a_hint(tmp_path):
    from robustlab.tui.app import Settings

    app = RobustlabApp([], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "No runs yet" in text_of(
            app.screen.query_one("#run-detail", Static)))
        assert app.screen.query_one("#runs", DataTable).row_count == 0


async def test_a_finished_learnability_run_without_its_summary_is_not_in_progress(settings,
                                                                                  tmp_path):
    """Issue 32's "62/62 … run in progress": every cell of a learnability run done but its
    summary.json not written yet (a resume writing it, a worker stopped before) must not say
    "run in progress", and the screen must pick the summary up when it comes."""
    from tui import fixtures

    run = fixtures.learnability(tmp_path / "runs" / "learn-resumed")
    summary = (run / "summary.json").read_bytes()
    (run / "summary.json").unlink()
    app = RobustlabApp([run.parent], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_run(pilot, app, run.name)
        await wait_for(pilot, lambda: isinstance(app.screen, LearnabilityScreen)
                       and app.screen.view is not None)
        status = text_of(app.screen.query_one("#status"))
        assert "every cell done; summary not written yet" in status
        assert "in progress" not in status
        (run / "summary.json").write_bytes(summary)
        await wait_for(pilot, lambda: not app.screen.view.partial)
        status = text_of(app.screen.query_one("#status"))
        assert "summary not written" not in status and "pairs" in status
