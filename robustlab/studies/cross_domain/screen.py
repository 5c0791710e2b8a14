"""Cross-domain results: systems, per-domain scores, leave-one-out, (ε,γ) curves, agreement."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, TabbedContent, TabPane

from robustlab.studies.cross_domain.view import CrossDomainView, load_cross_domain
from robustlab.tui.screens.base import RunScreen
from robustlab.tui.widgets.heat_table import HeatTable
from robustlab.tui.widgets.plot import SpecPlot

TABS = ["systems", "domains", "loo", "gamma", "agreement"]


class CrossDomainScreen(RunScreen):
    BINDINGS = [Binding(str(i + 1), f"tab('{t}')", t.capitalize(), show=False)
                for i, t in enumerate(TABS)] + [Binding("a", "all_systems", "All systems")]

    def __init__(self, path) -> None:
        super().__init__(path)
        self.system: str | None = None

    def body(self) -> ComposeResult:
        with TabbedContent(initial="systems", id="tabs"):
            with TabPane("Systems [1]", id="systems"):
                yield HeatTable(cursor_type="row", id="sys")
            with TabPane("Domains [2]", id="domains"):
                yield HeatTable(cursor_type="row", id="dom")
            with TabPane("Leave-one-out [3]", id="loo"):
                yield HeatTable(cursor_type="row", id="loo-table")
            with TabPane("ε–γ [4]", id="gamma"):
                yield SpecPlot(id="gplot")
            with TabPane("Agreement [5]", id="agreement"):
                yield HeatTable(cursor_type="row", id="agree")

    def load(self) -> CrossDomainView:
        return load_cross_domain(self.path)

    def show(self, view: CrossDomainView) -> None:
        self.set_status(
            f"{len(view.systems.rows)} systems · {len(view.domains.columns) - 1} domains · "
            "select a system for its γ curve")
        self.query_one("#sys", HeatTable).show(view.systems, keep_cursor=True)
        self.query_one("#dom", HeatTable).show(view.domains)
        self.query_one("#loo-table", HeatTable).show(view.loo)
        self.query_one("#agree", HeatTable).show(view.agreement)
        self.query_one("#gplot", SpecPlot).show(view.gamma_plot(self.system))

    @on(DataTable.RowHighlighted, "#sys")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        table = self.query_one("#sys", HeatTable)
        if self.view is None or not table.row_count:
            return
        row = table.row_values(event.cursor_row)
        if row is None:
            return
        self.system = str(row[0])
        self.query_one("#gplot", SpecPlot).show(self.view.gamma_plot(self.system))

    def action_all_systems(self) -> None:
        self.system = None
        if self.view is not None:
            self.query_one("#gplot", SpecPlot).show(self.view.gamma_plot(None))
        self.action_tab("gamma")

    def action_tab(self, tab: str) -> None:
        self.query_one("#tabs", TabbedContent).active = tab

    def exportables(self):
        if self.view is None:
            return {}
        return {"systems": self.query_one("#sys", HeatTable).sorted_table(),
                "per-domain scores": self.query_one("#dom", HeatTable).sorted_table(),
                "leave one out": self.query_one("#loo-table", HeatTable).sorted_table(),
                "agreement": self.query_one("#agree", HeatTable).sorted_table(),
                "gamma curves": self.view.gamma_plot(self.system)}
