"""The cross-domain consistency section of ``robustlab report`` (paper 004): per-system
variance, CoV, (ε, γ)-robustness, rankings and bagging, compared across runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Heading, Para, Table
from robustlab.report.format import num
from robustlab.report.load import RunData
from robustlab.report.sections import Blocks, png, pv

# ---- cross-domain (paper 004) --------------------------------------------------------------------


def cross_domain_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = _cross_domain_comparison(runs) if len(runs) > 1 else []
    for run in runs:
        s = run.summary or {}
        systems = s.get("systems") or run.results
        tag = run.path.name
        if not systems:
            out.append(Para(f"{tag}: no system finished yet.", "warning"))
            continue
        grid_note = _grid_note(run.config, systems)
        unit = "σ" if "σ_ref" in grid_note else ""
        eps = sorted({e for r in systems for e in (r.get("gamma") or {})}, key=float)
        acc = sorted({m for r in systems for m in (r.get("corpus") or {}) if m != "signature"})
        human = {}
        ranks = s.get("rankings") or {}
        if ranks.get("human"):
            human = {name: i + 1 for i, name in enumerate(ranks["human"])}
        rows = []
        for r in systems:
            corpus = r.get("corpus") or {}
            rows.append([str(r.get("system")), *[num(corpus.get(m), 2) for m in acc],
                         num(r.get("mean")), num(r.get("variance")), num(r.get("cov"), 4),
                         *[num((r.get("gamma") or {}).get(e), 4) for e in eps],
                         num(r.get("gamma_auc"), 4)]
                        + ([str(human.get(r.get("system"), "–"))] if human else []))
        out += [Heading(f"Consistency across domains, {tag} (paper 004 Table 1)", 3),
                Table(["system", *acc, "mean", "variance", "CoV (σ/μ)",
                       *[f"γ@{e}{unit}" for e in eps], "γ-AUC"] + (["human rank"] if human else []),
                      rows, f"Lower variance, CoV and γ = more consistent. {grid_note}")]
        sigs: dict[str, list[str]] = {}
        for r in systems:  # sacreBLEU's signature beside its scores, as sacreBLEU prints it
            sig = (r.get("corpus") or {}).get("signature") or {}
            for metric, text in (sig.items() if isinstance(sig, Mapping) else [("bleu", sig)]):
                if str(text) not in sigs.setdefault(str(metric), []):
                    sigs[str(metric)].append(str(text))
        if sigs:
            out.append(Para("sacreBLEU signatures: " + "; ".join(
                f"{m}: {' | '.join(v)}" for m, v in sigs.items()) + ".", "note"))
        doms = list(dict.fromkeys(d for r in systems for d in (r.get("per_domain") or {})))
        if doms:
            out.append(Table(["system", *doms],
                             [[str(r.get("system")), *[num((r.get("per_domain") or {}).get(d), 2)
                                                       for d in doms]] for r in systems],
                             "Score per domain."))
        for method, label in ((None, "no resampling (Tables 1–2)"),
                              ("bagging", "bagging (Algorithm 5, Tables 3–4)"),
                              ("design_bagging", "design bagging (Algorithm 6, Tables 5–6)")):
            lrows = []
            for r in systems:
                t = r if method is None else (r.get(method) or {})
                for row in t.get("leave_one_out") or []:
                    lrows.append([str(r.get("system")), str(row.get("left_out")),
                                  num(row.get("mean")), num(row.get("variance")),
                                  num(row.get("cov"), 4)])
            if lrows:
                out.append(Table(["system", "domain left out", "mean", "variance", "CoV"], lrows,
                                 f"Leave one domain out, {label}."))
                if method and all(v in ("0.000", "0.0000", "–") for row in lrows
                                  for v in row[3:]):
                    out.append(Para(_zero_bagging_note(run.config, min(
                        len(r.get("per_domain") or {}) for r in systems)), "warning"))
        curves = [r for r in systems if r.get("gamma_curve")]
        if curves:
            grid = curves[0].get("gamma_grid")
            out += [Heading(f"γ curves, {tag} (paper 004 Figure 4)", 3),
                    png(plots.gamma_curves_figure(curves, run.config, grid),
                         f"gamma curves, {tag}", f"γ(ε) per system; {grid_note}",
                         f"gamma_{len(out)}.png")]
        if ranks:
            n = max(len(v) for v in ranks.values())
            out.append(Table(["rank", *ranks], [[str(i + 1), *[str(v[i]) if i < len(v) else "–"
                                                              for v in ranks.values()]]
                                                for i in range(n)],
                             "Rankings, best first (paper 004 Table 7).", numeric=False))
        agr = s.get("agreement") or {}
        if agr:
            out.append(Table(["metric", "pairwise agreement", "Kendall τ", "p", "systems"],
                             [[m, num(a.get("pairwise")), num(a.get("kendall_tau"), signed=True),
                               pv(a), str(a.get("n_systems", "–"))] for m, a in agr.items()],
                             "Agreement of each metric's ranking with the human ranking "
                             "(paper 004 Table 8)."))
        elif not human:
            out.append(Para("No human ranking was given (--human), so agreement is not "
                            "measured.", "note"))
    return out


def _zero_bagging_note(cfg: Mapping[str, Any], n_domains: int) -> str:
    """Why a bagging table is all zero: its bags hold a single domain, and one score has no
    variance (bag size as robustlab.metrics.consistency draws it: round(fraction · n), ≥ 1)."""
    frac = cfg.get("fraction")
    if isinstance(frac, (int, float)) and n_domains:
        size = max(1, int(round(float(frac) * (n_domains - 1))))
        if size < 2:
            return (f"All zero by construction, not a result: with {n_domains} domains (one "
                    f"left out: {n_domains - 1}) and a bag fraction of {frac:g}, every bag "
                    f"holds {size} domain, and the variance (so the CoV) of a single score is "
                    "0. Give more domains or a larger --bag-fraction to measure it.")
    return ("All zero: every bag's scores were identical (the variance within each bag is 0), "
            "so resampling measured no spread.")


def _cross_domain_comparison(runs: Sequence[RunData]) -> Blocks:
    """Systems × runs: mean, CoV and γ-AUC of every run side by side."""
    names = list(dict.fromkeys(str(r.get("system")) for run in runs
                               for r in ((run.summary or {}).get("systems") or run.results)))
    by_run = [{str(r.get("system")): r for r in ((run.summary or {}).get("systems")
                                                  or run.results)} for run in runs]
    cols = ["system"]
    for run in runs:
        cols += [f"mean ({run.path.name})", f"CoV ({run.path.name})",
                 f"γ-AUC ({run.path.name})"]
    rows = [[n, *[x for m in by_run for x in (num((m.get(n) or {}).get("mean")),
                                               num((m.get(n) or {}).get("cov"), 4),
                                               num((m.get(n) or {}).get("gamma_auc"), 4))]]
            for n in names]
    return [Heading("Runs side by side", 3),
            Table(cols, rows, "Each run's mean, CoV and γ-AUC per system (γ-AUCs are comparable "
                  "only between runs on the same ε grid; see each run's table).")]


def _grid_note(cfg: Mapping[str, Any], systems: Sequence[Mapping[str, Any]]) -> str:
    g = next((r["eps_grid"] for r in systems if isinstance(r.get("eps_grid"), Mapping)), {})
    if g.get("eps_grid") == "sigma" or cfg.get("eps_grid") == "sigma":
        t = g.get("t") or ["?", "?"]
        return (f"ε grid: in units of the score spread σ_ref = {num(g.get('sigma_ref'), 4)} "
                f"(ε = t·σ_ref, t from {t[0]} to {t[1]}; γ@x is γ at ε = x·σ_ref), so γ "
                "separates systems whose scores vary by a few points.")
    return f"ε grid: the paper's fixed grid ε = 1..{cfg.get('grid_max', 100)} (score points)."
