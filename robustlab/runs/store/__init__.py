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
* **Judgements** (``robustlab judge``, paper 001's human check) live in a ``judgements``
  table created on demand (:mod:`.judgements`): older stores need no migration.
* **Endpoint answers** (a model behind HTTP, :mod:`robustlab.endpoints`) live in a
  ``responses`` table created on demand (:mod:`.responses`), each written as it arrives.
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

import os
from collections.abc import Sequence
from typing import Any

from robustlab.runs.store.cells import CellOps
from robustlab.runs.store.judgements import JudgementOps
from robustlab.runs.store.records import RecordReads
from robustlab.runs.store.recovery import Recovery
from robustlab.runs.store.responses import ResponseOps
from robustlab.runs.store.run import RunRow
from robustlab.runs.store.schema import (
    CELL_STATES,
    PREDICTION_FIELDS,
    SCHEMA_VERSION,
    STORE_NAME,
    Cell,
    DamagedCell,
    RunInfo,
    StoreError,
    is_run_dir,
    recovery_hint,
    run_files,
    worker_id,
)
from robustlab.textfmt import echo

__all__ = ["CELL_STATES", "PREDICTION_FIELDS", "SCHEMA_VERSION", "STORE_NAME", "Cell",
           "DamagedCell", "RunInfo", "RunStore", "StoreError", "is_run_dir", "print_failed_cells",
           "recovery_hint", "run_files", "worker_id", "StoreCache"]


class RunStore(RunRow, CellOps, RecordReads, Recovery, JudgementOps, ResponseOps):
    """Read and write one run directory's ``store.sqlite`` (see the module docstring): the
    connection (:mod:`.base`), the run row (:mod:`.run`), cells (:mod:`.cells`), records and
    predictions (:mod:`.records`), recovery (:mod:`.recovery`), judgements
    (:mod:`.judgements`), endpoint answers (:mod:`.responses`)."""

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


class StoreCache:
    """A run directory's ``responses`` as an endpoint's cache (``get``/``put``): a connection of
    its own per thread (the endpoint client writes from a writer thread), so the study's store
    and each worker process write beside it (WAL)."""

    def __init__(self, run_dir: Any) -> None:
        import threading

        self.run_dir = run_dir
        self._local = threading.local()

    def _open(self) -> Any:
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = RunStore(self.run_dir)
        return store

    def get(self, keys: Sequence[str]) -> dict[str, Any]:
        # no store yet: nothing stored, and nothing created until an answer arrives (a run
        # that never reached its endpoint leaves no folder that looks like a run)
        if getattr(self._local, "store", None) is None and not is_run_dir(self.run_dir):
            return {}
        return self._open().responses(keys)

    def put(self, rows: Sequence[dict[str, Any]]) -> None:
        self._open().add_responses(rows)

    def exists(self) -> bool:
        """Whether the run's store exists (an answer, or a request recorded as sent)."""
        return getattr(self._local, "store", None) is not None or is_run_dir(self.run_dir)

    def put_sent(self, rows: Sequence[dict[str, Any]]) -> None:
        """Record requests before they are sent (write-ahead: ``responses.add_sent``)."""
        self._open().add_sent(rows)

    def unanswered(self) -> list[dict[str, Any]]:
        """Requests recorded as sent whose answer never arrived (none without a store)."""
        return self._open().unanswered_sent() if self.exists() else []

    def close(self) -> None:
        """Close this thread's connection."""
        store = getattr(self._local, "store", None)
        if store is not None:
            store.close()
            self._local.store = None
