"""The learnability results screen's reader: its table, curves and scatter from ``summary.json``
(or, in progress, from the finished cells).
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from robustlab.runs.store import RunStore
from robustlab.tui.data import read_summary
from robustlab.tui.results import num
from robustlab.tui.specs import Plot, Series, Table


@dataclass
class LearnabilityView:
    table: Table
    curves: dict[str, dict[float, float]]  # "model / pert" -> {p: mean learnability}
    scatter_points: list[tuple[str, float | None, float | None, float | None]]
    correlations: dict[str, Any] = field(default_factory=dict)
    partial: bool = False
    estimate: dict[str, Any] | None = None  # summary.json "estimate" (the quick estimate block)
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)
    #: cells pending or running (a partial view with none left is finished, not in progress)
    unfinished: int = 0

    def curve_plot(self, pair: str | None = None) -> Plot:
        names = [pair] if pair and pair in self.curves else list(self.curves)
        series = [Series(n, [float(p) for p in sorted(self.curves[n])],
                         [self.curves[n][p] for p in sorted(self.curves[n])]) for n in names]
        return Plot(f"learnability vs p{': ' + pair if pair else ''}", "p",
                    "learnability", series, xlog=True)

    def scatter_plot(self, against: str = "robustness") -> Plot:
        col = 2 if against == "robustness" else 3
        pts = [(p[1], p[col], p[0]) for p in self.scatter_points if p[1] is not None
               and p[col] is not None]
        corr = self.correlations.get(f"learnability_vs_{against}") or {}
        if corr.get("rho") is not None:
            method = corr.get("p_method") or "asymptotic"  # runs before p_method: scipy's
            note = (f"Spearman ρ={corr['rho']:.3f}, p={corr['p_value']:.3g} ({method}), "
                    f"n={corr.get('n')}")
        elif self.partial:
            note = "Spearman ρ: after the run ends"
        else:
            note = f"Spearman ρ undefined (n={corr.get('n')}: needs ≥ 3 pairs that vary)"
        label = "Δ (augmentation)" if against == "delta" else "robustness"
        return Plot(f"average learnability vs {label}", "average learnability", label,
                    [Series("pairs", [p[0] for p in pts], [p[1] for p in pts], "scatter",
                            names=[p[2] for p in pts])],
                    note=note)


#: on-screen headers of the learnability table (A0/A1/A2: accuracy of exp 0/1/2); with the full
#: names the accuracy columns fell off an 80-column terminal
LEARNABILITY_LABELS = {"avg_learnability": "avg L", "robustness": "A1-A0", "delta": "Δ A2-A1",
                       "acc_standard": "A0", "acc_robustness": "A1", "acc_augmentation": "A2"}


def load_learnability(path: str | os.PathLike[str]) -> LearnabilityView:
    summary = read_summary(path)
    cols = ["model", "perturbation", "avg_learnability", "std", "robustness", "test", "delta",
            "acc_standard", "acc_robustness", "acc_augmentation"]
    # the CheckList test column only where some pair is not INV (negation: DIR flip, no A1)
    tested = any((r.get("test") or "INV") != "INV" for r in (summary or {}).get("pairs") or [])
    if not tested:
        cols.remove("test")
    if summary and summary.get("pairs"):
        rows, curves, points = [], {}, []
        for r in summary["pairs"]:
            avg = r.get("avg_learnability") or {}
            rows.append([r.get("model"), r.get("perturbation"), num(avg), avg.get("std"),
                         num(r.get("robustness")), *([r.get("test") or "INV"] if tested else []),
                         num(r.get("delta")),
                         num(r.get("accuracy_standard")), num(r.get("accuracy_robustness")),
                         num(r.get("accuracy_augmentation"))])
            name = f"{r.get('model')} / {r.get('perturbation')}"
            curves[name] = {float(p): num(v) for p, v in (r.get("learnability_at") or {}).items()
                            if num(v) is not None}
            points.append((name, num(avg), num(r.get("robustness")), num(r.get("delta"))))
        return LearnabilityView(Table("average learnability", cols, rows,
                                      heat=["avg_learnability", "robustness", "delta"],
                                      labels=LEARNABILITY_LABELS),
                                curves, points, summary.get("correlations") or {})
    # in progress: per-p means of the finished learnability cells, nothing recomputed beyond that
    acc: dict[str, dict[float, list[float]]] = defaultdict(lambda: defaultdict(list))
    with RunStore(path, readonly=True) as store:
        for _, r in store.done_results():
            v = r.get("learnability_acc")
            if r.get("p") is not None and isinstance(v, (int, float)):
                acc[f"{r.get('model')} / {r.get('perturbation')}"][float(r["p"])].append(v)
        skipped = store.skipped_line()
        counts = store.counts()
    curves = {n: {p: sum(v) / len(v) for p, v in ps.items()} for n, ps in acc.items()}
    rows = [[n.split(" / ")[0], n.split(" / ")[1], None, None, None, None, None, None, None]
            for n in curves]
    return LearnabilityView(Table("average learnability (run in progress: final after the end)",
                                  cols, rows, heat=["avg_learnability"],
                                  labels=LEARNABILITY_LABELS), curves,
                            [(n, None, None, None) for n in curves], partial=True,
                            skipped=skipped,
                            unfinished=counts.get("pending", 0) + counts.get("running", 0))


def with_estimate(view: LearnabilityView, path: str | os.PathLike[str]) -> LearnabilityView:
    """Add the learnability estimate (``summary.json["estimate"]``) to a finished run's view:
    its own columns ``estimate@p`` and ``learn@1`` beside (never instead of) the log-AUC, and
    the block itself for the status line. A run in progress is returned as it is."""
    summary = read_summary(path) if not view.partial else None
    est = (summary or {}).get("estimate")
    if not est:
        return view
    name = f"estimate@{est['estimate_p']:g}"
    by = {(e["model"], e["perturbation"]): e for e in est.get("pairs", [])}
    view.table.columns = [*view.table.columns, name, "learn@1"]
    view.table.heat = [*view.table.heat, name]
    for row in view.table.rows:
        e = by.get((row[0], row[1])) or {}
        row += [num(e.get("learnability_estimate")), num(e.get("learnability_at_1"))]
    if est.get("mode") == "quick":
        view.table.title = "learnability ESTIMATE (quick run: no log-AUC)"
    view.estimate = est
    return view
