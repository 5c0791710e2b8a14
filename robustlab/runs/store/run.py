"""The run row: creating it or checking a resume against it (options, pinned inputs), its
status, heartbeat, wall time, configuration and the ``meta`` table."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import sys
import time
from typing import Any

from robustlab.procs import process_start
from robustlab.runs import payloads
from robustlab.runs.inputs import KEY as INPUTS_KEY
from robustlab.runs.inputs import changed as changed_inputs
from robustlab.runs.inputs import merged as merged_inputs
from robustlab.runs.inputs import split_config
from robustlab.runs.store.base import StoreBase
from robustlab.runs.store.schema import (
    RUN_COLUMNS,
    RunInfo,
    StoreError,
    columns,
    config_diff,
    dumps,
    read_meta,
    recovery_hint,
    write_meta,
)
from robustlab.textfmt import echo


class RunRow(StoreBase):
    """The run's own row of a :class:`RunStore`."""

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
                text, vtext = dumps(config), dumps(versions or {})
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
                new, new_inputs = split_config(json.loads(dumps(config)))
                if row["kind"] != kind or stored != new:
                    raise StoreError(
                        f"{self.run_dir} already holds a different {row['kind']} run"
                        f"{config_diff(stored, new)}; resume it with the "
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
                    text = dumps({**old_config, INPUTS_KEY: keep})
                    c.execute("UPDATE run SET config=?, crc=? WHERE id=1",
                              (text, payloads.checksum(text, row["versions"])))
            if row is not None:
                self._close_invocation(c, row["heartbeat"] or row["updated"])
                c.execute(
                    "UPDATE run SET status='running', pid=?, host=?, updated=?, heartbeat=?,"
                    " error=NULL, command=COALESCE(?, command) WHERE id=1",
                    (os.getpid(), socket.gethostname(), now, now, command),
                )
            write_meta(c, "worker_start", process_start(os.getpid()) or "")
            write_meta(c, "invocation_start", repr(now))
        return self.run_info()  # type: ignore[return-value]

    def _check_inputs(self, c: sqlite3.Connection, inputs: dict[str, tuple[str, str]]) -> None:
        for name, (fp, what) in inputs.items():
            old = read_meta(c, f"input:{name}")
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
            write_meta(c, f"input:{name}", fp)

    def _close_invocation(self, c: sqlite3.Connection, end: float | None) -> None:
        """Add the last invocation's wall time (up to ``end``) to the run's total."""
        start = self._meta_time(c, "invocation_start")
        if start is not None and end is not None:
            total = (self._meta_time(c, "seconds") or 0.0) + max(0.0, float(end) - start)
            write_meta(c, "seconds", repr(total))
        c.execute("DELETE FROM meta WHERE key='invocation_start'")

    def elapsed(self) -> float:
        """Wall seconds of every invocation of this run so far, this one included."""
        c = self.conn
        total = self._meta_time(c, "seconds") or 0.0
        start = self._meta_time(c, "invocation_start")
        return total + (max(0.0, time.time() - start) if start is not None else 0.0)

    def _meta_time(self, c: sqlite3.Connection, key: str) -> float | None:
        """A time or duration kept in ``meta`` (None if absent). A damaged one is said on
        stderr and read as absent: it only adds up the run's wall time."""
        text = read_meta(c, key)
        if text is None:
            return None
        try:
            value = float(text)
            if not 0 <= value <= payloads.MAX_TIME:
                raise ValueError(text)
        except (TypeError, ValueError):
            if key not in self.damaged_meta:
                self.damaged_meta.add(key)
                echo(f"robustlab: warning: {self.path}: meta {key} is {str(text)[:20]!r}, not a "
                     "time (damaged); the run's wall time leaves it out", file=sys.stderr)
            return None
        return value

    def worker_start(self) -> str | None:
        """The start token (:func:`robustlab.procs.process_start`) of the run's process."""
        return read_meta(self.conn, "worker_start") or None

    def meta(self, key: str) -> str | None:
        """A value of the store's ``meta`` table (None if absent)."""
        return read_meta(self.conn, key)

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as c:
            write_meta(c, key, value)

    def replace_config(self, config: dict[str, Any]) -> None:
        """Store ``config`` as the run's configuration: only for a run made by an earlier
        version whose configuration means the same study in an older spelling
        (:mod:`robustlab.studies.stored`), so a resume compares like with like."""
        text = dumps(config)
        with self.transaction() as c:
            if "crc" in columns(c, "run"):  # schema 3: the checksum covers the new text
                versions = c.execute("SELECT versions FROM run WHERE id=1").fetchone()[0]
                c.execute("UPDATE run SET config=?, crc=? WHERE id=1",
                          (text, payloads.checksum(text, versions)))
            else:
                c.execute("UPDATE run SET config=? WHERE id=1", (text,))

    def _run_payloads(self, row: sqlite3.Row) -> tuple[dict[str, Any], dict[str, Any]]:
        """The run row's configuration and versions, verified; a damaged row is a StoreError
        naming the file and how to recover (nothing of the run can be trusted without it)."""
        try:
            payloads.check_columns(row, RUN_COLUMNS, "the run")
            crc = (self.stored_crc(row["crc"], "the run's configuration")
                   if "crc" in row.keys() else None)
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

