"""Modal dialogs: confirm, export (table → CSV/JSON, plot → PNG) and add a run directory."""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from robustlab.tui.specs import Plot, Table, export


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no; ``y``/Enter confirms, ``n``/Escape cancels.

    ``detail`` (e.g. the exact command a resume runs) is shown in full as plain text: never
    interpreted as markup, so text from a run directory cannot hide or restyle itself.
    """

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str, detail: str | None = None) -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(Text(self.question), classes="question")
            if self.detail is not None:
                yield Static(Text(self.detail), id="detail", classes="detail")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower()[:40] or "export"


class ExportScreen(ModalScreen[Path | None]):
    """Choose a table or plot of the screen and a file name; the extension picks the format."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, items: dict[str, Table | Plot], directory: Path) -> None:
        super().__init__()
        self.items = items
        self.directory = directory

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("Export (.csv/.json for tables, .png for plots)", classes="question")
            yield Select([(n, n) for n in self.items], value=next(iter(self.items)),
                         allow_blank=False, id="what")
            yield Input(self._default(next(iter(self.items))), id="path")
            yield Label("", id="export-error", classes="error")
            with Horizontal(classes="buttons"):
                yield Button("Save (enter)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()

    def _default(self, name: str) -> str:
        ext = ".png" if isinstance(self.items[name], Plot) else ".csv"
        return str(self.directory / f"{_slug(name)}{ext}")

    @on(Select.Changed, "#what")
    def _what(self, event: Select.Changed) -> None:
        self.query_one("#path", Input).value = self._default(str(event.value))

    @on(Input.Submitted, "#path")
    @on(Button.Pressed, "#save")
    def _save(self) -> None:
        name = str(self.query_one("#what", Select).value)
        self._export(self.items[name], Path(self.query_one("#path", Input).value).expanduser())

    @work(thread=True, exclusive=True)
    def _export(self, obj: Table | Plot, path: Path) -> None:
        try:
            written = export(obj, path)
        except Exception as exc:  # noqa: BLE001 - shown in the dialog
            self.app.call_from_thread(self.query_one("#export-error", Label).update, str(exc))
            return
        self.app.call_from_thread(self.dismiss, written)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


class PathScreen(ModalScreen[str | None]):
    """Ask for a path (e.g. a run directory to attach to)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, prompt: str, value: str = "") -> None:
        super().__init__()
        self.prompt, self.value = prompt, value

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(self.prompt, classes="question")
            yield Input(self.value, id="path")

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
