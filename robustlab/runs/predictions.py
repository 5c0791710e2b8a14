"""Per-example predictions on the perturbed test set, and the failing examples read from them.

A robustness cell (exp 1) keeps, for every test example, its text before and after the
perturbation, its label, and the model's prediction and probability of the true label before and
after (:data:`robustlab.runs.store.PREDICTION_FIELDS`, table ``predictions`` of the run store).

*Failing* follows the cell's CheckList test: for an invariance test (INV, every label-preserving
perturbation) an example fails when the perturbation changes the model's prediction; for a
directional test (DIR, a label-changing perturbation with an expectation for the task, e.g.
negation on a binary task) when the prediction neither changes nor loses probability on the
original label; a "changed" test has no failures (:mod:`robustlab.metrics.checklist_tests`). Examples are ranked worst first by the drop in the probability of
the true label (``prob_before - prob_after``), CheckList's and LangTest's "worst examples". The
CLI (``robustlab failures``), the TUI's failing-examples screen and the reports all read through
:func:`failure_summary` and :func:`failing_examples`, so they show the same rows.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

__all__ = ["EXAMPLE_COLUMNS", "export_examples", "failing_examples", "failure_summary",
           "prediction_rows"]

#: columns of an exported failing example, in order
EXAMPLE_COLUMNS = ("model", "perturbation", "seed", "idx", "label", "pred_before", "pred_after",
                   "prob_before", "prob_after", "drop", "original", "perturbed")


def _text(x: Any) -> str:
    """A test example as one string (sentence pairs joined with ' ||| ')."""
    return x if isinstance(x, str) else " ||| ".join(map(str, x))


def prediction_rows(originals: Sequence[Any], perturbed: Sequence[Any], labels: Sequence[Any],
                    proba_before: Any, proba_after: Any) -> list[dict[str, Any]]:
    """One stored row per test example (``proba_*`` are n×classes probability arrays)."""
    rows = []
    for i, (x, g, y) in enumerate(zip(originals, perturbed, labels, strict=True)):
        pb, pa, y = proba_before[i], proba_after[i], int(y)
        rows.append({"idx": i, "original": _text(x), "perturbed": _text(g), "label": y,
                     "pred_before": int(pb.argmax()), "prob_before": round(float(pb[y]), 6),
                     "pred_after": int(pa.argmax()), "prob_after": round(float(pa[y]), 6)})
    return rows


def _cells(store: Any) -> dict[str, dict[str, Any]]:
    """cell -> params, with the cell's CheckList test (``test``: INV unless an eval cell of a
    label-changing perturbation stored DIR or changed, :mod:`robustlab.metrics.checklist_tests`;
    eval and robustness cells store it)."""
    return {c.key: {**c.params, "test": (c.result or {}).get("test", "INV"),
                    "expectation": (c.result or {}).get("expectation")}
            for c in store.cells("done")}


def _fails(test: str, r: dict[str, Any]) -> bool:
    """Whether a stored prediction row fails its cell's test (a text the perturbation left
    unchanged is not tested; a "changed" test has no failures)."""
    from robustlab.metrics.checklist_tests import INV, example_fails
    from robustlab.tasks.stored import is_task_test, row_failed

    if is_task_test(test):  # a task's own rule (robustlab.tasks.stored)
        return row_failed(test, r)
    if test == INV:
        return r["pred_after"] != r["pred_before"]
    if r["original"] == r["perturbed"]:
        return False
    return bool(example_fails(test, r["pred_before"], r["pred_after"], r["prob_before"],
                              r["prob_after"]))


def failure_summary(store: Any) -> list[dict[str, Any]]:
    """Pass/fail counts per done cell with predictions (model, perturbation, seed order); cells
    found damaged (``store.damaged``: by this read or an earlier :func:`failing_examples`) are
    left out."""
    from robustlab.runs.store import DamagedCell

    counts = store.prediction_counts()
    out = []
    for key, params in _cells(store).items():
        if key not in counts or key in store.damaged:
            continue
        n, fail = counts[key]
        if params["test"] != "INV":  # DIR / changed: counted by the test's own rule
            try:
                fail = sum(_fails(params["test"], r) for r in store.predictions(key))
            except DamagedCell:
                continue
        out.append({"cell": key, "model": params.get("model"),
                    "perturbation": params.get("perturbation"), "seed": params.get("seed"),
                    "test": params["test"], "expectation": params["expectation"], "n": n, "pass": n - fail, "fail": fail,
                    "fail_rate": fail / n if n else math.nan})
    return out


def failing_examples(store: Any, *, perturbation: str | None = None, model: str | None = None,
                     seed: int | None = None, contains: str | None = None,
                     limit: int | None = None) -> list[dict[str, Any]]:
    """The failing examples (prediction changed), worst first, filtered as asked.

    ``contains`` keeps examples whose original or perturbed text contains it (case-insensitive).
    Ties in the probability drop keep cell and example order, so the list is deterministic.
    A cell whose stored predictions are damaged is skipped (and noted in ``store.damaged``).
    """
    from robustlab.runs.store import DamagedCell

    cells = _cells(store)
    out = []
    needle = contains.lower() if contains else None
    for key, params in cells.items():
        if perturbation is not None and params.get("perturbation") != perturbation:
            continue
        if model is not None and params.get("model") != model:
            continue
        if seed is not None and int(params.get("seed", -1)) != int(seed):
            continue
        try:  # every row is read (and verified), not only the changed ones: a damaged row
            # anywhere in the cell makes its counts untrustworthy too
            rows = store.predictions(key)
        except DamagedCell:
            continue
        for r in rows:
            if not _fails(params["test"], r):
                continue
            if needle and needle not in r["original"].lower() and needle not in \
                    r["perturbed"].lower():
                continue
            out.append({"model": params.get("model"), "perturbation": params.get("perturbation"),
                        "seed": params.get("seed"), "idx": r["idx"], "label": r["label"],
                        "pred_before": r["pred_before"], "pred_after": r["pred_after"],
                        "prob_before": r["prob_before"], "prob_after": r["prob_after"],
                        "drop": _drop(params["test"], r),
                        "original": r["original"], "perturbed": r["perturbed"]})
    out.sort(key=lambda e: -e["drop"])  # stable: cell, then example order among ties
    return out[:limit] if limit is not None else out


def _drop(test: str, r: dict[str, Any]) -> float:
    """The probability of the label lost, or a task's own measure of how far the prediction
    moved (:func:`robustlab.tasks.stored.drop`)."""
    from robustlab.tasks.stored import drop, is_task_test

    if is_task_test(test):
        return drop(test, r)
    return round(r["prob_before"] - r["prob_after"], 6)


def export_examples(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str], *,
                    user: bool = False, extra: Sequence[str] = ()) -> None:
    """Write failing examples atomically (CSV, TSV or JSONL from the extension); ``user``: a
    path the user named (``failures --csv``, :func:`robustlab.outputs.atomic_write`);
    ``extra``: columns after the usual ones (an endpoint run's raw answers)."""
    from robustlab.data.files import write_rows

    write_rows(path, rows, columns=[*EXAMPLE_COLUMNS, *extra], user=user)


def write_failure_report(store: Any, out_dir: str | os.PathLike[str]) -> list[str]:
    """The run's report files for failing examples: ``failures.csv`` (pass/fail counts per
    cell) and ``failing_examples.csv`` (every failing example, worst first); none without
    stored predictions. Returns the file names written."""
    from pathlib import Path

    from robustlab.data.files import write_rows

    examples = failing_examples(store)  # first: it finds damaged cells the summary leaves out
    summary = failure_summary(store)
    if not summary:
        return []
    out = Path(out_dir)
    write_rows(out / "failures.csv", summary,
               columns=["model", "perturbation", "seed", "test", "expectation", "n", "pass",
                        "fail", "fail_rate"])
    export_examples(examples, out / "failing_examples.csv")
    return ["failures.csv", "failing_examples.csv"]
