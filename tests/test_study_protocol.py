"""The study as one object (issue 22): one lifecycle, the stored configuration as the run's
identity (never a command line), a signature built from every option."""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.errors import InputError
from robustlab.runs.store import RunStore
from robustlab.runs.study import CONFIG_FORMAT_KEY, StudyConfig
from robustlab.studies import study_from_config
from robustlab.studies.cross_domain.clf import ClfStudy
from robustlab.studies.cross_domain.study import ConsistencyConfig, MTStudy, ScoresStudy
from robustlab.studies.learnability.config import LearnabilityStudy
from robustlab.studies.second_order.config import AttackConfig, BiasConfig

ROOT = Path(__file__).resolve().parents[1]

CONFIGS = [
    LearnabilityStudy(models=("bow",), perturbations=("leet_letters",)),
    LearnabilityStudy(models=("bow",), perturbations=("leet_letters",), kind="robustness",
                      p_grid=(), experiments=("standard", "robustness", "augmentation")),
    AttackConfig(recipe="so-beam", model="hf:x", dataset={"name": "demo"}),
    BiasConfig(model="hf:x", dataset={"name": "demo"}, pairs=(("he", "she"),)),
    MTStudy(),
    ClfStudy(root="/data"),
    ScoresStudy(file="/s.csv"),
]


def _changed(value):
    """Another value of the same type (what a user could set differently)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value * 1.5 + 0.25
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, tuple):
        return (*value, value[0]) if value else ("x",)
    if isinstance(value, dict):
        return {**value, "zz": 1}
    if value is None:
        return 3
    if dataclasses.is_dataclass(value):
        return dataclasses.replace(value, n_bags=value.n_bags + 1)
    raise AssertionError(type(value))


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.study_kind()}-{type(c).__name__}")
def test_every_option_that_changes_results_changes_the_signature(config):
    base = config.signature()
    assert base.startswith(config.study_kind() + "|") and re.search(r"\|v:[\w.]+$", base)
    for f in dataclasses.fields(config):
        if f.metadata.get("sig", f.name) is None:  # outputs and how, not what: left out
            continue
        other = dataclasses.replace(config, **{f.name: _changed(getattr(config, f.name))})
        if f.name == "estimate" or f.name == "kind":
            continue  # enumerations: checked below with valid values
        assert other.signature() != base, f"{f.name} is not in the signature"
    quick = dataclasses.replace(CONFIGS[0], estimate="quick")
    assert quick.signature() != CONFIGS[0].signature()
    assert CONFIGS[1].signature().startswith("robustness|")


def test_consistency_options_are_in_the_signature():
    cfg = ClfStudy(root="/data")
    for name in ("eps", "grid_max", "n_bags", "fraction", "seed", "eps_grid"):
        value = getattr(cfg.consistency, name)
        new = "sigma" if name == "eps_grid" else _changed(value)
        other = dataclasses.replace(cfg, consistency=dataclasses.replace(cfg.consistency,
                                                                         **{name: new}))
        assert other.signature() != cfg.signature(), name


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.study_kind()}-{type(c).__name__}")
def test_the_stored_dict_rebuilds_the_same_config(config, monkeypatch):
    monkeypatch.setattr(type(config), "validate", lambda self, trusted=False: None)
    stored = json.loads(json.dumps(config.to_dict()))  # as the store keeps it
    again = type(config).from_dict(stored)
    assert again.to_dict() == config.to_dict() and again.signature() == config.signature()


@pytest.mark.parametrize("bad,why", [
    ({"evil": 1}, "unknown key"),
    ({"steps": "20"}, "steps: expected an integer"),
    ({"steps": True}, "steps: expected an integer"),
    ({"seeds": [0, "1"]}, "seeds: expected an integer"),
    ({"models": "bow"}, "models: expected a list"),
    ({"dataset": ["demo"]}, "dataset: expected an object"),
    ({"p_grid": [0.1, None]}, "p_grid: expected a number"),
])
def test_a_stored_config_is_read_as_untrusted_data(bad, why):
    stored = {**CONFIGS[0].to_dict(), **bad}
    with pytest.raises(InputError, match=why):
        LearnabilityStudy.from_dict(stored)


def test_unknown_kinds_and_tasks_are_refused():
    with pytest.raises(InputError, match="unknown study kind"):
        study_from_config("sleepy", {})
    with pytest.raises(InputError, match="unknown cross-domain task"):
        study_from_config("cross-domain", {"task": "eval"})
    with pytest.raises(InputError, match="made from Python with a model object"):
        study_from_config("attack", {**CONFIGS[2].to_dict(), "model": "object:planted"})


def test_one_run_lifecycle():
    """Only robustlab/runs/study.py creates or finishes a run (init_run, set_run_status)."""
    found = []
    for path in (ROOT / "robustlab").rglob("*.py"):
        text = path.read_text()
        for call in ("init_run(", "set_run_status(\"done\"", "set_run_status(\"failed\""):
            rel = path.relative_to(ROOT).as_posix()
            if call in text and rel not in ("robustlab/runs/study.py", "robustlab/runs/executor.py"
                                            ) and not rel.startswith("robustlab/runs/store/"):
                found.append((path.name, call))
    assert found == []


TINY = ["robustness", "--model", "bow", "--dataset", "demo", "--perturbations", "leet_letters",
        "--seeds", "0", "--steps", "2", "--max-train", "20", "--max-test", "10", "--quiet"]


def test_main_from_python_stores_the_config_not_the_host_command_line(tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.setattr(sys, "argv", ["some-host-program", "--its-own-option", "x"])
    monkeypatch.chdir(tmp_path)
    assert main([*TINY, "--out", "r"]) == 0
    with RunStore(tmp_path / "r", readonly=True) as store:
        info = store.run_info()
        assert store.meta(CONFIG_FORMAT_KEY)
    assert "some-host-program" not in info.command and "--its-own-option" not in info.command
    assert info.command.startswith("robustlab robustness --model bow --dataset demo")
    assert info.command.endswith(f"--out {(tmp_path / 'r').resolve()}")
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    config = {k: v for k, v in summary["config"].items() if k != "inputs"}
    assert LearnabilityStudy.from_dict(config).signature() == summary["signature"]
    # resumed from anywhere by its directory alone: the same study, nothing recomputed
    monkeypatch.chdir(ROOT)
    capsys.readouterr()
    assert main(["resume", str(tmp_path / "r"), "--quiet"]) == 0
    assert "3 of 3 cells done" in capsys.readouterr().out


def test_a_run_of_an_earlier_version_with_a_relative_model_path_resumes(tmp_path, monkeypatch,
                                                                        capsys):
    """Runs made before the protocol stored model paths as typed (and their cell keys use
    them): re-typing the command resumes them, and so does `robustlab resume` from elsewhere."""
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--model", "bow:steps=2", "--dataset", "demo", "--out", "m"]) == 0
    assert main([*TINY[:2], "m", *TINY[3:], "--out", "r"]) == 0
    store = RunStore(tmp_path / "r")
    info = store.run_info()
    old = {**info.config, "models": ["m"]}  # as an earlier version stored it
    store.replace_config(old)
    store.conn.execute("UPDATE cells SET key=replace(key, ?, 'm'), params=replace(params, ?, 'm')",
                       (str(tmp_path / "m"), str(tmp_path / "m")))
    store.conn.execute("DELETE FROM meta WHERE key=?", (CONFIG_FORMAT_KEY,))
    store.conn.execute("UPDATE run SET command=?", ("robustlab robustness --model m --out r",))
    store.conn.execute("UPDATE cells SET status='pending' WHERE key LIKE '%exp=augmentation%'")
    store.conn.commit()
    store.close()
    capsys.readouterr()
    assert main([*TINY[:2], "m", *TINY[3:], "--out", "r"]) == 0  # re-typed: resumes
    with RunStore(tmp_path / "r", readonly=True) as store:
        keys = {c.key for c in store.cells()}
        assert len(keys) == 3 and all("model=m|" in k for k in keys)
        assert store.run_info().config["models"] == ["m"]
    monkeypatch.chdir(ROOT)
    from robustlab.studies.stored import load

    with RunStore(tmp_path / "r") as store:  # as if never resumed since
        store.conn.execute("DELETE FROM meta WHERE key=?", (CONFIG_FORMAT_KEY,))
        store.conn.execute("UPDATE cells SET status='pending' WHERE key LIKE '%augmentation%'")
    stored = load(tmp_path / "r")
    assert stored.cwd == tmp_path  # where `--out r` was relative to
    assert main(["resume", str(tmp_path / "r"), "--quiet"]) == 0


def test_resume_refuses_what_cannot_be_rebuilt(tmp_path, capsys):
    run = tmp_path / "r"
    store = RunStore(run)
    store.init_run("attack", "old", {"recipe": "so-beam", "model": "textrnn(…)", "n": 3},
                   command="robustlab attack --recipe so-beam --model m --dataset d --out r")
    store.close()
    assert main(["resume", str(run)]) == 2
    err = capsys.readouterr().err
    assert "made by an earlier robustlab" in err and "rerun the command that made it" in err
    assert "robustlab attack --recipe so-beam --model m" in err


def test_cross_domain_configs_keep_the_flat_stored_layout():
    """Runs made before the protocol stored the consistency options beside the task's own."""
    d = ClfStudy(root="/data", seed=3, consistency=ConsistencyConfig(seed=3)).to_dict()
    assert d["task"] == "clf" and d["seed"] == 3 and "consistency" not in d
    assert "eps_grid" not in d  # the default: runs made before the option had no key
    assert d["train_domains"] == list(ClfStudy(root="/data").domains)


def test_study_config_subclasses_validate_once():
    """Every config class defines its own validate (the one check of its options)."""
    for cls in {type(c) for c in CONFIGS}:
        assert cls.validate is not StudyConfig.validate, cls
