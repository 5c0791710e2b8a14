"""Counterfactual bias results: the pairs × k table of B(p,k) and a pair's F_soft histogram."""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable

from robustlab.studies.second_order.bias_view import BiasView, load_bias
from robustlab.tui.messages import Loaded
from robustlab.tui.screens.base import RunScreen
from robustlab.tui.widgets.heat_table import HeatTable
from robustlab.tui.widgets.plot import SpecPlot


class HistogramLoaded(Loaded):
    pass


class BiasScreen(RunScreen):
    def body(self) -> ComposeResult:
        with Vertical(id="split"):
            yield HeatTable(cursor_type="cell", id="bias")
            yield SpecPlot(id="hist")

    def load(self) -> BiasView:
        return load_bias(self.path)

    def show(self, view: BiasView) -> None:
        self.set_status(
            f"{len(view.table.rows)} pairs · k = {', '.join(map(str, view.ks))} · "
            "move the cursor to a cell for its F_soft histogram")
        self.query_one("#bias", HeatTable).show(view.table)

    @on(DataTable.CellHighlighted, "#bias")
    def _cell(self, event: DataTable.CellHighlighted) -> None:
        table = self.query_one("#bias", HeatTable)
        if self.view is None or not table.row_count:
            return
        row = table.row_values(event.coordinate.row)
        if row is None:
            return
        pair = str(row[0])
        col = event.coordinate.column
        k = self.view.ks[col - 1] if col >= 1 else None
        self._histogram(pair, k)

    @work(thread=True, exclusive=True, group="hist")
    def _histogram(self, pair: str, k: int | None) -> None:
        try:
            self.post_message(HistogramLoaded(self.view.histogram(self.path, pair, k)))
        except Exception as exc:  # noqa: BLE001
            self.post_message(HistogramLoaded(error=str(exc)))

    def on_histogram_loaded(self, message: HistogramLoaded) -> None:
        message.stop()
        if message.error:
            self.notify(message.error, severity="error")
        else:
            self.query_one("#hist", SpecPlot).show(message.view)

    def exportables(self):
        if self.view is None:
            return {}
        return {"B(p,k) table": self.query_one("#bias", HeatTable).sorted_table(),
                "F_soft histogram": self.query_one("#hist", SpecPlot).spec}
