"""The eval study's section of ``robustlab report``: per perturbation A0, A1, A1 − A0, the failure
rate and the no-op rate (from ``summary.json``, never recomputed), the figure, and a few failing
examples per perturbation (from the run store's predictions, worst first). Several eval runs —
a plain and an augmented model, say — are compared side by side first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Figure, Heading, Para, Table
from robustlab.report.format import marked_words, num, spread
from robustlab.report.load import RunData

#: failing examples shown per perturbation
EXAMPLES_PER_PERTURBATION = 3

Blocks = list[Any]


def _rows(run: RunData) -> list[Mapping[str, Any]]:
    """The per-perturbation rows of the run's summary (or, before it exists, of its cells)."""
    from robustlab.runs.store import RunStore
    from robustlab.studies.eval.judge import apply_judgements
    from robustlab.studies.eval.study import by_harm, summarise

    s = run.summary or {}
    rows = s.get("perturbations")
    if rows is None:
        rows = summarise(run.results, run.config.get("perturbations") or [])
    # judgements made after the summary was written count too (paper 001's human check)
    with RunStore(run.path, readonly=True) as store:
        rows = apply_judgements(store, rows)
    return by_harm(rows)  # worst first (a summary written before this order was kept too)


def _path(run: RunData) -> str:
    """The run directory as a command line names it (relative to here when inside)."""
    import os

    try:
        rel = os.path.relpath(run.path)
    except ValueError:
        return str(run.path)
    return rel if not rel.startswith("..") else str(run.path)


def gate_blocks(run: RunData) -> Blocks:
    """A gated run (``robustlab check``): each threshold, the value and PASS/FAIL."""
    import json

    from robustlab.runs.study import CHECKS_FILE

    try:
        data = json.loads((run.path / CHECKS_FILE).read_text(encoding="utf-8"))
        checks = list(data["checks"])
    except (OSError, ValueError, KeyError, TypeError):
        return []
    body = [[str(c.get("name") or c.get("perturbation")), str(c.get("test", "INV")),
             str(c.get("rule")), num(c.get("value")), str(c.get("result"))] for c in checks]
    failed = sum(c.get("result") != "PASS" for c in checks)
    verdict = "PASS" if not failed else f"FAIL ({failed} of {len(checks)} checks)"
    return [Heading(f"Gate: {verdict}", 3),
            Table(["test", "type", "threshold", "value", "result"], body,
                  f"The thresholds of {data.get('plan', 'the plan')} (robustlab check) and "
                  "their outcome; values are means over seeds.", numeric=False)]


def _model(run: RunData) -> str:
    return str(run.config.get("model", "?")).removeprefix("object:")


def _comparison(runs: Sequence[RunData]) -> Blocks:
    by = [{r["perturbation"]: r for r in _rows(run)} for run in runs]
    perts = list(dict.fromkeys(p for m in by for p in m))
    cols = ["perturbation"]
    for run in runs:
        cols += [f"A1 ({run.path.name})", f"fail rate ({run.path.name})"]
    rows = [[(by[0].get(p) or next(m[p] for m in by if p in m))["label"],
             *[x for m in by for x in (spread((m.get(p) or {}).get("a1")),
                                       spread((m.get(p) or {}).get("failure_rate")))]]
            for p in perts]
    a0 = ", ".join(f"{run.path.name} {num((run.summary or {}).get('clean_accuracy'))}"
                   for run in runs)
    return [Heading("Runs side by side", 3),
            Table(cols, rows, f"Perturbed accuracy A1 and failure rate of each run (mean ± sd "
                  f"over seeds). Clean accuracy A0: {a0}.")]


def failing_blocks(run: RunData, rows: Sequence[Mapping[str, Any]]) -> Blocks:
    """A few failing examples per perturbation (failing their test), worst first."""
    from robustlab.runs.predictions import failing_examples
    from robustlab.runs.store import RunStore

    body = []
    with RunStore(run.path, readonly=True) as store:
        for r in rows:
            for e in failing_examples(store, perturbation=r["perturbation"],
                                      limit=EXAMPLES_PER_PERTURBATION):
                body.append([r["label"], str(e["seed"]), str(e["label"]),
                             f"{e['pred_before']} → {e['pred_after']}",
                             f"{e['prob_before']:.3f} → {e['prob_after']:.3f}",
                             str(e["original"]),
                             marked_words(str(e["original"]), str(e["perturbed"]))])
    if not body:
        return [Para(f"{run.path.name}: no failing examples (no perturbation changed a "
                     "prediction).", "note")]
    return [Heading(f"Failing examples, {run.path.name}", 3),
            Table(["perturbation", "seed", "label", "prediction", "P(label)", "original",
                   "perturbed (changed words marked)"], body,
                  f"Up to {EXAMPLES_PER_PERTURBATION} failing examples per perturbation, each "
                  "failing its CheckList test (INV: the prediction changed; DIR flip: the "
                  "prediction stayed and P(label) did not fall), largest drop in "
                  "the probability of the true label first. `robustlab failures "
                  f"{_path(run)}` lists them all.", numeric=False)]


def _endpoint_blocks(summary: dict) -> Blocks:
    """What a model behind an endpoint cost (docs/endpoints.md): requests, tokens, invalid
    answers; nothing for a local model."""
    ep = summary.get("endpoint")
    if not isinstance(ep, dict):
        return []
    from robustlab.endpoints.costs import tokens_shown

    model = f", server model {ep['server_model']}" if ep.get("server_model") else ""
    return [Para(f"Endpoint {ep.get('url')} ({ep.get('kind')}{model}): "
                 f"{ep.get('requests')} requests, {ep.get('answers')} answers stored, "
                 f"{tokens_shown(ep)}, {ep.get('invalid')} invalid answers (an answer "
                 "naming no label: counted wrong, never as a class).")]


def eval_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = _comparison(runs) if len(runs) > 1 else []
    for run in runs:
        s = run.summary or {}
        rows = _rows(run)
        if not rows:
            out.append(Para(f"{run.path.name}: no perturbation finished yet.", "warning"))
            continue
        if s.get("task"):  # NER, pairs, similarity, answer selection: the task's metric
            from robustlab.studies.eval.task_report import task_blocks

            out += task_blocks(run, rows, gate_blocks(run))
            continue
        from robustlab.studies.eval.study import headline, test_header

        ds = run.config.get("dataset") or {}
        out += [Heading(f"The model as it is, {run.path.name}", 3),
                Para(s.get("headline") or headline(rows), "headline"),
                *[Para(w, "warning") for w in s.get("warnings") or []],
                *gate_blocks(run),
                Para(f"Model {_model(run)} evaluated as it is (nothing trained) on "
                     f"{ds.get('path') or ds.get('name')}: {s.get('n_examples', rows[0]['n'])} "
                     f"examples, clean accuracy A0 {num(s.get('clean_accuracy'))}."),
                *_endpoint_blocks(s),
                Table(["perturbation", "test (INV / DIR flip / changed)", "A0", "A1",
                       "A1 − A0", "failure rate", "predictions changed", "no-op rate",
                       "seeds × samples"],
                      [[r["label"], test_header(r), num(r["a0"]), spread(r["a1"]),
                        spread(r["delta"]), spread(r["failure_rate"]),
                        spread(r.get("change_rate")), spread(r["noop_rate"]),
                        f"{len(r['seeds'])} × {r['samples']}"] for r in rows],
                      "Worst first (A1 − A0, then the failure rate). A0: accuracy on the clean "
                      "texts; A1: on the perturbed texts (every seed and sample), only for INV "
                      "tests: a label-changing perturbation invalidates the label. Test: INV — "
                      "the prediction should not change; DIR flip — it should change or "
                      "P(original label) fall; changed — no pass/fail; judged n=K — scored, as "
                      "paper 001 did, on K hand-judged perturbed samples against their "
                      "corrected labels (dropped samples removed, relabels applied). Failure "
                      "rate: among the "
                      "texts the perturbation changed, those failing their test; predictions "
                      "changed: among those texts, the share whose prediction changed; no-op "
                      "rate: texts it left unchanged. Mean ± sd over perturbation seeds.")]
        from robustlab.studies.eval.study import accuracy_figure

        out.append(Figure(plots.png_bytes(accuracy_figure(rows, s.get("clean_accuracy"))),
                          f"accuracy per perturbation, {run.path.name}",
                          "Accuracy per perturbation: clean (A0) beside perturbed (A1, with "
                          "its sd over seeds).", f"eval_{run.path.name}.png"))
        out += failing_blocks(run, rows)
    return out


__all__ = ["EXAMPLES_PER_PERTURBATION", "eval_section", "failing_blocks", "gate_blocks"]
