"""A terminal plot of a :class:`~robustlab.tui.specs.Plot`, drawn with textual-plotext."""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

from robustlab.textfmt import printable
from robustlab.tui.specs import Plot


class SpecPlot(PlotextPlot):
    """Draws line, scatter, bar and histogram series; the same spec exports to PNG. Titles and
    labels name stored models, perturbations and systems: they are drawn :func:`printable`."""

    DEFAULT_CSS = """
    SpecPlot { height: 1fr; min-height: 8; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.spec: Plot | None = None

    def show(self, plot: Plot) -> None:
        self.spec = plot
        plt = self.plt
        plt.clear_figure()
        plt.title(printable(plot.title + (f"  [{plot.note}]" if plot.note else "")))
        plt.xlabel(printable(plot.xlabel))
        plt.ylabel(printable(plot.ylabel))
        for s in plot.series:
            label = printable(s.label) if len(plot.series) > 1 else None
            if s.style == "hist":
                if s.y:
                    plt.hist(s.y, bins=plot.bins, label=label)
            elif s.style == "bar":
                plt.bar([printable(x) for x in s.x], s.y, label=label)
            else:
                xs = [math.log10(x) if plot.xlog and x > 0 else x for x in s.x]
                draw = plt.scatter if s.style == "scatter" else plt.plot
                if xs:
                    draw(xs, s.y, label=label, marker="dot" if s.style == "scatter" else None)
        if plot.xlog:
            plt.xlabel(printable(f"log10 {plot.xlabel}"))
        self.refresh()
