"""The robustlab terminal UI: ``RobustlabApp(run_dirs, settings)``.

A front end over the run store and the study commands: it lists run directories, follows them by
reading their stores in thread workers, shows their results, and starts, stops and resumes studies
by launching the same ``robustlab`` command lines as detached processes (see launch.py).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.app import App
from textual.binding import Binding

from robustlab.errors import RobustlabError
from robustlab.textfmt import printable
from robustlab.tui import data, forms, launch
from robustlab.tui.screens.dialogs import ConfirmScreen

THEMES = ("textual-dark", "textual-light")


@dataclass
class Settings:
    """Everything the app needs from outside; tests pass fixed clocks and small intervals."""

    runs_root: str = "runs"  # where new studies write (relative to cwd)
    poll_seconds: float = 1.0
    theme: str = "textual-dark"
    clock: Callable[[], float] = time.time
    alive: Callable[[int | None], bool] = launch.pid_alive
    #: builds robustlab's command-line parser (the forms are derived from it); handed in by
    #: ``robustlab tui`` (robustlab.cli.build_parser), never imported here
    parser: Callable[[], argparse.ArgumentParser] | None = None
    program: Sequence[str] | None = None  # None = python -m robustlab
    cwd: Path = field(default_factory=Path.cwd)
    #: seconds a worker gets after SIGINT, then after SIGTERM, before Stop sends the next signal
    stop_grace: tuple[float, float] = launch.STOP_GRACE

    def command_parser(self) -> argparse.ArgumentParser:
        if self.parser is None:
            raise RobustlabError("the TUI needs robustlab's command-line parser: "
                                 "Settings(parser=robustlab.cli.build_parser)")
        return self.parser()

    def recipes(self) -> list[forms.Recipe]:
        return forms.recipes(self.command_parser())


class RobustlabApp(App):
    TITLE = "robustlab"
    CSS_PATH = "robustlab.tcss"
    BINDINGS = [
        Binding("q", "quit", "Quit"),
        Binding("t", "toggle_theme", "Theme", show=False),  # listed by "? Keys"
        Binding("question_mark", "keys", "Keys"),
        Binding("N", "new_study", "New study", show=False),
    ]

    def __init__(self, run_dirs: Sequence[str | os.PathLike[str]] = (),
                 settings: Settings | None = None) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.run_dirs: list[Path] = [Path(p) for p in run_dirs] or [
            self.settings.cwd / self.settings.runs_root]
        # the default folder may not exist yet: that is "no runs", not a missing run
        self.implicit_root = None if run_dirs else self.run_dirs[0]
        self.theme = self.settings.theme
        #: the new-study form's last launched values (recipe name -> field dest -> value) and
        #: that recipe: a form opened again (after a run failed, say) starts from them
        self.form_memory: dict[str, dict[str, Any]] = {}
        self.last_recipe: str | None = None

    def on_mount(self) -> None:
        from robustlab.tui.screens.runs import RunsScreen

        self.push_screen(RunsScreen())

    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        """Every toast is plain text (``markup`` is ignored): messages quote paths, errors and
        stored values, which must neither be parsed as markup nor reach the terminal raw."""
        super().notify(printable(message, lines=True), title=printable(title),
                       severity=severity, timeout=timeout, markup=False)

    def on_resize(self) -> None:
        self.set_class(self.size.width >= 120, "-wide")

    # ---- navigation ---------------------------------------------------------------------------
    def open_run(self, run: data.RunSummary) -> None:
        if run.status in ("corrupt", "missing"):
            self.notify(run.error or f"{run.path} cannot be read", title="cannot open run",
                        severity="error", timeout=8)
            return
        if run.status in ("running", "starting", "died") or not run.done:
            self.open_progress(run.path)
        else:
            self.open_results(run.path, run.kind)

    def open_progress(self, path: Path) -> None:
        from robustlab.tui.screens.progress import ProgressScreen

        self.push_screen(ProgressScreen(path))

    def open_results(self, path: Path, kind: str) -> None:
        """The results screen its study package declares for ``kind`` (the generic summary
        screen for a kind that declares none, or one robustlab does not run)."""
        from robustlab.studies import find
        from robustlab.tui.screens.generic import GenericScreen

        declared = find(kind)
        screen = (declared.part("screen") if declared else None) or GenericScreen
        self.push_screen(screen(path))

    def action_new_study(self) -> None:
        from robustlab.tui.screens.new_study import NewStudyScreen

        self.push_screen(NewStudyScreen())

    def action_keys(self) -> None:
        """Show or hide the panel listing every key of the current screen."""
        if self.screen.query("HelpPanel"):
            self.action_hide_help_panel()
        else:
            self.action_show_help_panel()

    def action_toggle_theme(self) -> None:
        self.theme = THEMES[1] if self.theme == THEMES[0] else THEMES[0]

    def attach(self, path: Path) -> None:
        if path not in self.run_dirs:
            self.run_dirs.append(path)

    def _refresh_list(self) -> None:
        from robustlab.tui.screens.runs import RunsScreen

        for screen in self.screen_stack:
            if isinstance(screen, RunsScreen):
                screen.refresh_runs()

    # ---- actions on runs: each in a thread worker (they read the store), result as a toast ------
    def _in_worker(self, what: str, fn: Callable[[], object],
                   done: Callable[[object], None]) -> None:
        def work() -> None:
            try:
                result = fn()
            except (RobustlabError, OSError) as exc:
                self.call_from_thread(self.notify, str(exc), title=f"cannot {what}",
                                      severity="error", timeout=8)
                return
            self.call_from_thread(done, result)

        self.run_worker(work, thread=True, group=what)

    def launch_study(self, argv: list[str]) -> None:
        def started(run_dir: object) -> None:
            path = Path(run_dir)  # type: ignore[arg-type]
            self.attach(path)
            self.notify(f"started {launch.command_string(argv)}")
            self.pop_screen()
            self._refresh_list()
            self.open_progress(path)

        self._in_worker("launch", lambda: launch.launch(
            argv, cwd=self.settings.cwd, program=self.settings.program), started)

    def stop_run(self, path: Path) -> None:
        """Stop the run's worker in a thread (SIGINT, then SIGTERM, then SIGKILL after the grace
        periods: :func:`launch.stop`); each escalation is shown as it happens, and the last toast
        says which signal stopped it, or that it is still alive (an error, never "stopped")."""
        settings = self.settings

        def step(line: str) -> None:
            self.call_from_thread(self.notify, line, title="stop", timeout=max(
                4.0, sum(settings.stop_grace)))

        def done(result: object) -> None:
            assert isinstance(result, launch.StopResult)
            self.notify(result.message, title="stopped" if result.stopped else "not stopped",
                        severity="information" if result.stopped else "error", timeout=12)
            self._refresh_list()

        self._in_worker("stop", lambda: launch.stop(path, settings.program,
                                                    grace=settings.stop_grace, report=step),
                        done)

    def resume_run(self, path: Path) -> None:
        """Check what resuming would run, show that exact command, launch it only on "yes"."""
        program = self.settings.program

        def confirm(plan: object) -> None:
            assert isinstance(plan, launch.ResumePlan)

            def answer(yes: bool | None) -> None:
                if yes:
                    self._in_worker("resume", lambda: launch.resume(
                        path, plan=plan, program=program), lambda pid: self.notify(
                        f"resumed {path.name} as pid {pid} (done cells are kept)"))

            self.push_screen(ConfirmScreen(f"Resume {path}? This runs:", detail=plan.display),
                             answer)

        self._in_worker("resume", lambda: launch.resume_plan(path, program=program), confirm)

    def write_report(self, path: Path) -> None:
        """Write the HTML report of the run at ``path`` (thread worker) and say where it went:
        ``path/report.html``, or the current directory when the run directory is read-only."""
        from robustlab.report import write_report

        target = (path / "report.html" if os.access(path, os.W_OK)
                  else self.settings.cwd / f"{path.name}-report.html")
        self.notify(f"writing the report of {path.name} …", timeout=3)
        self._in_worker("write report", lambda: write_report([path], target, "html"),
                        lambda out: self.notify(f"report written to {out}", title="report",
                                                timeout=12))

    def delete_run(self, path: Path) -> None:
        def deleted(_: object) -> None:
            self.notify(f"deleted {path}")
            if path in self.run_dirs:
                self.run_dirs.remove(path)
            self._refresh_list()

        def answer(yes: bool | None) -> None:
            if yes:
                self._in_worker("delete", lambda: launch.delete(path), deleted)

        self.push_screen(ConfirmScreen(f"Delete {path} and all its results?"), answer)
