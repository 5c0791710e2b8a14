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

    def _start(self, *args: str, tries: int = 3) -> None:
        """``ray start ARGS``; retried, since on a loaded machine a raylet can miss Ray's fixed
        30 s registration window ("The current node timed out during startup")."""
        for attempt in range(tries):
            try:
                return self._start_once(*args)
            except RuntimeError:
                if attempt == tries - 1:
                    raise
                self.kill(self.pgids.pop())

    def _start_once(self, *args: str) -> None:
        proc = subprocess.Popen([str(RAY), "start", *args, "--num-cpus", str(self.cpus),
                                 "--num-gpus", "0", "--disable-usage-stats"],
                                cwd=self.cwd, env=self.env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.pgids.append(proc.pid)  # the new session's id = its process group
        out, _ = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start {' '.join(args)} failed:\n{out[-3000:]}")

    def start(self) -> LocalCluster:
        try:
            self._start("--head", "--port", str(self.port),
                        "--temp-dir", str(self.root / "head"), "--include-dashboard", "false")
            self._start("--address", self.address,
                        "--temp-dir", str(self.root / "node2"))
        except BaseException:
            self.stop()
            raise
        return self

    def driver_env(self, **extra: str) -> dict[str, str]:
        return {**self.env, **extra}

    @staticmethod
    def kill(pgid: int) -> None:
        """End every process of one ``ray start`` (its process group), TERM then KILL."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pgid, sig)
            except (ProcessLookupError, PermissionError):
                return
            if sig == signal.SIGTERM:
                time.sleep(2)

    def stop(self) -> None:
        for pgid in reversed(self.pgids):
            self.kill(pgid)
        self.pgids.clear()
        shutil.rmtree(self.root, ignore_errors=True)


# ---- functions the tests run in other processes (importable there: tests/ is on PYTHONPATH) ----

TIMING = {"seconds", "train_seconds", "predict_seconds", "model_seconds", "signature"}


def stable(result: dict) -> dict:
    """A cell result without its timings (which differ run to run)."""
    return {k: v for k, v in result.items() if k not in TIMING}


def run_portable(splits, params_list: list[dict]) -> list[dict]:
    """A worker without the driver's files: install the splits, run cells from portable params."""
    from robustlab.studies.learnability.study import install_splits, run_cell

    install_splits(splits)
    return [stable(run_cell("learnability", p).result) for p in params_list]


def dying_cell(kind: str, params: dict):
    """``run_cell``, but the worker process SIGKILLs itself: once for the cell key written in
    ``$RL_KILL_DIR/once`` (the file ``killed`` records the kill), always for the key in
    ``$RL_KILL_DIR/always``. (Files, since the nodes' environment is fixed at ``ray start``.)"""
    from robustlab.studies.learnability.study import cell_key, run_cell

    key = cell_key(params["model"], params["perturbation"], params["experiment"], params["p"],
                   params["seed"])
    d = Path(os.environ["RL_KILL_DIR"])

    def named(name: str) -> bool:
        return (d / name).is_file() and (d / name).read_text() == key

    if named("always") or (named("once") and not (d / "killed").exists()):
        (d / "killed").write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)
    return run_cell(kind, params)


def fault_driver(address: str, spec: dict, out: str, max_retries: int) -> None:
    """A driver running a learnability study with :func:`dying_cell` on the cluster."""
    from robustlab.runs.executor import run_cells
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability.data import load_splits
    from robustlab.studies.learnability.study import LearnabilityStudy, ray_options

    study = LearnabilityStudy(**STUDY, dataset=spec)
    splits = load_splits(spec)
    cells = study.cells(splits.fingerprint, cache_dir=str(Path(out) / ".model-cache"))
    options = ray_options(address, 0.0, 1.0, splits, cells)
    with RunStore(out) as store:
        store.init_run(study.kind, "faults", study.config())
        run_cells(store, cells, dying_cell, executor="ray", workers=2, progress=False,
                  max_retries=max_retries, **options)


#: the small study of the cluster tests (bow, 2 perturbations, 2 p values, 1 seed, 20 steps)
STUDY = {"models": ("bow",), "perturbations": ("identity", "leet_letters"),
         "p_grid": (0.1, 1.0), "seeds": (0,), "steps": 20}
