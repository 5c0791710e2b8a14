"""A run directory is data, never code: crafted stores and worker.json files never make resume
or stop run or signal anything but the run's own robustlab worker. Resume runs only
``python -P -m robustlab resume DIR``; the worker rebuilds the study from the stored
configuration, and the stored command line is only ever shown.

Every crafted case uses a harmless payload (``touch`` of a file in tmp_path) and asserts that the
file does NOT exist afterwards; where a launch really happens the worker is waited for first.
"""

from __future__ import annotations

import asyncio
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
        assert plan.cwd not in (run.resolve(), run.parent.resolve())  # a private empty one
        assert "--model bow" in plan.study
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
    assert plan.cwd not in (run.resolve(), run.parent.resolve())
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
    sent: list[tuple[int, int]] = []  # every signal stop() sends (none may be): no clock needed
    real_kill, real_killpg = launch.os.kill, launch.os.killpg
    launch.os.kill = lambda pid, sig: (sent.append((pid, sig)), real_kill(pid, sig))[1]
    launch.os.killpg = lambda pid, sig: (sent.append((pid, sig)), real_killpg(pid, sig))[1]
    try:
        with pytest.raises(InputError, match="not stopping pid .*(another time|not a robustlab)"):
            launch.stop(run)
    finally:
        launch.os.kill, launch.os.killpg = real_kill, real_killpg
    assert [s for s in sent if s[1] != 0] == [] and sleeper.poll() is None  # not signalled
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


# ---- item 1/2: a spec names a registered thing; a class path only from the command line ----------


def evil_spec(marker: Path) -> str:
    """NL-Augmenter's prefix naming subprocess.Popen with a shell command: what issue 21 ran."""
    return f"nlaugmenter:subprocess.Popen:args=touch {marker},shell=true"


def learn_argv(out: Path, *extra: str) -> list[str]:
    return ["robustness", "--model", "bow", "--dataset", "demo", "--perturbations",
            "leet_letters", "--steps", "2", "--max-train", "20", "--max-test", "10", "--quiet",
            "--no-plots", *extra, "--out", str(out)]


def cli_main(argv: list[str]) -> int:
    from robustlab.cli import main

    try:
        return main(argv)
    except SystemExit as exc:  # argparse
        return int(exc.code or 0)


@pytest.mark.parametrize("route", ["perturb", "augment", "learnability", "model", "clf-model"])
def test_a_typed_class_path_must_be_of_the_slots_kind(tmp_path, monkeypatch, capsys, route):
    """From the command line a class path is accepted, but only a class of the kind the slot
    expects is ever called: subprocess.Popen is refused before anything runs."""
    marker = tmp_path / "pwned"
    src = tmp_path / "in.tsv"
    src.write_text("text\tlabel\nthe cat sat\t0\ndogs run\t1\n")
    monkeypatch.chdir(tmp_path)
    argv = {
        "perturb": ["perturb", "-p", evil_spec(marker), "-i", str(src), "-o", "o.tsv"],
        "augment": ["augment", "-p", evil_spec(marker), "-i", str(src), "-o", "o.tsv"],
        "learnability": [*learn_argv(tmp_path / "r")[:5], "--perturbations", evil_spec(marker),
                         "--out", str(tmp_path / "r")],
        "model": ["robustness", "--model", "subprocess:Popen", "--dataset", "demo",
                  "--perturbations", "leet_letters", "--out", str(tmp_path / "r")],
        "clf-model": ["cross-domain", "clf", "--model", "subprocess:Popen", "--domains", "a",
                      "b", "c", "--out", str(tmp_path / "r")],
    }[route]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "is not a" in err and "refused (nothing was called)" in err
    assert not marker.exists() and not (tmp_path / "r").exists()
    assert not (tmp_path / "o.tsv").exists()


def test_a_registered_class_path_works_when_typed_and_not_from_a_tui_worker(tmp_path,
                                                                             monkeypatch):
    """The trusted path works (a robustlab Perturbation by its import path); a worker the TUI
    launched from a form runs with REGISTERED_ONLY_ENV and refuses the same spec."""
    from robustlab.trust import REGISTERED_ONLY_ENV

    src = tmp_path / "in.tsv"
    src.write_text("text\tlabel\nthe cat sat on the mat\t0\n")
    spec = "robustlab.perturbations.learnability_perturbations:LeetLetters"
    monkeypatch.chdir(tmp_path)
    assert cli_main(["perturb", "-p", spec, "-i", str(src), "-o", "o.tsv"]) == 0
    assert (tmp_path / "o.tsv").read_text() != src.read_text()
    assert launch.ROBUSTLAB_ENV[REGISTERED_ONLY_ENV] == "1"
    monkeypatch.setenv(REGISTERED_ONLY_ENV, "1")
    assert cli_main(["perturb", "-p", spec, "-i", str(src), "-o", "o2.tsv"]) == 2
    assert not (tmp_path / "o2.tsv").exists()


@pytest.mark.parametrize("field, value", [
    ("perturbations", ["{evil}"]),
    ("perturbations", ["textattack:subprocess.Popen"]),
    ("perturbations", ["robustlab.perturbations.learnability_perturbations:LeetLetters"]),
    ("models", ["subprocess:Popen"]),
    ("models", ["robustlab.models.torch_models:BoW"]),
])
def test_a_stored_configuration_may_name_registered_things_only(tmp_path, capsys, field, value):
    """`robustlab resume` and the TUI's resume plan refuse any class path in a stored
    configuration (even a harmless, valid one) with one line saying how to pass it."""
    from robustlab.studies.learnability.config import LearnabilityStudy

    marker = tmp_path / "pwned"
    config = LearnabilityStudy(**CHEAP).to_dict()
    config[field] = [v.replace("{evil}", evil_spec(marker)) for v in value]
    run = make_run(tmp_path / "r", "robustlab robustness --model bow --out r", config=config)
    assert cli_main(["resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert "accepted only when typed on the command line" in err
    assert len([ln for ln in err.splitlines() if ": error: " in ln]) == 1
    with pytest.raises(InputError, match="accepted only when typed on the command line"):
        launch.resume_plan(run)
    assert not marker.exists() and not (run / launch.WORKER_JSON).exists()
    with RunStore(run, readonly=True) as store:
        assert store.counts().get("done", 0) == 0


def test_worker_json_naming_a_class_is_never_run(tmp_path):
    """Without a store, worker.json's argv (here a robustlab command naming Popen) is not run."""
    marker = tmp_path / "pwned"
    run = tmp_path / "r"
    run.mkdir()
    argv = [sys.executable, "-m", "robustlab", *learn_argv(run)[:5], "--perturbations",
            evil_spec(marker), "--out", str(run)]
    (run / launch.WORKER_JSON).write_text(json.dumps({"argv": argv, "cwd": str(tmp_path),
                                                      "pid": None}))
    with pytest.raises(InputError, match="nothing was computed; start the study again"):
        launch.resume(run)
    assert not marker.exists() and not (run / "store.sqlite").exists()


@pytest.mark.parametrize("line", [
    "[[test]]\nperturbation = '{evil}'\nmax_drop = 0.5\n",
    "models = ['subprocess:Popen']\n[[test]]\nperturbation = 'leet_letters'\nmax_drop = 0.5\n",
    "[[test]]\nperturbation = 'textattack:subprocess.Popen'\nmax_drop = 0.5\n",
])
def test_a_plan_may_name_registered_things_only(tmp_path, capsys, line):
    """`robustlab check PLAN` validates a plan from elsewhere as data: no class is imported or
    called while validating it, and nothing is written."""
    marker = tmp_path / "pwned"
    plan = tmp_path / "plan.toml"
    plan.write_text("dataset = 'demo'\nsteps = 2\n" + line.replace("{evil}", evil_spec(marker)))
    assert cli_main(["check", str(plan), "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "accepted only when typed on the command line" in err
    assert not marker.exists() and not (tmp_path / "run").exists()


def test_a_saved_model_directory_names_a_registered_family_only(tmp_path):
    from robustlab.models.registry import META_FILE, load_saved, saved_params

    d = tmp_path / "m"
    d.mkdir()
    for family in ("subprocess:Popen", "subprocess.Popen", ["bow"], None):
        (d / META_FILE).write_text(json.dumps({"family": family, "params": {"args": "touch x"}}))
        for read in (load_saved, saved_params):
            with pytest.raises(InputError, match="unknown model family"):
                read(d)


def _tui_app(tmp_path: Path, run_dirs: list[Path]):
    pytest.importorskip("textual")
    from robustlab.cli import build_parser
    from robustlab.tui.app import RobustlabApp, Settings

    app = RobustlabApp(run_dirs, Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    seen: list[str] = []
    notify = app.notify

    def record(message, *args, **kw):
        seen.append(str(message))
        return notify(message, *args, **kw)

    app.notify = record  # type: ignore[method-assign]
    return app, seen


def test_tui_form_field_naming_a_class_is_refused(tmp_path):
    """Typed into the new-study form, a class path is data: refused beside the field, and
    launch (ctrl+l) starts nothing."""
    from tui.test_app import wait_for

    from robustlab.tui.screens.new_study import NewStudyScreen

    marker = tmp_path / "pwned"
    app, _ = _tui_app(tmp_path, [tmp_path / "runs"])

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.press("n")
            screen = app.screen
            await wait_for(pilot, lambda: len(screen.recipes) > 0, 30)
            screen.query_one("#recipes").highlighted = [r.name for r in screen.recipes].index(
                "learnability")
            await wait_for(pilot, lambda: screen.recipe is not None
                           and screen.recipe.name == "learnability")
            await wait_for(pilot, lambda: bool(screen.query(f"#f{screen._gen}-out")))  # form
            screen.field("model").value = "bow"
            screen.field("out").value = "runs/evil"
            for spec in (evil_spec(marker),
                         "robustlab.perturbations.learnability_perturbations:LeetLetters"):
                screen.field("perturbations").value = spec
                await wait_for(pilot, lambda: screen.error is not None and
                               "accepted only when typed on the command line" in screen.error,
                               30)
                said = len(app._notifications)
                await pilot.press("ctrl+l")
                # its answer: a new "cannot launch" notification; refused, nothing launched
                await wait_for(pilot, lambda said=said: len(app._notifications) > said and any(
                    "cannot launch" in n.message for n in app._notifications))
                assert isinstance(app.screen, NewStudyScreen)
            screen.field("perturbations").value = "subprocess:Popen"
            screen.field("perturbations").value = "leet_letters"
            screen.field("model").value = "subprocess:Popen"
            await wait_for(pilot, lambda: screen.error is not None and
                           "--model subprocess:Popen" in screen.error, 30)

    asyncio.run(scenario())
    assert not marker.exists() and not (tmp_path / "runs" / "evil").exists()


def test_tui_resume_of_a_stored_class_path_is_refused(tmp_path):
    """Resume (r) on a run whose stored configuration names Popen: no confirmation is offered,
    the refusal is shown, nothing is launched."""
    from tui.test_app import wait_for

    from robustlab.studies.learnability.config import LearnabilityStudy
    from robustlab.tui.screens.dialogs import ConfirmScreen
    from robustlab.tui.screens.progress import ProgressScreen

    marker = tmp_path / "pwned"
    config = LearnabilityStudy(**CHEAP).to_dict()
    config["perturbations"] = [evil_spec(marker)]
    run = make_run(tmp_path / "r", "robustlab robustness --model bow --out r", config=config)
    app, seen = _tui_app(tmp_path, [run])

    async def scenario() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            app.open_progress(run)
            await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen))
            await pilot.press("r")
            await wait_for(pilot, lambda: any("accepted only when typed" in m for m in seen), 30)
            await pilot.pause()  # the refusal handled: no dialog follows it
            assert not isinstance(app.screen, ConfirmScreen)

    asyncio.run(scenario())
    assert not marker.exists() and not (run / launch.WORKER_JSON).exists()


# ---- item 3: no remote code; resume writes only inside the run directory ------------------------


def test_a_checkpoint_with_auto_map_runs_no_code_and_asks_nothing(tmp_path):
    """A model folder whose config.json maps the Auto classes to a .py beside it: robustlab
    passes trust_remote_code=False, so the code is not imported, no "[y/N]" prompt appears
    (stdin closed), and the command ends with one line and exit 2."""
    marker = tmp_path / "pwned"
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                  "from transformers import PretrainedConfig\n"
                                  "class EvilConfig(PretrainedConfig):\n"
                                  "    model_type = 'evil'\n")
    auto = {k: f"evil.Evil{v}" for k, v in (("AutoConfig", "Config"),
                                            ("AutoModelForSequenceClassification", "Model"),
                                            ("AutoTokenizer", "Tokenizer"))}
    (ckpt / "config.json").write_text(json.dumps({"model_type": "evil", "auto_map": auto,
                                                  "architectures": ["EvilModel"]}))
    (ckpt / "tokenizer_config.json").write_text(json.dumps({"auto_map": {
        "AutoTokenizer": ["evil.EvilTokenizer", None]}}))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    for argv in (["train", "--model", str(ckpt), "--dataset", "demo", "--steps", "1",
                  "--out", str(tmp_path / "m")],
                 ["robustness", "--model", f"hf:{ckpt}", "--dataset", "demo",
                  "--perturbations", "leet_letters", "--steps", "1", "--quiet", "--no-plots",
                  "--out", str(tmp_path / "r")]):
        proc = subprocess.run([sys.executable, "-m", "robustlab", *argv], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=300, cwd=tmp_path)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 2, out
        assert "[y/N]" not in out and "Traceback" not in out
        assert len([ln for ln in proc.stderr.splitlines() if ": error: " in ln]) == 1, out
        assert not marker.exists()
    assert not (tmp_path / "m").exists() and not (tmp_path / "r").exists()


def test_every_from_pretrained_passes_trust_remote_code_false():
    """The rule, over the source: every transformers loading call robustlab makes says
    trust_remote_code=False explicitly (the check above exercises two of them)."""
    import ast
    import re as re_

    root = Path(__file__).resolve().parent.parent
    calls = 0
    for path in sorted((root / "robustlab").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = ast.unparse(node.func)
            if re_.search(r"(from_pretrained|^pipeline)$", name):
                calls += 1
                kws = {k.arg: ast.unparse(k.value) for k in node.keywords}
                assert kws.get("trust_remote_code") == "False", f"{path}:{node.lineno} {name}"
    assert calls >= 6


def test_resume_drops_the_writing_options_of_the_stored_command(tmp_path, capsys):
    """A stored command with --junit-xml VICTIM (and a threshold) is only shown: resume rebuilds
    the study from the stored configuration, so the victim file is unchanged and nothing is
    written outside the run directory."""
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me\n")
    run = make_run(tmp_path / "r", f"robustlab robustness --model bow --dataset demo "
                   f"--max-drop 0.5 --junit-xml {victim} --out r")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli_main(["resume", str(run), "--quiet"]) == 0
    assert victim.read_text() == "keep me\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with RunStore(run, readonly=True) as store:
        assert store.run_info().status == "done"


@pytest.mark.parametrize("name", ["/tmp/robustlab-outside.csv", "../outside.csv", "a/b.csv",
                                  ".hidden.csv", "~/x.csv"])
def test_a_stored_attack_csv_name_cannot_leave_the_run_directory(tmp_path, name):
    from robustlab.studies.second_order.config import AttackConfig

    model = tmp_path / "m"
    model.mkdir()
    (model / "robustlab_model.json").write_text(json.dumps({"family": "bow", "params": {}}))
    good = AttackConfig(recipe="so-beam", model=str(model), dataset={"name": "demo"}).to_dict()
    AttackConfig.from_dict(good)  # the control: a valid stored configuration
    with pytest.raises(InputError, match="--log-to-csv"):
        AttackConfig.from_dict({**good, "log_to_csv": name})


# ---- item 11: a relative --model resumed from the TUI, from another directory ------------------


def test_tui_resume_of_a_run_with_a_relative_model_path(tmp_path, monkeypatch):
    """`--model m` typed in proj/ is stored as proj/m's absolute path; the TUI (started in
    another directory) resumes the run with that model: the remaining cells finish."""
    from tui.test_app import wait_for

    from robustlab.tui.screens.dialogs import ConfirmScreen
    from robustlab.tui.screens.progress import ProgressScreen

    proj, elsewhere = tmp_path / "proj", tmp_path / "elsewhere"
    proj.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(proj)
    assert cli_main(["train", "--model", "bow:steps=2", "--dataset", "demo", "--out", "m"]) == 0
    argv = learn_argv(Path("r"))
    argv[argv.index("bow")] = "m"
    assert cli_main(argv) == 0
    run = proj / "r"
    with RunStore(run) as store:
        assert store.run_info().config["models"] == [str(proj / "m")]
        store.conn.execute("UPDATE cells SET status='pending' WHERE key LIKE '%augmentation%'")
        store.set_run_status("interrupted", "interrupted by the user (Ctrl-C); rerun to resume")
    monkeypatch.chdir(elsewhere)
    app, seen = _tui_app(elsewhere, [run])

    async def scenario() -> None:
        async with app.run_test(size=(100, 30)) as pilot:
            app.open_progress(run)
            await wait_for(pilot, lambda: isinstance(app.screen, ProgressScreen) and
                           app.screen.progress is not None)
            screen = app.screen
            await pilot.press("r")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30)
            await pilot.press("y")
            await wait_for(pilot, lambda: screen.progress.run.status in ("done", "failed"), 180)
            assert screen.progress.run.status == "done", (run / "worker.log").read_text()

    asyncio.run(scenario())
    with RunStore(run, readonly=True) as store:
        cells = store.cells()
        assert len(cells) >= 3 and all(c.status == "done" for c in cells)
        assert all(f"model={proj / 'm'}|" in c.key for c in cells)
    assert "no such" not in (run / "worker.log").read_text().lower()


def test_an_entry_point_that_is_not_a_perturbation_is_ignored(monkeypatch, capsys):
    """An installed package is trusted, but what its entry point gives must be a Perturbation:
    anything else is left out of the registry (with a warning), never called."""
    from importlib import metadata

    from robustlab.perturbations import registry

    class FakeEntryPoint:
        name, value = "popen", "subprocess:Popen"

        def load(self):
            import subprocess as sp

            return sp.Popen

    monkeypatch.setattr(metadata, "entry_points", lambda group: [FakeEntryPoint()])
    monkeypatch.setattr(registry, "_loaded", False)
    names = registry.available()
    assert "popen" not in names and "leet_letters" in names
    assert "is not a robustlab Perturbation subclass; ignored" in capsys.readouterr().err
