"""Results of a run kind without a dedicated screen: one row per finished cell."""

from __future__ import annotations

from textual.app import ComposeResult

from robustlab.runs.store import RunStore
from robustlab.tui.screens.base import RunScreen
from robustlab.tui.specs import Table
from robustlab.tui.widgets.heat_table import HeatTable


def load_generic(path) -> Table:
    """Scalar fields of every done cell's result (the store's view of any study)."""
    with RunStore(path, readonly=True) as store:
        results = store.done_results(limit=5000)
        skipped = store.skipped_line()
    cols: list[str] = []
    for _, r in results:
        cols += [c for c, v in r.items() if c not in cols and not isinstance(v, (dict, list))]
    numeric = [c for c in cols if any(isinstance(r.get(c), float) for _, r in results)]
    return Table("cells", ["cell", *cols], [[k, *[r.get(c) for c in cols]] for k, r in results],
                 heat=numeric, keys=[k for k, _ in results], skipped=skipped)


class GenericScreen(RunScreen):
    def body(self) -> ComposeResult:
        yield HeatTable(cursor_type="row", id="cells")

    def load(self) -> Table:
        return load_generic(self.path)

    def show(self, view: Table) -> None:
        self.set_status(f"{len(view.rows)} finished cells")
        self.query_one("#cells", HeatTable).show(view)

    def exportables(self):
        return {"cells": self.query_one("#cells", HeatTable).sorted_table()}
