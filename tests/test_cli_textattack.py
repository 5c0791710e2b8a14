"""``robustlab textattack`` (TextAttack's CLI with robustlab's recipes, models and data),
``robustlab recipe-path`` and the stock ``textattack attack --attack-from-file`` route, all run
from a directory that is not the checkout; plus what ``robustlab attack`` prints."""

from __future__ import annotations

import csv
import json
import logging
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest
from _so_toys import make_wrapper, planted_proba

from robustlab.cli import main

ROOT = Path(__file__).resolve().parents[1]
TABLE = {"good": ["great", "fine"], "plot": ["story"]}
PAIRS = {"film": ["movie"]}
#: planted victim: f = 1 everywhere except "great movie" -> 0. Example 2 is misclassified
#: (label 0, f(x0) = 1) and still attacked; example 3 has no patch pair (skipped)
DATA = "1 the plot is good film .\n0 good film and plot\n0 a dull thing\n"


@pytest.fixture
def work(tmp_path, monkeypatch):
    """cwd = tmp_path (not the checkout), with data, tables and a victim file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dev.txt").write_text(DATA)
    (tmp_path / "table.json").write_text(json.dumps(TABLE))
    (tmp_path / "pairs.json").write_text(json.dumps(PAIRS))
    (tmp_path / "victim.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / 'tests')!r})
        from _so_toys import make_wrapper, planted_proba
        model = make_wrapper(planted_proba)
    """))
    monkeypatch.setenv("ROBUSTLAB_NEIGHBOURHOOD", f"table:{tmp_path / 'table.json'}")
    monkeypatch.setenv("ROBUSTLAB_PATCH_TABLE", str(tmp_path / "pairs.json"))
    return tmp_path


def csv_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_recipe_path_names_the_installed_recipe_file(work, capsys):
    import robustlab.recipes

    for name, stem in (("so-beam", "so_beam"), ("so-enum", "so_enum"),
                       ("so-random", "so_random")):
        assert main(["recipe-path", name]) == 0
        printed = capsys.readouterr().out.strip()
        assert Path(printed).is_absolute() and Path(printed).is_file()
        assert Path(printed) == (Path(robustlab.recipes.__file__).parent / f"{stem}.py").resolve()
        assert "import NAME, build" in Path(printed).read_text()  # the stable shim
    assert main(["recipe-path", "so-beam", "--build"]) == 0
    assert capsys.readouterr().out.strip().endswith("so_beam.py^build")
    with pytest.raises(SystemExit):
        main(["recipe-path", "pwws"])


def test_textattack_route_prints_and_counts_second_order_results(work, capsys):
    """Original accuracy from f(x0) (TextAttack's own would say 100 %: nothing is skipped for
    being misclassified), the patch pair and x̃ ⊕ p in the printed result and the CSV."""
    rc = main(["textattack", "attack", "--recipe", "so-beam", "--model-from-file", "victim.py",
               "--dataset", "dev.txt", "--num-examples", "3", "--log-to-csv", "out.csv"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "--([[film → movie]])-->" in out
    assert "the plot is great [[movie]] ." in out  # x̃ ⊕ p, patch word marked
    assert "[SKIPPED]]] no patch word" in out
    rows = csv_rows(work / "out.csv")
    assert [r["result_type"] for r in rows] == ["Successful", "Successful", "Skipped"]
    assert rows[0]["patch_words"] == "film->movie" and rows[0]["l0"] == "1"
    assert rows[0]["patched_text"] == "the plot is great [[movie]] ."
    assert rows[0]["perturbed_output"] == "1" and rows[0]["patched_output"] == "0"
    attacked = [r for r in rows if r["result_type"] != "Skipped"]
    wrong = sum(r["original_output"] != r["ground_truth_output"] for r in attacked)
    assert wrong == 1
    assert f"Misclassified examples attacked:           | {wrong}" in out
    assert "Original accuracy (attacked examples):     | 50.00%" in out
    assert "Number of skipped attacks (no patch pair): | 1" in out


def test_recipe_keyword_arguments_reach_build(work, capsys, monkeypatch):
    monkeypatch.delenv("ROBUSTLAB_NEIGHBOURHOOD")
    rc = main(["textattack", "attack", "--recipe",
               f'so-beam^source="table:{work / "table.json"}",beam_width=3',
               "--model-from-file", "victim.py", "--dataset", "dev.txt", "--num-examples", "1",
               "--disable-stdout"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "(beam_width):  3" in out and "(source_name):  table:table.json" in out


@pytest.fixture
def saved_bow(work):
    from robustlab.data.demo import make_demo
    from robustlab.models.registry import make_model

    texts, labels = make_demo(200, seed=0)
    make_model("bow", max_len=20).fit(list(texts), list(labels), steps=5).save(work / "bow")
    return work / "bow"


def test_textattack_route_attacks_a_saved_robustlab_model(saved_bow, work, capsys):
    """--model names a `robustlab train` directory (TextAttack's loader: UnboundLocalError)."""
    rc = main(["textattack", "attack", "--recipe", "so-random", "--model", str(saved_bow),
               "--dataset-from-huggingface", "dev.txt", "--num-examples", "2",
               "--log-to-csv", "bow.csv", "--disable-stdout"])
    assert rc == 0
    rows = csv_rows(work / "bow.csv")
    assert len(rows) == 2 and rows[0]["patch_words"] == "film->movie"
    assert "Attack success rate:" in capsys.readouterr().out


def test_textattack_model_and_dataset_routing(saved_bow, work):
    from robustlab.studies.second_order.textattack_cli import (
        is_robustlab_dataset,
        is_robustlab_model,
    )

    assert is_robustlab_model(str(saved_bow)) and is_robustlab_model("bow")
    assert is_robustlab_model("textrnn:hidden=8") and is_robustlab_model("./no-such-dir")
    (work / "empty").mkdir()
    (work / "hf").mkdir()
    (work / "hf" / "config.json").write_text("{}")
    assert is_robustlab_model(str(work / "empty"))  # robustlab's message, not TextAttack's crash
    assert not is_robustlab_model(str(work / "hf"))  # a checkpoint: TextAttack loads it
    assert not is_robustlab_model("lstm-sst2") and not is_robustlab_model("bert-base-uncased-sst2")
    assert not is_robustlab_model("textattack/bert-base-uncased-SST-2")
    assert is_robustlab_dataset("dev.txt") and is_robustlab_dataset("demo")
    assert not is_robustlab_dataset("glue^sst2") and not is_robustlab_dataset("rotten_tomatoes")


def test_textattack_route_refuses_an_unloadable_model_directory(work, capsys):
    (work / "empty").mkdir()
    rc = main(["textattack", "attack", "--recipe", "so-beam", "--model", "empty",
               "--dataset", "dev.txt", "--num-examples", "1"])
    assert rc == 2
    assert "without robustlab_model.json or config.json" in capsys.readouterr().err


def test_building_an_attack_emits_no_textattack_warnings():
    from textattack.shared import logger as ta_logger

    from robustlab.studies.second_order import so_beam
    from robustlab.studies.second_order.neighbourhood import TableSource

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    h = Keep(level=logging.WARNING)
    ta_logger.addHandler(h)
    level = ta_logger.level
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            so_beam.build(make_wrapper(planted_proba), source=TableSource(TABLE), pairs=PAIRS)
    finally:
        ta_logger.removeHandler(h)
    assert records == [] and [str(w.message) for w in caught] == []
    assert ta_logger.level == level  # restored: the user's own TextAttack use is unchanged


def _attack(work, out, *extra, model="hf:planted"):
    return ["attack", "--recipe", "so-beam", "--model", model, "--dataset",
            str(work / "dev.txt"), "--out", str(out), *extra]


def test_attack_says_what_it_does_and_names_differing_options(work, monkeypatch, capsys):
    import robustlab.integrations.victims as w

    monkeypatch.setattr(w, "load_victim",
                        lambda spec, device=None: (make_wrapper(planted_proba), "planted"))
    assert main(_attack(work, work / "r", "-n", "2")) == 0
    cap = capsys.readouterr()
    steps = [ln for ln in cap.err.splitlines() if ln.startswith("robustlab attack: ")]
    words = [s.split(": ", 1)[1].split()[0] for s in steps]
    assert [w for w in words if w != "input"] == [
        "reading", "importing", "loading", "building", "attacking"]
    # what it reads, with origins and checksums, first: before anything is loaded or built
    assert words[:words.count("input")] == ["input"] * words.count("input") >= ["input"]
    assert f"robustlab attack: input dataset: {work / 'dev.txt'} (--dataset;" in cap.err
    assert "mean l0 1.000;" in cap.out
    rc = main(_attack(work, work / "r", "-n", "3", "--no-progress"))
    cap = capsys.readouterr()
    assert rc == 2 and "robustlab attack: reading" not in cap.err
    assert "--num-examples: 2 in the run, 3 now" in cap.err
    assert "it was started as: robustlab" in cap.err
    assert main(_attack(work, work / "r", "-n", "2", "--kappa", "5", "--no-progress")) == 2
    assert "--kappa: 20 in the run, 5 now" in capsys.readouterr().err
    assert main(_attack(work, work / "r", "-n", "2", "--no-progress")) == 0  # same: resumes
    # a crafted store: its command reaches the terminal escaped, never as control sequences
    import sqlite3

    with sqlite3.connect(next((work / "r").glob("*.sqlite*"))) as db:
        db.execute("UPDATE run SET command=? WHERE id=1", ("robustlab \x1b[2J attack",))
    assert main(_attack(work, work / "r", "-n", "3", "--no-progress")) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "it was started as: robustlab \\x1b[2J attack" in err


def _env(work: Path) -> dict[str, str]:
    return dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
                PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
                ROBUSTLAB_NEIGHBOURHOOD=f"table:{work / 'table.json'}",
                ROBUSTLAB_PATCH_TABLE=str(work / "pairs.json"))


def test_stock_textattack_cli_with_recipe_path_outside_the_checkout(saved_bow, work):
    """`textattack attack --attack-from-file "$(robustlab recipe-path so-beam)^build"` from a
    directory that is not the checkout, with a robustlab model as the victim."""
    env = _env(work)
    path = subprocess.run([sys.executable, "-m", "robustlab", "recipe-path", "so-beam",
                           "--build"], env=env, capture_output=True, text=True, cwd=work,
                          timeout=120)
    assert path.returncode == 0, path.stderr
    (work / "bow_victim.py").write_text(
        "from robustlab.models.registry import load_model\n"
        "from robustlab.integrations.victims import textattack_wrapper\n"
        f"model = textattack_wrapper(load_model({str(saved_bow)!r}))\n")
    (work / "data.py").write_text("import textattack\n"
                                  "dataset = textattack.datasets.Dataset(["
                                  "('the plot is good film .', 1), ('a dull thing', 0)])\n")
    ta = subprocess.run(
        [str(Path(sys.executable).parent / "textattack"), "attack", "--attack-from-file",
         path.stdout.strip(), "--model-from-file", "bow_victim.py", "--dataset-from-file",
         "data.py", "--num-examples", "2", "--log-to-csv", "stock.csv"],
        env=env, capture_output=True, text=True, timeout=600, cwd=work)
    assert ta.returncode == 0, ta.stderr[-2000:]
    rows = csv_rows(work / "stock.csv")
    assert [r["result_type"] for r in rows][1] == "Skipped" and len(rows) == 2
    assert "film → movie" in ta.stdout  # the patch pair is printed, whatever the outcome
    assert "misclassified examples are attacked, not skipped" in ta.stdout  # how to read
    # TextAttack's summary table, which the stock CLI keeps
    assert "No entry found for goal function" not in ta.stderr


def test_attack_refuses_an_untrained_family(work, capsys):
    """An untrained family would be attacked at random: refused before anything exists."""
    assert main(_attack(work, work / "r", "-n", "1", "--no-progress", model="bow")) == 2
    err = capsys.readouterr().err
    assert "untrained bow model" in err and "robustlab train" in err
    assert not (work / "r").exists()


def test_attack_shows_why_examples_failed(work, monkeypatch, capsys):
    """A victim that raises in every cell: the error is printed, not only counted (exit 1)."""
    import robustlab.integrations.victims as w

    def broken(texts):
        raise RuntimeError("the model is broken")

    monkeypatch.setattr(w, "load_victim",
                        lambda spec, device=None: (make_wrapper(broken), "broken"))
    assert main(_attack(work, work / "r", "-n", "1", "--no-progress")) == 1
    err = capsys.readouterr().err
    assert "1 example(s) failed" in err and "ex=000000: " in err and "model is broken" in err


@pytest.mark.slow
def test_attack_subprocess_prints_no_third_party_warnings(saved_bow, work):
    r = subprocess.run([sys.executable, "-m", "robustlab", "attack", "--recipe", "so-beam",
                        "--model", str(saved_bow), "--dataset", "dev.txt", "--out", "r", "-n",
                        "1"], env=_env(work), capture_output=True, text=True, cwd=work,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    noise = [ln for ln in r.stderr.splitlines()
             if "Warning" in ln or ln.startswith("textattack:") or "pkg_resources" in ln]
    assert noise == [] and "robustlab attack: importing TextAttack" in r.stderr


def test_config_differences_name_the_options():
    from robustlab.runs.study import config_differences
    from robustlab.studies.second_order.config import AttackConfig

    base = AttackConfig(recipe="so-beam", model="hf:x", dataset={"name": "demo"},
                        num_examples=10, source="wordnet")
    assert config_differences(base, base.to_dict()) == []
    more = AttackConfig(**{**base.__dict__, "num_examples": 20})
    assert config_differences(more, base.to_dict()) == ["--num-examples: 10 in the run, 20 now"]
    two = AttackConfig(**{**base.__dict__, "source": "table:t.json", "beam_width": 5})
    assert config_differences(two, base.to_dict()) == [
        '--source/--mlm: "wordnet" in the run, "table:t.json" now',
        "--beam-width: 20 in the run, 5 now"]
