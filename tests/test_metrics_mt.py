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


# ---- options and edges the mutation run found unchecked (bench/mutation.py) ---------------------

UPPER = [h.upper() for h in HYPS]


@pytest.mark.parametrize("kw", [{"lowercase": True}, {"tokenize": "char"}, {"tokenize": "none"},
                                {"lowercase": True, "tokenize": "intl"}])
def test_bleu_options_reach_both_levels_as_in_sacrebleu(kw: dict) -> None:
    refs = [REF_A, REF_B]
    scorer = MTScorer(refs, metrics=("bleu",), **kw)
    s = scorer.score("sys", UPPER)
    for i, h in enumerate(UPPER):
        ref = sacrebleu.metrics.BLEU(effective_order=True, **kw).sentence_score(
            h, [REF_A[i], REF_B[i]]).score
        assert s.segment["bleu"][i] == ref
    plain = sacrebleu.metrics.BLEU(**kw)
    assert s.corpus(scorer)["bleu"] == plain.corpus_score(UPPER, refs).score
    assert scorer.signatures()["bleu"] == plain.get_signature().format(short=True)
    assert scorer.signature_long()["bleu"] == plain.get_signature().format(short=False)


def test_lowercase_changes_scores_of_upper_case_output() -> None:
    cased = MTScorer([REF_A], metrics=("bleu",)).score("s", UPPER).segment["bleu"]
    lower = MTScorer([REF_A], metrics=("bleu",), lowercase=True).score("s", UPPER).segment["bleu"]
    assert (lower >= cased).all() and lower.sum() > cased.sum()


def test_each_metric_alone_and_its_long_signature() -> None:
    for metric, plain, cls in [("chrf", sacrebleu.corpus_chrf, sacrebleu.metrics.CHRF),
                               ("ter", sacrebleu.corpus_ter, sacrebleu.metrics.TER)]:
        scorer = MTScorer([REF_A], metrics=(metric,))
        assert scorer.metrics == (metric,) and scorer.n_segments == len(REF_A)
        s = scorer.score("sys", HYPS)
        assert list(s.segment) == [metric] and s.system == "sys"
        assert s.corpus(scorer) == {metric: plain(HYPS, [REF_A]).score}
        ref = cls()
        ref.corpus_score(HYPS, [REF_A])
        assert scorer.signature_long() == {metric: ref.get_signature().format(short=False)}
    assert MTScorer([REF_A]).metrics == ("bleu", "chrf")


def test_corpus_over_no_segments_is_nan_and_subsets_use_the_stats() -> None:
    scorer = MTScorer([REF_A], metrics=("bleu", "ter"))
    s = scorer.score("sys", HYPS)
    empty = s.corpus(scorer, [])
    assert np.isnan(empty["bleu"]) and np.isnan(empty["ter"])
    idx = np.array([4, 1])
    sub = [HYPS[i] for i in idx]
    assert s.corpus(scorer, idx) == {
        "bleu": sacrebleu.corpus_bleu(sub, [[REF_A[i] for i in idx]]).score,
        "ter": sacrebleu.corpus_ter(sub, [[REF_A[i] for i in idx]]).score}


def test_constructor_messages() -> None:
    with pytest.raises(ValueError, match=r"^unknown MT metric\(s\) \['meteor'\]; choose from "
                                         r"\('bleu', 'chrf', 'ter'\)$"):
        MTScorer([REF_A], metrics=("bleu", "meteor"))
    for refs in ([], [[]]):
        with pytest.raises(ValueError, match="^at least one non-empty reference stream is "
                                             "needed$"):
            MTScorer(refs)
    with pytest.raises(ValueError, match=r"^system 'short' has 5 segments, the references have "
                                         r"6$"):
        MTScorer([REF_A]).score_many({"ok": HYPS, "short": HYPS[:-1]})


def test_convenience_wrappers_equal_sacrebleu() -> None:
    from robustlab.metrics.mt import corpus_bleu

    assert corpus_bleu(UPPER, [REF_A, REF_B]) == sacrebleu.corpus_bleu(UPPER, [REF_A, REF_B]).score
    assert corpus_bleu(UPPER, [REF_A], lowercase=True) == sacrebleu.corpus_bleu(
        UPPER, [REF_A], lowercase=True).score
    assert corpus_bleu(UPPER, [REF_A], lowercase=True) > corpus_bleu(UPPER, [REF_A])
    two = plain_sentence_bleu(HYPS, [REF_A, REF_B])
    assert two.dtype == float and two.tolist() == [
        sacrebleu.sentence_bleu(h, [REF_A[i], REF_B[i]]).score for i, h in enumerate(HYPS)]
