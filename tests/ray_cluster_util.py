"""A real local Ray cluster for the tests, started the way a user starts one.

``ray start --head`` plus a second ``ray start --address`` node, each with its own temp dir,
token authentication on (``RAY_AUTH_MODE=token``, a fresh ``RAY_AUTH_TOKEN``) and ``HOME``
pointed at a private directory so nothing touches the real ``~/.ray``. Every process a
``ray start`` leaves behind stays in the process group of that command (started in a new
session), so :meth:`LocalCluster.stop` kills exactly this cluster's processes: ``ray stop``
would stop every Ray process on the machine, other users' included.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).with_name("ray")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalCluster:
    """Head + one more node on this machine; workers run with cwd in an unrelated directory."""

    def __init__(self, cpus_per_node: int = 1, extra_env: dict[str, str] | None = None) -> None:
        # short paths: Ray's unix sockets live under the temp dir (108-byte limit)
        self.root = Path(tempfile.mkdtemp(prefix="rlray-", dir="/tmp"))
        self.home = self.root / "home"
        self.cwd = self.root / "elsewhere"  # the nodes' working directory: no run dir, no data
        for d in (self.home, self.cwd):
            d.mkdir()
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.token = secrets.token_hex(16)
        self.env = {**os.environ, "HOME": str(self.home), "RAY_AUTH_MODE": "token",
                    "RAY_AUTH_TOKEN": self.token, "RAY_USAGE_STATS_ENABLED": "0",
                    "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests")]),
                    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                    "TOKENIZERS_PARALLELISM": "false", **(extra_env or {})}
        self.env.pop("RAY_ADDRESS", None)
        self.cpus = cpus_per_node
        self.pgids: list[int] = []

    def _start(self, *args: str) -> None:
        proc = subprocess.Popen([str(RAY), "start", *args, "--num-cpus", str(self.cpus),
                                 "--num-gpus", "0", "--disable-usage-stats"],
                                cwd=self.cwd, env=self.env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.pgids.append(proc.pid)  # the new session's id = its process group
        out, _ = proc.communicate(timeout=180)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{out[-3000:]}")

    def start(self) -> LocalCluster:
        try:
            self._start("--head", "--port", str(self.port), "--node-ip-address", "127.0.0.1",
                        "--temp-dir", str(self.root / "head"), "--include-dashboard", "false")
            self._start("--address", self.address, "--node-ip-address", "127.0.0.1",
                        "--temp-dir", str(self.root / "node2"))
        except BaseException:
            self.stop()
            raise
        return self

    def driver_env(self, **extra: str) -> dict[str, str]:
        return {**self.env, **extra}

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pgid in self.pgids:
                try:
                    os.killpg(pgid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
            if sig == signal.SIGTERM:
                time.sleep(2)
        shutil.rmtree(self.root, ignore_errors=True)
