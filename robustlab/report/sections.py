"""What a report says for each run kind, in the papers' layouts, as :mod:`robustlab.report.doc`
blocks.

Numbers come from ``summary.json`` as the study wrote it (never recomputed), formatted with a
fixed number of decimals, so a reader can check any cell against the file. Only a learnability
run that has not written its summary yet is summarised from its finished cells (with the same
functions the study uses), and labelled incomplete. Per-example detail (vulnerable examples,
F_soft histograms) comes from the run store.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Code, Columns, Figure, Heading, Para, Table
from robustlab.report.format import marked_words, num, spread
from robustlab.report.load import RunData
from robustlab.runs import inputs as run_inputs

Blocks = list[Any]
#: figure width (inches) in a side-by-side column: two columns share the ~1150 px page
HALF_WIDTH = 5.0


def utc(ts: float | None) -> str:
    return "–" if not ts else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h {m:02d}m {sec:02d}s" if h else f"{m}m {sec:02d}s" if m else f"{sec}s") + \
        f" ({seconds:.1f} s)"


def _png(fig: Any, alt: str, caption: str, name: str) -> Figure:
    return Figure(plots.png_bytes(fig), alt, caption, name)


# ---- every report: the run's provenance ----------------------------------------------------------


def status_line(run: RunData) -> Para:
    if run.complete:
        return Para(f"{run.path.name}: complete (every cell finished; summary.json complete).",
                    "note")
    return Para(f"{run.path.name} is INCOMPLETE and its figures are not final: "
                f"{run.incomplete_reason}.", "incomplete")


def provenance(run: RunData) -> Blocks:
    """Command line, configuration, signature, versions, seeds, dates, wall time, status."""
    s = run.summary or {}
    total = sum(run.counts.values())
    seeds = run.config.get("seeds", run.config.get("seed"))
    wall = s.get("seconds")
    wall_text = duration(wall) if isinstance(wall, (int, float)) else (
        duration(run.updated - run.created) + " (store timestamps)"
        if run.updated and run.created else "–")
    rows = [
        ["directory", str(run.path)], ["kind", run.kind], ["name", run.name],
        ["status", f"{run.status} ({'complete' if run.complete else 'INCOMPLETE'})"],
        ["cells", f"{run.counts.get('done', 0)} done of {total}"
         + "".join(f", {run.counts[k]} {k}" for k in ("running", "pending", "failed")
                   if run.counts.get(k))],
        ["signature", str(s.get("signature") or "–")],
        ["cell signatures", "; ".join(f"{sig} ({n} cells)" for sig, n in
                                      list(run.signatures.items())[:5])
         + (f"; … {len(run.signatures) - 5} more" if len(run.signatures) > 5 else "") or "–"],
        ["seeds", "–" if seeds is None else json.dumps(seeds)],
        ["started", utc(run.created)], ["last update", utc(run.updated)],
        ["wall time", wall_text],
        ["versions", ", ".join(f"{k} {v}" for k, v in sorted(run.versions.items())) or "–"],
    ]
    if run.error:
        rows.append(["error", run.error])
    out: Blocks = [Heading(f"Run {run.path.name}", 3), status_line(run),
                   Table(["field", "value"], rows, numeric=False)]
    if run.failed:
        frows = [[k, v] for k, v in list(run.failed.items())[:10]]
        out.append(Table(["failed cell", "last error line"], frows,
                         f"{len(run.failed)} failed cells (first 10)", numeric=False))
    out += inputs_blocks(run.config)
    out += [Para("Command line (reproduces and resumes the run):", "note"),
            Code(run.command or "(not recorded)"),
            Para("Configuration:", "note"),
            Code(compact_json(run.config))]
    return out


def compact_json(value: Any, indent: int = 2, width: int = 96, _level: int = 0) -> str:
    """JSON laid out for reading: an object one key per line, but a list or object that fits
    on one line stays on it (``"pairs": [["he", "she"], ["his", "her"]]``, not one token per
    line). Still valid JSON, keys sorted, so it can be pasted back."""
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False)
    pad = " " * (indent * (_level + 1))
    if not isinstance(value, (dict, list)) or len(flat) + len(pad) <= width or not value:
        return flat
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) or len(json.dumps(v)) <= 40 for v in value):
            # scalars or short items (word pairs): fill lines
            lines, line = [], ""
            for v in value:
                item = json.dumps(v, ensure_ascii=False) + ","
                if line and len(pad) + len(line) + len(item) > width:
                    lines.append(line.rstrip())
                    line = ""
                line += item + " "
            lines.append(line.rstrip().rstrip(","))
            body = "\n".join(pad + x for x in lines)
        else:
            body = ",\n".join(pad + compact_json(v, indent, width, _level + 1) for v in value)
        return "[\n" + body + "\n" + " " * (indent * _level) + "]"
    body = ",\n".join(f"{pad}{json.dumps(str(k), ensure_ascii=False)}: "
                      + compact_json(value[k], indent, width, _level + 1) for k in sorted(value))
    return "{\n" + body + "\n" + " " * (indent * _level) + "}"


NO_INPUTS = "Inputs: not recorded (run made before robustlab recorded its inputs)."


def _size_text(rec: Mapping[str, Any]) -> str:
    """Human size with the exact byte count: the bytes are what a reader compares."""
    size = rec.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "–" if size is None else str(size)
    return f"{size} B" if size < 1024 else f"{run_inputs.human_size(size)} ({size} B)"


def inputs_blocks(config: Mapping[str, Any]) -> Blocks:
    """The files and names the run read (``config["inputs"]``), one row each, so a reader can
    check a result against the exact data, model and tables behind it. Values are shown as
    stored (the renderers escape them); a run made before inputs were recorded says so."""
    recorded = config.get(run_inputs.KEY)
    if not isinstance(recorded, Mapping):
        return [Para(NO_INPUTS, "note")]
    rows: list[list[Any]] = []
    for role, rec in recorded.items():
        rec = rec if isinstance(rec, Mapping) else {"name": rec}
        where = rec.get("path", rec.get("name"))
        sha = rec.get("sha256")
        files = rec.get("files")
        rows.append([run_inputs.role_label(str(role)), "–" if where is None else str(where),
                     str(rec.get("origin") or "–"), _size_text(rec),
                     "–" if sha is None else str(sha)[:12], "–" if files is None else str(files)])
    if not rows:
        return [Para("Inputs: none recorded (the run named no input files).", "note")]
    return [Table(["input", "path or name", "origin", "size", "sha256", "files"], rows,
                  "Inputs the run read (sha256: first 12 hex digits; a directory's is taken "
                  "over its files' paths, sizes and checksums)", numeric=False)]


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


def side_by_side(parts: Sequence[tuple[RunData, Blocks]]) -> Blocks:
    """One run's blocks as they are; several runs' in columns side by side (labelled)."""
    parts = [(run, blocks) for run, blocks in parts if blocks]
    if not parts:
        return []
    if len(parts) == 1:
        return list(parts[0][1])
    return [Columns([list(b) for _, b in parts], [run.path.name for run, _ in parts])]


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
    from robustlab.runs.store import RunStore, StoreError
    from robustlab.studies.learnability.predictions import failing_examples, failure_summary

    try:
        with RunStore(run.path, readonly=True) as store:
            summary = failure_summary(store)
            examples = failing_examples(store, limit=n_examples) if summary else []
    except (StoreError, OSError, ValueError):
        return []
    if not summary:
        return []
    rows = [[str(r["model"]), plots.short_name(str(r["perturbation"]), 40), str(r["seed"]),
             str(r["n"]), str(r["fail"]), num(r["fail_rate"])] for r in summary]
    out: Blocks = [Heading(f"Failure rates, {run.path.name}", 3),
                   Table(["model", "perturbation", "seed", "tested", "failed", "failure rate"],
                         rows, "Share of test examples whose prediction the perturbation "
                         "changed (one row per cell with stored predictions).")]
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


def _pv(c: Mapping[str, Any]) -> str:
    p = c.get("p_value")
    return "–" if not isinstance(p, (int, float)) else f"{p:.3g}"


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
            rows.append([run.path.name, label, num(c.get("rho"), signed=True), _pv(c),
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
        ["learnability estimate"] if est else []) + ["robustness (A1−A0)", "Δ (A2−A1)",
                                                     "A0 / A1 / A2", "no-op rate", "seeds"]
    rows = []
    seed_rows = []
    for r in pairs:
        seeds = r.get("seeds") or []
        accs = [num(r.get(k)) for k in ("accuracy_standard", "accuracy_robustness",
                                        "accuracy_augmentation")]
        rows.append(([r["_run"]] if multi else []) + [
            r["model"], plots.short_name(r["perturbation"], 48),
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
                                 "left unchanged."))]
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
        out.append(_png(plots.learnability_curves_figure(pairs, grid),
                        f"learnability against perturbation probability p, {tag}",
                        "Mean learnability over seeds (band: ± 1 sd), log-scale p.",
                        f"curves_{tag}.png"))
        perts, models, mat = table2(pairs)
        vmax = log_auc(grid, [1.0] * len(grid))
        out.append(_png(plots.learnability_table_figure(perts, models, mat, vmax),
                        f"average learnability heat map, {tag}",
                        "Table 2 as a heat map.", f"table_{tag}.png"))
    est = _estimate_block(run)
    if est is not None and est.get("mode") == "quick":
        out.append(Heading(f"Learnability estimate, {tag}", 3))
        out.append(_png(plots.learnability_estimate_figure(est),
                        f"learnability estimate heat map, {tag}",
                        "The estimate per model×perturbation (✗: not learnable at p = 1) and, "
                        "where robustness was measured, the estimate against robustness.",
                        f"estimate_{tag}.png"))
    has_rob = any(_finite_mean(r.get("robustness")) is not None for r in pairs)
    if has_rob and has_avg:
        out.append(Heading(f"Learnability against robustness and Δ, {tag}", 3))
        out.append(_png(plots.learnability_scatter_figure(pairs, corr),
                        f"average learnability against robustness and Δ, {tag}",
                        "Each point is a model×perturbation pair, labelled with its "
                        "perturbation; colour = model.", f"scatter_{tag}.png"))
    elif has_rob:
        out.append(Heading(f"Robustness and Δ per perturbation, {tag}", 3))
        out.append(_png(plots.robustness_figure(pairs), f"robustness and Δ bars, {tag}",
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
                         [["learnability vs Δ", num(rel.get("rho"), signed=True), _pv(rel),
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


# ---- attacks (paper 002) -------------------------------------------------------------------------


ATTACK_ROWS: list[tuple[str, Callable[[Mapping[str, Any]], str]]] = [
    ("recipe", lambda s: str(s.get("recipe") or "–")),
    ("success rate", lambda s: num(s.get("success_rate"))),
    ("mean ℓ0 (words changed)", lambda s: num(s.get("mean_l0"))),
    ("queries per example", lambda s: num(s.get("queries_per_example"), 1)),
    ("seconds per example", lambda s: num(s.get("seconds_per_example"))),
    ("successful", lambda s: str((s.get("counts") or {}).get("successful", "–"))),
    ("failed", lambda s: str((s.get("counts") or {}).get("failed", "–"))),
    ("skipped", lambda s: str((s.get("counts") or {}).get("skipped", "–"))),
    ("perplexity, original", lambda s: num((s.get("perplexity") or {}).get("original"), 2)),
    ("perplexity, vulnerable", lambda s: num((s.get("perplexity") or {}).get("perturbed"), 2)),
]


def attack_section(runs: Sequence[RunData], n_examples: int = 8) -> Blocks:
    # the column is the run's name; the model id (often 100+ characters with its options) is a
    # row of its own, where it wraps, so it can never push the numbers off the page
    cols = ["", *[r.path.name for r in runs]]
    rows = [["model", *[str(r.config.get("model", "?")) for r in runs]]]
    rows += [[name, *[fn(r.summary or {}) if r.summary else "– (no summary)" for r in runs]]
             for name, fn in ATTACK_ROWS]
    out: Blocks = [Heading("Attack results (paper 002 Tables 2–3)", 3),
                   Table(cols, rows, "Success rate over attacked (not skipped) examples; "
                         "perplexity only when the run measured it (--ppl-model).")]
    with plots.width_limit(HALF_WIDTH if len(runs) > 1 else plots.MAX_WIDTH):
        out += side_by_side([(run, [_png(plots.attack_figure(run.results),
                                         f"ℓ0 and queries, {run.path.name}",
                                         "Words changed per vulnerable example (ℓ0) and model "
                                         "queries per attacked example.",
                                         f"attack_{run.path.name}.png")])
                             for run in runs if run.results])
    for run in runs:
        vuln = sorted((r for r in run.results if r.get("result_type") == "successful"
                       and r.get("perturbed")), key=lambda r: r.get("index", 0))
        if not vuln:
            continue
        body = []
        for r in vuln[:n_examples]:
            patch = r.get("patch") or []
            l0 = r.get("l0")
            same = l0 == 0  # x itself is vulnerable: x̃ = x, no word changed
            perturbed = str(r.get("perturbed"))
            body.append([str(r.get("index")), str(r.get("original")),
                         [(perturbed, ""), (" (x̃ = x: no word changed)", "")] if same else
                         marked_words(str(r.get("original")), perturbed, patch),
                         marked_words(perturbed, str(r.get("patched") or ""),
                                      patch) if r.get("patched") else "–",
                         " → ".join(map(str, patch)) or "–",
                         f"{r.get('ground_truth')} / {r.get('original_output')} / "
                         f"{r.get('perturbed_output')} / {r.get('patched_output', '–')}",
                         "–" if l0 is None else str(l0)])
        out += [Heading(f"Vulnerable examples, {run.path.name} (paper 002 Table 4)", 3),
                Table(["#", "original x", "vulnerable x̃ (changed words marked)",
                       "x̃ with patch p applied (patch words marked)", "patch p",
                       "label / f(x) / f(x̃) / f(x̃⊕p)", "ℓ0"], body,
                      f"The first {min(n_examples, len(vuln))} of {len(vuln)} vulnerable "
                      "examples: f keeps its answer on x̃ but flips it once the patch word is "
                      "swapped. ℓ0 = 0: x is itself vulnerable (only the patch flips f).",
                      numeric=False)]
    return out


# ---- bias (paper 002, Sec. 4) -------------------------------------------------------------------


def _bias_table(run: RunData) -> list[Mapping[str, Any]]:
    table = (run.summary or {}).get("table")
    if table is None:
        table = [{k: r.get(k) for k in ("pair", "k", "B", "std", "n")} for r in run.results]
    return table


def _pair_name(r: Mapping[str, Any]) -> str:
    return "/".join(map(str, r.get("pair") or []))


def _b_cell(c: Mapping[str, Any] | None) -> str:
    """B of one (pair, k): '–' when k was not run, 'n = 0' when it ran on no sentence."""
    if c is None:
        return "not run"
    if c.get("n") == 0:
        return "n = 0"
    return num(c.get("B"), 4, signed=True)


def bias_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = []
    if len(runs) > 1:  # side by side: B(p, k) of every run for each (pair, k)
        tables = [{(_pair_name(r), int(r["k"])): r for r in _bias_table(run)} for run in runs]
        keys = list(dict.fromkeys(k for t in tables for k in t))
        keys = [k for k in keys if any((t.get(k) or {}).get("n") for t in tables)]
        out += [Heading("Runs side by side", 3),
                Table(["pair", "k", *[f"B ({run.path.name})" for run in runs]],
                      [[pair, str(k), *[_b_cell(t.get((pair, k))) for t in tables]]
                       for pair, k in keys],
                      "B(p, k) of each run (models: " + "; ".join(
                          f"{run.path.name}: {run.config.get('model', '?')}" for run in runs)
                      + "); pairs with no sentence in any run are left out.")]
    with plots.width_limit(HALF_WIDTH if len(runs) > 1 else plots.MAX_WIDTH):
        out += side_by_side([(run, _bias_run(run)) for run in runs])
    return out


def _bias_run(run: RunData) -> Blocks:
    table = _bias_table(run)
    ks = sorted({int(r["k"]) for r in table if r.get("k") is not None})
    names = list(dict.fromkeys(_pair_name(r) for r in table))
    cell = {(_pair_name(r), int(r["k"])): r for r in table}
    absent = [n for n in names if not any((cell.get((n, k)) or {}).get("n") for k in ks)]
    present = [n for n in names if n not in absent]
    rows, srows = [], []
    for n in present:
        rows.append([n, *[_b_cell(cell.get((n, k))) for k in ks]])
        srows.append([n, *[(f"{num(c.get('std'), 4)} / {c.get('n')}" if c.get("n") else
                            "n = 0") if (c := cell.get((n, k))) else "not run" for k in ks]])
    out: Blocks = [Heading(f"Counterfactual bias B(p, k), {run.path.name} (paper 002, Sec. 4)",
                           3)]
    if rows:
        out += [Table(["pair", *[f"k={k}" for k in ks]], rows,
                      "B(p, k) = mean F_soft(x; p) = P(class 1 | x with p1 swapped for p2) − "
                      "P(class 1 | x), over the sentences within k substitutions of the test "
                      "set that contain p1. Positive: the second word of the pair raises "
                      "P(class 1). n = 0: no such sentence at that k."),
                Table(["pair", *[f"sd / n, k={k}" for k in ks]], srows,
                      "Spread of F_soft and the number of sentences behind each B.")]
    if absent:
        out.append(Para(f"{len(absent)} of {len(names)} pairs never occur in the sentences "
                        "searched (n = 0 at every k; they ran and found nothing to swap): "
                        + ", ".join(absent) + ".", "note"))
    drawn = [r for r in table if r.get("n") and _pair_name(r) in present]
    if drawn:
        out.append(_png(plots.bias_vs_k_figure(drawn, ks), f"B(p,k) against k, {run.path.name}",
                        "B(p, k) against the neighbourhood distance k (pairs that occur).",
                        f"bias_k_{run.path.name}.png"))
    hist: dict[str, dict[int, list[float]]] = {}
    for r in run.results:
        key = f"pair={_pair_name(r)}|k={r.get('k')}"
        vals = [float(x["f_soft"]) for x in run.records.get(key, [])
                if isinstance(x, Mapping) and isinstance(x.get("f_soft"), (int, float))]
        if vals:
            hist.setdefault(_pair_name(r), {})[int(r["k"])] = vals
    for i, (name, by_k) in enumerate(hist.items()):
        out.append(_png(plots.bias_hist_figure(name, by_k), f"F_soft histogram, {name}",
                        f"F_soft histograms for {name}, one per k (x range fitted to the "
                        "values).", f"bias_hist_{run.path.name}_{i}.png"))
    return out


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
                    _png(plots.gamma_curves_figure(curves, run.config, grid),
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
                               _pv(a), str(a.get("n_systems", "–"))] for m, a in agr.items()],
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


# ---- anything else -------------------------------------------------------------------------------


def generic_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = []
    for run in runs:
        s = run.summary or {}
        rows = [[k, json.dumps(v, ensure_ascii=False)[:200]] for k, v in s.items()
                if k not in ("config", "versions", "files", "signature")]
        out.append(Table(["summary field", "value"], rows, f"{run.path.name}: summary.json",
                         numeric=False))
    return out


def eval_section(runs: Sequence[RunData]) -> Blocks:
    """The eval study's section lives with the study (robustlab.studies.eval.report)."""
    from robustlab.studies.eval.report import eval_section as section

    return section(runs)


SECTIONS: dict[str, Callable[[Sequence[RunData]], Blocks]] = {
    "learnability": learnability_section, "attack": attack_section, "bias": bias_section,
    "cross-domain": cross_domain_section, "eval": eval_section}
TITLES = {"learnability": "Learnability / CENT, robustness and augmentation (paper 000, 003)",
          "attack": "Second-order attacks (paper 002)", "bias": "Counterfactual bias (paper 002, Sec. 4)",
          "cross-domain": "Cross-domain consistency (paper 004)",
          "eval": "A trained model under perturbations (robustlab eval)"}
