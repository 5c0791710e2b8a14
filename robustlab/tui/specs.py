"""What a results screen shows, as plain data: tables and plots, and their export (headless).

A :class:`Table` is drawn by the heat-coloured table widget and exported to CSV/JSON; a
:class:`Plot` is drawn in the terminal with plotext and exported to PNG with matplotlib from the
same numbers, so what is saved is what is on screen.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.outputs import atomic_write, write_json


@dataclass
class Table:
    """Rows of values under named columns; ``heat`` names the numeric columns to colour."""

    title: str
    columns: list[str]
    rows: list[list[Any]]
    heat: list[str] = field(default_factory=list)
    keys: list[str] | None = None  # a stable key per row (e.g. the cell key)
    #: short headers shown on screen (exports keep ``columns``): 80 columns must fit a table
    labels: dict[str, str] = field(default_factory=dict)
    #: one line naming the cells left out because their stored data is damaged (None: none)
    skipped: str | None = None

    def headers(self) -> list[str]:
        return [self.labels.get(c, c) for c in self.columns]

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, r, strict=False)) for r in self.rows]


@dataclass
class Series:
    label: str
    x: list[float]
    y: list[float]
    style: str = "line"  # line | scatter | bar | hist
    names: list[str] | None = None  # a label per point (scatter), drawn beside it on export


@dataclass
class Plot:
    title: str
    xlabel: str = ""
    ylabel: str = ""
    series: list[Series] = field(default_factory=list)
    bins: int = 20
    note: str = ""  # shown with the title (e.g. "Spearman ρ=0.61, p=0.02")
    xlog: bool = False


def fmt(v: Any, digits: int = 3) -> str:
    """A table cell as text: floats rounded, None as an en dash."""
    if v is None:
        return "–"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        return f"{v:.{digits}f}"
    if isinstance(v, (list, tuple)):
        return "/".join(map(str, v))
    return str(v)


def export_table(table: Table, path: str | os.PathLike[str]) -> Path:
    """Write a table as CSV (``.csv``) or a list of JSON records (``.json``) to the path the
    user typed (links resolved, a device written in place: :func:`robustlab.outputs.atomic_write`)."""
    path = Path(path)
    if path.suffix == ".json":
        return write_json(path, table.records(), user=True)
    if path.suffix == ".csv":
        def w(f):
            out = csv.writer(f)
            out.writerow(table.columns)
            out.writerows([["" if v is None else v for v in r] for r in table.rows])
        return atomic_write(path, w, user=True)
    raise InputError(f"cannot export a table to {path.name}: use a .csv or .json file name")


def export_plot(plot: Plot, path: str | os.PathLike[str]) -> Path:
    """Draw the same series with matplotlib (Agg) and save a PNG."""
    path = Path(path)
    if path.suffix != ".png":
        raise InputError(f"cannot export a plot to {path.name}: use a .png file name")
    from robustlab import plots

    return plots.save_png(plots.spec_figure(plot), path, dpi=120, user=True)


def export(obj: Table | Plot, path: str | os.PathLike[str]) -> Path:
    return export_table(obj, path) if isinstance(obj, Table) else export_plot(obj, path)


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=str)
