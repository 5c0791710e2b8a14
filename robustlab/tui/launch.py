"""Starting, stopping and resuming studies as detached ``robustlab`` processes (headless).

The TUI never runs a study itself: it launches the same command line a user would type, in a new
session (``start_new_session=True``) with stdout/stderr going to ``DIR/worker.log``, so closing the
TUI or dropping the SSH connection does not stop the run. ``DIR/worker.json`` records what was
launched (pid, start time, argv, cwd) so the run can be followed before its store exists. Stopping
sends SIGINT, which the executor turns into ``interrupted`` with in-flight cells back to pending,
then SIGTERM and SIGKILL to a worker still alive after a grace period (one started with ``&`` from
a script ignores SIGINT); resuming launches ``robustlab resume DIR``, which rebuilds the study from
its stored configuration.

Security: a run directory is data, never code (docs/run-directory.md, "Security"). Anyone who
can write a run directory (or sent it to you) controls its store and worker.json, so:

* **Resume runs only ``robustlab resume DIR``, with this interpreter.** Nothing stored in the run
  directory becomes part of the argv: the worker rebuilds the study from the stored
  configuration (:mod:`robustlab.studies.stored`: strict types, registered specs only), and
  the stored command line is only shown. The configuration is checked here first, so a run that
  cannot be resumed is refused before anything is launched.
* **Nothing is imported from beside the run directory.** ``-m`` puts the working directory first
  on ``sys.path``; ``-P`` (Python ≥ 3.11; a ``-c`` bootstrap that drops it on 3.10) keeps it
  off, and ``PYTHONSAFEPATH=1`` does the same for the worker's own child processes. ``-I`` would
  also do that but drops ``PYTHONPATH`` and user site-packages, which a checkout or a worktree
  may need; instead empty and relative ``PYTHONPATH`` entries (which mean the working directory)
  are dropped.
* **Confirm what runs.** :func:`resume_plan` returns the exact argv and directory; the TUI shows
  them in its confirmation dialog and launches exactly that plan.
* **Stop signals only the run's own worker**: a live process on this host whose start time is
  the one recorded when the run (or the launch) started, and whose command line is robustlab
  with this run directory as ``--out`` (:func:`verify_worker`). Never a bare pid from a file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.outputs import open_run_file, write_json
from robustlab.procs import (
    group_alive,
    pid_alive,
    process_cmdline,
    process_cwd,
    process_start,
    same_host,
)
from robustlab.runs.store import RunStore, StoreError
from robustlab.textfmt import printable
from robustlab.trust import REGISTERED_ONLY_ENV, clean_pythonpath, private_workdir

WORKER_LOG = "worker.log"
WORKER_JSON = "worker.json"
#: Python 3.10 has no -P: this bootstrap drops sys.path[0] (the cwd for -c) and runs robustlab
_BOOT_310 = ("import runpy, sys; del sys.path[0]; "
             "runpy.run_module('robustlab', run_name='__main__', alter_sys=True)")
#: a robustlab worker's own Python children (e.g. tools it runs) keep the cwd off sys.path too;
#: multiprocessing's children inherit -P itself
ROBUSTLAB_ENV = {"PYTHONSAFEPATH": "1", REGISTERED_ONLY_ENV: "1"}
_PYTHON = re.compile(r"python(\d+(\.\d+)*)?[a-z]?(\.exe)?$")
#: interpreter options that may precede ``-m robustlab`` in a stored or live command line
_PY_FLAGS = {"-P", "-I", "-s", "-E", "-u", "-B", "-O", "-OO", "-q", "-b", "-bb"}


def robustlab_argv(args: Sequence[str]) -> list[str]:
    """The full argv that runs ``robustlab ARGS`` with this interpreter, safely (no PATH lookup,
    no working directory on the import path)."""
    if sys.version_info >= (3, 11):
        return [sys.executable, "-P", "-m", "robustlab", *args]
    return [sys.executable, "-c", _BOOT_310, *args]


def safe_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment for a worker, minus import-path entries that mean "the cwd"."""
    env = {**os.environ, **(extra or {}), "PYTHONUNBUFFERED": "1"}
    kept = clean_pythonpath(env.get("PYTHONPATH"))
    if kept is None:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = kept
    return env


def resource_env(base: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """``ROBUSTLAB_SHARED`` resolved now, from ``base`` (the directory the user launched from,
    default the TUI's own), for a worker that may run elsewhere: a resumed run runs in its run
    directory, where ``../shared`` named another folder (its log looked for
    ``runs/shared/...``). Empty when the variable is already set (the worker inherits it) or no
    shared folder is there (the worker then says what is missing, as from the shell)."""
    if os.environ.get("ROBUSTLAB_SHARED"):
        return {}
    where = Path(base or os.getcwd()).resolve()
    for cand in (where / "shared", where.parent / "shared"):
        if cand.is_dir():
            return {"ROBUSTLAB_SHARED": str(cand.resolve())}
    return {}


def command_string(args: Sequence[str]) -> str:
    """The copyable shell form of ``robustlab ARGS``."""
    return shlex.join(["robustlab", *args])


def out_dir_of(args: Sequence[str]) -> str | None:
    """The run directory a robustlab argv writes: ``resume DIR``'s DIR, else its ``--out`` value,
    if any (the last one wins, as in argparse)."""
    if len(args) >= 2 and args[0] == "resume" and not args[1].startswith("-"):
        return args[1]
    found = None
    for i, a in enumerate(args):
        if a == "--out" and i + 1 < len(args):
            found = args[i + 1]
        elif a.startswith("--out="):
            found = a.split("=", 1)[1]
    return found


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False


def robustlab_args(tokens: Sequence[str], program: Sequence[str] | None = None) -> list[str]:
    """The robustlab options of a command line, or InputError if it does not run robustlab.

    Accepted: ``robustlab ARGS`` (any path to the console script), ``python [flags] -m robustlab
    ARGS``, ``python PATH/robustlab ARGS``, the 3.10 bootstrap of :func:`robustlab_argv`, and
    ``python SCRIPT ARGS`` when ``program`` (given by the caller, never read from a run
    directory) is ``[python, SCRIPT]``. Only the options are returned: the program itself is
    never taken from the command line.
    """
    tokens = list(tokens)
    if not tokens or not all(isinstance(t, str) for t in tokens):
        raise InputError("the command is empty or not a list of strings")
    head = Path(tokens[0]).name
    if head == "robustlab":
        return tokens[1:]
    if _PYTHON.fullmatch(head):
        rest = tokens[1:]
        if program is not None and len(program) >= 2 and len(rest) >= len(program) - 1 and all(
                _same_file(a, b) for a, b in zip(rest, program[1:], strict=False)):
            return rest[len(program) - 1:]
        while rest and rest[0] in _PY_FLAGS:
            rest = rest[1:]
        if rest[:2] == ["-m", "robustlab"]:
            return rest[2:]
        if rest[:2] == ["-c", _BOOT_310]:
            return rest[2:]
        if rest and (Path(rest[0]).name == "robustlab" or
                     rest[0].replace("\\", "/").endswith("robustlab/__main__.py")):
            return rest[1:]
    shown = printable(shlex.join(tokens))[:200]
    raise InputError(f"it does not run robustlab ({shown}); only robustlab commands are resumed "
                     "or stopped from the TUI")


@dataclass
class ResumePlan:
    """Exactly what :func:`resume` will run: shown for confirmation, then launched as it is."""

    run_dir: Path
    argv: list[str]
    cwd: Path
    #: the command line of the study it continues (derived from its stored configuration)
    study: str = ""

    @property
    def display(self) -> str:
        text = printable(shlex.join(self.argv)) + f"\n(in {printable(str(self.cwd))})"
        if self.study:
            text += f"\n\nwhich continues the stored study:\n{printable(self.study)}"
        return text


def read_worker(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The launcher's record (``worker.json``) if the TUI launched this run (None if absent or
    not a JSON object)."""
    try:
        data = json.loads((Path(run_dir) / WORKER_JSON).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# ---- launching ------------------------------------------------------------------------------------


def spawn_detached(argv: Sequence[str], run_dir: str | os.PathLike[str], *,
                   cwd: str | os.PathLike[str] | None = None,
                   env: dict[str, str] | None = None) -> int:
    """Start ``argv`` in its own session, logging to ``RUN_DIR/worker.log``; returns its pid."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    argv = list(argv)
    # O_NOFOLLOW, regular files only: a worker.log link planted in the run directory must not
    # make the worker append its output to the file it names
    log_fd = open_run_file(run_dir / WORKER_LOG, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    with os.fdopen(log_fd, "ab") as log:
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} launching: "
                  f"{shlex.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, env=safe_env(env), close_fds=True,
        )
    write_json(run_dir / WORKER_JSON, {
        "pid": proc.pid, "pgid": proc.pid, "host": socket.gethostname(),
        "start": process_start(proc.pid), "argv": argv, "command": shlex.join(argv),
        "cwd": str(Path(cwd or os.getcwd()).resolve()), "launched": time.time(),
        # the shared folder the worker was given (shown only; a resume resolves its own)
        "shared": (env or {}).get("ROBUSTLAB_SHARED") or os.environ.get("ROBUSTLAB_SHARED"),
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
    env = {**(ROBUSTLAB_ENV if not program else {}), **resource_env(base)}
    spawn_detached(argv, run_dir, cwd=base, env=env or None)
    return run_dir


# ---- which process runs a run ---------------------------------------------------------------------


@dataclass
class _Owner:
    pid: int | None
    host: str | None
    start: str | None  # process_start token recorded for that pid
    launched: bool  # worker.json names the same pid: the TUI started it as a group leader


def _owner(run_dir: Path) -> _Owner:
    worker = read_worker(run_dir)
    wpid = worker.get("pid") if worker else None
    try:
        with RunStore(run_dir, readonly=True) as store:
            info = store.run_info()
            start = store.worker_start()
    except StoreError:
        info, start = None, None
    if info is not None and info.pid:
        launched = bool(worker and wpid == info.pid)
        if start is None and launched:
            start = worker.get("start")  # type: ignore[union-attr]
        return _Owner(info.pid, info.host, start, launched)
    if worker and isinstance(wpid, int):
        return _Owner(wpid, worker.get("host"), worker.get("start"), True)
    return _Owner(None, None, None, False)


def verify_worker(pid: int, run_dir: Path, start: str | None,
                  program: Sequence[str] | None = None) -> str | None:
    """None if ``pid`` is verifiably this run's worker, else why not (one line)."""
    if process_start(pid) is None or process_cmdline(pid) is None:
        return f"pid {pid} cannot be inspected (no /proc here, or not our process)"
    if start and process_start(pid) != start:
        return f"pid {pid} started at another time than the run's worker (the pid was reused)"
    cmd = process_cmdline(pid) or []
    try:
        args = robustlab_args(cmd, program)
    except InputError:
        return f"pid {pid} is not a robustlab process ({printable(shlex.join(cmd))[:120]})"
    out = out_dir_of(args)
    cwd = process_cwd(pid)
    if out is None or cwd is None or (cwd / out).resolve() != run_dir.resolve():
        return f"pid {pid} is a robustlab process of another run directory"
    return None


#: seconds a worker gets after SIGINT (it marks its in-flight cells pending and exits), then after
#: SIGTERM, before the next signal
STOP_GRACE = (10.0, 5.0)


@dataclass
class StopResult:
    """What :func:`stop` did: the signal the worker stopped after (None: it is still alive) and
    the sentence the TUI shows."""

    pid: int
    signal: str | None
    message: str

    @property
    def stopped(self) -> bool:
        return self.signal is not None


def _gone(pid: int, group: bool) -> bool:
    """The worker exited (and, for a process group it leads, every process of the group did).

    A zombie is gone. Only a group leader is reaped here (the TUI launched it: it is our child);
    any other worker's exit status is left to its parent.
    """
    if pid_alive(pid, reap=group):
        return False
    # a group id is not reused while any member lives, so this is still the run's group
    return not group or not group_alive(pid)


def _wait_gone(pid: int, group: bool, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while not _gone(pid, group):
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)
    return True


def stop(run_dir: str | os.PathLike[str], program: Sequence[str] | None = None, *,
         grace: tuple[float, float] = STOP_GRACE,
         report: Callable[[str], None] | None = None) -> StopResult:
    """Stop the run's worker (its whole process group if the TUI launched it): SIGINT, then
    SIGTERM after ``grace[0]`` seconds, then SIGKILL after ``grace[1]`` more, until it is gone.

    Only a process verified by :func:`verify_worker` is signalled, and it is verified again
    (same start time: not a reused pid) before each further signal. ``report`` receives a line
    at each escalation (the TUI shows it at once); the result says which signal stopped the
    worker, or that it is still alive. Blocks for up to ``sum(grace)`` seconds plus one: call it
    from a thread.
    """
    run_dir = Path(run_dir).resolve()
    owner = _owner(run_dir)
    if not same_host(owner.host):
        raise InputError(f"the run is executing on {owner.host}; stop it there")
    pid = owner.pid
    if not pid_alive(pid):
        raise InputError(f"no live worker for {run_dir} (pid {pid} is gone)")
    assert pid is not None
    why = verify_worker(pid, run_dir, owner.start, program)
    if why:
        raise InputError(f"not stopping pid {pid}: {why}; if the run is still going, stop it "
                         "yourself (Ctrl-C in its terminal, or kill -INT)")
    token = process_start(pid)  # this process, for the re-verifications below
    gone = InputError(f"the worker of {run_dir} exited before it could be stopped")
    try:
        group = owner.launched and os.getpgid(pid) == pid
    except ProcessLookupError:
        raise gone from None
    what = f"worker {pid}" + (" and its process group" if group else "")
    say = report or (lambda _line: None)
    steps = [(signal.SIGINT, grace[0]), (signal.SIGTERM, grace[1]), (signal.SIGKILL, 1.0)]
    sent: list[str] = []
    for sig, wait in steps:
        if sent:
            if _gone(pid, group):
                break
            if pid_alive(pid, reap=False):
                why = verify_worker(pid, run_dir, token, program)
                if why:
                    return StopResult(pid, None, f"{what} did not stop after {sent[-1]}, and pid "
                                      f"{pid} no longer verifies as its worker ({why}): not "
                                      f"signalling it again")
        try:
            if group:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)
        except ProcessLookupError:
            if not sent:
                raise gone from None
            break  # exited meanwhile
        if sent:
            say(f"{what} did not stop {grace[len(sent) - 1]:g} s after {sent[-1]}; sent "
                f"{sig.name}")
        else:
            say(f"sent SIGINT (Ctrl-C) to {what}; waiting up to {wait:g} s for it to stop")
        sent.append(sig.name)
        if _wait_gone(pid, group, wait):
            break
    else:
        return StopResult(pid, None, f"{what} is still alive after SIGINT, SIGTERM and SIGKILL "
                                     "(stuck in the kernel?): check it with ps")
    last = sent[-1]
    if last == "SIGINT":
        message = f"{what} stopped with SIGINT: in-flight cells went back to pending"
    elif last == "SIGTERM":
        message = (f"{what} did not stop after SIGINT; sent SIGTERM: it stopped (cells it was "
                   "computing are reclaimed when the run resumes)")
    else:
        message = (f"{what} did not stop after SIGINT nor SIGTERM: killed (SIGKILL; cells it was "
                   "computing are reclaimed when the run resumes)")
    return StopResult(pid, last, message)


# ---- resuming -------------------------------------------------------------------------------------


def resume_plan(run_dir: str | os.PathLike[str], *, program: Sequence[str] | None = None
                ) -> ResumePlan:
    """What resuming ``run_dir`` would run, checked (InputError naming the reason if refused).

    The argv is ``python -P -m robustlab resume DIR`` (``program`` replaces ``python -P -m
    robustlab`` in tests, whose study script implements ``resume DIR`` itself): nothing read from
    the run directory enters it. Without ``program`` the stored study is read here, as the worker
    will read it, so a run that cannot be resumed is refused before anything is launched.
    """
    from robustlab.studies.stored import load

    run_dir = Path(run_dir).resolve()
    study = ""
    if program is None:
        try:
            study = load(run_dir).command
        except InputError as exc:
            raise InputError(f"refusing to resume {printable(str(run_dir))}: {exc}") from None
    args = ["resume", str(run_dir)]
    argv = [*program, *args] if program else robustlab_argv(args)
    # never the run directory or its parent: anyone who could write them would choose what a
    # library finds by name in the working directory (a file called `upos-fast`, a folder
    # called `bert-base-uncased`); the worker resolves every path of the run explicitly
    return ResumePlan(run_dir, argv, private_workdir(), study)


def resume(run_dir: str | os.PathLike[str], *, plan: ResumePlan | None = None,
           program: Sequence[str] | None = None) -> int:
    """Re-launch a stopped or died run detached (the executor skips its done cells).

    ``plan`` is the one the user confirmed (:func:`resume_plan`); without it one is made now.
    """
    run_dir = Path(run_dir).resolve()
    owner = _owner(run_dir)
    if same_host(owner.host) and pid_alive(owner.pid) and verify_worker(
            owner.pid, run_dir, owner.start, program) is None:  # type: ignore[arg-type]
        raise InputError(f"{run_dir} is still running (pid {owner.pid}); stop it first")
    if plan is None:
        plan = resume_plan(run_dir, program=program)
    if plan.run_dir != run_dir:
        raise InputError(f"the plan is for {plan.run_dir}, not {run_dir}")
    # the shared folder as seen from where the TUI runs (the run directory's ../shared is
    # somewhere else): only a fallback, `robustlab resume` uses the one the run recorded at
    # its first start when that folder still exists (resources.use_recorded_shared)
    env = {**(ROBUSTLAB_ENV if not program else {}), **resource_env()}
    return spawn_detached(plan.argv, run_dir, cwd=plan.cwd, env=env or None)


def delete(run_dir: str | os.PathLike[str]) -> None:
    """Remove a run directory (refuses a running one and directories that are not runs)."""
    import shutil

    run_dir = Path(run_dir)
    if not ((run_dir / "store.sqlite").exists() or (run_dir / WORKER_JSON).exists()):
        raise InputError(f"{run_dir} is not a robustlab run directory; not deleting it")
    owner = _owner(run_dir.resolve())
    # refusing is harmless, so any live process started when the run's worker did counts
    if (same_host(owner.host) and pid_alive(owner.pid) and owner.pid != os.getpid()
            and (owner.start is None or process_start(owner.pid) == owner.start)):
        raise InputError(f"{run_dir} is still running (pid {owner.pid}); stop it before deleting")
    shutil.rmtree(run_dir)
