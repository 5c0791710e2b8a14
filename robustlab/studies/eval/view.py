"""The eval results screen's reader: one row per perturbation, worst first.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

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
    #: what ``clean`` is: "accuracy A0", or a task's metric ("entity F1", "Pearson")
    metric: str = "accuracy A0"
    #: a model behind an endpoint: its requests, tokens and invalid answers (one short line)
    endpoint: str = ""

    def accuracy_plot(self) -> Plot:
        """A1 − A0 per perturbation (bars numbered as the table's rows), the sign the table and
        every other output use: below 0, the perturbation costs accuracy. Tests without A1 (a
        label-changing perturbation) are drawn at 0."""
        d = EVAL_COLS.index("delta")
        x = [i + 1 for i in range(len(self.table.rows))]
        y = [r[d] if r[d] is not None else 0.0 for r in self.table.rows]
        # a task's run: its metric's drop (entity F1, Pearson ...), not accuracy's
        name = "A1 - A0" if self.metric == "accuracy A0" else f"{self.metric} pert-clean"
        clean = "A0" if self.metric == "accuracy A0" else self.metric
        return Plot(f"{name} per perturbation (table row)", "perturbation",
                    name, [Series(name, x, y, "bar",
                                  names=[str(r[0]) for r in self.table.rows])],
                    note=f"clean {clean} = {fmt(self.clean)}" if self.clean is not None else "")


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
        rows = summary["perturbations"]
        # a task's run (NER, pairs, similarity, answer selection): its own clean metric
        clean = summary.get("clean_metric", summary.get("clean_accuracy"))
        model = str(summary.get("model", "?"))
    from robustlab.studies.eval.judge import apply_judgements

    with RunStore(path, readonly=True) as store:  # judged since the summary was written too
        rows = by_harm(apply_judgements(store, rows))
    table_rows = [[r["label"], test_header(r), num(r["a0"]), num(r["a1"]),
                   (r["a1"] or {}).get("std"), num(r["delta"]), num(r["failure_rate"]),
                   num(r.get("change_rate")), num(r["noop_rate"]), len(r["seeds"])]
                  for r in rows]
    title = "the model as it is, worst first" + (" (finished cells so far)" if partial else "")
    from robustlab.tasks.stored import is_task_test, task_name

    task = task_name(rows[0]["test"]) if rows and is_task_test(rows[0].get("test")) else None
    labels, metric, line = EVAL_LABELS, "accuracy A0", headline(rows)
    if task:
        from robustlab.studies.eval.tasks import metric_label, task_headline, tui_labels

        labels, metric, line = ({**EVAL_LABELS, **tui_labels(task)}, metric_label(task),
                                task_headline(rows, task))
    return EvalView(Table(title, EVAL_COLS, table_rows,
                          heat=["a1", "delta", "failure_rate"], labels=labels),
                    clean, short_model(model), partial, line, unfinished, metric,
                    endpoint_line(path, summary, rows))


def endpoint_line(path: str | os.PathLike[str], summary: dict[str, Any] | None,
                  rows: list[dict[str, Any]]) -> str:
    """What asking an endpoint cost, short enough for 80 columns: from summary.json's
    ``endpoint`` (docs/endpoints.md), or during a run from the store's responses and the
    finished cells; "" for a local model."""
    from robustlab.endpoints.costs import count_shown, tokens_shown

    ep = (summary or {}).get("endpoint")
    if isinstance(ep, dict) and ep:  # an LLM kind has a template; only its answers can name
        llm = ep.get("template") is not None  # no label
    else:
        with RunStore(path, readonly=True) as store:
            if not store.has_responses_table():
                return ""
            totals = store.response_totals()
            missing = store.requests_without_usage()
        llm = any("invalid" in r for r in rows)
        ep = {**totals, "tokens": totals["prompt_tokens"] + totals["completion_tokens"],
              "requests_without_usage": missing,
              "invalid": sum(int(r.get("invalid") or 0) for r in rows)}

    def count(key: str) -> str:  # summary.json is data: a number, else "?"
        return count_shown(ep.get(key)) or "?"

    parts = [f"endpoint: {count('requests')} requests", tokens_shown(ep)]
    if llm:
        parts.append(f"{count('invalid')} invalid answers")
    line = " · ".join(parts)
    # 80 columns: "tokens: not reported by the server" and the invalid answers on a second line
    return line if len(line) <= 78 else " · ".join(parts[:2]) + "\n" + " · ".join(parts[2:])
