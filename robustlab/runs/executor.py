"""The one executor loop, with pluggable backends (in-process, local processes, Ray).

A study is a list of :class:`~robustlab.runs.store.Cell`; a *cell function* is a top-level
(importable, picklable) callable ``fn(kind, params) -> CellOutput | dict``. :func:`run_cells`
registers the cells in the store, skips the ones already done (resume), claims each remaining
cell atomically, runs it on the chosen backend and writes its outputs in one transaction as soon
as it finishes. Only the parent process writes results, so every backend has the same store and
resume semantics; a heartbeat thread keeps in-flight cells visibly alive for the TUI.

Failures are results: a cell that raises is stored as ``failed`` with its traceback and the loop
goes on. Ctrl-C puts in-flight cells back to ``pending`` and marks the run ``interrupted``.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from robustlab.errors import InputError
from robustlab.procs import pid_alive
from robustlab.runs.cells import EXECUTORS, CellFn, PoolBackend, call_cell
from robustlab.runs.store import Cell, RunStore, worker_id
from robustlab.textfmt import echo, printable

HEARTBEAT_SECONDS = 10.0
#: how often a process waiting for cells that another process runs looks again
WAIT_SECONDS = 1.0


# ---- backends ------------------------------------------------------------------------------------


class _Sequential:
    def __init__(self, fn: CellFn, workers: int) -> None:
        self.fn = fn

    def run(self, cells: Iterator[Cell]) -> Iterator[tuple[Cell, bool, Any, float]]:
        for cell in cells:
            yield (cell, *call_cell(self.fn, cell.kind, cell.params))

    def close(self) -> None:
        pass


def _watch_parent(parent: int) -> None:
    """Pool worker initializer: exit when the parent process dies (a kill -9 of the study must
    not leave workers blocked on a pipe forever). Polls ``getppid`` (portable; on Linux the
    orphan is re-parented, so the parent pid changes)."""
    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(70)
            time.sleep(0.5)

    threading.Thread(target=watch, name="robustlab-parent-watch", daemon=True).start()


class _Processes(PoolBackend):
    """A local process pool (spawn: safe with torch threads), rebuilt when a worker dies."""

    def __init__(self, fn: CellFn, workers: int) -> None:
        self.fn = fn
        self.workers = max(1, workers)
        self.pool = self._new_pool()

    def _new_pool(self) -> Any:
        import concurrent.futures as cf
        import multiprocessing as mp

        return cf.ProcessPoolExecutor(self.workers, mp_context=mp.get_context("spawn"),
                                      initializer=_watch_parent, initargs=(os.getpid(),))

    def _submit(self, cell: Cell) -> Any:
        return self.pool.submit(call_cell, self.fn, cell.kind, cell.params)

    def _wait(self, handles: list[Any]) -> list[Any]:
        import concurrent.futures as cf

        return list(cf.wait(handles, return_when=cf.FIRST_COMPLETED)[0])

    def _result(self, handle: Any) -> tuple[bool, Any, float]:
        return handle.result()

    def _done(self, handle: Any) -> bool:
        return handle.done()

    def _worker_died(self, exc: BaseException) -> bool:
        from concurrent.futures.process import BrokenProcessPool

        return isinstance(exc, BrokenProcessPool)

    def _restart(self) -> None:
        # a broken pool resolves every future it held (as broken) while shutting down
        self.pool.shutdown(wait=True, cancel_futures=True)
        echo("robustlab: a worker process died; restarting the pool and retrying its cells",
             file=sys.stderr, flush=True)
        self.pool = self._new_pool()

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def refuse_unguarded_main() -> None:
    """InputError when the process executor would start from a script's top-level code that is
    not under ``if __name__ == "__main__":``. Spawned workers re-import the main script; without
    the guard each would run the study again (and wait on its parent) instead of taking cells,
    so the run would hang: this says so in one line before anything starts.

    The check reads the main script's source (``ast``): the top-level statement now running
    (the outermost frame of ``__main__``) must be an ``if __name__ == "__main__"`` block. A
    ``python -c`` command, an interactive session, a notebook, ``python -m robustlab`` or a
    script whose source cannot be read pass (their workers re-run nothing of theirs)."""
    import ast
    import inspect

    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or (getattr(main, "__spec__", None) is not None and
                    str(main.__spec__.name).startswith("robustlab.")):
        return
    frame = inspect.currentframe()
    line = None
    while frame is not None:  # the outermost frame running the main module's own code
        if frame.f_globals is vars(main) and frame.f_code.co_name == "<module>":
            line = frame.f_lineno
        frame = frame.f_back
    if line is None:
        return
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return
    for stmt in tree.body:
        if stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
            if _is_main_guard(stmt):
                return
            raise InputError(
                f"--executor process: worker processes re-import {os.path.basename(path)}, "
                f"whose line {line} starts the study outside `if __name__ == \"__main__\":`; "
                "put that call under the guard (or use --executor sequential)")
    return


def _is_main_guard(stmt: Any) -> bool:
    """``if __name__ == "__main__":`` (either side of the ``==``)."""
    import ast

    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare):
        return False
    test = stmt.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, *test.comparators]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return bool(names and consts)


def make_backend(name: str, fn: CellFn, workers: int = 1, **options: Any):
    if name == "sequential":
        return _Sequential(fn, workers)
    if name == "process":
        return _Processes(fn, workers)
    if name == "ray":
        from robustlab.runs.ray_backend import RayBackend  # Ray's own module: imported on use

        return RayBackend(fn, workers, **options)
    raise InputError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")


# ---- the loop --------------------------------------------------------------------------------------


class _Heartbeat(threading.Thread):
    def __init__(self, store_path: os.PathLike[str], inflight: set[str]) -> None:
        super().__init__(daemon=True)
        self.store_path, self.inflight = store_path, inflight
        self.stop = threading.Event()

    def run(self) -> None:
        store = RunStore(self.store_path)
        try:
            while not self.stop.wait(HEARTBEAT_SECONDS):
                store.heartbeat(list(self.inflight))
        finally:
            store.close()


@dataclass
class RunReport:
    total: int
    done: int
    failed: int
    skipped: int
    seconds: float

    @property
    def complete(self) -> bool:
        return self.done == self.total


def _reclaim_dead(store: RunStore) -> None:
    """Cells left 'running' by a process on this host that no longer exists go back to pending.

    Our own pid counts as dead too: a cell we claimed earlier in this process is not in flight.
    """
    host = worker_id().split(":")[0]
    dead = []
    for cell in store.cells("running"):
        whost, _, pid = (cell.worker or "").partition(":")
        if whost == host and pid.isdigit() and (int(pid) == os.getpid()
                                                 or not pid_alive(int(pid))):
            dead.append(cell.key)
    store.release(dead)


def run_cells(
    store: RunStore,
    cells: Sequence[Cell],
    fn: CellFn,
    *,
    executor: str = "sequential",
    workers: int = 1,
    progress: bool = True,
    desc: str = "cells",
    on_result: Callable[[Cell, bool, Any], None] | None = None,
    stale_after: float = 600.0,
    **backend_options: Any,
) -> RunReport:
    """Run every cell not yet done and store each result as soon as it finishes: the store is
    prepared (:func:`_prepare`), then :class:`_CellLoop` runs what is left, waiting for cells
    another process holds, and the report counts what is done."""
    t0 = time.perf_counter()
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate cell keys in a study")
    done0 = _prepare(store, cells, stale_after)
    loop = _CellLoop(store, cells, done0, on_result, stale_after,
                     _progress(len(cells), len(done0), desc, progress))
    loop.run(make_backend(executor, fn, workers, **backend_options))
    counts = store.counts()
    done_now = store.done_keys()
    return RunReport(total=len(cells), done=sum(1 for k in keys if k in done_now),
                     failed=counts["failed"], skipped=len(done0 & set(keys)),
                     seconds=time.perf_counter() - t0)


def _prepare(store: RunStore, cells: Sequence[Cell], stale_after: float) -> set[str]:
    """The store ready to run ``cells``: damaged done cells back to pending (said), every cell
    added, cells of dead processes released, stale ones failed. Returns the done keys."""
    _announce_damaged(store.reset_damaged())
    store.add_cells(cells)
    _reclaim_dead(store)
    store.fail_stale(stale_after)
    return store.done_keys()


class _CellLoop:
    """One call's run over the cells: claim, compute (on the backend), store each result, and
    wait for the cells another process holds (the same command run twice), taking over those it
    gives back (Ctrl-C) or leaves behind (it died), so this process ends with the same complete
    store as the other and writes the same final files."""

    def __init__(self, store: RunStore, cells: Sequence[Cell], done0: set[str],
                 on_result: Callable[[Cell, bool, Any], None] | None, stale_after: float,
                 bar: Any) -> None:
        self.store, self.cells, self.on_result, self.bar = store, cells, on_result, bar
        self.stale_after = stale_after
        self.todo = [c for c in cells if c.key not in done0]
        self.wanted = {c.key for c in cells}
        self.me = worker_id()
        self.inflight: set[str] = set()
        self.attempted: set[str] = set()  # cells this call ran (each at most once per call)
        self.failed = 0
        self.announced = False

    def run(self, backend: Any) -> None:
        hb = _Heartbeat(self.store.path, self.inflight)
        hb.start()
        try:
            while True:
                before = len(self.attempted)
                for cell, ok, payload, seconds in backend.run(self.claimed()):
                    self.record(cell, ok, payload, seconds)
                if not self.more_to_do(before):
                    break
        except KeyboardInterrupt:
            self.store.release(list(self.inflight))
            self.store.set_run_status("interrupted",
                                      "interrupted by the user (Ctrl-C); rerun to resume")
            raise
        finally:
            hb.stop.set()
            backend.close()
            if self.bar is not None:
                self.bar.close()

    def claimed(self) -> Iterator[Cell]:
        """The cells to compute, each claimed in the store just before it is handed out."""
        for c in self.todo:
            if c.key not in self.attempted and self.store.claim(c.key, self.me):
                self.attempted.add(c.key)
                self.inflight.add(c.key)
                yield c

    def record(self, cell: Cell, ok: bool, payload: Any, seconds: float) -> None:
        """One finished cell into the store (done or failed, said on the progress bar)."""
        if ok:
            self.store.finish(cell.key, payload.result, records=payload.records,
                              signature=payload.signature, seconds=seconds,
                              predictions=payload.predictions)
        else:
            self.failed += 1
            self.store.fail(cell.key, payload)
            if self.bar is not None:
                self.bar.write(printable(f"cell {cell.key} failed: "
                                         f"{payload.strip().splitlines()[-1]}"))
        self.inflight.discard(cell.key)
        if self.on_result is not None:
            self.on_result(cell, ok, payload)
        if self.bar is not None:
            self.bar.update(1)
            if self.failed:
                self.bar.set_postfix(failed=self.failed)

    def more_to_do(self, attempted_before: int) -> bool:
        """Whether another pass is needed: cells are left and either this pass made progress
        (try what another process released meanwhile) or another process holds some (wait for
        it, saying so once). False: nothing left, or nothing to wait for (reported not done)."""
        done_now = self.store.done_keys()
        self.todo = [c for c in self.cells if c.key not in self.attempted
                     and c.key not in done_now]
        if not self.todo:
            return False
        if len(self.attempted) > attempted_before:
            return True
        held = _held_elsewhere(self.store, self.wanted, self.me)
        if not held:
            return False
        if not self.announced:
            owners = sorted({w for w in held.values() if w})
            echo(f"robustlab: {len(held)} cell(s) are being computed by another process "
                 f"({', '.join(owners)}) on this run directory; waiting for them",
                 file=sys.stderr, flush=True)
            self.announced = True
        time.sleep(WAIT_SECONDS)
        _reclaim_dead(self.store)
        self.store.fail_stale(self.stale_after)
        return True


def _announce_damaged(found: dict[str, str], shown: int = 5) -> None:
    """One line per done cell whose stored data was damaged and is computed again."""
    for key, why in list(found.items())[:shown]:
        echo(f"robustlab: cell {key}: its stored data is damaged ({why}); computing it again",
              file=sys.stderr, flush=True)
    if len(found) > shown:
        echo(f"robustlab: … and {len(found) - shown} more damaged cells computed again",
              file=sys.stderr, flush=True)


def _held_elsewhere(store: RunStore, keys: set[str], me: str) -> dict[str, str | None]:
    """{key: worker} of this study's cells running in another process."""
    return {c.key: c.worker for c in store.cells("running") if c.key in keys and c.worker != me}


def _progress(total: int, initial: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from robustlab.textfmt import progress

    # a bar on a terminal; whole lines (no carriage returns) in a log or a pipe
    return progress(total, desc, unit="cell", initial=initial, file=sys.stderr)
