"""The run store's schema and plain values: tables, cell states, errors, the cell and run
records, and the small SQL helpers every part of :class:`robustlab.runs.store.RunStore` shares."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import RobustlabError
from robustlab.outputs import json_default
from robustlab.runs import payloads
from robustlab.version import __version__

SCHEMA_VERSION = 3
STORE_NAME = "store.sqlite"
CELL_STATES = ("pending", "running", "done", "failed")

#: the type of each column a reader uses (:func:`robustlab.runs.payloads.check_columns`): a
#: value of another type is damage, named, never computed on
CELL_COLUMNS = {"key": "text", "seq": "int", "kind": "text", "status": "text", "error": "text?",
                "signature": "text?", "worker": "text?", "attempts": "count",
                "started": "time?", "finished": "time?", "seconds": "seconds?",
                "heartbeat": "time?", "params_crc": "int?", "result_crc": "int?"}
RUN_COLUMNS = {"kind": "text", "name": "text", "status": "text", "command": "text?",
               "pid": "int?", "host": "text?", "created": "time", "updated": "time",
               "heartbeat": "time?", "error": "text?", "crc": "int?"}
EVENT_COLUMNS = {"ts": "time", "level": "text", "message": "text", "cell": "text?"}

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS run (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    status TEXT NOT NULL,
    command TEXT,
    pid INTEGER,
    host TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    heartbeat REAL,
    error TEXT,
    versions TEXT,
    crc INTEGER
);
CREATE TABLE IF NOT EXISTS cells (
    key TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    error TEXT,
    signature TEXT,
    worker TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    started REAL,
    finished REAL,
    seconds REAL,
    heartbeat REAL,
    params_crc INTEGER,
    result_crc INTEGER
);
CREATE INDEX IF NOT EXISTS cells_status ON cells(status);
CREATE TABLE IF NOT EXISTS records (
    cell TEXT NOT NULL,
    idx INTEGER NOT NULL,
    payload TEXT NOT NULL,
    crc INTEGER,
    PRIMARY KEY (cell, idx)
);
CREATE TABLE IF NOT EXISTS predictions (
    cell TEXT NOT NULL,
    idx INTEGER NOT NULL,
    original TEXT,
    perturbed TEXT,
    label,
    pred_before,
    prob_before REAL,
    pred_after,
    prob_after REAL,
    crc INTEGER,
    PRIMARY KEY (cell, idx)
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    cell TEXT
);
"""

#: the checksum columns schema 3 added to the tables of schema 2: (table, column)
CRC_COLUMNS = (("run", "crc"), ("cells", "params_crc"), ("cells", "result_crc"),
                ("records", "crc"), ("predictions", "crc"))


#: the columns of one stored prediction (besides its cell): the test example's index, its text
#: before and after the perturbation, its label, and the model's prediction and probability of
#: the true label before and after
PREDICTION_FIELDS = ("idx", "original", "perturbed", "label", "pred_before", "prob_before",
                     "pred_after", "prob_after")


class StoreError(RobustlabError):
    """The store is missing, corrupt, or from a newer robustlab."""


class DamagedCell(StoreError):
    """One cell's stored payload (result, params, records, predictions) does not verify."""

    def __init__(self, path: Path, key: str, reason: str) -> None:
        super().__init__(f"{path}: cell {key}: {reason} (the stored data is damaged); rerun the "
                         "study's command to recompute it")
        self.key, self.reason = key, reason


def recovery_hint(path: Path) -> str:
    """How to get going again from a damaged store (one line, for error messages)."""
    return (f"its results cannot be trusted as they are. To recover: move it aside "
            f"(mv {path} {path}.damaged) and rerun the same command, which recomputes every cell; "
            f"`sqlite3 {path}.damaged .recover` may salvage finished cells by hand")



@dataclass
class Cell:
    """One unit of work: a key unique within the run, a kind and JSON-able parameters."""

    key: str
    kind: str
    params: dict[str, Any]
    status: str = "pending"
    result: dict[str, Any] | None = None
    error: str | None = None
    signature: str | None = None
    seconds: float | None = None
    started: float | None = None
    finished: float | None = None
    attempts: int = 0
    worker: str | None = None
    heartbeat: float | None = None


@dataclass
class RunInfo:
    kind: str
    name: str
    config: dict[str, Any]
    status: str
    command: str | None
    pid: int | None
    host: str | None
    created: float
    updated: float
    heartbeat: float | None
    error: str | None
    versions: dict[str, Any] = field(default_factory=dict)


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=json_default, allow_nan=True)


def cell_name(row: sqlite3.Row) -> str:
    """A cell row's key, or ``#SEQ`` when the key itself is damaged (not text)."""
    key = row["key"]
    return key if isinstance(key, str) else f"#{row['seq']!r}"[:40]


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}



def read_meta(c: sqlite3.Connection, key: str) -> str | None:
    row = c.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else row[0]


def write_meta(c: sqlite3.Connection, key: str, value: str) -> None:
    c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def config_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """`` (differs in: a stored X, now Y; …)`` for the first few differing options."""
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if not keys:
        return ""
    parts = [f"{k} stored {json.dumps(old.get(k))[:80]}, now {json.dumps(new.get(k))[:80]}"
             for k in keys[:3]]
    return " (differs in: " + "; ".join(parts) + (" …" if len(keys) > 3 else "") + ")"


def is_run_dir(path: str | os.PathLike[str]) -> bool:
    return (Path(path) / STORE_NAME).exists()


def run_files(path: str | os.PathLike[str]) -> list[Path]:
    """The files of a run directory that readers rely on (the store and its WAL/shared memory,
    ``summary.json``, ``results.jsonl``, the worker's record and log), those that exist: what
    an output of ``report``/``failures``/``correlate`` must never be (``--out RUN/store.sqlite``
    would replace the store)."""
    d = Path(path)
    names = (STORE_NAME, f"{STORE_NAME}-wal", f"{STORE_NAME}-shm", f"{STORE_NAME}-journal",
             "summary.json", "results.jsonl", "worker.json", "worker.log")
    return [d / n for n in names if (d / n).exists()]


def check_schema(conn: sqlite3.Connection, path: Path, readonly: bool) -> None:
    """Record the schema version in a new store; refuse one from a newer robustlab (for
    writing); migrate an older one in place (schema 3's checksum columns) when writing."""
    row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    if row is None:
        if readonly:
            raise StoreError(f"{path} has no robustlab schema (empty or foreign file)")
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                     (str(SCHEMA_VERSION),))
        conn.execute("INSERT OR IGNORE INTO meta VALUES ('robustlab_version', ?)", (__version__,))
        return
    version = row[0]
    if not (isinstance(version, str) and version.isascii() and version.isdigit()
            and 1 <= int(version) < 1000):
        raise StoreError(f"{path} is damaged (its schema_version is {str(version)[:20]!r}, not "
                         f"a version number); {recovery_hint(path)}")
    if int(version) > SCHEMA_VERSION and not readonly:
        raise StoreError(
            f"{path} was written by a newer robustlab (schema {version} > {SCHEMA_VERSION}); "
            "upgrade robustlab to write to it"
        )
    if int(version) < SCHEMA_VERSION and not readonly:  # SCHEMA added the new tables
        conn.execute("BEGIN IMMEDIATE")  # one writer migrates; a concurrent one then sees it
        try:
            for table, column in CRC_COLUMNS:  # schema 3: checksum columns
                if column not in columns(conn, table):
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER")
            add_checksums(conn)
            conn.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                         (str(SCHEMA_VERSION),))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")


def add_checksums(conn: sqlite3.Connection) -> None:
    """Give every row of a store written before schema 3 the checksum of what it holds, when
    it verifies by decoding and type (as such rows were read before): from then on a row
    without a checksum is damage. A row that does not verify keeps none, so it is found."""
    for rowid, config, versions in conn.execute(
            "SELECT rowid, config, versions FROM run WHERE crc IS NULL").fetchall():
        if _verifies(payloads.load, config, None, "config") and (
                versions is None or _verifies(payloads.load, versions, None, "versions")):
            conn.execute("UPDATE run SET crc=? WHERE rowid=?",
                         (payloads.checksum(config, versions), rowid))
    for rowid, params, result in conn.execute(
            "SELECT rowid, params, result FROM cells WHERE params_crc IS NULL OR "
            "(result IS NOT NULL AND result_crc IS NULL)").fetchall():
        if _verifies(payloads.load, params, None, "params"):
            conn.execute("UPDATE cells SET params_crc=? WHERE rowid=?",
                         (payloads.checksum(params), rowid))
        if result is not None and _verifies(payloads.load, result, None, "result"):
            conn.execute("UPDATE cells SET result_crc=? WHERE rowid=?",
                         (payloads.checksum(result), rowid))
    for rowid, data in conn.execute("SELECT rowid, CAST(payload AS BLOB) FROM records WHERE "
                                    "crc IS NULL").fetchall():
        if _verifies(payloads.load_bytes, data, None, "record"):
            conn.execute("UPDATE records SET crc=? WHERE rowid=?",
                         (zlib.crc32(b"\x00", zlib.crc32(data)), rowid))
    rows = conn.execute(f"SELECT rowid, idx, {', '.join(PREDICTION_FIELDS[1:])} FROM predictions "
                        "WHERE crc IS NULL").fetchall()
    for rowid, *values in rows:
        row = dict(zip(PREDICTION_FIELDS, values, strict=True))
        if _verifies(payloads.check_prediction, row, None):
            conn.execute("UPDATE predictions SET crc=? WHERE rowid=?",
                         (payloads.prediction_checksum(row), rowid))


def _verifies(check: Any, *args: Any) -> bool:
    try:
        check(*args)
    except payloads.Damaged:
        return False
    return True
