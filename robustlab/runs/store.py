"""The SQLite run store: one file (``store.sqlite``) per run directory.

Contract (what callers and the TUI may rely on):

* **One run per store.** The ``run`` table has one row: kind (``learnability``, ``attack``,
  ``bias``, ``cross-domain``, ...), configuration, status, command line, pid, versions.
* **Cells are keyed.** A study expands into a deterministic list of cell keys; a key is stored
  at most once (PRIMARY KEY). Resuming runs exactly the keys with no ``done`` row.
* **A cell's outputs are atomic.** Its result JSON, its per-example records and its ``done``
  status commit in one transaction, so a crash, Ctrl-C or ``kill -9`` loses at most the cells in
  flight and never leaves a half-written cell looking done. Done cells are immutable.
* **Concurrent writers are safe.** WAL journal, ``BEGIN IMMEDIATE`` write transactions and a
  busy timeout; :meth:`RunStore.claim` is an atomic compare-and-set, so two processes running the
  same study never compute the same cell twice at once.
* **Dead workers are detected.** Running cells carry a heartbeat; :meth:`RunStore.fail_stale`
  turns stale ones into ``failed`` ("stalled"), which a resume runs again.
* **Schema is versioned in the file** (``meta`` table). A store written by a newer schema is
  refused with a clear message. Schema 2 added the ``predictions`` table (per-example
  predictions before/after perturbation); a schema-1 store still opens: read-only it simply has
  no predictions, and a writer adds the table and records version 2. Schema 3 added a CRC-32
  column beside every payload (``run.crc``, ``cells.params_crc``/``result_crc``, ``records.crc``,
  ``predictions.crc``); older rows keep none (NULL), and a writer adds the columns in place.
* Readers (the TUI) open the store read-only and never block writers.
* **Damage is caught, not computed on.** Resuming (:meth:`RunStore.init_run` on an existing run)
  runs SQLite's ``PRAGMA quick_check`` first and refuses a damaged file with the way to recover
  (:meth:`RunStore.quick_check`, which the TUI also shows).
* **Every payload is verified when it is read** (:mod:`robustlab.runs.payloads`: its checksum,
  else UTF-8, JSON and type), because a damaged byte inside a row passes ``quick_check``. A
  reader skips a damaged cell and notes it in :attr:`RunStore.damaged` (key -> what failed) for
  the caller to name (:meth:`RunStore.skipped_line`); reading one cell's records or predictions
  raises :class:`DamagedCell`; a damaged run row raises :class:`StoreError` with the way to
  recover. Resuming (:meth:`RunStore.reset_damaged`, called by the executor) puts damaged done
  cells back to pending, so they are computed again.
* **Inputs are pinned.** ``init_run(inputs=…)`` stores each input's fingerprint on the first run
  and refuses a resume whose inputs differ, naming them and both fingerprints. The input files
  recorded under ``config["inputs"]`` (:mod:`robustlab.runs.inputs`) are compared by checksum,
  not as configuration: a resume from another path with the same bytes continues, one whose
  bytes changed is refused naming the file and both SHA-256s; roles a run never recorded (runs
  made before) are added to its record.
* **Wall time accumulates** over invocations (:meth:`RunStore.elapsed`): a resumed study's
  ``seconds`` counts every invocation, a killed one up to its last heartbeat.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import stat
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import RobustlabError
from robustlab.outputs import json_default, resolve_run_dir
from robustlab.procs import process_start
from robustlab.runs import payloads
from robustlab.runs.inputs import KEY as INPUTS_KEY
from robustlab.runs.inputs import changed as changed_inputs
from robustlab.runs.inputs import merged as merged_inputs
from robustlab.runs.inputs import split_config
from robustlab.textfmt import echo
from robustlab.version import __version__

SCHEMA_VERSION = 3
STORE_NAME = "store.sqlite"
CELL_STATES = ("pending", "running", "done", "failed")

_SCHEMA = """
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
_CRC_COLUMNS = (("run", "crc"), ("cells", "params_crc"), ("cells", "result_crc"),
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


#: (path, size, mtime_ns, wal size, wal mtime_ns) -> quick_check verdict (None = healthy)
_CHECKED: dict[tuple[Any, ...], str | None] = {}


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


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, default=json_default, allow_nan=True)


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class RunStore:
    """Read and write one run directory's ``store.sqlite`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str], *, readonly: bool = False) -> None:
        p = Path(path)
        self.path = p / STORE_NAME if p.is_dir() or p.suffix != ".sqlite" else p
        self.run_dir = self.path.parent
        if not readonly:  # a run directory that is a link: resolved once, said once
            self.run_dir = resolve_run_dir(self.run_dir)
            self.path = self.run_dir / self.path.name
        self.readonly = readonly
        if readonly and not self.path.exists():
            raise StoreError(f"no run store at {self.path} (not a robustlab run directory?)")
        self._conn: sqlite3.Connection | None = None
        self._sums: bool | None = None
        #: cell key -> what failed, for every damaged cell a read skipped (see skipped_line)
        self.damaged: dict[str, str] = {}

    # ---- connection ---------------------------------------------------------------------------
    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._connect()
        return self._conn

    def _check_files(self) -> None:
        """Refuse a store (or its ``-wal``/``-shm``/``-journal``) that is a symbolic link or
        not a regular file: SQLite follows links and would write its tables, or WAL frames, into
        whatever file the link names (another run's store, any file of the user's). Python's
        sqlite3 cannot pass ``SQLITE_OPEN_NOFOLLOW``, so this is checked here and once more
        after opening (:meth:`_check_opened`)."""
        for f in (self.path, *(Path(f"{self.path}{x}") for x in ("-wal", "-shm", "-journal"))):
            try:
                st = os.lstat(f)
            except FileNotFoundError:
                continue
            if stat.S_ISLNK(st.st_mode):
                raise StoreError(f"{f} is a symbolic link; robustlab does not open a run store "
                                 "through a link (it could name another run's store or any file)"
                                 "; remove the link and rerun")
            if not stat.S_ISREG(st.st_mode):
                raise StoreError(f"{f} is not a regular file; remove it and rerun")

    def _check_opened(self, conn: sqlite3.Connection) -> None:
        """The file SQLite opened (it reports the resolved name) is this run's own store, not one
        a link swapped in after :meth:`_check_files`; checked before anything is written."""
        row = conn.execute("PRAGMA database_list").fetchone()
        opened = row[2] if row else ""
        own = os.path.join(os.path.realpath(self.run_dir), self.path.name)
        if opened and opened != own:
            conn.close()
            raise StoreError(f"{self.path} opened as {opened}: a symbolic link; robustlab does "
                             "not open a run store through a link; remove it and rerun")

    def _connect(self) -> sqlite3.Connection:
        self._check_files()
        try:
            if self.readonly:
                conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
                self._check_opened(conn)
            else:
                self.run_dir.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(self.path, timeout=60, isolation_level=None)
                self._check_opened(conn)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.row_factory = sqlite3.Row
            conn.text_factory = payloads.lenient_text  # a damaged text is found, not fatal
            self._check_schema(conn)
        except sqlite3.DatabaseError as exc:
            hint = (f"; {recovery_hint(self.path)}" if "malformed" in str(exc) or
                    "not a database" in str(exc) else "")
            raise StoreError(f"{self.path} is not a readable robustlab store: {exc}{hint}"
                             ) from exc
        return conn

    def _check_schema(self, conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        if row is None:
            if self.readonly:
                raise StoreError(f"{self.path} has no robustlab schema (empty or foreign file)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('robustlab_version', ?)", (__version__,))
            return
        if int(row[0]) > SCHEMA_VERSION and not self.readonly:
            raise StoreError(
                f"{self.path} was written by a newer robustlab (schema {row[0]} > {SCHEMA_VERSION}); "
                "upgrade robustlab to write to it"
            )
        if int(row[0]) < SCHEMA_VERSION and not self.readonly:  # _SCHEMA added the new tables
            conn.execute("BEGIN IMMEDIATE")  # one writer migrates; a concurrent one then sees it
            try:
                for table, column in _CRC_COLUMNS:  # schema 3: checksum columns, NULL in old rows
                    if column not in _columns(conn, table):
                        conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} INTEGER")
                conn.execute("UPDATE meta SET value=? WHERE key='schema_version'",
                             (str(SCHEMA_VERSION),))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @property
    def sums(self) -> bool:
        """Whether this store has checksum columns (schema 3; an older store read-only has
        not, and its rows are verified by decoding and type only)."""
        if self._sums is None:
            self._sums = "crc" in _columns(self.conn, "records")
        return self._sums

    def crc_column(self, column: str = "crc") -> str:
        """``column`` in a SELECT list, or ``NULL AS column`` in a store without checksums."""
        return column if self.sums else f"NULL AS {column}"

    def _note(self, key: str, reason: str) -> None:
        self.damaged.setdefault(key, reason)

    def skipped_line(self) -> str | None:
        """One line naming the damaged cells reads of this store skipped (None if none)."""
        return payloads.summary_line(self.damaged, str(self.run_dir))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE): all or nothing."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        else:
            conn.execute("COMMIT")

    # ---- the run ------------------------------------------------------------------------------
    def init_run(self, kind: str, name: str, config: dict[str, Any], *, command: str | None = None,
                 versions: dict[str, Any] | None = None,
                 inputs: dict[str, tuple[str, str]] | None = None) -> RunInfo:
        """Create the run row, or check that an existing one has the same kind and config.

        Resuming an existing run first checks the file's integrity (``quick_check``), then that
        every ``inputs`` entry ``name: (fingerprint, what)`` has the fingerprint stored when the
        run started (``what`` names the files in the message); nothing is changed on refusal.
        """
        now = time.time()
        try:
            exists = self.conn.execute("SELECT 1 FROM run WHERE id=1").fetchone() is not None
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is damaged ({exc}); {recovery_hint(self.path)}"
                             ) from exc
        if exists:
            problem = self.quick_check(cache=False)
            if problem:
                raise StoreError(f"{self.path} is damaged (sqlite quick_check: {problem}); "
                                 f"{recovery_hint(self.path)}")
        with self.transaction() as c:
            row = c.execute("SELECT kind, config, versions, crc, heartbeat, updated FROM run "
                            "WHERE id=1").fetchone()
            if row is None:
                text, vtext = _dumps(config), _dumps(versions or {})
                c.execute(
                    "INSERT INTO run (id, kind, name, config, status, command, pid, host, created,"
                    " updated, heartbeat, versions, crc) VALUES (1,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (kind, name, text, "running", command, os.getpid(),
                     socket.gethostname(), now, now, now, vtext, payloads.checksum(text, vtext)),
                )
                self._check_inputs(c, inputs or {})
            else:
                old_config, _ = self._run_payloads(row)
                stored, stored_inputs = split_config(old_config)
                new, new_inputs = split_config(json.loads(_dumps(config)))
                if row["kind"] != kind or stored != new:
                    raise StoreError(
                        f"{self.run_dir} already holds a different {row['kind']} run"
                        f"{_config_diff(stored, new)}; resume it with the "
                        "same options or choose another --out directory"
                    )
                # the content fingerprints first: their message names the data options
                self._check_inputs(c, inputs or {})
                diffs = changed_inputs(stored_inputs, new_inputs)
                if diffs:
                    raise StoreError(
                        f"input changed since this run started: {'; '.join(diffs)}. The "
                        "finished cells were computed on the old input: restore it, or start "
                        "a new run with another --out")
                keep = merged_inputs(stored_inputs, new_inputs)
                if keep != stored_inputs:  # roles recorded for the first time (older runs)
                    text = _dumps({**old_config, INPUTS_KEY: keep})
                    c.execute("UPDATE run SET config=?, crc=? WHERE id=1",
                              (text, payloads.checksum(text, row["versions"])))
            if row is not None:
                self._close_invocation(c, row["heartbeat"] or row["updated"])
                c.execute(
                    "UPDATE run SET status='running', pid=?, host=?, updated=?, heartbeat=?,"
                    " error=NULL, command=COALESCE(?, command) WHERE id=1",
                    (os.getpid(), socket.gethostname(), now, now, command),
                )
            _set_meta(c, "worker_start", process_start(os.getpid()) or "")
            _set_meta(c, "invocation_start", repr(now))
        return self.run_info()  # type: ignore[return-value]

    def _check_inputs(self, c: sqlite3.Connection, inputs: dict[str, tuple[str, str]]) -> None:
        for name, (fp, what) in inputs.items():
            old = _get_meta(c, f"input:{name}")
            if old is None:  # a run started before inputs were pinned: its cells name it
                cell = c.execute("SELECT params FROM cells LIMIT 1").fetchone()
                try:
                    old = payloads.load(cell[0], None, "params").get(f"{name}_fingerprint")
                except (TypeError, payloads.Damaged):  # no cell, or its params are damaged
                    old = None
            if old and old != fp:
                raise StoreError(
                    f"{what} changed since this run started ({name} fingerprint {old} stored in "
                    f"{self.path}, {fp} now): the finished cells were computed on other data. "
                    "Restore the original file(s), or start a new run with another --out")
            _set_meta(c, f"input:{name}", fp)

    def _close_invocation(self, c: sqlite3.Connection, end: float | None) -> None:
        """Add the last invocation's wall time (up to ``end``) to the run's total."""
        start = _get_meta(c, "invocation_start")
        if start is not None and end is not None:
            total = float(_get_meta(c, "seconds") or 0) + max(0.0, float(end) - float(start))
            _set_meta(c, "seconds", repr(total))
        c.execute("DELETE FROM meta WHERE key='invocation_start'")

    def elapsed(self) -> float:
        """Wall seconds of every invocation of this run so far, this one included."""
        c = self.conn
        total = float(_get_meta(c, "seconds") or 0)
        start = _get_meta(c, "invocation_start")
        return total + (max(0.0, time.time() - float(start)) if start is not None else 0.0)

    def worker_start(self) -> str | None:
        """The start token (:func:`robustlab.procs.process_start`) of the run's process."""
        return _get_meta(self.conn, "worker_start") or None

    def meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (None if absent)."""
        return _get_meta(self.conn, key)

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as c:
            _set_meta(c, key, value)

    def replace_config(self, config: dict[str, Any]) -> None:
        """Store ``config`` as the run's configuration: only for a run made by an earlier
        version whose configuration means the same study in an older spelling
        (:mod:`robustlab.studies.stored`), so a resume compares like with like."""
        text = _dumps(config)
        with self.transaction() as c:
            if "crc" in _columns(c, "run"):  # schema 3: the checksum covers the new text
                versions = c.execute("SELECT versions FROM run WHERE id=1").fetchone()[0]
                c.execute("UPDATE run SET config=?, crc=? WHERE id=1",
                          (text, payloads.checksum(text, versions)))
            else:
                c.execute("UPDATE run SET config=? WHERE id=1", (text,))

    def _run_payloads(self, row: sqlite3.Row) -> tuple[dict[str, Any], dict[str, Any]]:
        """The run row's configuration and versions, verified; a damaged row is a StoreError
        naming the file and how to recover (nothing of the run can be trusted without it)."""
        crc = row["crc"] if "crc" in row.keys() else None
        try:
            if crc is not None and payloads.checksum(row["config"], row["versions"]) != crc:
                raise payloads.Damaged("the run's configuration or versions fail their checksum")
            config = payloads.load(row["config"], None, "the run's configuration")
            versions = (payloads.load(row["versions"], None, "the run's versions")
                        if row["versions"] is not None else {})
        except payloads.Damaged as exc:
            raise StoreError(f"{self.path} is damaged ({exc}); {recovery_hint(self.path)}"
                             ) from None
        return config, versions

    def run_info(self) -> RunInfo | None:
        row = self.conn.execute("SELECT * FROM run WHERE id=1").fetchone()
        if row is None:
            return None
        config, versions = self._run_payloads(row)
        return RunInfo(
            kind=row["kind"], name=row["name"], config=config,
            status=row["status"], command=row["command"], pid=row["pid"], host=row["host"],
            created=row["created"], updated=row["updated"], heartbeat=row["heartbeat"],
            error=row["error"], versions=versions,
        )

    def set_run_status(self, status: str, error: str | None = None) -> None:
        """Set the run's status; a final one (not ``running``) ends this invocation's clock."""
        now = time.time()
        with self.transaction() as c:
            c.execute("UPDATE run SET status=?, error=?, updated=?, heartbeat=? WHERE id=1",
                      (status, error, now, now))
            if status != "running":
                self._close_invocation(c, now)

    def run_heartbeat(self) -> None:
        with self.transaction() as c:
            c.execute("UPDATE run SET heartbeat=? WHERE id=1", (time.time(),))

    # ---- cells --------------------------------------------------------------------------------
    def add_cells(self, cells: Sequence[Cell]) -> int:
        """Register cells (idempotent: a done cell is left as it is; a cell not done takes the
        parameters the study gives it now, which is what runs, so damaged stored ones are
        replaced). Returns the number of new keys."""
        with self.transaction() as c:
            base = c.execute("SELECT COALESCE(MAX(seq), -1) + 1 FROM cells").fetchone()[0]
            before = c.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
            rows = []
            for i, cell in enumerate(cells):
                text = _dumps(cell.params)
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
            texts = [_dumps(r) for r in records]
            c.executemany("INSERT INTO records (cell, idx, payload, crc) VALUES (?,?,?,?)",
                          [(key, i, t, payloads.checksum(t)) for i, t in enumerate(texts)])
            c.execute("DELETE FROM predictions WHERE cell=?", (key,))
            c.executemany(
                f"INSERT INTO predictions (cell, {', '.join(PREDICTION_FIELDS)}, crc) VALUES "
                f"(?{',?' * (len(PREDICTION_FIELDS) + 1)})",
                [(key, *(p.get(f) for f in PREDICTION_FIELDS), payloads.prediction_checksum(p))
                 for p in predictions])
            text = _dumps(result)
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

    def fail_stale(self, timeout: float) -> list[str]:
        """Running cells whose heartbeat is older than ``timeout`` seconds become failed."""
        cutoff = time.time() - timeout
        with self.transaction() as c:
            keys = [r[0] for r in c.execute(
                "SELECT key FROM cells WHERE status='running' AND COALESCE(heartbeat, 0) < ?",
                (cutoff,))]
            c.executemany("UPDATE cells SET status='failed', error=? WHERE key=?",
                          [(f"stalled: no heartbeat for {timeout:.0f}s (worker died?)", k)
                           for k in keys])
        return keys

    # ---- reading ------------------------------------------------------------------------------
    def _cell(self, row: sqlite3.Row) -> Cell | None:
        """The cell of a row, its payloads verified; None (noted in :attr:`damaged`) if one is
        damaged. A done cell without a result is damaged too: finishing always stores one."""
        keys = row.keys()
        try:
            params = payloads.load(row["params"], row["params_crc"] if "params_crc" in keys
                                   else None, "params")
            result = None
            if row["result"] is not None or row["status"] == "done":
                result = payloads.load(row["result"], row["result_crc"] if "result_crc" in keys
                                       else None, "result")
        except payloads.Damaged as exc:
            self._note(row["key"], str(exc))
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
        out = dict.fromkeys(CELL_STATES, 0)
        for status, n in self.conn.execute("SELECT status, COUNT(*) FROM cells GROUP BY status"):
            out[status] = n
        return out

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
            return payloads.load_bytes(row[2], row[3], f"record #{row[1]}")

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
            payloads.check_prediction(value, value.pop("crc"))
            return value

        return self._verified_by_cell(self.conn.execute(q + " ORDER BY cell, idx", args), check,
                                      key)

    def damaged_done(self) -> dict[str, str]:
        """Every done cell whose params, result, records or predictions do not verify (key ->
        what failed): one pass over the stored payloads (checksums; JSON decoding only for rows
        written before schema 3)."""
        found: dict[str, str] = {}
        for row in self.conn.execute("SELECT * FROM cells WHERE status='done'"):
            if self._cell(row) is None:
                found[row["key"]] = self.damaged[row["key"]]
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
            data, crc = row[2], row[3]
            if crc is None or not isinstance(data, bytes) or zlib.crc32(
                    b"\x00", zlib.crc32(data)) != crc:  # the checksum is enough when it matches
                payloads.load_bytes(data, crc, f"record #{row[1]}")

        scan(self.conn.execute(f"SELECT cell, idx, CAST(payload AS BLOB), {self.crc_column()} "
                               "FROM records"), record)
        if self.has_predictions_table():
            scan(self.conn.execute(f"SELECT cell, {', '.join(PREDICTION_FIELDS)}, {self.crc_column()} "
                                   "FROM predictions"),
                 lambda r: payloads.check_prediction(dict(r), r["crc"]))
        return found

    def reset_damaged(self) -> dict[str, str]:
        """Put every damaged done cell back to pending, dropping its records and predictions, so
        that a resume computes it again (key -> what failed). One write transaction."""
        found = self.damaged_done()
        if not found:
            return {}
        with self.transaction() as c:
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
        rows = self.conn.execute(
            "SELECT ts, level, message, cell FROM events ORDER BY id DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows][::-1]

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


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def _stat(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


def _get_meta(c: sqlite3.Connection, key: str) -> str | None:
    row = c.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
    return None if row is None else row[0]


def _set_meta(c: sqlite3.Connection, key: str, value: str) -> None:
    c.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))


def _config_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
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


def print_failed_cells(out: str | os.PathLike[str], keys: list[str], header: str,
                       more: str = "", shown: int = 5) -> None:
    """``header``, then the first ``shown`` failed cells with the last line of each error (the
    full traceback stays in the store), so a failure on the command line is never only a count."""
    import sys

    echo(header, file=sys.stderr)
    with RunStore(out, readonly=True) as store:
        for key in keys[:shown]:
            cell = store.cell(key)
            last = (cell.error or cell.status).strip().splitlines()[-1] if cell else "?"
            echo(f"  {key}: {last}", file=sys.stderr)
    if len(keys) > shown:
        echo(f"  … and {len(keys) - shown} more{more}", file=sys.stderr)
