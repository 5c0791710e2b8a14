"""`robustlab perturb` and `robustlab list`: row accounting, formats, bad input, real data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.data.files import read_rows

ROBUSTLAB = Path(sys.executable).parent / "robustlab"


def run(args, capsys):
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


# ---- list ------------------------------------------------------------------------------------


def test_list_perturbations_table_and_json(capsys):
    rc, out, _ = run(["list", "perturbations"], capsys)
    assert rc == 0
    header = out.splitlines()[0].split()
    assert header[:3] == ["name", "level", "asymmetric"]
    assert any(line.startswith("leet_letters ") for line in out.splitlines())
    assert "textattack:" in out
    rc, out, _ = run(["list", "perturbations", "--json"], capsys)
    rows = json.loads(out)
    names = {r["name"] for r in rows}
    assert {"identity", "leet_letters", "char_insert", "negation"} <= names
    by_name = {r["name"]: r for r in rows}
    assert by_name["char_insert"]["params"] == {"pps": 1}
    assert by_name["identity"]["asymmetric"] is False


def test_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit) as info:
        main(["perturb", "--help"])
    assert info.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--perturbation", "--pps", "--param", "--seed", "--input", "--output", "--column",
                 "--format", "--output-format", "--encoding", "--header", "--no-progress"):
        assert flag in text, flag


# ---- happy paths ---------------------------------------------------------------------------


def test_text_to_jsonl_keeps_every_row(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("Hello world, how are you?\n\n   \nit is fine!\nI love it 😍🔥\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc, _, err = run(["perturb", "-p", "leet_letters", "-i", src, "-o", out, "--seed", "3"], capsys)
    assert rc == 0
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 5
    assert [r["changed"] for r in rows] == [True, False, False, True, True]
    assert rows[1]["text"] == "" and rows[2]["text"] == "   "
    assert "😍🔥" in rows[4]["text"] and "error" not in rows[0]
    assert "5 rows: 3 changed, 2 unchanged, 0 failed" in err
    out2 = tmp_path / "out2.jsonl"
    run(["perturb", "-p", "leet_letters", "-i", src, "-o", out2, "--seed", "3"], capsys)
    assert out2.read_bytes() == out.read_bytes()  # seeded
    out3 = tmp_path / "out3.jsonl"
    run(["perturb", "-p", "leet_letters", "-i", src, "-o", out3, "--seed", "4"], capsys)
    assert out3.read_bytes() != out.read_bytes()


def test_tsv_column_by_name_and_index_and_params(tmp_path, capsys):
    src = tmp_path / "in.tsv"
    src.write_text("id\tsentence\tlabel\n1\tthe cat sat on the mat\t0\n2\tdogs run fast\t1\n",
                   encoding="utf-8")
    a, b = tmp_path / "a.tsv", tmp_path / "b.tsv"
    rc, _, _ = run(["perturb", "-p", "char_insert", "--pps", "3", "-i", src, "-o", a,
                    "--column", "sentence"], capsys)
    assert rc == 0
    run(["perturb", "-p", "char_insert:pps=3", "-i", src, "-o", b, "--column", "1"], capsys)
    assert a.read_bytes() == b.read_bytes()
    t = read_rows(a)
    assert t.columns == ["id", "sentence", "label", "changed"]
    assert t.column("id") == ["1", "2"] and t.column("label") == ["0", "1"]
    assert t.column("changed") == ["true", "true"]
    assert len(t.rows[0]["sentence"]) == len("the cat sat on the mat") + 3
    c = tmp_path / "c.tsv"
    run(["perturb", "-p", "butter_fingers_perturbation", "--param", "prob=1.0", "-i", src,
         "-o", c, "--column", "sentence"], capsys)
    assert all(ch == " " or ch != orig for ch, orig in
               zip(read_rows(c).rows[1]["sentence"], "dogs run fast", strict=True))


def test_csv_multiline_long_rows_and_text_output(tmp_path, capsys):
    long = "word " * 20_000
    src = tmp_path / "in.csv"
    src.write_text(f'text,label\n"two\nlines, quoted",1\n"{long}",0\n"",1\n', encoding="utf-8")
    out = tmp_path / "out.csv"
    rc, _, _ = run(["perturb", "-p", "word_delete", "--pps", "2", "-i", src, "-o", out], capsys)
    assert rc == 0
    t = read_rows(out)
    assert len(t) == 3 and t.column("label") == ["1", "0", "1"]
    assert len(t.rows[1]["text"].split()) == 20_000 - 2
    assert t.column("changed") == ["true", "true", "false"]
    txt = tmp_path / "out.txt"  # a text output cannot hold the quoted newline: clear error
    rc, _, err = run(["perturb", "-p", "identity", "-i", src, "-o", txt], capsys)
    assert rc == 2 and "line break" in err and not txt.exists()


def test_failed_rows_are_kept_and_reported(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text('{"text": "a fine day", "id": 1}\n{"text": null, "id": 2}\n'
                   '{"text": 7, "id": 3}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", out], capsys)
    assert rc == 1  # output complete, but some rows failed
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 3]
    assert rows[0] == {"text": "a fine day zxqv", "id": 1, "changed": True, "error": ""}
    assert rows[1]["text"] is None and rows[1]["changed"] is False
    assert "null" in rows[1]["error"] and "int" in rows[2]["error"]
    assert f"{src}: line 2: not a string (null)" in err
    assert "3 rows: 1 changed, 0 unchanged, 2 failed" in err


def test_label_text_and_cp1252(tmp_path, capsys):
    src = tmp_path / "mr.all"
    src.write_bytes("1 a caf\u00e9 with na\u00efve charm \u2026\n0 dull\n".encode("cp1252"))
    out = tmp_path / "out.train"
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", out, "--format",
                      "label-text"], capsys)
    assert rc == 2 and "line 1" in err and "--encoding cp1252" in err and not out.exists()
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", out, "--format",
                      "label-text", "--encoding", "cp1252"], capsys)
    assert rc == 0 and "no 'changed'/'error' columns" in err
    assert out.read_text(encoding="utf-8") == ("1 a caf\u00e9 with na\u00efve charm \u2026 zxqv\n"
                                               "0 dull zxqv\n")


def test_label_text_input_to_txt_output_keeps_labels(tmp_path, capsys):
    src = tmp_path / "train.txt"
    src.write_text("1 a fine film\n0 a dull one\n", encoding="utf-8")
    out = tmp_path / "train.perturbed.txt"
    rc, _, _ = run(["perturb", "-p", "append_token", "-i", src, "-o", out, "--format",
                    "label-text"], capsys)
    assert rc == 0
    assert out.read_text(encoding="utf-8") == "1 a fine film zxqv\n0 a dull one zxqv\n"


# ---- bad input: one clear message, exit 2, no output ------------------------------------------


@pytest.mark.parametrize(
    "extra, content, message",
    [
        (["-p", "leet_letterz"], "a\n", "Did you mean: leet_letters"),
        (["-p", "char_insert", "--pps", "0"], "a\n", "--pps 0"),
        (["-p", "char_insert", "--pps", "9"], "a\n", "pps"),
        (["-p", "leet_letters", "--pps", "2"], "a\n", "does not take --pps"),
        (["-p", "leet_letters", "--param", "max_leet"], "a\n", "KEY=VALUE"),
        (["-p", "leet_letters", "--param", "nope=1"], "a\n", "unknown parameter"),
        (["-p", "leet_letters", "--param", "max_leet=7"], "a\n", "max_leet"),
        (["-p", "leet_letters", "--column", "nope"], "a\n", "no column 'nope'"),
    ],
)
def test_bad_options(tmp_path, capsys, extra, content, message):
    src = tmp_path / "in.txt"
    src.write_text(content, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc, _, err = run(["perturb", *extra, "-i", src, "-o", out], capsys)
    assert rc == 2, err
    assert message in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    "name, data, message",
    [
        ("missing.txt", None, "no such file"),
        ("bad.jsonl", b'{"text": "a"}\n{"text": \n', "line 2: not valid JSON"),
        ("bad.csv", b'text,label\n"open,1\n', "malformed CSV"),
        ("rag.tsv", b"text\tlabel\na\t1\nb\n", "line 3: expected 2"),
        ("latin.txt", b"ok\nna\xefve\n", "line 2"),
    ],
)
def test_bad_files(tmp_path, capsys, name, data, message):
    src = tmp_path / name
    if data is not None:
        src.write_bytes(data)
    out = tmp_path / "out.jsonl"
    rc, _, err = run(["perturb", "-p", "leet_letters", "-i", src, "-o", out], capsys)
    assert rc == 2 and message in err and str(src) in err
    assert not out.exists()


# ---- real data and the console script -------------------------------------------------------


def test_sst2_train_label_text(shared_data, tmp_path, capsys):
    src = shared_data / "sst" / "stsa.binary.train"
    out = tmp_path / "sst.jsonl"
    rc, _, err = run(["perturb", "-p", "char_swap", "--pps", "2", "-i", src, "--format",
                      "label-text", "-o", out, "--no-progress"], capsys)
    assert rc == 0
    t, orig = read_rows(out), read_rows(src, "label-text")
    assert len(t) == len(orig) == 6920
    assert t.column("label") == orig.column("label")
    changed = sum(t.column("changed"))
    assert changed > 0.9 * len(t)
    assert all(len(a) == len(b) for a, b in zip(t.column("text"), orig.column("text"), strict=True))
    assert "6920 rows" in err


def test_console_script_subprocess(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("review,stars\nGreat food and friendly staff!,5\n", encoding="utf-8")
    out = tmp_path / "out.csv"
    proc = subprocess.run([str(ROBUSTLAB), "perturb", "-p", "duplicate_punctuations", "-i",
                           str(src), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert read_rows(out).rows == [{"review": "Great food and friendly staff!!", "stars": "5",
                                    "changed": "true"}]
    bad = subprocess.run([str(ROBUSTLAB), "perturb", "-p", "nope", "-i", str(src), "-o",
                          str(tmp_path / "x.csv")], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "unknown perturbation 'nope'" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_perturb_path_imports_no_numpy_or_torch(tmp_path):
    """`robustlab perturb` registers only its own command: no numpy/torch start-up cost. (The
    vectorised learnability perturbations, e.g. leet_letters, import numpy lazily when they run;
    a pure-Python one such as char_swap shows the command path itself stays light.) Nor does it
    load the run store: writing a file atomically needs only ``robustlab.outputs``."""
    src = tmp_path / "in.txt"
    src.write_text("a fine day\n", encoding="utf-8")
    probe = ("import sys\nfrom robustlab.cli import main\n"
             f"rc = main(['perturb', '-p', 'char_swap', '-i', {str(src)!r}, '-o', "
             f"{str(tmp_path / 'o.jsonl')!r}])\n"
             "print(rc, sorted({m.split('.')[0] for m in sys.modules} & "
             "{'numpy', 'torch', 'transformers', 'scipy'}), "
             "sorted({'robustlab.runs.store', 'robustlab.runs.executor'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "0 [] []", out.stderr


def test_failure_after_clean_rows_rewrites_with_error_column(tmp_path, capsys, monkeypatch):
    """The streamed writer learns of a failure late: every row still gets the 'error' column."""
    from robustlab.data import stream

    monkeypatch.setattr(stream, "BATCH", 2)
    lines = [f'{{"text": "row {i}"}}' for i in range(7)] + ['{"text": null}']
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", out], capsys)
    rows = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert rc == 1 and len(rows) == 8 and all("error" in r for r in rows)
    assert rows[0] == {"text": "row 0 zxqv", "changed": True, "error": ""}
    assert "8 rows: 7 changed, 0 unchanged, 1 failed" in err


def test_progress_bar_from_1000_lines(tmp_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("".join(f"row number {i}\n" for i in range(1200)), encoding="utf-8")
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", tmp_path / "o.jsonl"],
                     capsys)
    assert rc == 0 and "append_token" in err and "1200/1200" in err  # tqdm's bar on stderr
    rc, _, err = run(["perturb", "-p", "append_token", "-i", src, "-o", tmp_path / "p.jsonl",
                      "--no-progress"], capsys)
    assert rc == 0 and "1200/1200" not in err
