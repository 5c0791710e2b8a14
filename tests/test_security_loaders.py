"""Issue 29 F1–F6: libraries we call resolve names against the working directory and unpickle
what they find; outputs that name a run's own files; a deleted fingerprint.

Every crafted file is harmless: a pickle whose ``__reduce__`` runs ``touch MARKER``, a Python
module that creates MARKER when imported, a model folder whose ``auto_map`` code would create it.
Each test asserts that MARKER does not exist afterwards. No test needs flair's real models: the
point is that no crafted local file is ever loaded (without network flair's cache is empty, so
the taggers are refused with the fix named).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from robustlab import trust
from robustlab.runs.store import RunStore

ROBUSTLAB = Path(sys.executable).parent / "robustlab"
#: flair names TextAttack's WordSwapInflections / ChangeName / ChangeLocation load
FLAIR_NAMES = ("upos-fast", "ner", "flair/ner-english", "flair/ner-french")


class _Touch:
    """Unpickling it runs ``touch MARKER``."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def plant_pickles(folder: Path, marker: Path, names=FLAIR_NAMES) -> None:
    """A crafted pickle under each flair model name in ``folder``."""
    for name in names:
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(pickle.dumps(_Touch(marker)))


def plant_auto_map(folder: Path, marker: Path) -> Path:
    """A model folder whose config.json names custom code that touches MARKER on import."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({
        "model_type": "bert", "architectures": ["BertForMaskedLM"], "vocab_size": 30,
        "hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 1,
        "intermediate_size": 8,
        "auto_map": {"AutoConfig": "evil.Cfg", "AutoModelForMaskedLM": "evil.Model",
                     "AutoTokenizer": ["evil.Tok", None]}}))
    (folder / "evil.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    return folder


def py_module(*args, cwd, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``python -m robustlab ARGS`` in ``cwd`` (the working directory lands on sys.path)."""
    return subprocess.run([sys.executable, "-m", "robustlab", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={**os.environ, **(env or {})})


def robustness_config(perturbation: str) -> dict:
    from robustlab.studies.learnability.config import LearnabilityStudy

    return LearnabilityStudy(models=("bow",), perturbations=(perturbation,), p_grid=(),
                             seeds=(0,), steps=2, max_train=20, max_test=10, kind="robustness",
                             experiments=("robustness",)).to_dict()


# ---- F1: flair taggers ------------------------------------------------------------------------


@pytest.fixture
def textattack_utils():
    from robustlab.integrations.textattack import _textattack  # noqa: PLC2701 (the adapter's import)

    ta = _textattack()
    ta.shared.utils.strings._flair_taggers.clear()
    yield ta.shared.utils
    ta.shared.utils.strings._flair_taggers.clear()


@pytest.mark.parametrize("name", FLAIR_NAMES)
def test_flair_never_loads_a_tagger_file_from_the_working_directory(tmp_path, monkeypatch,
                                                                      textattack_utils, name):
    from flair.data import Sentence

    marker = tmp_path / "MARKER"
    plant_pickles(tmp_path, marker)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception) as info:
        textattack_utils.flair_tag(Sentence("the cats ran home"), name)
    assert not marker.exists()
    assert "cache" in str(info.value) or "refused" in str(info.value)


def test_flair_loads_only_files_inside_its_cache(tmp_path, textattack_utils):
    from flair.models import SequenceTagger

    from robustlab.perturbations.base import PerturbationError

    marker = tmp_path / "MARKER"
    plant_pickles(tmp_path, marker, ("tagger.pt",))
    with pytest.raises(PerturbationError, match="only files in flair's cache"):
        SequenceTagger.load(str(tmp_path / "tagger.pt"))
    from flair.nn import Classifier

    with pytest.raises(ValueError):  # the abstract route tries every subclass, then the file
        Classifier.load(str(tmp_path / "tagger.pt"))
    assert not marker.exists()


def test_a_robustlab_process_unpickles_tensors_only(tmp_path):
    """TORCH_FORCE_WEIGHTS_ONLY_LOAD=1 for every robustlab process: a library's
    ``torch.load(weights_only=False)`` of a crafted file fails without running it."""
    marker = tmp_path / "MARKER"
    plant_pickles(tmp_path, marker, ("model.bin",))
    code = ("import sys, torch; from robustlab.trust import harden_process; harden_process();"
            f"torch.load({str(tmp_path / 'model.bin')!r}, weights_only=False)")
    proc = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0 and "Weights only load failed" in proc.stderr
    assert not marker.exists()


def test_the_command_hardens_its_process(monkeypatch):
    import robustlab.cli as cli

    seen = []
    monkeypatch.setattr(cli, "harden_process", lambda **kw: seen.append(kw))
    monkeypatch.setattr(sys, "argv", ["robustlab", "--help"])
    with pytest.raises(SystemExit):
        cli.main()
    assert seen == [{}]


def _check_plan(folder: Path, perturbation: str) -> Path:
    from test_cli_check import write_random_label_data

    folder.mkdir(parents=True, exist_ok=True)
    write_random_label_data(folder)
    plan = folder / "gate.toml"
    plan.write_text(f'data = "train.txt"\ntest_data = "test.txt"\nformat = "label-text"\n'
                    f'models = ["bow"]\nseeds = [0]\nsteps = 2\nout = "gate-run"\n'
                    f'[[test]]\nperturbation = "{perturbation}"\nmax_drop = 1.0\n',
                    encoding="utf-8")
    return plan


@pytest.mark.parametrize("perturbation", ["textattack:WordSwapInflections",
                                          "textattack:WordSwapChangeName",
                                          "textattack:WordSwapChangeLocation"])
def test_check_never_loads_a_crafted_tagger(tmp_path, perturbation):
    """F1 through `robustlab check`: crafted taggers in the plan folder (the working
    directory) and its parent."""
    marker = tmp_path / "MARKER"
    plan = _check_plan(tmp_path / "proj", perturbation)
    plant_pickles(plan.parent, marker)
    plant_pickles(tmp_path, marker)
    proc = py_module("check", plan.name, "--quiet", cwd=plan.parent)
    assert not marker.exists(), proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 1 and "ERROR" in proc.stdout  # the cell failed, said why:
    with RunStore(plan.parent / "gate-run", readonly=True) as store:
        assert "flair model" in store.cells("failed")[0].error


def _old_run(run: Path, perturbation: str) -> Path:
    """A run as an earlier version stored it (no config_format), started in run's parent."""
    from robustlab.runs.study import CONFIG_FORMAT_KEY

    store = RunStore(run)
    store.init_run("robustness", "old", robustness_config(perturbation),
                   command=f"robustlab robustness --model bow --out {run.name}")
    store.set_run_status("interrupted", "interrupted by the user (Ctrl-C); rerun to resume")
    store.conn.execute("DELETE FROM meta WHERE key=?", (CONFIG_FORMAT_KEY,))
    store.conn.commit()
    store.close()
    return run


def test_resume_from_another_directory_never_loads_a_crafted_tagger(tmp_path):
    """F1 through `robustlab resume` of an earlier version's run: crafted taggers in the run
    folder, its parent and the working directory; resume never changes into the parent."""
    marker = tmp_path / "MARKER"
    run = _old_run(tmp_path / "proj" / "r", "textattack:WordSwapInflections")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for folder in (run, run.parent, elsewhere):
        plant_pickles(folder, marker)
    proc = py_module("resume", run, "--quiet", cwd=elsewhere)
    assert not marker.exists(), proc.stderr
    assert "Traceback" not in proc.stderr
    assert "flair model" in proc.stdout + proc.stderr


def test_resume_of_an_old_run_links_its_relative_models_into_a_private_directory(
        tmp_path, monkeypatch):
    from test_security import cli_main

    from robustlab.studies.stored import load

    proj = tmp_path / "proj"
    assert cli_main(["train", "--model", "bow:steps=2", "--dataset", "demo", "--out",
                     str(proj / "m"), "--quiet"]) == 0
    run = _old_run(proj / "r", "leet_letters")
    with RunStore(run) as store:
        store.replace_config({**store.run_info().config, "models": ["m"]})
    stored = load(run)
    assert stored.links == {"m": (proj / "m").resolve()}
    work = trust.private_workdir(stored.links)
    assert work != proj and [p.name for p in work.iterdir()] == ["m"]
    assert (work / "m").resolve() == (proj / "m").resolve()
    assert oct(work.stat().st_mode & 0o777) == "0o700"


def test_tui_resume_runs_in_a_private_empty_directory(tmp_path):
    """F1 through the TUI's Resume: the worker's working directory is neither the run folder
    nor its parent, and crafted taggers in both are never loaded."""
    from test_security import wait_gone

    from robustlab.runs.study import CONFIG_FORMAT, CONFIG_FORMAT_KEY
    from robustlab.tui import launch

    marker = tmp_path / "MARKER"
    run = tmp_path / "proj" / "r"
    store = RunStore(run)
    store.init_run("robustness", "shared", robustness_config("textattack:WordSwapInflections"),
                   command="robustlab robustness …")
    store.set_meta(CONFIG_FORMAT_KEY, CONFIG_FORMAT)
    store.set_run_status("interrupted", "interrupted by the user (Ctrl-C); rerun to resume")
    store.close()
    plant_pickles(run, marker)
    plant_pickles(run.parent, marker)
    plan = launch.resume_plan(run)
    assert plan.cwd not in (run.resolve(), run.parent.resolve())
    assert list(plan.cwd.iterdir()) == [] and plan.cwd.stat().st_uid == os.getuid()
    assert str(plan.cwd) in plan.display
    wait_gone(launch.resume(run, plan=plan))
    log = (run / "worker.log").read_text()
    assert not marker.exists(), log
    assert "flair model" in log and "Traceback" not in log


# ---- F2: masked LMs that TextAttack loads itself ------------------------------------------------


def test_a_masked_lm_folder_from_a_plan_runs_no_code_and_asks_nothing(tmp_path):
    """F2: `textattack:WordSwapMaskedLM:masked_language_model=DIR` from a plan (data): an
    auto_map folder is refused before transformers reads it (no prompt: stdin is closed)."""
    marker = tmp_path / "MARKER"
    evil = plant_auto_map(tmp_path / "mlm", marker)
    plan = _check_plan(tmp_path / "proj",
                       f"textattack:WordSwapMaskedLM:masked_language_model={evil}")
    proc = py_module("check", plan, "--quiet", cwd=tmp_path)
    assert not marker.exists(), proc.stderr
    assert "Traceback" not in proc.stderr and "[y/N]" not in proc.stdout + proc.stderr
    assert proc.returncode != 0 and "auto_map" in proc.stdout + proc.stderr


@pytest.mark.parametrize("value", ["bert-base-uncased", "mlm"])
def test_a_masked_lm_name_never_means_a_folder_in_the_working_directory(tmp_path, monkeypatch,
                                                                        value):
    """TextAttack's default `bert-base-uncased` (and any bare name from data) is a hub id, read
    from the hub cache only; a crafted folder of that name in the working directory is never
    read. A relative path from data is refused."""
    from robustlab.perturbations.registry import parse_spec

    marker = tmp_path / "MARKER"
    plant_auto_map(tmp_path / value, marker)
    monkeypatch.chdir(tmp_path)
    spec = "textattack:WordSwapMaskedLM" + ("" if value == "bert-base-uncased"
                                            else f":masked_language_model=./{value}")
    with pytest.raises(Exception) as info:
        parse_spec(spec, trusted=False)
    assert not marker.exists()
    text = str(info.value)
    assert ("Hugging Face cache" in text) if value == "bert-base-uncased" else (
        "relative path" in text)


def test_a_typed_masked_lm_folder_is_loaded_as_data(tmp_path, monkeypatch):
    """Typed on the command line, `./mlm` is the user's folder: checked (no auto_map) and
    loaded with trust_remote_code=False, never by TextAttack's bare call."""
    from robustlab.perturbations.registry import parse_spec

    marker = tmp_path / "MARKER"
    plant_auto_map(tmp_path / "mlm", marker)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(Exception, match="auto_map"):
        parse_spec("textattack:WordSwapMaskedLM:masked_language_model=./mlm", trusted=True)
    assert not marker.exists()


# ---- F3: NL-Augmenter and the import path --------------------------------------------------------


def _plant_transformation(folder: Path, marker: Path) -> None:
    for top in (folder / "transformations", folder / "nlaugmenter" / "transformations"):
        (top / "evil").mkdir(parents=True)
        (top / "__init__.py").write_text("")
        (top.parent / "__init__.py").write_text("")
        (top / "evil" / "__init__.py").write_text("")
        (top / "evil" / "transformation.py").write_text(
            f"open({str(marker)!r}, 'w').close()\n")


@pytest.mark.parametrize("launcher", ["python -m", "console script, PYTHONPATH ending in ':'"])
def test_nlaugmenter_is_never_imported_from_the_working_directory(tmp_path, launcher):
    marker = tmp_path / "MARKER"
    work = tmp_path / "work"
    _plant_transformation(work, marker)
    (work / "in.txt").write_text("the cat sat on the mat\n")
    args = ["perturb", "-p", "nlaugmenter:evil", "-i", "in.txt", "-o", "out.txt"]
    if launcher == "python -m":
        proc = py_module(*args, cwd=work)
    else:
        script = tmp_path / "bin" / "robustlab"
        script.parent.mkdir()
        script.write_text("import sys\nfrom robustlab.cli import main\nsys.exit(main())\n")
        env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "") + ":"}
        proc = subprocess.run([sys.executable, str(script), *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300)
    assert not marker.exists(), proc.stderr
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


@pytest.mark.parametrize("pythonpath,dropped", [
    ("/opt/x:", "{cwd}"), ("/opt/x::rel", "{cwd}/rel"), ("", None)])
def test_clean_import_path_drops_what_means_the_working_directory(pythonpath, dropped):
    cwd = "/home/u/proj"
    path = ["/venv/bin", "/opt/x", cwd, f"{cwd}/rel", "/usr/lib/python3.11"]
    kept = trust.clean_import_path(path, pythonpath=pythonpath, cwd=cwd)
    if dropped:
        assert dropped.format(cwd=cwd) not in kept and "/opt/x" in kept
    assert "/usr/lib/python3.11" in kept and "" not in trust.clean_import_path(
        ["", "/a"], pythonpath="", cwd=cwd)
    # the working directory named by its absolute path is the user's choice: kept
    assert cwd in trust.clean_import_path([cwd], pythonpath=f"{cwd}:", cwd=cwd)


# ---- F4, F5: outputs that name a run's own files ---------------------------------------------------


def one_line_error(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def cli(*args, cwd=None, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROBUSTLAB), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("name", ["store.sqlite", "store.sqlite-wal", "summary.json",
                                  "results.jsonl", "worker.log"])
def test_attack_log_to_csv_cannot_be_a_file_of_the_run(tmp_path, name):
    err = one_line_error(cli("attack", "--recipe", "so-random", "--model", "bow", "--dataset",
                             "demo", "--num-examples", "2", "--log-to-csv", name,
                             "--out", tmp_path / "run"))
    assert "--log-to-csv" in err and "run's own files" in err
    assert not (tmp_path / "run").exists()


def test_a_stored_log_to_csv_naming_the_store_is_refused_on_resume(tmp_path):
    from test_security import cli_main, make_run

    from robustlab.studies.second_order.config import AttackConfig

    config = AttackConfig(recipe="so-random", model="bow", dataset={"name": "demo"},
                          log_to_csv="store.sqlite").to_dict()
    run = make_run(tmp_path / "r", "robustlab attack …", config={"kind": "attack", **config})
    before = (run / "store.sqlite").read_bytes()
    assert cli_main(["resume", str(run), "--quiet"]) == 2
    assert (run / "store.sqlite").read_bytes() == before


def test_junit_xml_cannot_be_a_file_the_run_will_write(tmp_path):
    plan = _check_plan(tmp_path / "proj", "leet_letters")
    for name in ("summary.json", "store.sqlite-wal"):
        junit = plan.parent / "gate-run" / name
        err = one_line_error(cli("check", plan, "--junit-xml", junit, "--quiet"))
        assert "--junit-xml" in err and "run's own" in err and not junit.exists()


def test_failures_csv_cannot_be_a_sidecar_of_the_store(tmp_path):
    from test_security import make_run

    run = make_run(tmp_path / "r", "robustlab robustness …")
    for name in ("store.sqlite-wal", "results.jsonl"):
        err = one_line_error(cli("failures", run, "--csv", run / name))
        assert "--csv" in err and "run's own" in err


def test_a_plans_out_is_never_a_folder_of_other_files(tmp_path):
    """F5: a plan's `out = "/some/project"` would replace that folder's summary.json and
    results.jsonl: refused unless --force (a run directory or an empty one is fine)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "summary.json").write_text('{"mine": true}')
    plan = _check_plan(tmp_path / "proj", "leet_letters")
    plan.write_text(plan.read_text().replace('out = "gate-run"', f'out = "{project}"'))
    err = one_line_error(cli("check", plan, "--quiet"))
    assert "not a robustlab run" in err and "--force" in err
    assert (project / "summary.json").read_text() == '{"mine": true}'
    proc = cli("check", plan, "--quiet", "--force")
    assert proc.returncode in (0, 1), proc.stderr
    assert (project / "store.sqlite").exists()
    assert cli("check", plan, "--quiet").returncode in (0, 1)  # now a run: resumes


# ---- F6: a deleted fingerprint --------------------------------------------------------------------


def _file_run(tmp_path: Path) -> tuple[Path, Path]:
    import random

    rng = random.Random(3)
    words = "the film plot cast was good bad fine dull long short story".split()
    data = tmp_path / "data.tsv"
    data.write_text("sentence\tlabel\n" + "".join(
        f"{' '.join(rng.choice(words) for _ in range(5))}\t{i % 2}\n" for i in range(60)))
    run = tmp_path / "r"
    proc = cli("robustness", "--model", "bow", "--dataset", data, "--perturbations",
               "leet_letters", "--steps", "2", "--max-train", "20", "--max-test", "10",
               "--quiet", "--no-plots", "--out", run)
    assert proc.returncode == 0, proc.stderr
    return run, data


def test_a_run_whose_inputs_were_deleted_is_not_resumed(tmp_path):
    """F6: the stored dataset path edited and the inputs deleted: resume refuses (one line,
    exit 2) instead of reading the file into the predictions table; --adopt-input FILE, typed
    by the user, resumes it."""
    run, _ = _file_run(tmp_path)
    secret = tmp_path / "secret.tsv"
    secret.write_text("sentence\tlabel\n" + "".join(f"my secret line {i}\t{i % 2}\n"
                                                  for i in range(60)))
    with RunStore(run) as store:
        config = store.run_info().config
        config.pop("inputs")
        config["dataset"] = {**config["dataset"], "path": str(secret)}
        store.replace_config(config)
        store.conn.execute("DELETE FROM meta WHERE key LIKE 'input:%'")
        store.conn.execute("DELETE FROM predictions")  # and every cell's data fingerprint:
        store.conn.execute("DELETE FROM cells")  # the run now looks fresh
    err = one_line_error(cli("resume", run, "--quiet"))
    assert "no checksum" in err and "--adopt-input" in err
    with RunStore(run, readonly=True) as store:
        assert store.conn.execute("SELECT count(*) FROM predictions").fetchone()[0] == 0
    proc = cli("resume", run, "--quiet", "--adopt-input", secret)
    assert proc.returncode == 0, proc.stderr
    with RunStore(run, readonly=True) as store:
        assert store.run_info().config["inputs"]["dataset"]["path"] == str(secret)


# ---- the Ray worker --------------------------------------------------------------------------------


@pytest.mark.slow  # a private Ray cluster: 40 s idle, 100 s on a busy 2-core machine
def test_ray_workers_never_import_or_load_from_the_drivers_directory(tmp_path):
    """F1 through the Ray worker: Ray puts the driver's working directory first on its workers'
    sys.path and starts them there; a `robustlab/` package and crafted taggers there are never
    imported or loaded (the workers run in a private empty working_dir)."""
    marker = tmp_path / "MARKER"
    work = tmp_path / "work"
    (work / "robustlab").mkdir(parents=True)
    (work / "robustlab" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    plant_pickles(work, marker)
    run = tmp_path / "run"
    proc = cli("robustness", "--model", "bow", "--dataset", "demo", "--perturbations",
               "textattack:WordSwapInflections", "--seeds", "0",
               "--steps", "2", "--max-train", "20", "--max-test", "10", "--executor", "ray",
               "--workers", "1", "--quiet", "--no-plots", "--out", run, cwd=work, timeout=600)
    assert not marker.exists(), proc.stderr[-3000:]
    assert (run / "store.sqlite").exists(), proc.stderr[-3000:]
    with RunStore(run, readonly=True) as store:
        failed = store.cells("failed")
        assert failed and all("flair model" in c.error for c in failed), proc.stderr[-3000:]
