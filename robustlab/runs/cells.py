"""What a cell is to the executors: the cell function's contract (:data:`CellFn`,
:class:`CellOutput`, :func:`call_cell`) and the bounded in-flight window every asynchronous
backend shares (:class:`PoolBackend`). Below both :mod:`.executor` and :mod:`.ray_backend`, so
the Ray backend (imported only when ``--executor ray`` asks for it) needs nothing above it."""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from robustlab.runs.store import Cell

EXECUTORS = ("sequential", "process", "ray")


@dataclass
class CellOutput:
    """What a cell function returns: a JSON-able result and optional per-example records."""

    result: dict[str, Any]
    records: Sequence[Any] = field(default_factory=list)
    signature: str | None = None
    #: per-example predictions on the perturbed test set (robustlab.runs.predictions)
    predictions: Sequence[dict[str, Any]] = field(default_factory=list)


CellFn = Callable[[str, dict[str, Any]], "CellOutput | dict[str, Any]"]


def call_cell(fn: CellFn, kind: str, params: dict[str, Any]) -> tuple[bool, Any, float]:
    """Run one cell; never raises (errors come back as a traceback string)."""
    t0 = time.perf_counter()
    try:
        out = fn(kind, params)
        if not isinstance(out, CellOutput):
            out = CellOutput(result=dict(out))
        return True, out, time.perf_counter() - t0
    except Exception:
        return False, traceback.format_exc(), time.perf_counter() - t0


class PoolBackend:
    """A bounded window of cells in flight (2 per worker) over some asynchronous submit/wait.

    A backend whose workers can die (a process killed, out of memory) says so with
    :meth:`_worker_died` and replaces them in :meth:`_restart`. The cells that were in flight
    then run again **one at a time**, so a crash is blamed on the right cell: a cell whose
    worker dies while it runs alone ``MAX_LOST`` times fails with that reason, the others
    (innocent neighbours of a crash) finish normally.
    """

    workers: int
    MAX_LOST = 2

    def _submit(self, cell: Cell) -> Any:
        raise NotImplementedError

    def _wait(self, handles: list[Any]) -> list[Any]:
        """Block until at least one handle is finished; return the finished ones."""
        raise NotImplementedError

    def _result(self, handle: Any) -> tuple[bool, Any, float]:
        raise NotImplementedError

    def _done(self, handle: Any) -> bool:
        """True if ``handle`` finished (its result is ready without blocking)."""
        return False

    def _worker_died(self, exc: BaseException) -> bool:
        """True if ``exc`` means the worker itself is gone (the backend then restarts)."""
        return False

    def _restart(self) -> None:
        """Replace dead workers; every handle in flight is lost (its cell runs again)."""
        raise NotImplementedError

    def run(self, cells: Iterator[Cell]) -> Iterator[tuple[Cell, bool, Any, float]]:
        pending: dict[Any, Cell] = {}
        solo: list[Cell] = []  # in flight at a crash: rerun one at a time, so blame is exact
        lost: dict[str, int] = {}
        exhausted = False

        def crashed(victims: list[Cell], alone: bool) -> Iterator[tuple[Cell, bool, Any, float]]:
            self._restart()
            if not alone:
                solo.extend(victims)
                return
            [cell] = victims
            lost[cell.key] = lost.get(cell.key, 0) + 1
            if lost[cell.key] >= self.MAX_LOST:
                yield cell, False, (
                    f"WorkerDied: the worker process died each time it ran this cell alone "
                    f"({lost[cell.key]} times; killed, or out of memory?); rerun to retry it\n"), 0.0
            else:
                solo.insert(0, cell)

        while True:
            while True:  # fill the window (a single cell while crash suspects are rerun)
                if solo:
                    if pending:
                        break
                    cell = solo.pop(0)
                elif exhausted or len(pending) >= 2 * self.workers:
                    break
                else:
                    cell = next(cells, None)
                    if cell is None:
                        exhausted = True
                        break
                try:
                    pending[self._submit(cell)] = cell
                except Exception as exc:
                    if not self._worker_died(exc):
                        yield cell, False, traceback.format_exc(), 0.0
                        continue
                    solo.insert(0, cell)  # it never ran; the crash is the others'
                    victims = list(pending.values())
                    pending.clear()
                    yield from crashed(victims, alone=len(victims) == 1)
            if not pending:
                if solo:
                    continue
                return
            in_flight = len(pending)
            victims = []
            for handle in self._wait(list(pending)):
                cell = pending.pop(handle)
                try:
                    out = self._result(handle)
                except Exception as exc:  # the worker process or task itself died (OOM, kill)
                    if self._worker_died(exc):
                        victims.append(cell)
                        continue
                    yield cell, False, traceback.format_exc(), 0.0
                    continue
                yield (cell, *out)
            if victims:  # the whole pool is gone: what else was in flight is lost with it
                for handle, cell in list(pending.items()):
                    try:
                        out = self._result(handle) if self._done(handle) else None
                    except Exception:
                        out = None
                    if out is None:
                        victims.append(cell)
                    else:
                        yield (cell, *out)
                pending.clear()
                yield from crashed(victims, alone=in_flight == 1)

    def close(self) -> None:
        pass
