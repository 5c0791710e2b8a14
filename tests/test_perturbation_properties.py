"""Hypothesis properties over arbitrary Unicode for every registered perturbation:
never raises, returns str, deterministic under a seed, and one text's output ignores its batch."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from robustlab.perturbations import available, make

# _WORDY mixes words the verb rules react to with other scripts, emoji and a lone surrogate
NAMES = sorted(available())
_TEXT = st.text(max_size=200)  # any code point except lone surrogates
_WORDY = st.lists(
    st.sampled_from(["he", "likes", "it", "she", "walked", ",", "not", "dogs", "can", "é", "мир",
                     "你好", "😍", " ", "!", "Was", "were", "don't", "is", "the", "\ud83d"]),
    max_size=30,
).map(" ".join)

_cache: dict[str, object] = {}


def _get(name: str):
    if name not in _cache:
        _cache[name] = make(name)
    return _cache[name]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(_TEXT, _WORDY), other=_TEXT, seed=st.integers(0, 2**31))
def test_never_raises_returns_str_deterministic(name: str, text: str, other: str, seed: int) -> None:
    p = _get(name)
    out = p.perturb(text, seed=seed)
    assert isinstance(out, str)
    assert p.perturb(text, seed=seed) == out
    assert p.perturb_batch([other, text], seed=seed)[1] == out
