"""Small text helpers shared by the built-in perturbations.

Why not a tokenizer: the perturbations must give back the *same* text except where they edit it
(whitespace, punctuation and non-Latin scripts untouched), so they work on character spans of
words found by one precompiled regex and splice edits back in.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterator, Sequence

__all__ = [
    "WORD_RE",
    "bernoulli_positions",
    "match_case",
    "replace_spans",
    "word_spans",
]

#: a word: a run of letters (any script), with inner apostrophes ("don't", "o'clock")
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every word in ``text``, left to right."""
    return [m.span() for m in WORD_RE.finditer(text)]


def replace_spans(text: str, edits: Sequence[tuple[int, int, str]]) -> str:
    """Replace each ``text[start:end]`` by its new string; edits must not overlap."""
    if not edits:
        return text
    parts: list[str] = []
    pos = 0
    for start, end, new in sorted(edits):
        parts.append(text[pos:start])
        parts.append(new)
        pos = end
    parts.append(text[pos:])
    return "".join(parts)


def bernoulli_positions(n: int, p: float, rng: random.Random) -> Iterator[int]:
    """Indices in ``range(n)``, each included independently with probability ``p``.

    Why: drawing geometric gaps costs one random number per *hit* instead of one per character,
    which is what makes the per-character perturbations fast on long texts.
    """
    if p <= 0.0 or n <= 0:
        return
    if p >= 1.0:
        yield from range(n)
        return
    log_q = math.log1p(-p)
    i = -1
    rand, log = rng.random, math.log
    while True:
        i += 1 + int(log(1.0 - rand()) / log_q)
        if i >= n:
            return
        yield i


def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template`` (ALL CAPS, Capitalised or as is)."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
