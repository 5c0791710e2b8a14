"""The runs list: every run directory with kind, status, progress, start and duration."""

from __future__ import annotations

import threading
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Static
from textual.worker import get_current_worker

from robustlab.textfmt import printable
from robustlab.tui import data
from robustlab.tui.messages import RunsScanned
from robustlab.tui.plain import append, plain
from robustlab.tui.screens.dialogs import PathScreen
from robustlab.tui.screens.progress import status_text

#: lines the run detail may take when it lists inputs (the runs table keeps the rest)
MAX_DETAIL = 10


def bar(fraction: float, width: int = 8) -> str:
    full = round(fraction * width)
    return "█" * full + "░" * (width - full)


class RunsScreen(Screen):
    BINDINGS = [
        Binding("enter", "open", "Open", priority=True),
        Binding("p", "progress", "Progress"),
        Binding("n", "new", "New study"),
        Binding("s", "stop", "Stop"),
        Binding("r", "resume", "Resume"),
        Binding("d", "delete", "Delete"),
        Binding("a", "attach", "Attach"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[data.RunSummary] = []
        self._rows: list[tuple[str, ...]] = []
        self._wake = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield DataTable(cursor_type="row", zebra_stripes=True, id="runs")
        yield Static("", id="run-detail", classes="status")
        yield Footer(compact=True, show_command_palette=False)  # 80 columns; ctrl+p works

    def on_mount(self) -> None:
        table = self.query_one("#runs", DataTable)
        table.add_columns("run", "kind", "status", "progress", "started", "duration")
        table.focus()
        self._scan()

    def on_unmount(self) -> None:
        self._wake.set()

    def refresh_runs(self) -> None:
        self._wake.set()

    @work(thread=True, exclusive=True, group="scan")
    def _scan(self) -> None:
        worker = get_current_worker()
        settings = self.app.settings
        while not worker.is_cancelled:
            dirs = [d for d in data.find_run_dirs(self.app.run_dirs)
                    if d != self.app.implicit_root or d.exists() and any(d.iterdir())]
            self.post_message(RunsScanned([data.read_run(d, settings.alive) for d in dirs]))
            self._wake.wait(settings.poll_seconds * 2)
            self._wake.clear()

    def on_runs_scanned(self, message: RunsScanned) -> None:
        self.runs = message.runs
        now = self.app.settings.clock()
        table = self.query_one("#runs", DataTable)
        rows = [(r.path.name, r.kind, r.status,
                 f"{bar(r.fraction)} {r.done}/{r.total}" if r.total else "–",
                 data.fmt_time(r.created), data.fmt_duration(r.duration(now)), str(r.path))
                for r in self.runs]
        if rows != self._rows:  # rebuild only on change: no flicker, the cursor stays put
            self._rows = rows
            cursor = table.cursor_row
            table.clear()
            for name, kind, status, prog, started, duration, key in rows:
                table.add_row(Text(printable(name), overflow="ellipsis"), plain(kind),
                              status_text(status), Text(prog), Text(started), Text(duration),
                              key=key)
            if rows:
                table.move_cursor(row=min(cursor, len(rows) - 1))
        if not self.runs:
            self.query_one("#run-detail", Static).update(
                "No runs yet: press n to start a study or a to attach to a run directory.")
        self._detail()

    @on(DataTable.RowHighlighted, "#runs")
    def _detail(self) -> None:
        run = self.current()
        if run is None:
            return
        # Text of printable strings, never markup: every value here was read from the run dir
        text = plain(run.path, "bold")
        if run.error:
            text.append("\n")
            append(text, run.error, "red" if run.status != "done" else "", lines=True)
        if run.command:  # always: what a resume would run is never hidden behind an error
            text.append("\n")
            append(text, run.command, "dim")
        for line in run.inputs:
            text.append("\ninput ", style="dim")
            append(text, line)
        detail = self.query_one("#run-detail", Static)
        # room for the inputs under the command; runs without any keep the stylesheet's height
        detail.styles.max_height = MAX_DETAIL if run.inputs else None
        detail.update(text)

    def current(self) -> data.RunSummary | None:
        table = self.query_one("#runs", DataTable)
        if not self.runs or table.cursor_row >= len(self.runs):
            return None
        return self.runs[table.cursor_row]

    @on(DataTable.RowSelected, "#runs")
    def action_open(self) -> None:
        run = self.current()
        if run is not None:
            self.app.open_run(run)

    def action_progress(self) -> None:
        run = self.current()
        if run is not None:
            self.app.open_progress(run.path)

    def action_new(self) -> None:
        self.app.action_new_study()

    def action_stop(self) -> None:
        run = self.current()
        if run is not None:
            self.app.stop_run(run.path)
            self.refresh_runs()

    def action_resume(self) -> None:
        run = self.current()
        if run is not None:
            self.app.resume_run(run.path)
            self.refresh_runs()

    def action_delete(self) -> None:
        run = self.current()
        if run is not None:
            self.app.delete_run(run.path)

    def action_attach(self) -> None:
        def add(path: str | None) -> None:
            if path:
                self.app.attach(Path(path).expanduser())
                self.refresh_runs()

        self.app.push_screen(PathScreen("Run directory (or a folder of runs) to follow:"), add)
