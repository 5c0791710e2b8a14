"""A run directory is data, never code: crafted stores and worker.json files never make resume
or stop run or signal anything but the run's own robustlab worker. Resume runs only
``python -P -m robustlab resume DIR``; the worker rebuilds the study from the stored
configuration, and the stored command line is only ever shown.

Every crafted case uses a harmless payload (``touch`` of a file in tmp_path) and asserts that the
file does NOT exist afterwards; where a launch really happens the worker is waited for first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robustlab.errors import InputError
from robustlab.procs import pid_alive, process_start
from robustlab.runs.store import RunStore
from robustlab.tui import launch

#: a robustness study that finishes in seconds (bow, 2 steps, 20 demo sentences)
CHEAP = dict(models=("bow",), perturbations=("leet_letters",), p_grid=(), seeds=(0,), steps=2,
             max_train=20, max_test=10, kind="robustness",
             experiments=("standard", "robustness", "augmentation"))


def make_run(run_dir: Path, command: str, status: str = "interrupted",
             config: dict | None = None) -> Path:
    """A run directory whose store holds ``command`` and ``config`` (as a colleague's or an
    attacker's could), in the current format."""
    from robustlab.runs.study import CONFIG_FORMAT, CONFIG_FORMAT_KEY
    from robustlab.studies.learnability.config import LearnabilityStudy

    store = RunStore(run_dir)
    config = LearnabilityStudy(**CHEAP).to_dict() if config is None else config
    store.init_run(config.get("kind", "learnability"), "crafted", config, command=command)
    store.set_meta(CONFIG_FORMAT_KEY, CONFIG_FORMAT)
    store.set_run_status(status, "interrupted by the user (Ctrl-C); rerun to resume")
    store.close()
    return run_dir


def wait_gone(pid: int, seconds: float = 120.0) -> None:
    end = time.time() + seconds
    while pid_alive(pid) and time.time() < end:
        time.sleep(0.1)
    assert not pid_alive(pid), f"worker {pid} still running"


def test_the_stored_command_is_never_run(tmp_path):
    """Whatever the stored command says, the argv is `robustlab resume DIR` with this
    interpreter, and the worker continues the stored configuration."""
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w')\n")
    commands = (f"sh -c 'touch {marker}'", f"python {evil} --out r", f"touch {marker}",
                f"robustlab robustness --model bow --out r; touch {marker}",
                f"robustlab robustness --model 'bow$(touch {marker})`touch {marker}`' --out r")
    for i, command in enumerate(commands):
        run = make_run(tmp_path / f"r{i}", command)
        plan = launch.resume_plan(run)
        assert plan.argv == [sys.executable, "-P", "-m", "robustlab", "resume",
                             str(run.resolve())]
        assert plan.cwd == run.resolve() and "--model bow" in plan.study
    wait_gone(launch.resume(run, plan=plan))  # the last one, really launched
    with RunStore(run, readonly=True) as store:
        assert store.run_info().status == "done" and store.counts()["done"] == 3
    assert "touch" not in (run / "summary.json").read_text()
    assert not marker.exists()


@pytest.mark.parametrize("config,why", [
    ({"models": ["bow"], "evil": "x"}, "unknown key"),
    ({"models": "bow"}, "expected a list"),
    ({"models": ["bow"], "steps": "2; touch x"}, "expected an integer"),
    ({"models": ["bow"], "dataset": {"path": "/etc/passwd", "run": "x"}}, "unknown dataset opt"),
    ({"models": ["bow"], "kind": "sleepy"}, "unknown study kind|not learnability"),
])
def test_a_crafted_configuration_is_refused_before_anything_runs(tmp_path, config, why):
    run = make_run(tmp_path / "r", "robustlab learnability --model bow --out r", config=config)
    with pytest.raises(InputError, match=f"refusing to resume .*({why})"):
        launch.resume_plan(run)
    with pytest.raises(InputError):
        launch.resume(run)
    assert not (run / launch.WORKER_JSON).exists()  # nothing was launched


def test_garbage_store_with_a_worker_json_argv_is_refused(tmp_path):
    marker = tmp_path / "pwned2"
    run = tmp_path / "r"
    run.mkdir()
    (run / "store.sqlite").write_bytes(os.urandom(8192))
    for argv in (["sh", "-c", f"touch {marker}"], [sys.executable, "-m", "robustlab",
                                                    "robustness", "--out", str(run)]):
        (run / launch.WORKER_JSON).write_text(json.dumps({"argv": argv, "cwd": str(tmp_path),
                                                          "pid": None}))
        with pytest.raises(InputError, match="refusing to resume"):
            launch.resume(run)
    assert not marker.exists()


def test_worker_json_without_a_store_is_never_run(tmp_path):
    marker = tmp_path / "pwned"
    run = tmp_path / "r"
    run.mkdir()
    for argv in (["sh", "-c", f"touch {marker}"],
                 [str(tmp_path / "python3"), "-m", "robustlab", "robustness", "--out", "x"]):
        (run / launch.WORKER_JSON).write_text(json.dumps({"argv": argv, "cwd": "/", "pid": 1}))
        with pytest.raises(InputError, match="nothing was computed; start the study again"):
            launch.resume(run)
    assert not marker.exists()


def test_a_robustlab_package_beside_the_run_dir_is_not_imported(tmp_path):
    marker = tmp_path / "pwned3"
    run = make_run(tmp_path / "r", "robustlab robustness --out r")
    for where in (tmp_path, run):  # beside the run directory, and in it (the worker's cwd)
        fake = where / "robustlab"
        fake.mkdir()
        (fake / "__init__.py").write_text("")
        (fake / "__main__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    plan = launch.resume_plan(run)
    assert plan.cwd == run.resolve()
    wait_gone(launch.resume(run, plan=plan))
    assert not marker.exists()
    with RunStore(run, readonly=True) as store:
        assert store.run_info().status == "done"
    # control: the plain `python -m robustlab` of the old launcher would have run the fake one
    env = {**os.environ, "PYTHONSAFEPATH": ""}
    env.pop("PYTHONSAFEPATH")
    subprocess.run([sys.executable, "-m", "robustlab", "--version"], cwd=run, env=env,
                   capture_output=True, timeout=120)
    assert marker.exists()


def test_safe_env_drops_import_paths_that_mean_the_cwd(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["", "rel/dir", "/abs/dir", "."]))
    env = launch.safe_env(launch.ROBUSTLAB_ENV)
    assert env["PYTHONPATH"] == "/abs/dir" and env["PYTHONSAFEPATH"] == "1"
    monkeypatch.setenv("PYTHONPATH", ".")
    assert "PYTHONPATH" not in launch.safe_env()


@pytest.fixture
def sleeper(tmp_path):
    """An unrelated live process of this user (``sleep``), killed at the end."""
    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


def test_stop_never_signals_an_unrelated_pid(tmp_path, sleeper):
    run = make_run(tmp_path / "r", "robustlab robustness --out r", status="running")
    with RunStore(run) as store:  # the store names the unrelated process as its worker
        store.conn.execute("UPDATE run SET pid=?", (sleeper.pid,))
    (run / launch.WORKER_JSON).write_text(json.dumps({"pid": sleeper.pid, "pgid": sleeper.pid}))
    with pytest.raises(InputError, match="not stopping pid .*(another time|not a robustlab)"):
        launch.stop(run)
    time.sleep(0.2)
    assert sleeper.poll() is None  # not signalled (a SIGINT would have ended sleep)
    # the same with the start token of the unrelated process recorded as the worker's
    with RunStore(run) as store:
        store.conn.execute("UPDATE meta SET value=? WHERE key='worker_start'",
                           (process_start(sleeper.pid),))
    with pytest.raises(InputError, match="is not a robustlab process"):
        launch.stop(run)
    assert sleeper.poll() is None


def _fake_robustlab(tmp_path: Path, out: str) -> subprocess.Popen:
    """A process whose command line looks like ``python …/robustlab … --out OUT`` (it sleeps)."""
    script = tmp_path / "bin" / "robustlab"
    script.parent.mkdir(exist_ok=True)
    script.write_text("import time\ntime.sleep(60)\n")
    return subprocess.Popen([sys.executable, str(script), "learnability", "--out", out],
                            cwd=tmp_path)


def test_stop_checks_the_run_dir_and_the_start_time(tmp_path):
    run = make_run(tmp_path / "r", "robustlab robustness --out r", status="running")
    other = _fake_robustlab(tmp_path, "other-run")
    try:
        with RunStore(run) as store:
            store.conn.execute("UPDATE run SET pid=?", (other.pid,))
            store.conn.execute("UPDATE meta SET value=? WHERE key='worker_start'",
                               (process_start(other.pid),))
        with pytest.raises(InputError, match="robustlab process of another run directory"):
            launch.stop(run)
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
    mine = _fake_robustlab(tmp_path, "r")
    try:
        with RunStore(run) as store:
            store.conn.execute("UPDATE run SET pid=?", (mine.pid,))
            store.conn.execute("UPDATE meta SET value='0:1' WHERE key='worker_start'")
        with pytest.raises(InputError, match="the pid was reused"):  # same pid, other process
            launch.stop(run)
        assert mine.poll() is None
        with RunStore(run) as store:  # now verifiably the run's worker: it is signalled
            store.conn.execute("UPDATE meta SET value=? WHERE key='worker_start'",
                               (process_start(mine.pid),))
        assert launch.stop(run).pid == mine.pid
        assert mine.wait(timeout=30) != 0  # died of the SIGINT (KeyboardInterrupt in sleep)
    finally:
        if mine.poll() is None:
            mine.kill()
            mine.wait()


def test_stored_commands_become_robustlab_options():
    assert launch.robustlab_args(["robustlab", "attack", "--out", "d"]) == ["attack", "--out", "d"]
    assert launch.robustlab_args(["/x/bin/robustlab", "bias"]) == ["bias"]
    assert launch.robustlab_args(["python3.11", "-P", "-m", "robustlab", "bias"]) == ["bias"]
    assert launch.robustlab_args(["python", "/venv/bin/robustlab", "bias"]) == ["bias"]
    for bad in ([], ["python", "s.py", "--out", "d"], ["python", "-c", "print(1)"],
                ["bash", "robustlab"], ["python", "-m", "robustlab_evil"]):
        with pytest.raises(InputError):
            launch.robustlab_args(bad)
    # a script is accepted only when the caller (never the run dir) names it as the program
    prog = [sys.executable, __file__]
    assert launch.robustlab_args(["python", __file__, "x"], prog) == ["x"]


def test_printable_escapes_control_characters():
    assert launch.printable("a\nb\x1b[2Jc") == "a\\nb\\x1b[2Jc"


def test_sigint_group_only_for_a_verified_leader(tmp_path, sleeper):
    """worker.json claiming an unrelated process group leader gets no killpg either."""
    run = tmp_path / "r"
    run.mkdir()
    (run / launch.WORKER_JSON).write_text(json.dumps({
        "pid": sleeper.pid, "pgid": sleeper.pid, "start": process_start(sleeper.pid)}))
    with pytest.raises(InputError, match="is not a robustlab process"):
        launch.stop(run)
    assert sleeper.poll() is None
    assert os.getpgid(sleeper.pid) == sleeper.pid  # it is a group leader: killpg would hit it
