"""Paper 001's word rules on text as users write it (issue 33): joined clitics edited like
PTB-split ones and written back in the input's style, tokens no word-level rule may split,
questions after wh-phrases and quoted titles."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustlab.perturbations import make
from robustlab.perturbations.grammar import tokens
from robustlab.perturbations.text_utils import quoted_titles, word_spans
from robustlab.resources import ResourceMissing, wordnet

VERB_RULES = ("negation", "verb_tense", "singular_plural_verb")
WORD_RULES = ("word_delete", "word_repeat", "word_order", "word_synonym", *VERB_RULES)


def ptb(text: str) -> str:
    """``text`` with its clitics split as Penn-Treebank tokenisation writes them."""
    text = re.sub(r"\b(ca|wo|sha)n't\b", r"\1 n't", text, flags=re.IGNORECASE)
    text = re.sub(r"(?<=\w)n't\b", " n't", text)
    return re.sub(r"(?<=\w)'(s|re|m|d|ll|ve)\b", r" '\1", text, flags=re.IGNORECASE)


JOINED = [
    "it's a mess .",
    "they're late again , but the film's ending doesn't care .",
    "i'm sure we'll see it , and you've got to admit it's clever .",
    "he'd seen it before ; she's been there and isn't impressed .",
    "there's a certain style , but it can't hold the movie together .",
    "the director's cut won't help , and that's a shame .",
    "the director's cut isn't long , and that's a shame .",
    "what's the point ? nobody's watching .",
    "i don't think it's funny , but they're laughing .",
    "he's a writer who doesn't write and it wasn't his fault .",
    "we've all seen worse , and i'd see it again .",
]


#: the sentences above whose verbs all share one tense and no modal: verb_tense shifts them
TENSE_SHIFTED = {JOINED[0], JOINED[1], JOINED[6], JOINED[7]}


@pytest.mark.parametrize("rule", VERB_RULES)
@pytest.mark.parametrize("text", JOINED)
def test_joined_and_split_clitics_get_the_same_edit_in_their_own_style(rule: str, text: str) -> None:
    p = make(rule)
    split = ptb(text)
    assert split != text
    for seed in range(6):
        joined_out = p.apply(text, random.Random(seed))
        split_out = p.apply(split, random.Random(seed))
        # verb_tense (v4) leaves a sentence with a modal or verbs of two tenses alone: then
        # both are left alone
        if rule != "verb_tense" or text in TENSE_SHIFTED:
            assert joined_out != text and split_out != split, (rule, seed)
        assert ptb(joined_out) == split_out, (rule, seed, joined_out, split_out)
        # each output keeps its input's style: no clitic written apart in the joined one
        assert not re.search(r"\s(?:n't|'(?:s|re|m|d|ll|ve))\b", joined_out), joined_out


@pytest.mark.parametrize(
    ("rule", "src", "out"),
    [
        ("verb_tense", "it's a mess .", "it was a mess ."),
        ("verb_tense", "it 's a mess .", "it was a mess ."),
        ("singular_plural_verb", "you've got mail .", "you has got mail ."),
        ("singular_plural_verb", "you 've got mail .", "you has got mail ."),
        ("negation", "we'll see .", "we won't see ."),
        ("negation", "we 'll see .", "we wo n't see ."),
        ("negation", "it can't work .", "it can work ."),
        ("negation", "it ca n't work .", "it can work ."),
        ("negation", "the film's plot isn't bad .", "the film's plot is bad ."),
        # possessive 's is no verb: the verb after it is edited
        ("verb_tense", "the film's plot drags .", "the film's plot dragged ."),
        ("verb_tense", "the film 's plot drags .", "the film 's plot dragged ."),
        # verbs sharing a subject change tense together
        ("verb_tense", "the bully becomes victim and blames everyone .",
         "the bully became victim and blamed everyone ."),
        # no double negative, no negation inside a comparison
        ("negation", "this method almost never fails him .", "this method almost never fails him ."),
        ("negation", "not everyone will play the tune .", "not everyone will play the tune ."),
        # a main-verb "have" in a question has no "haven't one of"
        ("negation", "ever have one of those days ?", "ever have one of those days ?"),
        # statements: an auxiliary after a bracket or comma is no inverted question
        ("negation", "arvasu ( milind soman ) is in love .", "arvasu ( milind soman ) is not in love ."),
    ],
)
def test_clitic_and_context_cases(rule: str, src: str, out: str) -> None:
    assert make(rule).perturb(src, seed=0) == out


def test_quoted_titles_are_left_alone() -> None:
    text = "if the hours wins 'best picture' i will cry ."
    assert [text[a:b] for a, b in quoted_titles(text)] == ["best picture"]
    for rule in VERB_RULES:
        for seed in range(5):
            assert "best picture" in make(rule).perturb(text, seed=seed)
    assert make("negation").perturb('while " real women have curves " suffers , it works .',
                                    seed=0).count("have curves") == 1
    # longer quotations are speech and stay editable
    assert quoted_titles('he said " i will never ever go back to that awful place again " .') == []


TREC_DID = [
    ("What day and month did John Lennon die ?", "What day and month did John Lennon not die ?"),
    ("During which season do most thunderstorms occur ?",
     "During which season do most thunderstorms not occur ?"),
    ("What does `` Sitting Shiva '' mean ?", "What does `` Sitting Shiva '' not mean ?"),
    ("In what spacecraft did U.S. astronaut Alan Shepard make his historic 1961 flight ?",
     "In what spacecraft did U.S. astronaut Alan Shepard not make his historic 1961 flight ?"),
    ("Who do Herb and Tootsie live next door to ?", "Who do Herb and Tootsie not live next door to ?"),
    ("Who did Arthur H. Bremer try to assassinate on May 15 , 1972 ?",
     "Who did Arthur H. Bremer not try to assassinate on May 15 , 1972 ?"),
    ("When is St. Patrick 's Day ?", "When is n't St. Patrick 's Day ?"),
]


@pytest.mark.parametrize(("src", "out"), TREC_DID)
def test_trec_questions_get_no_did_not_do(src: str, out: str) -> None:
    assert make("negation").perturb(src, seed=0) == out


@pytest.mark.shared_data
def test_no_did_not_do_in_trec(shared_data) -> None:
    """No do-auxiliary of a TREC question is negated as a main verb ("did not do John Lennon
    die"): a do-auxiliary, not, do, then the subject and the question's own verb."""
    p = make("negation")
    bad = []
    for name in ("TREC.test.all", "TREC.train.all"):
        for line in (shared_data / "trec" / name).read_text(encoding="latin-1").splitlines()[:2000]:
            text = line.split(" ", 1)[1].strip()
            if not text.endswith("?"):
                continue  # a few training lines are not questions ("... CD NNS IN NNP .")
            out = p.perturb(text, seed=0)
            m = re.search(r"\b(?:did|does|do) not do (.*)", out)
            if m and re.search(r"\b[a-z]+\b \?$", m.group(1)) and not re.search(
                    r"\b(?:the|a|an|data)\b", m.group(1).split()[0]):
                bad.append(out)
    assert not bad, bad[:5]


# ---- tokens no word-level rule may split ------------------------------------------------------

WHOLE = ["9/11", "post-9/11", "4/5ths", "$8", "$8.50", "and/or", "parents'", "1,000", "3.5", "10%",
         "https://example.org/a?b=1", "www.example.com", "jane.doe@example.org", "U.S.", "#1",
         "it's", "don't", "one-of-a-kind"]
PLAIN = ["the", "film", "is", "great", "he", "likes", "movies", "they", "walked", "home", "a",
         "story", "about", "love", "she", "was", "happy", "we", "see", "it", "quickly", ",", "."]
#: pieces a split would leave: none of them is a plain word of the corpus
FRAGMENTS = {"9", "11", "post", "4", "5ths", "8", "50", "or", "parents", "000", "10", "https",
             "example", "org", "www", "com", "jane", "doe", "U", "S", "b", "ths", "kind", "of"}


def test_whole_tokens_are_tokens() -> None:
    text = " ".join(WHOLE)
    assert [text[a:b] for a, b in word_spans(text)] == WHOLE
    # the verb rules' view splits only the clitic off "it's" (and strips the plural possessive)
    view = [t.text for t in tokens(text)]
    assert "it" in view and "'s" in view and "parents" in view and "9/11" in view


@pytest.fixture(scope="module")
def rules() -> dict[str, object]:
    out = {}
    for name in WORD_RULES:
        if name == "word_synonym":
            try:
                wordnet()
            except ResourceMissing:
                continue
        out[name] = make(name, pps=4)
    return out


_CORPUS = st.lists(st.one_of(st.sampled_from(WHOLE), st.sampled_from(PLAIN)), min_size=3,
                   max_size=14).map(" ".join)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(text=_CORPUS, seed=st.integers(0, 2**31))
def test_no_word_level_rule_splits_a_whole_token(rules, text: str, seed: int) -> None:
    for name, p in rules.items():
        out = p.perturb(text, seed=seed)
        got = [out[a:b] for a, b in word_spans(out)]
        assert not FRAGMENTS & set(got), (name, text, out)
        for tok in WHOLE:
            if tok in text.split() and name not in ("word_delete", "word_synonym") \
                    and tok not in ("it's", "don't"):  # the verb rules edit clitics
                assert tok in out.split(), (name, tok, text, out)
