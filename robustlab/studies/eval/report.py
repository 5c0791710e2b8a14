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
    s = run.summary or {}
    rows = s.get("perturbations")
    if rows is None:
        from robustlab.studies.eval.study import summarise

        rows = summarise(run.results, run.config.get("perturbations") or [])
    return rows


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
    """A few failing examples per perturbation (prediction changed), worst first."""
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
                  f"Up to {EXAMPLES_PER_PERTURBATION} failing examples per perturbation: the "
                  "perturbation changed the model's prediction (CheckList INV), largest drop in "
                  "the probability of the true label first. `robustlab failures "
                  f"{run.path.name}` lists them all.", numeric=False)]


def eval_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = _comparison(runs) if len(runs) > 1 else []
    for run in runs:
        s = run.summary or {}
        rows = _rows(run)
        if not rows:
            out.append(Para(f"{run.path.name}: no perturbation finished yet.", "warning"))
            continue
        ds = run.config.get("dataset") or {}
        out += [Heading(f"The model as it is, {run.path.name}", 3),
                Para(f"Model {_model(run)} evaluated as it is (nothing trained) on "
                     f"{ds.get('path') or ds.get('name')}: {s.get('n_examples', rows[0]['n'])} "
                     f"examples, clean accuracy A0 {num(s.get('clean_accuracy'))}."),
                Table(["perturbation", "A0", "A1", "A1 − A0", "failure rate", "no-op rate",
                       "seeds × samples"],
                      [[r["label"], num(r["a0"]), spread(r["a1"]), spread(r["delta"]),
                        spread(r["failure_rate"]), spread(r["noop_rate"]),
                        f"{len(r['seeds'])} × {r['samples']}"] for r in rows],
                      "A0: accuracy on the clean texts; A1: on the perturbed texts (every seed "
                      "and sample); failure rate: predictions that changed among the texts the "
                      "perturbation changed (CheckList INV); no-op rate: texts it left "
                      "unchanged. Mean ± sd over perturbation seeds.")]
        from robustlab.studies.eval.study import accuracy_figure

        out.append(Figure(plots.png_bytes(accuracy_figure(rows, s.get("clean_accuracy"))),
                          f"accuracy per perturbation, {run.path.name}",
                          "Accuracy per perturbation: clean (A0) beside perturbed (A1, with "
                          "its sd over seeds).", f"eval_{run.path.name}.png"))
        out += failing_blocks(run, rows)
    return out


__all__ = ["EXAMPLES_PER_PERTURBATION", "eval_section", "failing_blocks"]
