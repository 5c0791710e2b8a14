"""MT scoring goes through sacreBLEU and equals its plain API exactly; official WMT22 parity."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from wmt_official import official

from robustlab.data.mt import load_wmt22
from robustlab.metrics.mt import MTScorer, plain_sentence_bleu

HYPS = ["The cat sat on the mat.", "a dog barks", "", "Hello world !", "It is raining today",
        "Completely unrelated words here"]
REF_A = ["The cat is on the mat.", "A dog barks loudly.", "Nothing.", "Hello, world!",
         "Today it is raining.", "Something else entirely"]
REF_B = ["There is a cat on the mat.", "the dog is barking", "Empty.", "Hello world!",
         "It rains today.", "Completely different words here"]


@pytest.mark.parametrize("refs", [[REF_A], [REF_A, REF_B]])
def test_segment_scores_equal_the_plain_sacrebleu_loop(refs: list[list[str]]) -> None:
    s = MTScorer(refs, metrics=("bleu", "chrf", "ter")).score("sys", HYPS)
    for i, h in enumerate(HYPS):
        r = [ref[i] for ref in refs]
        assert s.segment["bleu"][i] == sacrebleu.sentence_bleu(h, r).score
        assert s.segment["chrf"][i] == sacrebleu.sentence_chrf(h, r).score
        assert s.segment["ter"][i] == sacrebleu.sentence_ter(h, r).score


def test_corpus_scores_equal_sacrebleu_corpus_functions() -> None:
    refs = [REF_A, REF_B]
    scorer = MTScorer(refs, metrics=("bleu", "chrf", "ter"))
    s = scorer.score("sys", HYPS)
    corp = s.corpus(scorer)
    assert corp["bleu"] == sacrebleu.corpus_bleu(HYPS, refs).score
    assert corp["chrf"] == sacrebleu.corpus_chrf(HYPS, refs).score
    assert corp["ter"] == sacrebleu.corpus_ter(HYPS, refs).score
    idx = [0, 3, 5]  # a "domain": corpus score over a subset, from the stored statistics
    sub = [HYPS[i] for i in idx]
    assert s.corpus(scorer, idx)["bleu"] == sacrebleu.corpus_bleu(
        sub, [[r[i] for i in idx] for r in refs]).score


def test_signature_is_sacrebleus_own() -> None:
    scorer = MTScorer([REF_A, REF_B], metrics=("bleu", "chrf"))
    sig = scorer.signatures()
    plain = sacrebleu.BLEU()
    plain.corpus_score(HYPS, [REF_A, REF_B])  # the signature of sacreBLEU's own corpus call
    assert sig["bleu"] == plain.get_signature().format(short=True)
    assert "tok:13a" in sig["bleu"] and "#:2" in sig["bleu"]
    assert "nrefs:2" in scorer.signature_long()["bleu"]
    assert sig["bleu"].endswith(f"v:{sacrebleu.__version__}")


def test_shared_hypotheses_are_scored_once_and_identically() -> None:
    scorer = MTScorer([REF_A], metrics=("bleu", "chrf"))
    other = list(HYPS)
    other[1] = "a cat barks"
    many = scorer.score_many({"x": HYPS, "y": other, "z": HYPS})
    alone = scorer.score("y", other)
    np.testing.assert_array_equal(many["y"].segment["bleu"], alone.segment["bleu"])
    np.testing.assert_array_equal(many["x"].segment["chrf"], many["z"].segment["chrf"])
    assert many["y"].segment["bleu"][1] != many["x"].segment["bleu"][1]


def test_wrong_length_and_unknown_metric_rejected() -> None:
    with pytest.raises(ValueError, match="segments"):
        MTScorer([REF_A]).score("short", HYPS[:-1])
    with pytest.raises(ValueError, match="unknown MT metric"):
        MTScorer([REF_A], metrics=("meteor",))


# ---- parity with the official WMT22 figures (../shared/data) ------------------------------------


@pytest.mark.parametrize("pair,system,refs,metric,printed", [
    ("ru-en", "Online-G", ("A",), "bleu-A", 46.6679),
    ("en-de", "Online-B", ("A",), "bleu-A", 38.3685),
    ("en-de", "Online-B", ("A", "B"), "bleu-all", 52.3153),
])
def test_corpus_bleu_equals_official_wmt22(shared_data: Path, pair: str, system: str,
                                           refs: tuple[str, ...], metric: str,
                                           printed: float) -> None:
    data = load_wmt22(shared_data / "wmt22_general", pair, refs=refs, systems=[system])
    scorer = MTScorer(data.refs, metrics=("bleu", "chrf"))
    s = scorer.score(system, data.systems[system])
    bleu = s.corpus(scorer)["bleu"]
    assert round(bleu, 4) == printed
    assert round(bleu, 4) == round(official(shared_data, pair, system, metric), 4)
    chrf_metric = metric.replace("bleu", "chrf")
    assert round(s.corpus(scorer)["chrf"], 4) == round(
        official(shared_data, pair, system, chrf_metric), 4)


def test_wmt22_sentence_bleu_equals_plain_loop(shared_data: Path) -> None:
    data = load_wmt22(shared_data / "wmt22_general", "en-de", refs=("A", "B"),
                      systems=["Online-B", "PROMT"])
    n = 250
    refs = [r[:n] for r in data.refs]
    scorer = MTScorer(refs, metrics=("bleu", "chrf"))
    many = scorer.score_many({k: v[:n] for k, v in data.systems.items()})
    for name, hyps in data.systems.items():
        np.testing.assert_array_equal(many[name].segment["bleu"],
                                      plain_sentence_bleu(hyps[:n], refs))
        plain_chrf = [sacrebleu.sentence_chrf(h, [r[i] for r in refs]).score
                      for i, h in enumerate(hyps[:n])]
        np.testing.assert_array_equal(many[name].segment["chrf"], plain_chrf)
