"""Per-example records and predictions of a run store's cells, verified row by row, and the
run's event log."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store.base import StoreBase
from robustlab.runs.store.schema import EVENT_COLUMNS, PREDICTION_FIELDS, DamagedCell


class RecordReads(StoreBase):
    """The ``records``, ``predictions`` and ``events`` tables of a :class:`RunStore`."""

    def _verified_by_cell(self, rows: Iterable[sqlite3.Row], check: Any, single: str | None
                          ) -> list[Any]:
        """Rows (ordered by cell, the cell key first) through ``check(row) -> value``; a cell
        with one damaged row loses all of its rows (noted), or raises :class:`DamagedCell` when
        ``single`` names the one cell asked for."""
        out: list[Any] = []
        cell, start, bad = None, 0, None
        for row in rows:
            key = row[0]
            if key != cell:
                cell, start = key, len(out)
            elif key == bad:
                continue
            try:
                out.append(check(row))
            except payloads.Damaged as exc:
                self._note(key, str(exc))
                if single is not None:
                    raise DamagedCell(self.path, key, str(exc)) from None
                bad = key
                del out[start:]
        return out

    def records(self, key: str | None = None, *, offset: int = 0,
                limit: int | None = None) -> list[Any]:
        """Per-example records (of one cell), verified: :class:`DamagedCell` for a damaged
        record of ``key``; without ``key``, a cell with a damaged record is skipped and noted."""
        q = f"SELECT cell, idx, CAST(payload AS BLOB), {self.crc_column()} FROM records"
        args: list[Any] = []
        if key is not None:
            q += " WHERE cell=?"
            args.append(key)
        q += " ORDER BY cell, idx"
        if limit is not None:
            q += " LIMIT ? OFFSET ?"
            args += [limit, offset]

        def check(row: sqlite3.Row) -> Any:
            what = f"record #{row[1]}"
            return payloads.load_bytes(row[2], self.stored_crc(row[3], what), what)

        return self._verified_by_cell(self.conn.execute(q, args), check, key)

    def has_predictions_table(self) -> bool:
        """False for a schema-1 store opened read-only (written before predictions existed)."""
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                 "name='predictions'").fetchone() is not None

    def predictions(self, key: str | None = None, *, changed_only: bool = False
                    ) -> list[dict[str, Any]]:
        """Per-example predictions (cell, idx and :data:`PREDICTION_FIELDS`) in cell/idx order;
        ``changed_only`` keeps the examples whose prediction the perturbation changed. Each row
        is verified (its texts too): :class:`DamagedCell` for a damaged row of ``key``; without
        ``key``, a cell with a damaged row is skipped and noted."""
        if not self.has_predictions_table():
            return []
        q = f"SELECT cell, {', '.join(PREDICTION_FIELDS)}, {self.crc_column()} FROM predictions"
        where, args = [], []
        if key is not None:
            where.append("cell=?")
            args.append(key)
        if changed_only:
            where.append("pred_after IS NOT pred_before")
        if where:
            q += " WHERE " + " AND ".join(where)

        def check(row: sqlite3.Row) -> dict[str, Any]:
            value = dict(row)
            crc = value.pop("crc")
            payloads.check_prediction(value, self.stored_crc(crc, f"prediction #{row['idx']}"))
            return value

        return self._verified_by_cell(self.conn.execute(q + " ORDER BY cell, idx", args), check,
                                      key)

    def prediction_counts(self) -> dict[str, tuple[int, int]]:
        """cell -> (examples, examples whose prediction changed): CheckList's pass/fail counts."""
        if not self.has_predictions_table():
            return {}
        rows = self.conn.execute("SELECT cell, COUNT(*), SUM(pred_after IS NOT pred_before) "
                                 "FROM predictions GROUP BY cell")
        return {c: (n, int(f or 0)) for c, n, f in rows}

    def log(self, message: str, level: str = "info", cell: str | None = None) -> None:
        with self.transaction() as c:
            c.execute("INSERT INTO events (ts, level, message, cell) VALUES (?,?,?,?)",
                      (time.time(), level, message, cell))

    def events(self, limit: int = 50) -> list[dict[str, Any]]:
        """The last ``limit`` events, oldest first; a damaged one (a value not of its column's
        type) is shown as such instead of its values."""
        rows = self.conn.execute(
            "SELECT id, ts, level, message, cell FROM events ORDER BY id DESC LIMIT ?", (limit,))
        out = []
        for r in rows:
            try:
                payloads.check_columns(r, EVENT_COLUMNS, f"event #{r['id']}")
                out.append({k: r[k] for k in ("ts", "level", "message", "cell")})
            except payloads.Damaged as exc:
                out.append({"ts": 0.0, "level": "error", "cell": None,
                            "message": f"damaged in the store ({exc})"})
        return out[::-1]

