"""Recovery: stalled cells of dead workers, damaged done cells found and put back to pending,
and SQLite's own integrity checks (cached per file state)."""

from __future__ import annotations

import sqlite3
import time
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store.base import StoreBase
from robustlab.runs.store.schema import PREDICTION_FIELDS, cell_name

#: (path, size, mtime_ns, wal size, wal mtime_ns) -> quick_check verdict (None = healthy)
_CHECKED: dict[tuple[Any, ...], str | None] = {}



class Recovery(StoreBase):
    """Finding and undoing what crashes and damage left in a :class:`RunStore`."""

    def fail_stale(self, timeout: float) -> list[str]:
        """Running cells whose heartbeat is older than ``timeout`` seconds become failed."""
        cutoff = time.time() - timeout
        with self.transaction() as c:
            keys = [r[0] for r in c.execute(
                "SELECT key FROM cells WHERE status='running' AND (COALESCE(heartbeat, 0) < ? "
                "OR typeof(heartbeat) NOT IN ('integer', 'real', 'null'))",  # damaged: stale
                (cutoff,))]
            c.executemany("UPDATE cells SET status='failed', error=? WHERE key=?",
                          [(f"stalled: no heartbeat for {timeout:.0f}s (worker died?)", k)
                           for k in keys])
        return keys

    def damaged_done(self) -> dict[str, str]:
        """Every done cell whose params, result, records or predictions do not verify (key ->
        what failed): one pass over the stored payloads (checksums; JSON decoding only for rows
        written before schema 3)."""
        found: dict[str, str] = {}
        for row in self.conn.execute("SELECT * FROM cells WHERE status='done'"):
            if self._cell(row) is None:
                found[cell_name(row)] = self.damaged[cell_name(row)]
        done = self.done_keys()

        def scan(rows: Iterable[sqlite3.Row], check: Any) -> None:
            for row in rows:
                if row["cell"] in found or row["cell"] not in done:
                    continue
                try:
                    check(row)
                except payloads.Damaged as exc:
                    found[row["cell"]] = str(exc)
                    self._note(row["cell"], str(exc))

        def record(row: sqlite3.Row) -> None:
            data, crc = row[2], self.stored_crc(row[3], f"record #{row[1]}")
            if crc is None or not isinstance(data, bytes) or zlib.crc32(
                    b"\x00", zlib.crc32(data)) != crc:  # the checksum is enough when it matches
                payloads.load_bytes(data, crc, f"record #{row[1]}")

        scan(self.conn.execute(f"SELECT cell, idx, CAST(payload AS BLOB), {self.crc_column()} "
                               "FROM records"), record)
        if self.has_predictions_table():
            scan(self.conn.execute(f"SELECT cell, {', '.join(PREDICTION_FIELDS)}, {self.crc_column()} "
                                   "FROM predictions"),
                 lambda r: payloads.check_prediction(
                     dict(r), self.stored_crc(r["crc"], f"prediction #{r['idx']}")))
        return found

    def reset_damaged(self) -> dict[str, str]:
        """Put every damaged done cell back to pending, dropping its records and predictions, so
        that a resume computes it again (key -> what failed). One write transaction."""
        found = self.damaged_done()
        lost = self.conn.execute("SELECT key FROM cells WHERE status NOT IN "
                                 "('pending','running','done','failed') OR status IS NULL "
                                 "OR typeof(key) != 'text'").fetchone()
        if not found and lost is None:
            return {}
        with self.transaction() as c:
            # a cell in no known state (damage) is never claimed: it becomes pending, and one
            # whose key is not text cannot be matched to the study's cells, so it goes
            c.execute("DELETE FROM cells WHERE typeof(key) != 'text'")
            c.execute("UPDATE cells SET status='pending', worker=NULL, error='damaged in the "
                      "store (no known state); computed again' WHERE status NOT IN "
                      "('pending','running','done','failed') OR status IS NULL")
            for key in found:
                c.execute("DELETE FROM records WHERE cell=?", (key,))
                c.execute("DELETE FROM predictions WHERE cell=?", (key,))
                c.execute("UPDATE cells SET status='pending', result=NULL, result_crc=NULL, "
                          "signature=NULL, worker=NULL, error=? WHERE key=? AND status='done'",
                          (f"damaged in the store ({found[key]}); computed again", key))
                c.execute("INSERT INTO events (ts, level, message, cell) VALUES (?,?,?,?)",
                          (time.time(), "warning", f"damaged stored data ({found[key]}): "
                           "computing the cell again", key))
        for key in found:  # no longer skipped: pending, and computed by this resume
            self.damaged.pop(key, None)
        return found

    def quick_check(self, cache: bool = True) -> str | None:
        """None if SQLite's ``PRAGMA quick_check`` passes, else its first complaint.

        Reads every page (linear in the file size), so results are cached per file state
        (size and mtime of the database and its WAL) unless ``cache=False``.
        """
        key = None
        if cache:
            key = (str(self.path), *_stat(self.path), *_stat(Path(f"{self.path}-wal")))
            if key in _CHECKED:
                return _CHECKED[key]
        try:
            rows = [r[0] for r in self.conn.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            rows = [str(exc)]
        verdict = None if rows == ["ok"] else "; ".join(rows)
        if key is not None:
            if len(_CHECKED) > 256:
                _CHECKED.clear()
            _CHECKED[key] = verdict
        return verdict

    def check(self) -> list[str]:
        """Integrity problems (an empty list means healthy): duplicate work, bad states."""
        problems = []
        ok = self.conn.execute("PRAGMA integrity_check").fetchone()[0]
        if ok != "ok":
            problems.append(f"sqlite integrity: {ok}")
        bad = self.conn.execute(
            "SELECT COUNT(*) FROM cells WHERE status NOT IN ('pending','running','done','failed')"
        ).fetchone()[0]
        if bad:
            problems.append(f"{bad} cells in an unknown state")
        orphan = self.conn.execute(
            "SELECT COUNT(*) FROM records WHERE cell NOT IN (SELECT key FROM cells WHERE "
            "status='done')").fetchone()[0]
        if orphan:
            problems.append(f"{orphan} records of unfinished cells")
        return problems


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


