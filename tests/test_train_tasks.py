"""``robustlab train --task ner|pair|similarity|answer-selection``: the head each task needs, the
baselines beating a trivial predictor on slices of the shared data, the folder contract with eval
(``robustlab_model.json`` naming the task and labels; the held-out split in the task's format),
and bad inputs refused in one line with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.tasks import get_task
from robustlab.tasks.predict import predict


def _head(src: Path, dst: Path, n: int) -> Path:
    lines = src.read_text(encoding="utf-8").split("\n")[:n]
    dst.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def slices(shared_data, tmp_path_factory):
    d = tmp_path_factory.mktemp("slices")
    return {
        "ner": _head(shared_data / "conll2003/train.txt", d / "conll.txt", 2500),
        "similarity": _head(shared_data / "stsb/sts-train.csv", d / "sts.csv", 500),
        "answer-selection": _head(shared_data / "wikiqa/WikiQA-train.tsv", d / "wikiqa.tsv",
                                  900),
        "pair": _head(shared_data / "textfooler_1k/snli.txt", d / "snli.txt", 400),
    }


def _meta(out: Path) -> dict:
    return json.loads((out / "robustlab_model.json").read_text(encoding="utf-8"))


def _info(out: Path) -> dict:
    return json.loads((out / "train_info.json").read_text(encoding="utf-8"))


# ---- baselines: beat a trivial predictor -------------------------------------------------------


@pytest.mark.parametrize("task, family, metric, floor", [
    ("ner", "feature-tagger", "f1", 0.4),            # all-O tags: entity F1 0
    ("similarity", "bow-pair-scorer", "pearson", 0.4),  # a constant: no correlation
])
def test_baseline_beats_trivial(slices, tmp_path, capsys, task, family, metric, floor):
    out = tmp_path / "m"
    # the task is read from the file: no --task
    assert main(["train", "--model", family, "--dataset", str(slices[task]), "--out",
                 str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert f"held-out {metric}" in text
    meta, info = _meta(out), _info(out)
    assert meta["family"] == family and meta["task"] == task
    assert info["task"] == task and info["metric"] == metric
    assert info["test_metrics"][metric] > floor


def test_pair_baseline_beats_the_majority_class(slices, tmp_path):
    out = tmp_path / "m"
    assert main(["train", "--task", "nli", "--model", "bow-pair-classifier", "--dataset",
                 str(slices["pair"]), "--out", str(out), "--quiet"]) == 0
    meta, info = _meta(out), _info(out)
    assert meta["task"] == "pair" and meta["labels"] == ["contradiction", "entailment",
                                                         "neutral"]
    pair = get_task("pair")
    held = pair.read(out / info["heldout"]).examples
    gold = pair.gold(held)
    majority = max(gold.count(c) for c in set(gold)) / len(gold)
    assert info["test"]["n"] == len(held) == 80
    assert info["test_metrics"]["accuracy"] > majority + 0.1


def test_answer_selection_baseline_ranks_better_than_chance(slices, tmp_path):
    from robustlab.models.task_baselines import OverlapRanker

    out = tmp_path / "m"
    assert main(["train", "--model", "overlap-ranker", "--dataset",
                 str(slices["answer-selection"]), "--out", str(out), "--quiet"]) == 0
    info = _info(out)
    qa = get_task("answer-selection")
    held = [ex for ex in qa.read(out / info["heldout"]).examples if any(ex.labels)]
    model = OverlapRanker.load(out)
    ours = qa.metrics(held, predict(qa, model, held))["map"]
    rng = np.random.default_rng(0)
    chance = np.mean([qa.metrics(held, [rng.random(len(ex.candidates)) for ex in held])["map"]
                      for _ in range(20)])
    assert ours > chance + 0.1


# ---- minilm / HF checkpoints: the head each task needs ----------------------------------------

WORDS = ["the", "a", "of", "to", "in", "and", "is", "was", "for", ".", ",", "man", "woman",
         "dog", "cat", "is", "playing", "eats", "runs", "peter", "maria", "john", "anna",
         "smith", "paris", "berlin", "rome", "oslo", "visits", "likes", "sees", "new",
         "red", "blue", "car", "tree", "what", "who", "where", "how"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from _tiny_tokenizer import bert_tokenizer
    from transformers import BertConfig, BertModel

    d = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *dict.fromkeys(WORDS)]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt", model_max_length=128).save_pretrained(d)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=128,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d, safe_serialization=True)
    return d


@pytest.mark.parametrize("task, arch, n_labels, problem", [
    ("ner", "BertForTokenClassification", 9, None),
    ("similarity", "BertForSequenceClassification", 1, "regression"),
    ("pair", "BertForSequenceClassification", 3, None),
    ("answer-selection", "BertForSequenceClassification", 2, None),
])
def test_checkpoint_gets_the_tasks_head(slices, tiny, tmp_path, capsys, task, arch, n_labels,
                                        problem):
    out = tmp_path / "m"
    assert main(["train", "--task", task, "--model", str(tiny), "--dataset",
                 str(slices[task]), "--steps", "2", "--param", "batch_size=4",
                 "--device", "cpu", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "2/2 steps done" in err  # the training progress of today's train
    config = json.loads((out / "config.json").read_text())
    assert config["architectures"] == [arch] and len(config["id2label"]) == n_labels
    assert config.get("problem_type") == problem
    meta, info = _meta(out), _info(out)
    assert meta["task"] == task and info["steps"] == 2
    if task in ("ner", "pair"):
        assert meta["labels"] == list(config["id2label"].values())
    # the held-out split, in the task's own format, read back by the task
    t = get_task(task)
    held = t.read(out / info["heldout"]).examples
    assert len(held) == info["test"]["n"] > 0
    assert (out / "train_rows.txt").read_text().count("\n") > 0
    assert info["inputs"]["model"]["path"] == str(tiny)


def _toy_conll(path: Path, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    names, places = ["peter", "maria", "john", "anna"], ["paris", "berlin", "rome", "oslo"]
    lines = []
    for i in range(n):
        if i % 3 == 2:
            toks = [("the", "O"), (str(rng.choice(["red", "blue"])), "O"), ("car", "O"),
                    ("is", "O"), ("new", "O"), (".", "O")]
        else:
            toks = [(str(rng.choice(names)).title(), "B-PER"), ("Smith", "I-PER"),
                    (str(rng.choice(["visits", "likes", "sees"])), "O"),
                    (str(rng.choice(places)).title(), "B-LOC"), (".", "O")]
        lines += [f"{w} {t}" for w, t in toks] + [""]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_tagger_trained_by_the_command_learns(tiny, tmp_path):
    """A learnable toy: the fine-tuned token classifier beats all-O (entity F1 0) by far."""
    data = _toy_conll(tmp_path / "toy.txt", 90, 0)
    test = _toy_conll(tmp_path / "toy-test.txt", 15, 1)
    out = tmp_path / "m"
    assert main(["train", "--model", f"hf:{tiny}", "--dataset", str(data), "--test-dataset",
                 str(test), "--steps", "60", "--param", "lr=3e-3", "--param", "batch_size=8",
                 "--device", "cpu", "--quiet", "--out", str(out)]) == 0
    info = _info(out)
    assert info["task"] == "ner" and info["test"]["n"] == 15
    assert info["test_metrics"]["f1"] > 0.8
    from robustlab.models.hf_tasks import HFTagger

    again = HFTagger.load(out, device="cpu")
    ner = get_task("ner")
    examples = ner.read(test).examples
    assert ner.metrics(examples, predict(ner, again, examples))["f1"] == pytest.approx(
        info["test_metrics"]["f1"])
    # the folder is what eval takes (the contract with robustlab eval)
    runs = tmp_path / "runs"
    assert main(["eval", "--model", str(out), "--dataset", str(test), "--perturbations",
                 "char_swap", "--seeds", "0", "--device", "cpu", "--out", str(runs)]) == 0


def test_a_trained_baseline_folder_is_evaluated_on_its_heldout_split(slices, tmp_path, capsys):
    out, runs = tmp_path / "m", tmp_path / "runs"
    assert main(["train", "--model", "bow-pair-scorer", "--dataset", str(slices["similarity"]),
                 "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    held = out / _info(out)["heldout"]
    assert main(["eval", "--model", str(out), "--dataset", str(held), "--perturbations",
                 "char_swap", "--seeds", "0", "--out", str(runs)]) == 0
    assert "pearson" in capsys.readouterr().out.lower()


# ---- bad inputs: one line, exit 2, nothing written ---------------------------------------------


def _refused(capsys, argv: list[str], out: Path, *needles: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err
    assert not out.exists()


def test_bad_inputs_are_one_line_and_write_nothing(slices, tmp_path, capsys):
    out = tmp_path / "m"
    base = ["--out", str(out), "--quiet"]
    # wrong task for the data
    _refused(capsys, ["train", "--task", "ner", "--model", "feature-tagger", "--dataset",
                      str(slices["similarity"]), *base], out, "holds similarity data")
    # a baseline of another task, a single-text family, steps for a fitted baseline
    _refused(capsys, ["train", "--task", "similarity", "--model", "feature-tagger",
                      "--dataset", str(slices["similarity"]), *base], out, "ner baseline")
    _refused(capsys, ["train", "--task", "ner", "--model", "bow", "--dataset",
                      str(slices["ner"]), *base], out, "single-text classifier")
    _refused(capsys, ["train", "--model", "feature-tagger", "--steps", "5", "--dataset",
                      str(slices["ner"]), *base], out, "--steps")
    _refused(capsys, ["train", "--model", "feature-tagger", "--text-column", "1", "--dataset",
                      str(slices["ner"]), *base], out, "--text-column")
    # a CoNLL file with a missing tag column
    bad = tmp_path / "bad.conll"
    bad.write_text("EU B-ORG\nrejects O\nGerman\n\n", encoding="utf-8")
    _refused(capsys, ["train", "--task", "ner", "--model", "feature-tagger", "--dataset",
                      str(bad), *base], out, "line 3")
    # a pair file with one text
    one = tmp_path / "one.txt"
    one.write_text("entailment\tA man sleeps .\nneutral\tA dog runs .\n", encoding="utf-8")
    _refused(capsys, ["train", "--task", "pair", "--model", "bow-pair-classifier", "--dataset",
                      str(one), *base], out, "expected 3")
    # a score outside the declared range
    rows = slices["similarity"].read_text(encoding="utf-8").splitlines()[:30]
    f = rows[3].split("\t")
    f[4] = "7.5"
    rows[3] = "\t".join(f)
    sts = tmp_path / "sts-bad.csv"
    sts.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _refused(capsys, ["train", "--model", "bow-pair-scorer", "--dataset", str(sts), *base],
             out, "line 4")
    # a held-out entity type the training split never shows
    test = tmp_path / "test.conll"
    test.write_text("Paris B-LOC\n\nEU B-ORG\n\n", encoding="utf-8")
    train = tmp_path / "train.conll"
    train.write_text("Paris B-LOC\nis O\n\n", encoding="utf-8")
    _refused(capsys, ["train", "--model", "feature-tagger", "--dataset", str(train),
                      "--test-dataset", str(test), *base], out, "ORG")
