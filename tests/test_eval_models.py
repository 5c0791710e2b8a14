"""What ``robustlab eval`` accepts as a model, and what every model-testing command refuses.

* from Python: an object with a batch ``predict_proba``, a TextAttack ``ModelWrapper`` and a
  ``transformers`` text-classification pipeline, each giving the same numbers as the model
  itself;
* a Hugging Face checkpoint with a trained head is evaluated; one whose head transformers
  initialises at random is refused (exit 2, nothing written);
* ``attack``, ``bias`` and ``eval`` refuse an untrained family and a path that does not exist
  (one line, exit 2, nothing created); ``learnability``/``robustness`` given a saved model say
  on stderr that it is retrained per cell.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _tiny_tokenizer import bert_tokenizer

from robustlab.cli import main

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "great", "bad", "awful", "the",
         "film", "was", "very", "plot"]
EXAMPLES = [("the film was good", 1), ("the plot was awful", 0), ("very good film", 1),
            ("bad plot", 0), ("the film was great", 1), ("very bad", 0), ("great plot", 1),
            ("awful film", 0)]


def _tiny(d: Path, *, head: bool) -> Path:
    """A randomly initialised 2-layer BERT saved with save_pretrained: with a
    sequence-classification head (its weights saved) or without one."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertModel

    d.mkdir(parents=True, exist_ok=True)
    (d / "vocab.txt").write_text("\n".join(WORDS) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt").save_pretrained(d)
    cfg = BertConfig(vocab_size=len(WORDS), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    torch.manual_seed(0)
    (BertForSequenceClassification if head else BertModel)(cfg).save_pretrained(
        d, safe_serialization=True)
    return d


@pytest.fixture(scope="module")
def with_head(tmp_path_factory) -> Path:
    return _tiny(tmp_path_factory.mktemp("ckpt") / "with-head", head=True)


@pytest.fixture(scope="module")
def trained_head(tmp_path_factory) -> Path:
    """The tiny BERT with its head trained a few steps on EXAMPLES (seeded): its predictions
    vary with the text, so a model whose classes are mixed up cannot score like it."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    d = _tiny(tmp_path_factory.mktemp("ckpt") / "trained", head=True)
    tok = AutoTokenizer.from_pretrained(d)
    model = AutoModelForSequenceClassification.from_pretrained(d)
    batch = tok([t for t, _ in EXAMPLES], return_tensors="pt", padding=True)
    labels = torch.tensor([y for _, y in EXAMPLES])
    torch.manual_seed(0)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(30):
        opt.zero_grad()
        model(**batch, labels=labels).loss.backward()
        opt.step()
    model.eval().save_pretrained(d, safe_serialization=True)
    return d


#: EXAMPLES plus texts whose labels the model above gets wrong: accuracy well below 1
HELD_OUT = [*EXAMPLES, ("the film was awful", 1), ("very good plot", 0), ("bad film", 1),
            ("great film", 0), ("the plot was very good", 1), ("awful", 0)]


def _data(tmp_path: Path) -> Path:
    p = tmp_path / "data.tsv"
    p.write_text("".join(f"{y}\t{t}\n" for t, y in EXAMPLES), encoding="utf-8")
    return p


def _reference(ckpt: Path, texts: list[str]) -> np.ndarray:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(ckpt)
    model = AutoModelForSequenceClassification.from_pretrained(ckpt).eval()
    with torch.no_grad():
        logits = model(**tok(texts, return_tensors="pt", padding=True)).logits
    return torch.softmax(logits.double(), -1).numpy()


def test_a_checkpoint_with_a_trained_head_is_evaluated_as_it_is(with_head, tmp_path, capsys):
    rc = main(["eval", "--model", str(with_head), "--dataset", str(_data(tmp_path)),
               "--perturbations", "leet_letters", "--seeds", "0", "--out",
               str(tmp_path / "run"), "--quiet"])
    assert rc == 0, capsys.readouterr().err
    s = json.loads((tmp_path / "run" / "summary.json").read_text())
    ref = _reference(with_head, [t for t, _ in EXAMPLES]).argmax(1)
    assert s["clean_accuracy"] == pytest.approx(np.mean(ref == [y for _, y in EXAMPLES]))


def test_a_checkpoint_without_a_trained_head_is_refused(tmp_path, capsys):
    ckpt = _tiny(tmp_path / "no-head", head=False)
    rc = main(["eval", "--model", str(ckpt), "--dataset", str(_data(tmp_path)),
               "--perturbations", "leet_letters", "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 2
    assert "no trained classification head" in err and "classifier" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_python_objects_give_the_models_own_numbers(with_head, tmp_path):
    """predict_proba object, TextAttack HuggingFaceModelWrapper (logits) and a transformers
    pipeline: the same predictions as the checkpoint itself."""
    import textattack  # noqa: F401  (the wrappers module must be importable)
    from textattack.models.wrappers import HuggingFaceModelWrapper
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        pipeline,
    )

    from robustlab.studies.eval.study import evaluate

    texts = [t for t, _ in EXAMPLES]
    ref = _reference(with_head, texts)
    tok = AutoTokenizer.from_pretrained(with_head)
    hf = AutoModelForSequenceClassification.from_pretrained(with_head).eval()

    class Proba:
        def predict_proba(self, batch):
            idx = [texts.index(t) if t in texts else None for t in batch]
            if None in idx:  # perturbed texts: ask the model
                return _reference(with_head, list(batch))
            return ref[idx]

    objects = {"proba": Proba(), "textattack": HuggingFaceModelWrapper(hf, tok),
               "pipeline": pipeline("text-classification", model=hf, tokenizer=tok)}
    results = {}
    for name, obj in objects.items():
        s = evaluate(obj, tmp_path / name, examples=EXAMPLES, perturbations=["leet_letters"],
                     seeds=[0], name=name, progress=False, plots=False)
        assert s["complete"] and s["config"]["model"] == f"object:{name}"
        results[name] = (s["clean_accuracy"], s["perturbations"][0]["a1"]["mean"])
    assert results["proba"][0] == pytest.approx(np.mean(ref.argmax(1) ==
                                                        [y for _, y in EXAMPLES]))
    assert len(set(results.values())) == 1, results


def test_an_object_that_is_not_a_model_is_refused(tmp_path):
    from robustlab.errors import InputError
    from robustlab.studies.eval.study import evaluate

    with pytest.raises(InputError, match="predict_proba"):
        evaluate(object(), tmp_path / "run", examples=EXAMPLES, perturbations=["leet_letters"],
                 progress=False)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", ["eval", "attack", "bias"])
@pytest.mark.parametrize("model", ["bow", "minilm", "models/nothere", "./nothere", "~/nothere-x",
                                   "textattack/nothere-sst2"])
def test_untrained_families_and_missing_paths_are_refused(command, model, tmp_path, capsys,
                                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = _data(tmp_path)
    extra = {"attack": ["--recipe", "so-beam"], "bias": [], "eval": []}[command]
    rc = main([command, *extra, "--model", model, "--dataset", str(data), "--out", "run"])
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert len(err.splitlines()) == 1 and err.startswith(f"robustlab {command}: error:")
    assert ("untrained" in err) if model in ("bow", "minilm") else ("no such model" in err)
    assert not (tmp_path / "run").exists()


def test_robustness_with_a_saved_model_says_it_is_retrained(tmp_path, capsys):
    from robustlab.models.registry import make_model

    m = make_model("bow", steps=5)
    m.fit([t for t, _ in EXAMPLES], [y for _, y in EXAMPLES])
    m.save(tmp_path / "saved")
    from robustlab.studies.learnability.study import warn_retrained

    assert warn_retrained([str(tmp_path / "saved"), "bow"]) == [str(tmp_path / "saved")]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "robustlab eval" in err[0] and "trains a new model" in err[0]


def test_each_python_model_kind_predicts_each_example_as_the_checkpoint_does(trained_head,
                                                                             tmp_path):
    """predict_proba object, TextAttack wrapper and transformers pipeline against the
    checkpoint's own forward pass (an independent reference), example by example, with A0 from
    sklearn's ``accuracy_score``; the checkpoint's predictions vary and its accuracy is below 1,
    so a predictor with the classes swapped, or a constant one, cannot pass."""
    from sklearn.metrics import accuracy_score
    from textattack.models.wrappers import HuggingFaceModelWrapper
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from robustlab.runs.store import RunStore
    from robustlab.studies.eval.study import evaluate

    texts, labels = [t for t, _ in HELD_OUT], [y for _, y in HELD_OUT]
    ref = _reference(trained_head, texts)
    pred = ref.argmax(1)
    acc = accuracy_score(labels, pred)
    assert 0 < pred.mean() < 1 and 0.4 < acc < 0.9, (pred, acc)
    tok = AutoTokenizer.from_pretrained(trained_head)
    hf = AutoModelForSequenceClassification.from_pretrained(trained_head).eval()

    class Proba:
        def predict_proba(self, batch):
            return _reference(trained_head, list(batch))

    objects = {"proba": Proba(), "textattack": HuggingFaceModelWrapper(hf, tok),
               "pipeline": pipeline("text-classification", model=hf, tokenizer=tok)}
    for name, obj in objects.items():
        s = evaluate(obj, tmp_path / name, examples=HELD_OUT, perturbations=["leet_letters"],
                     seeds=[0], name=name, progress=False, plots=False)
        assert s["clean_accuracy"] == pytest.approx(acc, abs=1e-9), name
        with RunStore(tmp_path / name, readonly=True) as store:
            (cell,) = store.cells("done")
            preds, recs = store.predictions(cell.key), store.records(cell.key)
        assert [p["pred_before"] for p in preds] == pred.tolist(), name
        np.testing.assert_allclose([r["proba_before"] for r in recs], ref, atol=1e-4,
                                   err_msg=name)
