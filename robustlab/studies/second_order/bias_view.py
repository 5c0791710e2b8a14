"""The bias results screen's reader: B(p, k) per pair and k, and F_soft histograms.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from robustlab.runs.store import DamagedCell, RunStore
from robustlab.tui.specs import Plot, Series, Table


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
