"""Every figure robustlab draws, in one house style (CLI PNGs, TUI exports and reports).

Why one module: the same figure must look the same whether a study writes it, the TUI exports it
or ``robustlab report`` inlines it, and the fixes that make a figure usable in a paper live in one
place: constrained layout (colour bars and long tick labels are never clipped), legends placed
outside the axes (they never cover the curves), labelled scatter points, and short display names
for long perturbation specs (:func:`short_name`; an NL-Augmenter class path is 100+ characters).

Functions named ``*_figure`` build and return a :class:`matplotlib.figure.Figure` (Agg, no
display, no pyplot state); :func:`save_png` writes one atomically and :func:`png_bytes` renders
one for inlining. Inputs are the plain records of ``summary.json`` (docs/run-directory.md).
"""

from __future__ import annotations

import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

#: the house style, applied to every figure through :func:`new_figure`
#: every text ≥ 9 pt: a report shows figures at their pixel size (DPI 110 on a page ~1150 px
#: wide), so 9 pt here is 9 pt to the reader
STYLE = {"font.size": 10, "axes.titlesize": 10, "axes.labelsize": 10, "legend.fontsize": 9,
         "xtick.labelsize": 9, "ytick.labelsize": 9, "axes.grid": True, "grid.alpha": 0.3,
         "figure.facecolor": "white", "savefig.facecolor": "white"}
DPI = 110
SMALL = 9  # the smallest text a figure draws (labels of points, values in cells)
#: the widest figure in inches: 10.2 in at DPI 110 is 1122 px, inside the report's 1152 px
#: column, so no figure is scaled down (and its text shrunk) by the page
MAX_WIDTH = 10.2
SHORT_LEN = 32
_width_limit: list[float] = []


def _mean(v: Any) -> float:
    if isinstance(v, Mapping):
        v = v.get("mean")
    return math.nan if v is None else float(v)


def short_name(spec: str, max_len: int = SHORT_LEN) -> str:
    """A display name for a perturbation spec: class paths shortened to the class, long option
    lists cut with an ellipsis. ``nlaugmenter:transformations.butter_fingers_perturbation.
    transformation.ButterFingersPerturbation`` → ``nla:ButterFingersPerturbation``. A label given
    with ``spec@label`` (docs/adapters.md) is used as it is."""
    from robustlab.errors import InputError
    from robustlab.perturbations.registry import split_label

    try:
        body, label = split_label(str(spec))
    except InputError:
        body, label = str(spec), None
    if label:
        return label if len(label) <= max_len else label[:max_len - 1] + "…"
    parts = body.split(":")
    if parts and parts[0] == "nlaugmenter":
        parts[0] = "nla"
    parts = [p.rsplit(".", 1)[-1] if re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_]\w*)+", p) else p
             for p in parts]
    name = ":".join(parts)
    return name if len(name) <= max_len else name[:max_len - 1] + "…"


def display_names(specs: Sequence[str], max_len: int = SHORT_LEN) -> dict[str, str]:
    """{spec: short name}, unique: clashing short names get a numeric suffix."""
    out: dict[str, str] = {}
    seen: dict[str, int] = {}
    for s in dict.fromkeys(specs):
        n = short_name(s, max_len)
        if n in seen:
            seen[n] += 1
            n = f"{n}#{seen[n]}"
        else:
            seen[n] = 1
        out[s] = n
    return out


class width_limit:  # noqa: N801 (a context manager used like a function)
    """``with width_limit(5.0): ...``: figures drawn inside are at most this wide (inches), for
    a report that puts two runs' figures side by side in columns half the page wide."""

    def __init__(self, inches: float) -> None:
        self.inches = inches

    def __enter__(self) -> None:
        _width_limit.append(self.inches)

    def __exit__(self, *exc: Any) -> None:
        _width_limit.pop()


def fig_width(width: float) -> float:
    """``width`` clamped to :data:`MAX_WIDTH` and to the innermost :class:`width_limit`."""
    return min([width, MAX_WIDTH, *_width_limit])


def narrow() -> bool:
    """True inside a :class:`width_limit` under 7 in: multi-panel figures stack their panels
    in rows instead of squeezing them side by side."""
    return bool(_width_limit) and _width_limit[-1] < 7


def panels(fig: Any, n: int, **kw: Any) -> list[Any]:
    """``n`` axes in a row, or in a column when :func:`narrow`."""
    grid = fig.subplots(n, 1, squeeze=False, **kw)[:, 0] if narrow() else \
        fig.subplots(1, n, squeeze=False, **kw)[0]
    return list(grid)


def new_figure(width: float, height: float) -> Any:
    """A constrained-layout Agg figure in the house style (no pyplot, no display); its width
    is clamped by :func:`fig_width`."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(fig_width(width), height), layout="constrained")
    FigureCanvasAgg(fig)  # an Agg canvas: renders (and measures text) without a display
    fig.set_facecolor("white")
    return fig


def _style(ax: Any) -> None:
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=SMALL)


def legend_outside(fig: Any, ax: Any, ncol: int = 1) -> None:
    """Legend to the right of the figure (outside every axes) so it never covers a curve."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=SMALL, ncol=ncol,
                   frameon=False)


def save_png(fig: Any, path: str | os.PathLike[str], dpi: int = DPI, *,
             user: bool = False) -> Path:
    """Write a figure as PNG atomically (robustlab.outputs.save_figure; ``user``: a path the
    user named rather than a run-directory file)."""
    from robustlab.outputs import save_figure

    return save_figure(fig, path, dpi=dpi, user=user)


def png_bytes(fig: Any, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


# ---- learnability / CENT (paper 000) -------------------------------------------------------------


def learnability_curves_figure(pairs: Sequence[Mapping[str, Any]], p_grid: Sequence[float]) -> Any:
    """Figure 4: learnability against p (log scale), one panel per model, ±1 sd band."""
    models = list(dict.fromkeys(r["model"] for r in pairs))
    names = display_names([r["perturbation"] for r in pairs])
    rows = len(models) if narrow() else 1
    fig = new_figure(3.6 * len(models) + 1.8, 3.0 * rows + 0.6 * (rows == 1) + (
        0.25 * len(names) if narrow() else 0))
    axes = panels(fig, len(models), sharey=True)
    colours: dict[str, Any] = {}
    cycle = _colours()
    for ax, model in zip(axes, models, strict=True):
        for r in (x for x in pairs if x["model"] == model and x.get("learnability_at")):
            at = r["learnability_at"]
            m = np.array([_mean(at.get(format(p, "g"))) for p in p_grid])
            s = np.array([(at.get(format(p, "g")) or {}).get("std") or 0.0 for p in p_grid])
            c = colours.setdefault(r["perturbation"], next(cycle))
            ax.plot(p_grid, m, marker="o", ms=3, color=c, label=names[r["perturbation"]])
            ax.fill_between(p_grid, m - s, m + s, color=c, alpha=0.15)
        ax.set_xscale("log")
        ax.set_ylim(-0.1, 1.05)
        ax.set_title(model)
        ax.set_xlabel("perturbation probability p")
        _style(ax)
    for ax in axes if narrow() else axes[:1]:
        ax.set_ylabel("learnability (ATE)")
    handles = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if handles:
        fig.legend(list(handles.values()), list(handles),
                   loc="outside lower center" if narrow() else "outside right upper",
                   ncol=2 if narrow() else 1, fontsize=SMALL, frameon=False)
    return fig


def _colours():
    import itertools

    import matplotlib

    return itertools.cycle(matplotlib.colormaps["tab20"].colors[::2]
                           + matplotlib.colormaps["tab20"].colors[1::2])


def learnability_table_figure(perts: Sequence[str], models: Sequence[str], mat: np.ndarray,
                              vmax: float) -> Any:
    """Table 2 as a heat map (perturbations × models, value printed in each cell)."""
    names = display_names(perts)
    # at least 3 in tall: the colour bar's label runs along it and must fit (a 2.5 in bar
    # clipped "average learnability (log-AUC)")
    fig = new_figure(3.4 + 1.2 * len(models), max(3.0, 1.2 + 0.42 * len(perts)))
    ax = fig.subplots()
    im = ax.imshow(mat, cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(models)), list(models), rotation=30, ha="right")
    ax.set_yticks(range(len(perts)), [names[p] for p in perts])
    ax.grid(False)
    for i in range(len(perts)):
        for j in range(len(models)):
            if math.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center",
                        color="w" if mat[i, j] < 0.6 * vmax else "k", fontsize=SMALL)
    ax.set_xlabel("model")
    fig.colorbar(im, ax=ax, label="average learnability\n(log-AUC over p)")
    return fig


def learnability_scatter_figure(pairs: Sequence[Mapping[str, Any]],
                                corr: Mapping[str, Any]) -> Any:
    """Figures 1/5: average learnability against robustness and Δ, every point labelled with
    its perturbation (colour = model), Spearman ρ, p and n in the titles."""
    models = list(dict.fromkeys(r["model"] for r in pairs))
    names = display_names([r["perturbation"] for r in pairs], 18)
    fig = new_figure(10.2, 7.6 if narrow() else 4.4)
    axes = panels(fig, 2)
    cycle = _colours()
    colour = {m: next(cycle) for m in models}
    to_label: list[tuple[Any, ...]] = []
    for ax, field, label, cname in zip(
            axes, ("robustness", "delta"),
            ("robustness (A1 − A0)", "post-augmentation Δ (A2 − A1)"),
            ("learnability_vs_robustness", "learnability_vs_delta"), strict=True):
        lab: list[str] = []
        lx: list[float] = []
        ly: list[float] = []
        lc: list[Any] = []
        for model in models:
            sel = [r for r in pairs if r["model"] == model]
            xs = [_mean(r.get("avg_learnability")) for r in sel]
            ys = [_mean(r.get(field)) for r in sel]
            ax.scatter(xs, ys, label=model, s=22, color=colour[model])
            lab += [names[r["perturbation"]] for r in sel]
            lx += xs
            ly += ys
            lc += [colour[model]] * len(sel)
        ax.set_xlabel("average learnability (log-AUC)")
        ax.set_ylabel(f"{label}, accuracy")
        ax.set_title(rho_text(corr.get(cname) or {}, "\n"))
        _style(ax)
        to_label.append((ax, lab, lx, ly, lc))
    legend_outside(fig, axes[0])
    for ax, *rest in to_label:  # last: in the final layout
        label_points(ax, *rest)
    return fig


def label_points(ax: Any, names: Sequence[str], xs: Sequence[float], ys: Sequence[float],
                 colours: Any = None) -> None:
    """Label scatter points legibly (:data:`SMALL` pt) and inside the axes, without piling
    labels on each other: points on one spot share a label, the same name on nearby points
    (one perturbation, several models) is written once, and each label takes the first of four
    places beside its point (inwards first) where it overlaps no other label and stays inside
    the axes; a label with no free place is left out (the tables have every value). (Labels of
    6 pt running past the axes and over each other were unreadable.)"""
    if colours is None or isinstance(colours, (str, tuple)):
        colours = [colours] * len(names)
    pts = [(str(n), float(x), float(y), c) for n, x, y, c in zip(names, xs, ys, colours,
                                                                   strict=False)
           if n and math.isfinite(x) and math.isfinite(y)]
    if not pts:
        return
    ax.margins(x=0.25, y=0.2)
    ax.autoscale_view()
    ax.figure.canvas.draw()  # the final layout first: labels are placed in its pixels
    (lx0, lx1), (ly0, ly1) = ax.get_xlim(), ax.get_ylim()
    near_x, near_y = 0.05 * (lx1 - lx0), 0.05 * (ly1 - ly0)
    groups: list[tuple[list[str], float, float, Any]] = []
    for name, x, y, c in pts:
        for g in groups:
            if (name in g[0] and abs(g[1] - x) <= near_x and abs(g[2] - y) <= near_y) or \
                    (abs(g[1] - x) < 1e-9 and abs(g[2] - y) < 1e-9):
                if name not in g[0]:
                    g[0].append(name)
                if len({c, g[3]}) > 1:  # several models: a neutral colour
                    groups[groups.index(g)] = (g[0], g[1], g[2], "0.2")
                break
        else:
            groups.append(([name], x, y, c))
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    box = ax.get_window_extent(renderer)
    xm, ym = (lx0 + lx1) / 2, (ly0 + ly1) / 2
    placed: list[Any] = []
    for name_list, x, y, c in groups:
        right, up = x > xm, y > ym
        tries = [(right, up), (right, not up), (not right, up), (not right, not up),
                 (None, up), (None, not up)]  # None: centred above / below the point
        chosen = None
        for r, u in tries:
            dx = 0 if r is None else (-4 if r else 4)
            t = ax.annotate(", ".join(name_list), (x, y), xytext=(dx, -5 if u else 5),
                            textcoords="offset points", fontsize=SMALL, color=c,
                            ha="center" if r is None else ("right" if r else "left"),
                            va="top" if u else "bottom", annotation_clip=False)
            t.set_in_layout(False)  # placed in the final layout; must not move it
            ext = t.get_window_extent(renderer)
            inside = ext.x0 >= box.x0 and ext.x1 <= box.x1 and ext.y0 >= box.y0 and \
                ext.y1 <= box.y1
            if inside and not any(ext.overlaps(p) for p in placed):
                chosen = (t, ext)
                break
            t.remove()
        if chosen is None:  # crowded: no free place; an unreadable pile helps nobody
            continue
        placed.append(chosen[1])


def learnability_estimate_figure(block: Mapping[str, Any]) -> Any:
    """Heat map model × perturbation of the estimate (cells marked ✗ failed the p = 1 check),
    beside the estimate vs robustness scatter when the run measured robustness (the quick
    estimate's ``learnability_estimate.png``)."""

    est = block["pairs"]
    models = list(dict.fromkeys(r["model"] for r in est))
    perts = list(dict.fromkeys(r["perturbation"] for r in est))
    mat = np.full((len(perts), len(models)), np.nan)
    flag = np.zeros_like(mat, dtype=bool)
    for r in est:
        i, j = perts.index(r["perturbation"]), models.index(r["model"])
        mat[i, j] = _mean(r.get("learnability_estimate"))
        flag[i, j] = r.get("learnable") is False
    with np.errstate(all="ignore"):
        row_avg = np.array([np.nanmean(x) if np.isfinite(x).any() else np.nan for x in mat])
    order = np.argsort(np.where(np.isfinite(row_avg), row_avg, np.inf), kind="stable")
    mat, flag, perts = mat[order], flag[order], [perts[i] for i in order]
    rob = [(_mean(r.get("learnability_estimate")), _mean(r.get("robustness")), r["model"])
           for r in est]
    scatter = any(math.isfinite(b) for _, b, _ in rob)
    p = format(block["estimate_p"], "g")
    height = max(3.2, 1.2 + 0.45 * len(perts))
    fig = new_figure(3.6 + 1.3 * len(models) + (4.8 if scatter else 0),
                     height + (3.4 if scatter and narrow() else 0))
    axes = panels(fig, 2 if scatter else 1)
    ax = axes[0]
    finite = mat[np.isfinite(mat)]
    # the colour range fits the data (an estimate of 0.12 on a 0..1 scale was one dark block)
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    high = max(float(finite.max()), low + 0.05) if finite.size else 1.0
    im = ax.imshow(mat, cmap="viridis", vmin=low, vmax=high, aspect="auto")
    ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
    ax.set_yticks(range(len(perts)), [display_names(perts, 24)[x] for x in perts])
    ax.grid(False)
    for i in range(len(perts)):
        for j in range(len(models)):
            if math.isfinite(mat[i, j]):
                light = mat[i, j] > low + 0.6 * (high - low)
                ax.text(j, i, f"{mat[i, j]:.2f}" + (" ✗" if flag[i, j] else ""), ha="center",
                        va="center", color="k" if light else "w", fontsize=SMALL)
    ax.set_title(f"learnability ESTIMATE = learnability@{p}\n(✗: < {block['learnable_min']} at "
                 "p=1, not learnable)")
    ax.set_xlabel("model")
    fig.colorbar(im, ax=ax, label=f"learnability at p={p}\n(accuracy gain)")
    if scatter:
        ax = axes[1]
        short = display_names(perts, 18)
        lab: list[str] = []
        lx: list[float] = []
        ly: list[float] = []
        for m in models:
            sel = [r for r in est if r["model"] == m]
            xs = [_mean(r.get("learnability_estimate")) for r in sel]
            ys = [_mean(r.get("robustness")) for r in sel]
            ax.scatter(xs, ys, s=22, label=m)
            lab += [short[r["perturbation"]] for r in sel]
            lx += xs
            ly += ys
        c = (block.get("correlations") or {}).get("estimate_vs_robustness") or {}
        ax.set_title(rho_text(c, "\n"))
        ax.set_xlabel(f"learnability estimate (p={p})")
        ax.set_ylabel("robustness (A1 − A0), accuracy")
        _style(ax)
        if len(models) > 1:
            ax.legend(fontsize=SMALL)
        label_points(ax, lab, lx, ly, "0.2")
    return fig


def robustness_figure(pairs: Sequence[Mapping[str, Any]]) -> Any:
    """A robustness study at a glance: per perturbation (rows), horizontal bars of the
    accuracy change on perturbed data (A1 − A0) and after augmentation (A2 − A1), one bar per
    model, whiskers ± 1 sd over seeds; x ranges fitted to the data around 0."""
    models = list(dict.fromkeys(r["model"] for r in pairs))
    perts = list(dict.fromkeys(r["perturbation"] for r in pairs))
    names = display_names(perts, 28)
    fields = [(f, lab) for f, lab in (("robustness", "robustness A1 − A0"),
                                      ("delta", "post-augmentation Δ = A2 − A1"))
              if any(math.isfinite(_mean(r.get(f))) for r in pairs)]
    h_one = max(2.6, 1.0 + 0.38 * len(perts) * len(models) ** 0.5)
    fig = new_figure(3.0 + 3.6 * len(fields), h_one * (len(fields) if narrow() else 1))
    axes = panels(fig, len(fields), sharey=not narrow())
    cycle = _colours()
    colour = {m: next(cycle) for m in models}
    h = 0.8 / len(models)
    by = {(r["model"], r["perturbation"]): r for r in pairs}
    for ax, (field, label) in zip(axes, fields, strict=True):
        for k, m in enumerate(models):
            ys = np.arange(len(perts)) - 0.4 + h * (k + 0.5)
            vals = [_mean((by.get((m, p)) or {}).get(field)) for p in perts]
            err = [((by.get((m, p)) or {}).get(field) or {}).get("std") or 0.0
                   if isinstance((by.get((m, p)) or {}).get(field), Mapping) else 0.0
                   for p in perts]
            ax.barh(ys, [0.0 if math.isnan(v) else v for v in vals], height=h, xerr=err,
                    color=colour[m], label=m, capsize=2)
        ax.axvline(0, color="grey", lw=0.8)
        ax.set_xlabel(f"{label} (accuracy)")
        ax.set_yticks(range(len(perts)), [names[p] for p in perts])
        ax.invert_yaxis()
        lo, hi = ax.get_xlim()
        span = max(abs(lo), abs(hi), 0.01)
        ax.set_xlim(min(lo, -0.1 * span), max(hi, 0.1 * span))
        _style(ax)
    if len(models) > 1:
        legend_outside(fig, axes[0])
    return fig


def rho_text(c: Mapping[str, Any], sep: str = " ") -> str:
    """"Spearman ρ = 0.500, p = 0.33 (exact, n=4)" or why ρ is undefined (``sep="\n"``: on
    two lines, for a title over a narrow panel)."""
    if c.get("rho") is None:
        return f"Spearman ρ undefined (n={c.get('n', 0)};{sep}needs ≥ 3 pairs that vary)"
    method = f"{c['p_method']}, " if c.get("p_method") else ""
    pv = "" if c.get("p_value") is None else f", p = {c['p_value']:.2g}"
    return f"Spearman ρ = {c['rho']:+.3f}{pv}{sep}({method}n={c.get('n', 0)})"


# ---- second-order attacks (paper 002) -----------------------------------------------------------


def attack_figure(results: Sequence[Mapping[str, Any]]) -> Any:
    """An attack at a glance: how many words the vulnerable examples change (ℓ0, integer bars)
    and the model queries each attacked example cost (histogram)."""
    l0 = [int(r["l0"]) for r in results if r.get("result_type") == "successful"
          and isinstance(r.get("l0"), (int, float))]
    queries = [float(r["queries"]) for r in results if r.get("result_type") != "skipped"
               and isinstance(r.get("queries"), (int, float))]
    fig = new_figure(9.0, 3.6 if not narrow() else 6.4)
    ax1, ax2 = panels(fig, 2)
    if l0:
        ks = list(range(0, max(l0) + 1))
        ax1.bar(ks, [l0.count(k) for k in ks], color="tab:blue")
        ax1.set_xticks(ks)
    ax1.set_xlabel("ℓ0 (words changed in x̃)")
    ax1.set_ylabel("vulnerable examples")
    ax1.set_title(f"{len(l0)} vulnerable examples")
    if queries:
        ax2.hist(queries, bins=min(20, max(5, len(set(queries)))), color="tab:orange")
    ax2.set_xlabel("model queries per attacked example")
    ax2.set_ylabel("examples")
    ax2.set_title(f"{len(queries)} attacked (not skipped)")
    from matplotlib.ticker import MaxNLocator

    for ax in (ax1, ax2):
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no "1.25 examples"
        _style(ax)
    return fig


# ---- cross-domain (paper 004) --------------------------------------------------------------------


def gamma_curves_figure(results: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any],
                        eps: Sequence[float] | None = None) -> Any:
    """γ(ε) of every system: raw (left) and jointly normalized (right), legend outside."""
    from robustlab.metrics import consistency as cons

    curves = np.array([r["gamma_curve"] for r in results])
    x = np.asarray(eps, dtype=float) if eps is not None else np.arange(1, curves.shape[1] + 1)
    norm = cons.normalize_curves(curves)
    fig = new_figure(10.2, 7.0 if narrow() else 4.0)
    axes = panels(fig, 2)
    cycle = _colours()
    for i, r in enumerate(results):
        c = next(cycle)
        axes[0].plot(x, curves[i], label=short_name(str(r["system"]), 24), lw=1.3, color=c)
        axes[1].plot(x, norm[i], lw=1.3, color=c)
    score = cfg.get("score") or "score"
    unit = "σ-scaled grid, " if cfg.get("eps_grid") == "sigma" else ""
    axes[0].set(xlabel=f"ε ({unit}{score} points)", ylabel="γ(ε)",
                title="(ε,γ)-robustness (lower = more robust)")
    axes[1].set(xlabel=f"ε ({unit}{score} points)", ylabel="γ / max γ",
                title="normalized (joint max)")
    for ax in axes:
        _style(ax)
    legend_outside(fig, axes[0], ncol=1 if len(results) <= 14 else 2)
    return fig


# ---- bias (paper 002, Sec. 4) ---------------------------------------------------------------------


def bias_vs_k_figure(table: Sequence[Mapping[str, Any]], ks: Sequence[int] | None = None) -> Any:
    """B(p, k) against k, one line per word pair (x ticks: ``ks``, else the k in the table)."""
    fig = new_figure(6.5, 3.6)
    ax = fig.subplots()
    ks = sorted(ks) if ks is not None else sorted({int(r["k"]) for r in table})
    for name in dict.fromkeys("/".join(map(str, r["pair"])) for r in table):
        pts = [(r["k"], r["B"]) for r in table
               if "/".join(map(str, r["pair"])) == name and r.get("B") is not None]
        if pts:
            ax.plot(*zip(*pts, strict=False), marker="o", label=name)
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("k (neighbourhood distance, substitutions)")
    ax.set_ylabel("B(p, k) = mean F_soft (ΔP)")
    ax.set_xticks(list(ks))
    _style(ax)
    legend_outside(fig, ax, ncol=1 if len(ax.lines) <= 16 else 2)
    return fig


def bias_hist_figure(pair: str, by_k: Mapping[int, Sequence[float]]) -> Any:
    """F_soft histograms of one word pair, one per k (shared bins over the data's own range:
    F_soft lies in [−1, 1] but is usually within a few hundredths, and bins over [−1, 1] drew
    one spike per k)."""
    fig = new_figure(6.5, 3.4)
    ax = fig.subplots()
    allv = np.array([float(v) for vals in by_k.values() for v in vals
                     if math.isfinite(float(v))])
    lo, hi = (float(np.quantile(allv, 0.005)), float(np.quantile(allv, 0.995))) \
        if allv.size else (-1.0, 1.0)
    if hi - lo < 1e-4:  # (nearly) all one value: a small window around it
        lo, hi = lo - 5e-3, hi + 5e-3
    pad = (hi - lo) * 0.05
    lo, hi = max(-1.0, lo - pad), min(1.0, hi + pad)
    # the x range is the central 99 % of the values (a few outliers at ±0.05 squeezed the
    # rest into one bar); values beyond it are counted in the edge bins, and the share of
    # sentences per bin (not counts) keeps a k with n=2 visible beside one with n=2000
    outside = int(((allv < lo) | (allv > hi)).sum()) if allv.size else 0
    for k in sorted(by_k):
        vals = np.clip(np.asarray(by_k[k], dtype=float), lo, hi)
        if vals.size:
            ax.hist(vals, bins=30, range=(lo, hi), alpha=0.5,
                    weights=np.full(vals.size, 1.0 / vals.size),
                    label=f"k={k} (n={vals.size})")
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlim(lo, hi)
    ax.locator_params(axis="x", nbins=6)  # ticks of ±0.00075 would run into each other
    ax.ticklabel_format(axis="x", style="sci", scilimits=(-2, 3))
    ax.set_xlabel(f"F_soft(x; {pair}) = ΔP(class 1)"
                  + (f"  [{outside} beyond the range, in the edge bins]" if outside else ""))
    ax.set_ylabel("share of sentences")
    _style(ax)
    legend_outside(fig, ax)
    return fig


# ---- the TUI's plot specs ------------------------------------------------------------------------


def spec_figure(plot: Any) -> Any:
    """A :class:`robustlab.tui.specs.Plot` drawn in the house style (what the TUI exports):
    scatter points labelled when few, legend outside, long series names shortened."""
    fig = new_figure(7.5, 4.5)
    ax = fig.subplots()
    labels: list[tuple[list[str], Any, Any]] = []
    for s in plot.series:
        label = short_name(s.label, 36)
        if s.style == "scatter":
            ax.scatter(s.x, s.y, label=label, s=18)
            names = getattr(s, "names", None) or []
            if names:
                labels.append(([short_name(n, 18) for n in names], s.x, s.y))
        elif s.style == "bar":
            ax.bar([str(v) for v in s.x], s.y, label=label)
        elif s.style == "hist":
            ax.hist(s.y, bins=plot.bins, label=label, alpha=0.6)
        else:
            ax.plot(s.x, s.y, marker="o", ms=3, label=label)
    ax.set_title(plot.title + (f"\n{plot.note}" if plot.note else ""))
    if plot.xlog:
        ax.set_xscale("log")
    ax.set_xlabel(plot.xlabel)
    ax.set_ylabel(plot.ylabel)
    _style(ax)
    if len(plot.series) > 1:
        legend_outside(fig, ax, ncol=1 if len(plot.series) <= 16 else 2)
    if labels:  # last: placed in the final layout
        label_points(ax, [n for ns, _, _ in labels for n in ns],
                     [x for _, xs, _ in labels for x in xs], [y for _, _, ys in labels for y in ys])
    return fig
