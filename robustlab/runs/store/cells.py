"""The cells of a run store: registering them, claiming one (an atomic compare-and-set),
heartbeats, finishing one in a transaction with its records and predictions, failing and
releasing; and reading them back verified."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store.base import StoreBase
from robustlab.runs.store.schema import (
    CELL_COLUMNS,
    CELL_STATES,
    PREDICTION_FIELDS,
    Cell,
    StoreError,
    cell_name,
    dumps,
    worker_id,
)


class CellOps(StoreBase):
    """Writing and reading the ``cells`` table of a :class:`RunStore`."""

    def add_cells(self, cells: Sequence[Cell]) -> int:
        """Register cells (idempotent: a done cell is left as it is; a cell not done takes the
        parameters the study gives it now, which is what runs, so damaged stored ones are
        replaced). Returns the number of new keys."""
        with self.transaction() as c:
            base = c.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM cells").fetchone()[0]
            before = c.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
            rows = []
            for i, cell in enumerate(cells):
                text = dumps(cell.params)
                rows.append((cell.key, base + i, cell.kind, text, "pending",
                             payloads.checksum(text)))
            c.executemany(
                "INSERT INTO cells (key, seq, kind, params, status, params_crc) VALUES "
                "(?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET params=excluded.params, "
                "params_crc=excluded.params_crc WHERE cells.status != 'done' AND "
                "(cells.params IS NOT excluded.params OR cells.params_crc IS NOT "
                "excluded.params_crc)", rows)
            return c.execute("SELECT COUNT(*) FROM cells").fetchone()[0] - before

    def claim(self, key: str, worker: str | None = None) -> bool:
        """Atomically mark a pending/failed cell running for ``worker``; False if someone has it."""
        now = time.time()
        with self.transaction() as c:
            cur = c.execute(
                "UPDATE cells SET status='running', worker=?, started=?, heartbeat=?,"
                " attempts=attempts+1, error=NULL WHERE key=? AND status IN ('pending','failed')",
                (worker or worker_id(), now, now, key),
            )
            return cur.rowcount == 1

    def heartbeat(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        if not keys:
            return
        now = time.time()
        with self.transaction() as c:
            c.executemany("UPDATE cells SET heartbeat=? WHERE key=? AND status='running'",
                          [(now, k) for k in keys])
            c.execute("UPDATE run SET heartbeat=? WHERE id=1", (now,))

    def finish(self, key: str, result: dict[str, Any], *, records: Sequence[Any] = (),
               signature: str | None = None, seconds: float | None = None,
               predictions: Sequence[dict[str, Any]] = ()) -> None:
        """Store a cell's result, its per-example records and predictions (see
        :data:`PREDICTION_FIELDS`) and ``done`` in one transaction."""
        now = time.time()
        with self.transaction() as c:
            status = c.execute("SELECT status FROM cells WHERE key=?", (key,)).fetchone()
            if status is None:
                raise StoreError(f"unknown cell {key!r}")
            if status[0] == "done":
                return  # done cells are immutable; a duplicate finisher is ignored
            c.execute("DELETE FROM records WHERE cell=?", (key,))
            texts = [dumps(r) for r in records]
            c.executemany("INSERT INTO records (cell, idx, payload, crc) VALUES (?,?,?,?)",
                          [(key, i, t, payloads.checksum(t)) for i, t in enumerate(texts)])
            c.execute("DELETE FROM predictions WHERE cell=?", (key,))
            c.executemany(
                f"INSERT INTO predictions (cell, {', '.join(PREDICTION_FIELDS)}, crc) VALUES "
                f"(?{',?' * (len(PREDICTION_FIELDS) + 1)})",
                [(key, *(p.get(f) for f in PREDICTION_FIELDS), payloads.prediction_checksum(p))
                 for p in predictions])
            text = dumps(result)
            c.execute(
                "UPDATE cells SET status='done', result=?, result_crc=?, signature=?, seconds=?,"
                " finished=?, error=NULL, heartbeat=? WHERE key=?",
                (text, payloads.checksum(text), signature, seconds, now, now, key),
            )

    def fail(self, key: str, error: str) -> None:
        with self.transaction() as c:
            c.execute(
                "UPDATE cells SET status='failed', error=?, finished=? WHERE key=? AND status!='done'",
                (error, time.time(), key),
            )
            c.execute("INSERT INTO events (ts, level, message, cell) VALUES (?,?,?,?)",
                      (time.time(), "error", error.strip().splitlines()[-1][:500], key))

    def release(self, keys: Iterable[str]) -> None:
        """Put running cells back to pending (Ctrl-C: they were never finished)."""
        with self.transaction() as c:
            c.executemany("UPDATE cells SET status='pending', worker=NULL WHERE key=? AND "
                          "status='running'", [(k,) for k in keys])

    def _cell(self, row: sqlite3.Row) -> Cell | None:
        """The cell of a row, its payloads verified; None (noted in :attr:`damaged`) if one is
        damaged. A done cell without a result is damaged too: finishing always stores one."""
        keys = row.keys()
        try:
            payloads.check_columns(row, CELL_COLUMNS, "the cell")
            if row["status"] not in CELL_STATES:
                raise payloads.Damaged(f"status {row['status'][:20]!r} is not a cell state")
            params = payloads.load(row["params"], self.stored_crc(
                row["params_crc"], "params") if "params_crc" in keys else None, "params")
            result = None
            if row["result"] is not None or row["status"] == "done":
                result = payloads.load(row["result"], self.stored_crc(
                    row["result_crc"], "result") if "result_crc" in keys else None, "result")
                if row["status"] == "done":
                    payloads.check_result(row["kind"], result)
        except payloads.Damaged as exc:
            self._note(cell_name(row), str(exc))
            return None
        return Cell(
            key=row["key"], kind=row["kind"], params=params,
            status=row["status"], result=result,
            error=row["error"], signature=row["signature"], seconds=row["seconds"],
            started=row["started"], finished=row["finished"], attempts=row["attempts"],
            worker=row["worker"], heartbeat=row["heartbeat"],
        )

    def cells(self, status: str | None = None) -> list[Cell]:
        """The cells (of one status) in study order; damaged ones are skipped and noted."""
        q = "SELECT * FROM cells" + (" WHERE status=?" if status else "") + " ORDER BY seq"
        rows = self.conn.execute(q, (status,) if status else ())
        return [c for c in map(self._cell, rows) if c is not None]

    def cell(self, key: str) -> Cell | None:
        """One cell, or None when there is none or it is damaged (then noted)."""
        row = self.conn.execute("SELECT * FROM cells WHERE key=?", (key,)).fetchone()
        return self._cell(row) if row else None

    def done_results(self, limit: int | None = None) -> list[tuple[str, dict[str, Any]]]:
        """(key, result) of done cells in study order: the cheap read for result viewers
        (damaged ones skipped and noted)."""
        q = "SELECT * FROM cells WHERE status='done' ORDER BY seq"
        rows = self.conn.execute(q + (" LIMIT ?" if limit is not None else ""),
                                 (limit,) if limit is not None else ())
        return [(c.key, c.result) for c in map(self._cell, rows)
                if c is not None and c.result is not None]

    def done_keys(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT key FROM cells WHERE status='done'")}

    def counts(self) -> dict[str, int]:
        """Cells by state; a cell in no known state counts as ``failed`` (a resume runs it
        again, see :meth:`Recovery.reset_damaged`)."""
        out = dict.fromkeys(CELL_STATES, 0)
        for status, n in self.conn.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"):
            out[status if status in CELL_STATES else "failed"] += n
        return out

