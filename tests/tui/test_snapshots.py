"""Snapshots of every screen at 80×24 and 120×40 (review a failing report before updating:
``pytest tests/tui/test_snapshots.py --snapshot-update``, then look at each changed SVG, e.g.
rendered with ``chromium --headless --no-sandbox --screenshot=x.png file.svg``). Fixture data
and the clock are fixed."""

from __future__ import annotations

import pytest

from robustlab.tui.app import RobustlabApp

from .conftest import make_settings
from .test_app import settled, wait_for

SIZES = [(80, 24), (120, 40)]


def _app(snap_runs) -> RobustlabApp:
    return RobustlabApp([next(iter(snap_runs.values())).parent], make_settings())


async def _open(pilot, name: str, ready) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: len(app.screen.runs) == 8)
    app.screen.query_one("#runs").move_cursor(row=[r.path.name for r in app.screen.runs]
                                              .index(name))
    await pilot.press("enter")
    await wait_for(pilot, lambda: ready(app.screen))
    await settled(pilot)  # loaded and drawn


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_runs_list(snap_compare, snap_runs, size):
    async def ready(pilot):
        await wait_for(pilot, lambda: len(pilot.app.screen.runs) == 8)
        await settled(pilot)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_progress(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "learn-running", lambda s: getattr(s, "progress", None) is not None
                    and s.query_one("#cells").row_count == 132)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_learnability(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "learn-done", lambda s: s.view is not None)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_attack_browser(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "attack-sobeam", lambda s: s.view is not None)
        await pilot.press("down", "down")
        await wait_for(pilot, lambda: "example 2" in str(
            pilot.app.screen.query_one("#detail").content))
        await settled(pilot)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


def _real_app(snap_runs) -> RobustlabApp:
    from robustlab.cli import build_parser

    return RobustlabApp([next(iter(snap_runs.values())).parent], make_settings(parser=build_parser))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_new_study_rejected(snap_compare, snap_runs, size):
    """The real learnability form, one row per field; a rejected value keeps the form filled
    and shows the error under its field."""
    async def ready(pilot):
        app = pilot.app
        await wait_for(pilot, lambda: len(app.screen.runs) == 8)
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.recipes) > 0,)
        screen.query_one("#recipes").highlighted = [r.name for r in screen.recipes].index(
            "learnability")
        await wait_for(pilot, lambda: screen.recipe is not None
                       and screen.recipe.name == "learnability")
        await wait_for(pilot, lambda: bool(screen.query(f"#f{screen._gen}-out")))  # its form
        screen.field("model").value = "bow"
        screen.field("seeds").value = "0,x"
        await wait_for(pilot, lambda: screen.error is not None and "--seeds" in screen.error,)
        screen.field("seeds").cursor_blink = False  # a blinking cursor makes the snapshot flaky
        screen.field("seeds").focus()
        beside = screen.query_one(f"#e{screen._gen}-seeds")
        await wait_for(pilot, lambda: beside.has_class("-shown") and "--seeds" in str(
            screen.query_one("#field-help").content), 30)
        await settled(pilot)

    assert snap_compare(_real_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_failing_examples(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "learn-done", lambda s: s.view is not None)
        await pilot.press("f")
        await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == "FailuresScreen"
                       and pilot.app.screen.view is not None)
        await settled(pilot)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_bias(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "bias-gender", lambda s: s.view is not None)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_cross_domain(snap_compare, snap_runs, size):
    async def ready(pilot):
        await _open(pilot, "xd-mt", lambda s: s.view is not None)

    assert snap_compare(_app(snap_runs), terminal_size=size, run_before=ready)
