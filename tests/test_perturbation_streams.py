"""The per-text randomness kinds of robustlab.perturbations.base (issue 13): pure functions of
(seed, text), independent of batching, and usable through ``apply(text, rng)`` too."""

from __future__ import annotations

import random

import pytest

from robustlab.perturbations import available, make
from robustlab.perturbations.base import NO_RANDOMNESS, stream_for
from robustlab.perturbations.byte_draws import Draws, u32s, u64s

LEARNABILITY = [n for n, c in available().items() if c.source == "000"]


def test_stream_is_a_pure_extendable_function_of_seed_salt_text():
    a = stream_for(3, "a text", "leet_letters").digest(64)
    assert a == stream_for(3, "a text", "leet_letters").digest(64)
    assert stream_for(3, "a text", "leet_letters").digest(200)[:64] == a  # extends, same prefix
    assert a != stream_for(4, "a text", "leet_letters").digest(64)
    assert a != stream_for(3, "a text!", "leet_letters").digest(64)
    assert a != stream_for(3, "a text", "shuffle_word").digest(64)
    assert stream_for(-1, "x").digest(8) != stream_for(1, "x").digest(8)


def test_draws_grow_without_changing_what_was_handed_out():
    d = Draws(stream_for(0, "t"), expected=2)  # 8 values first, then re-read longer prefixes
    values = [d.u64() for _ in range(40)]
    assert values == list(u64s(stream_for(0, "t").digest(8 * 40)))
    assert all(0 <= Draws(stream_for(0, "t")).below(7) < 7 for _ in range(5))
    assert list(u32s(bytes([1, 0, 0, 0, 0, 0, 0, 1]))) == [1, 1 << 24]  # little-endian always


@pytest.mark.parametrize("name", LEARNABILITY)
def test_outputs_do_not_depend_on_the_batch(name):
    p = make(name)
    texts = ["you are the best , by the way !", "", "a b", "Crème brûlée à Paris ?",
             "the quick brown fox jumps over the lazy dog . " * 30, "to be honest"] * 3
    full = p.perturb_batch(texts, seed=9)
    assert full == [p.perturb(t, seed=9) for t in texts]
    assert p.perturb_batch(texts[::-1], seed=9) == full[::-1]
    assert full[:6] == full[6:12] == full[12:]  # the same text, the same output, wherever it sits


@pytest.mark.parametrize("name", LEARNABILITY)
def test_apply_with_a_caller_rng_still_works(name):
    p = make(name)
    p.perturb("warm up")
    text = "We definitely received the package before tonight, thanks!"
    a = p.apply(text, random.Random(5))
    assert isinstance(a, str) and a == p.apply(text, random.Random(5))


def test_deterministic_perturbations_build_no_stream():
    for name in ("duplicate_punctuations", "insert_abbreviation"):
        p = make(name)
        assert p.randomness == "none"
        assert p.apply("you are here , ok ?", NO_RANDOMNESS) == p.perturb("you are here , ok ?")
    with pytest.raises(RuntimeError, match="randomness='none'"):
        NO_RANDOMNESS.random()
    assert make("insert_abbreviation", prob=0.5).randomness == "bytes"  # a draw per match


def test_outcomes_batch_then_find_the_failing_text():
    """perturb_outcomes runs the chunk through perturb_batch; when one text makes the batch
    raise, it is redone text by text: that text is reported, the others are the batch outputs."""
    from robustlab.perturbations.base import Perturbation

    class FailsOnBoom(Perturbation):
        name = "fails_on_boom"
        randomness = "bytes"
        calls: list[int] = []

        def apply_many(self, texts, streams):
            self.calls.append(len(texts))
            if "boom" in texts:
                raise ValueError("cannot perturb boom")
            return [t + streams[i].digest(2).hex() for i, t in enumerate(texts)]

    p = FailsOnBoom()
    texts = ["a", "b", "c"]
    ok = p.perturb_outcomes(texts, seed=1)
    assert p.calls == [3]  # one call for the chunk, not one per text
    assert [o.text for o in ok] == p.perturb_batch(texts, seed=1)
    assert all(o.changed and o.error is None for o in ok)
    p.calls.clear()
    mixed = p.perturb_outcomes(["a", "boom", "c"], seed=1)
    assert [o.text for o in mixed] == [ok[0].text, "boom", ok[2].text]
    assert [o.changed for o in mixed] == [True, False, True]
    assert mixed[1].error == "ValueError: cannot perturb boom"
    assert mixed[0].error is None and mixed[2].error is None
