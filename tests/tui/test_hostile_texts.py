"""The TUI on run directories whose texts are hostile (issue 21 items 1, 5, 6, 12), driven through
the app with Pilot at 80×24.

After every step the whole screen is read back from the compositor (what Textual sends to the
terminal): it must hold no control character, show the payload escaped (``\\x1b]0;…``), and the
app must still be running (Rich markup in data raised ``MarkupError`` and killed it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual import events
from textual.widgets import Button, DataTable

from robustlab.cli import build_parser
from robustlab.procs import pid_alive
from robustlab.textfmt import printable
from robustlab.tui.app import RobustlabApp, Settings
from robustlab.tui.plain import plain
from robustlab.tui.screens.dialogs import ConfirmScreen
from robustlab.tui.screens.failures import FailuresScreen
from robustlab.tui.screens.progress import ProgressScreen
from robustlab.tui.screens.runs import RunsScreen
from tui import hostile
from tui.hostile import NAMED, NAMED_SHOWN, PAYLOAD, SHOWN, SHOWN_ALL, raw_controls

from .conftest import make_settings
from .test_app import settled, text_of, wait_for

SIZE = (80, 24)


@pytest.fixture(scope="module")
def bad(tmp_path_factory) -> dict[str, Path]:
    return hostile.make_all(tmp_path_factory.mktemp("hostile"))


def screen_text(app) -> str:
    """Every line of the current screen as Textual renders it for the terminal."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


def assert_clean(app) -> str:
    """The app is alive and nothing on screen is a control character; returns the screen."""
    assert app.is_running and app._exception is None, app._exception
    text = screen_text(app)
    assert raw_controls(text) == [], f"raw control characters on screen: {text!r}"
    return text


async def pick(pilot, app, name: str) -> RunsScreen:
    screen = app.screen
    assert isinstance(screen, RunsScreen)
    await wait_for(pilot, lambda: name in [r.path.name for r in screen.runs])
    run = next(r for r in screen.runs if r.path.name == name)
    screen.query_one("#runs", DataTable).move_cursor(row=screen.runs.index(run))
    # the detail pane follows the cursor: its first line is the run's path, as plain text
    shown = plain(run.path).plain
    await wait_for(pilot, lambda: text_of(screen.query_one("#run-detail")).startswith(shown))
    await pilot.pause()  # and the screen has drawn it
    return screen


async def test_runs_list_and_detail(bad, settings):
    app = RobustlabApp([bad["learn"].parent], settings)
    async with app.run_test(size=SIZE) as pilot:
        await pick(pilot, app, NAMED)
        shown = assert_clean(app)
        assert NAMED_SHOWN[:20] in shown  # the hostile directory name, escaped (row and detail)
        assert "robustlab attack --recipe so-beam" in shown  # its stored command, under it
        await pick(pilot, app, "generic")
        shown = assert_clean(app)
        assert "kind\\x1b]0;pwned-t" in shown  # a stored kind, escaped in its table cell
        for name in ("learn", "attack", "died", "bias", "xd"):
            await pick(pilot, app, name)
            assert_clean(app)


@pytest.mark.parametrize("name, expect", [
    ("learn", "cnn\\x1b]0;pwned-title"), ("attack", "\\x1b]0;pwned-title"),
    ("bias", "he/she\\x1b]0;pwned"), ("xd", "sys\\x1b]0;pwned-title"),
    ("generic", "value \\x1b]0;pwned")])
async def test_results_screens(bad, settings, name, expect):
    app = RobustlabApp([bad[name]], settings)
    async with app.run_test(size=SIZE) as pilot:
        screen = await pick(pilot, app, name)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is not screen
                       and getattr(app.screen, "view", None) is not None
                       and expect in screen_text(app))
        shown = assert_clean(app)
        assert expect in shown, shown
        assert app.screen.sub_title == printable(str(bad[name]))
        for key in ("down", "down", "o", "1", "2", "3", "4", "5", "1"):  # rows, sort, tabs, plots
            await pilot.press(key)
            await settled(pilot)
            assert_clean(app)


async def test_attack_example_texts_and_markup(bad, settings):
    app = RobustlabApp([bad["attack"]], settings)
    async with app.run_test(size=(120, 40)) as pilot:
        await pick(pilot, app, "attack")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "example 0" in text_of(app.screen.query_one("#detail")))
        detail = text_of(app.screen.query_one("#detail"))
        # words are split on whitespace for the diff: U+2028 separates two of them
        assert (f"original   the film {SHOWN_ALL.replace(chr(92) + 'u2028', ' ')} is a charming "
                "story") in detail
        # markup in a text is shown as typed (the pane wraps it with a hanging indent)
        assert "[/b][link=https://evil.example]click[/link]" in detail
        shown = assert_clean(app)
        assert "[/b][link=https://evil" in shown, shown


async def test_failing_examples_screen(bad, settings):
    app = RobustlabApp([bad["learn"]], settings)
    async with app.run_test(size=SIZE) as pilot:
        await pick(pilot, app, "learn")
        await pilot.press("enter")
        await wait_for(pilot, lambda: getattr(app.screen, "view", None) is not None)
        await pilot.press("f")
        await wait_for(pilot, lambda: isinstance(app.screen, FailuresScreen)
                       and app.screen.view is not None)
        screen = app.screen
        await wait_for(pilot, lambda: text_of(screen.query_one("#fail-detail")).startswith("- "))
        detail = text_of(screen.query_one("#fail-detail"))
        assert detail.startswith("- ") and "\n+ " in detail and SHOWN_ALL in detail
        assert len(detail.splitlines()) == 2  # U+2028 in a text cannot add a line
        assert_clean(app)
        # choose the row of the hostile perturbation: its examples are found by its real name
        summary = screen.query_one("#fail-summary")
        rows = [summary.row_values(i) for i in range(summary.row_count)]
        target = next(i for i, r in enumerate(rows) if r[1] == f"typo{PAYLOAD}" and r[5])
        summary.focus()
        summary.move_cursor(row=target)
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.cell is not None)
        assert screen.cell["perturbation"] == f"typo{PAYLOAD}"
        assert screen.shown and all(e["perturbation"] == f"typo{PAYLOAD}" for e in screen.shown)
        assert "failing examples · cnn\\x1b]0;pwned" in assert_clean(app)  # the border title
        await pilot.press("slash", *"[/b]")  # the filter takes markup as text
        await settled(pilot)
        assert_clean(app)


async def test_progress_screen_log_tail_and_cell_error(bad, settings):
    app = RobustlabApp([bad["died"]], settings)
    async with app.run_test(size=(100, 40)) as pilot:
        await pick(pilot, app, "died")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen)
                       and app.screen.progress is not None)
        await wait_for(pilot, lambda: f"loading {SHOWN[0]}" in text_of(
            app.screen.query_one("#log")) and "more in worker.log" in screen_text(app))
        log = text_of(app.screen.query_one("#log"))
        assert f"loading {SHOWN[0]}" in log and f"RuntimeError: worker died {SHOWN[0]}" in log
        shown = assert_clean(app)
        assert "more in worker.log" in shown and SHOWN[0] in shown
        await pilot.press("f", "f")  # failed cells: the hostile error under the table
        await wait_for(pilot, lambda: app.screen.filter == "failed"
                       and app.screen.progress.shown_of == 1)
        await wait_for(pilot, lambda: "ValueError" in text_of(
            app.screen.query_one("#error-detail")))
        assert "ValueError: \\x1b]0;pwned" in text_of(app.screen.query_one("#error-detail"))
        assert_clean(app)


async def test_form_error_with_markup_typed_one_character_at_a_time(tmp_path):
    """``hf:NAME[/CONFIG]`` in the --dataset check's message, then a value with markup: each
    keystroke redraws the error and the command line; nothing is parsed as markup."""
    app = RobustlabApp([tmp_path / "runs"], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.recipes) > 0,)
        screen.query_one("#recipes").highlighted = [r.name for r in screen.recipes].index(
            "learnability")
        await wait_for(pilot, lambda: screen.recipe is not None
                       and screen.recipe.name == "learnability")
        await wait_for(pilot, lambda: bool(screen.query(f"#f{screen._gen}-out")))  # its form
        screen.field("model").value = "bow"  # the --dataset check is the first to fail
        field = screen.field("dataset")
        field.value = ""
        field.focus()
        await pilot.press("h")  # "h" is no dataset: the message lists hf:NAME[/CONFIG]
        await wait_for(pilot, lambda: screen.error is not None
                       and "hf:NAME[/CONFIG]" in screen.error, 30)
        await wait_for(pilot, lambda: "hf:NAME[/CONFIG]" in text_of(
            screen.query_one(f"#e{screen._gen}-dataset")))
        assert_clean(app)
        for ch in "f:x[/y]":
            await pilot.press(ch)
            await settled(pilot)
            assert_clean(app)
        await wait_for(pilot, lambda: field.value == "hf:x[/y]" and screen.error is None,)
        assert "--dataset 'hf:x[/y]'" in text_of(screen.query_one("#command"))
        field.value = ""
        field.post_message(events.Paste(f"data{PAYLOAD}.tsv"))  # a hostile name pasted
        await wait_for(pilot, lambda: screen.error is not None and "data" in screen.error,)
        await wait_for(pilot, lambda: SHOWN[0] in screen_text(app))
        # the field holds what it shows (Input pastes the first line: up to U+2028)
        assert field.value == "data" + SHOWN_ALL.split("\\u2028")[0]
        assert SHOWN[0] in assert_clean(app)


def _buttons_on_screen(app) -> bool:
    height = app.size.height
    return all(0 <= b.region.y and b.region.bottom <= height and b.region.height > 0
               for b in app.screen.query(Button))


async def test_confirm_dialog_fits_80x24_and_scrolls_to_the_end(tmp_path):
    detail = "\n".join([f"robustlab resume {tmp_path}/{'very-long-name/' * 10}run"]
                       + [f"config line {i}: {PAYLOAD}" for i in range(40)] + ["LAST LINE"])
    answers: list[bool | None] = []
    app = RobustlabApp([tmp_path / "none"], Settings(parser=build_parser, cwd=tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(ConfirmScreen(f"Resume {tmp_path}? This runs:", detail=detail),
                        answers.append)
        # laid out: its buttons, and the note that text is hidden below (set once it is sized)
        await wait_for(pilot, lambda: "No (n)" in screen_text(app)
                       and "more lines" in screen_text(app))
        shown = assert_clean(app)
        assert _buttons_on_screen(app) and "Yes (y)" in shown and "No (n)" in shown
        assert "Resume" in shown and "LAST LINE" not in shown
        assert "more lines" in shown  # the box says text is hidden below
        await pilot.press("end")
        await wait_for(pilot, lambda: "LAST LINE" in screen_text(app))
        shown = assert_clean(app)
        assert "LAST LINE" in shown and _buttons_on_screen(app)
        assert "config line 39:" in shown and "config line 38:" in shown
        await pilot.press("n")
        await wait_for(pilot, lambda: answers)  # the dialog answered
    assert answers == [False]


async def test_delete_confirmation_of_a_hostile_run_name(bad, settings):
    app = RobustlabApp([bad["learn"].parent], settings)
    async with app.run_test(size=SIZE) as pilot:
        await pick(pilot, app, NAMED)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                       and app.screen.query(Button))
        await wait_for(pilot, lambda: "named-\\x1b]0;pwned-title\\x07" in screen_text(app)
                       and _buttons_on_screen(app))  # the dialog drawn, its name escaped
        shown = assert_clean(app)
        assert "named-\\x1b]0;pwned-title\\x07" in shown
        assert _buttons_on_screen(app)
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))  # answered
        assert bad["named"].exists()


async def test_notifications_are_plain_text(settings, tmp_path):
    app = RobustlabApp([tmp_path / "none"], settings)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        app.notify(f"saved {PAYLOAD}", title=f"t{PAYLOAD}")
        await wait_for(pilot, lambda: "saved" in screen_text(app)
                       and "\\x1b]0;pwned-title\\x07" in screen_text(app))
        shown = assert_clean(app)  # the toast folds the long escaped word onto its own lines
        assert "saved" in shown and "\\x1b]0;pwned-title\\x07" in shown and "t\\x1b]0;" in shown


async def test_stop_from_the_tui_escalates_and_says_so(tmp_path):
    """A worker that ignores SIGINT (as one started with ``&`` from a script does): Stop sends
    SIGTERM after the grace period, and the toasts say what happened."""
    run = tmp_path / "runs" / "stubborn"
    argv, ready = hostile.stubborn_argv(tmp_path, run, "INT")
    proc = subprocess.Popen(argv, cwd=tmp_path)
    try:
        hostile.wait_file(ready)
        hostile.record_worker(run, proc.pid)
        app = RobustlabApp([run], make_settings(cwd=tmp_path, stop_grace=(1.0, 1.0)))
        async with app.run_test(size=(120, 30), notifications=True) as pilot:
            await pick(pilot, app, "stubborn")
            await pilot.press("s")
            await wait_for(pilot, lambda: proc.poll() is not None, 60)
            # Stop's third toast says how it ended (the worker is gone before it is written)
            await wait_for(pilot, lambda: len(app._notifications) >= 3
                           and "did not stop after SIGINT; sent SIGTERM" in screen_text(app))
            said = [n.message for n in app._notifications]
            assert said[0] == (f"sent SIGINT (Ctrl-C) to worker {proc.pid}; waiting up to 1 s "
                               "for it to stop")
            assert said[1] == f"worker {proc.pid} did not stop 1 s after SIGINT; sent SIGTERM"
            assert said[2].startswith(f"worker {proc.pid} did not stop after SIGINT; sent "
                                      "SIGTERM: it stopped")
            assert [n.title for n in app._notifications][2] == "stopped"
            assert "did not stop after SIGINT; sent SIGTERM" in assert_clean(app)
        assert not pid_alive(proc.pid)  # (the app's own scan reaped it: no exit status here)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_tui_exits_non_zero_when_the_app_dies(tmp_path):
    """An exception that ends the app (as MarkupError did) makes ``robustlab tui`` exit 1."""
    code = ("import sys\n"
            "from robustlab.tui.app import RobustlabApp\n"
            "def boom(self):\n"
            "    raise RuntimeError('boom')\n"
            "RobustlabApp.on_mount = boom\n"
            "from robustlab.cli import main\n"
            f"sys.exit(main(['tui', {str(tmp_path)!r}]))\n")
    env = {**os.environ, "TEXTUAL_DRIVER": "textual.drivers.headless_driver:HeadlessDriver",
           "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120, cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "RuntimeError: boom" in done.stdout + done.stderr
