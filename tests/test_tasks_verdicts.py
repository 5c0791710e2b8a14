"""Issue 31's correctness gaps on tasks (NER, pairs, similarity, answer selection):

* a label-changing perturbation (negation) is tested by CheckList's type for the task
  (issue 32's machinery), never scored against the gold label it invalidated: an NLI pair's
  negated hypothesis is a DIR test ("not entailment"), similarity / answer selection / a
  negated premise are "changed" (no metric, no pass/fail), NER stays INV (tags follow tokens);
* a threshold on another task's metric is refused when the plan is loaded (one line, exit 2,
  nothing written, no model loaded);
* the perturbed metric is computed per sample and averaged, then mean ± sd over seeds (hand
  computed, two seeds, known predictions).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.metrics.checklist_tests import CHANGED, DIR, INV
from robustlab.perturbations.registry import parse_spec
from robustlab.tasks import get_task
from robustlab.tasks.perturb import Perturbed

#: hypotheses negation changes ("is" -> "is not", "runs" -> "does not run", ...)
HYPOTHESES = ["A man is sleeping .", "The dog runs in the park .", "A child ate an apple .",
              "A boy rides a bike .", "People are walking outside .", "A girl can swim .",
              "The woman is cooking dinner .", "Two men are talking .", "A cat sleeps .",
              "The kids played soccer .", "A player kicks the ball .", "The band is playing ."]
#: premises without a verb negation can change ("A man sleeping": no finite verb)
PREMISE = "A photo of people outside on a sunny day ."


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


@pytest.fixture(scope="module")
def nli(tmp_path_factory) -> dict[str, Path]:
    """An SNLI-format test file (entailment pairs with negatable hypotheses, plus neutral and
    contradiction ones) and two pair models: ``sound`` learnt that a negated hypothesis is a
    contradiction, ``blind`` predicts entailment whatever the negation."""
    from robustlab.models.task_baselines import BowPairClassifier

    d = tmp_path_factory.mktemp("nli")
    neg = parse_spec("negation")
    negated = [o.text for o in neg.perturb_outcomes(HYPOTHESES, seed=0)]
    assert all(a != b for a, b in zip(HYPOTHESES, negated, strict=True))
    test = [("entailment", PREMISE, h) for h in HYPOTHESES[:8]] + \
        [("neutral", PREMISE, HYPOTHESES[8]), ("contradiction", PREMISE, HYPOTHESES[9])]
    (d / "test.txt").write_text("".join("\t".join(r) + "\n" for r in test), encoding="utf-8")
    pairs = [(PREMISE, h) for h in HYPOTHESES + negated] * 3
    BowPairClassifier().fit(pairs, (["entailment"] * 12 + ["contradiction"] * 12) * 3).save(
        d / "sound")
    blind = BowPairClassifier().fit(pairs + [(PREMISE, "x")],
                                    ["entailment"] * len(pairs) + ["neutral"])
    blind.save(d / "blind")
    return {"dir": d, "test": d / "test.txt", "sound": d / "sound", "blind": d / "blind"}


def _eval(nli, model: str, out: Path, capsys, *extra: str) -> tuple[int, str, str]:
    return _run(["eval", "--model", str(nli[model]), "--dataset", str(nli["test"]),
                 "--perturbations", "negation,char_swap", "--seeds", "0", "--out", str(out),
                 "--quiet", *extra], capsys)


def _cell(out: Path, spec: str) -> dict:
    return next(r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
                if r["perturbation"] == spec)


# ---- the test type per task -------------------------------------------------------------------


@pytest.mark.parametrize(("task", "field", "spec", "expected"), [
    ("ner", None, "negation", (INV, None)),  # "not" gets O: the entity set still holds
    ("similarity", None, "negation", (CHANGED, None)),
    ("similarity", "first", "negation", (CHANGED, None)),
    ("answer-selection", None, "negation", (CHANGED, None)),
    ("pair", "first", "negation", (CHANGED, None)),  # not-P may still entail H
    ("pair", "second", "negation", (DIR, "not entailment")),
    ("pair", "both", "negation", (DIR, "not entailment")),  # tested where H alone changed
    ("pair", None, "char_swap", (INV, None)),
    ("similarity", None, "char_swap", (INV, None)),
    ("ner", None, "word_delete", (INV, None)),
])
def test_each_task_declares_the_test_of_a_perturbation(task, field, spec, expected):
    assert get_task(task).test_type(parse_spec(spec), field) == expected


def test_pairs_without_an_entailment_class_have_no_expectation():
    from robustlab.tasks.examples import PairExample

    para = [PairExample("a b", "c d", "1"), PairExample("e f", "g h", "0")]
    assert get_task("pair").test_type(parse_spec("negation"), "second", para) == (CHANGED, None)


def test_a_dir_row_is_tested_only_where_the_hypothesis_alone_changed():
    from robustlab.tasks.stored import row_verdict, rule, task_name

    t = "task:pair:DIR not entailment"
    assert task_name(t) == "pair" and rule(t) == "DIR not entailment"
    assert task_name("task:ner") == "ner" and rule("task:ner") == "entities"
    row = {"original": "P . ||| H .", "perturbed": "P . ||| not H .", "label": "entailment",
           "pred_before": "entailment", "pred_after": "entailment"}
    assert row_verdict(t, row) is True
    assert row_verdict(t, {**row, "pred_after": "contradiction"}) is False
    assert row_verdict(t, {**row, "pred_after": "neutral"}) is False
    assert row_verdict(t, {**row, "label": "neutral"}) is None  # no expectation holds
    assert row_verdict(t, {**row, "perturbed": "not P . ||| not H ."}) is None  # premise too
    assert row_verdict(t, {**row, "perturbed": row["original"]}) is None  # unchanged
    assert row_verdict("task:similarity:changed", {**row, "label": "3.0", "pred_before": "1.0",
                                                   "pred_after": "4.0"}) is None


# ---- NLI through the commands ------------------------------------------------------------------


def test_a_sound_nli_model_passes_negation_and_a_blind_one_fails(nli, tmp_path, capsys):
    """Negation on an entailment pair's hypothesis: the model that predicts contradiction is
    not failing (scored against the old gold label it would be wrong on every pair), the one
    that still says entailment fails on each; eval, failures, report and check say DIR."""
    for model, failed in (("sound", 0), ("blind", 8)):
        out = tmp_path / model
        rc, stdout, err = _eval(nli, model, out, capsys, "--perturb-field", "second")
        assert rc == 0, err
        cell = _cell(out, "negation")
        assert cell["test_type"] == DIR and cell["test"] == "task:pair:DIR not entailment"
        assert cell["changed"] == 10 and cell["tested"] == 8  # the entailment pairs
        assert cell["failed"] == failed and cell["failure_rate"] == failed / 8
        assert cell["a1"] is None and cell["delta"] is None  # no accuracy on invalid labels
        assert cell["metrics_after"] is None
        assert _cell(out, "char_swap")["a1"] is not None  # INV as before
        neg = next(ln for ln in stdout.splitlines() if ln.startswith("negation"))
        assert "DIR not entailment" in neg
        assert f"{failed / 8:.3f}" in neg
        summary = json.loads((out / "summary.json").read_text())
        row = next(r for r in summary["perturbations"] if r["perturbation"] == "negation")
        assert row["a1"]["mean"] is None and row["failure_rate"]["mean"] == failed / 8
    from robustlab.studies.eval.view import load_eval
    from robustlab.tui.failures import load_failures

    for model in ("sound", "blind"):  # the TUI's views: the task's metric, the DIR rule
        view = load_eval(tmp_path / model)
        assert view.metric == "accuracy" and "DIR not entailment" in str(view.table.rows)
    fails = load_failures(tmp_path / "blind")
    assert fails.task_run and fails.examples
    assert any("entailment -> entailment" in ln for ln in fails.detail(fails.examples[0]))
    rc, stdout, _ = _run(["failures", str(tmp_path / "blind"), "--limit", "2"], capsys)
    assert rc == 0 and "DIR not entailment" in stdout
    assert "class entailment -> entailment (gold entailment)" in stdout
    rc, stdout, _ = _run(["failures", str(tmp_path / "sound"), "--limit", "2"], capsys)
    assert rc == 0 and "class entailment -> entailment" not in stdout
    rc, _, err = _run(["report", str(tmp_path / "blind"), "--out", str(tmp_path / "r.html")],
                      capsys)
    assert rc == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "DIR not entailment" in html and "accuracy perturbed − clean" in html
    # check: max_fail_rate gates the DIR test; accuracy thresholds on it are refused
    for model, verdict in (("sound", "PASS"), ("blind", "FAIL")):
        plan = tmp_path / f"{model}.toml"
        plan.write_text(f'model = "{nli[model]}"\ndata = "{nli["test"]}"\nseeds = [0]\n'
                        f'out = "{tmp_path / (model + "-gate")}"\n[[test]]\n'
                        'perturbation = "negation"\nmax_fail_rate = 0.2\n', encoding="utf-8")
        rc, stdout, err = _run(["check", str(plan), "--quiet"], capsys)
        line = next(ln for ln in stdout.splitlines() if "negation" in ln and "fail_rate" in ln)
        assert verdict in line and "DIR not entailment" in line, stdout
        assert rc == (0 if verdict == "PASS" else 1), err


def test_a_negated_premise_is_changed_only(nli, tmp_path, capsys):
    from robustlab.tasks.examples import PairExample

    ex = [PairExample(h, h, "entailment") for h in HYPOTHESES[:4]]

    class Echo:  # "entailment" unless one text has "not" (a changed class under negation)
        def predict_proba(self, pairs):
            return np.asarray([[0.0, 1.0] if "not" in a + b else [1.0, 0.0] for a, b in pairs])

        classes_ = ["entailment", "contradiction"]

    from robustlab.studies.eval.tasks import evaluate_task

    s = evaluate_task(Echo(), tmp_path / "first", examples=ex, task="pair",
                      perturbations=["negation"], seeds=[0], perturb_field="first",
                      progress=False, plots=False)
    row = s["perturbations"][0]
    assert row["test"] == "task:pair:changed"
    assert row["a1"]["mean"] is None and row["failure_rate"]["mean"] is None
    assert row["change_rate"]["mean"] == 1.0 and row["failed"] is None


def test_similarity_negation_has_no_pearson_against_its_old_scores(tmp_path, capsys):
    from robustlab.studies.eval.tasks import evaluate_task
    from robustlab.tasks.examples import PairExample

    ex = [PairExample(h, h, float(i % 5)) for i, h in enumerate(HYPOTHESES[:6])]

    class Scorer:  # 5 for identical texts, 4.6-4.9 when one says "not", 1 otherwise
        def predict_scores(self, pairs):
            return np.asarray([5.0 if a == b else 4.6 + 0.1 * (len(a) % 4) if "not" in a + b
                               else 1.0 for a, b in pairs])

    s = evaluate_task(Scorer(), tmp_path / "sts", examples=ex, task="similarity",
                      perturbations=["negation"], seeds=[0], perturb_field="first",
                      progress=False, plots=False)
    row = s["perturbations"][0]
    assert row["test"] == "task:similarity:changed"
    assert row["a1"]["mean"] is None and row["delta"]["mean"] is None
    assert row["failure_rate"]["mean"] is None and row["failed"] is None
    assert row["change_rate"]["mean"] == 0.0  # 5 -> 4.6..4.9: within the 0.5 tolerance
    rc, stdout, _ = _run(["failures", str(tmp_path / "sts")], capsys)
    assert rc == 0 and "changed" in stdout


# ---- thresholds on another task's metric: refused when the plan loads ----------------------


def _files(d: Path, shared_data: Path) -> dict[str, Path]:
    """A small data file per task (single texts for classification)."""
    def head(src: Path, dst: str, n: int) -> Path:
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)[:n]
        (d / dst).write_text("".join(lines), encoding="utf-8")
        return d / dst

    (d / "single.txt").write_text("".join(f"{i % 2}\ta short text number {i}\n"
                                          for i in range(10)), encoding="utf-8")
    return {"ner": head(shared_data / "conll2003/test.txt", "ner.txt", 40),
            "similarity": head(shared_data / "stsb/sts-test.csv", "sts.csv", 10),
            "answer-selection": head(shared_data / "wikiqa/WikiQA-test.tsv", "wq.tsv", 10),
            "pair": head(shared_data / "textfooler_1k/snli.txt", "snli.txt", 10),
            "classification": d / "single.txt"}


OWN = {"ner": "min_f1", "answer-selection": "min_f1", "similarity": "min_pearson",
       "pair": "min_accuracy", "classification": "min_accuracy"}
CASES = [(task, key) for task, own in OWN.items()
         for key in ("min_accuracy", "min_f1", "min_pearson") if key != own]


@pytest.mark.parametrize(("task", "key"), CASES)
@pytest.mark.parametrize("where", ["test", "defaults"])
def test_a_threshold_on_another_tasks_metric_is_refused_before_any_model_call(
        task, key, where, tmp_path, capsys, shared_data, monkeypatch):
    from robustlab.tasks.detect import detect_task

    files = _files(tmp_path, shared_data)
    assert detect_task(files[task]) == task
    calls = []
    import robustlab.models.task_loading as tl
    import robustlab.studies.eval.predict as ep

    for mod, name in ((tl, "load_task_model"), (ep, "as_predictor")):
        monkeypatch.setattr(mod, name, lambda *a, _n=name, **k: calls.append(_n))
    model = tmp_path / "model"
    model.mkdir()
    out = tmp_path / "run"
    thresholds = f"{key} = 0.5\n"
    plan = tmp_path / "plan.toml"
    plan.write_text(f'model = "{model}"\ndata = "{files[task]}"\nout = "{out}"\n'
                    + ("[defaults]\n" + thresholds if where == "defaults" else "")
                    + '[[test]]\nperturbation = "char_swap"\nmax_fail_rate = 0.5\n'
                    + (thresholds if where == "test" else ""), encoding="utf-8")
    rc, stdout, err = _run(["check", str(plan), "--quiet"], capsys)
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and key in lines[0] and "does not apply" in lines[0], err
    assert OWN[task] in lines[0]
    assert not out.exists() and not calls and stdout == ""


@pytest.mark.parametrize("key", ["min_f1", "min_pearson"])
def test_task_thresholds_on_classifiers_trained_per_cell_are_refused(key, tmp_path, capsys):
    out = tmp_path / "run"
    plan = tmp_path / "plan.toml"
    plan.write_text(f'models = ["bow"]\ndataset = "demo"\nout = "{out}"\n[[test]]\n'
                    f'perturbation = "char_swap"\n{key} = 0.5\n', encoding="utf-8")
    rc, _, err = _run(["check", str(plan), "--quiet"], capsys)
    assert rc == 2 and key in err and "classifiers trained per cell" in err
    assert not out.exists()
    rc, _, err = _run(["robustness", "--model", "bow", "--dataset", "demo", "--perturbations",
                       "char_swap", f"--{key.replace('_', '-')}", "0.5", "--out", str(out),
                       "--quiet"], capsys)
    assert rc == 2 and "min-accuracy" in err and not out.exists()


def test_plans_follow_the_tasks_test_type_for_negation(tmp_path, capsys, shared_data,
                                                       monkeypatch):
    import robustlab.studies.learnability.thresholds as th
    from robustlab.studies.learnability.thresholds import load_plan

    monkeypatch.setattr(th, "_check_models", lambda *a: None)  # an empty folder as the model

    files = _files(tmp_path, shared_data)
    model = tmp_path / "model"
    model.mkdir()

    def plan(task: str, body: str) -> Path:
        p = tmp_path / f"{task}.toml"
        p.write_text(f'model = "{model}"\ndata = "{files[task]}"\n[[test]]\n'
                     f'perturbation = "negation"\n{body}', encoding="utf-8")
        return p

    # NER: INV, so its own metric and drop gate negation
    assert load_plan(plan("ner", "max_drop = 0.1\nmin_f1 = 0.2\n")).tests[0]["max_drop"] == 0.1
    # NLI: DIR, so max_fail_rate only
    assert load_plan(plan("pair", "max_fail_rate = 0.1\n")).tests[0]["max_fail_rate"] == 0.1
    from robustlab.errors import InputError

    with pytest.raises(InputError, match="no A1 and max_drop"):
        load_plan(plan("pair", "max_drop = 0.1\n"))
    # similarity: changed, nothing to gate
    with pytest.raises(InputError, match="'changed' test"):
        load_plan(plan("similarity", "max_fail_rate = 0.1\n"))


def test_nli_negation_on_pairs_without_entailment_is_refused_when_the_plan_loads(
        tmp_path, capsys, monkeypatch):
    """A pair file whose classes are not NLI's (no 'entailment'): negation is a 'changed' test
    there (no expectation), so a threshold on it could only be an ERROR at check time; it is
    refused when the plan loads -- one line, exit 2, no run folder, no model loaded. The same
    plan on data with an entailment class loads (DIR)."""
    import robustlab.models.task_loading as tl
    import robustlab.studies.eval.predict as ep

    calls = []
    for mod, name in ((tl, "load_task_model"), (ep, "as_predictor")):
        monkeypatch.setattr(mod, name, lambda *a, _n=name, **k: calls.append(_n))
    model = tmp_path / "model"
    model.mkdir()
    para = tmp_path / "para.txt"
    para.write_text("".join(f"{lab}\t{PREMISE}\t{h}\n" for lab, h in
                            zip(["paraphrase", "other"] * 4, HYPOTHESES[:8], strict=True)),
                    encoding="utf-8")
    out = tmp_path / "run"
    plan = tmp_path / "plan.toml"
    plan.write_text(f'model = "{model}"\ndata = "{para}"\nout = "{out}"\n[[test]]\n'
                    'perturbation = "char_swap"\nmax_fail_rate = 0.5\n[[test]]\n'
                    'perturbation = "negation"\nmax_fail_rate = 0.2\n', encoding="utf-8")
    rc, stdout, err = _run(["check", str(plan), "--quiet"], capsys)
    assert rc == 2, err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "[[test]] #2" in lines[0] and "negation" in lines[0], err
    assert "'entailment'" in lines[0] and "'changed' test" in lines[0]
    assert not out.exists() and not calls and stdout == ""
    # with an entailment class the same test is DIR, gated by max_fail_rate
    import robustlab.studies.learnability.thresholds as th

    monkeypatch.setattr(th, "_check_models", lambda *a: None)  # an empty folder as the model
    para.write_text(para.read_text(encoding="utf-8").replace("paraphrase", "entailment"),
                    encoding="utf-8")
    assert th.load_plan(plan).tests[1]["max_fail_rate"] == 0.2


# ---- the perturbed metric: per sample, averaged; then mean ± sd over seeds ------------------


def test_perturbed_pearson_is_the_mean_over_samples_then_seeds_hand_computed():
    """Three pairs with gold 0, 1, 2; the model's score on each perturbed copy is set by hand
    per (seed, sample), so each sample's Pearson is known: seed 0 -> samples r = 1 and 0.5
    (mean 0.75; pooled over its 6 rows it would be ~0.14), seed 1 -> r = -1 and 1 (mean 0).
    Over seeds: mean 0.375, sd (ddof 1) 0.75/sqrt(2)."""
    from robustlab.studies.eval.study import sample_seed, summarise
    from robustlab.studies.eval.tasks import TaskPredictor, evaluate_task_cell
    from robustlab.tasks.examples import PairExample

    table = {sample_seed(0, 0): [0, 1, 2], sample_seed(0, 1): [10, 12, 11],
             sample_seed(1, 0): [2, 1, 0], sample_seed(1, 1): [0, 1, 2]}
    sim = get_task("similarity")

    class Marked(type(sim)):  # each perturbed copy names its seed and example
        def perturb(self, examples, perturbation, seed=0, field=None):
            return [Perturbed(ex, replace(ex, first=f"{ex.first} #{seed}"), True)
                    for ex in examples]

    class Lookup:
        def predict_scores(self, pairs):
            out = []
            for a, b in pairs:
                i = int(b)
                out.append(float(i) if "#" not in a else
                           float(table[int(a.split("#")[1])][i]))
            return np.asarray(out)

    task = Marked()
    examples = [PairExample(f"t{i}", str(i), float(i)) for i in range(3)]
    predictor = TaskPredictor(task, Lookup())
    clean = predictor(examples)
    results = [evaluate_task_cell(task, predictor, examples, clean, "char_swap", seed, 2,
                                  "first").result for seed in (0, 1)]
    assert [r["a1"] for r in results] == [pytest.approx(0.75), pytest.approx(0.0)]
    assert [r["a0"] for r in results] == [pytest.approx(1.0)] * 2
    pooled = np.corrcoef([0, 1, 2, 0, 1, 2], [0, 1, 2, 10, 12, 11])[0, 1]
    assert abs(pooled - 0.75) > 0.5  # the two rules differ on this case
    row = summarise(results, ["char_swap"])[0]
    assert row["a1"]["mean"] == pytest.approx(0.375)
    assert row["a1"]["std"] == pytest.approx(0.75 / np.sqrt(2))
    assert row["delta"]["mean"] == pytest.approx(0.375 - 1.0)


# ---- the report's figure ----------------------------------------------------------------------


@pytest.mark.parametrize("n_rows", [2, 5, 14])
def test_the_task_figures_legend_overlaps_neither_title_nor_plot(n_rows):
    """The legend sits below the tick labels: beside the title (its old place, upper right)
    it ran into a long title on a narrow figure."""
    from robustlab.studies.eval.tasks import metric_figure

    rows = [{"label": f"perturbation_{i}", "a0": {"mean": 0.8}, "a1": {"mean": 0.5 + i / 100,
                                                                       "std": 0.01}}
            for i in range(n_rows)]
    fig = metric_figure(rows, 0.8, "similarity")
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    ax = fig.axes[0]
    legend = fig.legends[0].get_window_extent(r)
    boxes = [ax.title.get_window_extent(r), ax.get_window_extent(r),
             *[t.get_window_extent(r) for t in ax.get_xticklabels()]]
    assert not any(legend.overlaps(b) for b in boxes)
    assert legend.y1 < ax.get_window_extent(r).y0  # below the plot
    fig_box = fig.bbox
    assert fig_box.x0 <= legend.x0 and legend.x1 <= fig_box.x1 and legend.y0 >= fig_box.y0
