"""Models of the tasks: the CPU baselines (robustlab.models.task_baselines), the Hugging Face
token tagger and pair scorer (robustlab.models.hf_tasks) on a tiny random BERT built from a
config, and robustlab.tasks.predict's dispatch to each task's batch method."""

from __future__ import annotations

import numpy as np
import pytest

from robustlab.errors import InputError
from robustlab.models.task_baselines import (
    BowPairClassifier,
    BowPairScorer,
    FeatureTagger,
    OverlapRanker,
)
from robustlab.tasks import TaskError, get_task
from robustlab.tasks.align import iob2_error
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample
from robustlab.tasks.predict import predict

NAMES = ["Peter", "Maria", "John", "Anna"]
PLACES = ["Paris", "Berlin", "Rome", "Oslo"]
VERBS = ["visits", "likes", "leaves", "sees"]


def _sentences(n: int, seed: int = 0) -> list[TaggedExample]:
    """'<Name> Smith <verb> <Place> .' with PER/LOC tags, and 'the <verb> is new .' without."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        if i % 3 == 2:
            out.append(TaggedExample(("the", str(rng.choice(VERBS)), "is", "new", "."),
                                     ("O",) * 5))
            continue
        toks = (str(rng.choice(NAMES)), "Smith", str(rng.choice(VERBS)), str(rng.choice(PLACES)),
                ".")
        out.append(TaggedExample(toks, ("B-PER", "I-PER", "O", "B-LOC", "O")))
    return out


def _pairs(n: int, seed: int = 0) -> list[PairExample]:
    """Score 5 for a sentence and itself, 0 for two unrelated ones."""
    rng = np.random.default_rng(seed)
    words = ["cat", "dog", "runs", "sleeps", "red", "blue", "car", "tree", "eats", "sits"]
    out = []
    for i in range(n):
        a = " ".join(rng.choice(words[:5], 4))
        b = a if i % 2 == 0 else " ".join(rng.choice(words[5:], 4))
        out.append(PairExample(a, b, 5.0 if i % 2 == 0 else 0.0))
    return out


# ---- baselines -------------------------------------------------------------------------------------


def test_feature_tagger_learns_tags_and_saves(tmp_path):
    ner = get_task("ner")
    train, test = _sentences(60), _sentences(12, seed=1)
    m = FeatureTagger().fit([e.tokens for e in train], [e.tags for e in train])
    preds = predict(ner, m, test)
    assert all(iob2_error(p) is None for p in preds)
    assert ner.metrics(test, preds)["f1"] == 1.0
    m.save(tmp_path / "tagger")
    again = FeatureTagger.load(tmp_path / "tagger")
    assert predict(ner, again, test) == preds


def test_feature_tagger_output_is_valid_iob2_even_from_a_stray_i():
    m = FeatureTagger().fit([("a", "b")], [("I-PER", "O")])  # learns a stray I-
    assert m.predict_tags([("a", "b")]) == [("B-PER", "O")]


def test_bow_pair_scorer_and_classifier(tmp_path):
    sim = get_task("sts")
    train, test = _pairs(80), _pairs(20, seed=1)
    m = BowPairScorer().fit(sim.model_inputs(train), sim.gold(train))
    assert sim.metrics(test, predict(sim, m, test))["pearson"] > 0.9
    m.save(tmp_path / "s")
    assert np.allclose(BowPairScorer.load(tmp_path / "s").predict_scores(sim.model_inputs(test)),
                       m.predict_scores(sim.model_inputs(test)))
    pair = get_task("pair")
    labelled = [PairExample(e.first, e.second, "same" if e.label == 5.0 else "other")
                for e in train]
    c = BowPairClassifier().fit(pair.model_inputs(labelled), pair.gold(labelled))
    held = [PairExample(e.first, e.second, "same" if e.label == 5.0 else "other") for e in test]
    assert c.classes_ == ["other", "same"]
    assert pair.metrics(held, predict(pair, c, held))["accuracy"] == 1.0
    c.save(tmp_path / "c")
    assert np.allclose(BowPairClassifier.load(tmp_path / "c").predict_proba(
        pair.model_inputs(held)), c.predict_proba(pair.model_inputs(held)))


def test_overlap_ranker_prefers_sentences_sharing_the_question_s_words(tmp_path):
    qa = get_task("wikiqa")
    ex = [CandidatesExample(f"q{i}", f"where does the {w} live",
                            (f"the {w} lives in the forest .", "prices rose on monday .",
                             "it was raining ."), (1, 0, 0))
          for i, w in enumerate(["fox", "owl", "bear", "wolf", "deer", "hare"])]
    m = OverlapRanker().fit(qa.model_inputs(ex), qa.gold(ex))
    scores = predict(qa, m, ex)
    assert all(s[0] == max(s) for s in scores)
    assert qa.metrics(ex, scores)["mrr"] == 1.0
    m.save(tmp_path / "r")
    assert predict(qa, OverlapRanker.load(tmp_path / "r"), ex) == scores


def test_a_saved_baseline_of_another_family_is_refused(tmp_path):
    m = BowPairScorer().fit([("a b", "a b"), ("a", "c")], [5.0, 0.0])
    m.save(tmp_path / "s")
    with pytest.raises(InputError, match="not bow-pair-classifier"):
        BowPairClassifier.load(tmp_path / "s")


# ---- predict's dispatch ------------------------------------------------------------------------------


def test_predict_uses_a_pair_classifier_for_answer_selection():
    class PairModel:
        def predict_proba(self, pairs):
            return np.asarray([[0.2, 0.8] if "fox" in b else [0.9, 0.1] for _, b in pairs])

    qa = get_task("wikiqa")
    ex = [CandidatesExample("q", "who?", ("a fox", "a cat"), (1, 0))]
    assert predict(qa, PairModel(), ex) == [(0.8, 0.1)]


def test_predict_names_the_missing_method():
    with pytest.raises(TaskError, match=r"has no predict_tags\(\) method"):
        predict(get_task("ner"), object(), [TaggedExample(("a",), ("O",))])


# ---- Hugging Face models on a tiny random BERT -------------------------------------------------------

# "Berlin" and "Oslo" are two word pieces each: a word's tag is read at its first piece
WORDS = ["the", "is", "new", ".", "smith", *[w.lower() for w in NAMES + VERBS], "paris", "rome",
         "ber", "##lin", "os", "##lo", "cat", "dog", "runs", "sleeps", "red", "blue", "car", "tree", "eats", "sits"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from _tiny_tokenizer import bert_tokenizer
    from transformers import BertConfig, BertModel

    d = tmp_path_factory.mktemp("tiny-bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt").save_pretrained(d)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d, safe_serialization=True)
    return d


def test_hf_tagger_fits_predicts_saves_and_loads(tiny, tmp_path):
    from robustlab.models.hf_tasks import HFTagger

    ner = get_task("ner")
    train, test = _sentences(60), _sentences(9, seed=1)
    m = HFTagger(str(tiny), steps=60, lr=3e-3, batch_size=8, device="cpu", seed=0)
    m.fit([e.tokens for e in train], [e.tags for e in train])
    assert m.tags_ == ["O", "B-LOC", "B-PER", "I-PER"]
    preds = predict(ner, m, test)
    assert [len(p) for p in preds] == [len(e.tokens) for e in test]
    assert ner.metrics(test, preds)["f1"] > 0.8  # a learnable toy: the loop trains
    m.save(tmp_path / "tagger")
    again = HFTagger.load(tmp_path / "tagger", device="cpu")
    assert again.tags_ == m.tags_ and predict(ner, again, test) == preds


def test_hf_tagger_marks_words_cut_off_by_max_length(tiny):
    from robustlab.models.hf_tasks import HFTagger

    train = _sentences(6)
    m = HFTagger(str(tiny), steps=2, max_length=4, device="cpu")
    m.fit([e.tokens for e in train], [e.tags for e in train])
    out = m.predict_tags([("the", "cat", "is", "new", ".")])  # [CLS] + 2 words + [SEP]
    assert len(out[0]) == 5 and out[0][2:] == ("O", "O", "O")
    assert m.truncated_words_ == 3
    m.predict_tags([("Berlin", "Oslo", "is", "new")])  # [CLS] ber ##lin [SEP]: 3 words cut
    assert m.truncated_words_ == 3


def test_hf_pair_scorer_regresses_scores(tiny, tmp_path):
    from robustlab.models.hf_tasks import HFPairScorer

    sim = get_task("sts")
    train, test = _pairs(64), _pairs(16, seed=1)
    m = HFPairScorer(str(tiny), steps=80, lr=3e-3, batch_size=8, device="cpu")
    m.fit(sim.model_inputs(train), sim.gold(train))
    scores = predict(sim, m, test)
    assert sim.metrics(test, scores)["pearson"] > 0.8
    m.save(tmp_path / "scorer")
    again = HFPairScorer.load(tmp_path / "scorer", device="cpu")
    assert np.allclose(predict(sim, again, test), scores, atol=1e-5)


def test_a_checkpoint_without_a_trained_head_is_refused(tiny):
    from robustlab.models.hf_tasks import HFPairScorer, HFTagger

    with pytest.raises(InputError, match="head is not in the weights"):
        HFTagger.load(tiny, device="cpu")
    with pytest.raises(InputError, match="head is not in the weights"):
        HFPairScorer.load(tiny, device="cpu")


# ---- transformers pipelines as predictors -----------------------------------------------------------


def _with_head(tiny, tmp_path, cls_name, labels):
    import shutil

    import torch
    import transformers

    d = tmp_path / cls_name
    shutil.copytree(tiny, d)
    cfg = transformers.BertConfig.from_pretrained(d, num_labels=len(labels),
                                                  id2label=dict(enumerate(labels)),
                                                  label2id={x: i for i, x in enumerate(labels)})
    torch.manual_seed(1)
    getattr(transformers, cls_name)(cfg).save_pretrained(d, safe_serialization=True)
    return d


def test_a_token_classification_pipeline_tags_words_like_the_tagger(tiny, tmp_path):
    from transformers import pipeline

    from robustlab.models.hf_tasks import HFTagger

    d = _with_head(tiny, tmp_path, "BertForTokenClassification",
                   ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"])
    ner = get_task("ner")
    test = _sentences(9, seed=2)  # "Berlin", "Oslo": two pieces each
    pipe = pipeline("token-classification", model=str(d), aggregation_strategy="none",
                    device="cpu")
    via_pipe = predict(ner, pipe, test)
    via_tagger = predict(ner, HFTagger.load(d, device="cpu"), test)
    assert via_pipe == via_tagger  # offsets and word_ids agree on each word's first piece
    grouped = pipeline("token-classification", model=str(d), aggregation_strategy="simple",
                       device="cpu")
    with pytest.raises(TaskError, match="aggregation_strategy='none'"):
        predict(ner, grouped, test)


def test_a_text_classification_pipeline_gives_probability_rows_on_pairs(tiny, tmp_path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    d = _with_head(tiny, tmp_path, "BertForSequenceClassification",
                   ["contradiction", "entailment", "neutral"])
    pair = get_task("pair")
    ex = [PairExample("the cat sits", "the dog runs", "neutral"),
          PairExample("red car", "red car", "entailment")]
    pipe = pipeline("text-classification", model=str(d), device="cpu")
    got = predict(pair, pipe, ex)
    tok, model = AutoTokenizer.from_pretrained(d), AutoModelForSequenceClassification.from_pretrained(d)
    with torch.no_grad():
        logits = model(**tok(["the cat sits", "red car"], ["the dog runs", "red car"],
                             return_tensors="pt", padding=True)).logits
    names = ["contradiction", "entailment", "neutral"]
    assert got == [names[int(i)] for i in logits.argmax(-1)]


def test_pipeline_pieces_map_to_words_by_their_first_piece():
    from types import SimpleNamespace

    from robustlab.tasks.predict import PipelinePredictor

    def piece(entity, start, end):
        return {"entity": entity, "start": start, "end": end}

    class FakePipe:  # what transformers returns for "Peter Smith visits Berlin ."
        task = "token-classification"
        model = SimpleNamespace(config=SimpleNamespace(
            num_labels=3, id2label={0: "O", 1: "B-LOC", 2: "I-LOC"}))

        def __call__(self, texts, batch_size):
            assert texts == ["Peter Smith visits Berlin ."]
            # "ber" [19, 22) B-LOC, "##lin" [22, 25) I-LOC; O pieces left out (ignore_labels)
            return [[piece("B-PER", 0, 5), piece("I-PER", 6, 11), piece("B-LOC", 19, 22),
                     piece("I-LOC", 22, 25)]]

    p = PipelinePredictor(FakePipe())
    assert p.predict_tags([("Peter", "Smith", "visits", "Berlin", ".")]) == [
        ("B-PER", "I-PER", "O", "B-LOC", "O")]


def test_hf_task_predictions_equal_the_models_own_forward_pass(tiny):
    """Independent reference: tags and scores equal the model's own forward pass on each input
    alone (no batching, padding or length sorting), so the batched, read-back-once path of
    ``_forward`` cannot reorder rows or mix up positions. Random heads give varied outputs."""
    import torch

    from robustlab.models.hf_tasks import HFPairScorer, HFTagger

    train, test = _sentences(12), _sentences(17, seed=3)
    m = HFTagger(str(tiny), steps=3, batch_size=4, device="cpu", seed=1)
    m.fit([e.tokens for e in train], [e.tags for e in train])
    sents = [tuple(e.tokens[: 2 + i % 5]) for i, e in enumerate(test)]  # unequal lengths
    want = []
    with torch.inference_mode():
        for s in sents:
            enc = m.tokenizer_(list(s), is_split_into_words=True, return_tensors="pt")
            ids = m.model_(**enc).logits[0].argmax(-1).tolist()
            tags, seen = ["O"] * len(s), set()
            for pos, wid in enumerate(enc.word_ids(0)):
                if wid is not None and wid not in seen:
                    seen.add(wid)
                    tags[wid] = m.tags_[ids[pos]]
            want.append(tuple(tags))
    assert len(set(want)) > 3  # the reference varies: a constant predictor cannot pass
    assert m.predict_tags(sents) == want
    m.encode_block = 4  # several blocks, each next one tokenised in the producer thread
    assert m.predict_tags(sents) == want

    sim = get_task("sts")
    pairs = sim.model_inputs(_pairs(70, seed=2))  # more than one batch of 64
    s = HFPairScorer(str(tiny), steps=30, lr=3e-3, batch_size=8, device="cpu", seed=1)
    s.fit(pairs, sim.gold(_pairs(70, seed=2)))
    with torch.inference_mode():
        ref = [float(s.model_(**s.tokenizer_(a, b, return_tensors="pt")).logits[0, 0])
               for a, b in pairs]
    assert np.ptp(ref) > 1e-3  # a hundred times the tolerance below: row order shows
    assert np.allclose(s.predict_scores(pairs), ref, atol=1e-5)
    s.encode_block = 9  # blocks of 9 (the last one short), tokenised ahead in a thread
    assert np.allclose(s.predict_scores(pairs), ref, atol=1e-5)


def test_the_rust_tokenizer_copy_encodes_as_the_transformers_call(tiny):
    """The task models tokenise with a truncating copy of the checkpoint's Rust tokenizer (no
    per-field Python lists): ids, type ids and first pieces equal ``tokenizer(...,
    truncation=True, max_length=...)`` word for word, truncation included (pairs cut longest
    side first); a copy that disagrees with the call on its check sample is not used."""
    from robustlab.models.hf_tasks import HFPairScorer, HFTagger

    sents = [tuple(e.tokens) * (1 + i % 4) for i, e in enumerate(_sentences(20, seed=4))]
    m = HFTagger(str(tiny), steps=1, max_length=9, device="cpu")
    m.fit([e.tokens for e in _sentences(6)], [e.tags for e in _sentences(6)])
    rows, firsts = m._encode(sents)
    assert m._backend[2] is not None  # the copy passed its check and is what encoded
    ref = m.tokenizer_([list(s) for s in sents], is_split_into_words=True, truncation=True,
                       max_length=9)
    assert [r["input_ids"] for r in rows] == ref["input_ids"]
    assert [r["token_type_ids"] for r in rows] == ref["token_type_ids"]
    assert max(map(len, ref["input_ids"])) == 9  # some were cut
    for i, first in enumerate(firsts):
        w = ref.word_ids(i)
        assert first == [(p, x) for p, x in enumerate(w)
                         if x is not None and (p == 0 or w[p - 1] != x)]

    pairs = [(" ".join(e.first.split() * (1 + i % 3)), e.second)
             for i, e in enumerate(_pairs(20, seed=5))]
    s = HFPairScorer(str(tiny), steps=1, max_length=11, device="cpu")
    s.fit(pairs[:4], [1.0, 2.0, 3.0, 4.0])
    rows = s._encode(pairs)
    assert s._backend[2] is not None
    ref = s.tokenizer_([a for a, _ in pairs], [b for _, b in pairs], truncation=True,
                       max_length=11)
    assert [r["input_ids"] for r in rows] == ref["input_ids"]
    assert [r["token_type_ids"] for r in rows] == ref["token_type_ids"]
    assert max(map(len, ref["input_ids"])) == 11

    # a copy that does not reproduce the call is set aside: the call itself encodes
    odd = HFPairScorer(str(tiny), steps=1, max_length=11, device="cpu")
    odd.tokenizer_ = s.tokenizer_
    real = odd._wrapped
    odd._wrapped = lambda inputs, pre: real([(b, a) for a, b in inputs], pre)  # swapped
    assert [r["input_ids"] for r in odd._encode(pairs)] == real(
        [(b, a) for a, b in pairs], False)["input_ids"]
    assert odd._backend[2] is None

    # prediction tokenises in blocks ordered by length, the longest inputs in the last block:
    # the check still sees them, so a wrapper differing only where it truncates is caught on
    # the first predict call (the first block alone holds no truncated input)
    cut = HFPairScorer(str(tiny), steps=1, max_length=16, device="cpu")
    cut.tokenizer_, cut.model_, cut.device_ = s.tokenizer_, s.model_, s.device_
    cut._wrapped = lambda inputs, pre: s.tokenizer_(
        [a for a, _ in inputs], [b for _, b in inputs], truncation=True, max_length=15)
    cut.encode_block = 4
    full = s.tokenizer_([a for a, _ in pairs], [b for _, b in pairs])["input_ids"]
    assert sorted(map(len, full))[7] <= 15 < 16 < max(map(len, full))  # only long ones differ
    assert len(cut.predict_scores(pairs)) == len(pairs)
    assert cut._backend[2] is None
