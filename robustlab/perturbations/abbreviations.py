"""insert_abbreviation (papers 000/003): words and phrases replaced by chat abbreviations.

Split from :mod:`robustlab.perturbations.learnability_perturbations` (module size). Why three paths:
NL-Augmenter's own tokenizer is a per-character Python loop, so a regex scan per text is barely
faster; tokenized ASCII text (SST-2 style, punctuation apart) is done a chunk at a time with one
``str.split``/dict ``map``/``str.join``, other text by a per-text regex split, and ``prob`` < 1
by a word-by-word loop drawing from the text's byte stream. All three give the same outputs
(tests/test_perturbations_learnability.py).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from typing import Any

from robustlab.perturbations.base import Perturbation, check_prob
from robustlab.perturbations.byte_draws import Draws
from robustlab.perturbations.lexicons import ABBREVIATIONS
from robustlab.perturbations.named import register
from robustlab.perturbations.text_utils import match_case

__all__ = ["InsertAbbreviation"]


#: splits a text into words (runs of letters, digits, apostrophes, hyphens) at even indices and
#: the separators between them at odd ones, so a lexicon entry matches whole words only: never
#: inside a word, a contraction or a hyphenated compound ("be-all")
_WORD_SPLIT = re.compile(r"([^\w'’-]+)")
#: ASCII byte classes: word characters (as in _WORD_SPLIT) -> "a", space -> " ", others -> "p"
_CLASSES = bytes(ord("a") if (chr(b).isalnum() or chr(b) in "_'-") else ord(" ") if b == 32
                 else ord("p") for b in range(256))
#: the same with control characters (not printable) -> "x"
_CLASSES_CTRL = bytes(ord("x") if b < 32 or b == 127 else c for b, c in enumerate(_CLASSES))


def _tokenized_many(texts: list[str]) -> list[bool]:
    """:func:`_tokenized` (plus printable, single spaces, no edge spaces) for many ASCII texts
    with one translate of their concatenation: a Python step per *offending spot*, not per text."""
    if not texts:
        return []
    lengths = list(map(len, texts))
    starts = list(itertools.accumulate(map((1).__add__, lengths[:-1]), initial=0))
    cls = " ".join(texts).encode("ascii").translate(_CLASSES_CTRL)
    bad: set[int] = set()
    for pat in (b"ap", b"pa", b"  ", b"x"):
        i = cls.find(pat)
        while i >= 0:
            bad.add(bisect.bisect_right(starts, i) - 1)
            bad.add(bisect.bisect_right(starts, i + 1) - 1)  # a double space spans two texts
            i = cls.find(pat, i + 1)
    for j in (0, len(texts) - 1):
        if texts[j][:1] in ("", " ") or texts[j][-1:] == " ":
            bad.add(j)
    if 0 in lengths:
        bad.update(j for j, n in enumerate(lengths) if n == 0)
    return [j not in bad for j in range(len(texts))]


def _tokenized(text: str) -> bool:
    """No word character touches punctuation ("great ," not "great,"), for an ASCII text. Why
    bytes: ``bytes.translate`` + ``in`` cost a fraction of any regex scan of the text."""
    classes = text.encode("ascii").translate(_CLASSES)
    return b"ap" not in classes and b"pa" not in classes


@functools.cache
def _abbreviation_index() -> tuple[dict[str, str], dict[str, list[tuple[tuple[str, ...], str]]]]:
    """(single word -> abbreviation, first word -> [(following words, abbreviation)], longest
    phrase first)."""
    single: dict[str, str] = {}
    multi: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for phrase, abbr in ABBREVIATIONS.items():
        words = phrase.split()
        if len(words) == 1:
            single[phrase] = abbr
        else:
            multi.setdefault(words[0], []).append((tuple(words[1:]), abbr))
    for rules in multi.values():
        rules.sort(key=lambda r: -len(r[0]))
    return single, multi


@functools.cache
def _cased_singles() -> dict[str, str]:
    """Every single-word entry in its lower, Capitalised and ALL-CAPS spellings (and with a
    typographic apostrophe), mapped to the abbreviation in the same case: one dict look-up per
    word, done by ``map`` in C."""
    out: dict[str, str] = {}
    for word, abbr in _abbreviation_index()[0].items():
        for w in {word, word.replace("'", "’")}:
            for form in (w, w[:1].upper() + w[1:], w.upper()):
                out.setdefault(form, match_case(form, abbr))
    return out


@functools.cache
def _phrase_bigrams() -> frozenset[tuple[str, str]]:
    """The first two words of every phrase: texts without one skip the phrase pass."""
    return frozenset((head, rest[0]) for head, rules in _abbreviation_index()[1].items()
                     for rest, _ in rules)


@register
class InsertAbbreviation(Perturbation):
    """Words and phrases replaced by chat abbreviations ("you" -> "u", "the" -> "da", ...).

    Each match is replaced with probability ``prob`` (1.0, as in NL-Augmenter, replaces all).
    Matching is whole-word and longest-first (a phrase's words separated by whitespace only);
    lower-case, Capitalised and ALL-CAPS words match and keep their case (a phrase at ``prob``
    < 1 matches in any case). The lexicon is ``robustlab.perturbations.lexicons.ABBREVIATIONS``.
    """

    name = "insert_abbreviation"
    level = "word"
    source = "000"
    summary = "replaces words/phrases by abbreviations ('you'->'u', 'by the way'->'btw')"

    def __init__(self, prob: float = 1.0) -> None:
        self.prob = prob

    @property
    def deterministic(self) -> bool:  # type: ignore[override]
        """At prob 1.0 every match is replaced, so the seed has no effect."""
        return self.prob >= 1.0

    @property
    def randomness(self) -> str:  # type: ignore[override]
        return "none" if self.prob >= 1.0 else "bytes"

    def validate(self) -> None:
        check_prob(self.name, prob=self.prob)

    def apply(self, text: str, rng: Any) -> str:
        if self.prob >= 1.0:
            return self._replace(text, None)
        return super().apply(text, rng)

    def perturb_batch(self, texts, seed: int = 0) -> list[str]:
        if self.prob < 1.0:
            return super().perturb_batch(texts, seed)
        self._ready()
        texts = texts if isinstance(texts, list) else list(texts)
        out: list[str] = []
        for a in range(0, len(texts), 1024):
            out += self._replace_many(texts[a: a + 1024])
        return out

    def _replace_many(self, texts: list[str]) -> list[str]:
        """:meth:`_replace` for a chunk: tokenized ASCII texts (most of SST-2) in one pass, the
        others text by text (same outputs; tested)."""
        ascii_idx = [i for i, a in enumerate(map(str.isascii, texts)) if a]
        sub = [texts[i] for i in ascii_idx]
        fast = [i for i, ok in zip(ascii_idx, _tokenized_many(sub), strict=True) if ok]
        if len(fast) == len(texts):
            return self._replace_tokenized(texts)
        out = [self._replace(t, None) for t in texts] if not fast else list(texts)
        if fast:
            done = set(fast)
            for i, o in zip(fast, self._replace_tokenized([texts[i] for i in fast]), strict=True):
                out[i] = o
            for i in range(len(texts)):
                if i not in done:
                    out[i] = self._replace(texts[i], None)
        return out

    def _replace_tokenized(self, texts: list[str]) -> list[str]:
        """One split, one dict ``map`` and one join for the whole chunk; a Python step only
        where a phrase may start."""
        big = " \x1e ".join(texts)  # a record separator token between texts
        toks = big.split(" ")
        lw = toks if big.islower() else big.lower().split(" ")
        cased = _cased_singles()
        new: list[str | None] = list(map(cased.get, toks, toks))
        bigrams = _phrase_bigrams()
        hits = [i for i, b in enumerate(zip(lw, lw[1:], strict=False)) if b in bigrams]
        if hits:
            multi = _abbreviation_index()[1]
            free, n = 0, len(lw)
            for i in hits:
                if i < free:
                    continue
                for rest, abbr in multi[lw[i]]:
                    k = len(rest)
                    if i + k < n and all(lw[i + 1 + m] == rest[m] for m in range(k)):
                        new[i] = match_case(" ".join(toks[i: i + k + 1]), abbr)
                        for m in range(1, k + 1):
                            new[i + m] = None
                        free = i + k + 1
                        break
            new = [w for w in new if w is not None]
        return " ".join(new).split(" \x1e ")  # type: ignore[arg-type]

    def apply_stream(self, text: str, stream: Any) -> str:
        return self._replace(text, Draws(stream, 8))

    def _replace(self, text: str, draws: Draws | None) -> str:
        if draws is not None:
            return self._replace_each(text, draws)
        low = text.lower().replace("’", "'")
        if len(low) != len(text):  # a few characters lower-case to two ("İ")
            return self._replace_each(text, None)
        if text.isascii() and text.isprintable() and "  " not in text and _tokenized(text):
            # tokenized text (SST-2 style: punctuation apart, single spaces): splitting on " "
            # gives exactly the words and the separators the regex split would, at a quarter
            # of the cost
            parts = None
            words = text.split(" ")
            lwords = words if low == text else low.split(" ")
        else:
            parts = _WORD_SPLIT.split(text)
            words = parts[0::2]
            lwords = words if low == text else _WORD_SPLIT.split(low)[0::2]
        cased = _cased_singles()
        new = list(map(cased.get, words, words))  # C loop: abbreviation or the word itself
        bigrams = _phrase_bigrams()
        if not bigrams.isdisjoint(zip(lwords, lwords[1:], strict=False)):
            multi = _abbreviation_index()[1]
            i, n = 0, len(lwords)
            while i < n - 1:
                step = 1
                if (lwords[i], lwords[i + 1]) in bigrams:
                    for rest, abbr in multi[lwords[i]]:
                        k = len(rest)
                        if i + k < n and all(lwords[i + 1 + m] == rest[m] and (
                                parts is None or parts[2 * i + 2 * m + 1].isspace())
                                for m in range(k)):
                            found = (" ".join(words[i: i + k + 1]) if parts is None
                                     else "".join(parts[2 * i: 2 * (i + k) + 1]))
                            new[i] = match_case(found, abbr)
                            for m in range(1, k + 1):
                                new[i + m] = None
                                if parts is not None:
                                    parts[2 * (i + m) - 1] = ""
                            step = k + 1
                            break
                i += step
            if parts is None:
                new = [w for w in new if w is not None]
        if parts is None:
            out = " ".join(new)
        else:
            parts[0::2] = ["" if w is None else w for w in new]
            out = "".join(parts)
        return out if out != text else text

    def _replace_each(self, text: str, draws: Draws | None) -> str:
        """Why not one big regex: scanning every position of the text costs more than NL-
        Augmenter's own tokenizer; splitting once (C) and looking each word up in a dict is
        several times cheaper. Phrases need whitespace-only separators between their words."""
        parts = _WORD_SPLIT.split(text)
        single, multi = _abbreviation_index()
        norm = "’" in text
        prob = self.prob
        changed = False
        n = len(parts)
        j = 0
        while j < n:
            w = parts[j]
            if not w:
                j += 2
                continue
            low = w.lower().replace("’", "'") if norm else w.lower()
            step = 2
            abbr = None
            for rest, candidate in multi.get(low, ()):
                k = len(rest)
                if j + 2 * k < n and all(
                        parts[j + 2 * i + 1].isspace()
                        and (parts[j + 2 * i + 2].lower().replace("’", "'") if norm
                             else parts[j + 2 * i + 2].lower()) == rest[i]
                        for i in range(k)):
                    abbr, step = candidate, 2 * k + 2
                    break
            if abbr is None:
                abbr = single.get(low)
            if abbr is not None and (draws is None or draws.random() < prob):
                found = "".join(parts[j: j + step - 1])
                parts[j] = match_case(found, abbr)
                for i in range(j + 1, j + step - 1):
                    parts[i] = ""
                changed = True
            j += step
        return "".join(parts) if changed else text
