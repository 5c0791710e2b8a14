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
    "CLITICS",
    "TOKEN_RE",
    "WORD_RE",
    "bernoulli_positions",
    "match_case",
    "replace_spans",
    "word_spans",
]

#: a word: a run of letters (any script), with inner apostrophes ("don't", "o'clock")
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")

#: the clitics Penn-Treebank tokenisation (SST-2, TREC) writes as words of their own:
#: "there 's", "they 're", "i 'm", "he 'd", "we 'll", "you 've", "does n't"
CLITICS = frozenset({"'s", "'re", "'m", "'d", "'ll", "'ve", "n't"})

#: a token of the word-level perturbations, kept whole so no edit splits it: a run of letters
#: and digits ("vitamin", "B1", "1990s") with inner apostrophes ("don't") and inner hyphens
#: ("one-of-a-kind", "modern-office"), or a PTB clitic standing alone ("'s", "n't").
#: Why one pattern: every word-level perturbation (delete, repeat, order, synonym, the verb
#: rules) reads its words through :func:`word_spans` / ``grammar.tokens``, so a compound or
#: a clitic cannot be torn apart by one of them ("there 'something", "B vitamin1").
TOKEN_RE = re.compile(
    r"(?:[^\W_]+(?:['’][^\W_]+)*(?:-[^\W_]+(?:['’][^\W_]+)*)*)"
    r"|(?<![^\W_])['’](?:s|re|m|d|ll|ve|S|RE|M|D|LL|VE)(?![^\W_])"
)


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every token of ``text`` (:data:`TOKEN_RE`), left to right."""
    return [m.span() for m in TOKEN_RE.finditer(text)]


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
