"""``robustlab eval``: a trained model tested as it is (issue 23).

Small sentiment files are written per test session; models are trained once with ``robustlab
train`` (a few steps: the numbers only need to be real, not good).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main

POS = ["good", "great", "fine", "lovely", "superb", "nice"]
NEG = ["bad", "awful", "poor", "dull", "boring", "weak"]
FILL = ["the", "film", "movie", "was", "plot", "acting", "really", "very", "quite", "story"]
PERTS = "leet_letters,char_swap,duplicate_punctuations"


def _write(path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        y = i % 2
        words = list(rng.choice(FILL, size=int(rng.integers(3, 8))))
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(POS if y else NEG)))
        lines.append(f"{y}\t{' '.join(words)}{'!' if i % 3 == 0 else ''}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("eval-data")
    _write(d / "train.tsv", 240, 0)
    _write(d / "dev.tsv", 80, 1)
    return d


@pytest.fixture(scope="module")
def bow(data) -> tuple[Path, float]:
    """A bow model saved by ``robustlab train``, with the held-out accuracy it printed."""
    import contextlib
    import io

    out = data / "models" / "sst-bow"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        rc = main(["train", "--model", "bow", "--dataset", str(data / "train.tsv"),
                   "--test-dataset", str(data / "dev.tsv"), "--steps", "40",
                   "--out", str(out)])
    assert rc == 0
    acc = float(re.search(r"held-out accuracy ([0-9.]+)", buf.getvalue()).group(1))
    return out, acc


def _digests(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())
            if p.is_file()}


def _eval(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(["eval", *args, "--quiet"])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_a0_is_the_held_out_accuracy_train_printed_and_nothing_is_trained(bow, data, tmp_path,
                                                                          capsys):
    model, held_out = bow
    before = _digests(model)
    rc, out, _ = _eval(["--model", str(model), "--dataset", str(data / "dev.tsv"),
                        "--perturbations", PERTS, "--seeds", "0,1", "--out",
                        str(tmp_path / "run")], capsys)
    assert rc == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["kind"] == "eval" and summary["complete"]
    assert summary["clean_accuracy"] == pytest.approx(held_out, abs=5e-5)
    assert f"clean accuracy A0 {held_out:.3f}" in out
    assert _digests(model) == before  # the weights are byte-identical: nothing was trained
    rows = {r["perturbation"]: r for r in summary["perturbations"]}
    assert list(rows) == PERTS.split(",")
    assert rows["duplicate_punctuations"]["seeds"] == [0]  # deterministic: one cell
    assert rows["leet_letters"]["seeds"] == [0, 1]
    for r in rows.values():
        assert r["delta"]["mean"] == pytest.approx(r["a1"]["mean"] - r["a0"]["mean"])
    assert summary["signature"].startswith("eval|")
    for f in ("results.jsonl", "eval.csv", "eval.png", "failing_examples.csv"):
        assert (tmp_path / "run" / f).is_file(), f


def test_every_prediction_is_stored_and_the_rates_follow_from_them(bow, data, tmp_path, capsys):
    from robustlab.runs.store import RunStore

    model, _ = bow
    run = tmp_path / "run"
    rc, _, _ = _eval(["--model", str(model), "--dataset", str(data / "dev.tsv"),
                      "--perturbations", "leet_letters,negation", "--seeds", "3", "-n", "2",
                      "--out", str(run)], capsys)
    assert rc == 0
    with RunStore(run, readonly=True) as store:
        for cell in store.cells("done"):
            preds = store.predictions(cell.key)
            recs = store.records(cell.key)
            assert len(preds) == len(recs) == 80 * 2
            changed = [r["changed"] for r in recs]
            flips = sum(p["pred_after"] != p["pred_before"] for p, c in
                        zip(preds, changed, strict=True) if c)
            # DIR flip (negation, binary): fails when the prediction stays and P(label) does
            # not fall
            stays = sum(p["pred_after"] == p["pred_before"] and
                        p["prob_after"] >= p["prob_before"]
                        for p, c in zip(preds, changed, strict=True) if c)
            res = cell.result
            inv = cell.params["perturbation"] == "leet_letters"
            assert res["test"] == ("INV" if inv else "DIR")
            fails = flips if inv else stays
            assert res["changed"] == sum(changed) and res["failed"] == fails
            assert res["flipped"] == flips
            if res["changed"]:
                assert res["failure_rate"] == pytest.approx(fails / sum(changed))
                assert res["change_rate"] == pytest.approx(flips / sum(changed))
            assert res["noop_rate"] == pytest.approx(1 - sum(changed) / len(recs))
            if inv:
                assert res["a1"] == pytest.approx(np.mean([p["pred_after"] == p["label"]
                                                           for p in preds]))
            else:  # never against the label negation invalidated
                assert res["a1"] is None and res["delta"] is None
            for p, r in zip(preds, recs, strict=True):
                assert int(np.argmax(r["proba_after"])) == p["pred_after"]
                if not r["changed"]:  # a no-op reuses the clean prediction
                    assert r["proba_after"] == r["proba_before"] and p["perturbed"] == \
                        p["original"]


def test_an_augmented_model_gets_different_numbers(bow, data, tmp_path, capsys):
    """The issue's example: a model augmented with leet_letters is more robust to it than the
    plain one (a saved model is evaluated, never retrained from its family)."""
    from robustlab.perturbations.registry import parse_spec

    model, _ = bow
    leet = parse_spec("leet_letters")
    rows = (data / "train.tsv").read_text(encoding="utf-8").splitlines()
    aug = [*rows, *(f"{r.split(chr(9))[0]}\t{leet.perturb(r.split(chr(9))[1], 0)}"
                    for r in rows)]
    (tmp_path / "aug.tsv").write_text("\n".join(aug) + "\n", encoding="utf-8")
    assert main(["train", "--model", "bow", "--dataset", str(tmp_path / "aug.tsv"),
                 "--test-dataset", str(data / "dev.tsv"), "--steps", "40",
                 "--out", str(tmp_path / "aug-model")]) == 0
    capsys.readouterr()
    sums = []
    for name, m in (("plain", model), ("aug", tmp_path / "aug-model")):
        assert _eval(["--model", str(m), "--dataset", str(data / "dev.tsv"),
                      "--perturbations", "leet_letters", "--seeds", "0",
                      "--out", str(tmp_path / name)], capsys)[0] == 0
        sums.append(json.loads((tmp_path / name / "summary.json").read_text()))
    a = [s["perturbations"][0]["a1"]["mean"] for s in sums]
    f = [s["perturbations"][0]["failure_rate"]["mean"] for s in sums]
    # trained on leet_letters copies, the augmented model reads leetspeak: higher accuracy on
    # the perturbed texts and fewer flips than the plain model (the direction, not just "!=")
    assert a[1] > a[0] and f[1] < f[0], (a, f)


def test_a_rerun_resumes_and_a_changed_option_is_refused(bow, data, tmp_path, capsys):
    model, _ = bow
    args = ["--model", str(model), "--dataset", str(data / "dev.tsv"), "--perturbations",
            "char_swap", "--seeds", "0", "--out", str(tmp_path / "run")]
    assert _eval(args, capsys)[0] == 0
    first = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert _eval(args, capsys)[0] == 0
    again = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert again["perturbations"] == first["perturbations"]
    rc, _, err = _eval([*args[:-4], "--seeds", "1", "--out", str(tmp_path / "run")], capsys)
    assert rc == 2 and "--seeds" in err


def test_resume_rebuilds_the_study_from_its_store(bow, data, tmp_path, capsys):
    from robustlab.studies.stored import load

    model, _ = bow
    assert _eval(["--model", str(model), "--dataset", str(data / "dev.tsv"), "--perturbations",
                  "char_swap", "--seeds", "0", "--out", str(tmp_path / "run")], capsys)[0] == 0
    stored = load(tmp_path / "run")
    assert stored.study.kind == "eval" and stored.study.config.model == str(model)
    assert main(["resume", str(tmp_path / "run"), "--quiet"]) == 0


def test_the_default_perturbations_are_the_papers_8_and_paper_001s_14():
    from robustlab.perturbations.presets import PAPER_PERTURBATIONS
    from robustlab.studies.eval.config import default_perturbations

    d = default_perturbations()
    assert len(d) == 22 and d[:8] == PAPER_PERTURBATIONS and len(set(d)) == 22


def test_each_distinct_text_is_predicted_once(bow, data):
    from robustlab.data.datasets import load_examples
    from robustlab.studies.eval.predict import as_predictor
    from robustlab.studies.eval.study import evaluate_cell

    model, _ = bow
    examples = load_examples(str(data / "dev.tsv"))
    calls: list[int] = []
    pred = as_predictor(str(model), device="cpu")
    inner = pred.proba
    pred.proba = lambda texts: (calls.append(len(texts)), inner(texts))[1]
    evaluate_cell(pred, examples, "duplicate_punctuations", 0, 1)
    n_first = sum(calls)
    texts = {t for t, _ in examples}
    assert n_first <= len(texts) + sum(1 for t in texts if any(c in t for c in ".,!?;:"))
    evaluate_cell(pred, examples, "duplicate_punctuations", 0, 1)  # same texts again
    assert sum(calls) == n_first
    assert pred.predicted == len(pred.cache) == n_first


def test_prefetch_gives_the_same_results(bow, data):
    from robustlab.data.datasets import load_examples
    from robustlab.studies.eval.predict import as_predictor
    from robustlab.studies.eval.study import evaluate_cell

    model, _ = bow
    examples = load_examples(str(data / "dev.tsv"))
    a = evaluate_cell(as_predictor(str(model)), examples, "leet_letters", 5, 2, prefetch=True)
    b = evaluate_cell(as_predictor(str(model)), examples, "leet_letters", 5, 2, prefetch=False)
    keep = ("a0", "a1", "changed", "failed")
    assert {k: a.result[k] for k in keep} == {k: b.result[k] for k in keep}
    assert a.predictions == b.predictions


def _plan(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "plan.toml"
    p.write_text(body, encoding="utf-8")
    return p


def test_check_gates_a_trained_model_as_it_is_with_junit_xml(bow, data, tmp_path, capsys):
    import xml.etree.ElementTree as ET

    from robustlab.runs.store import RunStore

    model, held_out = bow
    before = _digests(model)
    plan = _plan(tmp_path, f'''model = "{model}"
data = "{data / 'dev.tsv'}"
seeds = [0, 1]
[[test]]
perturbation = "duplicate_punctuations"
min_accuracy = 0.0
[[test]]
perturbation = "leet_letters"
max_drop = -1.0
''')
    rc = main(["check", str(plan), "--junit-xml", str(tmp_path / "ci.xml"), "--quiet"])
    out = capsys.readouterr().out
    assert rc == 1  # max_drop = -1 cannot pass: A0 - A1 is never below -1 here
    assert "PASS" in out and "FAIL" in out
    with RunStore(tmp_path / "plan-run", readonly=True) as store:
        assert store.run_info().kind == "eval"  # evaluated, not retrained
        results = [c.result for c in store.cells("done")]
    assert all(r["a0"] == pytest.approx(held_out, abs=5e-5) for r in results)
    assert _digests(model) == before
    root = ET.parse(tmp_path / "ci.xml").getroot()
    assert root.get("tests") == "2" and root.get("failures") == "1"
    assert root.find(".//failure") is not None


def test_check_with_models_keeps_training_and_refuses_a_family_as_model(data, tmp_path, capsys):
    plan = _plan(tmp_path, f'''model = "bow"
data = "{data / 'dev.tsv'}"
[[test]]
perturbation = "leet_letters"
max_drop = 0.5
''')
    assert main(["check", str(plan)]) == 2
    err = capsys.readouterr().err
    assert "family" in err and "models" in err and not (tmp_path / "plan-run").exists()
    plan = _plan(tmp_path, f'''model = "models/nothere"
data = "{data / 'dev.tsv'}"
[[test]]
perturbation = "leet_letters"
max_drop = 0.5
''')
    assert main(["check", str(plan)]) == 2
    assert "no such model" in capsys.readouterr().err
    assert not (tmp_path / "plan-run").exists()
    from robustlab.studies.learnability.thresholds import load_plan

    p = load_plan(_plan(tmp_path, f'''models = ["bow"]
data = "{data / 'dev.tsv'}"
[[test]]
perturbation = "leet_letters"
max_drop = 0.5
'''))
    assert p.model is None and p.models == ("bow",)  # train-then-test, as before


def test_failures_lists_an_eval_runs_failing_examples(bow, data, tmp_path, capsys):
    model, _ = bow
    run = tmp_path / "run"
    assert _eval(["--model", str(model), "--dataset", str(data / "dev.tsv"), "--perturbations",
                  "leet_letters", "--seeds", "0", "--out", str(run)], capsys)[0] == 0
    s = json.loads((run / "summary.json").read_text())["perturbations"][0]
    assert main(["failures", str(run), "--limit", "3", "--csv", str(tmp_path / "f.csv")]) == 0
    out = capsys.readouterr().out
    assert "leet_letters" in out and f"{s['failed']}" in out
    assert "fail rate of changed" in out  # the eval study's failure rate, among changed texts
    assert f"{s['failure_rate']['mean']:.3f}" in out
    rows = (tmp_path / "f.csv").read_text(encoding="utf-8").splitlines()
    assert len(rows) - 1 == s["failed"]  # every failing example, one per row


def test_report_renders_an_eval_run_and_compares_two(bow, data, tmp_path, capsys):
    from robustlab.report import build_document, render

    model, _ = bow
    for name, perts in (("a", "leet_letters,char_swap"), ("b", "leet_letters")):
        assert _eval(["--model", str(model), "--dataset", str(data / "dev.tsv"),
                      "--perturbations", perts, "--seeds", "0", "--out",
                      str(tmp_path / name)], capsys)[0] == 0
    s = json.loads((tmp_path / "a" / "summary.json").read_text())
    md = render(build_document([tmp_path / "a"]), "md", figure_dir=str(tmp_path / "fig"))
    assert "robustlab eval" in md and "Failing examples" in md
    for r in s["perturbations"]:
        assert f"{r['a1']['mean']:.3f}" in md and f"{r['failure_rate']['mean']:.3f}" in md
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability.predictions import failing_examples

    with RunStore(tmp_path / "a", readonly=True) as store:
        worst = failing_examples(store, perturbation="leet_letters", limit=1)
    assert worst and worst[0]["original"] in md
    html = render(build_document([tmp_path / "a", tmp_path / "b"]), "html")
    assert "Runs side by side" in html and "<img" in html


# ---- an independent reference: the model's own forward pass, sklearn's accuracy ---------------

LONG_FILL = ["the", "film", "movie", "was", "plot", "acting", "really", "very", "quite", "story",
             "and", "then", "although", "its", "second", "half", "director", "cast", "scene"]


def _write_long(path: Path, n: int, seed: int, noise: float) -> Path:
    """Texts of 60–140 characters whose sentiment word is often past character 40, with a
    fraction ``noise`` of the labels flipped (held-out accuracy well below 1)."""
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        y = i % 2
        words = list(rng.choice(LONG_FILL, size=int(rng.integers(10, 20))))
        words.insert(int(rng.integers(len(words) // 2, len(words) + 1)),
                     str(rng.choice(POS if y else NEG)))
        label = 1 - y if rng.random() < noise else y
        lines.append(f"{label}\t{' '.join(words)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def noisy(tmp_path_factory) -> tuple[Path, Path]:
    """A bow model trained on long, noisily labelled texts, and held-out data of the same kind."""
    d = tmp_path_factory.mktemp("eval-noisy")
    _write_long(d / "train.tsv", 240, 2, 0.0)
    _write_long(d / "dev.tsv", 80, 3, 0.25)
    assert main(["train", "--model", "bow", "--dataset", str(d / "train.tsv"), "--test-dataset",
                 str(d / "dev.tsv"), "--steps", "40", "--out", str(d / "model"),
                 "--quiet"]) == 0
    return d / "model", d / "dev.tsv"


def test_clean_accuracy_and_each_prediction_equal_the_models_own_forward_pass(noisy, tmp_path,
                                                                            capsys):
    """A0 and every stored clean prediction against a reference computed without eval's
    predictor: the saved model's own ``predict_proba`` on the raw texts, and sklearn's
    ``accuracy_score``; on data where accuracy is well below 1 and predictions vary (a predictor
    that damages the texts, or a constant one, cannot match)."""
    from sklearn.metrics import accuracy_score

    from robustlab.data.datasets import load_examples
    from robustlab.models.registry import load_saved
    from robustlab.runs.store import RunStore

    model, dev = noisy
    examples = load_examples(str(dev))
    texts, labels = [t for t, _ in examples], [y for _, y in examples]
    assert sum(len(t) > 40 for t in texts) > 0.9 * len(texts)
    ref_proba = np.asarray(load_saved(model, device="cpu").predict_proba(texts))
    ref_pred = ref_proba.argmax(1)
    ref_acc = accuracy_score(labels, ref_pred)
    assert 0.5 < ref_acc < 0.9 and 0 < ref_pred.mean() < 1  # below 1; both classes predicted
    rc, _, err = _eval(["--model", str(model), "--dataset", str(dev), "--perturbations",
                        "char_swap", "--seeds", "0", "--out", str(tmp_path / "run")], capsys)
    assert rc == 0, err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["clean_accuracy"] == pytest.approx(ref_acc, abs=1e-9)
    with RunStore(tmp_path / "run", readonly=True) as store:
        (cell,) = store.cells("done")
        preds, recs = store.predictions(cell.key), store.records(cell.key)
    assert [p["original"] for p in preds] == texts
    assert [p["label"] for p in preds] == labels
    assert [p["pred_before"] for p in preds] == ref_pred.tolist()
    np.testing.assert_allclose([r["proba_before"] for r in recs], ref_proba, atol=1e-5)
    # the perturbed texts too: each stored prediction is the model's own on the stored text
    after = np.asarray(load_saved(model, device="cpu").predict_proba(
        [p["perturbed"] for p in preds])).argmax(1)
    assert [p["pred_after"] for p in preds] == after.tolist()
    assert cell.result["a1"] == pytest.approx(accuracy_score(labels, after), abs=1e-9)
