"""Modal dialogs: confirm, export (table → CSV/JSON, plot → PNG) and add a run directory."""

from __future__ import annotations

import re
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from robustlab.tui.plain import PlainInput, plain
from robustlab.tui.specs import Plot, Table, export


class _Body(VerticalScroll):
    """The confirmation text's scrolling box; it tells its dialog when it scrolled."""

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if isinstance(self.screen, ConfirmScreen):
            self.screen.show_more()


class ConfirmScreen(ModalScreen[bool]):
    """Yes/no; ``y`` confirms, ``n``/Escape cancels (and No has the focus).

    The question and ``detail`` (e.g. the exact command a resume runs) are plain text (control
    characters escaped, never markup: text from a run directory cannot hide or restyle itself)
    in a scrolling box that leaves the buttons on screen at 80×24 whatever the text's length;
    arrows, PgUp/PgDn, Home/End scroll it, and its border says how much is below the fold.
    """

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No"),
                Binding("down", "scroll('down')", "Scroll", show=False),
                Binding("up", "scroll('up')", show=False),
                Binding("pagedown", "scroll('page_down')", show=False),
                Binding("pageup", "scroll('page_up')", show=False),
                Binding("end", "scroll('end')", show=False),
                Binding("home", "scroll('home')", show=False)]

    def __init__(self, question: str, detail: str | None = None) -> None:
        super().__init__()
        self.question = question
        self.detail = detail

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog confirm"):
            with _Body(id="confirm-body"):
                yield Static(plain(self.question, lines=True), classes="question")
                if self.detail is not None:
                    yield Static(plain(self.detail, lines=True), id="detail", classes="detail")
            with Horizontal(classes="buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()
        self.call_after_refresh(self.show_more)

    def on_resize(self) -> None:
        self.call_after_refresh(self.show_more)

    def action_scroll(self, how: str) -> None:
        body = self.query_one("#confirm-body", _Body)
        {"down": body.scroll_down, "up": body.scroll_up, "page_down": body.scroll_page_down,
         "page_up": body.scroll_page_up, "end": body.scroll_end,
         "home": body.scroll_home}[how](animate=False)

    def show_more(self) -> None:
        """The box's border says how many lines are hidden below (or that some are above)."""
        try:
            body = self.query_one("#confirm-body", _Body)
        except NoMatches:  # not composed yet, or dismissed
            return
        below = max(0, round(body.max_scroll_y - body.scroll_y))
        note = (f"↓ {below} more line{'s' * (below != 1)} (↓ PgDn End)" if below else
                "↑ more above (↑ PgUp Home)" if round(body.scroll_y) > 0 else None)
        body.border_subtitle = Text(note) if note else None

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
            yield PlainInput(self._default(next(iter(self.items))), id="path")
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
            self.app.call_from_thread(self.query_one("#export-error", Label).update,
                                      plain(exc, lines=True))
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
            yield Label(plain(self.prompt), classes="question")
            yield PlainInput(self.value, id="path")

    @on(Input.Submitted)
    def _done(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
