"""Learnability / CENT / robustness results: the average-learnability table, curves, scatter."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, TabbedContent, TabPane

from robustlab.studies.learnability.view import LearnabilityView, load_learnability, with_estimate
from robustlab.tui.screens.base import RunScreen, in_progress
from robustlab.tui.specs import fmt
from robustlab.tui.widgets.heat_table import HeatTable
from robustlab.tui.widgets.plot import SpecPlot


class LearnabilityScreen(RunScreen):
    BINDINGS = [
        # the tabs' own labels show 1/2/3: kept out of the footer, which must fit 80 columns
        Binding("1", "tab('table')", "Table", show=False),
        Binding("2", "tab('curves')", "Curves", show=False),
        Binding("3", "tab('scatter')", "Scatter", show=False),
        Binding("y", "toggle_y", "Rob/Δ"),
        Binding("a", "all_curves", "All curves"),
        Binding("f", "failures", "Failures"),
        Binding("v", "advice", "Advice", show=False),
    ]

    def __init__(self, path) -> None:
        super().__init__(path)
        self.against = "robustness"
        self.all_pairs = False

    def body(self) -> ComposeResult:
        with TabbedContent(initial="table", id="tabs"):
            with TabPane("Table [1]", id="table"):
                yield HeatTable(cursor_type="row", id="pairs")
            with TabPane("Curves [2]", id="curves"):
                yield SpecPlot(id="curve")
            with TabPane("Scatter [3]", id="scatter"):
                yield SpecPlot(id="scat")

    def load(self) -> LearnabilityView:
        return with_estimate(load_learnability(self.path), self.path)

    def show(self, view: LearnabilityView) -> None:
        corr = view.correlations
        parts = [f"{len(view.table.rows)} model×perturbation pairs"]
        for name in ("robustness", "delta"):
            c = corr.get(f"learnability_vs_{name}") or {}
            if c.get("rho") is not None:
                parts.append(f"ρ(learnability, {name})={fmt(c['rho'])} (p={c['p_value']:.3g})")
        est = view.estimate
        if est:
            c = (est.get("correlations") or {}).get("estimate_vs_robustness") or {}
            parts.append(f"estimate = learnability@{est['estimate_p']:g} "
                         f"({est['cost']['trainings']} trainings, {est['cost']['seconds']:.0f} s)"
                         + (f", ρ(estimate, robustness)={fmt(c['rho'])}"
                            if c.get("rho") is not None else ""))
        if view.partial:  # RunScreen reloads it until the summary exists
            parts.append(in_progress(view.unfinished))
        self.set_status(" · ".join(parts))
        self.query_one("#pairs", HeatTable).show(view.table, keep_cursor=True)
        self._plots()

    @property
    def pair(self) -> str | None:
        """The pair under the table cursor (None: all pairs)."""
        table = self.query_one("#pairs", HeatTable)
        row = None if self.all_pairs else table.row_values()
        return None if row is None else f"{row[0]} / {row[1]}"

    def _plots(self) -> None:
        if self.view is None:
            return
        self.query_one("#curve", SpecPlot).show(self.view.curve_plot(self.pair))
        self.query_one("#scat", SpecPlot).show(self.view.scatter_plot(self.against))

    @on(DataTable.RowHighlighted, "#pairs")
    def _row(self) -> None:
        self.all_pairs = False
        self._plots()

    def action_tab(self, tab: str) -> None:
        self._plots()
        self.query_one("#tabs", TabbedContent).active = tab

    def action_toggle_y(self) -> None:
        self.against = "delta" if self.against == "robustness" else "robustness"
        self._plots()

    def action_all_curves(self) -> None:
        self.all_pairs = True
        self._plots()
        self.query_one("#tabs", TabbedContent).active = "curves"

    def action_failures(self) -> None:
        """CheckList-style failing examples of the robustness cells (stored predictions)."""
        from robustlab.tui.screens.failures import FailuresScreen

        self.app.push_screen(FailuresScreen(self.path))

    def action_advice(self) -> None:
        """v: perturbations ranked by expected augmentation benefit (robustlab.studies.learnability.advice)."""
        from robustlab.studies.learnability.advice import advice_text, advise
        from robustlab.tui.data import read_summary
        from robustlab.tui.screens.base import TextScreen

        pairs = (read_summary(self.path) or {}).get("pairs")
        if not pairs:
            self.notify("no finished pairs yet: advice after the run ends", severity="warning")
            return
        self.app.push_screen(TextScreen("Augmentation advice", advice_text(advise(pairs))))

    def exportables(self):
        if self.view is None:
            return {}
        return {"learnability table": self.query_one("#pairs", HeatTable).sorted_table(),
                "learnability curves": self.view.curve_plot(self.pair),
                "learnability vs robustness": self.view.scatter_plot("robustness"),
                "learnability vs delta": self.view.scatter_plot("delta")}
