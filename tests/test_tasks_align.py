"""Tags follow tokens under each perturbation (robustlab.tasks.align / tasks.perturb):
hand-written cases, the real perturbations on hand-checked sentences, refusals, and every
perturbed sentence of a sample of CoNLL-2003 test is valid IOB2."""

from __future__ import annotations

import pytest

from robustlab.perturbations import make
from robustlab.tasks import TaskError, get_task
from robustlab.tasks.align import AlignmentError, align, carry_tags, entities, iob2_error
from robustlab.tasks.examples import TaggedExample

NER = get_task("ner")
TOKS = "Peter Blackburn likes New York City .".split()
TAGS = ("B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC", "O")
SENT = TaggedExample(tuple(TOKS), TAGS)
LONG = TaggedExample(tuple("Peter Blackburn visits New York City and does not like Paris .".split()),
                     ("B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC", "O", "O", "O", "O",
                      "B-LOC", "O"))


def _tags(old, new, kind, tags=TAGS):
    return carry_tags(tags, align(old, new, kind, tags))


# ---- hand-written alignments -----------------------------------------------------------------------


def test_deleted_word_takes_its_tag():
    new = "Peter likes New York City .".split()
    assert _tags(TOKS, new, "delete") == ("B-PER", "O", "B-LOC", "I-LOC", "I-LOC", "O")
    # deleting an entity's first word: the rest of it starts with B-
    new = "Peter Blackburn likes York City .".split()
    assert _tags(TOKS, new, "delete") == ("B-PER", "I-PER", "O", "B-LOC", "I-LOC", "O")


def test_repeated_word_carries_its_tag_and_joins_its_entity():
    new = "Peter Blackburn likes New New York City .".split()
    assert _tags(TOKS, new, "repeat") == ("B-PER", "I-PER", "O", "B-LOC", "I-LOC", "I-LOC",
                                          "I-LOC", "O")
    new = "Peter Blackburn likes likes New York City .".split()
    assert _tags(TOKS, new, "repeat") == ("B-PER", "I-PER", "O", "O", "B-LOC", "I-LOC",
                                          "I-LOC", "O")


def test_reordered_words_carry_their_tags_and_iob2_is_repaired():
    # an entity whose words stay together stays one entity, B- on its new first word
    new = "likes Blackburn Peter New York City .".split()
    assert _tags(TOKS, new, "reorder") == ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-LOC",
                                           "O")
    # an entity torn apart becomes two, each starting with B-
    new = "Peter Blackburn New York likes City .".split()
    assert _tags(TOKS, new, "reorder") == ("B-PER", "I-PER", "B-LOC", "I-LOC", "O", "B-LOC",
                                           "O")


def test_inserted_word_is_o_and_splits_an_entity_it_lands_in():
    new = "Peter Blackburn does not like New York City .".split()
    assert _tags(TOKS, new, "rewrite") == ("B-PER", "I-PER", "O", "O", "O", "B-LOC", "I-LOC",
                                           "I-LOC", "O")
    new = "Peter not Blackburn likes New York City .".split()
    assert _tags(TOKS, new, "rewrite") == ("B-PER", "O", "B-PER", "O", "B-LOC", "I-LOC",
                                           "I-LOC", "O")


def test_letter_changes_keep_the_tag_in_place():
    new = "Ptere Blackburn likes New Yrok City .".split()
    assert _tags(TOKS, new, "in-place") == TAGS


def test_outputs_that_cannot_be_aligned_are_refused():
    with pytest.raises(AlignmentError, match="split or joined at a space"):
        align(TOKS, "Peter Black burn likes New York City .".split(), "in-place", TAGS)
    with pytest.raises(AlignmentError, match="deletion inside a token"):
        align(["U.S.", "wins"], [".S.", "wins"], "delete", ["B-LOC", "O"])
    with pytest.raises(AlignmentError, match="not a copy of a whole neighbouring token"):
        align(["U.S.", "wins"], ["U", "U.S.", "wins"], "repeat", ["B-LOC", "O"])
    with pytest.raises(AlignmentError, match="reorder inside a token"):
        align(["25.76", "points"], ["76.25", "points"], "reorder", ["O", "O"])
    with pytest.raises(AlignmentError, match="words of an entity were rewritten"):
        align(["JETS", "WIN"], ["DOES", "NOT", "JET", "WIN"], "rewrite", ["B-ORG", "O"])


def test_ambiguous_copies_are_refused_not_guessed():
    # "Washington" twice, a person and a place: which one was deleted cannot be told
    old, tags = ["Washington", "Washington", "said"], ["B-PER", "B-LOC", "O"]
    with pytest.raises(AlignmentError, match="ambiguous"):
        align(old, ["Washington", "said"], "delete", tags)
    with pytest.raises(AlignmentError, match="ambiguous"):
        align(old, ["Washington", "Washington", "Washington", "said"], "repeat", tags)
    # both "Washington"s moved: which went where cannot be told
    with pytest.raises(AlignmentError, match="ambiguous"):
        align(["Washington", "met", "Washington", "."], ["met", "Washington", ".", "Washington"],
              "reorder", ["B-PER", "O", "B-LOC", "O"])
    # two one-word entities of one type are interchangeable: no refusal
    assert _tags(["Smith", "met", "Smith", "."], ["met", "Smith", ".", "Smith"], "reorder",
                 ("B-PER", "O", "B-PER", "O")) == ("O", "B-PER", "O", "B-PER")
    # equal O words are interchangeable: no refusal
    assert _tags(["the", "the", "cat"], ["the", "cat"], "delete", ("O", "O", "O")) == ("O", "O")


def test_iob2_helpers():
    assert iob2_error(("B-PER", "I-PER", "O")) is None
    assert "follows 'O'" in iob2_error(("O", "I-PER"))
    assert "follows 'B-LOC'" in iob2_error(("B-LOC", "I-PER"))
    assert entities(("B-PER", "I-PER", "O", "B-LOC")) == {("PER", 0, 2), ("LOC", 3, 4)}


# ---- the real perturbations, outputs checked by hand -------------------------------------------------


@pytest.mark.parametrize("name,seed,example,expected", [
    ("word_delete", 3, SENT, "Peter/B-PER Blackburn/I-PER likes/O York/B-LOC City/I-LOC ./O"),
    ("word_delete", 5, SENT, "Peter/B-PER Blackburn/I-PER likes/O New/B-LOC City/I-LOC ./O"),
    ("word_repeat", 0, SENT,
     "Peter/B-PER Blackburn/I-PER likes/O New/B-LOC New/I-LOC York/I-LOC City/I-LOC ./O"),
    ("word_repeat", 0, LONG, "Peter/B-PER Blackburn/I-PER visits/O New/B-LOC York/I-LOC "
     "City/I-LOC and/O does/O not/O not/O like/O Paris/B-LOC ./O"),
    ("word_order", 1, SENT, "likes/O Blackburn/B-PER Peter/I-PER New/B-LOC York/I-LOC "
     "City/I-LOC ./O"),
    ("word_order", 0, SENT, "Peter/B-PER Blackburn/I-PER New/B-LOC York/I-LOC likes/O "
     "City/B-LOC ./O"),
    ("negation", 0, SENT, "Peter/B-PER Blackburn/I-PER does/O not/O like/O New/B-LOC "
     "York/I-LOC City/I-LOC ./O"),
    # "does not like" -> "likes": three words outside entities rewritten as one
    ("negation", 2, LONG, "Peter/B-PER Blackburn/I-PER visits/O New/B-LOC York/I-LOC "
     "City/I-LOC and/O likes/O Paris/B-LOC ./O"),
    ("char_swap", 0, SENT, "Peter/B-PER Blackburn/I-PER likes/O eNw/B-LOC York/I-LOC "
     "City/I-LOC ./O"),
    ("char_swap", 4, SENT, "Petre/B-PER Blackburn/I-PER likes/O New/B-LOC York/I-LOC "
     "City/I-LOC ./O"),
])
def test_real_perturbations_tags_follow_tokens(name, seed, example, expected):
    p = make(name)
    out = NER.perturb([example], p, seed=seed)[0]
    assert out.error is None and out.changed
    got = " ".join(f"{t}/{g}" for t, g in zip(out.example.tokens, out.example.tags, strict=True))
    assert got == expected
    # the tokens are exactly what the perturbation gives the sentence as plain text
    assert " ".join(out.example.tokens) == p.perturb(example.text, seed)


def test_an_entity_word_changed_letter_by_letter_keeps_its_tag():
    for name in ("char_insert", "char_delete", "char_keyboard", "char_swap", "char_repeat",
                 "letter_case"):
        for seed in range(8):
            out = NER.perturb([SENT], make(name, pps=4), seed=seed)[0]
            assert out.error is None and out.example.tags == TAGS, (name, seed)
            assert len(out.example.tokens) == len(TOKS)


def test_a_sentence_that_cannot_be_aligned_is_left_unperturbed_with_the_reason():
    # the word rules see "2" in the rank "2." as a word: deleting it leaves "." behind
    ex = TaggedExample(("2.", "Andrei", "Ivanov", "(", "Russia", ")", "24.88"),
                       ("O", "B-PER", "I-PER", "O", "B-LOC", "O", "O"))
    outs = [NER.perturb([ex], make("word_delete"), seed=s)[0] for s in range(30)]
    refused = [o for o in outs if o.error]
    assert refused, "some seed deletes the 2 of '2.'"
    for o in refused:
        assert o.error.startswith("cannot align tags:") and o.example == ex and not o.changed
    assert any(o.changed for o in outs)
    for o in outs:
        assert iob2_error(o.example.tags) is None


def test_perturbations_that_cannot_keep_tags_are_refused_with_one_line():
    for name in ("whitespace_perturbation", "shuffle_word"):
        why = NER.refusal(make(name))
        assert why and why.startswith(f"perturbation {name} is refused for NER:")
        assert "\n" not in why
        with pytest.raises(TaskError, match="refused for NER"):
            NER.perturb([SENT], make(name), seed=0)
    assert NER.refusal(make("word_delete")) is None
    assert get_task("sts").refusal(make("whitespace_perturbation")) is None


def test_pos_columns_follow_tokens_and_changed_words_lose_them():
    ex = TaggedExample(tuple(TOKS), TAGS, tuple((f"P{i}", f"C{i}") for i in range(len(TOKS))))
    out = NER.perturb([ex], make("word_repeat"), seed=0)[0].example  # "New New"
    assert out.columns[3] == out.columns[4] == ("P3", "C3")
    out = NER.perturb([ex], make("char_swap"), seed=0)[0].example  # "eNw"
    assert out.columns[3] == ("-X-", "-X-") and out.columns[4] == ("P4", "C4")


# ---- the real test file ----------------------------------------------------------------------------

PAPER_001 = ("char_insert", "char_delete", "char_keyboard", "char_swap", "char_repeat",
             "misspelling", "letter_case", "word_delete", "word_repeat", "word_synonym",
             "negation", "singular_plural_verb", "verb_tense", "word_order")


@pytest.mark.parametrize("name", PAPER_001)
def test_every_perturbed_conll_sentence_is_valid_iob2(shared_data, name):
    corpus = NER.read(shared_data / "conll2003" / "test.txt")
    sample = corpus.examples[::12]  # 288 sentences
    outs = NER.perturb(sample, make(name), seed=0)
    assert len(outs) == len(sample)
    for o in outs:
        assert iob2_error(o.example.tags) is None, (name, o.example)
        assert len(o.example.tokens) == len(o.example.tags) == len(o.alignment)
        if o.error is None:
            # gold carried through the alignment is the perturbed example's gold
            assert o.example.tags == carry_tags(o.original.tags, o.alignment)
    refused = sum(o.error is not None for o in outs)
    assert sum(o.changed for o in outs) > 0
    assert refused < 0.25 * len(outs), f"{name}: {refused} of {len(outs)} refused"
