"""A private local Ray node on a busy machine: a start Ray gives up on is cleaned up and retried
once (issue 32: one loaded full-suite run lost a test to "The current node timed out during
startup", Ray's fixed 15 s wait for the raylet's dashboard agent)."""

from __future__ import annotations

import re

import psutil
import pytest

from robustlab.errors import InputError
from robustlab.runs import ray_backend as rb

TIMEOUT = rb.RAY_STARTUP_TIMEOUT + ". This could happen because some of the raylet failed"


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _session_of(cmdlines) -> str:
    """The Ray session directory name in ``cmdlines``."""
    for line in cmdlines:
        found = re.search(r"session_[0-9_-]+_[0-9]+", line)
        if found:
            return found.group(0)
    raise AssertionError(f"no Ray session in {cmdlines}")


def _processes_of(session: str) -> list[str]:
    """Every running process whose command line names ``session`` (agents whose raylet died
    are no longer anyone's children)."""
    out = []
    for p in psutil.process_iter(["cmdline", "name"]):
        try:
            if session in " ".join(p.info["cmdline"] or ()) and _running(p.pid):
                out.append(f"{p.info['name']}({p.pid})")
        except psutil.Error:
            continue
    return out


def test_timed_out_starts_leave_no_process_and_are_tried_twice(monkeypatch, capsys, request):
    """The real thing, with the failure injected where Ray raises it, in both attempts (so the
    outcome does not depend on the machine's load): after gcs_server, the monitors, the
    dashboard head and the raylet started, Ray's wait for the node to register gives up."""
    ray = pytest.importorskip("ray")
    import ray._private.services as services

    started: list[dict[int, str]] = []  # per attempt, the processes it had started
    sessions: list[str] = []
    # children of this process that earlier tests left (multiprocessing's resource tracker of a
    # spawn pool lives as long as pytest): not the attempt's, so neither counted nor expected
    # to be stopped (the full suite failed here while the file alone passed)
    import subprocess
    import sys

    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    request.addfinalizer(lambda: (bystander.kill(), bystander.wait(60)))
    earlier = rb._our_ray_pids()
    assert bystander.pid in earlier

    def time_out(*args, **kwargs):
        names, lines = {}, []
        for pid in rb._our_ray_pids() - earlier:
            try:
                names[pid] = psutil.Process(pid).name()
                lines.append(" ".join(psutil.Process(pid).cmdline()))
            except psutil.NoSuchProcess:
                pass
        started.append(names)
        sessions.append(_session_of(lines))
        raise Exception(TIMEOUT)  # what ray/_private/node.py raises after its 30 s

    monkeypatch.setattr(services, "get_node", time_out)
    assert not ray.is_initialized()
    with pytest.raises(InputError, match="timed out during startup 2 times"):
        rb.start_local(1)
    assert not ray.is_initialized()
    assert len(started) == 2 and sessions[0] != sessions[1]
    for names, session in zip(started, sessions, strict=True):
        assert {"gcs_server", "raylet"} <= set(names.values()), names
        assert [f"{name}({pid})" for pid, name in names.items() if _running(pid)] == []
        assert _processes_of(session) == []  # the agents the raylet started, too
    assert _running(bystander.pid)  # a child that was there before the start is left alone
    err = capsys.readouterr().err
    assert err.count("trying once more") == 1, err
    assert "the local Ray node timed out during startup (load " in err


def _fake_init(monkeypatch, outcomes: list):
    """``ray.init`` replaced by a list of outcomes (an exception to raise, or None)."""
    ray = pytest.importorskip("ray")
    calls: list[dict] = []

    def init(**kwargs):
        calls.append(kwargs)
        outcome = outcomes[len(calls) - 1]
        if outcome is not None:
            raise outcome

    reaped: list[set[int]] = []
    monkeypatch.setattr(ray, "init", init)
    monkeypatch.setattr(rb, "_reap_failed_start", lambda before: reaped.append(before) or [])
    return calls, reaped


def test_a_start_that_times_out_once_is_retried_once(monkeypatch, capsys):
    calls, reaped = _fake_init(monkeypatch, [Exception(TIMEOUT), None])
    rb.start_local(2)
    assert len(calls) == 2 and len(reaped) == 1 and calls[0] == calls[1]
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "timed out during startup (load " in err
    assert "trying once more" in err


def test_a_second_timeout_is_one_line_naming_the_load_and_the_fix(monkeypatch, capsys):
    calls, reaped = _fake_init(monkeypatch, [Exception(TIMEOUT), Exception(TIMEOUT)])
    with pytest.raises(InputError) as err:
        rb.start_local(2, {"env_vars": {"X": "1"}})
    msg = str(err.value)
    assert "\n" not in msg and "timed out during startup 2 times (load " in msg
    assert "cores" in msg and "ray start --head" in msg and "--ray-address" in msg
    assert len(calls) == 2 and len(reaped) == 2  # each failed attempt cleaned up
    assert calls[0] == {"num_cpus": 2, "runtime_env": {"env_vars": {"X": "1"}},
                        "include_dashboard": False, "log_to_driver": False}
    assert capsys.readouterr().err.count("trying once more") == 1


def test_other_start_errors_are_not_retried(monkeypatch):
    calls, reaped = _fake_init(monkeypatch, [ValueError("bad num_cpus")])
    with pytest.raises(ValueError, match="bad num_cpus"):
        rb.start_local(1)
    assert len(calls) == 1 and reaped == []


def test_processes_that_survive_the_cleanup_are_named_and_not_retried(monkeypatch):
    calls, _ = _fake_init(monkeypatch, [Exception(TIMEOUT), None])
    monkeypatch.setattr(rb, "_reap_failed_start", lambda before: ["raylet(4242)"])
    with pytest.raises(InputError, match=r"raylet\(4242\) could not be stopped"):
        rb.start_local(1)
    assert len(calls) == 1


def test_connect_starts_a_private_node_through_start_local(monkeypatch):
    pytest.importorskip("ray")
    seen = []
    monkeypatch.setattr(rb, "start_local", lambda n, env: seen.append((n, env)))
    monkeypatch.setattr(rb, "_OWNED", False)
    rb.connect(None, workers=3)
    (cpus, env), = seen
    assert rb._OWNED and cpus == 3 and env["working_dir"]
    assert env["env_vars"] == rb.worker_runtime_env()["env_vars"]
    monkeypatch.setattr(rb, "_OWNED", False)


def test_a_private_node_starts_its_processes_without_the_slow_optional_import(monkeypatch):
    """The node's processes (here a worker) run with ``rfc3987_syntax`` unimportable, the
    driver's own environment is as it was, and workers still import robustlab."""
    ray = pytest.importorskip("ray")
    import os

    before = os.environ.get("PYTHONPATH")
    rb.start_local(1, rb.worker_runtime_env())
    try:
        assert os.environ.get("PYTHONPATH") == before

        @ray.remote
        def probe():
            import importlib

            out = {}
            for name in (*rb.LEAN_HIDDEN, "robustlab"):
                try:
                    importlib.import_module(name)
                    out[name] = "imported"
                except ImportError as exc:
                    out[name] = str(exc)
            return out

        seen = ray.get(probe.remote(), timeout=300)
    finally:
        ray.shutdown()
    assert seen["robustlab"] == "imported"
    assert all("hidden from Ray's processes by robustlab" in seen[n] for n in rb.LEAN_HIDDEN)
