"""A run directory is data, never code (issue 10, section 1): crafted stores and worker.json files
never make resume or stop run or signal anything but the run's own robustlab worker.

Every crafted case uses a harmless payload (``touch`` of a file in tmp_path) and asserts that the
file does NOT exist afterwards; where a launch really happens the worker is waited for first.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from robustlab.errors import InputError
from robustlab.runs.procs import pid_alive, process_start
from robustlab.runs.store import RunStore
from robustlab.tui import launch

CHEAP = ["learnability", "--model", "bow", "--dataset", "demo", "--perturbations",
         "leet_letters", "--p-grid", "1", "--seeds", "0", "--steps", "2"]


def make_run(run_dir: Path, command: str, status: str = "interrupted") -> Path:
    """A run directory whose store holds ``command`` (as a colleague's or attacker's could)."""
    store = RunStore(run_dir)
    store.init_run("learnability", "crafted", {"n": 1}, command=command)
    store.set_run_status(status, "interrupted by the user (Ctrl-C); rerun to resume")
    store.close()
    return run_dir


def wait_gone(pid: int, seconds: float = 60.0) -> None:
    end = time.time() + seconds
    while pid_alive(pid) and time.time() < end:
        time.sleep(0.1)
    assert not pid_alive(pid), f"worker {pid} still running"


def test_foreign_program_in_the_store_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w')\n")
    for command in (f"sh -c 'touch {marker}'", f"python {evil} --out r",
                    f"/usr/bin/env robustlab {shlex.join(CHEAP)} --out r",
                    f"touch {marker}"):
        run = make_run(tmp_path / f"r{abs(hash(command))}", command)
        with pytest.raises(InputError, match="refusing to resume .*does not run robustlab"):
            launch.resume(run)
        assert not (run / launch.WORKER_JSON).exists()  # nothing was launched
    assert not marker.exists()


def test_shell_metacharacters_are_never_interpreted(tmp_path):
    marker = tmp_path / "pwned"
    # a shell would run the touch; robustlab's parser sees unknown arguments and refuses
    run = make_run(tmp_path / "a", f"robustlab {shlex.join(CHEAP)} --out a; touch {marker}")
    with pytest.raises(InputError, match="options do not parse"):
        launch.resume(run)
    run = make_run(tmp_path / "b", f"robustlab {shlex.join(CHEAP)} --out b && touch {marker}")
    with pytest.raises(InputError, match="options do not parse"):
        launch.resume(run)
    # a metacharacter inside one option is one literal argument: the real worker runs, rejects
    # the model name, and nothing else happens
    spec = f"leet_letters$(touch {marker})`touch {marker}`"
    run = make_run(tmp_path / "c", shlex.join(["robustlab", *CHEAP[:6], spec, *CHEAP[7:],
                                               "--out", "c"]))
    plan = launch.resume_plan(run)
    assert plan.argv[:4] == [sys.executable, "-P", "-m", "robustlab"]
    assert spec in plan.argv and plan.argv[-2:] == ["--out", str(run.resolve())]
    wait_gone(launch.resume(run, plan=plan))
    log = (run / launch.WORKER_LOG).read_text()
    assert "robustlab learnability: error" in log and "leet_letters$(touch" in log
    assert not marker.exists()


def test_help_version_and_non_study_commands_are_refused(tmp_path):
    for args, why in ((["--version"], "do not parse"), ([*CHEAP, "--help", "--out", "x"],
                                                           "do not parse"),
                      (["correlate", "x"], "not a study command|do not parse"),
                      (["textattack", "--out", "x"], "not a study command|do not parse")):
        run = make_run(tmp_path / str(abs(hash(tuple(args)))), shlex.join(["robustlab", *args]))
        with pytest.raises(InputError, match=why):
            launch.resume_plan(run)


def test_garbage_store_with_a_worker_json_argv_is_refused(tmp_path):
    marker = tmp_path / "pwned2"
    run = tmp_path / "r"
    run.mkdir()
    (run / "store.sqlite").write_bytes(os.urandom(8192))
    for argv in (["sh", "-c", f"touch {marker}"], [sys.executable, "-m", "robustlab", *CHEAP,
                                                    "--out", str(run)]):
        (run / launch.WORKER_JSON).write_text(json.dumps({"argv": argv, "cwd": str(tmp_path),
                                                          "pid": None}))
        with pytest.raises(InputError, match="refusing to resume"):
            launch.resume(run)
    assert not marker.exists()


def test_worker_json_without_a_store_runs_robustlab_only_with_this_interpreter(tmp_path):
    marker = tmp_path / "pwned"
    run = tmp_path / "r"
    run.mkdir()
    (run / launch.WORKER_JSON).write_text(json.dumps({
        "argv": ["sh", "-c", f"touch {marker}"], "cwd": "/", "pid": 1}))
    with pytest.raises(InputError, match="worker.json's argv: it does not run robustlab"):
        launch.resume(run)
    # a robustlab argv that names another interpreter: the options are kept, the program not
    (run / launch.WORKER_JSON).write_text(json.dumps({
        "argv": [str(tmp_path / "python3"), "-m", "robustlab", *CHEAP, "--out", "elsewhere"],
        "cwd": "/", "pid": None}))
    plan = launch.resume_plan(run)
    assert plan.argv == [sys.executable, "-P", "-m", "robustlab", *CHEAP, "--out", str(run)]
    assert not marker.exists()


def test_a_robustlab_package_beside_the_run_dir_is_not_imported(tmp_path):
    marker = tmp_path / "pwned3"
    fake = tmp_path / "robustlab"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "__main__.py").write_text(f"open({str(marker)!r}, 'w')\n")
    # the stored --out is relative, so the worker runs in tmp_path, beside the fake package
    run = make_run(tmp_path / "r", shlex.join(["robustlab", *CHEAP[:2], "nosuchmodel",
                                               *CHEAP[3:], "--out", "r"]))
    plan = launch.resume_plan(run)
    assert plan.cwd == tmp_path
    wait_gone(launch.resume(run, plan=plan))
    assert not marker.exists()
    assert "robustlab learnability: error" in (run / launch.WORKER_LOG).read_text()
    # control: the plain `python -m robustlab` of the old launcher would have run the fake one
    env = {**os.environ, "PYTHONSAFEPATH": ""}
    env.pop("PYTHONSAFEPATH")
    subprocess.run([sys.executable, "-m", "robustlab", "--version"], cwd=tmp_path, env=env,
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
    run = make_run(tmp_path / "r", f"robustlab {shlex.join(CHEAP)} --out r", status="running")
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
    run = make_run(tmp_path / "r", f"robustlab {shlex.join(CHEAP)} --out r", status="running")
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


def test_pin_out_keeps_the_run_dir_whatever_the_stored_out(tmp_path):
    run = tmp_path / "runs" / "a"
    assert launch._pin_out(["x", "--out", "runs/a"], run, "runs/a") == (
        ["x", "--out", str(run)], tmp_path)
    assert launch._pin_out(["x", "--out=/etc"], run, "/etc") == (["x", "--out", str(run)],
                                                                run.parent)


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
