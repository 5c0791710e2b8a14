"""The eight perturbations of the learnability papers (000 and 003), names as there.

Behaviour and default intensities follow the papers (000, Figure 3 and section 4.1) and, where they
say no more, NL-Augmenter's transformations of the same name. Differences from NL-Augmenter are
deliberate and documented in docs/perturbations.md: randomness comes only from the ``rng`` given
(NL-Augmenter reseeds the global ``random``), a keyboard typo always changes the letter, and the
tables are robustlab's own (``robustlab.adapters.lexicons``).
"""

from __future__ import annotations

import functools
import random
import re

from robustlab.adapters.base import Perturbation, PerturbationError
from robustlab.adapters.lexicons import (
    ABBREVIATIONS,
    LEET,
    keyboard_neighbours,
    punctuation_doubling_table,
    visual_lookalikes,
)
from robustlab.adapters.registry import register
from robustlab.adapters.text_utils import bernoulli_positions, match_case

__all__ = [
    "ButterFingers",
    "DuplicatePunctuations",
    "InsertAbbreviation",
    "LeetLetters",
    "RandomUpper",
    "ShuffleWord",
    "VisualAttackLetters",
    "WhitespacePerturbation",
]


def _check_prob(owner: str, **probs: float) -> None:
    for name, value in probs.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
            raise PerturbationError(f"{owner}: {name} must be a number in [0, 1], got {value!r}")


def _substitute(text: str, positions, table, rng: random.Random) -> str:
    """Replace each char at ``positions`` found in ``table`` by a random choice of its entry."""
    chars: list[str] | None = None
    rand = rng.random
    get = table.get
    for i in positions:
        options = get(text[i])
        if options:
            if chars is None:
                chars = list(text)
            chars[i] = options[int(rand() * len(options))]
    return text if chars is None else "".join(chars)


@register
class DuplicatePunctuations(Perturbation):
    """Every punctuation mark doubled ("," -> ",,"): the papers' own design, no randomness."""

    name = "duplicate_punctuations"
    level = "character"
    deterministic = True
    source = "000"
    summary = "doubles every punctuation mark ('!' -> '!!')"

    def setup(self) -> None:
        self._table = punctuation_doubling_table()

    def apply(self, text: str, rng: random.Random) -> str:
        table = getattr(self, "_table", None) or punctuation_doubling_table()
        return text.translate(table)


@register
class ButterFingers(Perturbation):
    """Keyboard typos: each letter replaced by a neighbouring QWERTY key with probability ``prob``."""

    name = "butter_fingers_perturbation"
    level = "character"
    source = "000"
    summary = "keyboard-neighbour typos, each letter with probability prob"

    def __init__(self, prob: float = 0.05) -> None:
        self.prob = prob

    def validate(self) -> None:
        _check_prob(self.name, prob=self.prob)

    def apply(self, text: str, rng: random.Random) -> str:
        positions = bernoulli_positions(len(text), self.prob, rng)
        return _substitute(text, positions, keyboard_neighbours(), rng)


@register
class ShuffleWord(Perturbation):
    """All whitespace-separated words in random order, joined by single spaces."""

    name = "shuffle_word"
    level = "word"
    source = "000"
    summary = "shuffles the order of all words"

    def apply(self, text: str, rng: random.Random) -> str:
        words = text.split()
        if len(words) < 2 or len(set(words)) < 2:
            return text
        original = list(words)
        for _ in range(10):  # a shuffle equal to the original order would be a silent no-op
            rng.shuffle(words)
            if words != original:
                break
        return " ".join(words)


@register
class RandomUpper(Perturbation):
    """``corrupt_proportion`` of the character positions, drawn without replacement, upper-cased."""

    name = "random_upper_transformation"
    level = "character"
    source = "000"
    summary = "upper-cases a random proportion of the characters"

    def __init__(self, corrupt_proportion: float = 0.1) -> None:
        self.corrupt_proportion = corrupt_proportion

    def validate(self) -> None:
        _check_prob(self.name, corrupt_proportion=self.corrupt_proportion)

    def apply(self, text: str, rng: random.Random) -> str:
        k = int(len(text) * self.corrupt_proportion)
        if k == 0:
            return text
        n = len(text)
        if 4 * k < n:  # few positions: rejection sampling is much cheaper than rng.sample
            picked: set[int] = set()
            rand = rng.random
            while len(picked) < k:
                picked.add(int(rand() * n))
        else:
            picked = set(rng.sample(range(n), k))
        chars = list(text)
        for i in picked:
            chars[i] = chars[i].upper()
        return "".join(chars)


@functools.cache
def _abbreviation_regex() -> re.Pattern[str]:
    phrases = sorted(ABBREVIATIONS, key=len, reverse=True)  # longest match first
    body = "|".join(re.escape(p).replace(r"\ ", r"\s+") for p in phrases)
    return re.compile(rf"(?<![\w'’])(?:{body})(?![\w'’])", re.IGNORECASE)


@register
class InsertAbbreviation(Perturbation):
    """Words and phrases replaced by chat abbreviations ("you" -> "u", "was" -> "wuz", ...).

    Each match is replaced with probability ``prob`` (1.0, as in NL-Augmenter, replaces all).
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

    def validate(self) -> None:
        _check_prob(self.name, prob=self.prob)

    def apply(self, text: str, rng: random.Random) -> str:
        prob, rand = self.prob, rng.random

        def repl(m: re.Match[str]) -> str:
            if prob < 1.0 and rand() >= prob:
                return m.group(0)
            found = m.group(0)
            return match_case(found, ABBREVIATIONS[" ".join(found.lower().split())])

        return _abbreviation_regex().sub(repl, text)


@register
class WhitespacePerturbation(Perturbation):
    """Each whitespace removed with ``remove_prob``; a space added after other chars with ``add_prob``."""

    name = "whitespace_perturbation"
    level = "character"
    source = "000"
    summary = "randomly removes spaces and inserts spaces inside words"

    def __init__(self, remove_prob: float = 0.1, add_prob: float = 0.05) -> None:
        self.remove_prob = remove_prob
        self.add_prob = add_prob

    def validate(self) -> None:
        _check_prob(self.name, remove_prob=self.remove_prob, add_prob=self.add_prob)

    def apply(self, text: str, rng: random.Random) -> str:
        # one Bernoulli(q) stream at the larger rate, thinned per character kind: the same
        # per-character probabilities as drawing one uniform per character, at a fraction of the cost
        q = max(self.remove_prob, self.add_prob)
        if q <= 0:
            return text
        keep_space, add = self.remove_prob / q, self.add_prob / q
        parts: list[str] = []
        pos = 0
        rand = rng.random
        for i in bernoulli_positions(len(text), q, rng):
            c = text[i]
            if c.isspace():
                if keep_space >= 1.0 or rand() < keep_space:
                    parts.append(text[pos:i])
                    pos = i + 1
            elif add >= 1.0 or rand() < add:
                parts.append(text[pos : i + 1])
                parts.append(" ")
                pos = i + 1
        if not parts:
            return text
        parts.append(text[pos:])
        return "".join(parts)


@register
class VisualAttackLetters(Perturbation):
    """Each Latin letter replaced, with probability ``perturb_pct``, by a visually similar letter."""

    name = "visual_attack_letters"
    level = "character"
    source = "000"
    summary = "letters -> visually similar Unicode letters ('a' -> 'ạ', 'o' -> 'о')"

    def __init__(self, perturb_pct: float = 0.5) -> None:
        self.perturb_pct = perturb_pct

    def validate(self) -> None:
        _check_prob(self.name, perturb_pct=self.perturb_pct)

    def apply(self, text: str, rng: random.Random) -> str:
        # Half of all letters change at the default rate, so skipping ahead does not pay; one
        # getrandbits call gives two random bytes per character instead: byte 1 decides (p is
        # quantised to 1/256, exact for the default 0.5), byte 2 picks the look-alike.
        n = len(text)
        thr = round(self.perturb_pct * 256)
        if n == 0 or thr == 0:
            return text
        rb = rng.getrandbits(16 * n).to_bytes(2 * n, "little")
        get = visual_lookalikes().get
        chars = list(text)
        i = 0
        for c in text:
            o = get(c)
            if o is not None and rb[i] < thr:
                chars[i] = o[(rb[n + i] * len(o)) >> 8]
            i += 1
        return "".join(chars)


@register
class LeetLetters(Perturbation):
    """Leet encoding (e->3, o->0, ...): ``int(max_leet * len(text))`` draws, with replacement,
    among the encodable characters (NL-Augmenter's rule), each drawn one encoded."""

    name = "leet_letters"
    level = "character"
    source = "000"
    summary = "leet encoding of letters (e->3, o->0, h->4)"

    def __init__(self, max_leet: float = 0.5) -> None:
        self.max_leet = max_leet

    def validate(self) -> None:
        _check_prob(self.name, max_leet=self.max_leet)

    def apply(self, text: str, rng: random.Random) -> str:
        k = int(self.max_leet * len(text))
        if k == 0:
            return text
        leet = LEET
        candidates = [i for i, c in enumerate(text) if c in leet]
        if not candidates:
            return text
        chars = list(text)
        for i in rng.choices(candidates, k=k):
            chars[i] = leet[text[i]]
        return "".join(chars)
