"""The failing-examples view of a run, as plain data (headless; the screen only draws it).

Both tables come from :mod:`robustlab.runs.predictions`, the same reader as ``robustlab
failures``, so the TUI, the CLI and an export show the same rows.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from robustlab.runs.predictions import (
    EXAMPLE_COLUMNS,
    failing_examples,
    failure_summary,
)
from robustlab.runs.store import RunStore
from robustlab.tui.specs import Table

SUMMARY_COLUMNS = ["model", "perturbation", "seed", "n", "pass", "fail", "fail_rate", "test"]
EXAMPLE_TABLE_COLUMNS = ["perturbation", "model", "seed", "idx", "label", "pred_before",
                         "pred_after", "prob_before", "prob_after", "drop"]
_LABELS = {"pred_before": "pred", "pred_after": "→", "prob_before": "P before",
           "prob_after": "P after", "fail_rate": "fail rate"}
#: a task's failing examples on screen (tags, scores, rankings are in the detail pane)
TASK_TABLE_COLUMNS = ["perturbation", "model", "seed", "idx", "drop"]


@dataclass
class FailuresView:
    summary: Table
    examples: list[dict[str, Any]]  # every failing example, worst first (with their texts)
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)
    #: summary row key (the cell) -> its model, perturbation and seed as stored
    cells: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: (model, perturbation, seed) -> the cell's test (a task's is ``task:<name>``)
    tests: dict[tuple[Any, Any, Any], str] = field(default_factory=dict)

    @property
    def task_run(self) -> bool:
        """Whether the run tested a task's model (NER, pairs, similarity, answer selection)."""
        from robustlab.tasks.stored import is_task_test

        return any(is_task_test(t) for t in self.tests.values())

    def detail(self, e: dict[str, Any]) -> list[str] | None:
        """A task's failing example in its words (robustlab.tasks.stored.describe), or None
        for a classifier's (the screen shows its texts)."""
        from robustlab.tasks.stored import describe, is_task_test

        test = self.tests.get((e["model"], e["perturbation"], e["seed"]))
        return describe(test, e) if is_task_test(test) else None

    def filtered(self, cell: dict[str, Any] | None = None, text: str = "") -> list[dict[str, Any]]:
        """Examples of one summary row (model/perturbation/seed) whose text contains ``text``."""
        needle = text.strip().lower()
        out = []
        for e in self.examples:
            if cell and any(e[k] != cell[k] for k in ("model", "perturbation", "seed")):
                continue
            if needle and needle not in e["original"].lower() and needle not in \
                    e["perturbed"].lower():
                continue
            out.append(e)
        return out

    @staticmethod
    def table(examples: list[dict[str, Any]], title: str = "failing examples",
              texts: bool = False) -> Table:
        """Examples as a table: on screen without the texts (the detail pane shows them),
        exported with every column (``texts=True``)."""
        from robustlab.textfmt import short_model

        task = bool(examples) and examples[0].get("prob_before") is None
        cols = list(EXAMPLE_COLUMNS) if texts else \
            TASK_TABLE_COLUMNS if task else EXAMPLE_TABLE_COLUMNS
        # on screen a model path by its last component, so prediction and P fit 80 columns;
        # an export keeps the full spec
        return Table(title, cols, [[short_model(e[c]) if c == "model" and not texts else e[c]
                                    for c in cols] for e in examples], heat=["drop"],
                     keys=[str(i) for i in range(len(examples))], labels=_LABELS)


def load_failures(path: str | os.PathLike[str]) -> FailuresView:
    with RunStore(path, readonly=True) as store:
        examples = failing_examples(store)  # first: the summary leaves out what it found damaged
        summary = failure_summary(store)
        skipped = store.skipped_line()
    from robustlab.tasks.stored import is_task_test, rule
    from robustlab.textfmt import short_model

    tests = {(s["model"], s["perturbation"], s["seed"]): s.get("test", "INV") for s in summary}
    for s in summary:  # a task's rule by name: entities, |d|>0.5, ranking
        if is_task_test(s.get("test")):
            s["test"] = rule(s["test"])
    ordered = sorted(summary, key=lambda s: -(s["fail_rate"] or 0))  # worst first
    # a model path by its last component on screen; the row's key finds the full cell
    from robustlab.metrics.checklist_tests import header

    def cell(s: dict, c: str):
        if c == "model":
            return short_model(s[c])
        if c == "test":  # INV / DIR flip / changed (which has no pass/fail)
            return header(s.get("test", "INV"), s.get("expectation"))
        if s.get("test") == "changed" and c in ("pass", "fail", "fail_rate"):
            return None
        return s[c]

    rows = [[cell(s, c) for c in SUMMARY_COLUMNS] for s in ordered]
    return FailuresView(Table("pass/fail per model × perturbation × seed", SUMMARY_COLUMNS, rows,
                              heat=["fail_rate"], labels=_LABELS,
                              keys=[s["cell"] for s in ordered]), examples, skipped,
                        {s["cell"]: {k: s[k] for k in ("model", "perturbation", "seed")}
                         for s in ordered}, tests)
