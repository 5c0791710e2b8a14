"""``robustlab learnability|cent|robustness|correlate``: a run end to end, and bad input that
must fail clearly (exit != 0) without leaving a half-written run directory."""

from __future__ import annotations

import json

import pytest
from learnability_toy import toy_spec

from robustlab.cli import main
from robustlab.runs.store import RunStore


def _args(spec, out, *extra):
    return ["learnability", "--model", "bow", "--data", spec["path"], "--test-data",
            spec["test_path"], "--format", "label-text", "--perturbations", "identity,append_token,"
            "leet_letters", "--p-grid", "0.05,1", "--seeds", "0", "--steps", "30", "--quiet",
            "--out", str(out), *extra]


def test_learnability_cli_end_to_end_and_correlate(tmp_path, capsys):
    spec = toy_spec(tmp_path / "data", n_train=120, n_test=60)
    out = tmp_path / "run"
    assert main(_args(spec, out)) == 0
    printed = capsys.readouterr().out
    assert "append_token" in printed and "learnability_vs_robustness" in printed
    assert str(out / "summary.json") in printed
    info = RunStore(out, readonly=True).run_info()
    assert info.kind == "learnability" and info.status == "done"
    # the stored command reproduces the run: absolute paths, every result-determining option
    assert info.command.startswith("robustlab learnability --model bow --dataset /")
    assert f"--out {out.resolve()}" in info.command and "--p-grid 0.05,1" in info.command
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] and len(summary["pairs"]) == 3
    # the stored command resumes the same run (the TUI relaunches it): nothing is recomputed
    import shlex

    stored = shlex.split(info.command)[1:]
    finished = {c.key: c.finished for c in RunStore(out, readonly=True).cells()}
    assert main([*stored, "--quiet"]) == 0
    assert {c.key: c.finished for c in RunStore(out, readonly=True).cells()} == finished
    # correlate recomputes the same hypothesis tests from the store
    assert main(["correlate", str(out), "--json", str(tmp_path / "corr.json")]) == 0
    corr = json.loads((tmp_path / "corr.json").read_text())["correlations"]
    assert corr["learnability_vs_robustness"] == summary["correlations"][
        "learnability_vs_robustness"]
    assert "Table 4" in capsys.readouterr().out
    # several run directories (e.g. one per model) are pooled into one set of pairs
    out2 = tmp_path / "run2"
    args2 = _args(spec, out2, "--no-plots")
    args2[args2.index("--model") + 1] = "bow:hidden=16"
    assert main(args2) == 0
    assert main(["correlate", str(out), str(out2), "--json", str(tmp_path / "both.json")]) == 0
    both = json.loads((tmp_path / "both.json").read_text())
    assert len(both["pairs"]) == 6
    assert both["correlations"]["learnability_vs_robustness"]["n"] == 6
    bad_grid = tmp_path / "run3"
    args3 = _args(spec, bad_grid, "--no-plots")
    args3[args3.index("--p-grid") + 1] = "0.5,1"
    assert main(args3) == 0
    assert main(["correlate", str(out), str(bad_grid)]) == 2  # different grids: not comparable
    assert main(["correlate", str(tmp_path)]) == 2  # not a run directory


def test_cent_alias_and_robustness_command(tmp_path):
    spec = toy_spec(tmp_path / "data", n_train=80, n_test=40)
    assert main(["cent", *_args(spec, tmp_path / "cent")[1:], "--experiments", "learnability"]) == 0
    assert RunStore(tmp_path / "cent", readonly=True).run_info().kind == "learnability"
    cent = [json.loads(x) for x in (tmp_path / "cent" / "results.jsonl").read_text().splitlines()]
    assert {r["experiment"] for r in cent} == {"learnability"} and len(cent) == 3 * 2
    assert main(["cent", *_args(spec, tmp_path / "x")[1:], "--experiments", "nope"]) == 2
    rob = ["robustness", "--model", "bow", "--data", spec["path"], "--test-data",
           spec["test_path"], "--format", "label-text", "--perturbations", "identity,leet_letters",
           "--seeds", "0", "--steps", "30", "--quiet", "--no-plots", "--out",
           str(tmp_path / "rob")]
    assert main(rob) == 0
    summary = json.loads((tmp_path / "rob" / "summary.json").read_text())
    assert summary["kind"] == "robustness"
    exps = {json.loads(x)["experiment"] for x in
            (tmp_path / "rob" / "results.jsonl").read_text().splitlines()}
    assert exps == {"standard", "robustness", "augmentation"}
    leet = next(r for r in summary["pairs"] if r["perturbation"] == "leet_letters")
    assert leet["robustness"]["mean"] < 0  # leet destroys the words the model learned


def _write(path, lines):
    path.write_text("".join(f"{x}\n" for x in lines), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("case", ["empty", "one_class", "labels_1_2", "blank_text",
                                  "unknown_model", "missing_file", "unknown_perturbation",
                                  "bad_grid"])
def test_bad_input_fails_cleanly(tmp_path, capsys, case):
    good = toy_spec(tmp_path / "data", n_train=40, n_test=20)
    train, test = good["path"], good["test_path"]
    model, perts, grid = "bow", "identity", "0.1,1"
    if case == "empty":
        train = _write(tmp_path / "empty.txt", [])
    elif case == "one_class":
        train = _write(tmp_path / "one.txt", [f"1 text number {i}" for i in range(10)])
    elif case == "labels_1_2":
        train = _write(tmp_path / "12.txt", [f"{1 + i % 2} text number {i}" for i in range(10)])
    elif case == "blank_text":  # every text blank: nothing left to train on
        train = _write(tmp_path / "blank.txt", [f"{i % 2}    " for i in range(10)])
    elif case == "unknown_model":
        model = "no_such_model"
    elif case == "missing_file":
        train = str(tmp_path / "nope.tsv")
    elif case == "unknown_perturbation":
        perts = "identity,no_such_perturbation"
    elif case == "bad_grid":
        grid = "0.5,0.1"
    out = tmp_path / "run"
    rc = main(["learnability", "--model", model, "--data", train, "--test-data", test,
               "--format", "label-text", "--perturbations", perts, "--p-grid", grid,
               "--seeds", "0", "--steps", "5", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc != 0
    assert "error:" in err and "Traceback" not in err
    assert not out.exists()  # nothing written half-way


def test_texts_the_tokenizer_empties_are_rejected(tmp_path, capsys):
    """Zero-width characters survive str.strip() but WordPiece drops them: no tokens left."""
    from robustlab.resources import minilm_path

    try:
        minilm_path()
    except Exception as exc:  # pragma: no cover - the package is part of the dev setup
        pytest.skip(f"needs the MiniLM checkpoint: {exc}")
    good = toy_spec(tmp_path / "data", n_train=40, n_test=20)
    rows = [f"{i % 2} text number {i}" for i in range(9)] + ["1 \u200b\u200b"]
    train = _write(tmp_path / "zw.txt", rows)
    out = tmp_path / "run"
    rc = main(["learnability", "--model", "minilm", "--data", train, "--test-data",
               good["test_path"], "--format", "label-text", "--perturbations", "identity",
               "--p-grid", "0.1,1", "--seeds", "0", "--steps", "1", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and "has no tokens" in err and "example 9" in err
    assert not out.exists()


def test_failed_cells_are_reported_and_retried(tmp_path, capsys):
    """A perturbation that crashes for seed 1 fails only its cells; a rerun retries them."""
    from robustlab.perturbations.base import Perturbation
    from robustlab.perturbations.registry import register

    class Flaky(Perturbation):
        name = "test_flaky_seed1"
        broken = True

        def apply(self, text, rng):
            return text + " !"

        def perturb_batch(self, texts, seed=0):
            if seed == 1 and Flaky.broken:
                raise RuntimeError("flaky perturbation failed")
            return super().perturb_batch(texts, seed)

    register(Flaky)
    spec = toy_spec(tmp_path / "data", n_train=60, n_test=30)
    args = _args(spec, tmp_path / "run", "--no-plots")
    args[args.index("--perturbations") + 1] = "test_flaky_seed1"
    args[args.index("--seeds") + 1] = "0,1"
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "flaky perturbation failed" in err and "rerun the same command" in err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["complete"] is False
    assert summary["failed_cells"] and all("seed=1" in k for k in summary["failed_cells"])
    assert RunStore(tmp_path / "run", readonly=True).run_info().status == "failed"
    Flaky.broken = False
    assert main(args) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["complete"] is True and summary["n_done"] == summary["n_cells"]
