"""The eval results screen's reader: one row per perturbation, worst first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from robustlab.runs.store import RunStore
from robustlab.textfmt import short_model
from robustlab.tui.data import read_summary
from robustlab.tui.results import num
from robustlab.tui.specs import Plot, Series, Table, fmt

EVAL_COLS = ["perturbation", "test", "a0", "a1", "a1_sd", "delta", "failure_rate",
             "change_rate", "noop_rate", "seeds"]
EVAL_LABELS = {"a0": "A0", "a1": "A1", "a1_sd": "sd", "delta": "A1-A0", "failure_rate": "fail",
               "change_rate": "changed", "noop_rate": "no-op"}


@dataclass
class EvalView:
    table: Table  # one row per perturbation, worst first
    clean: float | None
    model: str
    partial: bool = False
    headline: str = ""
    #: cells pending or running (a partial view with none left is finished, not in progress)
    unfinished: int = 0

    def accuracy_plot(self) -> Plot:
        """A1 − A0 per perturbation (bars numbered as the table's rows), the sign the table and
        every other output use: below 0, the perturbation costs accuracy. Tests without A1 (a
        label-changing perturbation) are drawn at 0."""
        d = EVAL_COLS.index("delta")
        x = [i + 1 for i in range(len(self.table.rows))]
        y = [r[d] if r[d] is not None else 0.0 for r in self.table.rows]
        return Plot("A1 - A0 per perturbation (table row)", "perturbation",
                    "A1 - A0", [Series("A1 - A0", x, y, "bar",
                                       names=[str(r[0]) for r in self.table.rows])],
                    note=f"clean A0 = {fmt(self.clean)}" if self.clean is not None else "")


def load_eval(path: str | os.PathLike[str]) -> EvalView:
    """The eval run's table from summary.json, or (in progress) from its finished cells with
    the study's own aggregation; worst first, as every eval output."""
    from robustlab.studies.eval.study import by_harm, headline, summarise, test_header

    summary = read_summary(path)
    partial = not (summary and summary.get("perturbations") is not None)
    unfinished = 0
    if partial:
        with RunStore(path, readonly=True) as store:
            info = store.run_info()
            results = [r for _, r in store.done_results()]
            counts = store.counts()
            unfinished = counts.get("pending", 0) + counts.get("running", 0)
        config = info.config if info is not None else {}
        rows = summarise(results, config.get("perturbations") or
                         list(dict.fromkeys(r["perturbation"] for r in results)))
        clean, model = (results[0]["a0"] if results else None), str(config.get("model", "?"))
    else:
        rows, clean = summary["perturbations"], summary.get("clean_accuracy")
        model = str(summary.get("model", "?"))
    from robustlab.studies.eval.judge import apply_judgements

    with RunStore(path, readonly=True) as store:  # judged since the summary was written too
        rows = by_harm(apply_judgements(store, rows))
    table_rows = [[r["label"], test_header(r), num(r["a0"]), num(r["a1"]),
                   (r["a1"] or {}).get("std"), num(r["delta"]), num(r["failure_rate"]),
                   num(r.get("change_rate")), num(r["noop_rate"]), len(r["seeds"])]
                  for r in rows]
    title = "the model as it is, worst first" + (" (finished cells so far)" if partial else "")
    return EvalView(Table(title, EVAL_COLS, table_rows,
                          heat=["a1", "delta", "failure_rate"], labels=EVAL_LABELS),
                    clean, short_model(model), partial, headline(rows), unfinished)
