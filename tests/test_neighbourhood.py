"""Neighbourhood sources: masked-LM thresholds (κ, δ), blacklist, caching, truncation; lexical."""

from __future__ import annotations

import json

import pytest
import torch
from _so_toys import tiny_mlm

from robustlab.errors import InputError
from robustlab.studies.second_order.neighbourhood import (
    LanguageModelCheck,
    MaskedLMSource,
    TableSource,
    WordNetSource,
    make_source,
    match_case,
    word_spans,
)
from robustlab.studies.second_order.patch_words import PatchSelector


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_mlm(tmp_path_factory.mktemp("tinymlm"))


def expected(model, tok, masked: str, kappa: int, delta: float, exclude: set[str]) -> list[str]:
    """Algorithm 1 by hand: full-vocabulary logits, l_min = max(L(κ), L(0) − δ), whole words."""
    enc = tok(masked, return_tensors="pt")
    pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0])
    with torch.no_grad():
        logits = model(**enc).logits[0, pos]
    srt = logits.sort(descending=True).values
    lmin = max(float(srt[kappa]), float(srt[0]) - delta)
    vocab = tok.convert_ids_to_tokens(list(range(len(logits))))
    keep = [(float(logits[i]), vocab[i]) for i in range(len(vocab))
            if float(logits[i]) > lmin and vocab[i].isalpha() and vocab[i] not in exclude
            and vocab[i] not in tok.all_special_tokens]
    return [w for _, w in sorted(keep, reverse=True)]


@pytest.mark.parametrize(("kappa", "delta"), [(20, 3.0), (3, 100.0), (20, 0.5), (1, 3.0)])
def test_mlm_threshold_matches_algorithm_1(tiny, kappa, delta):
    model, tok = tiny
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok, kappa=kappa, delta=delta)
    text = "the acting is good and the plot is thin ."
    words = text.split()[:-1]
    got = src.candidates(text, words, range(len(words)))
    for i, w in enumerate(words):
        masked = " ".join(words[:i] + ["[MASK]"] + words[i + 1:]) + " ."
        want = [c for c in expected(model, tok, masked, kappa, delta, set()) if c != w]
        assert got.get(i, []) == want, (i, w)
        assert len(got.get(i, [])) <= kappa


def test_mlm_blacklist_exclude_and_no_self(tiny):
    model, tok = tiny
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok, kappa=30, delta=100.0,
                         blacklist=["he", "she", "Good"])
    text = "he was a good man"
    words = text.split()
    got = src.candidates(text, words, range(len(words)), exclude={"movie"})
    allc = {c.lower() for cs in got.values() for c in cs}
    assert allc, "a permissive threshold must leave candidates"
    assert not allc & {"he", "she", "good", "movie"}
    for i, cs in got.items():
        assert words[i] not in cs


def test_mlm_batches_and_never_sends_a_sentence_twice(tiny):
    model, tok = tiny
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok, batch_size=4)
    items = [("the film is good", "the film is good".split(), [0, 1, 2, 3]),
             ("the film is bad", "the film is bad".split(), [0, 1, 2, 3]),
             ("the film is good", "the film is good".split(), [1, 3])]
    first = src.candidates_many(items)
    # 8 masked sentences, but "the film is [MASK]" is shared by both: 7 distinct, and the
    # repeated sentence costs nothing
    assert src.lm_calls == 7
    again = src.candidates_many(items)
    assert src.lm_calls == 7 and again == first
    assert first[2] == {i: first[0][i] for i in (1, 3) if i in first[0]}


def test_mlm_truncates_overlong_sentences(tiny):
    model, tok = tiny
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok, max_length=8, kappa=30,
                         delta=100.0)
    words = ("the film is good and the plot is thin and the acting is dull " * 3).split()
    text = " ".join(words)
    got = src.candidates(text, words, range(len(words)))
    assert got and max(got) < 6  # [CLS] + 6 words + [SEP]: later masks were truncated away
    assert all(i not in got for i in range(6, len(words)))


def test_mlm_unloadable_model_is_a_clear_input_error(tmp_path):
    src = MaskedLMSource(str(tmp_path / "nope"))
    with pytest.raises(InputError, match="cannot load masked LM"):
        src.candidates("a film", ["a", "film"], [0])


def test_word_spans_and_case():
    assert word_spans("A film, a movie.", ["A", "film", "a", "movie"]) == [(0, 1), (2, 6),
                                                                          (8, 9), (10, 15)]
    assert word_spans("the cat ate a film", ["the", "cat", "ate", "a", "film"])[3] == (12, 13)
    assert match_case("Good", "great") == "Great"
    assert match_case("GOOD", "great") == "GREAT"
    assert match_case("good", "great") == "great"


def test_wordnet_source_behaviour():
    src = WordNetSource(blacklist=["picture"])
    got = src.candidates("The film is good", ["The", "film", "is", "good"], range(4))
    assert 0 not in got and 2 not in got  # stopwords get no WordNet swaps
    assert "movie" in got[1] and "picture" not in got[1]
    assert all(c.isalpha() for cs in got.values() for c in cs)
    assert src.name == "wordnet"


def test_table_source_and_bad_tables(tmp_path):
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"film": ["movie", "flick", "film", "cine-ma"]}))
    src = TableSource(f, blacklist=["flick"])
    assert src.candidates("Film !", ["Film"], [0]) == {0: ["Movie"]}
    assert src.name == "table:t.json"
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    with pytest.raises(InputError, match="JSON object"):
        TableSource(bad)
    with pytest.raises(InputError, match="does not exist"):
        TableSource(tmp_path / "missing.json")
    with pytest.raises(InputError, match="unknown neighbourhood source"):
        make_source("bogus")


def test_neighbours_are_one_substitution_away():
    src = TableSource({"good": ["great", "fine"], "film": ["movie"]})
    words = "a good film".split()
    ns = src.neighbours(words, positions=[0, 1])  # position 2 frozen (the patch word)
    assert sorted(" ".join(n) for n in ns) == ["a fine film", "a great film"]
    for n in ns:
        assert sum(a != b for a, b in zip(n, words, strict=True)) == 1


def test_real_fill_mask_minilm(minilm_mlm):
    src = MaskedLMSource(str(minilm_mlm))
    text = "the acting is good and the plot is thin ."
    words = text.split()[:-1]
    got = src.candidates(text, words, [3])
    assert src.name == "mlm:minilm-mlm"
    assert {"great", "bad"} & set(got[3])
    assert 0 < len(got[3]) <= 20


# ---- the authors' language-model check (pseudo-log-likelihood) ------------------------------


def pll_by_hand(model, tok, text: str) -> float:
    """Their get_text_score: mean over words of log softmax(logits at the masked word)[word id],
    one full forward per word, unbatched; punctuation not scored; words that are not one
    token score [UNK]."""
    words = text.split()
    logs = []
    for i, w in enumerate(words):
        if not any(c.isalnum() for c in w):
            continue
        masked = " ".join(words[:i] + [tok.mask_token] + words[i + 1:])
        enc = tok(masked, return_tensors="pt")
        pos = int((enc["input_ids"][0] == tok.mask_token_id).nonzero()[0])
        with torch.no_grad():
            logp = torch.log_softmax(model(**enc).logits[0, pos], dim=0)
        pieces = tok.tokenize(w)  # the word as the tokenizer normalises it, when one token
        tid = tok.convert_tokens_to_ids(pieces[0]) if len(pieces) == 1 else tok.unk_token_id
        logs.append(float(logp[tid]))
    return sum(logs) / len(logs)


def test_pll_batched_equals_one_sentence_at_a_time(tiny):
    model, tok = tiny
    texts = ["the acting is good and the plot is thin .", "he was a good man",
             "Good zzqx film !", "the plot"]
    # batch_size 3: masked sentences of different sentences share batches and are split
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok, batch_size=3)
    got = src.pseudo_log_likelihood(texts)
    assert got == pytest.approx([pll_by_hand(model, tok, t) for t in texts], abs=1e-5)
    calls = src.lm_calls
    assert calls == sum(1 for t in texts for w in t.split() if any(c.isalnum() for c in w))
    assert src.pseudo_log_likelihood(texts[:1]) == got[:1] and src.lm_calls == calls  # cached
    assert src.pseudo_log_likelihood(["! ."]) == [0.0]  # no word: nothing scored


def test_lm_check_on_a_random_bert_is_the_rule(tiny):
    model, tok = tiny
    src = MaskedLMSource("tiny", model_obj=model, tokenizer=tok)
    check = LanguageModelCheck(src)
    a, b = "he was a good man", "he was a thin man"
    pa, pb = src.pseudo_log_likelihood([a, b])
    assert check.passes_many([(a, b)]) == [pb >= pa - 1.5]
    assert check.passes_many([(b, a)]) == [pa >= pb - 1.5]


class RejectWord:
    """A language-model check that rejects every swap producing one of ``words``."""

    def __init__(self, *words):
        self.words, self.calls = set(words), []

    def passes_many(self, swaps):
        self.calls.append(len(swaps))
        return [not self.words & set(new.split()) for _, new in swaps]


def test_patch_choice_takes_the_best_pair_that_passes_the_check():
    import numpy as np

    def predict(words):  # single-word outputs: "de" moves the model most, then "towards"
        score = {"to": 0.5, "de": 0.0, "towards": 0.2, "unto": 0.45}
        return np.array([[1 - score.get(w, 0.5), score.get(w, 0.5)] for w in words])

    words = "go to the film".split()
    pairs = {"to": ["de", "towards", "unto"]}
    assert PatchSelector(pairs).choose(words, predict).as_list() == ["to", "de"]
    sel = PatchSelector(pairs, lm_check=RejectWord("de"))
    assert sel.choose(words, predict).as_list() == ["to", "towards"]
    assert sel.last_lm_rejected == 1
    check = RejectWord("de", "towards")
    sel = PatchSelector(pairs, lm_check=check)
    assert sel.choose(words, predict).as_list() == ["to", "unto"]
    assert sel.last_lm_rejected == 2 and check.calls == [1, 2]  # 1 checked, then 2 more
    sel = PatchSelector({"to": ["de"]}, lm_check=RejectWord("de"))
    assert sel.choose(words, predict) is None and sel.last_lm_rejected == 1


def test_so_beam_recipe_takes_its_patch_through_the_check():
    from _so_toys import make_wrapper, planted_proba

    from robustlab.studies.second_order import so_beam

    def run(check):
        atk = so_beam.build(make_wrapper(planted_proba), source=TableSource({"good": ["great"]}),
                            pairs={"film": ["movie"]}, lm_check=check)
        return atk.attack("the plot is good film .", 1)

    assert type(run(RejectWord("cinema"))).__name__ == "SuccessfulAttackResult"
    res = run(RejectWord("movie"))  # the only pair fails the check: no patch, skipped
    assert type(res).__name__ == "SkippedAttackResult"
    assert "fail the language-model check" in \
        res.original_result.attacked_text.attack_attrs["skip_reason"]


def test_real_minilm_check_rejects_foreign_patch_words(minilm_mlm):
    check = LanguageModelCheck(MaskedLMSource(str(minilm_mlm), device="cpu"))
    swaps = [("the film is a delight .", "the film is una delight ."),
             ("i want to go to the movies .", "i want to go de the movies ."),
             ("he liked the film .", "she liked the film .")]
    assert check.passes_many(swaps) == [False, False, True]
