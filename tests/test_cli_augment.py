"""`robustlab augment`: row accounting, seeding, labels carried, the exp-2 training file."""

from __future__ import annotations

import json

import pytest

from robustlab.cli import main
from robustlab.commands.augment import split_specs
from robustlab.data.files import read_rows


def run(args, capsys):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("sentence\tlabel\tid\nthe cat sat on the mat\t0\ta\ndogs run fast today\t1\tb\n"
                    "a truly wonderful film\t1\tc\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("n, exclude, expected", [(1, False, 6), (4, False, 15), (4, True, 12)])
def test_rows_out_equal_rows_in_times_n_plus_originals(tmp_path, capsys, src, n, exclude,
                                                       expected):
    out = tmp_path / "aug.tsv"
    args = ["augment", "-p", "char_swap", "-n", n, "-i", src, "-o", out]
    rc, _, err = run(args + (["--exclude-original"] if exclude else []), capsys)
    assert rc == 0, err
    t = read_rows(out)
    assert len(t) == expected == 3 * n + (0 if exclude else 3)
    assert t.columns == ["sentence", "label", "id", "perturbation", "changed"]
    per_row = n + (0 if exclude else 1)
    for i, (label, ident) in enumerate([("0", "a"), ("1", "b"), ("1", "c")]):
        block = t.rows[i * per_row : (i + 1) * per_row]
        assert {r["label"] for r in block} == {label} and {r["id"] for r in block} == {ident}
        if not exclude:
            assert block[0]["perturbation"] == "" and block[0]["changed"] == "false"
        assert all(r["perturbation"] == "char_swap" for r in block[0 if exclude else 1 :])
    assert f"3 rows in -> {expected} rows out" in err


def test_seeded_and_first_copy_equals_perturb(tmp_path, capsys, src):
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    for out, seed in ((a, 5), (b, 5), (c, 6)):
        run(["augment", "-p", "char_swap", "-n", 3, "--exclude-original", "-i", src, "-o", out,
             "--seed", seed], capsys)
    assert a.read_bytes() == b.read_bytes() and a.read_bytes() != c.read_bytes()
    rows = [json.loads(x) for x in a.read_text(encoding="utf-8").splitlines()]
    copies = [r["sentence"] for r in rows[:3]]
    assert len(set(copies)) > 1  # the copies of a row differ (different derived seeds)
    p = tmp_path / "p.jsonl"
    run(["perturb", "-p", "char_swap", "-i", src, "-o", p, "--seed", 5], capsys)
    perturbed = [json.loads(x)["sentence"] for x in p.read_text(encoding="utf-8").splitlines()]
    assert [rows[3 * i]["sentence"] for i in range(3)] == perturbed


def test_several_perturbations_cycle_and_train_file(tmp_path, capsys, src):
    out, train = tmp_path / "aug.csv", tmp_path / "exp2.tsv"
    rc, _, err = run(["augment", "-p", "append_token:token=QQ,leet_letters", "-p", "char_swap",
                      "-i", src, "-o", out, "--train-file", train], capsys)
    assert rc == 0, err
    t = read_rows(out)
    assert len(t) == 3 * 4  # N defaults to the number of perturbations (3) + the original
    assert t.column("perturbation")[:4] == ["", "append_token", "leet_letters", "char_swap"]
    assert t.rows[1]["sentence"] == "the cat sat on the mat QQ"
    tr = read_rows(train)
    assert tr.columns == ["label", "text"] and len(tr) == 12
    assert tr.column("label") == ["0"] * 4 + ["1"] * 8
    assert tr.column("text") == t.column("sentence")
    assert "training file" in err and "12 rows" in err


def test_split_specs():
    assert split_specs(["a,b:k=1,j=2,c", "textattack:WordSwapWordNet"]) == [
        "a", "b:k=1,j=2", "c", "textattack:WordSwapWordNet"]


@pytest.mark.parametrize("extra, message", [
    (["-p", "char_swap", "-n", "0"], "must be at least 1"),
    (["-p", "char_swp"], "Did you mean"),
    (["-p", "char_swap", "--column", "nope"], "no column 'nope'"),
    (["-p", "char_swap", "--train-file", "T.tsv", "--label-column", "lbl"], "no column 'lbl'"),
    (["-p", "char_swap", "--param", "nope=1"], "unknown parameter"),
])
def test_bad_input_is_clear_and_writes_nothing(tmp_path, capsys, src, extra, message):
    out = tmp_path / "aug.tsv"
    extra = [str(tmp_path / x) if x == "T.tsv" else x for x in extra]
    rc, _, err = run(["augment", *extra, "-i", src, "-o", out], capsys)
    assert rc == 2 and message in err and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.tsv"]


def test_unrepresentable_output_leaves_no_files(tmp_path, capsys):
    src = tmp_path / "in.csv"
    src.write_text('text,label\n"two\nlines",1\n', encoding="utf-8")
    out, train = tmp_path / "o.txt", tmp_path / "t.tsv"
    rc, _, err = run(["augment", "-p", "char_swap", "-i", src, "-o", out, "--train-file", train],
                     capsys)
    assert rc == 2 and "line break" in err
    assert not out.exists() and not train.exists() and not list(tmp_path.glob(".*"))
