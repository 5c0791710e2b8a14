"""Failing examples per perturbation (CheckList style): pass/fail counts, the worst examples,
a text filter, the highlighted example's texts, export (``e``)."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Input, Static

from robustlab.textfmt import short_model
from robustlab.tui.failures import FailuresView, load_failures
from robustlab.tui.plain import PlainInput, append, plain
from robustlab.tui.screens.base import RunScreen
from robustlab.tui.widgets.heat_table import HeatTable


class FailuresScreen(RunScreen):
    BINDINGS = [
        Binding("slash", "filter", "Filter"),
        Binding("x", "clear", "All cells"),
    ]

    def __init__(self, path) -> None:
        super().__init__(path)
        self.cell: dict | None = None  # the summary row the examples are restricted to
        self.shown: list[dict] = []

    def body(self) -> ComposeResult:
        with Vertical(id="failures"):
            yield HeatTable(cursor_type="row", id="fail-summary")
            yield PlainInput(placeholder="/ filter: text in the original or perturbed example",
                             id="fail-filter", compact=True)
            yield HeatTable(cursor_type="row", id="fail-examples")
            yield Static("", id="fail-detail", classes="detail")

    def load(self) -> FailuresView:
        return load_failures(self.path)

    def show(self, view: FailuresView) -> None:
        n = sum(r[3] for r in view.summary.rows)
        fails = sum(r[5] for r in view.summary.rows)
        status = (f"{fails} of {n} examples fail their CheckList test (INV: prediction "
                  "changed; DIR: expectation not met) · worst first by drop in P(label)")
        if view.task_run:
            status = (f"{fails} of {n} examples fail the task's rule (entities: the entity "
                      "set changed; |d|>t: the score moved more than t; ranking: the top "
                      "candidate or the answers changed) · worst first by how far they moved")
        if not view.summary.rows:
            status = ("no stored predictions: only robustness cells of runs made by this "
                      "robustlab version keep them")
        self.set_status(status)
        self.query_one("#fail-summary", HeatTable).show(view.summary, keep_cursor=True)
        self._examples()

    def _examples(self) -> None:
        if self.view is None:
            return
        text = self.query_one("#fail-filter", Input).value
        self.shown = self.view.filtered(self.cell, text)
        what = ("all cells" if self.cell is None else
                f"{short_model(self.cell['model'])} / {self.cell['perturbation']} / seed "
                f"{self.cell['seed']}")
        table = self.query_one("#fail-examples", HeatTable)
        table.show(FailuresView.table(self.shown, f"failing examples: {what}"))
        table.border_title = plain(f"{len(self.shown)} failing examples · {what}")
        self._detail()

    def _detail(self) -> None:
        table = self.query_one("#fail-examples", HeatTable)
        detail = self.query_one("#fail-detail", Static)
        key = table.current_key()
        if key is None:
            detail.update("")
            return
        e = self.shown[int(key)]
        lines = self.view.detail(e) if self.view is not None else None
        if lines is not None:  # a task's example in its words: tags marked, score, ranking
            text = plain("")
            for i, line in enumerate(lines):  # each line escaped; the breaks are ours
                append(text.append("\n") if i else text, line.strip())
            detail.update(text)
            return
        # one line each (a newline in a text is shown as \n): the -/+ layout cannot be faked
        text = append(plain("- "), e["original"])
        detail.update(append(text.append("\n+ "), e["perturbed"]))

    @on(DataTable.RowSelected, "#fail-summary")
    def _pick_cell(self, event: DataTable.RowSelected) -> None:
        key = event.row_key.value
        if self.view is None or key not in self.view.cells:
            return
        self.cell = dict(self.view.cells[key])
        self._examples()

    @on(DataTable.RowHighlighted, "#fail-examples")
    def _row(self) -> None:
        self._detail()

    @on(Input.Changed, "#fail-filter")
    def _filter(self) -> None:
        self._examples()

    def action_filter(self) -> None:
        self.query_one("#fail-filter", Input).focus()

    def action_clear(self) -> None:
        self.cell = None
        self.query_one("#fail-filter", Input).value = ""
        self._examples()

    def exportables(self):
        if self.view is None:
            return {}
        return {"failing examples (shown)": FailuresView.table(self.shown, texts=True),
                "pass/fail counts": self.view.summary}
