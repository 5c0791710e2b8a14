"""Live progress of one run: progress bar, counts, throughput, ETA, cells, failures, log tail."""

from __future__ import annotations

import threading
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, ProgressBar, Static
from textual.worker import get_current_worker

from robustlab.textfmt import printable
from robustlab.tui import data
from robustlab.tui.messages import RunProgress
from robustlab.tui.plain import append, plain
from robustlab.tui.specs import Table, fmt
from robustlab.tui.widgets.heat_table import HeatTable

FILTERS = [None, "running", "failed", "done", "pending"]
STATUS_STYLE = {"done": "green", "running": "bold cyan", "failed": "bold red", "died": "bold red",
                "interrupted": "yellow", "pending": "dim", "starting": "cyan",
                "corrupt": "bold red", "missing": "bold red"}


def status_text(status: str) -> Text:
    return plain(status, STATUS_STYLE.get(status, ""))


class ProgressScreen(Screen):
    """Follows one run by polling its store in a thread worker (never on the event loop)."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("v", "results", "Results"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("s", "stop", "Stop"),
        Binding("r", "resume", "Resume"),
        Binding("e", "export", "Export"),
        Binding("w", "write_report", "Write report", show=False),
    ]

    def __init__(self, path) -> None:
        super().__init__()
        self.path = path
        self.filter: str | None = None
        self.progress: data.Progress | None = None
        self._wake = threading.Event()

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(plain(f"Reading {self.path} …"), id="status", classes="status")
        with Horizontal(id="bar-row"):
            yield ProgressBar(total=None, show_eta=False, id="bar")
            yield Static("", id="rate")
        with Vertical(id="split"):
            yield HeatTable(cursor_type="row", id="cells")
            yield Static("", id="error-detail", classes="error")
            yield Static("", id="log", classes="log")
        yield Footer(compact=True, show_command_palette=False)  # 80 columns; ctrl+p works

    def on_mount(self) -> None:
        self.sub_title = printable(self.path)
        self.query_one("#cells", HeatTable).focus()
        self._poll()

    @work(thread=True, exclusive=True, group="poll")
    def _poll(self) -> None:
        worker = get_current_worker()
        settings = self.app.settings
        interval = settings.poll_seconds
        while not worker.is_cancelled:
            prog = data.read_progress(self.path, self.filter, now=settings.clock(),
                                      alive=settings.alive)
            self.post_message(RunProgress(self.path, prog))
            if prog.run.status not in data.LIVE:
                self._wake.wait(max(interval, 2.0) * 3)  # finished runs: refresh slowly
            else:
                self._wake.wait(interval)
            self._wake.clear()

    def on_run_progress(self, message: RunProgress) -> None:
        prog = self.progress = message.progress
        run = prog.run
        head = Text()
        append(head, f"{run.kind} ", "bold")
        head.append_text(status_text(run.status))
        c = run.counts
        head.append(f" · done {c.get('done', 0)} · running {c.get('running', 0)} · failed "
                    f"{c.get('failed', 0)} · pending {c.get('pending', 0)}")
        if run.status in ("died", "corrupt", "missing", "failed", "interrupted") and run.error:
            head.append("\n")
            append(head, run.error, "red" if run.status != "interrupted" else "yellow",
                   lines=True)
        self.query_one("#status", Static).update(head)
        bar = self.query_one("#bar", ProgressBar)
        bar.update(total=run.total or None, progress=run.done)
        rate = (f"{fmt(prog.throughput, 1)} cells/min" if prog.throughput else "– cells/min")
        self.query_one("#rate", Static).update(
            f" {rate} · ETA {data.fmt_duration(prog.eta)}")
        table = self.query_one("#cells", HeatTable)
        rows = [[c.status, c.name, c.seconds, c.attempts,
                 (c.error or "").strip().splitlines()[-1][:80] if c.error else ""]
                for c in prog.cells]
        title = f"cells ({self.filter or 'all'}: {len(rows)} of {prog.shown_of} shown)"
        if table.spec is None or table.spec.rows != rows:  # redraw only what changed
            table.show(Table(title, ["status", "cell", "seconds", "attempts", "error"], rows,
                             keys=[c.key for c in prog.cells]), keep_cursor=True)
        table.border_title = title
        self._show_error()
        log = prog.log[-8:] or prog.events[-8:]  # worker.log lines are data: shown escaped
        self.query_one("#log", Static).update(plain("\n".join(log) or "(no log yet)", lines=True))

    @on(DataTable.RowHighlighted, "#cells")
    def _show_error(self) -> None:
        if self.progress is None:
            return
        key = self.query_one("#cells", HeatTable).current_key()
        cell = next((c for c in self.progress.cells if c.key == key), None)
        err = cell.error.strip().splitlines()[-3:] if cell and cell.error else []
        self.query_one("#error-detail", Static).update(plain("\n".join(err), lines=True))

    def on_unmount(self) -> None:
        self._wake.set()  # let the polling thread see its cancellation at once

    def action_cycle_filter(self) -> None:
        self.filter = FILTERS[(FILTERS.index(self.filter) + 1) % len(FILTERS)]
        self._wake.set()

    def action_results(self) -> None:
        if self.progress is None or not self.progress.run.done:
            self.notify("no finished cells to show yet", severity="warning")
            return
        self.app.open_results(self.path, self.progress.run.kind)

    def action_write_report(self) -> None:
        """w: the report so far (labelled incomplete while the run goes on)."""
        self.app.write_report(Path(self.path))

    def action_stop(self) -> None:
        self.app.stop_run(self.path)
        self._wake.set()

    def action_resume(self) -> None:
        self.app.resume_run(self.path)
        self._wake.set()

    def action_export(self) -> None:
        from robustlab.tui.screens.base import RunScreen

        RunScreen.action_export(self)  # same dialog as the results screens

    def exportables(self):
        return {"cells": self.query_one("#cells", HeatTable).sorted_table()}
