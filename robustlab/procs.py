"""Process liveness and identity, shared by the executor (reclaiming cells of dead workers), the
run store (recording who runs a study) and the TUI (stopping a run's worker).

A pid alone names a process only until it exits: pids are reused, and a run directory can be
written by anyone. So a process is identified by its pid **and** its start time (``/proc/PID/stat``
field 22, clock ticks since boot, with the boot id), and the TUI only signals a process whose
command line is the run's own worker (see :func:`robustlab.tui.launch.stop`). These checks read
``/proc`` (Linux); where it is absent nothing can be verified and callers refuse to signal.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path


def pid_alive(pid: int | None, *, reap: bool = True) -> bool:
    """True if ``pid`` is a live (non-zombie) process on this host. A zombie that is our own
    child is collected, unless ``reap=False`` (its exit status then stays with its parent's
    ``wait``, e.g. the ``Popen`` that started it)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (not Linux): trust kill(0)
    state = stat.rsplit(")", 1)[-1].split()[0]
    if state in ("Z", "X"):
        if reap:
            _reap(pid)
        return False
    return True


def group_alive(pgid: int) -> bool:
    """True if process group ``pgid`` has a live (non-zombie) member on this host. Zombies do not
    count: an orphan killed in a container whose init does not reap stays one."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True  # no /proc (not Linux): trust killpg
    for name in entries:
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue  # exited meanwhile
        fields = stat.rsplit(")", 1)[-1].split()  # state (field 3), ppid, pgrp (field 5), …
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            return True
    return False


def _reap(pid: int) -> None:
    """Collect a zombie child we launched ourselves (harmless for others' pids)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def same_host(host: str | None) -> bool:
    return host is None or host == socket.gethostname()


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "?"


def process_start(pid: int | None) -> str | None:
    """A token that identifies the process ``pid`` for its whole life (boot id + start ticks),
    or None if it does not exist or cannot be read (no /proc)."""
    if not isinstance(pid, int) or pid <= 0:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    # after "pid (comm)": field 3 (state) is fields[0], so field 22 (starttime) is fields[19]
    if len(fields) < 20:
        return None
    return f"{_boot_id()}:{fields[19]}"


def process_cmdline(pid: int) -> list[str] | None:
    """The argv of a live process (None if gone or unreadable)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    if not raw:
        return None  # a zombie or kernel thread
    return [a.decode("utf-8", "surrogateescape") for a in raw.rstrip(b"\0").split(b"\0")]


def process_cwd(pid: int) -> Path | None:
    """The working directory of a live process (None if unreadable)."""
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def answer_ctrl_c() -> None:
    """Make SIGINT raise KeyboardInterrupt in this process whatever it inherited. A process
    started as a background job (``nohup robustlab … &``, ``cmd &`` in a script: how long studies
    are started on servers over SSH) inherits SIGINT *ignored*, and Python then installs no
    handler: the study would never react to Ctrl-C or to the TUI's Stop (which sends SIGINT so
    in-flight cells go back to pending). Called first thing by each study entry point."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
