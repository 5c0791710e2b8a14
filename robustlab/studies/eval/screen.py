"""Eval results (a trained model tested as it is): A0, A1, A1 − A0, failure and no-op rate per
perturbation, the accuracy bars, ``f`` for the failing examples and ``j`` to judge samples
(paper 001's human check)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical

from robustlab.studies.eval.view import EvalView, load_eval
from robustlab.tui.screens.base import RunScreen, in_progress
from robustlab.tui.specs import fmt
from robustlab.tui.widgets.heat_table import HeatTable
from robustlab.tui.widgets.plot import SpecPlot


class EvalScreen(RunScreen):
    BINDINGS = [Binding("f", "failures", "Failures"), Binding("j", "judge", "Judge")]

    def body(self) -> ComposeResult:
        with Vertical(id="split"):
            yield HeatTable(cursor_type="row", id="eval")
            yield SpecPlot(id="acc")

    def load(self) -> EvalView:
        return load_eval(self.path)

    def show(self, view: EvalView) -> None:
        parts = [f"{view.model}: clean {view.metric} {fmt(view.clean)}",
                 f"{len(view.table.rows)} perturbations", "f: failing examples"]
        if view.partial:  # no summary yet: say why, from the store's counts
            parts.append(in_progress(view.unfinished))  # RunScreen reloads it until done
        # the headline (worst perturbations) first: what a reader looks for
        self.set_status((f"{view.headline}\n" if view.headline else "") + " · ".join(parts)
                        + (f"\n{view.endpoint}" if view.endpoint else ""))
        self.query_one("#eval", HeatTable).show(view.table, keep_cursor=True)
        self.query_one("#acc", SpecPlot).show(view.accuracy_plot())

    def action_failures(self) -> None:
        """CheckList-style failing examples: the predictions each perturbation changed."""
        from robustlab.tui.screens.failures import FailuresScreen

        self.app.push_screen(FailuresScreen(self.path))

    def action_judge(self) -> None:
        """Paper 001's human check of the label- and meaning-changing samples."""
        from robustlab.studies.eval.judge_screen import JudgeScreen

        self.app.push_screen(JudgeScreen(self.path))

    def exportables(self):
        if self.view is None:
            return {}
        return {"eval table": self.query_one("#eval", HeatTable).sorted_table(),
                "accuracy per perturbation": self.view.accuracy_plot()}
