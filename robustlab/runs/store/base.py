"""The connection of a run store: opening it safely (no links, regular files only, the file
SQLite really opened), the schema check, write transactions and the damaged-cell notes."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from robustlab.outputs import resolve_run_dir
from robustlab.runs import payloads
from robustlab.runs.store.schema import (
    SCHEMA,
    STORE_NAME,
    StoreError,
    check_schema,
    columns,
    recovery_hint,
)


class StoreBase:
    """The connection and transactions every part of :class:`RunStore` works through."""

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
        #: ``meta`` keys found damaged (each said once)
        self.damaged_meta: set[str] = set()

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
                conn.executescript(SCHEMA)
            conn.execute("PRAGMA busy_timeout=60000")
            conn.row_factory = sqlite3.Row
            conn.text_factory = payloads.lenient_text  # a damaged text is found, not fatal
            check_schema(conn, self.path, self.readonly)
        except sqlite3.DatabaseError as exc:
            hint = (f"; {recovery_hint(self.path)}" if "malformed" in str(exc) or
                    "not a database" in str(exc) else "")
            raise StoreError(f"{self.path} is not a readable robustlab store: {exc}{hint}"
                             ) from exc
        return conn


    @property
    def sums(self) -> bool:
        """Whether this store has checksum columns (schema 3; an older store read-only has
        not, and its rows are verified by decoding and type only)."""
        if self._sums is None:
            self._sums = "crc" in columns(self.conn, "records")
        return self._sums

    def crc_column(self, column: str = "crc") -> str:
        """``column`` in a SELECT list, or ``NULL AS column`` in a store without checksums."""
        return column if self.sums else f"NULL AS {column}"

    def stored_crc(self, crc: object, what: str) -> int | None:
        """The checksum a row carries, verified as one: None in a store without checksum
        columns (read by decoding and type); in one with them, a missing or non-integer
        checksum is damage (a writer gives every row one, and rows of an older store get
        theirs when it is migrated), so a payload cannot skip its check by losing it."""
        if not self.sums:
            return None
        if crc is None:
            raise payloads.Damaged(f"{what} has no checksum")
        if not isinstance(crc, int) or isinstance(crc, bool):
            raise payloads.Damaged(f"{what}'s checksum is {type(crc).__name__}, not a number")
        return crc

    def _note(self, key: str, reason: str) -> None:
        self.damaged.setdefault(key, reason)

    def skipped_line(self) -> str | None:
        """One line naming the damaged cells reads of this store skipped (None if none)."""
        return payloads.summary_line(self.damaged, str(self.run_dir))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


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

