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
    """Run every cell not yet done and store each result as soon as it finishes."""
    t0 = time.perf_counter()
    keys = [c.key for c in cells]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate cell keys in a study")
    _announce_damaged(store.reset_damaged())
    store.add_cells(cells)
    _reclaim_dead(store)
    store.fail_stale(stale_after)
    done0 = store.done_keys()
    todo = [c for c in cells if c.key not in done0]
    me = worker_id()
    inflight: set[str] = set()
    hb = _Heartbeat(store.path, inflight)
    hb.start()

    wanted = set(keys)
    attempted: set[str] = set()  # cells this call ran (each at most once per call)

    def claimed() -> Iterator[Cell]:
        for c in todo:
            if c.key not in attempted and store.claim(c.key, me):
                attempted.add(c.key)
                inflight.add(c.key)
                yield c

    bar = _progress(len(cells), len(done0), desc, progress)
    backend = make_backend(executor, fn, workers, **backend_options)
    failed = 0
    announced = False
    try:
        while True:
            before = len(attempted)
            for cell, ok, payload, seconds in backend.run(claimed()):
                if ok:
                    store.finish(cell.key, payload.result, records=payload.records,
                                 signature=payload.signature, seconds=seconds,
                                 predictions=payload.predictions)
                else:
                    failed += 1
                    store.fail(cell.key, payload)
                    if bar is not None:
                        bar.write(printable(f"cell {cell.key} failed: "
                                            f"{payload.strip().splitlines()[-1]}"))
                inflight.discard(cell.key)
                if on_result is not None:
                    on_result(cell, ok, payload)
                if bar is not None:
                    bar.update(1)
                    if failed:
                        bar.set_postfix(failed=failed)
            # Cells another process (the same command run twice) holds: wait for them, and take
            # over those it gives back (Ctrl-C) or leaves behind (it died), so this process
            # ends with the same complete store as the other and writes the same final files.
            done_now = store.done_keys()
            todo = [c for c in cells if c.key not in attempted and c.key not in done_now]
            if not todo:
                break
            if len(attempted) > before:
                continue  # progress: try what is left (released meanwhile by another process)
            held = _held_elsewhere(store, wanted, me)
            if not held:
                break  # nothing to wait for; what is left is reported as not done
            if not announced:
                owners = sorted({w for w in held.values() if w})
                echo(f"robustlab: {len(held)} cell(s) are being computed by another process "
                     f"({', '.join(owners)}) on this run directory; waiting for them",
                     file=sys.stderr, flush=True)
                announced = True
            time.sleep(WAIT_SECONDS)
            _reclaim_dead(store)
            store.fail_stale(stale_after)
    except KeyboardInterrupt:
        store.release(list(inflight))
        store.set_run_status("interrupted", "interrupted by the user (Ctrl-C); rerun to resume")
        raise
    finally:
        hb.stop.set()
        backend.close()
        if bar is not None:
            bar.close()
    counts = store.counts()
    done_now = store.done_keys()
    done = sum(1 for k in keys if k in done_now)
    return RunReport(total=len(cells), done=done, failed=counts["failed"],
                     skipped=len(done0 & set(keys)), seconds=time.perf_counter() - t0)


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
