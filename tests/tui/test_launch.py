"""Launching, stopping and resuming real detached studies from the TUI.

The study is tests/tui/slow_study.py: real cells through ``run_cells`` into a real store, each
sleeping a little, started as a detached process exactly as a ``robustlab`` study would be.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time

import pytest
from textual.widgets import Static

from robustlab.cli import build_parser
from robustlab.tui import launch
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.dialogs import ConfirmScreen
from robustlab.tui.screens.new_study import NewStudyScreen
from robustlab.tui.screens.progress import ProgressScreen

from .test_app import text_of, wait_for


async def test_new_study_form_launches_a_study_that_completes(settings, tmp_path):
    app = RobustlabApp([tmp_path / "runs"], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, NewStudyScreen)
        await wait_for(pilot, lambda: screen.recipe is not None)
        assert screen.recipe.name == "sleepy"
        command = screen.query_one("#command", Static)
        await wait_for(pilot, lambda: "robustlab sleepy --out runs/sleepy-" in text_of(command))
        # bad input is caught by the command's own parser before anything is launched
        screen.field("cells").value = "four"
        await wait_for(pilot, lambda: "invalid int value: 'four'" in text_of(
            screen.query_one("#form-error", Static)))
        assert screen.query_one("#launch").disabled
        await pilot.press("ctrl+l")
        assert isinstance(app.screen, NewStudyScreen)  # refused
        screen.field("cells").value = "4"
        screen.field("delay").value = "0.1"
        screen.field("out").value = "runs/form-run"
        await wait_for(pilot, lambda: screen.error is None and
                       text_of(command).endswith("--out runs/form-run --cells 4 --delay 0.1"))
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
        progress = app.screen
        await wait_for(pilot, lambda: progress.progress is not None and
                       progress.progress.run.status == "done")
        assert progress.progress.run.counts["done"] == 4
    run_dir = tmp_path / "runs" / "form-run"
    assert json.loads((run_dir / "summary.json").read_text())["complete"] is True
    worker = launch.read_worker(run_dir)
    assert worker["argv"][-6:] == ["--out", "runs/form-run", "--cells", "4", "--delay", "0.1"]
    assert "finished 4/4 cells" in (run_dir / "worker.log").read_text()


def _attempts(run_dir) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{run_dir / 'store.sqlite'}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT key, attempts FROM cells WHERE status='done'"))
    finally:
        conn.close()


def _gone(pid: int, seconds: float = 120.0) -> bool:
    """Wait for a worker to exit: a generous ceiling, returning as soon as it is gone."""
    end = time.monotonic() + seconds
    while launch.pid_alive(pid):
        if time.monotonic() > end:
            return False
        time.sleep(0.05)
    return True


async def test_stop_and_resume_a_detached_run(settings, tmp_path):
    hold = tmp_path / "hold"  # cells 2.. wait for its removal: Stop always comes first
    hold.touch()
    run_dir = launch.launch(["sleepy", "--out", "runs/s", "--cells", "12", "--delay", "0.4",
                             "--hold", str(hold)], cwd=tmp_path, program=settings.program)
    app = RobustlabApp([run_dir], settings)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.screen.runs and app.screen.runs[0].done >= 2)
        app.open_progress(run_dir)
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen) and
                       app.screen.progress is not None)
        screen = app.screen
        await pilot.press("s")  # SIGINT to the worker's process group
        await wait_for(pilot, lambda: screen.progress.run.status == "interrupted")
        stopped = screen.progress.run.counts
        assert stopped["running"] == 0 and 2 <= stopped["done"] < 12
        assert "interrupted by the user" in text_of(screen.query_one("#status", Static))
        # really stopped: the worker exits, so nothing more can finish
        assert _gone(launch.read_worker(run_dir)["pid"])
        done_before = _attempts(run_dir)
        hold.unlink()  # the resumed run may finish
        await pilot.press("r")  # asks first, showing the exact command it will run
        # the dialog's text is mounted a moment after the screen is pushed
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                       and app.screen.query("#detail"))
        shown = text_of(app.screen.query_one("#detail", Static))
        assert shown.startswith(f"{sys.executable} {settings.program[1]} resume {run_dir}")
        await pilot.press("y")  # `resume DIR`, detached: the study reads its stored config
        await wait_for(pilot, lambda: screen.progress.run.status == "done")
        assert screen.progress.run.counts["done"] == 12
    after = _attempts(run_dir)
    # the cells done before the stop were kept, not recomputed
    assert all(after[k] == 1 for k in done_before)
    assert len(after) == 12
    log = (run_dir / "worker.log").read_text()
    assert log.count("launching:") == 2 and "KeyboardInterrupt" in log


def test_a_launched_worker_survives_its_launcher(tmp_path, settings):
    """Detached: own session, so a hangup of the TUI's terminal does not reach it."""
    run_dir = launch.launch(["sleepy", "--out", "r", "--cells", "3", "--delay", "0.2"],
                            cwd=tmp_path, program=settings.program)
    pid = launch.read_worker(run_dir)["pid"]
    assert os.getsid(pid) == pid != os.getsid(0)
    assert _gone(pid)
    info = json.loads((run_dir / "summary.json").read_text())
    assert info["complete"] is True


async def test_new_study_forms_of_the_real_commands(tmp_path):
    """Every real study command gets a form; moving through them fast rebuilds cleanly."""
    from robustlab.tui.app import Settings

    app = RobustlabApp([tmp_path], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.recipes) > 0)
        names = [r.name for r in screen.recipes]
        assert "tui" not in names and "perturb" not in names  # only commands with --out
        for _ in range(len(names) - 1):
            await pilot.press("down")
        await wait_for(pilot, lambda: screen.recipe.name == names[-1])
        await wait_for(pilot, lambda: text_of(screen.query_one("#command", Static)).startswith(
            f"$ robustlab {names[-1]} --out runs/"))
        # every field of the chosen command is in the form
        for f in screen.recipe.fields:
            assert screen.field(f.dest) is not None


@pytest.mark.slow
async def test_launch_a_real_learnability_study_on_the_demo_data(tmp_path):
    """The form of the real ``robustlab learnability`` → detached worker → done → results."""
    from robustlab.studies.learnability.screen import LearnabilityScreen
    from robustlab.tui.app import Settings

    app = RobustlabApp([tmp_path / "runs"], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.5))
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.recipes) > 0)
        names = [r.name for r in screen.recipes]
        screen.query_one("#recipes").highlighted = names.index("learnability")
        await wait_for(pilot, lambda: screen.recipe.name == "learnability")
        await wait_for(pilot, lambda: bool(screen.query(f"#f{screen._gen}-out")))  # its form
        for dest, value in {"model": "bow", "dataset": "demo", "perturbations": "shuffle_word",
                            "p_grid": "0.5,1.0", "seeds": "0", "steps": "20",
                            "max_train": "100", "max_test": "50", "out": "runs/demo-learn"
                            }.items():
            screen.field(dest).value = value
        await wait_for(pilot, lambda: screen.error is None and "--dataset demo" in text_of(
            screen.query_one("#command", Static)))
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
        progress = app.screen
        await wait_for(pilot, lambda: progress.progress is not None and
                       progress.progress.run.status in ("done", "failed", "died"), timeout=300)
        assert progress.progress.run.status == "done", progress.progress.log
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, LearnabilityScreen) and
                       app.screen.view is not None)
        assert app.screen.view.table.rows[0][:2] == ["bow", "shuffle_word"]
    assert (tmp_path / "runs" / "demo-learn" / "summary.json").exists()


def test_a_worker_that_dies_before_its_store_exists_is_shown_with_its_error(tmp_path, settings):
    from robustlab.tui import data

    run_dir = launch.launch(["sleepy", "--out", "bad", "--cells", "many"], cwd=tmp_path,
                            program=settings.program)
    assert _gone(launch.read_worker(run_dir)["pid"])
    run = data.read_run(run_dir)
    assert run.status == "died" and not (run_dir / "store.sqlite").exists()
    assert "invalid int value: 'many'" in run.error  # the reason, from worker.log


def _ignore_sigint() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
async def test_stop_a_run_started_from_the_command_line(settings, tmp_path, inherited):
    """Not launched by the TUI (no worker.json): stop signals the pid stored in the run; SIGINT
    stops it also when it was started as a background job (``cmd &`` in a script: SIGINT
    inherited ignored)."""
    import subprocess

    hold = tmp_path / "hold"  # cells 1.. wait while it exists: the run cannot end before Stop
    hold.touch()
    proc = subprocess.Popen([*settings.program, "sleepy", "--out", str(tmp_path / "cli"),
                             "--cells", "40", "--delay", "0.3", "--hold", str(hold),
                             "--hold-from", "1"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL,
                            preexec_fn=_ignore_sigint if inherited == "ignored" else None)
    try:
        run_dir = tmp_path / "cli"
        app = RobustlabApp([run_dir], settings)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: app.screen.runs and app.screen.runs[0].done >= 1)
            assert app.screen.runs[0].status == "running"
            assert launch.read_worker(run_dir) is None
            await pilot.press("s")
            await wait_for(pilot, lambda: app.screen.runs[0].status == "interrupted")
        assert proc.wait(timeout=120) == -2  # died of its (uncaught) KeyboardInterrupt, cleanly
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_resume_confirmation_shows_the_command_even_when_the_run_has_an_error(tmp_path):
    """The runs list shows the error and the stored command; the dialog shows the exact argv
    (`robustlab resume DIR`) and the study it continues; "n" runs nothing. A run whose stored
    configuration cannot be rebuilt is refused with a message and no dialog at all, whatever
    its stored command says."""
    from robustlab.runs.store import RunStore
    from robustlab.runs.study import CONFIG_FORMAT, CONFIG_FORMAT_KEY
    from robustlab.studies.learnability.config import LearnabilityStudy
    from robustlab.tui.app import Settings

    def run_with(name: str, config: dict, command: str) -> object:
        store = RunStore(tmp_path / name)
        store.init_run("learnability", name, config, command=command)
        store.set_meta(CONFIG_FORMAT_KEY, CONFIG_FORMAT)
        store.set_run_status("failed", "3 cells not done; rerun to retry them")
        store.close()
        return tmp_path / name

    marker = tmp_path / "pwned"
    config = LearnabilityStudy(models=("bow",), perturbations=("leet_letters",)).to_dict()
    good = run_with("good", config, f"sh -c 'touch {marker}'")  # the command is only shown
    bad = run_with("bad", {**config, "evil": 1},
                   "robustlab learnability --model bow --dataset demo --out bad")
    app = RobustlabApp([good, bad], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: len(getattr(app.screen, "runs", [])) == 2)
        # the highlighted run (either) shows its error text and, under it, its stored command
        await wait_for(pilot, lambda: "3 cells not done" in text_of(
            app.screen.query_one("#run-detail", Static)))
        detail = text_of(app.screen.query_one("#run-detail", Static))
        assert "robustlab learnability --model bow" in detail or "sh -c 'touch" in detail
        app.resume_run(good)
        # the dialog's text is mounted a moment after the screen is pushed
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                       and app.screen.query("#detail"))
        shown = text_of(app.screen.query_one("#detail", Static))
        assert shown.startswith(f"{sys.executable} -P -m robustlab resume {good}")
        assert "robustlab learnability --model bow --dataset demo" in shown
        assert "touch" not in shown
        await pilot.press("n")
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        app.resume_run(bad)
        # refused with a message: wait for it (an event), then no dialog may have opened
        await wait_for(pilot, lambda: any(n.title == "cannot resume"
                                          for n in app._notifications), 60)
        assert not isinstance(app.screen, ConfirmScreen)
    assert not (good / launch.WORKER_JSON).exists() and not (bad / launch.WORKER_JSON).exists()
    assert not marker.exists()


async def test_the_form_opens_again_with_the_values_last_launched(settings, tmp_path):
    """A run that failed is fixed and launched again from the same values (issue 32); --out
    gets a fresh default, so the next launch does not resume the failed run."""
    app = RobustlabApp([tmp_path / "runs"], settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: screen.recipe is not None)
        command = screen.query_one("#command", Static)
        screen.field("cells").value = "3"
        screen.field("delay").value = "0.2"
        screen.field("out").value = "runs/first"
        await wait_for(pilot, lambda: screen.error is None and
                       text_of(command).endswith("--out runs/first --cells 3 --delay 0.2"))
        await pilot.press("ctrl+l")
        await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ProgressScreen))
        await pilot.press("n")
        again = app.screen
        assert isinstance(again, NewStudyScreen) and again is not screen
        await wait_for(pilot, lambda: again.recipe is not None and
                       "--cells 3 --delay 0.2" in text_of(again.query_one("#command", Static)))
        assert again.field("cells").value == "3" and again.field("out").value != "runs/first"
