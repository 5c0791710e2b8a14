"""The TUI writes the report of the run on screen (w) and shows the augmentation advice (v);
its PNG export goes through robustlab.plots (labelled points, legend outside)."""

from __future__ import annotations

import asyncio

import pytest
from tui import fixtures

pytest.importorskip("textual", reason="the TUI tests need textual (pip install 'robustlab[tui]')")


def _settings(tmp_path):
    from robustlab.cli import build_parser
    from robustlab.tui.app import Settings

    return Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2,
                    clock=lambda: fixtures.T0 + 3600.0)


async def _until(pilot, cond, timeout=60.0):
    from tui.test_app import wait_for  # an event with a generous ceiling

    await wait_for(pilot, cond, timeout)


def test_w_writes_the_report_and_v_shows_advice(tmp_path):
    from robustlab.studies.learnability.screen import LearnabilityScreen
    from robustlab.tui.app import RobustlabApp
    from robustlab.tui.screens.base import TextScreen

    run = fixtures.learnability(tmp_path / "learn-done")

    async def main():
        app = RobustlabApp([run], _settings(tmp_path))
        async with app.run_test(size=(110, 32)) as pilot:
            app.open_results(run, "learnability")
            await _until(pilot, lambda: isinstance(app.screen, LearnabilityScreen)
                         and app.screen.view is not None)
            await pilot.press("w")
            await _until(pilot, lambda: (run / "report.html").exists())
            await _until(pilot, lambda: any("report written to" in n.message
                                            for n in app._notifications))
            note = next(n.message for n in app._notifications if "report written" in n.message)
            assert str(run / "report.html") in note
            assert "Average learnability" in (run / "report.html").read_text()
            await pilot.press("v")
            await _until(pilot, lambda: isinstance(app.screen, TextScreen))
            text = str(app.screen.query_one("#text").render())
            assert "augmentation advice" in text and "1  negate" in text and "measured Δ" in text
            await pilot.press("escape")
            await _until(pilot, lambda: isinstance(app.screen, LearnabilityScreen))

    asyncio.run(main())


def test_tui_plot_export_uses_the_paper_style(tmp_path):
    from robustlab.studies.learnability.view import load_learnability
    from robustlab.tui.specs import export_plot

    run = fixtures.learnability(tmp_path / "learn-done")
    view = load_learnability(run)
    plot = view.scatter_plot("robustness")
    assert plot.series[0].names[0] == "bow / typo"  # every point carries its pair
    import robustlab.plots as plots

    fig = plots.spec_figure(plot)
    assert sorted(t.get_text() for t in fig.axes[0].texts)[0] == "bow / negate"
    out = export_plot(view.curve_plot(None), tmp_path / "curves.png")
    assert out.read_bytes()[:4] == b"\x89PNG"
    fig = plots.spec_figure(view.curve_plot(None))
    assert fig.legends and not fig.axes[0].get_legend()  # legend outside the curves
