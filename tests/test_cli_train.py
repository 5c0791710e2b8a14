"""``robustlab train``: a saved model other commands accept; bad input leaves nothing behind."""

from __future__ import annotations

import json

import numpy as np

from robustlab.cli import main
from robustlab.models.registry import load_model


def test_train_bow_on_demo_then_load(tmp_path, capsys):
    out = tmp_path / "model"
    rc = main(["train", "--model", "bow", "--data", "demo", "--steps", "150", "--seed", "1",
               "--max-examples", "600", "--out", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "held-out accuracy" in text and str(out) in text
    info = json.loads((out / "train_info.json").read_text())
    assert info["train"]["n"] == 600 and info["steps"] == 150 and info["seed"] == 1
    assert info["test_accuracy"] > 0.7  # the demo task is learnable well above chance
    model = load_model(out)
    assert model.family == "bow" and model.steps == 150
    p = model.predict(["the movie is truly wonderful .", "the plot is utterly dull ."])
    assert list(p) == [1, 0]
    # an existing model directory is not overwritten without --force
    assert main(["train", "--model", "bow", "--data", "demo", "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["train", "--model", "bow", "--data", "demo", "--steps", "5", "--force",
                 "--out", str(out)]) == 0
    assert json.loads((out / "train_info.json").read_text())["steps"] == 5


def test_train_with_columns_and_test_file(tmp_path):
    rng = np.random.default_rng(0)
    rows = ["label\tsentence"] + [
        f"{i % 2}\t{'great' if i % 2 else 'awful'} {' '.join(rng.choice(list('abcdef'), 4))}"
        for i in range(120)]
    (tmp_path / "train.tsv").write_text("\n".join(rows) + "\n")
    (tmp_path / "test.tsv").write_text("\n".join(rows[:41]) + "\n")
    out = tmp_path / "m"
    assert main(["train", "--model", "textrnn:hidden=16,embed_dim=16", "--data",
                 str(tmp_path / "train.tsv"), "--test-data", str(tmp_path / "test.tsv"),
                 "--text-column", "sentence", "--label-column", "label", "--steps", "60",
                 "--out", str(out)]) == 0
    info = json.loads((out / "train_info.json").read_text())
    assert info["test"]["n"] == 40 and info["test_accuracy"] == 1.0
    assert load_model(out).hidden == 16


def test_bad_input_exits_2_and_writes_nothing(tmp_path, capsys):
    out = tmp_path / "m"
    (tmp_path / "one.txt").write_text("0 a b\n0 c d\n0 e f\n")
    cases = [
        (["--model", "nosuch", "--data", "demo"], "unknown model"),
        (["--model", "bow", "--data", str(tmp_path / "missing.tsv")], "no such file"),
        (["--model", "bow", "--data", str(tmp_path / "one.txt")], "only 1 class"),
        (["--model", "bow", "--data", "demo", "--steps", "0"], "--steps"),
        (["--model", "bow", "--data", "demo", "--param", "hiden=3"], "unknown parameter"),
    ]
    for args, msg in cases:
        assert main(["train", *args, "--out", str(out)]) == 2, args
        assert msg in capsys.readouterr().err
        assert not out.exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".m.")]
