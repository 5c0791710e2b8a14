"""What every results screen shares: loading in a thread worker, errors shown, export, back."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Header, Static

from robustlab.textfmt import printable
from robustlab.tui.messages import Loaded
from robustlab.tui.plain import plain
from robustlab.tui.screens.dialogs import ExportScreen
from robustlab.tui.specs import Plot, Table
from robustlab.tui.widgets.heat_table import HeatTable

#: seconds between reloads of a run shown without its summary yet (:meth:`RunScreen._reload_soon`)
RELOAD_S = 3.0


def in_progress(unfinished: int) -> str:
    """The status of a run shown without its summary: cells still to go, or (none left) the
    summary not written yet — never "in progress" once every cell is done."""
    return (f"run in progress: {unfinished} cells to go" if unfinished
            else "every cell done; summary not written yet (resume writes it)")


class RunScreen(Screen):
    """A screen about one run directory; subclasses implement ``load`` (headless) and ``show``."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("e", "export", "Export"),
        # in "? Keys", not the footer: 80 columns must hold every screen's own keys
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("w", "write_report", "Write report", show=False),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = Path(path)
        self.view: Any = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(plain(f"Loading {self.path} …"), id="status", classes="status")
        yield from self.body()
        yield Footer(compact=True, show_command_palette=False)  # ctrl+p still opens it

    def body(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self.sub_title = printable(self.path)
        self.action_reload()

    def set_status(self, text: object) -> None:
        """The status line, as plain text (it quotes stored names and error messages)."""
        self.query_one("#status", Static).update(plain(text, lines=True))

    def action_reload(self) -> None:
        self._load_worker()

    @work(thread=True, exclusive=True, group="load")
    def _load_worker(self) -> None:
        try:
            view = self.load()
        except Exception as exc:  # noqa: BLE001 - a bad run dir is a message, not a crash
            self.post_message(Loaded(error=f"cannot read {self.path}: {exc}"))
            return
        self.post_message(Loaded(view))

    def on_loaded(self, message: Loaded) -> None:
        status = self.query_one("#status", Static)
        if message.error:
            self.set_status(message.error)
            status.add_class("error")
            return
        status.remove_class("error")
        self.view = message.view
        self.show(message.view)
        if getattr(message.view, "partial", False):
            self._reload_soon()
        skipped = getattr(message.view, "skipped", None)  # damaged cells the loader left out
        if skipped:
            self.notify(skipped, title="damaged cells", severity="warning", timeout=15,
                        markup=False)
        tables = self.query(HeatTable)
        if tables and not isinstance(self.focused, HeatTable):
            tables.first().focus()  # keyboard-first: arrows and sort keys work at once

    def _reload_soon(self) -> None:
        """A partial view (no summary yet) reloads every few seconds until the summary exists:
        a screen opened during a run or a resume used to keep saying "run in progress" at
        62/62 cells, long after the summary was written."""
        if getattr(self, "_reload_timer", None) is None:
            self._reload_timer = self.set_interval(RELOAD_S, self._reload_if_partial)

    def _reload_if_partial(self) -> None:
        if self.view is not None and getattr(self.view, "partial", False):
            self.action_reload()
        elif getattr(self, "_reload_timer", None) is not None:
            self._reload_timer.stop()
            self._reload_timer = None

    def load(self) -> Any:  # runs in a thread: no widget access
        raise NotImplementedError

    def show(self, view: Any) -> None:
        raise NotImplementedError

    def exportables(self) -> dict[str, Table | Plot]:
        return {}

    def action_write_report(self) -> None:
        """w: write this run's HTML report (robustlab report) and show where it went."""
        self.app.write_report(self.path)

    def action_export(self) -> None:
        items = {k: v for k, v in self.exportables().items() if v is not None}
        if not items:
            self.notify("nothing to export yet", severity="warning")
            return
        # the default file name is shown in an input: a run dir whose path would need
        # escaping there (control characters) is not offered, the current directory is
        target = (self.path / "exports" if os.access(self.path, os.W_OK)
                  and printable(self.path) == str(self.path) else Path.cwd())

        def done(path: Path | None) -> None:
            if path:
                self.notify(f"saved {path}")

        self.app.push_screen(ExportScreen(items, target), done)


class TextScreen(ModalScreen[None]):
    """A read-only page of text (e.g. the augmentation advice, which names stored
    perturbations), shown as plain text; escape or q closes it."""

    BINDINGS = [Binding("escape", "dismiss", "Close"), Binding("q", "dismiss", "Close")]
    DEFAULT_CSS = """
    TextScreen { align: center middle; }
    TextScreen > VerticalScroll { width: 90%; height: 80%; border: round $accent;
        background: $surface; padding: 0 1; }
    """

    def __init__(self, title: str, text: str) -> None:
        super().__init__()
        self.title_text = title
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(plain(self.title_text, "bold").append("  (escape: close)"))
            yield Static(plain(self.text, lines=True), id="text")
