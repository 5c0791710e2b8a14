"""The attack results screen's reader: one compact row per finished example.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store import RunStore
from robustlab.tui.data import read_summary
from robustlab.tui.specs import Table

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
