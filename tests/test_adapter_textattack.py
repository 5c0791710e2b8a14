"""TextAttack adapter, both ways, against the real textattack 0.3.11 (offline).

All TextAttack tests live in this one module: ``import textattack`` costs ~15 s, paid once by the
module-scoped ``ta`` fixture.
"""

from __future__ import annotations

import functools
import json
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from perturbation_checks import EDGE_TEXTS, check_perturbation

from robustlab.integrations.textattack import (
    TextAttackPerturbation,
    from_textattack,
    to_textattack_augmenter,
    to_textattack_transformation,
)
from robustlab.perturbations import make, parse_spec
from robustlab.perturbations.base import AppendToken, PerturbationError

S = "What I cannot create, I do not understand."


@pytest.fixture(scope="module")
def ta():
    from robustlab.resources import ensure_textattack

    ensure_textattack()
    import textattack

    return textattack


def _word_diffs(a: str, b: str) -> int:
    wa, wb = a.split(), b.split()
    assert len(wa) == len(wb)
    return sum(x != y for x, y in zip(wa, wb, strict=True))


# ---- TextAttack -> robustlab ---------------------------------------------------------------


def test_transformation_as_perturbation_passes_generic_checks(ta):
    p = from_textattack(ta.transformations.WordSwapRandomCharacterDeletion())
    assert isinstance(p, TextAttackPerturbation)
    assert p.name == "textattack:word_swap_random_character_deletion" and p.level == "character"
    check_perturbation(p)  # seeded, batch-independent, edge texts (100k chars, emoji), RNG hygiene


def test_seeded_and_global_state_isolated(ta):
    p = from_textattack(ta.transformations.WordSwapQWERTY())
    random.seed(1234)
    np.random.seed(99)
    r_state, np_state = random.getstate(), np.random.get_state()[1].copy()
    outs = [p.perturb(S, seed=s) for s in range(6)]
    assert random.getstate() == r_state and (np.random.get_state()[1] == np_state).all()
    assert outs == [p.perturb(S, seed=s) for s in range(6)]
    assert len(set(outs)) > 1 and all(_word_diffs(S, o) == 1 for o in outs)


def test_wordnet_spec_with_pps_changes_at_most_pps_words(ta):
    p = parse_spec("textattack:WordSwapWordNet", pps=2)
    assert p.level == "word" and p.pps == 2
    outs = [p.perturb(S, seed=s) for s in range(5)]
    assert all(o != S for o in outs)
    assert all(1 <= _word_diffs(S, o) <= 2 for o in outs if len(o.split()) == len(S.split()))
    assert any(_word_diffs(S, o) == 2 for o in outs if len(o.split()) == len(S.split()))


def test_constraints_are_honoured(ta):
    from textattack.constraints.pre_transformation import StopwordModification

    p = from_textattack(ta.transformations.WordSwapQWERTY(), pps=3,
                        constraints=[StopwordModification()])
    text = "the film is a joy and the cast is great"
    stop = {"the", "is", "a", "and"}
    for seed in range(8):
        out = p.perturb(text, seed=seed).split()
        for w, o in zip(text.split(), out, strict=True):
            if w in stop:
                assert o == w, (seed, out)


def test_augmenter_as_perturbation(ta):
    aug = ta.augmentation.Augmenter(ta.transformations.WordSwapRandomCharacterInsertion(),
                                    transformations_per_example=3)
    p = from_textattack(aug)
    state = random.getstate()
    outs = p.perturb_batch([S, "short text here", ""], seed=3)
    assert random.getstate() == state
    assert outs == p.perturb_batch([S, "short text here", ""], seed=3)
    assert outs[0] != S and outs[2] == ""
    for label in ("emoji", "mixed_scripts", "whitespace_only"):
        assert isinstance(p.perturb(EDGE_TEXTS[label]), str)


def test_spec_errors(ta):
    with pytest.raises(PerturbationError, match=r"no such TextAttack.*WordSwapWordNet"):
        parse_spec("textattack:WordSwapWordNett")
    with pytest.raises(PerturbationError, match="pps must be"):
        parse_spec("textattack:WordSwapQWERTY", pps=0)
    with pytest.raises(PerturbationError, match="textattack:WordSwapQWERTY"):
        parse_spec("textattack:WordSwapQWERTY:no_such_arg=1")


# ---- robustlab -> TextAttack ---------------------------------------------------------------


def test_word_mode_respects_indices_and_pre_constraints(ta):
    from textattack.constraints.pre_transformation import StopwordModification
    from textattack.shared import AttackedText

    t = to_textattack_transformation(make("leet_letters"), num_candidates=3)
    assert isinstance(t, ta.transformations.WordSwap)
    at = AttackedText(S)
    cands = t(at, indices_to_modify=[2, 7])
    assert cands and all(c.attack_attrs["newly_modified_indices"] <= {2, 7} for c in cands)
    assert {c.text for c in cands} == {c.text for c in t(at, indices_to_modify=[2, 7])}
    constraint = StopwordModification()
    kept = t(at, [constraint])
    assert kept and len(kept) < len(t(at))
    assert all(at.words[i] not in constraint.stopwords  # case-sensitive, as TextAttack checks
               for c in kept for i in c.attack_attrs["newly_modified_indices"])


def test_text_mode_keeps_attack_attrs_consistent(ta):
    from textattack.shared import AttackedText

    t = to_textattack_transformation(AppendToken("zxqv"))
    at = AttackedText("a fine film")
    (c,) = t(at)
    assert c.text == "a fine film zxqv"
    assert c.attack_attrs["modified_indices"] == {3}
    assert list(c.attack_attrs["original_index_map"]) == [0, 1, 2]
    assert c.attack_attrs["previous_attacked_text"] is at
    assert t(AttackedText(""))[0].text == "zxqv"


class _KeywordModel:
    """A tiny real ModelWrapper-style classifier: positive iff 'good' or 'zxqv' is a word."""

    def __init__(self):
        self.model = None

    def __call__(self, texts):
        pos = np.array([float(any(w in ("good", "zxqv") for w in t.lower().split()))
                        for t in texts])
        return np.stack([1 - pos, pos], axis=1)


def _attack(ta, transformation, search, constraints=()):
    from textattack import Attack
    from textattack.goal_functions import UntargetedClassification
    from textattack.models.wrappers import ModelWrapper

    class Wrapper(ModelWrapper):
        def __init__(self):
            self.model = _KeywordModel()

        def __call__(self, text_input_list):
            return self.model(text_input_list)

    goal = UntargetedClassification(Wrapper())
    return Attack(goal, list(constraints), transformation, search)


def test_composes_with_textattack_attack_and_search(ta):
    from textattack.attack_results import SuccessfulAttackResult
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.search_methods import GreedySearch, GreedyWordSwapWIR

    t = to_textattack_transformation(make("leet_letters"), num_candidates=4)
    attack = _attack(ta, t, GreedyWordSwapWIR("delete"),
                     [RepeatModification(), StopwordModification()])
    result = attack.attack("this movie is good", 1)
    assert isinstance(result, SuccessfulAttackResult)
    assert "good" not in result.perturbed_result.attacked_text.text.split()
    # text mode with a beam/greedy search: the planted token flips a negative text
    t2 = to_textattack_transformation(AppendToken("zxqv"))
    result2 = _attack(ta, t2, GreedySearch()).attack("this movie is bad", 0)
    assert isinstance(result2, SuccessfulAttackResult)
    assert result2.perturbed_result.attacked_text.text == "this movie is bad zxqv"


def test_augmenter_recipe_is_seeded_and_isolated(ta):
    aug = to_textattack_augmenter(make("butter_fingers_perturbation", prob=0.3),
                                  pct_words_to_swap=0.3, transformations_per_example=2, seed=5)
    assert isinstance(aug, ta.augmentation.Augmenter)
    state = random.getstate()
    a = aug.augment(S)
    assert random.getstate() == state
    assert a == aug.augment(S) and 1 <= len(a) <= 2 and all(x != S for x in a)
    assert aug.augment_many([S, "good day"]) == [a, aug.augment("good day")]


def test_round_trip_robustlab_textattack_robustlab(ta):
    leet = make("leet_letters")
    back = from_textattack(to_textattack_transformation(leet, num_candidates=3), pps=2)
    out = back.perturb(S, seed=1)
    assert out != S and _word_diffs(S, out) <= 2
    check_perturbation(back)


def test_cli_with_textattack_spec_and_pps(ta, tmp_path):
    from robustlab.cli import main
    from robustlab.data.files import read_rows

    src = tmp_path / "in.txt"
    src.write_text(f"{S}\n\nno\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    rc = main(["perturb", "-p", "textattack:WordSwapRandomCharacterDeletion", "--pps", "2",
               "-i", str(src), "-o", str(out)])
    assert rc == 0
    rows = read_rows(out).rows
    assert [r["changed"] for r in rows] == [True, False, True]
    assert 1 <= _word_diffs(S, rows[0]["text"]) <= 2


_unicode = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_unicode, seed=st.integers(0, 2**31))
def test_any_unicode_both_directions(ta, text, seed):
    """Arbitrary Unicode through both directions: never raises, returns str, seeded."""
    from textattack.shared import AttackedText

    p = _QWERTY_P()
    out = p.perturb(text, seed=seed)
    assert isinstance(out, str) and p.perturb(text, seed=seed) == out
    t = to_textattack_transformation(make("char_swap"), num_candidates=2)
    cands = t(AttackedText(text)) if text.strip() else []
    assert all(isinstance(c.text, str) for c in cands)
    t2 = to_textattack_transformation(make("word_delete"))
    assert all(isinstance(c.text, str) for c in (t2(AttackedText(text)) if text.strip() else []))


@functools.cache
def _QWERTY_P():  # noqa: N802
    import textattack

    return from_textattack(textattack.transformations.WordSwapQWERTY(), pps=2)


def test_list_textattack_names_resolve(ta, capsys):
    from robustlab.cli import main

    assert main(["list", "textattack", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["textattack:WordSwapWordNet"]["kind"] == "transformation"
    assert rows["textattack:EasyDataAugmenter"]["kind"] == "augmenter"
    assert rows["textattack:WordSwapQWERTY"]["level"] == "character"
    assert "textattack:WordSwap" not in rows  # abstract bases are not offered
    assert parse_spec("textattack:WordSwapNeighboringCharacterSwap").perturb(S) != S
