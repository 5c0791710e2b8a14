"""Starting, stopping and resuming studies as detached ``robustlab`` processes (headless).

The TUI never runs a study itself: it launches the same command line a user would type, in a new
session (``start_new_session=True``) with stdout/stderr going to ``DIR/worker.log``, so closing the
TUI or dropping the SSH connection does not stop the run. ``DIR/worker.json`` records what was
launched (pid, command, cwd) so the run can be followed before its store exists. Stopping sends
SIGINT, which the executor turns into ``interrupted`` with in-flight cells back to pending;
resuming re-launches the command stored in the run row.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.runs.outputs import write_json
from robustlab.runs.procs import pid_alive, same_host
from robustlab.runs.store import RunStore, StoreError

WORKER_LOG = "worker.log"
WORKER_JSON = "worker.json"


def robustlab_argv(args: Sequence[str]) -> list[str]:
    """The full argv that runs ``robustlab ARGS`` with this interpreter (no PATH lookup)."""
    return [sys.executable, "-m", "robustlab", *args]


def command_string(args: Sequence[str]) -> str:
    """The copyable shell form of ``robustlab ARGS``."""
    return shlex.join(["robustlab", *args])


def out_dir_of(args: Sequence[str]) -> str | None:
    """The ``--out`` value of a robustlab argv, if any."""
    for i, a in enumerate(args):
        if a == "--out" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--out="):
            return a.split("=", 1)[1]
    return None


def program_argv(command: str) -> list[str]:
    """The argv that re-runs a stored command line.

    Studies store ``robustlab …``, ``/path/to/robustlab …`` or ``python -m robustlab …``; these
    run with this interpreter (no PATH lookup). Any other stored command (e.g. a script calling
    ``run_cells``) is re-run as it is, with ``python`` meaning this interpreter.
    """
    tokens = shlex.split(command)
    if not tokens:
        raise InputError("the run has an empty stored command; it cannot be resumed")
    head = Path(tokens[0]).name
    if head.startswith("python") and tokens[1:2] == ["-m"] and tokens[2:3] == ["robustlab"]:
        return robustlab_argv(tokens[3:])
    if head == "robustlab" or tokens[0].endswith("robustlab/__main__.py"):
        return robustlab_argv(tokens[1:])
    if head.startswith("python"):
        return [sys.executable, *tokens[1:]]
    return tokens


def read_worker(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The launcher's record (``worker.json``) if the TUI launched this run."""
    try:
        return json.loads((Path(run_dir) / WORKER_JSON).read_text())
    except (OSError, ValueError):
        return None


# ---- launching ------------------------------------------------------------------------------------


def spawn_detached(argv: Sequence[str], run_dir: str | os.PathLike[str], *,
                   cwd: str | os.PathLike[str] | None = None,
                   env: dict[str, str] | None = None) -> int:
    """Start ``argv`` in its own session, logging to ``RUN_DIR/worker.log``; returns its pid."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    argv = list(argv)
    full_env = {**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"}
    with open(run_dir / WORKER_LOG, "ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} launching: "
                  f"{shlex.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, env=full_env, close_fds=True,
        )
    write_json(run_dir / WORKER_JSON, {
        "pid": proc.pid, "pgid": proc.pid, "host": socket.gethostname(),
        "argv": argv, "command": shlex.join(argv),
        "cwd": str(Path(cwd or os.getcwd()).resolve()), "launched": time.time(),
    })
    return proc.pid


def launch(args: Sequence[str], *, cwd: str | os.PathLike[str] | None = None,
           program: Sequence[str] | None = None) -> Path:
    """Launch ``robustlab ARGS`` (must contain ``--out``) detached; returns the run dir.

    ``program`` replaces ``python -m robustlab`` (tests launch a small study script).
    """
    out = out_dir_of(args)
    if not out:
        raise InputError("a study launched from the TUI needs --out DIR (its run directory)")
    base = Path(cwd or os.getcwd())
    run_dir = (base / out).resolve()
    argv = [*program, *args] if program else robustlab_argv(args)
    spawn_detached(argv, run_dir, cwd=base)
    return run_dir


def _run_pid(run_dir: Path) -> tuple[int | None, bool, str | None]:
    """(pid, is_group_leader_we_launched, host) of the process running this run."""
    worker = read_worker(run_dir)
    try:
        with RunStore(run_dir, readonly=True) as store:
            info = store.run_info()
    except StoreError:
        info = None
    if info is not None and info.pid:
        leader = bool(worker and worker.get("pid") == info.pid)
        return info.pid, leader, info.host
    if worker:
        return worker.get("pid"), True, worker.get("host")
    return None, False, None


def stop(run_dir: str | os.PathLike[str]) -> int:
    """Send SIGINT to the run's worker (its whole process group if the TUI launched it)."""
    run_dir = Path(run_dir)
    pid, leader, host = _run_pid(run_dir)
    if not same_host(host):
        raise InputError(f"the run is executing on {host}; stop it there")
    if not pid_alive(pid):
        raise InputError(f"no live worker for {run_dir} (pid {pid} is gone)")
    assert pid is not None
    try:
        if leader:
            os.killpg(pid, signal.SIGINT)
        else:
            os.kill(pid, signal.SIGINT)
    except ProcessLookupError as exc:
        raise InputError(f"the worker of {run_dir} exited before it could be stopped") from exc
    return pid


def resume_args(run_dir: str | os.PathLike[str]) -> tuple[list[str], Path]:
    """The full argv and working directory that continue a run: its stored command, same --out."""
    run_dir = Path(run_dir).resolve()
    try:
        with RunStore(run_dir, readonly=True) as store:
            info = store.run_info()
    except StoreError as exc:
        worker = read_worker(run_dir)
        if worker and worker.get("argv"):  # died before creating its store: same argv again
            return list(worker["argv"]), Path(worker.get("cwd") or run_dir)
        raise InputError(f"cannot resume {run_dir}: {exc}") from exc
    if info is None or not info.command:
        raise InputError(f"cannot resume {run_dir}: the run row has no stored command")
    return _pin_out(program_argv(info.command), run_dir)


def _pin_out(args: list[str], run_dir: Path) -> tuple[list[str], Path]:
    """Keep ``--out`` pointing at this run dir whatever the current directory is."""
    out = out_dir_of(args)
    if out is None:
        return [*args, "--out", str(run_dir)], run_dir
    if Path(out).is_absolute():
        return args, run_dir.parent
    # a relative --out: run from the directory it was relative to, so other relative paths work
    parts = Path(out).parts
    cwd = run_dir
    for _ in parts:
        cwd = cwd.parent
    if (cwd / out).resolve() == run_dir:
        return args, cwd
    fixed = [str(run_dir) if a == out else (f"--out={run_dir}" if a == f"--out={out}" else a)
             for a in args]
    return fixed, run_dir.parent


def resume(run_dir: str | os.PathLike[str]) -> int:
    """Re-launch a stopped or died run detached; the executor skips its done cells."""
    run_dir = Path(run_dir).resolve()
    pid, _, host = _run_pid(run_dir)
    if same_host(host) and pid_alive(pid):
        raise InputError(f"{run_dir} is still running (pid {pid}); stop it first")
    args, cwd = resume_args(run_dir)
    return spawn_detached(args, run_dir, cwd=cwd)


def delete(run_dir: str | os.PathLike[str]) -> None:
    """Remove a run directory (refuses a running one and directories that are not runs)."""
    import shutil

    run_dir = Path(run_dir)
    if not ((run_dir / "store.sqlite").exists() or (run_dir / WORKER_JSON).exists()):
        raise InputError(f"{run_dir} is not a robustlab run directory; not deleting it")
    pid, _, host = _run_pid(run_dir)
    if same_host(host) and pid_alive(pid) and pid != os.getpid():
        raise InputError(f"{run_dir} is still running (pid {pid}); stop it before deleting")
    shutil.rmtree(run_dir)
