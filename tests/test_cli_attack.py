"""``robustlab attack`` / ``robustlab bias`` / ``robustlab textattack`` and the stock TextAttack CLI."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _so_toys import make_wrapper, planted_proba

from robustlab.cli import main
from robustlab.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
TABLE = {"good": ["great", "fine"], "plot": ["story"]}
PAIRS = {"film": ["movie"]}


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "dev.txt"
    data.write_text("1 the plot is good film .\n0 a dull thing\n1 good film and plot\n")
    (tmp_path / "table.json").write_text(json.dumps(TABLE))
    (tmp_path / "pairs.json").write_text(json.dumps(PAIRS))
    return tmp_path


def attack_args(files, out, *extra):
    return ["attack", "--recipe", "so-beam", "--model", "hf:planted", "--dataset",
            str(files / "dev.txt"), "--source", f"table:{files / 'table.json'}",
            "--patch-table", str(files / "pairs.json"), "--out", str(out), "--no-progress",
            *extra]


def use_model(monkeypatch, fn):
    import robustlab.integrations.victims as cmd

    monkeypatch.setattr(cmd, "load_victim", lambda spec, device=None: (make_wrapper(fn), "planted"))


def test_attack_writes_the_run_directory(files, monkeypatch, capsys):
    use_model(monkeypatch, planted_proba)
    out = files / "run"
    assert main(attack_args(files, out, "--log-to-csv")) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "attack" and summary["complete"]
    assert summary["counts"] == {"successful": 2, "failed": 0, "skipped": 1}
    assert summary["success_rate"] == 1.0 and summary["mean_l0"] == 1.0
    assert summary["files"] == ["attack_results.csv"]
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert recs[0]["patch"] == ["film", "movie"] and recs[0]["perturbed"] == \
        "the plot is great film ."
    assert recs[0]["perturbed_output"] == 1 and recs[0]["patched_output"] == 0
    assert recs[1]["result_type"] == "skipped" and "no patch word" in recs[1]["skip_reason"]
    assert recs[0]["source"] == "table:table.json" and recs[0]["queries"] > 0
    rows = list(csv.DictReader((out / "attack_results.csv").open()))
    assert list(rows[0])[:9] == ["original_text", "perturbed_text", "original_score",
                                 "perturbed_score", "original_output", "perturbed_output",
                                 "ground_truth_output", "num_queries", "result_type"]
    assert rows[0]["patch_words"] == "film->movie" and rows[0]["l0"] == "1"
    assert "[[great]]" in rows[0]["perturbed_text"]
    assert RunStore(out, readonly=True).counts()["done"] == 3
    printed = capsys.readouterr().out
    assert "success rate 1.000" in printed
    # TextAttack's summary table, then a successful attack with its texts
    assert "| Attack Results" in printed and "| Attack success rate:" in printed
    assert re.search(r"\| Original accuracy: +\| \d\.\d{3} +\|", printed)
    assert "--- successful attack 1 of " in printed and f"  + {recs[0]['perturbed']}" in printed


def test_interrupted_attack_resumes_where_it_stopped(files, monkeypatch):
    calls = []

    def flaky(texts):
        calls.extend(texts)
        if any("good film and plot" in t for t in texts) and len(calls) < 10_000:
            raise KeyboardInterrupt
        return planted_proba(texts)

    use_model(monkeypatch, flaky)
    out = files / "run"
    assert main(attack_args(files, out)) == 130
    done = RunStore(out, readonly=True).done_keys()
    assert done == {"ex=000000", "ex=000001"}
    assert not (out / "summary.json").exists()
    use_model(monkeypatch, planted_proba)
    seen = []
    use_model(monkeypatch, lambda ts: (seen.extend(ts), planted_proba(ts))[1])
    assert main(attack_args(files, out)) == 0
    assert seen and all("the plot is good film" not in t for t in seen)  # ex 0 not redone
    assert json.loads((out / "summary.json").read_text())["complete"]


def test_bad_input_exits_with_a_message(files, monkeypatch, capsys):
    use_model(monkeypatch, planted_proba)
    assert main(["attack", "--recipe", "so-nope", "--model", "x", "--dataset",
                 str(files / "dev.txt"), "--out", str(files / "o")]) == 2
    assert "unknown recipe 'so-nope'" in capsys.readouterr().err
    assert main(attack_args(files, files / "o2", "--recipe", "so-enum", "-k", "3")) == 2
    assert main(attack_args(files, files / "o3", "--num-examples", "0")) == 2
    assert main(["attack", "--recipe", "so-beam", "--model", "hf:x", "--dataset",
                 str(files / "missing.txt"), "--out", str(files / "o4")]) == 2
    assert "no such file" in capsys.readouterr().err
    pairs = files / "pairs.tsv"
    pairs.write_text("sentence1\tsentence2\tlabel\na film\ta movie\t1\nb\tc\t0\n")
    assert main(["attack", "--recipe", "so-beam", "--model", "hf:x", "--dataset", str(pairs),
                 "--out", str(files / "o5")]) == 2
    assert "sentence pairs are not supported" in capsys.readouterr().err


def test_bias_command(files, monkeypatch, capsys):
    class Toy:
        def predict_proba(self, texts):
            return np.array([[0.7, 0.3] if "she" in t.split() else [0.4, 0.6] for t in texts])

        def model_id(self):
            return "toy"

    import robustlab.models.registry as reg

    monkeypatch.setattr(reg, "load_model", lambda spec, device=None: Toy())
    # a checkpoint (hf:toy) is loaded with its trained head: robustlab.models.checkpoint
    monkeypatch.setattr("robustlab.models.checkpoint.load_checkpoint",
                        lambda spec, device=None: Toy())
    data = files / "g.txt"
    data.write_text("1 he liked the good plot\n0 he hated it\n1 the film\n")
    out = files / "bias"
    assert main(["bias", "--model", "hf:toy", "--dataset", str(data), "--pairs", "builtin",
                 "--source", f"table:{files / 'table.json'}", "--k", "0,1", "--out", str(out),
                 "--no-progress"]) == 0
    s = json.loads((out / "summary.json").read_text())
    he = [r for r in s["table"] if r["pair"] == ["he", "she"]]
    assert [r["B"] for r in he] == [pytest.approx(-0.3), pytest.approx(-0.3)]
    assert "he/she" in capsys.readouterr().out
    assert main(["bias", "--model", "hf:toy", "--dataset", str(data), "--k", "x", "--out",
                 str(files / "b2")]) == 2


def _ta_env(files):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false",
               ROBUSTLAB_NEIGHBOURHOOD=f"table:{files / 'table.json'}",
               ROBUSTLAB_PATCH_TABLE=str(files / "pairs.json"))
    (files / "victim.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / 'tests')!r})
        from _so_toys import make_wrapper, planted_proba
        model = make_wrapper(planted_proba)
    """))
    (files / "data.py").write_text("import textattack\n"
                                   "dataset = textattack.datasets.Dataset(["
                                   "('the plot is good film .', 1), ('a dull thing', 0)])\n")
    return env


@pytest.mark.slow
def test_stock_textattack_cli_and_passthrough(files):
    env = _ta_env(files)
    common = ["--model-from-file", str(files / "victim.py"), "--dataset-from-file",
              str(files / "data.py"), "--num-examples", "2", "--disable-stdout"]
    stock = subprocess.run(
        [str(Path(sys.executable).parent / "textattack"), "attack", "--attack-from-file",
         f"{ROOT / 'robustlab/recipes/so_beam.py'}^build", *common,
         "--log-to-csv", str(files / "stock.csv")],
        env=env, capture_output=True, text=True, timeout=600, cwd=files)
    assert stock.returncode == 0, stock.stderr[-2000:]
    assert "Successful" in (files / "stock.csv").read_text()
    ours = subprocess.run(
        [sys.executable, "-m", "robustlab", "textattack", "attack", "--recipe", "so-beam",
         *common, "--log-to-csv", str(files / "ours.csv")],
        env=env, capture_output=True, text=True, timeout=600, cwd=files)
    assert ours.returncode == 0, ours.stderr[-2000:]
    assert "Successful" in (files / "ours.csv").read_text()


def test_perplexity_with_a_tiny_causal_lm(files, tmp_path):
    """--ppl-model: median perplexity of successful originals and vulnerable examples."""
    from _so_toys import tiny_mlm
    from transformers import GPT2Config, GPT2LMHeadModel

    from robustlab.studies.second_order.neighbourhood import TableSource
    from robustlab.studies.second_order.study import perplexities, run_attack_study

    _, tok = tiny_mlm(tmp_path)
    lm_dir = tmp_path / "lm"
    GPT2LMHeadModel(GPT2Config(vocab_size=len(tok), n_positions=32, n_embd=16, n_layer=1,
                               n_head=2)).save_pretrained(lm_dir)
    tok.save_pretrained(lm_dir)
    ppl = perplexities(["the film is good", "a"], str(lm_dir))
    assert len(ppl) == 2 and all(p > 1 for p in ppl)
    s = run_attack_study(recipe="so-beam", model_wrapper=make_wrapper(planted_proba),
                         model_name="planted", examples=[("the plot is good film .", 1)],
                         out=files / "ppl", recipe_kwargs={"source": TableSource(TABLE),
                                                           "pairs": PAIRS},
                         ppl_model=str(lm_dir), progress=False)
    assert s["perplexity"]["n"] == 1 and s["perplexity"]["original"] > 1
    assert s["perplexity"]["perturbed"] > 1


@pytest.mark.slow
def test_attack_a_real_trained_model_end_to_end(files, shared_data):
    """A TextRNN trained with the registry, saved, and attacked through the CLI (no mocks)."""
    from robustlab.models.registry import make_model

    lines = (shared_data / "sst" / "stsa.binary.train").read_text().splitlines()[:400]
    texts, labels = [ln[2:] for ln in lines], [int(ln[0]) for ln in lines]
    model_dir = files / "textrnn"
    make_model("textrnn").fit(texts, labels, steps=30).save(model_dir)
    out = files / "real"
    table = shared_data / "synonyms" / "counterfitted_neighbors.json"
    assert main(["attack", "--recipe", "so-beam", "--model", str(model_dir), "--dataset",
                 str(shared_data / "sst" / "stsa.binary.dev"), "-n", "4", "--source",
                 f"table:{table}", "--patch-table", str(table), "--out", str(out),
                 "--no-progress"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] and sum(s["counts"].values()) == 4
    assert s["source"] == "table:counterfitted_neighbors.json"


def test_attack_records_its_inputs_and_refuses_a_changed_table(files, monkeypatch, capsys):
    """Every file the attack read is in config["inputs"] with its SHA-256; a resume after the
    patch table changed is refused naming it (issue 12 §3)."""
    import hashlib

    use_model(monkeypatch, planted_proba)
    out = files / "run"
    assert main(attack_args(files, out)) == 0
    rec = json.loads((out / "summary.json").read_text())["config"]["inputs"]
    assert {k: (v.get("path") or v.get("name"), v["origin"]) for k, v in rec.items()} == {
        "dataset": (str(files / "dev.txt"), "--dataset"), "model": ("planted", "--model"),
        "neighbourhood": (str(files / "table.json"), "--source/--mlm"),
        "patch_table": (str(files / "pairs.json"), "--patch-table")}
    sha = hashlib.sha256((files / "pairs.json").read_bytes()).hexdigest()
    assert rec["patch_table"]["sha256"] == sha
    assert RunStore(out, readonly=True).run_info().config["patch_table"] == \
        str(files / "pairs.json")
    capsys.readouterr()
    (files / "pairs.json").write_text(json.dumps({**PAIRS, "plot": ["story"]}))
    assert main(attack_args(files, out)) == 2
    err = capsys.readouterr().err
    assert "input changed since this run started: patch table (--patch-table)" in err
    assert sha[:4] in err


def test_bias_records_its_inputs(files, monkeypatch, capsys):
    import robustlab.models.registry as reg

    class Toy:
        def predict_proba(self, texts):
            return np.array([[0.5, 0.5] for _ in texts])

    monkeypatch.setattr(reg, "load_model", lambda spec, device=None: Toy())
    # a checkpoint (hf:toy) is loaded with its trained head: robustlab.models.checkpoint
    monkeypatch.setattr("robustlab.models.checkpoint.load_checkpoint",
                        lambda spec, device=None: Toy())
    pairs = files / "pairs.txt"
    pairs.write_text("he she\n")
    out = files / "bias"
    assert main(["bias", "--model", "hf:toy", "--dataset", str(files / "dev.txt"), "--pairs",
                 str(pairs), "--source", f"table:{files / 'table.json'}", "--k", "0",
                 "--out", str(out)]) == 0
    rec = json.loads((out / "summary.json").read_text())["config"]["inputs"]
    assert sorted(rec) == ["dataset", "model", "neighbourhood", "pairs"]
    assert rec["pairs"]["path"] == str(pairs) and rec["pairs"]["origin"] == "--pairs"
    assert f"robustlab bias: input pairs: {pairs} (--pairs;" in capsys.readouterr().err
