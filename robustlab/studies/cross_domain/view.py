"""The cross-domain results screen's reader: systems, per-domain scores, leave-one-out,
agreement and (ε, γ) curves.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from robustlab.runs.store import RunStore
from robustlab.tui.data import read_summary
from robustlab.tui.results import num
from robustlab.tui.specs import Plot, Series, Table


@dataclass
class CrossDomainView:
    systems: Table
    domains: Table
    loo: Table
    agreement: Table
    gamma: dict[str, dict[float, float]]
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)

    def gamma_plot(self, system: str | None = None) -> Plot:
        names = [system] if system and system in self.gamma else list(self.gamma)
        return Plot("(ε, γ)-robustness (lower = more robust)", "ε", "γ",
                    [Series(n, sorted(self.gamma[n]), [self.gamma[n][e]
                                                       for e in sorted(self.gamma[n])])
                     for n in names])


def load_cross_domain(path: str | os.PathLike[str]) -> CrossDomainView:
    with RunStore(path, readonly=True) as store:
        results = [r for _, r in store.done_results()]
        skipped = store.skipped_line()
    summary = read_summary(path) or {}
    domains = sorted({d for r in results for d in (r.get("per_domain") or {})})
    has_corpus = any(r.get("corpus") for r in results)
    has_auc = any(isinstance(r.get("gamma_auc"), (int, float)) for r in results)
    sys_cols = ["system", "mean", "variance", "cov", "γ@10"] + (["γ-AUC"] if has_auc else []) + (
        ["bleu", "chrf", "ter"] if has_corpus else [])
    sys_rows, dom_rows, loo_rows, gamma = [], [], [], {}
    for r in results:
        name = str(r.get("system"))
        points = {float(e): float(v) for e, v in (r.get("gamma") or {}).items()
                  if isinstance(v, (int, float))}
        curve = r.get("gamma_curve")  # the study's full curve over ε = 1, 2, …, eps_max
        gamma[name] = ({float(i + 1): float(v) for i, v in enumerate(curve)}
                       if isinstance(curve, list) and curve else points)
        row = [name, num(r.get("mean")), num(r.get("variance")), num(r.get("cov")),
               points.get(10.0)]
        if has_auc:
            row.append(num(r.get("gamma_auc")))
        if has_corpus:
            c = r.get("corpus") or {}
            row += [num(c.get("bleu")), num(c.get("chrf")), num(c.get("ter"))]
        sys_rows.append(row)
        dom_rows.append([name, *[num((r.get("per_domain") or {}).get(d)) for d in domains]])
        for lo in r.get("leave_one_out") or []:
            loo_rows.append([name, lo.get("left_out"), num(lo.get("mean")),
                             num(lo.get("variance")), num(lo.get("cov"))])
    agree_rows = [[m, num(a.get("pairwise")), num(a.get("kendall_tau"))]
                  for m, a in (summary.get("agreement") or {}).items()]
    return CrossDomainView(
        Table("systems", sys_cols, sys_rows, heat=["mean", "cov", "γ@10", "γ-AUC"]),
        Table("per-domain scores", ["system", *domains], dom_rows, heat=domains),
        Table("leave one domain out", ["system", "left_out", "mean", "variance", "cov"],
              loo_rows, heat=["cov"]),
        Table("ranking agreement with human scores", ["metric", "pairwise", "kendall_tau"],
              agree_rows, heat=["pairwise", "kendall_tau"]),
        gamma, skipped)
