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
STYLE = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 7,
         "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.grid": True, "grid.alpha": 0.3,
         "figure.facecolor": "white", "savefig.facecolor": "white"}
DPI = 110
SHORT_LEN = 32


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


def new_figure(width: float, height: float) -> Any:
    """A constrained-layout Agg figure in the house style (no pyplot, no display)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # an Agg canvas: renders (and measures text) without a display
    fig.set_facecolor("white")
    return fig


def _style(ax: Any) -> None:
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=8)


def legend_outside(fig: Any, ax: Any, ncol: int = 1) -> None:
    """Legend to the right of the figure (outside every axes) so it never covers a curve."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize=7, ncol=ncol,
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
    fig = new_figure(3.6 * len(models) + 1.8, 3.4)
    axes = fig.subplots(1, len(models), squeeze=False, sharey=True)[0]
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
    axes[0].set_ylabel("learnability (ATE)")
    handles = {}
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    if handles:
        fig.legend(list(handles.values()), list(handles), loc="outside right upper", fontsize=7,
                   frameon=False)
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
    fig = new_figure(2.6 + 1.2 * len(models), 1.2 + 0.42 * len(perts))
    ax = fig.subplots()
    im = ax.imshow(mat, cmap="viridis", vmin=0, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(models)), list(models), rotation=30, ha="right")
    ax.set_yticks(range(len(perts)), [names[p] for p in perts])
    ax.grid(False)
    for i in range(len(perts)):
        for j in range(len(models)):
            if math.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}", ha="center", va="center",
                        color="w" if mat[i, j] < 0.6 * vmax else "k", fontsize=8)
    fig.colorbar(im, ax=ax, label="average learnability (log-AUC)")
    return fig


def learnability_scatter_figure(pairs: Sequence[Mapping[str, Any]],
                                corr: Mapping[str, Any]) -> Any:
    """Figures 1/5: average learnability against robustness and Δ, every point labelled with
    its perturbation (colour = model), Spearman ρ, p and n in the titles."""
    models = list(dict.fromkeys(r["model"] for r in pairs))
    names = display_names([r["perturbation"] for r in pairs], 18)
    fig = new_figure(10.5, 4.2)
    axes = fig.subplots(1, 2)
    cycle = _colours()
    colour = {m: next(cycle) for m in models}
    for ax, field, label, cname in zip(
            axes, ("robustness", "delta"),
            ("robustness (A1 − A0)", "post-augmentation Δ (A2 − A1)"),
            ("learnability_vs_robustness", "learnability_vs_delta"), strict=True):
        for model in models:
            sel = [r for r in pairs if r["model"] == model]
            xs = [_mean(r.get("avg_learnability")) for r in sel]
            ys = [_mean(r.get(field)) for r in sel]
            ax.scatter(xs, ys, label=model, s=22, color=colour[model])
            for r, x, y in zip(sel, xs, ys, strict=True):
                if math.isfinite(x) and math.isfinite(y):
                    ax.annotate(names[r["perturbation"]], (x, y), xytext=(3, 3),
                                textcoords="offset points", fontsize=6, color=colour[model])
        ax.set_title(rho_text(corr.get(cname) or {}))
        ax.set_xlabel("average learnability")
        ax.set_ylabel(label)
        ax.margins(0.15)
        _style(ax)
    legend_outside(fig, axes[0])
    return fig


def learnability_estimate_figure(block: Mapping[str, Any]) -> Any:
    """Heat map model × perturbation of the estimate (cells marked ✗ failed the p = 1 check),
    beside the estimate vs robustness scatter when the run measured robustness (the quick
    estimate's ``learnability_estimate.png``)."""
    from matplotlib.figure import Figure

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
    fig = Figure(figsize=(2.4 + 1.3 * len(models) + (4.5 if scatter else 0),
                          1.2 + 0.45 * len(perts)), layout="constrained")
    axes = fig.subplots(1, 2 if scatter else 1, squeeze=False)[0]
    ax = axes[0]
    low = float(np.nanmin(mat)) if np.isfinite(mat).any() else 0.0
    im = ax.imshow(mat, cmap="viridis", vmin=min(0.0, low), vmax=1, aspect="auto")
    ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
    ax.set_yticks(range(len(perts)), perts)
    for i in range(len(perts)):
        for j in range(len(models)):
            if math.isfinite(mat[i, j]):
                ax.text(j, i, f"{mat[i, j]:.2f}" + (" ✗" if flag[i, j] else ""), ha="center",
                        va="center", color="w", fontsize=8)
    ax.set_title(f"learnability ESTIMATE = learnability@{p}\n(✗: < {block['learnable_min']} at "
                 "p=1, not learnable)", fontsize=9)
    fig.colorbar(im, ax=ax, label=f"learnability at p={p}")
    if scatter:
        ax = axes[1]
        for m in models:
            pts = [(a, b) for a, b, mm in rob if mm == m and math.isfinite(a) and math.isfinite(b)]
            ax.scatter([a for a, _ in pts], [b for _, b in pts], s=22, label=m)
        c = (block.get("correlations") or {}).get("estimate_vs_robustness") or {}
        rho = "n/a" if c.get("rho") is None else f"{c['rho']:.3f}"
        pv = "" if c.get("p_value") is None else f", p={c['p_value']:.2g}"
        ax.set_title(f"Spearman ρ = {rho}{pv} (n={c.get('n', 0)})", fontsize=9)
        ax.set_xlabel(f"learnability estimate (p={p})")
        ax.set_ylabel("robustness (A1 − A0)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return fig


def rho_text(c: Mapping[str, Any]) -> str:
    """"Spearman ρ = 0.500, p = 0.33 (exact, n=4)" or why ρ is undefined."""
    if c.get("rho") is None:
        return f"Spearman ρ undefined (n={c.get('n', 0)}; needs ≥ 3 pairs that vary)"
    method = f"{c['p_method']}, " if c.get("p_method") else ""
    pv = "" if c.get("p_value") is None else f", p = {c['p_value']:.2g}"
    return f"Spearman ρ = {c['rho']:+.3f}{pv} ({method}n={c.get('n', 0)})"


# ---- cross-domain (paper 004) --------------------------------------------------------------------


def gamma_curves_figure(results: Sequence[Mapping[str, Any]], cfg: Mapping[str, Any],
                        eps: Sequence[float] | None = None) -> Any:
    """γ(ε) of every system: raw (left) and jointly normalized (right), legend outside."""
    from robustlab.metrics import consistency as cons

    curves = np.array([r["gamma_curve"] for r in results])
    x = np.asarray(eps, dtype=float) if eps is not None else np.arange(1, curves.shape[1] + 1)
    norm = cons.normalize_curves(curves)
    fig = new_figure(11.5, 4.0)
    axes = fig.subplots(1, 2)
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


# ---- bias (paper 001) ----------------------------------------------------------------------------


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
    ax.set_xlabel("k (neighbourhood distance)")
    ax.set_ylabel("B(p, k) = mean F_soft")
    ax.set_xticks(list(ks))
    _style(ax)
    legend_outside(fig, ax, ncol=1 if len(ax.lines) <= 16 else 2)
    return fig


def bias_hist_figure(pair: str, by_k: Mapping[int, Sequence[float]]) -> Any:
    """F_soft histograms of one word pair, one per k (density, shared bins on [−1, 1])."""
    fig = new_figure(6.5, 3.4)
    ax = fig.subplots()
    for k in sorted(by_k):
        vals = list(by_k[k])
        if vals:
            ax.hist(vals, bins=40, range=(-1, 1), alpha=0.5, density=True,
                    label=f"k={k} (n={len(vals)})")
    ax.set_xlabel(f"F_soft(x; {pair})")
    ax.set_ylabel("density")
    _style(ax)
    legend_outside(fig, ax)
    return fig


# ---- the TUI's plot specs ------------------------------------------------------------------------


def spec_figure(plot: Any) -> Any:
    """A :class:`robustlab.tui.specs.Plot` drawn in the house style (what the TUI exports):
    scatter points labelled when few, legend outside, long series names shortened."""
    fig = new_figure(7.5, 4.5)
    ax = fig.subplots()
    for s in plot.series:
        label = short_name(s.label, 36)
        if s.style == "scatter":
            ax.scatter(s.x, s.y, label=label, s=18)
            for name, x, y in zip(getattr(s, "names", None) or [], s.x, s.y, strict=False):
                ax.annotate(short_name(name, 18), (x, y), xytext=(3, 3),
                            textcoords="offset points", fontsize=6)
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
    return fig
