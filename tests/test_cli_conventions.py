"""One option convention across commands (issue 12 §2, docs/cli.md "Option convention").

Parse-level tests (cheap) for every spelling on every command, the new-user failures of the
issue end to end, that nothing is created before a check fails, and that the command lines
stored by older run directories still parse into the same configuration.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from robustlab.cli import build_parser, main
from robustlab.data.datasets import resolve_dataset
from robustlab.errors import InputError
from robustlab.options import split_specs

#: the required options of each command that reads a dataset (the dataset option excluded)
DATASET_COMMANDS = {
    "learnability": ["--model", "bow", "--out", "o"],
    "cent": ["--model", "bow", "--out", "o"],
    "robustness": ["--model", "bow", "--out", "o"],
    "demo": [],
    "train": ["--model", "bow", "--out", "o"],
    "attack": ["--recipe", "so-beam", "--model", "bow", "--out", "o"],
    "bias": ["--model", "bow", "--out", "o"],
}
SEED_COMMANDS = {  # a single --seed (dest seed)
    "train": ["--model", "bow", "--dataset", "demo", "--out", "o"],
    "attack": ["--recipe", "so-beam", "--model", "bow", "--dataset", "demo", "--out", "o"],
    "bias": ["--model", "bow", "--dataset", "demo", "--out", "o"],
    "perturb": ["-p", "leet_letters", "-i", "in.txt", "-o", "out.txt"],
    "augment": ["-p", "leet_letters", "-i", "in.txt", "-o", "out.txt"],
    "cross-domain clf": ["--out", "o"],
    "cross-domain mt": ["--out", "o"],
    "cross-domain scores": ["scores.csv"],
}
QUIET_COMMANDS = {  # command -> (required options, dest)
    "learnability": (["--model", "bow", "--out", "o"], "quiet"),
    "robustness": (["--model", "bow", "--out", "o"], "quiet"),
    "demo": ([], "quiet"),
    "check": (["plan.toml"], "quiet"),
    "cross-domain clf": (["--out", "o"], "quiet"),
    "attack": (SEED_COMMANDS["attack"], "quiet"),
    "bias": (SEED_COMMANDS["bias"], "quiet"),
    "perturb": (SEED_COMMANDS["perturb"], "no_progress"),
    "augment": (SEED_COMMANDS["augment"], "no_progress"),
    # refused --quiet before every command took it (tests/test_cli_quiet.py checks them all)
    "train": (SEED_COMMANDS["train"], "quiet"),
    "report": (["run"], "quiet"),
    "failures": (["run"], "quiet"),
    "cross-domain mt": (["--out", "o"], "quiet"),
}
MULTI_MODEL = {
    "learnability": ["--out", "o"], "robustness": ["--out", "o"], "demo": [],
    "cross-domain clf": ["--out", "o"],
}
SINGLE_MODEL = {
    "train": ["--dataset", "demo", "--out", "o"],
    "attack": ["--recipe", "so-beam", "--dataset", "demo", "--out", "o"],
    "bias": ["--dataset", "demo", "--out", "o"],
}


@pytest.fixture(scope="module")
def parser():
    return build_parser()


def parse(parser, command: str, *argv: str):
    return parser.parse_args([*command.split(), *argv])


def refused(parser, capsys, command: str, *argv: str) -> str:
    with pytest.raises(SystemExit) as exc:
        parse(parser, command, *argv)
    assert exc.value.code == 2
    return capsys.readouterr().err


# ---- parse level: every spelling on every command ------------------------------------------------


@pytest.mark.parametrize("command", sorted(DATASET_COMMANDS))
@pytest.mark.parametrize("flag", ["--dataset", "--data", "--dataset-from-huggingface"])
def test_dataset_spellings(parser, command, flag):
    args = parse(parser, command, *DATASET_COMMANDS[command], flag, "data/dev.tsv")
    assert args.dataset == "data/dev.tsv"


@pytest.mark.parametrize("command", sorted(DATASET_COMMANDS))
def test_dataset_file_options_are_the_same_everywhere(parser, command):
    args = parse(parser, command, *DATASET_COMMANDS[command], "--dataset", "d.tsv",
                 "--encoding", "cp1252", "--no-header", "--text-column", "sentence",
                 "--label-column", "1")
    assert (args.encoding, args.header, args.text_column, args.label_column) == (
        "cp1252", False, "sentence", "1")
    fmt_dest = "dataset_format" if command in ("attack", "bias") else "format"
    for flag in ("--format", "--dataset-format"):
        args = parse(parser, command, *DATASET_COMMANDS[command], "--dataset", "d.tsv",
                     flag, "tsv")
        assert getattr(args, fmt_dest) == "tsv"


@pytest.mark.parametrize("command", ["train", "attack", "bias"])
def test_split_option(parser, command):
    assert parse(parser, command, *DATASET_COMMANDS[command], "--dataset", "sst2",
                 "--split", "validation").split == "validation"


@pytest.mark.parametrize("command", ["learnability", "robustness", "demo", "train"])
@pytest.mark.parametrize("flag", ["--test-dataset", "--test-data"])
def test_test_dataset_spellings(parser, command, flag):
    args = parse(parser, command, *DATASET_COMMANDS[command], "--dataset", "a.tsv", flag, "b.tsv")
    assert args.test_dataset == "b.tsv"


@pytest.mark.parametrize("command", ["perturb", "augment"])
@pytest.mark.parametrize("flag", ["--format", "--dataset-format"])
def test_file_commands_take_the_same_format_option(parser, command, flag):
    args = parse(parser, command, *SEED_COMMANDS[command], flag, "tsv", "--encoding", "cp1252")
    assert (args.fmt, args.encoding) == ("tsv", "cp1252")


def test_a_second_dataset_is_refused_not_silently_replaced(parser, capsys):
    err = refused(parser, capsys, "robustness", "--model", "bow", "--out", "o",
                  "--dataset-from-huggingface", "demo", "--data", "x.tsv")
    assert "given twice" in err and "demo" in err and "x.tsv" in err
    # the same value twice is harmless
    assert parse(parser, "train", "--model", "bow", "--out", "o", "--data", "demo",
                 "--dataset", "demo").dataset == "demo"


@pytest.mark.parametrize("command", sorted(SEED_COMMANDS))
@pytest.mark.parametrize("flag", ["--seed", "--random-seed"])
def test_seed_spellings(parser, capsys, command, flag):
    assert parse(parser, command, *SEED_COMMANDS[command], flag, "7").seed == 7
    err = refused(parser, capsys, command, *SEED_COMMANDS[command], flag, "-1")
    assert "out of range" in err


@pytest.mark.parametrize("command", ["learnability", "robustness", "demo"])
def test_multi_seed_studies_take_seeds_and_seed(parser, command):
    req = DATASET_COMMANDS[command]
    assert parse(parser, command, *req, "--seeds", "0,1").seeds == "0,1"
    assert parse(parser, command, *req, "--seed", "3").seeds == "3"
    assert parse(parser, command, *req, "--random-seed", "4").seeds == "4"


@pytest.mark.parametrize("command", sorted(QUIET_COMMANDS))
@pytest.mark.parametrize("flag", ["--quiet", "--no-progress"])
def test_quiet_spellings(parser, command, flag):
    req, dest = QUIET_COMMANDS[command]
    assert getattr(parse(parser, command, *req), dest) is False
    assert getattr(parse(parser, command, *req, flag), dest) is True


@pytest.mark.parametrize("command", sorted(MULTI_MODEL))
@pytest.mark.parametrize("argv", [
    ["--model", "bow", "cnn"], ["--model", "bow,cnn"], ["--model", "bow", "--model", "cnn"],
    ["--model", "bow,", "cnn"],
])
def test_model_lists_space_comma_or_repeated(parser, command, argv):
    assert parse(parser, command, *MULTI_MODEL[command], *argv).model == ["bow", "cnn"]


def test_model_list_keeps_a_specs_own_parameters(parser):
    args = parse(parser, "learnability", "--out", "o", "--model",
                 "textrnn:hidden=8,embed_dim=4,bow", "cnn:steps=3")
    assert args.model == ["textrnn:hidden=8,embed_dim=4", "bow", "cnn:steps=3"]
    # a user default is replaced, not extended
    assert parse(parser, "cross-domain clf", "--out", "o").model == ["bow"]
    assert parse(parser, "cross-domain clf", "--out", "o", "--model", "cnn").model == ["cnn"]


@pytest.mark.parametrize("command", sorted(SINGLE_MODEL))
@pytest.mark.parametrize("argv", [
    ["--model", "bow", "cnn"], ["--model", "bow,cnn"], ["--model", "bow", "--model", "cnn"],
])
def test_single_model_commands_refuse_several(parser, capsys, command, argv):
    err = refused(parser, capsys, command, *SINGLE_MODEL[command], *argv)
    assert "takes one model, got 2 (bow, cnn)" in err


@pytest.mark.parametrize("command", sorted(SINGLE_MODEL))
def test_single_model_with_parameters(parser, command):
    args = parse(parser, command, *SINGLE_MODEL[command], "--model", "textrnn:hidden=8,steps=3")
    assert args.model == "textrnn:hidden=8,steps=3"


def test_split_specs():
    assert split_specs(["a,b:k=1,j=2,c", "d"]) == ["a", "b:k=1,j=2", "c", "d"]
    assert split_specs("bow,steps=5") == ["bow", "steps=5"]  # no ':' before: not a parameter
    assert split_specs([" , "]) == [] and split_specs(None) == []


@pytest.mark.parametrize("command, argv", [
    ("attack", ["--recipe", "so-beam", "--model", "bow", "--out", "o", "--data", "dev.tsv"]),
    ("learnability", ["--model", "bow", "--out", "o", "--data", "dev.tsv"]),
])
def test_data_is_not_an_ambiguous_prefix(parser, command, argv):
    assert parse(parser, command, *argv).dataset == "dev.tsv"


@pytest.mark.parametrize("command, argv", [
    ("attack", ["--recipe", "so-beam", "--model", "bow", "--out", "o", "--dataset", "demo",
                "--datas", "dev.tsv"]),
    ("learnability", ["--model", "bow", "--out", "o", "--pert", "leet_letters"]),
    ("perturb", ["-p", "leet_letters", "-i", "a", "-o", "b", "--out", "c"]),
    ("cross-domain clf", ["--out", "o", "--mod", "bow"]),
])
def test_no_prefix_is_guessed(parser, capsys, command, argv):
    err = refused(parser, capsys, command, *argv)
    assert "unrecognized arguments" in err


def test_a_shortened_option_names_the_full_one(parser, capsys):
    err = refused(parser, capsys, "attack", "--recipe", "so-beam", "--model", "bow", "--dataset",
                  "demo", "--out", "o", "--num-ex", "3")
    assert "options are never abbreviated: write --num-examples for --num-ex" in err
    err = refused(parser, capsys, "attack", "--recipe", "so-beam", "--model", "bow", "--dataset",
                  "demo", "--out", "o", "--datas", "x")  # ambiguous: no guess in the hint either
    assert "unrecognized arguments: --datas x\n" in err


# ---- dataset and model resolution ----------------------------------------------------------------


def test_resolve_dataset_reads_a_file_or_a_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dev.tsv").write_text("good\t1\nbad\t0\n")
    (tmp_path / "plain").write_text("1 good\n0 bad\n")
    assert resolve_dataset("dev.tsv") == {"path": str(tmp_path / "dev.tsv")}
    assert resolve_dataset("plain") == {"path": str(tmp_path / "plain")}  # exists: a file
    for name in ("demo", "demo:300", "sst2", "glue/sst2", "hf:imdb", "glue^sst2^validation"):
        assert resolve_dataset(name) == {"name": name}
    with pytest.raises(InputError, match="no such file, and unknown dataset name.*demo"):
        resolve_dataset("nosuchset")
    with pytest.raises(InputError, match=r"missing\.tsv: no such file \(and not a dataset name"):
        resolve_dataset("missing.tsv")
    with pytest.raises(InputError, match="is a directory"):
        resolve_dataset(str(tmp_path))
    # a stored command whose file moved still parses into the same configuration
    assert resolve_dataset("gone/x.tsv", must_exist=False) == {
        "path": str(tmp_path / "gone" / "x.tsv")}


def test_model_specs_are_checked_without_loading():
    from robustlab.models.registry import check_model_spec

    for ok in ("bow", "textrnn:hidden=8,steps=3", "hf:bert-base-cased", "bert-base-cased",
               "org/model-name"):
        assert check_model_spec(ok) == ok
    # a class path only when typed by the user, and only a TextClassifier (checked, not called)
    assert check_model_spec("robustlab.models.torch_models:BoW", user_class=True)
    with pytest.raises(InputError, match="accepted only when typed on the command line"):
        check_model_spec("robustlab.models.torch_models:BoW")
    with pytest.raises(InputError, match="cannot import mypkg"):
        check_model_spec("mypkg.models:MyClassifier", user_class=True)
    with pytest.raises(InputError, match="not a robustlab TextClassifier"):
        check_model_spec("subprocess:Popen", user_class=True)
    for bad, msg in (("bow$(x)", "unknown model"), ("bow-$(x)", "not a valid Hugging Face id"),
                     ("a/b/c", "not a valid Hugging Face id"), ("bow:hidden", "bad parameter"),
                     ("./no/such/dir", "no such model directory"), ("", "empty")):
        with pytest.raises(InputError, match=msg):
            check_model_spec(bad)


def test_list_models(capsys):
    assert main(["list", "models"]) == 0
    out = capsys.readouterr().out
    assert all(f in out for f in ("textrnn", "bow", "cnn", "lstm", "transformer", "minilm"))


# ---- the new user's failures, end to end; nothing created before a check fails -------------------


def test_robustness_with_data_demo_runs(tmp_path, capsys):
    out = tmp_path / "r"
    rc = main(["robustness", "--model", "bow", "--data", "demo", "--out", str(out),
               "--perturbations", "leet_letters", "--seed", "0", "--steps", "3",
               "--max-train", "40", "--max-test", "20", "--no-plots", "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    from robustlab.runs.store import RunStore

    info = RunStore(out, readonly=True).run_info()
    assert info.config["dataset"] == {"name": "demo"} and info.config["seeds"] == [0]
    assert "--dataset demo" in info.command


@pytest.mark.parametrize("argv, message", [
    (["robustness", "--model", "bow$(x)", "--dataset", "demo"], "robustlab list models"),
    (["learnability", "--model", "bow", "cnn", "--dataset", "nosuchset"],
     "no such file, and unknown dataset name"),
    (["learnability", "--model", "bow", "--data", "missing.tsv"], "missing.tsv: no such file"),
    (["robustness", "--model", "bow", "--perturbations", "leet_leters"], "leet_letters"),
    (["robustness", "--model", "bow", "--workers", "0"], "--workers must be >= 1"),
    (["robustness", "--model", "bow", "--dataset", "demo", "--text-column", "x"],
     "--text-column: file options, but --dataset demo is a dataset name"),
    (["train", "--model", "bow$(x)", "--dataset", "demo"], "unknown model"),
    (["train", "--model", "bow", "--dataset", "nosuchset"], "unknown dataset name"),
    (["train", "--model", "bow", "--dataset", "demo", "--max-examples", "0"],
     "--max-examples must be >= 1"),
    (["attack", "--recipe", "so-beam", "--model", "bow", "--dataset", "nosuchset"],
     "unknown dataset name"),
    (["attack", "--recipe", "so-beam", "--model", "bow", "--dataset", "demo", "-n", "0"],
     "--num-examples must be >= 1"),
    (["attack", "--recipe", "so-beam", "--model", "bow-$(x)", "--dataset", "demo"],
     "not a valid Hugging Face id"),
    (["bias", "--model", "bow", "--dataset", "demo", "--k", "x"], "--k 'x'"),
    (["bias", "--model", "bow", "--dataset", "missing.tsv"], "no such file"),
    (["cross-domain", "clf", "--model", "bow$(x)"], "robustlab list models"),
    (["cross-domain", "clf", "--model", "bow,bow"], "duplicate models"),
    (["cross-domain", "clf", "--model", "bow", "--steps", "0"], "--steps must be >= 1"),
])
def test_bad_input_exits_2_before_anything_is_created(tmp_path, monkeypatch, capsys, argv,
                                                      message):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error:" in line]
    assert message in err and "Traceback" not in err and len(errors) == 1
    # besides the one error line, only `attack`'s set-up status lines ("robustlab attack: …")
    assert all(line.startswith(f"robustlab {argv[0]}: ") for line in err.strip().splitlines())
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _domains(root: Path) -> Path:
    good = ["a fine and great product", "wonderful and loved it", "excellent value and great"]
    bad = ["awful and broken", "terrible and hated it", "poor value and bad"]
    for d in ("alpha", "beta", "gamma"):
        rows = ["reviews,labels"] + [f"{t} {d},1" for t in good * 4] + [
            f"{t} {d},0" for t in bad * 4]
        (root / f"{d}.csv").write_text("\n".join(rows) + "\n")
    return root


def test_cross_domain_clf_comma_models_run_both(tmp_path, capsys):
    root = _domains(tmp_path)
    out = tmp_path / "run"
    rc = main(["cross-domain", "clf", "--model", "bow,textrnn:hidden=8,embed_dim=8",
               "--data-dir", str(root), "--domains", "alpha", "beta", "gamma", "--steps", "3",
               "--bags", "3", "--no-plots", "--quiet", "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    import json

    summary = json.loads((out / "summary.json").read_text())
    systems = {s["system"].split("@")[0] for s in summary["systems"]}
    assert systems == {"bow", "textrnn:hidden=8,embed_dim=8"}


# ---- compatibility: stored command lines of older run directories --------------------------------


def test_old_learnability_command_lines_parse_into_the_same_configuration(tmp_path, parser):
    from robustlab.runs.study import command_line
    from robustlab.studies.learnability.command import study_from_args

    train, test = tmp_path / "train.txt", tmp_path / "test.txt"
    train.write_text("1 good\n0 bad\n")
    test.write_text("1 fine\n0 awful\n")
    common = ["--model", "bow,cnn", "--perturbations", "leet_letters", "--seeds", "0,1",
              "--steps", "5", "--out", str(tmp_path / "r")]
    old = parse(parser, "learnability", "--data", str(train), "--test-data", str(test),
                "--format", "label-text", "--no-header", *common)
    new = parse(parser, "learnability", "--dataset", str(train), "--test-dataset", str(test),
                "--dataset-format", "label-text", "--no-header", *common)
    old_study, new_study = study_from_args(old), study_from_args(new)
    assert old_study.config() == new_study.config()
    assert old_study.dataset == {"path": str(train), "test_path": str(test),
                                 "format": "label-text", "header": False}  # as before §2
    # the command derived from the configuration (shown to people) gives the same configuration
    line = command_line(new_study, tmp_path / "r")
    again = parser.parse_args(shlex.split(line)[1:])
    assert study_from_args(again).config() == new_study.config()
    named = parse(parser, "robustness", "--dataset", "demo", *common)
    assert study_from_args(named).dataset == {"name": "demo"}


@pytest.mark.parametrize("stored", [
    "attack --recipe so-random --model bow --dataset-from-huggingface glue^sst2^validation "
    "--dataset-format tsv --split test --random-seed 3 --no-progress --out o",
    "bias --model m --dataset dev.txt --dataset-format label-text --random-seed 2 "
    "--no-progress --out o",
    "cross-domain clf --model bow cnn --domains books dvd kitchen --seed 1 --out o",
    "train --model bow --data demo --test-data demo --format tsv --seed 1 --out m",
    "perturb -p leet_letters -i a.txt -o b.txt --format text --seed 1 --no-progress",
])
def test_old_stored_commands_still_parse(parser, stored):
    args = parser.parse_args(shlex.split(stored))
    assert getattr(args, "seed", None) in (1, 2, 3)
