"""TextAttack model wrappers as task predictors (issue 31): a ``HuggingFaceModelWrapper`` around
a tiny random-config BERT classifies SNLI-style pairs as TextAttack passes them (tuples), its
logits become probability rows named by the model's ``id2label``; answer selection reads a
two-class pair wrapper's class-1 probability; NER and similarity (no TextAttack wrapper) are
refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from robustlab.tasks import get_task
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample
from robustlab.tasks.perturb import TaskError
from robustlab.tasks.predict import predict

pytest.importorskip("textattack")
torch = pytest.importorskip("torch")

NLI = ["contradiction", "entailment", "neutral"]
PAIRS = [PairExample("a man plays a guitar on stage", "a man plays music", "entailment"),
         PairExample("a man plays a guitar on stage", "nobody is playing", "contradiction"),
         PairExample("two dogs run in the park", "the dogs are asleep", "contradiction"),
         PairExample("two dogs run in the park", "animals are outside", "entailment"),
         PairExample("a woman reads a book", "she is at home", "neutral"),
         PairExample("a woman reads a book", "a woman is reading", "entailment"),
         PairExample("children swim in a lake", "kids are in the water", "entailment"),
         PairExample("children swim in a lake", "the lake is cold", "neutral")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    from _tiny_tokenizer import bert_tokenizer

    d = tmp_path_factory.mktemp("ta-tiny")
    words = sorted({w for ex in PAIRS for w in f"{ex.first} {ex.second}".split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt", model_max_length=32).save_pretrained(d)
    return d


def _wrapper(tiny: Path, labels: list[str], cls=None):
    import transformers
    from textattack.models.wrappers import HuggingFaceModelWrapper

    cls = cls or HuggingFaceModelWrapper

    vocab = (tiny / "vocab.txt").read_text(encoding="utf-8").split()
    cfg = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=64,
                                  max_position_embeddings=64, num_labels=len(labels),
                                  id2label=dict(enumerate(labels)),
                                  label2id={c: i for i, c in enumerate(labels)})
    torch.manual_seed(3)
    model = transformers.BertForSequenceClassification(cfg).eval()
    tok = transformers.AutoTokenizer.from_pretrained(tiny)
    return cls(model, tok), model, tok


def _own_forward(model, tok, pairs) -> np.ndarray:
    """The model's own probabilities, one pair at a time (no padding)."""
    rows = []
    with torch.no_grad():
        for a, b in pairs:
            logits = model(**tok(a, b, return_tensors="pt")).logits
            rows.append(torch.softmax(logits, -1)[0].numpy())
    return np.asarray(rows)


def test_a_huggingface_wrapper_classifies_pairs_as_textattack_passes_them(tiny):
    # id2label in an order the data's sorted classes do not have: the rows must be named by it
    from textattack.models.wrappers import HuggingFaceModelWrapper

    seen = []

    class Spy(HuggingFaceModelWrapper):
        def __call__(self, inputs):  # what TextAttack's goal function passes for pairs
            seen.extend(inputs)
            return super().__call__(inputs)

    labels = ["neutral", "entailment", "contradiction"]
    wrapper, model, tok = _wrapper(tiny, labels, Spy)
    pair = get_task("pair")
    preds = predict(pair, wrapper, PAIRS)
    assert seen and all(isinstance(x, tuple) and len(x) == 2 for x in seen)
    probs = _own_forward(model, tok, pair.model_inputs(PAIRS))
    assert preds == [labels[i] for i in probs.argmax(1)]
    from robustlab.tasks.predict import TextAttackPredictor

    rows = np.asarray(TextAttackPredictor(wrapper, pair, batch_size=3).predict_proba(
        pair.model_inputs(PAIRS)))
    np.testing.assert_allclose(rows, probs, atol=1e-5)  # logits -> softmax, batches of 3


def test_a_wrapper_runs_a_pair_eval_from_python(tiny, tmp_path):
    from robustlab.studies.eval.tasks import evaluate_task

    wrapper, model, tok = _wrapper(tiny, NLI)
    summary = evaluate_task(wrapper, tmp_path / "ta", task="pair", examples=PAIRS,
                            perturbations=["char_swap", "negation"], seeds=[0],
                            progress=False, plots=False)
    probs = _own_forward(model, tok, get_task("pair").model_inputs(PAIRS))
    gold = [ex.label for ex in PAIRS]
    assert summary["clean_metric"] == pytest.approx(
        np.mean([NLI[i] == g for i, g in zip(probs.argmax(1), gold, strict=True)]))
    assert {r["label"] for r in summary["perturbations"]} == {"char_swap", "negation"}


def test_answer_selection_reads_a_pair_wrappers_class_1(tiny):
    wrapper, model, tok = _wrapper(tiny, ["0", "1"])
    ex = CandidatesExample("q1", "who plays a guitar", ("a man plays a guitar on stage",
                                                        "two dogs run in the park"), (1, 0))
    scores = predict(get_task("answer-selection"), wrapper, [ex])
    probs = _own_forward(model, tok, [(ex.question, c) for c in ex.candidates])
    np.testing.assert_allclose(scores[0], probs[:, 1], atol=1e-5)


@pytest.mark.parametrize("task,example", [
    ("ner", TaggedExample(("John", "plays"), ("B-PER", "O"))),
    ("similarity", PairExample("a man plays", "a man plays music", 4.0))])
def test_tasks_without_a_textattack_wrapper_are_refused_in_one_line(tiny, task, example):
    wrapper, _, _ = _wrapper(tiny, NLI)
    with pytest.raises(TaskError) as err:
        predict(get_task(task), wrapper, [example])
    msg = str(err.value)
    assert "TextAttack has no wrapper" in msg and "\n" not in msg
