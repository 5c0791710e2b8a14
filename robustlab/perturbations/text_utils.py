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
    "inside",
    "match_case",
    "quoted_titles",
    "replace_spans",
    "tokens",
    "word_spans",
]

#: a word: a run of letters (any script), with inner apostrophes ("don't", "o'clock")
WORD_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")

#: the clitics Penn-Treebank tokenisation (SST-2, TREC) writes as words of their own:
#: "there 's", "they 're", "i 'm", "he 'd", "we 'll", "you 've", "does n't"
CLITICS = frozenset({"'s", "'re", "'m", "'d", "'ll", "'ve", "n't"})

#: a token of the word-level perturbations, kept whole so no edit splits it. Tried in order:
#: a URL ("https://x.org/a?b=1", "www.x.com"), an e-mail address, initials ("U.S.", "j.k."),
#: then a word: a run of letters
#: and digits ("vitamin", "B1", "1990s") with inner apostrophes ("don't", "it's"), hyphens
#: ("one-of-a-kind", "post-9/11"), slashes ("9/11", "4/5ths", "and/or"), an ampersand ("r&b"),
#: digit groups ("3.5", "1,000", "10:30"), a leading currency or number sign ("$8", "#1"), a
#: trailing percent sign ("8%") and the possessive apostrophe of a plural ("parents'", which
#: :func:`tokens` gives back when it closes a quotation instead); or a PTB clitic standing
#: alone ("'s", "'re"). Why one pattern: every word-level perturbation (delete, repeat, order,
#: synonym, the verb rules) reads its words through :func:`tokens` (``grammar.tokens`` is the
#: verb rules' finer view of the same tokens), so none of them can tear a token apart ("the 9
#: of aftermath/11", "$8 8", "there 'something", "B vitamin1").
TOKEN_RE = re.compile(
    r"(?:https?://|www\.)[^\s<>\"]+?(?=[.,;:!?)\]'\"’”]*(?:\s|$))"
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?:[^\W\d_]\.){2,}(?![^\W_])"
    r"|(?:[$£€¥#](?=\d))?[^\W_]+(?:(?:['’]|[-/&])[^\W_]+|(?<=\d)[.,:]\d+)*%?"
    r"(?:(?<=[sS])['’](?![^\W_]))?"
    r"|(?<![^\W_])['’](?:s|re|m|d|ll|ve|S|RE|M|D|LL|VE)(?![^\W_])"
)
#: a quotation opened by a single quote: "'best picture'" (its closing quote is no possessive)
_OPEN_QUOTE = re.compile(
    r"(?:^|(?<=[\s(\[\"“]))['‘](?=[^\W_])(?!(?:s|re|m|d|ll|ve|S|RE|M|D|LL|VE)(?![^\W_]))")


def tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of every token of ``text`` (:data:`TOKEN_RE`), left to right.

    A trailing apostrophe is a plural possessive ("the parents' house") unless it closes a
    quotation the text opened with a single quote ("if 'the hours' wins"): then it is left
    out of the token, as any other punctuation.
    """
    out = []
    opened = [m.start() for m in _OPEN_QUOTE.finditer(text)]
    k = 0
    for m in TOKEN_RE.finditer(text):
        a, b = m.span()
        if text[b - 1] in "'’" and b - a > 1:
            while k < len(opened) and opened[k] < a:
                k += 1
            # an open quote before this token, not yet closed by an earlier token
            if k and _unclosed(text, opened[k - 1], a):
                b -= 1
        out.append((a, b))
    return out


def _unclosed(text: str, start: int, end: int) -> bool:
    """Whether the single quote at ``start`` is still open at ``end``."""
    return not re.search(r"['’](?![^\W_])", text[start + 1 : end])


#: a short quotation: a title or a name in quotes ("if the hours wins 'best picture'",
#: "real women have curves", ``Sitting Shiva''); at most :data:`TITLE_WORDS` words
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|``(.+?)''|(?:^|(?<=[\s(\[]))['‘]([^'’‘]+?)['’](?![^\W_])")
TITLE_WORDS = 5


def quoted_titles(text: str) -> list[tuple[int, int]]:
    """(start, end) of the short quotations in ``text``: titles and names, which the word rules
    leave alone (a film title is no verb to negate, nor a word to replace by a synonym). A
    longer quotation is speech and stays editable."""
    out = []
    for m in _QUOTED.finditer(text):
        g = next(i for i in range(1, 5) if m.group(i) is not None)
        if 0 < len(TOKEN_RE.findall(m.group(g))) <= TITLE_WORDS:
            out.append(m.span(g))
    return out


def inside(spans: Sequence[tuple[int, int]], start: int) -> bool:
    """Whether position ``start`` lies in one of ``spans``."""
    return any(a <= start < b for a, b in spans)


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every token of ``text`` (:func:`tokens`), left to right."""
    return tokens(text)


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
