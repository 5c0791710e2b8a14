"""Process liveness, shared by the executor (reclaiming cells of dead workers) and the TUI."""

from __future__ import annotations

import os
import socket
from pathlib import Path


def pid_alive(pid: int | None) -> bool:
    """True if ``pid`` is a live (non-zombie) process on this host."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (not Linux): trust kill(0)
    state = stat.rsplit(")", 1)[-1].split()[0]
    if state in ("Z", "X"):
        _reap(pid)
        return False
    return True


def _reap(pid: int) -> None:
    """Collect a zombie child we launched ourselves (harmless for others' pids)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except (ChildProcessError, OSError):
        pass


def same_host(host: str | None) -> bool:
    return host is None or host == socket.gethostname()
