"""The report section of an eval run on a task (NER, pairs, similarity, answer selection): the
task's metric clean and perturbed per perturbation, worst first, with its figure, the clean
metrics in full (per entity type for NER; Spearman; MAP and MRR), and failing examples in the
task's words (:func:`robustlab.tasks.stored.describe`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Figure, Heading, Para, Table
from robustlab.report.format import num, spread
from robustlab.report.load import RunData

__all__ = ["task_blocks"]

#: failing examples shown per perturbation
EXAMPLES_PER_PERTURBATION = 3


def _failing(run: RunData, rows: Sequence[Mapping[str, Any]]) -> list[Any]:
    from robustlab.runs.predictions import failing_examples
    from robustlab.runs.store import RunStore
    from robustlab.tasks.stored import describe

    body = []
    with RunStore(run.path, readonly=True) as store:
        for r in rows:
            for e in failing_examples(store, perturbation=r["perturbation"],
                                      limit=EXAMPLES_PER_PERTURBATION):
                lines = [ln.strip() for ln in describe(r["test"], e)]
                body.append([r["label"], str(e["seed"]), f"{e['drop']:g}",
                             " / ".join(lines)])
    if not body:
        return [Para(f"{run.path.name}: no failing examples.", "note")]
    return [Heading(f"Failing examples, {run.path.name}", 3),
            Table(["perturbation", "seed", "moved", "example (- original, + perturbed)"],
                  body, f"Up to {EXAMPLES_PER_PERTURBATION} failing examples per perturbation, "
                  "the largest move first (NER: tags changed, marked [word before->after]; "
                  "similarity: the score's change; answer selection: the largest change of a "
                  f"candidate's score). `robustlab failures {run.path}` lists them all.",
                  numeric=False)]


def task_blocks(run: RunData, rows: Sequence[Mapping[str, Any]], gate: list[Any]) -> list[Any]:
    """The blocks of one task run (``rows``: its per-perturbation rows, worst first)."""
    from robustlab.studies.eval.study import test_header
    from robustlab.studies.eval.tasks import (
        FIELD_WORDS,
        metric_figure,
        metric_label,
        task_headline,
    )

    s = run.summary or {}
    task = s.get("task")
    m = metric_label(task)
    ds = run.config.get("dataset") or {}
    cm = s.get("clean_metrics") or {}
    extra = ", ".join(f"{k} {num(v)}" for k, v in cm.items()
                      if k not in ("per_type", "questions", "questions_with_answer", s.get("metric")))
    out: list[Any] = [
        Heading(f"The {task} model as it is, {run.path.name}", 3),
        Para(s.get("headline") or task_headline(rows, task), "headline"),
        *gate,
        Para(f"Model {str(run.config.get('model', '?')).removeprefix('object:')} evaluated as "
             f"it is on {ds.get('path') or ds.get('name')} ({task}): "
             f"{s.get('n_examples', rows[0]['n'])} examples, clean {m} "
             f"{num(s.get('clean_metric'))} ({extra})"
             + (f"; perturbing {FIELD_WORDS.get((task, s['perturb_field']), s['perturb_field'])}"
                if s.get("perturb_field") else "") + "."),
        *[Para(w, "warning") for w in s.get("warnings") or []]]
    if cm.get("per_type"):
        out.append(Table(["entity type", "clean F1"],
                         [[t, num(v)] for t, v in cm["per_type"].items()],
                         "Entity F1 per type on the clean sentences (seqeval)."))
    out.append(Table(
        ["perturbation", "fails if", f"{m} clean", f"{m} perturbed", f"{m} perturbed − clean",
         "failure rate", "moved", "no-op rate", "seeds × samples"],
        [[r["label"], test_header(r), num(r["a0"]["mean"] if isinstance(r["a0"], dict)
                                          else r["a0"]), spread(r["a1"]), spread(r["delta"]),
          spread(r["failure_rate"]), spread(r.get("change_rate")), spread(r["noop_rate"]),
          f"{len(r['seeds'])} × {r['samples']}"] for r in rows],
        f"Worst first ({m} perturbed − clean, the sign of classification's A1 − A0: negative "
        "is a loss; then the failure rate). The perturbed metric is computed per perturbed "
        "sample and averaged over samples, then mean ± sd over seeds. Fails if: "
        "entities — the entity set predicted on the perturbed tokens differs from the clean "
        "one carried to them; |d|>t — the similarity score moved more than t; ranking — the "
        "top candidate or the set of answering candidates changed; INV — the class changed; "
        "DIR not entailment — a pair whose hypothesis alone the label-changing perturbation "
        "changed, gold entailment, is still predicted entailment; changed — a label-changing "
        "perturbation with no sound expectation for the task: no perturbed metric (its gold "
        "labels no longer hold) and no pass/fail, only the share of moved predictions. "
        "Failure rate: among the examples tested (changed ones; for DIR those the expectation "
        "speaks of). Moved: changed examples whose prediction moved by the task's rule."))
    out.append(Figure(plots.png_bytes(metric_figure(rows, s.get("clean_metric"), task)),
                      f"{m} per perturbation, {run.path.name}",
                      f"{m} per perturbation: clean beside perturbed (sd over seeds).",
                      f"eval_{run.path.name}.png"))
    return out + _failing(run, rows)
