"""Verdicts a practitioner can trust (issue 32): CheckList test types per perturbation, held-out
data by construction, a headline answer, one number format, and the small breaks around them.

Models are toys with a known behaviour (a keyword model that reads "not") or a bow trained for a
few steps with ``robustlab train``; nothing here needs ../shared.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.errors import InputError
from robustlab.metrics.checklist_tests import DIR, INV, checklist_type, example_fails
from robustlab.studies.eval.study import evaluate

POS = ("good", "great", "fine", "lovely")
NEG = ("bad", "dull", "poor", "weak")


class Reader:
    """A model that reads negation correctly: positive when a positive word appears and no
    "not" precedes it (so "is not good" is negative and "is not bad" positive)."""

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        out = []
        for t in texts:
            words = t.lower().split()
            pos = any(w in POS for w in words)
            neg = any(w in NEG for w in words)
            negated = "not" in words or any(w.endswith("n't") for w in words)
            p = 0.9 if pos else 0.1 if neg else 0.5
            out.append(1 - p if negated else p)
        p = np.asarray(out)
        return np.stack([1 - p, p], axis=1)


class Deaf:
    """A model that ignores negation: its prediction never moves under it."""

    def predict_proba(self, texts: list[str]) -> np.ndarray:
        p = np.array([0.9 if any(w in POS for w in t.split()) else 0.1 for t in texts])
        return np.stack([1 - p, p], axis=1)


def _examples(n: int = 40) -> list[tuple[str, int]]:
    out = []
    for i in range(n):
        y = i % 2
        w = (POS if y else NEG)[i % 4]
        out.append((f"the film is {w} ." if i % 4 < 2 else f"it was {w} .", y))
    return out


# ---- test types ---------------------------------------------------------------------------------


def test_test_types_follow_the_perturbation_and_the_task():
    from robustlab.perturbations.registry import parse_spec

    assert checklist_type(parse_spec("char_swap"), 2) == (INV, None)
    assert checklist_type(parse_spec("negation"), 2) == (DIR, "flip")
    assert checklist_type(parse_spec("negation"), 3) == ("changed", None)  # nothing declared
    # DIR flip: the prediction changes or P(original label) falls; else it fails
    assert example_fails(DIR, 1, 0, 0.9, 0.1) is False
    assert example_fails(DIR, 1, 1, 0.9, 0.8) is False
    assert example_fails(DIR, 1, 1, 0.9, 0.9) is True
    assert example_fails(INV, 1, 0, 0.9, 0.1) is True
    assert example_fails("changed", 1, 0, 0.9, 0.1) is None


def test_negation_on_a_model_that_reads_it_is_a_passing_dir_test_not_an_inv_failure(tmp_path):
    s = evaluate(Reader(), tmp_path / "run", examples=_examples(),
                 perturbations=["negation", "char_swap"], seeds=[0], progress=False, plots=False)
    row = next(r for r in s["perturbations"] if r["perturbation"] == "negation")
    assert row["test"] == "DIR" and row["expectation"] == "flip"
    assert row["changed"] > 0
    assert row["failure_rate"]["mean"] == 0.0  # every negated text moved the right way
    assert row["change_rate"]["mean"] == 1.0  # ... and flipped: under INV that was 100 % failure
    assert row["a1"]["mean"] is None and row["delta"]["mean"] is None  # no invalidated label
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability.predictions import failing_examples, failure_summary

    with RunStore(tmp_path / "run", readonly=True) as store:
        assert not [e for e in failing_examples(store) if e["perturbation"] == "negation"]
        neg = [r for r in failure_summary(store) if r["perturbation"] == "negation"]
        assert neg and neg[0]["fail"] == 0 and neg[0]["test"] == "DIR"
    # a model deaf to negation fails the same DIR test on every changed text
    d = evaluate(Deaf(), tmp_path / "deaf", examples=_examples(), perturbations=["negation"],
                 seeds=[0], progress=False, plots=False)["perturbations"][0]
    assert d["failure_rate"]["mean"] == 1.0 and d["change_rate"]["mean"] == 0.0


def test_a_label_changing_perturbation_without_an_expectation_has_no_pass_fail(tmp_path):
    from robustlab.studies.eval.predict import Predictor
    from robustlab.studies.eval.study import evaluate_cell

    three = Predictor(lambda ts: np.tile([0.2, 0.3, 0.5], (len(ts), 1)))
    out = evaluate_cell(three, [("the film is good .", 2), ("it was bad .", 0)], "negation", 0, 1)
    assert out.result["test"] == "changed" and out.result["failure_rate"] is None
    assert out.result["a1"] is None and out.result["change_rate"] == 0.0


def test_check_gates_negation_as_a_dir_test(trained, tmp_path):
    import tomllib  # noqa: F401  (the plan is TOML)

    plan = tmp_path / "plan.toml"
    plan.write_text('dataset = "demo"\nmodels = ["bow"]\n[[test]]\nperturbation = "negation"\n'
                    'max_drop = 0.05\n', encoding="utf-8")
    with pytest.raises(InputError, match="changes the label.*max_fail_rate"):
        from robustlab.studies.learnability.thresholds import load_plan

        load_plan(plan)
    # [defaults]' accuracy thresholds are not inherited by a label-changing perturbation
    plan.write_text('dataset = "demo"\nmodels = ["bow"]\n[defaults]\nmax_drop = 0.05\n'
                    '[[test]]\nperturbation = "negation"\nmax_fail_rate = 0.2\n', encoding="utf-8")
    # a train-then-test plan scores it by the same DIR test: only max_fail_rate applies
    assert [c.threshold for c in load_plan(plan).checks()] == ["max_fail_rate"]
    # a trained model's plan (eval: negation is DIR): [defaults]' max_drop is not inherited
    plan.write_text(f'model = "{trained[0]}"\ndataset = "demo"\n[defaults]\n'
                    'max_drop = 0.05\n[[test]]\nperturbation = "negation"\n'
                    'max_fail_rate = 0.2\n', encoding="utf-8")
    assert [c.threshold for c in load_plan(plan).checks()] == ["max_fail_rate"]


class _Trained(Reader):
    """The negation reader as a family trained per cell (its training changes nothing)."""

    def fit(self, texts, labels, steps=None):
        return self


def test_robustness_runs_score_negation_by_the_same_dir_test(tmp_path, monkeypatch, capsys):
    """A robustness run (models trained per cell) on a model that reads negation: negation is a
    passing DIR test with no A1 in the cells, `failures`, the tables, check and JUnit — not the
    100 % INV failure the old scoring gave it."""
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability import study as lstudy

    monkeypatch.setattr(lstudy, "_new_model", lambda *a, **k: _Trained())
    lstudy.clear_caches()
    rows = "\n".join(f"{y} {t}" for t, y in _examples()) + "\n"
    (tmp_path / "train.tsv").write_text(rows, encoding="utf-8")
    (tmp_path / "test.tsv").write_text(rows, encoding="utf-8")
    plan = tmp_path / "plan.toml"
    plan.write_text('data = "train.tsv"\ntest_data = "test.tsv"\nformat = "label-text"\n'
                    'models = ["bow"]\nsteps = 2\nout = "run"\n[defaults]\nmax_drop = 0.5\n'
                    '[[test]]\nperturbation = "negation"\nmax_fail_rate = 0.0\n'
                    '[[test]]\nperturbation = "identity"\n', encoding="utf-8")
    rc, so, _ = _run(["check", str(plan), "--junit-xml", str(tmp_path / "ci.xml"), "--quiet"],
                     capsys)
    assert rc == 0, so
    assert re.search(r"negation\s+DIR flip\s+fail_rate <= 0\s+0\.000\s+PASS", so), so
    xml = (tmp_path / "ci.xml").read_text(encoding="utf-8")
    assert 'name="fail_rate &lt;= 0 (DIR flip)"' in xml and "<failure" not in xml
    with RunStore(tmp_path / "run", readonly=True) as store:
        cell = next(r for _, r in store.done_results()
                    if r["experiment"] == "robustness" and r["perturbation"] == "negation")
        # every negated text flipped, as it should: never scored against the old label
        assert cell["test"] == "DIR" and cell["expectation"] == "flip"
        assert cell["accuracy"] is None and cell["robustness"] is None
        assert cell["changed"] > 0 and cell["flipped"] == cell["changed"]
        assert cell["failure_rate"] == 0.0
    rc, so, _ = _run(["failures", str(tmp_path / "run"), "--perturbation", "negation"], capsys)
    assert rc == 0 and re.search(r"negation\s+0\s+DIR flip\s+40\s+40\s+0\s+0\.000", so), so
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    pair = next(p for p in summary["pairs"] if p["perturbation"] == "negation")
    assert pair["test"] == "DIR flip" and pair["accuracy_robustness"]["mean"] is None
    from robustlab.studies.learnability.report import results_table

    assert "negation [DIR flip]" in results_table(summary["pairs"])
    from robustlab.tui.failures import load_failures

    view = load_failures(tmp_path / "run")
    test_col = view.summary.columns.index("test")
    assert {r[test_col] for r in view.summary.rows} == {"DIR flip", "INV"}
    from robustlab.studies.learnability.view import load_learnability

    table = load_learnability(tmp_path / "run").table
    tests = dict(zip((r[1] for r in table.rows),
                     (r[table.columns.index("test")] for r in table.rows), strict=True))
    assert tests == {"negation": "DIR flip", "identity": "INV"}


# ---- held-out data ------------------------------------------------------------------------------


def _write(path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    fill = ["the", "film", "was", "plot", "really", "very", "story", "acting"]
    lines = []
    for i in range(n):
        y = i % 2
        words = list(rng.choice(fill, size=int(rng.integers(3, 7))))
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(POS if y else NEG)))
        lines.append(f"{y}\t{' '.join(words)} {i}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Path, str]:
    """(model dir, its training file, train's stdout): a bow trained on a seeded 80/20 split."""
    import contextlib
    import io

    d = tmp_path_factory.mktemp("verdicts")
    data = _write(d / "all.tsv", 200, 0)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["train", "--model", "bow", "--dataset", str(data), "--steps", "30",
                     "--out", str(d / "bow"), "--quiet"]) == 0
    return d / "bow", data, buf.getvalue()


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_train_writes_its_held_out_split_and_eval_counts_training_rows(trained, tmp_path,
                                                                       capsys):
    model, data, out = trained
    assert (model / "heldout.tsv").is_file() and (model / "train_rows.txt").is_file()
    acc = float(re.search(r"held-out accuracy ([0-9.]+)", out).group(1))
    rc, so, _ = _run(["eval", "--model", str(model), "--dataset", str(model / "heldout.tsv"),
                      "--perturbations", "char_swap", "--seeds", "0", "--out",
                      str(tmp_path / "held"), "--quiet"], capsys)
    assert rc == 0 and f"clean accuracy A0 {acc:.3f} on 40 examples" in so
    assert json.loads((tmp_path / "held" / "summary.json").read_text())["warnings"] == []
    # the whole file: 160 of its 200 rows trained the model
    rc, _, err = _run(["eval", "--model", str(model), "--dataset", str(data), "--perturbations",
                       "char_swap", "--seeds", "0", "--out", str(tmp_path / "all"), "--quiet"],
                      capsys)
    assert rc == 0 and "warning: 160 of 200 examples" in err and "heldout.tsv" in err
    assert "160 of 200" in json.loads((tmp_path / "all" / "summary.json").read_text()
                                      )["warnings"][0]
    rc, _, err = _run(["eval", "--model", str(model), "--dataset", str(data), "--perturbations",
                       "char_swap", "--seeds", "0", "--out", str(tmp_path / "strict"),
                       "--strict", "--quiet"], capsys)
    assert rc == 2 and "160 of 200" in err and "--strict" in err
    assert not (tmp_path / "strict").exists()


def test_split_on_a_file_is_refused(trained, tmp_path, capsys):
    model, data, _ = trained
    rc, _, err = _run(["eval", "--model", str(model), "--dataset", str(data), "--split", "test",
                       "--out", str(tmp_path / "r")], capsys)
    assert rc == 2 and "--split test: applies to a named dataset" in err
    assert not (tmp_path / "r").exists()


def test_train_hint_is_a_path_and_a_family_shadowing_a_directory_says_so(trained, tmp_path,
                                                                         capsys, monkeypatch):
    import shutil

    model, _, out = trained
    assert f"(use --model {model}" in out  # an absolute --out stays as it is
    monkeypatch.chdir(tmp_path)
    shutil.copytree(model, tmp_path / "bow")
    rc, _, err = _run(["eval", "--model", "bow", "--dataset", "demo", "--out", "r"], capsys)
    assert rc == 2 and "both a model family" in err and "pass ./bow" in err
    # train builds the family, and says which ./bow it did not take
    rc, so, err = _run(["train", "--model", "bow", "--dataset", str(model / "heldout.tsv"),
                        "--steps", "2", "--out", "bow2", "--quiet"], capsys)
    assert rc == 0 and "(use --model ./bow2;" in so
    assert f"--model bow is the model family bow, not the directory {tmp_path / 'bow'}" in err


# ---- headline, gate, one format -----------------------------------------------------------------


def test_headline_names_the_worst_perturbation_and_rows_are_worst_first(trained, tmp_path,
                                                                       capsys):
    model, _, _ = trained
    rc, so, _ = _run(["eval", "--model", str(model), "--dataset", str(model / "heldout.tsv"),
                      "--perturbations", "char_swap,char_swap:pps=3,duplicate_punctuations",
                      "--seeds", "0", "--out", str(tmp_path / "r"), "--quiet"], capsys)
    assert rc == 0
    rows = json.loads((tmp_path / "r" / "summary.json").read_text())["perturbations"]
    deltas = [r["delta"]["mean"] for r in rows]
    assert deltas == sorted(deltas)  # worst (most negative A1 - A0) first
    assert {r["label"] for r in rows} == {"char_swap", "char_swap:pps=3",
                                          "duplicate_punctuations"}  # full specs, distinct
    first = so.splitlines()[0]
    assert first.startswith(f"worst: {rows[0]['label']} (")
    table = [ln.split()[0] for ln in so.splitlines() if ln.startswith(("char_swap", "dup"))]
    assert table == [r["label"] for r in rows]


def test_one_a0_string_in_stdout_csv_html_and_the_tui(trained, tmp_path, capsys):
    import asyncio

    from robustlab.report import write_report
    from robustlab.studies.eval.study import fmt

    model, _, _ = trained
    run = tmp_path / "runs" / "r"
    rc, so, _ = _run(["eval", "--model", str(model), "--dataset", str(model / "heldout.tsv"),
                      "--perturbations", "char_swap", "--seeds", "0,1", "--out", str(run),
                      "--quiet"], capsys)
    assert rc == 0
    a0 = fmt(json.loads((run / "summary.json").read_text())["clean_accuracy"])
    assert re.fullmatch(r"0\.\d{3}|1\.000", a0)
    assert f"clean accuracy A0 {a0} " in so
    assert re.search(rf"^char_swap\s+INV\s+{re.escape(a0)}\s", so, re.M)
    with open(run / "eval.csv", newline="", encoding="utf-8") as f:
        assert next(csv.DictReader(f))["a0"] == a0
    html = write_report([run], tmp_path / "r.html").read_text(encoding="utf-8")
    assert f"clean accuracy A0 {a0}." in html and f'<td class="num">{a0}</td>' in html

    from tui.conftest import make_settings
    from tui.test_app import open_run, text_of, wait_for

    from robustlab.studies.eval.screen import EvalScreen
    from robustlab.tui.app import RobustlabApp

    async def tui() -> tuple[str, list[str]]:
        app = RobustlabApp([run.parent], make_settings())
        async with app.run_test(size=(80, 24)) as pilot:
            await open_run(pilot, app, run.name)
            await wait_for(pilot, lambda: isinstance(app.screen, EvalScreen)
                           and app.screen.view is not None)
            row = [str(c) for c in app.screen.query_one("#eval").get_row_at(0)]
            return text_of(app.screen.query_one("#status")), row

    status, row = asyncio.run(tui())
    assert f"clean accuracy A0 {a0}" in status and row[2] == a0


def test_chance_level_warning(tmp_path):
    class Coin:
        def predict_proba(self, texts):
            return np.tile([0.4, 0.6], (len(texts), 1))

    s = evaluate(Coin(), tmp_path / "r", examples=_examples(), perturbations=["char_swap"],
                 seeds=[0], progress=False, plots=False)
    assert any("chance level" in w and "majority-class rate 0.500" in w for w in s["warnings"])
    s = evaluate(Reader(), tmp_path / "ok", examples=_examples(), perturbations=["char_swap"],
                 seeds=[0], progress=False, plots=False)
    assert not s["warnings"]


def _gate(model: Path, tmp_path: Path) -> Path:
    plan = tmp_path / "gate.toml"
    plan.write_text(f'model = "{model}"\ndata = "{model / "heldout.tsv"}"\nseeds = [0]\n'
                    'out = "gate-run"\n[[test]]\nperturbation = "char_swap"\nmax_drop = 1.0\n'
                    '[[test]]\nperturbation = "char_swap:pps=3"\nmin_accuracy = 0.99\n',
                    encoding="utf-8")
    return plan


def test_a_gated_runs_report_shows_each_threshold_and_pass_fail(trained, tmp_path, capsys):
    from robustlab.report import write_report

    model, _, _ = trained
    plan = _gate(model, tmp_path)
    rc, so, _ = _run(["check", str(plan), "--junit-xml", str(tmp_path / "ci.xml"), "--quiet"],
                     capsys)
    assert rc == 1 and "PASS" in so and "FAIL" in so
    html = write_report([tmp_path / "gate-run"], tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Gate: FAIL (1 of 2 checks)" in html
    assert re.search(r"drop &lt;= 1</td>.*?<td>PASS</td>", html, re.S)
    assert re.search(r"accuracy &gt;= 0.99</td>.*?<td>FAIL</td>", html, re.S)
    # JUnit classnames are relative: the model by its name, never the absolute path
    xml = (tmp_path / "ci.xml").read_text(encoding="utf-8")
    names = re.findall(r'classname="([^"]+)"', xml)
    assert names == ["robustlab.bow.char_swap", "robustlab.bow.char_swap:pps=3"]
    assert str(model) not in re.sub(r"<(failure|error)[^>]*>.*?</\1>", "", xml, flags=re.S)


def test_checks_encoding_hint_names_the_plan_key(tmp_path, capsys):
    bad = tmp_path / "cp.tsv"
    bad.write_bytes(("0\tcaf\xe9 bad\n1\tgood film\n" * 10).encode("cp1252"))
    plan = tmp_path / "p.toml"
    plan.write_text(f'data = "{bad}"\nmodels = ["bow"]\nsteps = 2\n[[test]]\n'
                    'perturbation = "char_swap"\nmax_drop = 1.0\n', encoding="utf-8")
    rc, _, err = _run(["check", str(plan), "--quiet"], capsys)
    assert rc == 2 and 'set encoding = "cp1252" in the plan' in err and "--encoding" not in err
    plan.write_text('encoding = "cp1252"\n' + plan.read_text(), encoding="utf-8")
    from robustlab.studies.learnability.thresholds import load_plan

    assert load_plan(plan).dataset["encoding"] == "cp1252"  # the key the hint names works


# ---- the Python API checks the model's interface --------------------------------------------------


@pytest.mark.parametrize("progress", [True, False])
def test_predict_proba_with_a_wrong_shape_or_logits_raises(tmp_path, progress):
    class Flat:
        def predict_proba(self, texts):
            return np.full(len(texts), 0.5)

    class Logits:
        def predict_proba(self, texts):
            return np.tile([2.0, -0.5], (len(texts), 1))

    with pytest.raises(InputError, match=r"shape \(\d+, k\).*got shape \(\d+,\)"):
        evaluate(Flat(), tmp_path / "a", examples=_examples(), perturbations=["char_swap"],
                 seeds=[0], progress=progress, plots=False)
    with pytest.raises(InputError, match="must return probabilities"):
        evaluate(Logits(), tmp_path / "b", examples=_examples(), perturbations=["char_swap"],
                 seeds=[0], progress=progress, plots=False)
    # a callable may return logits: softmax, as for a TextAttack wrapper
    s = evaluate(lambda texts: np.tile([2.0, -0.5], (len(texts), 1)), tmp_path / "c",
                 examples=_examples(), perturbations=["char_swap"], seeds=[0],
                 progress=progress, plots=False, name="logits")
    assert s["complete"] and s["clean_accuracy"] == 0.5


# ---- small breaks -------------------------------------------------------------------------------


def test_failures_into_a_closed_pipe_is_a_quiet_exit(trained, tmp_path, capsys):
    model, _, _ = trained
    run = tmp_path / "r"
    assert main(["eval", "--model", str(model), "--dataset", str(model / "heldout.tsv"),
                 "--perturbations", "char_swap:pps=4,leet_letters", "--seeds", "0,1,2,3",
                 "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    import os

    # the reader is gone before the command writes a byte (it starts in ~1 s): every write
    # meets a closed pipe, whatever the load (`| head` raced the pipe's 64 KiB buffer)
    read, write = os.pipe()
    os.close(read)
    try:
        p = subprocess.run([sys.executable, "-m", "robustlab", "failures", str(run), "--limit",
                            "100000"], stdout=write, stderr=subprocess.PIPE, text=True,
                           timeout=300)
    finally:
        os.close(write)
    assert p.stderr == "" and p.returncode == 141  # 128 + SIGPIPE, as `set -o pipefail` sees


def test_failures_csv_does_not_overwrite_without_force(trained, tmp_path, capsys):
    model, _, _ = trained
    run = tmp_path / "r"
    assert main(["eval", "--model", str(model), "--dataset", str(model / "heldout.tsv"),
                 "--perturbations", "char_swap", "--seeds", "0", "--out", str(run),
                 "--quiet"]) == 0
    other = tmp_path / "other.csv"
    other.write_text("from another run\n", encoding="utf-8")
    rc, _, err = _run(["failures", str(run), "--csv", str(other), "--quiet"], capsys)
    assert rc == 2 and "--force" in err and other.read_text() == "from another run\n"
    rc, _, _ = _run(["failures", str(run), "--csv", str(other), "--force", "--quiet"], capsys)
    assert rc == 0 and other.read_text().startswith("model,perturbation")


def test_progress_is_whole_lines_off_a_terminal_and_augment_counts_rows_not_the_header(
        tmp_path, capsys):
    src = tmp_path / "in.tsv"
    src.write_text("label\ttext\n" + "".join(f"{i % 2}\tthe film is good {i}\n"
                                             for i in range(1200)), encoding="utf-8")
    assert main(["augment", "-i", str(src), "-o", str(tmp_path / "out.tsv"), "-p",
                 "char_swap"]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "augment: 1200/1200 rows (100%)" in err  # not 1200/1201
    s = evaluate(Reader(), tmp_path / "r", examples=_examples(), perturbations=["char_swap"],
                 seeds=[0], plots=False)  # progress on: stderr is not a terminal here
    assert s["complete"]
    err = capsys.readouterr().err
    assert "\r" not in err and "eval: 1/1 cells (100%)" in err


def test_line_progress_reports_at_most_every_interval():
    import io

    from robustlab.textfmt import LineProgress

    out = io.StringIO()
    bar = LineProgress(10, "x", unit="row", file=out, every=3600.0)
    for _ in range(10):
        bar.update()
    bar.set_postfix(failed=1)
    bar.close()
    bar.close()
    assert out.getvalue() == "x: 10/10 rows (100%), failed=1\n"


def test_a_resource_fallback_note_is_printed_once_per_process(monkeypatch, capsys):
    import robustlab.perturbations.char_perturbations as cp
    from robustlab.perturbations.registry import parse_spec

    monkeypatch.setattr(cp, "misspellings_file",
                        lambda: (None, "codespell", "a fallback list (test)"))
    monkeypatch.setattr(cp, "misspellings_by_correction", lambda: {})
    for seed in range(3):  # as eval builds the perturbation once per cell (seed)
        parse_spec("misspelling:pps=2").perturb_outcomes(["a text"], seed)
    assert capsys.readouterr().err.count("a fallback list (test)") == 1


def test_a_resumed_run_gets_the_shared_folder_seen_from_where_it_was_launched(tmp_path,
                                                                             monkeypatch):
    """A resumed worker runs in its run directory, whose ../shared is another folder: it is
    given the shared folder resolved from the TUI's directory instead."""
    import time

    from robustlab.tui import launch

    (tmp_path / "shared").mkdir()
    home = tmp_path / "work"
    (home / "runs" / "r").mkdir(parents=True)
    monkeypatch.delenv("ROBUSTLAB_SHARED", raising=False)
    monkeypatch.chdir(home)
    assert launch.resource_env() == {"ROBUSTLAB_SHARED": str((tmp_path / "shared").resolve())}
    probe = [sys.executable, "-c", "import os; print('S' + 'HARED=' + "
             "str(os.environ.get('ROBUSTLAB_SHARED')), flush=True)"]  # not in the argv line
    launch.resume(home / "runs" / "r", program=probe)
    log = home / "runs" / "r" / "worker.log"
    deadline = time.monotonic() + 120
    while "\nSHARED=" not in (log.read_text() if log.exists() else ""):
        assert time.monotonic() < deadline, "the probe never wrote its line"
        time.sleep(0.05)
    assert f"SHARED={(tmp_path / 'shared').resolve()}" in log.read_text()
    monkeypatch.setenv("ROBUSTLAB_SHARED", "/elsewhere")
    assert launch.resource_env() == {}  # inherited as set


def test_a_failed_launch_shows_its_error_first(tmp_path):
    """The worker's one-line error leads the status (an 80-column line showed the log's first
    lines, the input list, and cut the error off)."""
    import socket

    from robustlab.tui.data import read_run

    run = tmp_path / "r"
    run.mkdir()
    (run / "worker.json").write_text(json.dumps({
        "pid": 4242, "host": socket.gethostname(), "argv": ["python", "-m", "robustlab", "eval"],
        "command": "robustlab eval", "launched": 0}), encoding="utf-8")
    (run / "worker.log").write_text(
        "\n--- launching: python -m robustlab eval --model m --dataset d.tsv --out r\n"
        "robustlab eval: input dataset: d.tsv (--dataset; 1.0 KiB, sha256 0123456789ab)\n"
        "robustlab eval: input model: m (--model; 87.0 KiB, 3 files, sha256 0123456789ab)\n"
        "robustlab eval: error: d.tsv: line 3, byte 5: not valid utf-8 (bytes e9).\n",
        encoding="utf-8")
    s = read_run(run, alive=lambda pid: False)
    assert s.status == "died"
    assert s.error.startswith("robustlab eval: error: d.tsv: line 3")
    assert s.error.endswith("(worker pid 4242 exited; more in worker.log)")


def test_a_plan_in_the_working_directory_names_its_model_as_dot_slash_dir(trained, tmp_path,
                                                                          monkeypatch):
    """``model = "./bow"`` in ./gate.toml is the directory, not the family (Path(".") / "./bow"
    is "bow")."""
    import shutil

    from robustlab.studies.learnability.thresholds import load_plan

    model, _, _ = trained
    shutil.copytree(model, tmp_path / "bow")
    monkeypatch.chdir(tmp_path)
    Path("gate.toml").write_text('model = "./bow"\ndata = "bow/heldout.tsv"\n[[test]]\n'
                                 'perturbation = "char_swap"\nmax_drop = 0.5\n', encoding="utf-8")
    assert load_plan("gate.toml").model == str((tmp_path / "bow").resolve())


def test_rows_are_named_by_full_spec_or_the_users_label(tmp_path):
    s = evaluate(Reader(), tmp_path / "r", examples=_examples(),
                 perturbations=["char_swap", "char_swap:pps=3", "char_swap:pps=2@two swaps"],
                 seeds=[0], progress=False, plots=False)
    assert sorted(r["label"] for r in s["perturbations"]) == ["char_swap", "char_swap:pps=3",
                                                             "two swaps"]


def test_progress_cells_are_named_by_their_perturbation():
    from robustlab.tui.data import CellRow

    row = CellRow("p03|seed=0", "done", 1.0, 1, None, None,
                  json.dumps({"perturbation": "char_swap:pps=3", "seed": 0}))
    assert row.name == "char_swap:pps=3|seed=0"
    assert CellRow("model=bow|p=0.1", "done", 1.0, 1, None, None, "{}").name == "model=bow|p=0.1"
    assert CellRow("p01|seed=0", "done", 1.0, 1, None, None, "not json").name == "p01|seed=0"


def test_runs_stored_before_strict_existed_resume():
    """--strict was added after eval runs were stored: at its default it is not in the stored
    configuration, so an old run's options compare equal and it resumes."""
    from robustlab.runs.study import config_differences
    from robustlab.studies.eval.config import EvalConfig

    cfg = EvalConfig(model="/m", dataset={"name": "demo"}, perturbations=("char_swap",))
    old = cfg.to_dict()
    assert "strict" not in old and config_differences(cfg, old) == []
    strict = EvalConfig(model="/m", dataset={"name": "demo"}, perturbations=("char_swap",),
                        strict=True)
    assert strict.to_dict()["strict"] is True
    assert strict.signature() == cfg.signature()  # how the data is checked, not what ran


# ---- a resumed run reads its resources where it first found them --------------------------------


def test_a_resumed_run_uses_the_shared_folder_recorded_at_its_start(tmp_path, monkeypatch,
                                                                    capsys):
    """The TUI resumes in a private directory and a shell may be anywhere: ``../shared`` seen
    from there is another folder (the log looked for ``runs/shared/...``). The run records the
    resolved shared folder at its first start and `robustlab resume` (the TUI's Resume) uses it."""
    import os

    from robustlab.resources import SHARED_KEY
    from robustlab.runs.store import RunStore

    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere" / "deep"
    (project / "shared").mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    monkeypatch.delenv("ROBUSTLAB_SHARED", raising=False)
    monkeypatch.chdir(project)
    out = project / "runs" / "r"
    rc = main(["robustness", "--model", "bow", "--data", "demo", "--out", str(out),
               "--perturbations", "identity", "--seed", "0", "--steps", "2", "--max-train",
               "20", "--max-test", "10", "--no-plots", "--no-progress"])
    assert rc == 0, capsys.readouterr().err
    with RunStore(out, readonly=True) as store:
        recorded = json.loads(store.meta(SHARED_KEY))
    assert recorded["path"] == str((project / "shared").resolve())
    monkeypatch.chdir(elsewhere)  # no ./shared nor ../shared here
    assert main(["resume", str(out)]) == 0
    assert os.environ.get("ROBUSTLAB_SHARED") == recorded["path"]
    assert "as recorded when the run started" in capsys.readouterr().err
    # data from a run directory: a relative path or one that is not a folder is ignored
    from robustlab.resources import use_recorded_shared

    monkeypatch.delenv("ROBUSTLAB_SHARED")
    for bad in ('{"path": "shared"}', json.dumps({"path": str(out / "store.sqlite")}), "[1]",
                "not json", None):
        assert use_recorded_shared(bad) is None and "ROBUSTLAB_SHARED" not in os.environ
