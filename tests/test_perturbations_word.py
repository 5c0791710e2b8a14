"""Behaviour of paper 001's word-level perturbations (Moradi & Samwald, section 4.2)."""

from __future__ import annotations

import re

import pytest

from robustlab.perturbations import PerturbationError, make
from robustlab.perturbations.word_perturbations import wordnet_synonyms
from robustlab.resources import ResourceMissing, wordnet

WORD_NAMES = ["word_delete", "word_repeat", "word_synonym", "negation", "singular_plural_verb",
              "verb_tense", "word_order"]
TEXT = "The committee approved the new budget, and the mayor praised the careful planning."


def words(s: str) -> list[str]:
    return re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)*", s)


@pytest.fixture(scope="module")
def need_wordnet() -> None:
    try:
        wordnet()
    except ResourceMissing as exc:  # pragma: no cover - depends on the machine
        pytest.skip(str(exc))


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("He likes it.", "He does not like it."),
        ("He does not like it.", "He likes it."),
        ("He doesn't like it.", "He likes it."),
        ("She walked home.", "She did not walk home."),
        ("They play chess.", "They do not play chess."),
        ("The dogs were barking.", "The dogs were not barking."),
        ("It is not bad.", "It is bad."),
        ("I can believe it.", "I cannot believe it."),
        ("We won't stay.", "We will stay."),
        ("He has a car.", "He does not have a car."),
        ("Does he like it?", "Doesn't he like it?"),
        ("i do n't like it .", "i like it ."),
        ("What planet is known as the red planet?", "What planet is not known as the red planet?"),
    ],
)
def test_negation_rules(src: str, out: str) -> None:
    assert make("negation").perturb(src) == out


def test_negation_is_symmetric_and_not_label_preserving() -> None:
    p = make("negation")
    assert p.perturb(p.perturb("He likes it.")) == "He likes it."
    assert not p.label_preserving and not p.asymmetric


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("She walks home.", "She walked home."),
        ("She walked home.", "She walks home."),
        ("They walked home.", "They walk home."),
        ("The dogs are barking.", "The dogs were barking."),
        ("I was happy.", "I am happy."),
        ("He doesn't care.", "He didn't care."),
        ("Anna reads books and writes letters.", None),
    ],
)
def test_verb_tense_rules(src: str, out: str | None) -> None:
    p = make("verb_tense", pps=4)
    if out is None:  # coordinated verbs share the subject
        assert p.perturb(src) == "Anna read books and wrote letters."
    else:
        assert p.perturb(src) == out


@pytest.mark.parametrize(
    ("src", "out"),
    [
        ("He likes it.", "He like it."),
        ("They like it.", "They likes it."),
        ("What does a barometer measure?", "What do a barometer measure?"),
        ("The results were surprising.", "The results was surprising."),
        ("It isn't fair.", "It aren't fair."),
    ],
)
def test_singular_plural_verb_rules(src: str, out: str) -> None:
    assert make("singular_plural_verb").perturb(src) == out


def test_verb_perturbations_leave_verbless_text_alone() -> None:
    for name in ("negation", "verb_tense", "singular_plural_verb"):
        p = make(name)
        assert p.perturb("A very long and quiet night.") == "A very long and quiet night."
        assert p.perturb("Walking home.") == "Walking home."
        assert p.perturb_outcomes(["The old house by the river."])[0].changed is False


@pytest.mark.parametrize("pps", [1, 2, 3, 4])
def test_word_delete_and_repeat_respect_pps(pps: int) -> None:
    base = words(TEXT)
    for s in range(15):
        out = words(make("word_delete", pps=pps).perturb(TEXT, seed=s))
        assert len(out) == len(base) - pps
        it = iter(base)
        assert all(w in it for w in out)  # a subsequence: only deletions
        rep = words(make("word_repeat", pps=pps).perturb(TEXT, seed=s))
        assert len(rep) == len(base) + pps
    assert make("word_delete", pps=4).perturb("Hello there", seed=0) in {"Hello", "there"}


def test_word_synonym_uses_wordnet(need_wordnet: None) -> None:
    assert "film" in wordnet_synonyms("movie")
    assert "got" in wordnet_synonyms("received")  # re-inflected like the original
    p = make("word_synonym", pps=3)
    src = "The movie received good reviews from careful critics."
    for s in range(10):
        out = p.perturb(src, seed=s)
        a, b = words(src), words(out)
        assert len(a) == len(b)
        diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
        assert 1 <= len(diff) <= 3
        for x, y in diff:
            assert y.lower() in wordnet_synonyms(x.lower())


def test_word_order_reorders_one_window() -> None:
    p = make("word_order", window=3)
    base = words(TEXT)
    for s in range(15):
        out = words(p.perturb(TEXT, seed=s))
        assert sorted(out) == sorted(base) and out != base
        changed = [i for i, (x, y) in enumerate(zip(base, out, strict=True)) if x != y]
        assert max(changed) - min(changed) < 3  # within M consecutive words
    assert p.perturb("What is the most common eye color?", seed=1).endswith("?")


@pytest.mark.parametrize("name", WORD_NAMES)
@pytest.mark.parametrize("bad", [0, 5, 1.0, None])
def test_pps_out_of_range(name: str, bad: object) -> None:
    with pytest.raises(PerturbationError, match="pps"):
        make(name, pps=bad)


def test_word_order_window_validated() -> None:
    with pytest.raises(PerturbationError, match="window"):
        make("word_order", window=1)


@pytest.mark.parametrize("name", ["negation", "verb_tense", "singular_plural_verb"])
def test_verb_perturbations_pps_bounds_edits(name: str) -> None:
    src = "He likes tea, she walks home, they play chess and we sing songs."
    for pps in (1, 2, 3):
        for s in range(10):
            out = make(name, pps=pps).perturb(src, seed=s)
            clauses = [c for c, d in zip(src.split(","), out.split(","), strict=True) if c != d]
            assert 1 <= len(clauses) <= pps
