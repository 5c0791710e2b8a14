"""Paper 001's seven character-level perturbations (Moradi & Samwald 2021, section 4.1).

Each chooses up to ``pps`` distinct eligible words (runs of letters) at random and edits one
character position in each. Registry names: ``char_insert``, ``char_delete``, ``char_keyboard``,
``char_swap``, ``char_repeat``, ``misspelling``, ``letter_case``. The rest of the text (spaces,
punctuation, digits, other words) is returned unchanged.
"""

from __future__ import annotations

import functools
import json
import random
import re
import string

from robustlab.perturbations.lexicons import keyboard_neighbours
from robustlab.perturbations.named import register
from robustlab.perturbations.pps import PPSPerturbation
from robustlab.perturbations.text_utils import TOKEN_RE, WORD_RE, match_case
from robustlab.resources import MISSPELLINGS_FIX, misspellings_file
from robustlab.textfmt import note_once

__all__ = [
    "CharDelete",
    "CharInsert",
    "CharKeyboard",
    "CharRepeat",
    "CharSwap",
    "LetterCase",
    "Misspelling",
    "misspellings_by_correction",
]

#: a run of letters of any script (no apostrophes: a character edit stays inside one run)
LETTERS_RE = re.compile(r"[^\W\d_]+")
_LOWER = string.ascii_lowercase


class _CharEdit(PPSPerturbation):
    """Pick up to ``pps`` letter runs of at least ``min_len`` characters; edit each with ``edit``."""

    level = "character"
    min_len = 3

    def edit(self, word: str, rng: random.Random) -> str:
        raise NotImplementedError

    def eligible(self, word: str) -> bool:
        return True

    def apply(self, text: str, rng: random.Random) -> str:
        m = self.min_len
        spans = [s.span() for s in LETTERS_RE.finditer(text) if s.end() - s.start() >= m]
        if not spans:
            return text
        if type(self).eligible is _CharEdit.eligible:
            chosen = self.pick(rng, spans)
        else:
            chosen = self._pick_eligible(text, spans, rng)
        if not chosen:
            return text
        chosen.sort()
        parts, pos, edit = [], 0, self.edit
        for a, b in chosen:
            parts.append(text[pos:a])
            parts.append(edit(text[a:b], rng))
            pos = b
        parts.append(text[pos:])
        return "".join(parts)

    def _pick_eligible(self, text: str, spans: list[tuple[int, int]], rng: random.Random):
        """Up to pps eligible spans. Why not filter first: checking a few random words is much
        cheaper than checking all of them, and nearly every word is eligible."""
        el, n, want = self.eligible, len(spans), min(self.pps, len(spans))
        chosen: list[tuple[int, int]] = []
        for _ in range(2 * want + 4):
            span = spans[int(rng.random() * n)]
            if span not in chosen and el(text[span[0]:span[1]]):
                chosen.append(span)
                if len(chosen) == want:
                    return chosen
        rest = [s for s in spans if s not in chosen and el(text[s[0]:s[1]])]
        return chosen + self.pick(rng, rest)[: want - len(chosen)] if rest else chosen


@register
class CharInsert(_CharEdit):
    """A random letter inserted at an inner position of a word of >= 3 letters."""

    name = "char_insert"
    summary = "inserts a random letter inside a word (not first/last position)"

    def edit(self, word: str, rng: random.Random) -> str:
        i = 1 + int(rng.random() * (len(word) - 1))  # before an inner or the last char
        c = _LOWER[int(rng.random() * 26)]
        return word[:i] + (c.upper() if word.isupper() else c) + word[i:]


@register
class CharDelete(_CharEdit):
    """One inner letter deleted from a word of >= 3 letters (never the first or the last)."""

    name = "char_delete"
    summary = "deletes an inner letter of a word"

    def edit(self, word: str, rng: random.Random) -> str:
        i = 1 + int(rng.random() * (len(word) - 2))
        return word[:i] + word[i + 1 :]


@register
class CharKeyboard(_CharEdit):
    """One letter replaced by a neighbouring QWERTY key (only letters a-z/A-Z are eligible)."""

    name = "char_keyboard"
    summary = "replaces a letter by a keyboard-adjacent one"
    min_len = 1

    def eligible(self, word: str) -> bool:
        kb = keyboard_neighbours()
        return any(c in kb for c in word)

    def edit(self, word: str, rng: random.Random) -> str:
        kb = keyboard_neighbours()
        idx = [i for i, c in enumerate(word) if c in kb]
        i = idx[int(rng.random() * len(idx))]
        near = kb[word[i]]
        return word[:i] + near[int(rng.random() * len(near))] + word[i + 1 :]


@register
class CharSwap(_CharEdit):
    """Two adjacent, different letters of a word swapped."""

    name = "char_swap"
    summary = "swaps a letter with its left or right neighbour"
    min_len = 2

    def eligible(self, word: str) -> bool:
        return any(a != b for a, b in zip(word, word[1:], strict=False))

    def edit(self, word: str, rng: random.Random) -> str:
        idx = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
        i = idx[int(rng.random() * len(idx))]
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]


@register
class CharRepeat(_CharEdit):
    """An inner letter of a word of >= 3 letters repeated (a copy inserted right after it)."""

    name = "char_repeat"
    summary = "repeats an inner letter of a word"

    def edit(self, word: str, rng: random.Random) -> str:
        i = 1 + int(rng.random() * (len(word) - 2))
        return word[: i + 1] + word[i:]


@register
class LetterCase(_CharEdit):
    """The case of the first letter, or of all letters, of a word toggled (chosen at random).

    Not asymmetric: toggling the same word again restores it, so g(g(x)) == x happens often.
    """

    name = "letter_case"
    summary = "toggles the case of the first or of all letters of a word"
    asymmetric = False
    min_len = 1

    def eligible(self, word: str) -> bool:
        return word != word.swapcase()

    def edit(self, word: str, rng: random.Random) -> str:
        if rng.random() < 0.5 and word[0] != word[0].swapcase():
            return word[0].swapcase() + word[1:]
        return word.swapcase()


@functools.cache
def misspellings_by_correction() -> dict[str, tuple[str, ...]]:
    """The misspelling list inverted: correct word (lower case) -> its common misspellings.

    From Wikipedia's list of common misspellings (paper 001's source; a JSON dict misspelling
    -> [corrections]) when :func:`robustlab.resources.misspellings_file` finds it; a misspelling
    listed for several words ("wich" -> which, witch) is a misspelling of each. From codespell's
    dictionary only as the named fallback, keeping its unambiguous entries (one correction of
    >= 3 letters: its typos of short words, "wew" for "we", are code typos). Only one-word
    corrections and misspellings are kept; a capitalised entry ("Britian" -> "Britain") is
    stored in lower case and takes the case of the word it replaces.
    """
    path, kind, _ = misspellings_file()
    inverted: dict[str, list[str]] = {}
    if kind == "wikipedia":
        with open(path, encoding="utf-8") as fh:
            table = json.load(fh)
        pairs = [(wrong, right) for wrong, rights in table.items() for right in rights]
    else:
        pairs = []
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                wrong, arrow, right = line.strip().partition("->")
                if arrow and "," not in right and len(right) >= 3:
                    pairs.append((wrong, right))
    for wrong, right in pairs:
        right, wrong = right.strip(), wrong.strip()
        if not (WORD_RE.fullmatch(right) and WORD_RE.fullmatch(wrong)):
            continue
        if right[:1].isupper() or wrong.lower() == right.lower():
            wrong = wrong.lower() if wrong.lower() != right.lower() else ""
        if wrong:
            inverted.setdefault(right.lower(), []).append(wrong)
    return {k: tuple(dict.fromkeys(v)) for k, v in inverted.items()}


@register
class Misspelling(PPSPerturbation):
    """Words on Wikipedia's list of common misspellings replaced by one of their misspellings
    (paper 001). Whole tokens only: a part of a compound ("well-known") or a clitic is never
    replaced. Without the Wikipedia list, codespell's dictionary stands in (said on stderr and
    recorded as the fallback among a run's inputs)."""

    name = "misspelling"
    level = "character"
    heavy = True
    version = 3  # Wikipedia's list; whole tokens (9/11, $8, and/or, parents', URLs: issue 33)
    summary = "replaces words by a common misspelling (Wikipedia's list)"
    reads = ("misspellings",)

    def setup(self) -> None:
        _, kind, origin = misspellings_file()
        if kind != "wikipedia":
            note_once(f"note: misspelling: {origin}; its outputs differ from paper 001's "
                      f"(fix: {MISSPELLINGS_FIX})")  # once per process, not per cell or seed
        self._table = misspellings_by_correction()

    def apply(self, text: str, rng: random.Random) -> str:
        table = getattr(self, "_table", None) or misspellings_by_correction()
        spans = [m for m in TOKEN_RE.finditer(text) if m.group().lower() in table]
        chosen = sorted(m.span() for m in self.pick(rng, spans))
        if not chosen:
            return text
        parts, pos = [], 0
        for a, b in chosen:
            word = text[a:b]
            options = table[word.lower()]
            parts.append(text[pos:a])
            parts.append(match_case(word, options[int(rng.random() * len(options))]))
            pos = b
        parts.append(text[pos:])
        return "".join(parts)
