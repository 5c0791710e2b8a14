"""Cells as Ray tasks on a cluster whose nodes share nothing with the driver but Ray itself.

What a cell needs besides its parameters travels through Ray's object store, never through
paths: the cell function is put there once per study, and a study's *travel kit*
(:class:`Travel`) puts its shared data there once (e.g. the prepared train/test splits) and
rewrites each cell's parameters on the driver so that none names a driver path. A worker process
fetches and installs each of them once (cached by object id), so a cell costs one small task
submission, whatever the size of the data.

* **Authentication.** Ray clusters (2.60 here) started with ``ray start --head`` ask for a token. With
  ``--ray-address`` and ``RAY_AUTH_MODE`` unset, a token found here (``RAY_AUTH_TOKEN``,
  ``RAY_AUTH_TOKEN_PATH`` or ``~/.ray/auth_token``) switches token mode on, as ``ray start``
  does for a local head; a refused or missing token becomes an :class:`InputError` naming the fix
  instead of Ray's 20 s of ``InvalidAuthToken`` retries and a bare ``ConnectionError``.
* **Resources.** ``num_cpus`` / ``num_gpus`` per task (fractional GPUs allowed). Ray sets
  ``CUDA_VISIBLE_DEVICES`` to the GPUs it assigned; a task given no GPU gets an empty
  ``CUDA_VISIBLE_DEVICES`` (Ray leaves it untouched by default), so ``--device auto`` on a GPU
  node does not silently share a GPU the scheduler never handed out.
* **Unreachable clusters.** ``ray.init(address=…)`` retries a head that does not answer for
  ever, inside C++ code where neither Ctrl-C nor SIGTERM gets through (Ray's own SIGTERM handler
  cannot run). :func:`connect` first opens a TCP connection to the address (a refused port, an
  unknown host or no answer within :data:`PROBE_TIMEOUT` s is one line naming the address),
  then bounds ``ray.init`` itself by :data:`CONNECT_TIMEOUT` s (``$ROBUSTLAB_RAY_CONNECT_TIMEOUT``
  overrides it) with a watchdog thread that also answers SIGINT/SIGTERM during the wait: one
  line and exit 2, 130 or 143. Studies connect before creating their run directory, so nothing
  is left behind.
* **A private local node on a busy machine.** ``ray.init()`` without an address starts, one
  after another: ``gcs_server``, the autoscaler monitor, the dashboard head (with
  ``include_dashboard=False`` only its usage-stats module; ``ray.init`` still waits for it), the
  log monitor, the raylet, and under the raylet the dashboard agent and the runtime-env agent,
  plus a reaper: five Python interpreters, each ~3 CPU-seconds of imports. ``ray.init`` offers
  no switch for the monitor, log monitor or agents, and ``_system_config`` none that skips
  them. Two waits in Ray 2.60 are fixed: the raylet aborts when the dashboard agent has not
  written its port files within 15 s (``agent_register_timeout_ms`` does not apply: measured
  with an agent delayed 20 s; pre-selecting its ports does not help either, the raylet is never
  told the HTTP listen port), and ``node.py`` gives the raylet 30 s to register. At load ~15 on
  2 cores an agent misses its 15 s now and then (1 of the Ray starts in a 98-minute loaded
  suite). :func:`start_local` starts lean (no dashboard, no log forwarding), and on Ray's
  startup timeout ends every process the failed attempt left (psutil; nothing survives it,
  a reaped half-started node otherwise keeps ``gcs_server`` and friends running), says so in
  one line and tries once more; a second failure is one line naming the load and the fix.
* **Faults.** A task whose worker process or node dies is retried by Ray on any node
  (``max_retries``, default 3); after the last attempt the cell is stored as failed with the
  reason. Ray retries only system failures: a cell that raises is a result (its traceback), so
  nothing runs twice once it finished, and only the driver writes the store.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.runs.cells import EXECUTORS, CellFn, PoolBackend, call_cell
from robustlab.runs.store import Cell
from robustlab.textfmt import echo

#: attempts after the first when a worker process or node dies mid-cell
MAX_RETRIES = 3
#: seconds to open a TCP connection to ``--ray-address`` before calling it unreachable
PROBE_TIMEOUT = 10.0
#: attempts at starting a private local node (Ray's own startup waits are fixed; see above)
LOCAL_START_ATTEMPTS = 2
#: the message of the exception Ray raises when a starting node misses its fixed waits
RAY_STARTUP_TIMEOUT = "The current node timed out during startup"
#: seconds a left-over process of a failed start gets between SIGTERM and SIGKILL
REAP_GRACE = 5.0
#: rounds of finding and ending a failed start's processes (the last one should find none)
REAP_SWEEPS = 4
#: seconds ``ray.init`` may take to join the cluster at ``--ray-address`` (a head that accepts
#: connections but does not answer as Ray); ``$ROBUSTLAB_RAY_CONNECT_TIMEOUT`` overrides it
CONNECT_TIMEOUT = 60.0
#: directory under the node's temp dir for node-local caches (``node:NAME`` in cell parameters)
NODE_CACHE = "robustlab-node-cache"
NODE_PREFIX = "node:"


@dataclass(frozen=True)
class Travel:
    """How a study's cells run on machines that cannot see the driver's files.

    ``shared`` is put into the object store once per study; ``install`` (a top-level function)
    receives it once in each worker process before that process's first cell. ``portable``
    (top-level) maps a cell's parameters to parameters naming no driver path; it runs on the
    driver, the store keeps the original parameters. ``node_dirs`` are ``node:NAME`` cache
    directories the study's cells use, removed from every node when the study ends.
    """

    shared: Any = None
    install: Callable[[Any], None] | None = None
    portable: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    node_dirs: tuple[str, ...] = ()


def node_dir(value: str | None) -> str | None:
    """A ``node:NAME`` parameter as this node's own directory (other values unchanged)."""
    if not value or not str(value).startswith(NODE_PREFIX):
        return value
    name = str(value)[len(NODE_PREFIX):]
    if not name or "/" in name or name in (".", ".."):
        raise ValueError(f"bad node-local directory name {value!r}")
    return str(Path(tempfile.gettempdir()) / NODE_CACHE / name)


def _remove_node_dirs(names: tuple[str, ...]) -> None:
    for name in names:
        d = node_dir(name)
        if d:
            shutil.rmtree(d, ignore_errors=True)


def check_resources(workers: int, gpus_per_task: float, cpus_per_task: float) -> None:
    """Validate the execution options before a run directory is created."""
    if int(workers) < 1:
        raise InputError(f"--workers must be >= 1, got {workers}")
    if not gpus_per_task >= 0:
        raise InputError(f"--gpus-per-task must be >= 0, got {gpus_per_task}")
    if not cpus_per_task > 0:
        raise InputError(f"--cpus-per-task must be > 0, got {cpus_per_task}")


def prepare(executor: str, workers: int, address: str | None, gpus_per_task: float = 0.0,
            cpus_per_task: float = 1.0, travel: Travel | None = None) -> dict[str, Any]:
    """Check the options and, for Ray, join the cluster; returns ``run_cells``' backend options.

    Call it before creating the run directory: bad options or an unreachable cluster then
    leave nothing behind.
    """

    if executor not in EXECUTORS:
        raise InputError(f"--executor: unknown {executor!r}; choose one of {', '.join(EXECUTORS)}")
    check_resources(workers, gpus_per_task, cpus_per_task)
    if executor != "ray":
        return {}
    connect(address, workers)
    return {"num_gpus": float(gpus_per_task), "num_cpus": float(cpus_per_task),
            "address": address, "travel": travel}


# ---- authentication ------------------------------------------------------------------------------


def token_available() -> bool:
    """Whether Ray would find an authentication token here (env, token file or ~/.ray)."""
    if os.environ.get("RAY_AUTH_TOKEN", "").strip():
        return True
    path = os.environ.get("RAY_AUTH_TOKEN_PATH")
    candidates = [Path(path)] if path else []
    candidates.append(Path.home() / ".ray" / "auth_token")
    return any(p.is_file() and p.stat().st_size > 0 for p in candidates)


def _auth_fix(address: str) -> str:
    return (f"copy the cluster's token from the head node (`ray get-auth-token` there) and set "
            f"RAY_AUTH_MODE=token RAY_AUTH_TOKEN=<token> (or put it in ~/.ray/auth_token) before "
            f"--ray-address {address}")


def _enable_token_mode() -> None:
    """``RAY_AUTH_MODE=token`` for this process (ray.init never enables it for an explicit
    address; ``ray start`` does). Ray caches its configuration at import: refresh it too."""
    os.environ["RAY_AUTH_MODE"] = "token"
    try:
        from ray._raylet import Config  # the refresh Ray's own _enable_token_auth does
    except ImportError:  # pragma: no cover - another Ray layout: the env var alone
        return
    Config.initialize("")


_OWNED = False  # whether robustlab's connect() made this process's Ray connection


def worker_runtime_env() -> dict[str, Any]:
    """Ray workers run in a private empty directory and never import from the driver's.

    Without a ``working_dir`` Ray puts the driver's working directory *first* on every worker's
    ``sys.path`` (``job_config.py_driver_sys_path``) and starts the workers in it: a ``torch/``
    or ``robustlab/`` folder, or a file named ``upos-fast``, there would be what the workers
    import or load. An empty ``working_dir`` (uploaded once, a few bytes) replaces both; the
    workers also unpickle tensors only and keep the working directory off their children's
    import path (:func:`robustlab.trust.harden_process`)."""
    from robustlab.trust import FORCE_WEIGHTS_ONLY_ENV, private_workdir

    return {"working_dir": str(private_workdir()),
            "env_vars": {"PYTHONSAFEPATH": "1", FORCE_WEIGHTS_ONLY_ENV: "1"}}


def connect(address: str | None, workers: int = 1) -> None:
    """``ray.init`` for an existing cluster (``address``) or a private local one.

    Studies call it before creating their run directory, so a cluster that cannot be joined
    leaves nothing behind; a connection made here is closed by the backend at the end.
    A connection the caller made itself (``ray.init`` before the study) is used as it is.
    """
    global _OWNED
    try:
        import ray
    except ModuleNotFoundError as exc:
        raise InputError("--executor ray needs ray: pip install 'robustlab[ray]'") from exc
    if ray.is_initialized():
        return
    if not address:
        start_local(max(1, workers), worker_runtime_env())
        _OWNED = True
        return
    kwargs: dict[str, Any] = {**lean_init_options(), "runtime_env": worker_runtime_env()}
    if os.environ.get("RAY_AUTH_MODE") is None and token_available():
        _enable_token_mode()
    from ray.exceptions import AuthenticationError

    _probe(address)
    try:
        with _bounded(address, connect_timeout()):
            ray.init(address=address, **kwargs)
    except AuthenticationError as exc:
        raise InputError(f"--ray-address {address}: token authentication is on but no token "
                         f"was found here; {_auth_fix(address)}") from exc
    except ConnectionError as exc:
        if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
            hint = ("the cluster refused the connection: the token here may not be the "
                    "cluster's (compare with `ray get-auth-token` on the head node), or the "
                    "address is wrong or the head is down")
        else:
            hint = ("no authentication token here, and clusters started by `ray start --head` "
                    f"with Ray 2.60 require one (InvalidAuthToken): {_auth_fix(address)}; "
                    "otherwise check the address and that the head is running")
        raise InputError(f"--ray-address {address}: cannot join the Ray cluster ({exc}); "
                         f"{hint}") from exc
    _OWNED = True


def lean_init_options() -> dict[str, Any]:
    """The ``ray.init`` options of a lean private node: no dashboard (its head then loads one
    module), no worker-log forwarding. Tests that start Ray themselves use them too."""
    return {"include_dashboard": False, "log_to_driver": False}


def start_local(num_cpus: int, runtime_env: dict[str, Any] | None = None,
                **init_options: Any) -> None:
    """Start a private local Ray node (``ray.init`` without an address), lean, robust to load.

    When Ray gives up on its own startup (:data:`RAY_STARTUP_TIMEOUT`: the raylet or its
    dashboard agent missed Ray's fixed waits), the processes that attempt started are ended and
    the start is tried once more, with one line on stderr; a second failure is an
    :class:`InputError` naming the load and the fix. Other errors propagate unchanged.
    ``init_options`` go to ``ray.init`` as they are (tests pass a short ``_temp_dir``).
    """
    import sys

    import ray

    for attempt in range(1, LOCAL_START_ATTEMPTS + 1):
        before = _our_ray_pids()
        try:
            with lean_imports():
                ray.init(num_cpus=num_cpus, runtime_env=runtime_env,
                         **{**lean_init_options(), **init_options})
            return
        except Exception as exc:  # noqa: BLE001 - Ray raises a bare Exception for this
            if RAY_STARTUP_TIMEOUT not in str(exc):
                raise
            left = _reap_failed_start(before)
            load = _load_text()
            if left:
                raise InputError(
                    f"the local Ray node timed out during startup ({load}) and its processes "
                    f"{', '.join(left)} could not be stopped; stop them, then retry") from exc
            if attempt == LOCAL_START_ATTEMPTS:
                raise InputError(
                    f"the local Ray node timed out during startup {attempt} times ({load}): "
                    "Ray's raylet gives its dashboard agent a fixed 15 s to start; run when the "
                    "machine is less busy, or start a cluster once with `ray start --head` and "
                    "pass --ray-address auto") from exc
            echo(f"robustlab: the local Ray node timed out during startup ({load}); its "
                 "processes are stopped, trying once more", file=sys.stderr, flush=True)


#: optional modules hidden from the processes of a private node (:func:`lean_imports`)
LEAN_HIDDEN = ("rfc3987_syntax",)


@contextlib.contextmanager
def lean_imports() -> Iterator[None]:
    """Start the node's processes with :data:`LEAN_HIDDEN` unimportable.

    Every Ray process (GCS monitor, dashboard head and agent, runtime-env agent, log monitor,
    workers) imports ``jsonschema``, and jsonschema imports ``rfc3987_syntax`` when it is
    installed (jupyter's ``jsonschema[format-nongpl]``, which CheckList's install brings), which
    builds an Earley grammar at import: ``import ray.dashboard.agent`` took 3.9 s with it and
    1.0 s without (``python -X importtime`` put 5.0 of 5.9 s on it at another load). Six such
    imports at once on two cores made the dashboard agent miss the raylet's fixed 15 s. Ray checks
    no IRI format, and jsonschema treats the module as optional. The node's processes inherit the
    environment ``ray.init`` starts them with, so a fresh private folder holding a module that
    raises ImportError goes first on ``PYTHONPATH`` for that call only; the folder stays until
    this process exits (workers started later import through it)."""
    folder = tempfile.mkdtemp(prefix="robustlab-ray-lean-")
    for name in LEAN_HIDDEN:
        Path(folder, f"{name}.py").write_text(
            f'raise ImportError("{name} is hidden from Ray\'s processes by robustlab '
            '(runs/ray_backend.py: lean_imports)")\n', encoding="utf-8")
    import atexit

    atexit.register(shutil.rmtree, folder, True)
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join([folder, *filter(None, (old or "").split(
        os.pathsep))])
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


def _load_text() -> str:
    """``load 14.2 on 2 cores`` (the one-minute load average), for messages."""
    try:
        one = os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this platform
        return f"{os.cpu_count()} cores"
    return f"load {one:.1f} on {os.cpu_count()} cores"


def _our_ray_pids() -> set[int]:
    """This process's descendants, and the processes of a Ray session this process started
    (``session_<date>_<pid>`` in their command line: an agent whose raylet died is no longer
    our descendant)."""
    import re

    import psutil

    pids = {p.pid for p in psutil.Process().children(recursive=True)}
    mark = re.compile(rf"session_[0-9_-]+_{os.getpid()}(?![0-9])")
    for p in psutil.process_iter(["cmdline"]):
        with contextlib.suppress(psutil.Error, TypeError):
            if p.pid != os.getpid() and mark.search(" ".join(p.info["cmdline"] or ())):
                pids.add(p.pid)
    return pids


def _reap_failed_start(before: set[int]) -> list[str]:
    """End the processes a failed local start left (gcs_server, raylet, monitors, agents,
    reaper): those of :func:`_our_ray_pids` that were not there before it. ``ray.shutdown()``
    cannot: the node never reached Ray's globals. Sweeps until one finds nothing (a raylet may
    spawn its agents while it is being stopped; a dead process spawns none). Returns
    ``name(pid)`` of any that survive SIGTERM and SIGKILL."""
    import psutil
    import ray

    with contextlib.suppress(Exception):  # a half-initialised worker state, if any
        ray.shutdown()
    alive: list[psutil.Process] = []
    for _sweep in range(REAP_SWEEPS):
        procs = []
        for pid in sorted(_our_ray_pids() - before):
            with contextlib.suppress(psutil.Error):
                proc = psutil.Process(pid)
                if proc.status() != psutil.STATUS_ZOMBIE:
                    procs.append(proc)
                else:  # our own child: collect it
                    with contextlib.suppress(psutil.Error):
                        proc.wait(0)
        if not procs:
            return []
        for p in procs:
            with contextlib.suppress(psutil.Error):
                p.terminate()
        _gone, alive = psutil.wait_procs(procs, timeout=REAP_GRACE)
        for p in alive:
            with contextlib.suppress(psutil.Error):
                p.kill()
        _gone, alive = psutil.wait_procs(alive, timeout=REAP_GRACE)
    left = []
    for p in alive:
        with contextlib.suppress(psutil.Error):
            left.append(f"{p.name()}({p.pid})")
    return left


def connect_timeout() -> float:
    """:data:`CONNECT_TIMEOUT`, or ``$ROBUSTLAB_RAY_CONNECT_TIMEOUT`` when set (seconds > 0)."""
    text = os.environ.get("ROBUSTLAB_RAY_CONNECT_TIMEOUT")
    if not text:
        return CONNECT_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):
        raise InputError(f"ROBUSTLAB_RAY_CONNECT_TIMEOUT={text!r}: expected seconds > 0")
    return value


def _host_port(address: str) -> tuple[str, int] | None:
    """``host:port`` of a cluster address (``ray://`` client addresses too; ``[v6]:port``);
    None for what Ray resolves itself (``auto``, ``local``) or cannot be parsed here."""
    text = address.strip()
    if "://" in text:
        text = text.split("://", 1)[1]
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _probe(address: str) -> None:
    """A TCP connection to the head, opened and closed: an address nothing listens on is one
    line now, instead of Ray's endless retries."""
    import socket

    target = _host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=PROBE_TIMEOUT).close()
    except socket.gaierror as exc:
        why = f"the host name does not resolve ({exc.strerror or exc})"
    except TimeoutError:
        why = f"no answer within {PROBE_TIMEOUT:g} s"
    except OSError as exc:
        why = exc.strerror or str(exc)
    else:
        return
    raise InputError(f"--ray-address {address}: cannot reach the Ray cluster: {why}; check the "
                     "address (the head's GCS port, 6379 by default) and that `ray start "
                     "--head` runs there")


@contextlib.contextmanager
def _bounded(address: str, timeout: float) -> Iterator[None]:
    """Run the body (``ray.init``) with a watchdog: after ``timeout`` seconds, or on SIGINT or
    SIGTERM (seen through the signal wakeup fd: the handlers themselves cannot run while Ray
    blocks in C++), print one line and end the process. Outside the main thread (no wakeup fd
    there) only the timeout applies."""
    import signal
    import sys
    import threading

    done = threading.Event()
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    try:
        old_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except ValueError:  # not the main thread
        old_fd = None

    def watch() -> None:
        import select

        end = time.monotonic() + timeout
        while not done.is_set():
            left = end - time.monotonic()
            if left <= 0:
                _give_up(f"robustlab: error: --ray-address {address}: the Ray cluster did not "
                         f"answer within {timeout:g} s (set ROBUSTLAB_RAY_CONNECT_TIMEOUT to "
                         "wait longer); nothing was created", 2)
            ready = select.select([read_fd], [], [], min(left, 0.5))[0]
            if ready and not done.is_set():
                signals = set(os.read(read_fd, 64))
                if signals & {signal.SIGINT, signal.SIGTERM}:
                    term = signal.SIGTERM in signals
                    _give_up(f"robustlab: interrupted while joining the Ray cluster at "
                             f"{address}; nothing was created", 143 if term else 130)

    def _give_up(line: str, code: int) -> None:
        echo(line, file=sys.stderr, flush=True)
        os._exit(code)  # ray.init cannot be interrupted from Python: end the process

    thread = threading.Thread(target=watch, name="robustlab-ray-connect", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        if old_fd is not None:
            signal.set_wakeup_fd(old_fd)
        thread.join(1.0)
        os.close(read_fd)
        os.close(write_fd)


def disconnect() -> None:
    """Close a connection :func:`connect` made (a caller's own ``ray.init`` stays open)."""
    global _OWNED
    import ray

    if _OWNED and ray.is_initialized():
        ray.shutdown()
    _OWNED = False


# ---- the worker side -----------------------------------------------------------------------------

#: per worker process: object id -> deserialized cell function / installed shared object
_FNS: dict[str, Any] = {}
_INSTALLED: dict[str, bool] = {}


def _ray_cell(fn_box: list[Any], kind: str, params: dict[str, Any],
              shared_box: list[Any] | None, install: Callable[[Any], None] | None,
              gpus: float) -> tuple[bool, Any, float]:
    """One cell in a Ray worker: fetch the function and shared data once per process, run it.

    The references come boxed in lists so Ray hands them over unresolved: resolving a top-level
    argument would deserialize the data again for every cell.
    """
    import ray

    if not gpus:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""
    fn_id = fn_box[0].hex()
    fn = _FNS.get(fn_id)
    if fn is None:
        fn = _FNS[fn_id] = ray.get(fn_box[0])
    if shared_box is not None and install is not None:
        sid = shared_box[0].hex()
        if sid not in _INSTALLED:
            install(ray.get(shared_box[0]))
            _INSTALLED.clear()
            _INSTALLED[sid] = True
    return call_cell(fn, kind, params)


def _cleanup_node(names: tuple[str, ...]) -> str:
    _remove_node_dirs(names)
    import ray

    return ray.get_runtime_context().get_node_id()


# ---- the backend ---------------------------------------------------------------------------------


class RayBackend(PoolBackend):
    """Cells as Ray tasks on an existing cluster (``address``) or a private local ``ray.init``."""

    def __init__(self, fn: CellFn, workers: int, address: str | None = None,
                 num_gpus: float = 0.0, num_cpus: float = 1.0, travel: Travel | None = None,
                 max_retries: int = MAX_RETRIES) -> None:
        if num_gpus < 0 or num_cpus < 0:
            raise InputError("--gpus-per-task and --cpus-per-task must be >= 0")
        if max_retries < 0:
            raise InputError("max_retries must be >= 0")
        connect(address, workers)
        import ray

        self.ray = ray
        self.travel = travel or Travel()
        self.num_gpus = float(num_gpus)
        self.max_retries = int(max_retries)
        self.remote = ray.remote(num_cpus=num_cpus, num_gpus=self.num_gpus,
                                 max_retries=self.max_retries, retry_exceptions=False)(_ray_cell)
        self.fn_box = [ray.put(fn)]
        self.shared_box = ([ray.put(self.travel.shared)]
                           if self.travel.install is not None else None)
        self.workers = max(1, workers)
        self.pending: set[Any] = set()

    def _submit(self, cell: Cell) -> Any:
        params = cell.params
        if self.travel.portable is not None:
            params = self.travel.portable(params)
        ref = self.remote.remote(self.fn_box, cell.kind, params, self.shared_box,
                                 self.travel.install, self.num_gpus)
        self.pending.add(ref)
        return ref

    def _wait(self, handles: list[Any]) -> list[Any]:
        return self.ray.wait(handles, num_returns=1)[0]

    def _result(self, handle: Any) -> tuple[bool, Any, float]:
        self.pending.discard(handle)
        from ray.exceptions import RayError, RayTaskError, TaskCancelledError

        try:
            return self.ray.get(handle)
        except (TaskCancelledError, RayTaskError):
            raise  # stored with its traceback by the loop
        except RayError as exc:
            # a worker process or node died on every attempt: the reason, not a Ray traceback
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            return False, (f"{type(exc).__name__}: the Ray worker running this cell died on all "
                           f"{self.max_retries + 1} attempts; last: {first}\n"), 0.0

    def close(self) -> None:
        ray = self.ray
        if not ray.is_initialized():
            return
        for ref in list(self.pending):  # Ctrl-C: the cells go back to pending in the store
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - already finished or its node is gone
                pass
        self.pending.clear()
        if self.travel.node_dirs:
            self._cleanup_nodes()
        disconnect()

    def _cleanup_nodes(self) -> None:
        """Remove the study's node-local caches on every alive node (best effort, 60 s)."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        task = self.ray.remote(num_cpus=0, max_retries=0)(_cleanup_node)
        refs = [task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
                    node["NodeID"], soft=False)).remote(self.travel.node_dirs)
                for node in self.ray.nodes() if node.get("Alive")]
        try:
            self.ray.wait(refs, num_returns=len(refs), timeout=60)
        except Exception:  # noqa: BLE001 - cleanup must not hide the study's outcome
            pass
