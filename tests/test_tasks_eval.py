"""``robustlab eval`` (and failures, report, check, the TUI's views) on the tasks beyond
single-text classification (issue 31): CoNLL NER, STS-B similarity, WikiQA answer selection and
SNLI pairs, on small slices of ../shared/data, with the CPU baselines trained inside the test
and a tiny random-config BERT with each head.

Each clean metric is checked against the library that defines it (seqeval, scipy,
scikit-learn) on the model's own predictions.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.tasks import get_task
from robustlab.tasks.predict import predict

PERTS = "char_swap,word_delete,word_order"


def _slice(src: Path, dst: Path, lines: int) -> Path:
    """The first ``lines`` lines of a shared file, ending at a sentence break for CoNLL."""
    text = src.read_text(encoding="utf-8").splitlines(keepends=True)[:lines]
    dst.write_text("".join(text), encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def work(tmp_path_factory, shared_data) -> dict[str, Path]:
    """Train/test slices and a baseline per task, trained and saved here (seconds)."""
    from robustlab.models.task_baselines import (
        BowPairClassifier,
        BowPairScorer,
        FeatureTagger,
        OverlapRanker,
    )

    d = tmp_path_factory.mktemp("task-eval")
    out = {"dir": d}
    sl = {
        "ner": (shared_data / "conll2003/train.txt", 2000, shared_data / "conll2003/test.txt",
                1200),  # the first sentence with an ORG is near line 1000
        "sts": (shared_data / "stsb/sts-train.csv", 1500, shared_data / "stsb/sts-test.csv", 50),
        "wikiqa": (shared_data / "wikiqa/WikiQA-train.tsv", 3000,
                   shared_data / "wikiqa/WikiQA-test.tsv", 150),
    }
    for name, (train, n_train, test, n_test) in sl.items():
        out[f"{name}_train"] = _slice(train, d / f"{name}_train{train.suffix}", n_train)
        out[f"{name}_test"] = _slice(test, d / f"{name}_test{test.suffix}", n_test)
    snli = (shared_data / "textfooler_1k/snli.txt").read_text(encoding="utf-8").splitlines(True)
    (d / "snli_train.txt").write_text("".join(snli[:800]), encoding="utf-8")
    (d / "snli_test.txt").write_text("".join(snli[800:850]), encoding="utf-8")
    out["snli_train"], out["snli_test"] = d / "snli_train.txt", d / "snli_test.txt"

    ner = get_task("ner").read(out["ner_train"]).examples
    FeatureTagger(max_iter=100).fit([e.tokens for e in ner], [e.tags for e in ner]).save(
        d / "ner_model")
    sts = get_task("similarity").read(out["sts_train"]).examples
    BowPairScorer().fit([(e.first, e.second) for e in sts], [e.label for e in sts]).save(
        d / "sts_model")
    wq = get_task("answer-selection").read(out["wikiqa_train"]).examples
    OverlapRanker().fit([(e.question, list(e.candidates)) for e in wq],
                        [e.labels for e in wq]).save(d / "wikiqa_model")
    nli = get_task("pair").read(out["snli_train"]).examples
    BowPairClassifier().fit([(e.first, e.second) for e in nli], [e.label for e in nli]).save(
        d / "snli_model")
    return out


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    rc = main(argv)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _eval(work, name: str, out: Path, capsys, *extra: str) -> tuple[int, str, str]:
    return _run(["eval", "--model", str(work["dir"] / f"{name}_model"), "--dataset",
                 str(work[f"{name}_test"]), "--perturbations", PERTS, "--seeds", "0",
                 "--out", str(out), "--quiet", *extra], capsys)


def _model_predictions(work, name: str, task: str) -> tuple[list, list]:
    from robustlab.models.task_loading import load_task_model

    t = get_task(task)
    examples = t.read(work[f"{name}_test"]).examples
    model = load_task_model(str(work["dir"] / f"{name}_model"), t.name, "cpu")
    return examples, predict(t, model, examples)


# ---- the four tasks end to end ----------------------------------------------------------------


def test_ner_eval_prints_entity_f1_per_type_and_equals_seqeval(work, tmp_path, capsys):
    from seqeval.metrics import f1_score

    out = tmp_path / "ner"
    rc, stdout, err = _eval(work, "ner", out, capsys)
    assert rc == 0, err
    assert "ner: clean entity F1" in stdout and "per type: LOC" in stdout
    assert "entity F1 clean" in stdout and "entities" in stdout  # the table and its rule
    summary = json.loads((out / "summary.json").read_text())
    assert summary["task"] == "ner" and summary["metric"] == "f1"
    examples, preds = _model_predictions(work, "ner", "ner")
    gold = [list(e.tags) for e in examples]
    assert summary["clean_metric"] == pytest.approx(f1_score(gold, [list(p) for p in preds]))
    assert summary["clean_metrics"]["per_type"].keys() >= {"LOC", "PER", "ORG"}
    rows = {r["perturbation"]: r for r in summary["perturbations"]}
    assert set(rows) == set(PERTS.split(","))
    # worst first: the most negative drop first
    deltas = [r["delta"]["mean"] for r in summary["perturbations"]]
    assert deltas == sorted(deltas)
    # the perturbed metric is seqeval on the stored perturbed predictions
    from robustlab.runs.store import RunStore

    with RunStore(out, readonly=True) as store:
        cell = next(c for c in store.cells("done") if c.params["perturbation"] == "char_swap")
        stored = store.predictions(cell.key)
    assert len(stored) == len(examples)
    after = [r["pred_after"].split() for r in stored]
    labels = [r["label"].split() for r in stored]
    assert cell.result["a1"] == pytest.approx(f1_score(labels, after))
    # every perturbed sentence kept one valid IOB2 tag per token
    from robustlab.tasks.align import iob2_error

    assert all(len(t) == len(r["perturbed"].split()) and iob2_error(t) is None
               for t, r in zip(labels, stored, strict=True))


def test_ner_failures_report_check_and_resume(work, tmp_path, capsys):
    out = tmp_path / "ner"
    assert _eval(work, "ner", out, capsys)[0] == 0
    before = (out / "results.jsonl").read_text()
    rc, stdout, _ = _run(["failures", str(out), "--limit", "3"], capsys)
    assert rc == 0 and "entities" in stdout and "F1 pert-clean" in stdout
    assert "->" in stdout and "[" in stdout  # a token whose tag changed is marked
    # a rerun of the same command resumes: nothing recomputed, same results
    rc, stdout, err = _eval(work, "ner", out, capsys)
    assert rc == 0, err
    assert json.loads(before.splitlines()[0])["a1"] == \
        json.loads((out / "results.jsonl").read_text().splitlines()[0])["a1"]
    rc, _, err = _run(["report", str(out), "--out", str(tmp_path / "r.html")], capsys)
    assert rc == 0, err
    html = (tmp_path / "r.html").read_text()
    assert "entity F1 clean" in html and "Entity F1 per type" in html and "<img" in html
    # check: min_f1 on the task's metric; an impossible bound fails, JUnit written
    clean = json.loads((out / "summary.json").read_text())["clean_metric"]
    plan = tmp_path / "plan.toml"
    plan.write_text(f'model = "{work["dir"] / "ner_model"}"\ndata = "{work["ner_test"]}"\n'
                    f'seeds = [0]\nout = "{tmp_path / "gate"}"\n[[test]]\n'
                    f'perturbation = "char_swap"\nmin_f1 = {clean * 0.5:.3f}\nmax_drop = 0.5\n'
                    '[[test]]\nperturbation = "word_delete"\nmin_f1 = 1.0\n', encoding="utf-8")
    rc, stdout, err = _run(["check", str(plan), "--junit-xml", str(tmp_path / "j.xml"),
                            "--quiet"], capsys)
    assert rc == 1, err
    lines = [ln for ln in stdout.splitlines() if "ner_model" in ln]
    assert any("char_swap" in ln and "f1 >=" in ln and "PASS" in ln for ln in lines)
    assert any("word_delete" in ln and "f1 >= 1" in ln and "FAIL" in ln for ln in lines)
    assert "entities" in stdout
    assert 'name="f1 &gt;= 1 (entities)"' in (tmp_path / "j.xml").read_text()


def test_similarity_eval_pearson_equals_scipy_and_perturb_field_is_in_the_signature(
        work, tmp_path, capsys):
    from scipy.stats import pearsonr, spearmanr

    out = tmp_path / "sts"
    rc, stdout, err = _eval(work, "sts", out, capsys)
    assert rc == 0, err
    assert "similarity: clean Pearson" in stdout and "perturbing both texts" in stdout
    summary = json.loads((out / "summary.json").read_text())
    examples, preds = _model_predictions(work, "sts", "similarity")
    gold = [e.label for e in examples]
    assert summary["clean_metric"] == pytest.approx(pearsonr(gold, preds)[0])
    assert summary["clean_metrics"]["spearman"] == pytest.approx(spearmanr(gold, preds)[0])
    assert summary["perturb_field"] == "both" and "field:both" in summary["signature"]
    # another field is another study: refused in the same folder
    rc, _, err = _eval(work, "sts", out, capsys, "--perturb-field", "first")
    assert rc == 2 and "perturb_field" in err.replace("-", "_")
    rc, _, err = _eval(work, "sts", tmp_path / "first", capsys, "--perturb-field", "first")
    assert rc == 0, err
    first = json.loads((tmp_path / "first" / "summary.json").read_text())
    assert "field:first" in first["signature"]
    from robustlab.runs.store import RunStore

    with RunStore(tmp_path / "first", readonly=True) as store:
        rows = store.predictions()
    # only the first sentence changed
    assert all(r["original"].split(" ||| ")[1] == r["perturbed"].split(" ||| ")[1]
               for r in rows)
    # a failure is a score moved by more than the tolerance (not any change)
    failed = moved_at_all = 0
    with RunStore(out, readonly=True) as store:
        for cell in store.cells("done"):
            rows = store.predictions(cell.key)
            moved = [abs(float(r["pred_after"]) - float(r["pred_before"])) for r in rows
                     if r["original"] != r["perturbed"]]
            assert cell.result["failed"] == sum(m > 0.5 for m in moved)
            failed += cell.result["failed"]
            moved_at_all += sum(m > 0 for m in moved)
    assert 0 < failed < moved_at_all  # some scores moved less than the tolerance
    rc, stdout, _ = _run(["failures", str(out), "--limit", "2"], capsys)
    assert rc == 0 and "score " in stdout and "> tolerance 0.5" in stdout


def test_answer_selection_f1_map_mrr_equal_sklearn(work, tmp_path, capsys):
    from sklearn.metrics import f1_score

    out = tmp_path / "wq"
    rc, stdout, err = _eval(work, "wikiqa", out, capsys)
    assert rc == 0, err
    assert "answer-selection: clean F1" in stdout and "map" in stdout and "mrr" in stdout
    assert "perturbing the question" in stdout
    summary = json.loads((out / "summary.json").read_text())
    examples, preds = _model_predictions(work, "wikiqa", "answer-selection")
    gold = [y for e in examples for y in e.labels]
    flat = [int(s >= 0.5) for p in preds for s in p]
    assert summary["clean_metric"] == pytest.approx(f1_score(gold, flat))
    # the question is what changed; the candidates are as they were
    from robustlab.runs.store import RunStore

    with RunStore(out, readonly=True) as store:
        rows = store.predictions()
    assert all(r["original"].split(" ||| ")[1:] == r["perturbed"].split(" ||| ")[1:]
               for r in rows)
    rc, stdout, _ = _run(["failures", str(out), "--limit", "2"], capsys)
    assert rc == 0 and "ranking" in stdout
    # judging relabels a classifier's samples: a task run is refused in one line
    rc, _, err = _run(["judge", str(out)], capsys)
    assert rc == 2 and "a answer-selection run" in err


def test_snli_pairs_accuracy_equals_sklearn(work, tmp_path, capsys):
    from sklearn.metrics import accuracy_score

    out = tmp_path / "snli"
    rc, stdout, err = _eval(work, "snli", out, capsys)
    assert rc == 0, err
    assert "pair: clean accuracy" in stdout
    summary = json.loads((out / "summary.json").read_text())
    examples, preds = _model_predictions(work, "snli", "pair")
    assert summary["clean_metric"] == pytest.approx(
        accuracy_score([e.label for e in examples], preds))
    rc, stdout, _ = _run(["failures", str(out), "--limit", "1"], capsys)
    assert rc == 0 and "class " in stdout


def test_tui_views_speak_the_tasks_language(work, tmp_path, capsys):
    from robustlab.studies.eval.view import load_eval
    from robustlab.tui.failures import load_failures

    for name, metric in (("ner", "entity F1"), ("sts", "Pearson")):
        out = tmp_path / name
        assert _eval(work, name, out, capsys)[0] == 0
        view = load_eval(out)
        assert view.metric == metric
        assert view.table.labels["a0"] == "clean"
        assert metric in view.accuracy_plot().title
        fails = load_failures(out)
        assert fails.task_run and fails.examples
        lines = fails.detail(fails.examples[0])
        assert lines and all(len(ln) < 400 for ln in lines)
        assert "prob_before" not in fails.table(fails.examples).columns


# ---- bad inputs: one line, exit 2, nothing written --------------------------------------------


def _bad(argv: list[str], out: Path, capsys) -> str:
    rc, _, err = _run([*argv, "--out", str(out), "--quiet"], capsys)
    assert rc == 2, err
    assert not out.exists(), "a refused run left its folder"
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, err
    return lines[0]


def test_bad_inputs_are_one_line_exit_2_and_nothing_written(work, tmp_path, capsys):
    d = work["dir"]
    notag = tmp_path / "notag.txt"
    notag.write_text("".join(ln.split(" ")[0].rstrip("\n") + "\n" if ln.strip() else ln
                             for ln in work["ner_test"].read_text().splitlines(True)))
    one = tmp_path / "one.txt"
    one.write_text("".join("\t".join(ln.split("\t")[:2]) + "\n"
                           for ln in work["snli_test"].read_text().splitlines()))
    lines = work["sts_test"].read_text().splitlines(True)
    f = lines[2].split("\t")
    f[4] = "7.5"
    lines[2] = "\t".join(f)
    out_of_range = tmp_path / "range.csv"
    out_of_range.write_text("".join(lines))
    out = tmp_path / "out"
    base = ["eval", "--perturbations", "char_swap", "--seeds", "0"]
    msg = _bad([*base, "--model", str(d / "ner_model"), "--dataset", str(notag), "--task", "ner"],
               out, capsys)
    assert "tag column missing" in msg
    msg = _bad([*base, "--model", str(d / "snli_model"), "--dataset", str(one), "--task",
                "pair"], out, capsys)
    assert "two texts" in msg
    msg = _bad([*base, "--model", str(d / "sts_model"), "--dataset", str(out_of_range)], out,
               capsys)
    assert "7.5" in msg and "0-5" in msg
    # a model of another task
    msg = _bad([*base, "--model", str(d / "sts_model"), "--dataset", str(work["ner_test"])], out,
               capsys)
    assert "similarity model" in msg and "ner data" in msg
    # a perturbation that cannot keep the tags
    msg = _bad([*base[:2], "whitespace_perturbation", *base[3:], "--model",
                str(d / "ner_model"), "--dataset", str(work["ner_test"])], out, capsys)
    assert "refused for NER" in msg
    # --perturb-field on single texts / tags
    msg = _bad([*base, "--model", str(d / "ner_model"), "--dataset", str(work["ner_test"]),
                "--perturb-field", "first"], out, capsys)
    assert "--perturb-field" in msg


def test_a_tag_set_without_the_datas_entity_types_is_refused(work, tmp_path, capsys):
    from robustlab.models.task_baselines import FeatureTagger

    ner = get_task("ner").read(work["ner_train"]).examples
    strip = [tuple("O" if t.endswith("ORG") else t for t in e.tags) for e in ner]
    FeatureTagger(max_iter=50).fit([e.tokens for e in ner], strip).save(tmp_path / "no_org")
    msg = _bad(["eval", "--model", str(tmp_path / "no_org"), "--dataset",
                str(work["ner_test"]), "--perturbations", "char_swap", "--seeds", "0"],
               tmp_path / "out", capsys)
    assert "ORG" in msg and "tag" in msg


# ---- Hugging Face checkpoints with each head, and Python objects ------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, work):
    """A tiny random BERT (vocabulary from the slices) saved without a task head."""
    pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from _tiny_tokenizer import bert_tokenizer
    from transformers import BertConfig, BertModel

    d = tmp_path_factory.mktemp("tiny-bert")
    words = sorted({w.lower() for e in get_task("ner").read(work["ner_test"]).examples
                    for w in e.tokens} | {w.lower() for e in get_task("similarity").read(
                        work["sts_test"]).examples for w in f"{e.first} {e.second}".split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words[:3000]]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt").save_pretrained(d)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d, safe_serialization=True)
    return d


def _with_head(tiny: Path, tmp_path: Path, cls_name: str, **config) -> Path:
    import shutil

    import torch
    import transformers

    d = tmp_path / cls_name
    shutil.copytree(tiny, d)
    cfg = transformers.BertConfig.from_pretrained(d, **config)
    torch.manual_seed(1)
    getattr(transformers, cls_name)(cfg).save_pretrained(d, safe_serialization=True)
    return d


def test_hf_heads_are_evaluated_as_they_are_and_a_missing_head_refused(work, tiny, tmp_path,
                                                                       capsys):
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
    tagger = _with_head(tiny, tmp_path, "BertForTokenClassification", num_labels=len(tags),
                        id2label=dict(enumerate(tags)),
                        label2id={t: i for i, t in enumerate(tags)})
    rc, stdout, err = _run(["eval", "--model", str(tagger), "--dataset", str(work["ner_test"]),
                            "--num-examples", "20", "--perturbations", "char_swap",
                            "--seeds", "0", "--out", str(tmp_path / "hf-ner"), "--quiet",
                            "--device", "cpu"], capsys)
    assert rc == 0, err
    assert "clean entity F1" in stdout
    scorer = _with_head(tiny, tmp_path, "BertForSequenceClassification", num_labels=1,
                        problem_type="regression")
    rc, stdout, err = _run(["eval", "--model", str(scorer), "--dataset", str(work["sts_test"]),
                            "--num-examples", "20", "--perturbations", "char_swap",
                            "--seeds", "0", "--out", str(tmp_path / "hf-sts"), "--quiet",
                            "--device", "cpu"], capsys)
    assert rc == 0, err
    assert "clean Pearson" in stdout
    # the base model without a trained token-classification head: refused, nothing written
    msg = _bad(["eval", "--model", str(tiny), "--dataset", str(work["ner_test"]),
                "--perturbations", "char_swap", "--seeds", "0"], tmp_path / "out", capsys)
    assert "no task head" in msg and "BertModel" in msg
    (tiny / "robustlab_model.json").write_text(json.dumps({"task": "ner"}))
    try:
        msg = _bad(["eval", "--model", str(tiny), "--dataset", str(work["ner_test"]),
                    "--perturbations", "char_swap", "--seeds", "0", "--device", "cpu"],
                   tmp_path / "out", capsys)
        assert "head" in msg
        # a folder declaring its task (the train contract): another task's data refused
        msg = _bad(["eval", "--model", str(tiny), "--dataset", str(work["sts_test"]),
                    "--perturbations", "char_swap", "--seeds", "0"], tmp_path / "out", capsys)
        assert "a ner model" in msg and "similarity data" in msg
    finally:
        (tiny / "robustlab_model.json").unlink()


def test_python_objects_and_a_token_classification_pipeline(work, tiny, tmp_path):
    from transformers import pipeline

    from robustlab.studies.eval.tasks import evaluate_task as evaluate

    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG", "B-MISC", "I-MISC"]
    d = _with_head(tiny, tmp_path, "BertForTokenClassification", num_labels=len(tags),
                   id2label=dict(enumerate(tags)), label2id={t: i for i, t in enumerate(tags)})
    pipe = pipeline("token-classification", model=str(d), aggregation_strategy="none",
                    device="cpu")
    ner = get_task("ner")
    examples = ner.read(work["ner_test"]).examples[:15]
    summary = evaluate(pipe, tmp_path / "pipe", examples=examples, task="ner",
                       perturbations=["char_swap"], seeds=[0], progress=False, plots=False)
    assert summary["task"] == "ner"
    assert summary["clean_metric"] == pytest.approx(
        ner.metrics(examples, predict(ner, pipe, examples))["f1"])

    class Constant:  # any object with the task's batch method
        def predict_scores(self, pairs):
            return np.asarray([float(len(a) % 5) for a, _ in pairs])

    sts = get_task("sts").read(work["sts_test"]).examples
    summary = evaluate(Constant(), tmp_path / "obj", examples=sts, task="sts",
                       perturbations=["char_swap"], seeds=[0], progress=False, plots=False)
    assert summary["task"] == "similarity" and summary["metric"] == "pearson"


def test_words_past_a_taggers_max_length_are_warned_of(work, tiny, tmp_path, capsys):
    """A tagger tags the words past its max_length O unread; eval says how many, in the
    summary, on stderr and in the report, and counts them independently of the model's own
    tally; a tagger reading every word gets no warning."""
    from robustlab.models.hf_tasks import HFTagger
    from robustlab.studies.eval.command import print_summary
    from robustlab.studies.eval.tasks import evaluate_task as evaluate

    ner = get_task("ner")
    examples = ner.read(work["ner_test"]).examples[:15]
    short = HFTagger(str(tiny), steps=1, max_length=8, device="cpu")
    short.fit([e.tokens for e in examples[:4]], [e.tags for e in examples[:4]])
    want = 0
    for e in examples:  # words with no piece inside the first 8 (specials included)
        ids = short.tokenizer_(list(e.tokens), is_split_into_words=True, truncation=True,
                               max_length=8).word_ids()
        want += len(e.tokens) - len({w for w in ids if w is not None})
    assert want > 10
    summary = evaluate(short, tmp_path / "short", examples=examples, task="ner",
                       perturbations=["char_swap"], seeds=[0], progress=False, plots=False)
    assert len(summary["warnings"]) == 1
    assert f"{want} word(s) of the 15 clean examples" in summary["warnings"][0]
    assert "max_length (8 pieces)" in summary["warnings"][0]
    capsys.readouterr()
    print_summary(summary)
    assert f"warning: {want} word(s)" in capsys.readouterr().err
    rc, _, err = _run(["report", str(tmp_path / "short"), "--out", str(tmp_path / "r.html")],
                      capsys)
    assert rc == 0, err
    assert f"{want} word(s) of the 15 clean" in (tmp_path / "r.html").read_text(encoding="utf-8")
    full = HFTagger(str(tiny), steps=1, max_length=128, device="cpu")
    full.fit([e.tokens for e in examples[:4]], [e.tags for e in examples[:4]])
    summary = evaluate(full, tmp_path / "full", examples=examples, task="ner",
                       perturbations=["char_swap"], seeds=[0], progress=False, plots=False)
    assert summary["warnings"] == []


def test_classification_runs_keep_their_signature_and_results(tmp_path, capsys):
    """A single-text run has no task in its config or signature (runs made before tasks
    resume as they are)."""
    from robustlab.studies.eval.config import EvalConfig

    data = tmp_path / "d.tsv"
    data.write_text("".join(f"{i % 2}\tword{i} good film\n" for i in range(20)))
    cfg = EvalConfig(model="/m", dataset={"path": str(data)}, perturbations=("char_swap",),
                     seeds=(0,)).resolved()
    assert cfg.task is None and cfg.perturb_field is None
    assert "task" not in cfg.signature() and "task" not in cfg.to_dict()
