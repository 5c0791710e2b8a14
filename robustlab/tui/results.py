"""Headless readers that turn a run directory into the tables and plots of each results screen.

Final aggregates come from ``summary.json`` (written by the study itself: the TUI never
recomputes a metric); per-cell detail comes from the store, so a run still in progress shows
what is done so far. Field names follow docs/run-directory.md.
"""

from __future__ import annotations

import difflib
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store import DamagedCell, RunStore
from robustlab.textfmt import short_model
from robustlab.tui.data import read_summary
from robustlab.tui.specs import Plot, Series, Table, fmt


def _num(v: Any) -> float | None:
    if isinstance(v, dict):
        v = v.get("mean")
    return float(v) if isinstance(v, (int, float)) else None


# ---- learnability ---------------------------------------------------------------------------------


@dataclass
class LearnabilityView:
    table: Table
    curves: dict[str, dict[float, float]]  # "model / pert" -> {p: mean learnability}
    scatter_points: list[tuple[str, float | None, float | None, float | None]]
    correlations: dict[str, Any] = field(default_factory=dict)
    partial: bool = False
    estimate: dict[str, Any] | None = None  # summary.json "estimate" (the quick estimate block)
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)

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
    cols = ["model", "perturbation", "avg_learnability", "std", "robustness", "delta",
            "acc_standard", "acc_robustness", "acc_augmentation"]
    if summary and summary.get("pairs"):
        rows, curves, points = [], {}, []
        for r in summary["pairs"]:
            avg = r.get("avg_learnability") or {}
            rows.append([r.get("model"), r.get("perturbation"), _num(avg), avg.get("std"),
                         _num(r.get("robustness")), _num(r.get("delta")),
                         _num(r.get("accuracy_standard")), _num(r.get("accuracy_robustness")),
                         _num(r.get("accuracy_augmentation"))])
            name = f"{r.get('model')} / {r.get('perturbation')}"
            curves[name] = {float(p): _num(v) for p, v in (r.get("learnability_at") or {}).items()
                            if _num(v) is not None}
            points.append((name, _num(avg), _num(r.get("robustness")), _num(r.get("delta"))))
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
    curves = {n: {p: sum(v) / len(v) for p, v in ps.items()} for n, ps in acc.items()}
    rows = [[n.split(" / ")[0], n.split(" / ")[1], None, None, None, None, None, None, None]
            for n in curves]
    return LearnabilityView(Table("average learnability (run in progress: final after the end)",
                                  cols, rows, heat=["avg_learnability"],
                                  labels=LEARNABILITY_LABELS), curves,
                            [(n, None, None, None) for n in curves], partial=True,
                            skipped=skipped)


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
        row += [_num(e.get("learnability_estimate")), _num(e.get("learnability_at_1"))]
    if est.get("mode") == "quick":
        view.table.title = "learnability ESTIMATE (quick run: no log-AUC)"
    view.estimate = est
    return view


# ---- attack -----------------------------------------------------------------------------------------

ATTACK_COLS = ["ex", "index", "result", "l0", "queries", "seconds", "original"]


@dataclass
class AttackView:
    summary: dict[str, Any]
    table: Table  # one row per example, key = cell key
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)

    def filtered(self, result_type: str | None) -> Table:
        if not result_type:
            return self.table
        keep = [i for i, r in enumerate(self.table.rows) if r[2] == result_type]
        return Table(f"{self.table.title} ({result_type})", self.table.columns,
                     [self.table.rows[i] for i in keep], self.table.heat,
                     [self.table.keys[i] for i in keep] if self.table.keys else None)


def load_attack(path: str | os.PathLike[str]) -> AttackView:
    """Compact rows of every finished example (projected in SQL: 10,000 examples stay fast;
    each result is verified by its checksum, or as JSON in a store written before them)."""
    fields = [f"json_extract(result,'$.{f}')" for f in ("index", "result_type", "l0", "queries",
                                                         "seconds")]
    fields.append("substr(json_extract(result,'$.original'),1,120)")
    with RunStore(path, readonly=True) as store:
        projected = ", ".join(f"CASE WHEN json_valid(result) THEN {f} END" for f in fields)
        rows = []
        for row in store.conn.execute(
                f"SELECT key, result, {store.crc_column('result_crc')}, json_valid(result), "
                f"{projected} FROM cells WHERE status='done' ORDER BY seq"):
            key, text, crc, valid = row[:4]
            try:
                if not isinstance(key, str):
                    key = f"#{len(rows)}"
                    raise payloads.Damaged("the cell's key is not text")
                payloads.verify(text, store.stored_crc(crc, "result"), "result")
                if not valid:
                    raise payloads.Damaged("result is not valid JSON")
            except payloads.Damaged as exc:
                store.damaged.setdefault(key, str(exc))
                continue
            rows.append((key, *row[4:]))
        counts = store.counts()
        skipped = store.skipped_line()
    keys = [r[0] for r in rows]
    table = Table("examples", ATTACK_COLS,
                  [[r[0].removeprefix("ex="), *r[1:]] for r in rows], heat=["l0", "queries"],
                  keys=keys)
    summary = dict(read_summary(path) or {})
    if not summary:
        by = defaultdict(int)
        for r in rows:
            by[r[2]] += 1
        n = sum(by.values())
        summary = {"recipe": "?", "counts": dict(by), "in_progress": True,
                   "success_rate": by["successful"] / max(1, n - by["skipped"]) if n else None}
    summary["cells"] = counts
    return AttackView(summary, table, skipped)


def load_example(path: str | os.PathLike[str], key: str) -> dict[str, Any] | None:
    with RunStore(path, readonly=True) as store:
        cell = store.cell(key)
    return cell.result if cell else None


_TOKEN = re.compile(r"\S+")


def word_diff(a: str, b: str | None) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both sentences as (word, changed) pairs, aligned word by word with difflib."""
    wa = _TOKEN.findall(a or "")
    if b is None:  # no vulnerable example: nothing to highlight
        return [(w, False) for w in wa], []
    wb = _TOKEN.findall(b)
    ca, cb = [False] * len(wa), [False] * len(wb)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes():
        if tag != "equal":
            ca[i1:i2] = [True] * (i2 - i1)
            cb[j1:j2] = [True] * (j2 - j1)
    return list(zip(wa, ca, strict=True)), list(zip(wb, cb, strict=True))


# ---- bias ---------------------------------------------------------------------------------------------


@dataclass
class BiasView:
    table: Table  # pair × k of B(p, k)
    cells: dict[tuple[str, int], str]  # (pair, k) -> cell key
    ks: list[int]
    skipped: str | None = None  # the damaged cells left out (RunStore.skipped_line)

    def histogram(self, path: str | os.PathLike[str], pair: str, k: int | None) -> Plot:
        keys = [c for (p, kk), c in self.cells.items() if p == pair and (k is None or kk == k)]
        values: list[float] = []
        with RunStore(path, readonly=True) as store:
            for key in keys:
                try:
                    records = store.records(key)
                except DamagedCell:  # named in the plot's note below
                    continue
                values += [r["f_soft"] for r in records if isinstance(r, dict)
                           and isinstance(r.get("f_soft"), (int, float))]
            skipped = store.skipped_line()
        label = f"{pair}" + (f", k={k}" if k is not None else "")
        return Plot(f"F_soft histogram: {label}", "F_soft", "sentences",
                    [Series(label, [], values, "hist")], bins=30,
                    note=f"{len(values)} sentences" + (f"; {skipped}" if skipped else ""))


def load_bias(path: str | os.PathLike[str]) -> BiasView:
    cells: dict[tuple[str, int], str] = {}
    values: dict[str, dict[int, Any]] = defaultdict(dict)
    with RunStore(path, readonly=True) as store:
        for key, r in store.done_results():
            pair = "/".join(map(str, r.get("pair") or [])) or key
            k = int(r.get("k", 0))
            cells[(pair, k)] = key
            values[pair][k] = r.get("B")
        skipped = store.skipped_line()
    ks = sorted({k for _, k in cells})
    cols = ["pair", *[f"k={k}" for k in ks]]
    rows = [[pair, *[values[pair].get(k) for k in ks]] for pair in values]
    return BiasView(Table("B(p,k) = mean F_soft", cols, rows, heat=cols[1:]), cells, ks, skipped)


# ---- cross-domain ---------------------------------------------------------------------------------------


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
        row = [name, _num(r.get("mean")), _num(r.get("variance")), _num(r.get("cov")),
               points.get(10.0)]
        if has_auc:
            row.append(_num(r.get("gamma_auc")))
        if has_corpus:
            c = r.get("corpus") or {}
            row += [_num(c.get("bleu")), _num(c.get("chrf")), _num(c.get("ter"))]
        sys_rows.append(row)
        dom_rows.append([name, *[_num((r.get("per_domain") or {}).get(d)) for d in domains]])
        for lo in r.get("leave_one_out") or []:
            loo_rows.append([name, lo.get("left_out"), _num(lo.get("mean")),
                             _num(lo.get("variance")), _num(lo.get("cov"))])
    agree_rows = [[m, _num(a.get("pairwise")), _num(a.get("kendall_tau"))]
                  for m, a in (summary.get("agreement") or {}).items()]
    return CrossDomainView(
        Table("systems", sys_cols, sys_rows, heat=["mean", "cov", "γ@10", "γ-AUC"]),
        Table("per-domain scores", ["system", *domains], dom_rows, heat=domains),
        Table("leave one domain out", ["system", "left_out", "mean", "variance", "cov"],
              loo_rows, heat=["cov"]),
        Table("ranking agreement with human scores", ["metric", "pairwise", "kendall_tau"],
              agree_rows, heat=["pairwise", "kendall_tau"]),
        gamma, skipped)


# ---- eval (a trained model as it is) ------------------------------------------------------------

EVAL_COLS = ["perturbation", "test", "a0", "a1", "a1_sd", "delta", "failure_rate",
             "change_rate", "noop_rate", "seeds"]
EVAL_LABELS = {"a0": "A0", "a1": "A1", "a1_sd": "sd", "delta": "A1-A0", "failure_rate": "fail",
               "change_rate": "changed", "noop_rate": "no-op"}


@dataclass
class EvalView:
    table: Table  # one row per perturbation, worst first
    clean: float | None
    model: str
    partial: bool = False
    headline: str = ""
    #: cells pending or running (a partial view with none left is finished, not in progress)
    unfinished: int = 0
    #: what ``clean`` is: "accuracy A0", or a task's metric ("entity F1", "Pearson")
    metric: str = "accuracy A0"
    #: a model behind an endpoint: its requests, tokens and invalid answers (one short line)
    endpoint: str = ""

    def accuracy_plot(self) -> Plot:
        """A1 − A0 per perturbation (bars numbered as the table's rows), the sign the table and
        every other output use: below 0, the perturbation costs accuracy. Tests without A1 (a
        label-changing perturbation) are drawn at 0."""
        d = EVAL_COLS.index("delta")
        x = [i + 1 for i in range(len(self.table.rows))]
        y = [r[d] if r[d] is not None else 0.0 for r in self.table.rows]
        # a task's run: its metric's drop (entity F1, Pearson ...), not accuracy's
        name = "A1 - A0" if self.metric == "accuracy A0" else f"{self.metric} drop"
        clean = "A0" if self.metric == "accuracy A0" else self.metric
        return Plot(f"{name} per perturbation (table row)", "perturbation",
                    name, [Series(name, x, y, "bar",
                                  names=[str(r[0]) for r in self.table.rows])],
                    note=f"clean {clean} = {fmt(self.clean)}" if self.clean is not None else "")


def load_eval(path: str | os.PathLike[str]) -> EvalView:
    """The eval run's table from summary.json, or (in progress) from its finished cells with
    the study's own aggregation; worst first, as every eval output."""
    from robustlab.studies.eval.study import by_harm, headline, summarise, test_header

    summary = read_summary(path)
    partial = not (summary and summary.get("perturbations") is not None)
    unfinished = 0
    if partial:
        with RunStore(path, readonly=True) as store:
            info = store.run_info()
            results = [r for _, r in store.done_results()]
            counts = store.counts()
            unfinished = counts.get("pending", 0) + counts.get("running", 0)
        config = info.config if info is not None else {}
        rows = summarise(results, config.get("perturbations") or
                         list(dict.fromkeys(r["perturbation"] for r in results)))
        clean, model = (results[0]["a0"] if results else None), str(config.get("model", "?"))
    else:
        rows = summary["perturbations"]
        # a task's run (NER, pairs, similarity, answer selection): its own clean metric
        clean = summary.get("clean_metric", summary.get("clean_accuracy"))
        model = str(summary.get("model", "?"))
    from robustlab.studies.eval.judge import apply_judgements

    with RunStore(path, readonly=True) as store:  # judged since the summary was written too
        rows = by_harm(apply_judgements(store, rows))
    table_rows = [[r["label"], test_header(r), _num(r["a0"]), _num(r["a1"]),
                   (r["a1"] or {}).get("std"), _num(r["delta"]), _num(r["failure_rate"]),
                   _num(r.get("change_rate")), _num(r["noop_rate"]), len(r["seeds"])]
                  for r in rows]
    title = "the model as it is, worst first" + (" (finished cells so far)" if partial else "")
    from robustlab.tasks.stored import TEST_PREFIX, is_task_test

    task = rows[0]["test"][len(TEST_PREFIX):] if rows and is_task_test(rows[0].get("test")) \
        else None
    labels, metric, line = EVAL_LABELS, "accuracy A0", headline(rows)
    if task:
        from robustlab.studies.eval.tasks import metric_label, task_headline, tui_labels

        labels, metric, line = ({**EVAL_LABELS, **tui_labels(task)}, metric_label(task),
                                task_headline(rows, task))
    return EvalView(Table(title, EVAL_COLS, table_rows,
                          heat=["a1", "delta", "failure_rate"], labels=labels),
                    clean, short_model(model), partial, line, unfinished, metric,
                    endpoint_line(path, summary, rows))


def endpoint_line(path: str | os.PathLike[str], summary: dict[str, Any] | None,
                  rows: list[dict[str, Any]]) -> str:
    """What asking an endpoint cost, short enough for 80 columns: from summary.json's
    ``endpoint`` (docs/endpoints.md), or during a run from the store's responses and the
    finished cells; "" for a local model."""
    ep = (summary or {}).get("endpoint")
    if isinstance(ep, dict) and ep:  # an LLM kind has a template; only its answers can name no label
        llm = ep.get("template") is not None
    else:
        with RunStore(path, readonly=True) as store:
            if not store.has_responses_table():
                return ""
            totals = store.response_totals()
        llm = any("invalid" in r for r in rows)
        ep = {**totals, "tokens": totals["prompt_tokens"] + totals["completion_tokens"],
              "invalid": sum(int(r.get("invalid") or 0) for r in rows)}
    def count(key: str) -> str:  # summary.json is data: a number, else "?"
        v = ep.get(key)
        return f"{int(v):,}" if isinstance(v, int | float) and not isinstance(v, bool) \
            and v == v and abs(v) < 1e15 else "?"

    parts = [f"endpoint: {count('requests')} requests", f"{count('tokens')} tokens"]
    if llm:
        parts.append(f"{count('invalid')} invalid answers")
    return " · ".join(parts)
