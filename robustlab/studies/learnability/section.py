"""The learnability / robustness study's section of ``robustlab report`` (papers 000, 003): the
CENT table, Spearman correlations, the quick estimate, advice and failing examples.

A run that has not written its summary yet is summarised from its finished cells with the
same functions the study uses, and labelled incomplete.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Heading, Para, Table
from robustlab.report.format import marked_words, num, spread
from robustlab.report.load import RunData
from robustlab.report.sections import HALF_WIDTH, Blocks, png, pv, side_by_side
from robustlab.studies.learnability.summary import pair_name

# ---- learnability / CENT / robustness (paper 000) ------------------------------------------------


def learnability_data(run: RunData) -> tuple[list[dict[str, Any]], dict[str, Any], list[float],
                                             bool]:
    """(pairs, correlations, p_grid, from_summary): summary.json's, or for a run that has not
    written one yet, computed from its finished cells by the study's own functions."""
    from robustlab.studies.learnability.summary import correlations, summarize_pairs

    grid = [float(p) for p in run.config.get("p_grid", [])]
    s = run.summary
    if s and s.get("pairs") is not None:
        return list(s["pairs"]), dict(s.get("correlations") or {}), grid, True
    pairs = summarize_pairs(run.results, grid)
    return pairs, correlations(pairs, grid), grid, False


def learnability_section(runs: Sequence[RunData]) -> Blocks:
    """Paper 000's layout; a robustness-only run (no learnability measured) gets the robustness
    layout instead of learnability columns that would all be '–', and a quick-estimate run gets
    its estimate (learnability@p) where a full run has the log-AUC."""
    from robustlab.studies.learnability.advice import advise
    from robustlab.studies.learnability.report import table2

    out: Blocks = []
    all_pairs: list[dict[str, Any]] = []
    per_run = []
    models_seen: dict[str, str] = {}
    for run in runs:
        pairs, corr, grid, from_summary = learnability_data(run)
        if not from_summary:
            out.append(Para(f"{run.path.name}: no summary.json yet; the figures below are "
                            f"computed from the {len(run.results)} cells finished so far.",
                            "incomplete"))
        shown = []
        for r in pairs:
            model = r["model"]
            tag = str(run.path)
            if len(runs) > 1 and models_seen.get(model, tag) != tag:
                model = f"{model} ({run.path.name})"  # same model in two runs: keep both
            models_seen.setdefault(r["model"], tag)
            shown.append({**r, "model": model, "_run": run.path.name})
        all_pairs += shown
        per_run.append((run, shown, corr, grid))
    if not all_pairs:
        return [Para("No finished model×perturbation pair yet.", "warning")]
    adv = advise(all_pairs, _n_classes(runs))
    for m, acc in adv["chance"].items():
        out.append(Para(f"{m}: clean accuracy {acc:.3f} is at chance level; its learnability "
                        "and robustness mean nothing (the model did not learn the task).",
                        "warning"))
    learn = any(r.get("avg_learnability") or r.get("learnability_at")
                or r.get("learnability_estimate") for r in all_pairs)
    if not learn:
        out.append(Para("Robustness study: exp 0–2 only (A0, A1, A2); no learnability was "
                        "measured, so there is no Table 2 and no learnability figure.", "note"))
    # Table 2
    full_pairs = [r for r in all_pairs if _finite_mean(r.get("avg_learnability")) is not None]
    if full_pairs:  # a quick run in the comparison has no log-AUC: not a column of dashes
        perts, models, mat = table2(full_pairs)
        by_key = {(r["perturbation"], r["model"]): r for r in full_pairs}
        rows: list[list[Any]] = []
        marks: dict[tuple[int, int], str] = {}
        for j in range(len(models)):
            col = [(mat[i, j], i) for i in range(len(perts)) if math.isfinite(mat[i, j])]
            col.sort(key=lambda t: -t[0])
            for rank, (_, i) in enumerate(col[:2]):
                marks[(i, j + 1)] = "best" if rank == 0 else "second"
        for i, p in enumerate(perts):
            finite = [v for v in mat[i] if math.isfinite(v)]
            rows.append([plots.short_name(p, 48)]
                        + [spread((by_key.get((p, m)) or {}).get("avg_learnability"))
                           for m in models]
                        + [num(sum(finite) / len(finite)) if finite else "–"])
        out += [Heading("Average learnability (paper 000 Table 2)", 3),
                Table(["perturbation", *models, "average"], rows,
                      "Average learnability (log-AUC over the p grid; mean ± sd over seeds), "
                      "perturbations sorted by their average over models, ascending. Per model, "
                      "the most learnable perturbation is bold, the second underlined.", marks)]
    out += _estimate_tables(per_run)
    out += _correlation_tables(per_run)
    out += _pairs_tables(all_pairs, multi=len(runs) > 1)
    with plots.width_limit(HALF_WIDTH if len(runs) > 1 else plots.MAX_WIDTH):
        out += side_by_side([(run, _learnability_figures(run, pairs, corr, grid))
                             for run, pairs, corr, grid in per_run])
    for run in runs:  # tables of examples need the page's width: one run after the other
        out += failures_blocks(run)
    out += advice_blocks(adv)
    return out


def _estimate_block(run: RunData) -> Mapping[str, Any] | None:
    est = (run.summary or {}).get("estimate")
    return est if isinstance(est, Mapping) and est.get("pairs") else None


def _estimate_tables(per_run: Sequence[tuple[RunData, list, dict, list]]) -> Blocks:
    """A quick run's learnability ESTIMATE (learnability at one p, checked at p = 1)."""
    out: Blocks = []
    for run, _, _, _ in per_run:
        block = _estimate_block(run)
        if block is None or block.get("mode") != "quick":
            continue
        p = format(block.get("estimate_p", 0), "g")
        rows = [[str(r.get("model")), plots.short_name(str(r.get("perturbation")), 48),
                 spread(r.get("learnability_estimate")), num(r.get("learnability_at_1")),
                 {True: "yes", False: "NO"}.get(r.get("learnable"), "–"),
                 spread(r.get("robustness")), spread(r.get("delta"))]
                for r in block["pairs"]]
        out += [Heading(f"Learnability estimate, {run.path.name} (quick run)", 3),
                Para(f"A quick run measures learnability at p = {p} for every seed and at p = 1 "
                     "for the first seed instead of the whole p grid, so it has no average "
                     "learnability (log-AUC) and no Table 2; the estimate stands in for it "
                     "below.", "note"),
                _pruned(Table(["model", "perturbation", f"estimate (learnability@{p})",
                               "learnability@1", "learnable", "robustness (A1−A0)",
                               "Δ (A2−A1)"], rows,
                              f"Learnable: learnability@1 ≥ {block.get('learnable_min', '–')} "
                              "(else the model cannot pick the perturbation up at all)."))]
    return out


def failures_blocks(run: RunData, n_examples: int = 10) -> Blocks:
    """Failure rates per cell and the worst failing examples (CheckList style), read from the
    run's stored predictions: the same rows as ``robustlab failures``."""
    from robustlab.runs.predictions import failing_examples, failure_summary
    from robustlab.runs.store import RunStore, StoreError

    try:
        with RunStore(run.path, readonly=True) as store:
            summary = failure_summary(store)
            examples = failing_examples(store, limit=n_examples) if summary else []
    except (StoreError, OSError, ValueError):
        return []
    if not summary:
        return []
    rows = [[str(r["model"]), plots.short_name(str(r["perturbation"]), 40), str(r["seed"]),
             _test_name(r), str(r["n"]), "–" if r["test"] == "changed" else str(r["fail"]),
             "–" if r["test"] == "changed" else num(r["fail_rate"])] for r in summary]
    out: Blocks = [Heading(f"Failure rates, {run.path.name}", 3),
                   Table(["model", "perturbation", "seed", "test", "tested", "failed",
                          "failure rate"],
                         rows, "Share of test examples failing their CheckList test (INV: the "
                         "perturbation changed the prediction; DIR flip: the prediction neither "
                         "changed nor lost probability on the original label; changed: no "
                         "pass/fail). One row per cell with stored predictions.")]
    if examples:
        body = [[str(e["model"]), plots.short_name(str(e["perturbation"]), 32),
                 str(e["original"]), marked_words(str(e["original"]), str(e["perturbed"])),
                 f"{e['label']} / {e['pred_before']} → {e['pred_after']}",
                 num(e["drop"])] for e in examples]
        out.append(Table(["model", "perturbation", "original", "perturbed (changes marked)",
                          "label / prediction", "P(label) drop"], body,
                         f"The {len(examples)} worst failing examples (largest drop in the "
                         "probability of the true label); all of them: `robustlab failures "
                         f"{run.path}`."))
    return out


def _test_name(r: Mapping[str, Any]) -> str:
    """A failure-summary row's CheckList test as tables name it (``DIR flip``)."""
    from robustlab.metrics.checklist_tests import header

    return header(str(r.get("test", "INV")), r.get("expectation"))


def _pruned(t: Table) -> Table:
    """The table without its all-'–' columns (kept: the first), so a run that did not measure
    a quantity shows no column of dashes for it; the caption says which were left out."""
    keep = [j for j in range(len(t.columns))
            if j == 0 or any(not isinstance(r[j], str) or r[j].strip() not in ("", "–")
                             for r in t.rows)]
    if len(keep) == len(t.columns) or not t.rows:
        return t
    gone = [t.columns[j] for j in range(len(t.columns)) if j not in keep]
    return Table([t.columns[j] for j in keep], [[r[j] for j in keep] for r in t.rows],
                 (t.caption + " " if t.caption else "") + "Not measured in this run, so not "
                 f"shown: {', '.join(gone)}.",
                 {(i, keep.index(j)): m for (i, j), m in t.marks.items() if j in keep},
                 t.numeric)


def _n_classes(runs: Sequence[RunData]) -> int | None:
    for run in runs:
        n = run.config.get("n_classes")
        if isinstance(n, int) and n > 1:
            return n
    return None


def _correlation_tables(per_run: Sequence[tuple[RunData, list, dict, list]]) -> Blocks:
    rows = []
    undefined = []
    for run, _, corr, _ in per_run:
        est = _estimate_block(run) or {}
        relations = [(corr.get(name), label) for name, label in (
            ("learnability_vs_robustness", "avg. learnability vs robustness"),
            ("learnability_vs_delta", "avg. learnability vs Δ"),
            ("robustness_vs_delta", "robustness vs Δ"))]
        if est.get("mode") == "quick":  # the estimate stands in for the average
            p = format(est.get("estimate_p", 0), "g")
            ec = est.get("correlations") or {}
            relations = [(ec.get("estimate_vs_robustness"),
                          f"learnability estimate (@{p}) vs robustness"),
                         (ec.get("estimate_vs_delta"), f"learnability estimate (@{p}) vs Δ"),
                         relations[2]]
        for c, label in relations:
            if not c:
                continue
            if c.get("rho") is None:  # n < 3 or no variation: no ρ to show
                undefined.append(f"{label} (n = {c.get('n', 0)})")
                continue
            rows.append([run.path.name, label, num(c.get("rho"), signed=True), pv(c),
                         c.get("p_method") or "asymptotic", str(c.get("n", "–"))])
    out: Blocks = []
    if rows or undefined:
        out.append(Heading("Hypothesis tests (paper 000 Table 3)", 3))
    if rows:
        out.append(Table(["run", "relation", "Spearman ρ", "p", "p-value method", "n"], rows,
                         "Spearman ρ over model×perturbation pairs. 'exact' = the permutation "
                         "distribution over all pairings (small n), 'permutation' = seeded Monte "
                         "Carlo permutations, 'asymptotic' = scipy's t-approximation."))
    if undefined:
        out.append(Para("Spearman ρ is undefined (it needs at least 3 pairs whose values vary) "
                        "for: " + "; ".join(undefined) + ".", "note"))
    for run, _, corr, _ in per_run:
        at = corr.get("at_p") or {}
        if not at:
            continue
        trows = [[p, num(r.get("sigma")), num(r.get("rho_with_avg"), signed=True),
                  num(r.get("rho_with_robustness"), signed=True),
                  num(r.get("rho_with_delta"), signed=True)] for p, r in at.items()]
        trows = [r for r in trows if any(v != "–" for v in r[1:])]  # quick: no 'avg' row
        out += [Heading(f"Learnability@p, {run.path.name} (paper 000 Table 4)", 3),
                _pruned(Table(["p", "σ across pairs", "ρ with average", "ρ with robustness",
                               "ρ with Δ"], trows,
                              "σ of learnability at each p across pairs and its Spearman ρ "
                              "with the average learnability, robustness and Δ; 'avg' is the "
                              "average itself."))]
    return out


def _pairs_tables(pairs: Sequence[Mapping[str, Any]], multi: bool) -> Blocks:
    est = any(r.get("learnability_estimate") for r in pairs)  # the quick estimate, when run
    # A0 / A1 / A2 share one column (means; their sds are in pairs.csv): 13 columns of
    # "0.795±0.003" do not fit a page
    head = (["run"] if multi else []) + ["model", "perturbation", "avg. learnability",
                                         "avg. learnability (prob.)"] + (
        ["learnability estimate"] if est else []) + ["robustness (A1−A0, INV)", "Δ (A2−A1)",
                                                     "A0 / A1 / A2", "no-op rate", "seeds"]
    rows = []
    seed_rows = []
    for r in pairs:
        seeds = r.get("seeds") or []
        accs = [num(r.get(k)) for k in ("accuracy_standard", "accuracy_robustness",
                                        "accuracy_augmentation")]
        rows.append(([r["_run"]] if multi else []) + [
            r["model"], pair_name(r, plots.short_name(r["perturbation"], 48)),
            spread(r.get("avg_learnability")), spread(r.get("avg_learnability_prob"))] + (
            [spread(r.get("learnability_estimate"))] if est else []) + [
            spread(r.get("robustness")), spread(r.get("delta")),
            "–" if accs == ["–"] * 3 else " / ".join(accs), num(r.get("noop_rate")),
            str(len(seeds)) if seeds else "–"])
        avg = r.get("avg_learnability") or {}
        vals = avg.get("values") if isinstance(avg, Mapping) else None
        if vals:
            seed_rows.append(([r["_run"]] if multi else []) + [
                r["model"], plots.short_name(r["perturbation"], 48),
                ", ".join(f"{s}: {num(v)}" for s, v in zip(seeds or range(len(vals)), vals,
                                                          strict=False)),
                num(avg.get("std")) if len(vals) > 1 else "– (one seed)"])
    out: Blocks = [Heading("Robustness and Δ per pair (paper 000 exp 0–2)", 3),
                   _pruned(Table(head, rows, "A0 = standard accuracy, A1 = accuracy on "
                                 "perturbed test data, A2 = after augmentation (means over "
                                 "seeds); robustness and Δ: mean ± sd over seeds (mean alone "
                                 "for one seed). no-op rate: share of texts the perturbation "
                                 "left unchanged. A perturbation tagged [DIR …] or [changed] "
                                 "changes the label (CheckList): it has no A1, robustness or "
                                 "A2; its verdict is in robustlab failures."))]
    if seed_rows:
        out += [Heading("Seed spread of average learnability", 3),
                Table((["run"] if multi else []) + ["model", "perturbation", "per seed",
                                                    "sd (ddof=1)"], seed_rows)]
    return out


def _learnability_figures(run: RunData, pairs: list[dict[str, Any]], corr: Mapping[str, Any],
                          grid: Sequence[float]) -> Blocks:
    """One run's figures: paper 000 Figure 4, Table 2 as a heat map and Figures 1/5 for a full
    run; the estimate heat map (and its scatter) for a quick run; robustness bars for any run
    that measured robustness but no average learnability."""
    from robustlab.metrics.learnability import log_auc
    from robustlab.studies.learnability.report import table2

    out: Blocks = []
    tag = run.path.name
    has_avg = any(_finite_mean(r.get("avg_learnability")) for r in pairs)
    if has_avg and any(r.get("learnability_at") for r in pairs) and len(grid) >= 2:
        out.append(Heading(f"Learnability against p, {tag} (paper 000 Figure 4)", 3))
        out.append(png(plots.learnability_curves_figure(pairs, grid),
                        f"learnability against perturbation probability p, {tag}",
                        "Mean learnability over seeds (band: ± 1 sd), log-scale p.",
                        f"curves_{tag}.png"))
        perts, models, mat = table2(pairs)
        vmax = log_auc(grid, [1.0] * len(grid))
        out.append(png(plots.learnability_table_figure(perts, models, mat, vmax),
                        f"average learnability heat map, {tag}",
                        "Table 2 as a heat map.", f"table_{tag}.png"))
    est = _estimate_block(run)
    if est is not None and est.get("mode") == "quick":
        out.append(Heading(f"Learnability estimate, {tag}", 3))
        out.append(png(plots.learnability_estimate_figure(est),
                        f"learnability estimate heat map, {tag}",
                        "The estimate per model×perturbation (✗: not learnable at p = 1) and, "
                        "where robustness was measured, the estimate against robustness.",
                        f"estimate_{tag}.png"))
    has_rob = any(_finite_mean(r.get("robustness")) is not None for r in pairs)
    if has_rob and has_avg:
        out.append(Heading(f"Learnability against robustness and Δ, {tag}", 3))
        out.append(png(plots.learnability_scatter_figure(pairs, corr),
                        f"average learnability against robustness and Δ, {tag}",
                        "Each point is a model×perturbation pair, labelled with its "
                        "perturbation; colour = model.", f"scatter_{tag}.png"))
    elif has_rob:
        out.append(Heading(f"Robustness and Δ per perturbation, {tag}", 3))
        out.append(png(plots.robustness_figure(pairs), f"robustness and Δ bars, {tag}",
                        "Accuracy change on perturbed test data (A1 − A0) and after "
                        "augmentation (A2 − A1), per perturbation; mean over seeds, whiskers "
                        "± 1 sd.", f"robustness_{tag}.png"))
    return out


def _finite_mean(v: Any) -> float | None:
    m = v.get("mean") if isinstance(v, Mapping) else v
    if isinstance(m, bool) or not isinstance(m, (int, float)) or not math.isfinite(m):
        return None
    return float(m)


def advice_blocks(adv: Mapping[str, Any]) -> Blocks:
    rel = adv["relation"]
    out: Blocks = [Heading("Augmentation advice", 3),
                   Para("Perturbations ranked, per model, by the expected benefit of augmenting "
                        "the training data with them: the measured Δ where exp 2 ran, else the Δ "
                        "predicted from learnability when that relation is trustworthy, else "
                        "learnability alone (paper 000 H2, a hypothesis)."),
                   Table(["relation", "Spearman ρ", "p", "p-value method", "n", "trusted"],
                         [["learnability vs Δ", num(rel.get("rho"), signed=True), pv(rel),
                           rel.get("p_method") or "–", str(rel.get("n")),
                           "yes" if rel.get("trusted") else "no"]]),
                   Para(rel["verdict"], "note" if rel.get("trusted") else "warning")]
    for model, rows in adv["models"].items():
        body = [[str(i + 1), plots.short_name(r["perturbation"], 48),
                 num(r["learnability"]) + (" (estimate)" if r["learnability_source"] == "estimate"
                                           else ""),
                 num(r["delta"], signed=True), num(r["expected_delta"], signed=True), r["basis"]]
                for i, r in enumerate(rows)]
        out.append(Table(["rank", "perturbation", "learnability", "measured Δ", "expected Δ",
                          "basis"], body, f"{model}: augment with the top rows first"))
    return out
