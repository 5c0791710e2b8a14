"""Headless readers of run directories for the TUI: listing, status and live progress.

Everything here is plain Python over :class:`~robustlab.runs.store.RunStore` opened read-only and
the files of docs/run-directory.md; the screens call it from thread workers, tests and the
benchmark call it directly. It never imports textual. A missing or corrupt store is a value
(status ``missing``/``corrupt`` with a message), never an exception escaping to the UI.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.outputs import open_run_file
from robustlab.runs import inputs as run_inputs
from robustlab.runs import payloads
from robustlab.runs.store import STORE_NAME, RunStore, StoreError, recovery_hint
from robustlab.runs.store.schema import CELL_COLUMNS, cell_name
from robustlab.textfmt import printable
from robustlab.tui import launch

#: statuses the TUI shows; ``died`` = the store says running but the worker process is gone.
LIVE = ("running", "starting")


@dataclass
class RunSummary:
    """One line of the runs list."""

    path: Path
    kind: str = "?"
    name: str = ""
    status: str = "missing"
    counts: dict[str, int] = field(default_factory=dict)
    created: float | None = None
    updated: float | None = None
    pid: int | None = None
    host: str | None = None
    command: str | None = None
    error: str | None = None  # why it failed / died / cannot be read
    #: one printable line per input the run recorded (config["inputs"]); empty for old runs
    inputs: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def done(self) -> int:
        return self.counts.get("done", 0)

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 0.0

    def duration(self, now: float) -> float | None:
        if self.created is None:
            return None
        end = now if self.status in LIVE else (self.updated or self.created)
        return max(0.0, end - self.created)


def tail(path: Path, lines: int = 20, max_bytes: int = 64_000) -> list[str]:
    """The last ``lines`` lines of a (possibly large, possibly absent) text file."""
    try:  # no link followed, and a FIFO planted as worker.log cannot block the TUI
        with os.fdopen(open_run_file(path, os.O_RDONLY), "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - max_bytes))
            data = f.read().decode("utf-8", "replace")
    except (OSError, InputError):
        return []
    return [ln for ln in data.splitlines() if ln.strip()][-lines:]


def _died_reason(path: Path, pid: int | None, store: RunStore | None) -> str:
    """Why a worker died, from what it left behind: its log first, then failed cells."""
    log = tail(path / launch.WORKER_LOG, 40)
    if log:
        # the error first, where an 80-column status line shows it: robustlab's one-line
        # "robustlab CMD: error: …", else a traceback's last line, else the log's last line
        mine = [ln for ln in log if re.search(r"^robustlab [\w-]+: error: ", ln.strip())]
        last = log[-1].strip()
        err = mine[-1].strip() if mine else last
        return f"{err} (worker pid {pid} exited; more in worker.log)"
    if store is not None:
        failed = store.cells("failed")[:1]
        if failed and failed[0].error:
            return (f"worker (pid {pid}) is gone; cell {failed[0].key} failed: "
                    + failed[0].error.strip().splitlines()[-1])
    return f"worker (pid {pid}) is gone without a log (killed?); resume to continue"


def input_lines(config: Any) -> list[str]:
    """The run's recorded inputs as printable lines, read from the stored records only (no
    hashing here: this runs on every scan). A malformed record is shown as stored rather than
    failing the whole run's summary; a run made before inputs were recorded has none."""
    recorded = config.get(run_inputs.KEY) if isinstance(config, dict) else None
    if not isinstance(recorded, dict):
        return []
    out = []
    for role, rec in recorded.items():
        try:
            out.append(run_inputs.describe_line(str(role), rec))
        except Exception:  # noqa: BLE001 - a hand-edited record is text, not a crash
            out.append(printable(f"{run_inputs.role_label(str(role))}: {rec!r}"))
    return out


def read_run(path: str | os.PathLike[str],
             alive: Callable[[int | None], bool] = launch.pid_alive) -> RunSummary:
    """Status and counts of one run directory (never raises for a bad directory)."""
    path = Path(path)
    summary = RunSummary(path=path, name=path.name)
    worker = launch.read_worker(path)
    if not (path / STORE_NAME).exists():
        if worker:
            pid = worker.get("pid")
            summary.pid, summary.command = pid, worker.get("command")
            summary.created = summary.updated = worker.get("launched")
            if launch.same_host(worker.get("host")) and alive(pid):
                summary.status = "starting"
            else:
                summary.status, summary.error = "died", _died_reason(path, pid, None)
            summary.kind = _launched_kind(worker.get("argv") or ["?"])
            return summary
        summary.error = (f"no run store at {path / STORE_NAME}" if path.is_dir()
                         else f"{path} does not exist")
        return summary
    try:
        with RunStore(path, readonly=True) as store:
            info = store.run_info()
            summary.counts = store.counts()
            if info is None:
                summary.status, summary.error = "corrupt", f"{path / STORE_NAME} has no run row"
                return summary
            # a finished run's file is checked once per file state (cached); a running one is
            # checked by its own process when resumed
            problem = None if info.status == "running" else store.quick_check()
            if problem:
                summary.status = "corrupt"
                summary.error = (f"{path / STORE_NAME} is damaged (sqlite quick_check: "
                                 f"{problem}); {recovery_hint(path / STORE_NAME)}")
                summary.command = info.command
                return summary
            summary.kind, summary.name, summary.status = info.kind, info.name, info.status
            summary.created, summary.updated = info.created, info.heartbeat or info.updated
            summary.pid, summary.host, summary.command = info.pid, info.host, info.command
            summary.error = info.error
            summary.inputs = input_lines(info.config)
            if info.status == "running" and launch.same_host(info.host) and not alive(info.pid):
                summary.status = "died"
                summary.error = _died_reason(path, info.pid, store)
            elif summary.counts.get("failed"):
                row = store.conn.execute("SELECT key, error FROM cells WHERE status='failed' "
                                         "AND error IS NOT NULL LIMIT 1").fetchone()
                first = (f"; first: {row[0]}: {row[1].strip().splitlines()[-1]}"
                         if row and row[1] and row[1].strip() else "")
                summary.error = (summary.error or f"{summary.counts['failed']} failed cells") \
                    + first
    except (StoreError, Exception) as exc:  # noqa: BLE001 - a bad store must not crash the UI
        summary.status = "corrupt"
        summary.error = f"cannot read {path / STORE_NAME}: {exc}"
    return summary


def find_run_dirs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Run dirs named on the command line: a run dir itself, or a folder of run dirs."""
    out: list[Path] = []
    for p in map(Path, paths):
        if (p / STORE_NAME).exists() or (p / launch.WORKER_JSON).exists() or not p.is_dir():
            out.append(p)
            continue
        kids = sorted(c for c in p.iterdir() if c.is_dir() and (
            (c / STORE_NAME).exists() or (c / launch.WORKER_JSON).exists()))
        out.extend(kids or [p])
    seen: set[Path] = set()
    return [p for p in out if not (p.resolve() in seen or seen.add(p.resolve()))]


# ---- live progress --------------------------------------------------------------------------------


@dataclass
class CellRow:
    key: str
    status: str
    seconds: float | None
    attempts: int
    error: str | None
    finished: float | None
    params: str | None = None  # the stored JSON text (read for a name only)

    @property
    def name(self) -> str:
        """The cell as a reader knows it: an eval cell ``p03|seed=0`` by its perturbation spec
        (``char_swap:pps=3|seed=0``); any other key as it is."""
        import re

        head, sep, rest = self.key.partition("|")
        if not re.fullmatch(r"p\d+", head) or not self.params:
            return self.key
        try:
            pert = json.loads(self.params).get("perturbation")
        except (ValueError, AttributeError, TypeError, RecursionError):  # damaged: its key
            return self.key
        return f"{pert}{sep}{rest}" if isinstance(pert, str) and pert else self.key


@dataclass
class Progress:
    """Everything the live-progress screen shows, read in one go."""

    run: RunSummary
    cells: list[CellRow] = field(default_factory=list)
    shown_of: int = 0
    throughput: float | None = None  # cells per minute
    eta: float | None = None  # seconds
    failures: list[CellRow] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


CELL_LIMIT = 500


def read_progress(path: str | os.PathLike[str], status: str | None = None,
                  limit: int = CELL_LIMIT, now: float | None = None,
                  alive: Callable[[int | None], bool] = launch.pid_alive) -> Progress:
    """Run status, a page of cells (running and failed first), throughput, ETA, log tails."""
    path = Path(path)
    run = read_run(path, alive)
    prog = Progress(run=run, log=tail(path / launch.WORKER_LOG, 30))
    if run.status in ("missing", "corrupt") or not (path / STORE_NAME).exists():
        return prog
    try:
        with RunStore(path, readonly=True) as store:
            conn = store.conn
            where = " WHERE status=?" if status else ""
            args: tuple[Any, ...] = (status,) if status else ()
            order = (" ORDER BY CASE status WHEN 'running' THEN 0 WHEN 'failed' THEN 1 "
                     "WHEN 'pending' THEN 3 ELSE 2 END, seq")
            rows = conn.execute(
                "SELECT seq, key, status, seconds, attempts, error, finished, params FROM cells"
                + where + order + " LIMIT ?", (*args, limit)).fetchall()
            prog.cells = [_cell_row(r) for r in rows]
            prog.shown_of = conn.execute("SELECT COUNT(*) FROM cells" + where, args).fetchone()[0]
            prog.failures = [_cell_row(r) for r in conn.execute(
                "SELECT seq, key, status, seconds, attempts, error, finished, params FROM cells "
                "WHERE status='failed' ORDER BY finished DESC LIMIT 20")]
            recent = [r[0] for r in conn.execute(
                "SELECT finished FROM cells WHERE status='done' AND typeof(finished) IN "
                "('integer', 'real') AND finished BETWEEN 0 AND ? ORDER BY finished DESC "
                "LIMIT 50", (payloads.MAX_TIME,))]
            prog.events = [f"{time.strftime('%H:%M:%S', time.localtime(e['ts']))} "
                           f"{e['level']:<5} {e['cell'] or ''} {e['message']}".rstrip()
                           for e in store.events(30)]
    except Exception as exc:  # noqa: BLE001
        prog.run.status, prog.run.error = "corrupt", f"cannot read the store: {exc}"
        return prog
    prog.throughput, prog.eta = _rate(recent, run, now)
    return prog


def _cell_row(row: Any) -> CellRow:
    """A row of the cells table as shown, or, when a value is not of its column's type
    (damage), the cell marked ``damaged`` with what is wrong as its error."""
    try:
        payloads.check_columns(row, CELL_COLUMNS, "the cell")
        return CellRow(*tuple(row)[1:])
    except payloads.Damaged as exc:
        return CellRow(cell_name(row), "damaged", None, 0, str(exc), None)


def _rate(finished: list[float], run: RunSummary, now: float | None) -> tuple[float | None,
                                                                              float | None]:
    """Cells per minute over the recent finishes, and the time left at that rate."""
    if len(finished) < 2:
        return None, None
    span = max(finished) - min(finished)
    if span <= 0:
        return None, None
    per_min = (len(finished) - 1) / span * 60
    left = run.total - run.done
    eta = left / per_min * 60 if run.status in LIVE and left else None
    return per_min, eta


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``summary.json`` if the run wrote it (it is written atomically at the end)."""
    try:  # a regular file only: a FIFO or /dev/zero link there would hang the TUI
        with os.fdopen(open_run_file(Path(path) / "summary.json", os.O_RDONLY), "rb") as f:
            return json.loads(f.read())
    except (OSError, ValueError, InputError):
        return None


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _launched_kind(argv: list[str]) -> str:
    """The study command of a launched argv (``python -m robustlab learnability …`` ->
    ``learnability``), not the interpreter's path."""
    if "robustlab" in argv[:3] and len(argv) > argv.index("robustlab") + 1:
        return argv[argv.index("robustlab") + 1]
    return Path(argv[0]).name


def fmt_time(ts: float | None) -> str:
    return time.strftime("%m-%d %H:%M", time.localtime(ts)) if ts else "–"
