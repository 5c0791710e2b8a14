"""SO-Beam / SO-Enum / random baseline: planted models, hand-computed quantities, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _so_toys import make_wrapper, planted_proba

PAIRS = {"film": ["movie"]}
TABLE = {"good": ["great", "fine"], "plot": ["story"], "the": ["a"], "is": ["was"]}


@pytest.fixture(scope="module")
def so():
    from robustlab.studies import second_order
    from robustlab.studies.second_order import so_beam, so_enum, so_random
    from robustlab.studies.second_order.neighbourhood import TableSource

    return {"so_beam": so_beam, "so_enum": so_enum, "so_random": so_random,
            "so": second_order, "table": TableSource(TABLE)}


def attack(so, recipe, fn, text, label=1, **kw):
    kw.setdefault("source", so["table"])
    kw.setdefault("pairs", PAIRS)
    atk = so[recipe].build(make_wrapper(fn), **kw)
    return atk, atk.attack(text, label)


def test_hand_computed_quantities(so):
    m = so["so"]
    px, pxp = np.array([0.3, 0.7]), np.array([0.6, 0.4])
    assert m.prediction_change(px, pxp) == -1
    assert m.prediction_change(pxp, px) == 1
    assert m.prediction_change(px, px) == 0
    assert m.soft_change(px, pxp) == pytest.approx(-0.3)
    # Eq. 4 with f_min = 0.4, f_max = 0.7
    assert m.beam_loss(0.7, 0.4) == pytest.approx(-math.log(0.6) - math.log(0.7))
    assert m.beam_loss(0.4, 0.7) == m.beam_loss(0.7, 0.4)
    assert m.beam_loss(0.0, 1.0) == pytest.approx(0.0)
    assert m.prediction_change(np.array([0.2, 0.5, 0.3]), np.array([0.5, 0.2, 0.3])) == 1


@pytest.mark.parametrize("recipe", ["so_beam", "so_enum", "so_random"])
def test_planted_word_next_to_patch_is_caught(so, recipe):
    atk, res = attack(so, recipe, planted_proba, "the plot is good film .")
    assert type(res).__name__ == "SuccessfulAttackResult"
    st = atk.so_state
    assert st.patch.as_list() == ["film", "movie"]
    x = res.perturbed_result.attacked_text
    assert x.text == "the plot is great film ."
    assert x.words[st.patch.index] == "film"  # the patch word itself is never substituted
    # both predictions: x̃ positive, x̃ ⊕ p negative
    assert int(res.perturbed_result.raw_output[0].argmax()) == 1
    assert int(res.perturbed_result.raw_output[1].argmax()) == 0
    assert so["so"].l0(res.original_result.attacked_text, x) == 1


@pytest.mark.parametrize("recipe", ["so_beam", "so_enum", "so_random"])
def test_model_ignoring_the_patch_word_yields_nothing(so, recipe):
    fn = lambda ts: planted_proba(ts, ignore_patch=True)  # noqa: E731
    _, res = attack(so, recipe, fn, "the plot is good film .")
    assert type(res).__name__ == "FailedAttackResult"


def test_l0_ball_limits_the_beam(so):
    # the trigger needs three substitutions: "a story was film" -> only reachable with k >= 3
    def fn(ts):
        out = []
        for t in ts:
            w = t.split()
            hit = w[:3] == ["a", "story", "was"] and "movie" in w
            out.append([0.9, 0.1] if hit else [0.2, 0.8])
        return np.array(out)

    _, res = attack(so, "so_beam", fn, "the plot is film", max_rounds=2)
    assert type(res).__name__ == "FailedAttackResult"
    seen = res.perturbed_result.attacked_text
    assert so["so"].l0(res.original_result.attacked_text, seen) <= 2
    _, res = attack(so, "so_beam", fn, "the plot is film", max_rounds=3)
    assert type(res).__name__ == "SuccessfulAttackResult"
    assert res.perturbed_result.attacked_text.text == "a story was film"


def test_enum_returns_fewest_changes(so):
    # a vulnerable example exists at distance 1 (great) and at distance 2; enum returns ℓ0 = 1
    def fn(ts):
        out = []
        for t in ts:
            w = t.split()
            hit = ("great" in w or ("a" in w and "story" in w)) and "movie" in w
            out.append([0.9, 0.1] if hit else [0.2, 0.8])
        return np.array(out)

    _, res = attack(so, "so_enum", fn, "the plot is good film")
    assert so["so"].l0(res.original_result.attacked_text, res.perturbed_result.attacked_text) == 1


def test_patch_choice_maximises_single_word_gap(so):
    def fn(ts):  # single-word predictions: |f(movie) - f(film)| = 0.05, |f(tale) - f(story)| = 0.6
        table = {"film": 0.5, "movie": 0.55, "story": 0.2, "tale": 0.8}
        return np.array([[1 - table.get(t, 0.6), table.get(t, 0.6)] for t in ts])

    atk, _ = attack(so, "so_beam", fn, "a story about a film",
                    pairs={"film": ["movie"], "story": ["tale"], "a": ["one"]})
    assert atk.so_state.patch.as_list() == ["story", "tale"]  # "a" occurs twice: not eligible
    assert atk.so_state.patch.score == pytest.approx(0.6)


@pytest.mark.parametrize(("text", "reason"), [
    ("a plot without the pair", "no patch word"),
    ("", "empty sentence"),
])
def test_bad_sentences_are_skipped_with_a_reason(so, text, reason):
    atk, res = attack(so, "so_beam", planted_proba, text)
    assert type(res).__name__ == "SkippedAttackResult"
    assert reason in atk.so_state.skip_reason
    assert reason in res.original_result.attacked_text.attack_attrs["skip_reason"]


def test_one_word_sentence_is_attacked_without_crashing(so):
    _, res = attack(so, "so_beam", planted_proba, "film")
    assert type(res).__name__ == "FailedAttackResult"  # nothing but the frozen patch word


def test_nan_model_is_skipped_with_a_clear_reason(so):
    fn = lambda ts: np.full((len(ts), 2), np.nan)  # noqa: E731
    atk, res = attack(so, "so_beam", fn, "the plot is good film .")
    assert type(res).__name__ == "SkippedAttackResult"
    assert "NaN" in atk.so_state.skip_reason


def test_x0_already_vulnerable_is_success_with_l0_zero(so):
    _, res = attack(so, "so_beam", planted_proba, "the plot is great film .")
    assert type(res).__name__ == "SuccessfulAttackResult"
    assert res.perturbed_result.attacked_text.text == "the plot is great film ."


def test_query_budget_and_counting(so):
    calls = []

    def fn(ts):
        calls.append(len(ts))
        return planted_proba(ts, ignore_patch=True)

    atk, res = attack(so, "so_beam", fn, "the plot is good film .", query_budget=3)
    assert res.num_queries <= 3
    assert atk.so_state.model_queries == sum(calls)  # one choke point counts every sentence


def test_runs_through_textattack_attacker(so, tmp_path):
    import textattack

    atk = so["so_beam"].build(make_wrapper(planted_proba), source=so["table"], pairs=PAIRS)
    ds = textattack.datasets.Dataset([("the plot is good film .", 1), ("no pair here", 0)])
    args = textattack.AttackArgs(num_examples=2, disable_stdout=True, silent=True,
                                 log_to_csv=str(tmp_path / "ta.csv"))
    results = textattack.Attacker(atk, ds, args).attack_dataset()
    kinds = [type(r).__name__ for r in results]
    assert kinds == ["SuccessfulAttackResult", "SkippedAttackResult"]
    assert (tmp_path / "ta.csv").read_text().count("Successful") == 1


@pytest.mark.parametrize(("text", "index"), [
    ("The cat ate a film .", 3), ("it 's a good film , truly", 4), ("Film-ish FILM", 1)])
def test_fast_patch_splice_equals_textattack_replacement(so, text, index):
    from textattack.shared import AttackedText

    from robustlab.studies.second_order.patch_words import Patch

    at = AttackedText(text)
    p = Patch(at.words[index].lower(), "movie", index, 0.0)
    assert so["so"].patched_input(at, p) == so["so"].apply_patch(at, p).text


@pytest.mark.parametrize(("text", "index"), [
    ("The cat ate a film .", 3), ("it 's a good film , truly", 0), ("Film-ish FILM", 1)])
def test_fast_swap_equals_textattack_replacement(so, text, index):
    from textattack.shared import AttackedText

    from robustlab.studies.second_order.components import AttackState, NeighbourSwap

    at = AttackedText(text)
    fast = NeighbourSwap(so["table"], AttackState()).swap(at, index, "movie")
    slow = at.replace_word_at_index(index, "movie")
    assert fast.text == slow.text and fast.words == slow.words
    assert at.all_words_diff(fast) == {index}
    assert fast.attack_attrs["newly_modified_indices"] == {index}
    from robustlab.studies.second_order.neighbourhood import word_spans

    twice = NeighbourSwap(so["table"], AttackState()).swap(fast, len(fast.words) - 1, "x")
    assert twice.text == fast.replace_word_at_index(len(fast.words) - 1, "x").text
    assert twice._rl_spans == word_spans(twice.text, twice.words)


# ---- patch-word selection as the authors do it, and history-free query counts ------------------


def _single_word_model(scores):
    def fn(ts):
        return np.array([[1 - scores.get(t, 0.6), scores.get(t, 0.6)] for t in ts])

    return fn


def test_patch_pairs_are_read_in_both_directions():
    from robustlab.studies.second_order.patch_words import PatchSelector

    # the table lists appetite -> hungry only; the sentence holds "hungry": the authors' code
    # (is_good_biaswords) accepts the entry reversed, hungry -> appetite
    sel = PatchSelector({"appetite": ["hungry"], "film": ["movie"]})
    scores = {"appetite": 0.9, "hungry": 0.1, "film": 0.5, "movie": 0.55}
    patch = sel.choose("i was hungry for this film".split(), _single_word_model(scores))
    assert (patch.p1, patch.p2, patch.index) == ("hungry", "appetite", 2)
    assert patch.score == pytest.approx(0.8)
    assert ("hungry", "appetite", 2) in sel.candidates("i was hungry".split())


def test_patch_score_is_the_class1_difference():
    from robustlab.studies.second_order.patch_words import PatchSelector, pair_score

    # float32 softmax rows of saturated words are not complementary: "good" = [1e-9, 1.0]. The
    # class-0 differences to "fine" and "decent" are both 1 - 1e-9 (the old max-over-classes score
    # tied them and sentence order decided); the class-1 differences, which the authors compare,
    # are 1 - 4e-8 and 1 - 2e-8: "decent" is the better pair
    probs = {"good": np.array([1e-9, 1.0]), "fine": np.array([1.0, 4e-8]),
             "decent": np.array([1.0, 2e-8])}
    assert pair_score(probs["good"], probs["decent"]) == pytest.approx(1 - 2e-8, abs=1e-15)
    fn = lambda ts: np.array([probs[t] for t in ts])  # noqa: E731
    patch = PatchSelector({"good": ["fine", "decent"]}).choose("a good film".split(), fn)
    assert (patch.p1, patch.p2) == ("good", "decent")


def test_patch_ties_go_to_the_first_table_entry():
    from robustlab.studies.second_order.patch_words import PatchSelector

    probs = {"dull": np.array([0.9, 0.1]), "bland": np.array([0.2, 0.8]),
             "boring": np.array([0.2, 0.8]), "plot": np.array([0.5, 0.5]),
             "story": np.array([0.5, 0.5])}
    fn = lambda ts: np.array([probs[t] for t in ts])  # noqa: E731
    # (dull, bland) and (dull, boring) score exactly 0.7: the authors' stable sort keeps table
    # order, so the entry listed first wins
    table = {"plot": ["story"], "dull": ["bland", "boring"]}
    assert PatchSelector(table).choose("a dull plot".split(), fn).p2 == "bland"
    # a reverse entry ranks by its own position: boring -> dull is listed before dull's row
    table = {"boring": ["dull"], "plot": ["story"], "dull": ["bland"]}
    assert PatchSelector(table).choose("a dull plot".split(), fn).p2 == "boring"
    # ties across sentence words follow the table too, not the sentence order
    probs["tale"] = np.array([0.2, 0.8])
    probs["story"] = np.array([0.9, 0.1])
    table = {"tale": ["story"], "dull": ["bland"]}  # both score 0.7; tale's row is first
    patch = PatchSelector(table).choose("a dull story".split(), fn)
    assert (patch.p1, patch.p2, patch.index) == ("story", "tale", 2)


def test_example_queries_do_not_depend_on_history(so):
    texts = ["the plot is good film .", "a film is good", "the story was thin film"]
    alone = []
    for t in texts:
        atk, _ = attack(so, "so_beam", planted_proba, t)
        alone.append(atk.so_state.model_queries)
    atk = so["so_beam"].build(make_wrapper(planted_proba), source=so["table"], pairs=PAIRS)
    after = []
    for t in texts:  # one attack object: the single-word cache now spans the examples
        atk.attack(t, 1)
        after.append(atk.so_state.model_queries)
    assert after == alone
    assert atk.goal_function.total_model_queries < sum(after)  # the cache did save model calls
