"""The second-order attack and counterfactual-bias sections of ``robustlab report`` (paper 002):
success rates, ℓ0, perplexity, vulnerable examples, B(p, k) tables and F_soft histograms (the
per-example detail comes from the run store).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Heading, Para, Table
from robustlab.report.format import marked_words, num
from robustlab.report.load import RunData
from robustlab.report.sections import HALF_WIDTH, Blocks, png, side_by_side

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
        out += side_by_side([(run, [png(plots.attack_figure(run.results),
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
        out.append(png(plots.bias_vs_k_figure(drawn, ks), f"B(p,k) against k, {run.path.name}",
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
        out.append(png(plots.bias_hist_figure(name, by_k), f"F_soft histogram, {name}",
                        f"F_soft histograms for {name}, one per k (x range fitted to the "
                        "values).", f"bias_hist_{run.path.name}_{i}.png"))
    return out
