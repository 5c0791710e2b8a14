"""Behaviour of the eight learnability perturbations (paper 000, Figure 3 / section 4.1)."""

from __future__ import annotations

import unicodedata

import pytest

from robustlab.perturbations import PerturbationError, make
from robustlab.perturbations.lexicons import (
    LEET,
    TYPO_RADIUS,
    keyboard_neighbours,
    keyboard_typos,
    visual_lookalikes,
)

FIG3 = "His quiet and straightforward demeanor was rare then and would be today."
LONG = " ".join([FIG3] * 40)


def test_duplicate_punctuations_doubles_every_mark() -> None:
    p = make("duplicate_punctuations")
    assert p.perturb("Hi, there! (ok?)") == "Hi,, there!! ((ok??))"
    assert p.perturb("«très» — bien…") == "««très»» —— bien……"
    assert p.perturb("no marks here") == "no marks here"
    assert p.perturb(p.perturb("a.")) == "a...."  # asymmetric: g(g(x)) != x


def test_butter_fingers_only_nearby_keys_and_rate() -> None:
    p = make("butter_fingers_perturbation", prob=0.2)
    out = p.perturb(LONG, seed=1)
    assert len(out) == len(LONG)
    diffs = [(a, b) for a, b in zip(LONG, out, strict=True) if a != b]
    assert diffs, "prob=0.2 on 2,900 characters must change some"
    for a, b in diffs:
        assert b in keyboard_typos()[a], (a, b)
    # NL-Augmenter's reach: touching keys are a minority of the substitutes (it: 42 %)
    touching = sum(b in keyboard_neighbours()[a] for a, b in diffs) / len(diffs)
    assert 0.25 < touching < 0.6
    letters = sum(c.isalpha() for c in LONG)
    assert 0.12 < len(diffs) / letters < 0.28  # binomial rate around 0.2
    assert make("butter_fingers_perturbation", prob=0.0).perturb(LONG) == LONG


def test_keyboard_typos_reach_two_and_a_half_keys() -> None:
    kt = keyboard_typos()
    assert TYPO_RADIUS == 2.5
    assert kt["e"][:2] in ("wr", "rw") and set(kt["e"]) == set("wrdsfqtaxczg")
    assert set(kt["q"]) == set("wasezd") and set(kt["Q"]) == set("WASEZD")
    for key, near in kt.items():  # the touching keys are always among them, never the key
        assert set(keyboard_neighbours()[key]) <= set(near) and key not in near
    assert 9 < sum(len(kt[c]) for c in "qwertyuiopasdfghjklzxcvbnm") / 26 < 11


def test_keyboard_neighbours_are_adjacent_keys() -> None:
    kb = keyboard_neighbours()
    assert set(kb["s"]) == set("adwezx")
    assert set(kb["q"]) == set("wa")
    assert set(kb["M"]) == set("NJK")
    assert all(k not in v for k, v in kb.items())


def test_shuffle_word_permutes_words() -> None:
    p = make("shuffle_word")
    out = p.perturb(FIG3, seed=0)
    assert out != FIG3
    assert sorted(out.split()) == sorted(FIG3.split())
    assert p.perturb("alone") == "alone"
    assert p.perturb("same same same") == "same same same"


def test_random_upper_uppercases_a_proportion() -> None:
    p = make("random_upper_transformation")
    out = p.perturb(LONG, seed=2)
    assert out.lower() == LONG.lower()
    changed = sum(a != b for a, b in zip(LONG, out, strict=True))
    # 10 % of the positions are drawn; only lower-case letters among them can change
    assert 0.05 * len(LONG) < changed <= 0.1 * len(LONG)


def test_insert_abbreviation_lexicon() -> None:
    p = make("insert_abbreviation")
    # paper 000's Figure 3 row (NL-Augmenter's rule file gives the same)
    assert p.perturb(FIG3) == "His quiet and straightforward demeanor wuz rare then and would b today."
    assert p.perturb("By the way, YOU are great.") == "Btw, Ur gr8."
    assert p.perturb("toy beyond thee youth") == "toy beyond thee youth"  # whole words only
    assert p.perturb("the be-all-end-all") == "da be-all-end-all"  # not inside compounds
    assert p.perturb("You’re late, see you\ntonight") == "Ur late, cu\n2nite"  # ’, phrase over \n
    assert p.perturb("THE END") == "DA END" and p.perturb("İstanbul and you") == "İstanbul and u"
    half = make("insert_abbreviation", prob=0.5)
    outs = {half.perturb("you you you you you you", seed=s) for s in range(10)}
    assert len(outs) > 1
    assert all(set(o.split()) <= {"u", "you"} for o in outs)


def test_whitespace_perturbation_only_touches_spaces() -> None:
    p = make("whitespace_perturbation")
    out = p.perturb(LONG, seed=4)
    assert out != LONG
    assert out.replace(" ", "") == LONG.replace(" ", "")
    only_remove = make("whitespace_perturbation", remove_prob=1.0, add_prob=0.0)
    assert only_remove.perturb("a b  c") == "abc"
    only_add = make("whitespace_perturbation", remove_prob=0.0, add_prob=1.0)
    assert only_add.perturb("ab c") == "a b  c "


def test_visual_attack_letters_are_lookalikes() -> None:
    p = make("visual_attack_letters")
    out = p.perturb(FIG3, seed=5)
    assert len(out) == len(FIG3)
    diffs = [(a, b) for a, b in zip(FIG3, out, strict=True) if a != b]
    assert 0.3 * sum(c.isalpha() for c in FIG3) < len(diffs)
    for a, b in diffs:
        assert b in visual_lookalikes()[a], (a, b)
        assert unicodedata.name(b) != unicodedata.name(a)


def test_visual_lookalikes_include_diacritics_and_homoglyphs() -> None:
    v = visual_lookalikes()
    assert "ś" in v["s"] and "à" in v["a"] and "ế" in v["e"]  # some diacritic variants
    assert "о" in v["o"] and "а" in v["a"]  # Cyrillic homoglyphs
    assert all(c not in cands for c, cands in v.items())
    assert set(v) == set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    diacritic = [c for cands in v.values() for c in cands
                 if len(unicodedata.normalize("NFD", c)) > 1]
    # NL-Augmenter's mix: 43-46 % of its substitutes are diacritic variants
    assert 0.35 < len(diacritic) / sum(map(len, v.values())) < 0.5


def test_visual_lookalikes_survive_tokenizer_normalisation() -> None:
    """The hand-picked look-alikes stay different from their letter after XLNet's default
    normalisation (NFKD, accents stripped) and uncased BERT's, as the ``tokenizers`` library
    applies them; so half of the attacked letters still reach such a model (issue 24)."""
    normalizers = pytest.importorskip("tokenizers.normalizers")
    xlnet = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()])
    bert = normalizers.BertNormalizer(lowercase=True)
    v = visual_lookalikes()
    for letter, cands in v.items():
        survive = [c for c in cands if xlnet.normalize_str(c) != xlnet.normalize_str(letter)
                   and bert.normalize_str(c) != bert.normalize_str(letter)]
        assert len(survive) >= 0.5 * len(cands), (letter, cands)
    out = make("visual_attack_letters").perturb(LONG, seed=3)
    letters = [(a, b) for a, b in zip(LONG, out, strict=True) if a.isalpha()]
    for norm in (xlnet, bert):
        still = sum(norm.normalize_str(a) != norm.normalize_str(b) for a, b in letters)
        assert still / len(letters) > 0.24  # about 28 %; NL-Augmenter's table: 27 %


def test_leet_letters_map() -> None:
    p = make("leet_letters", max_leet=1.0)
    out = p.perturb("eeee", seed=0)
    # 4 draws with replacement over 4 candidates: e -> 3 wherever drawn, at least once
    assert set(out) <= {"3", "e"} and "3" in out
    out = make("leet_letters").perturb(LONG, seed=1)
    for a, b in zip(LONG, out, strict=True):
        assert a == b or LEET[a] == b
    assert make("leet_letters").perturb("xyz", seed=0) in {"x4z", "xyz"}
    assert LEET["e"] == "3" and LEET["o"] == "0"


@pytest.mark.parametrize(
    ("name", "params"),
    [
        ("butter_fingers_perturbation", {"prob": 1.5}),
        ("random_upper_transformation", {"corrupt_proportion": -0.1}),
        ("whitespace_perturbation", {"add_prob": "x"}),
        ("visual_attack_letters", {"perturb_pct": 2}),
        ("leet_letters", {"max_leet": True}),
        ("insert_abbreviation", {"prob": 3}),
    ],
)
def test_bad_probability_is_a_clear_error(name: str, params: dict) -> None:
    with pytest.raises(PerturbationError, match=r"must be a number in \[0, 1\]"):
        make(name, **params)


def test_insert_abbreviation_changes_most_sst2_sentences() -> None:
    from robustlab.resources import shared_data_dir

    path = shared_data_dir() / "sst" / "stsa.binary.train"
    if not path.exists():
        pytest.skip(f"needs the team's SST-2 file {path}")
    texts = [line.split(" ", 1)[1].strip() for line in path.read_text(encoding="utf-8").splitlines()]
    out = make("insert_abbreviation").perturb_batch(texts)
    changed = sum(a != b for a, b in zip(texts, out, strict=True)) / len(texts)
    # NL-Augmenter's rule file changes 82.7 % of them, this table 80.9 % (docs/perturbations.md;
    # tests/test_papers_preset.py compares the two replacement by replacement)
    assert 0.78 <= changed <= 0.87


def test_insert_abbreviation_fast_paths_agree_with_the_word_by_word_path() -> None:
    p = make("insert_abbreviation")
    texts = ["by the way you are late", "kind of course", "of course kind of", "to be honest ,",
             "", " x", "you\tare", "café you", "THE END , you", "i don't know what to be",
             "by the\nway", "a, b you", "x ", "You all see you later", "the be-all-end-all"]
    texts += [t.capitalize() for t in texts] + [t.upper() for t in texts]
    expected = [p._replace_each(t, None) for t in texts]
    assert p.perturb_batch(texts) == expected  # chunk path (tokenized ASCII in one pass)
    assert [p.perturb(t) for t in texts] == expected  # per-text path
