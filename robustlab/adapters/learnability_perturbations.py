"""The eight perturbations of the learnability papers (000 and 003), names as there.

Behaviour and default intensities follow the papers (000, Figure 3 and section 4.1) and, where they
say no more, NL-Augmenter's transformations of the same name. Differences from NL-Augmenter are
deliberate and documented in docs/perturbations.md: randomness comes only from the per-text stream
(NL-Augmenter reseeds the global ``random``), a keyboard typo always changes the letter, and the
tables are robustlab's own (``robustlab.adapters.lexicons``).

Speed (``bench/bench_perturbations.py``): every perturbation here is at least 3x NL-Augmenter's
equivalent. Randomness is read from a per-text byte stream (``randomness = "bytes"``, see
:mod:`robustlab.adapters.base`) or not built at all (``"none"``); per-character decisions go
through precomputed tables: ``str.translate`` with a list table, numpy look-ups over a whole
chunk of texts (visual, leet), or geometric skips that cost one draw per *edit* (typos, spaces).
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any

from robustlab.adapters.base import Perturbation, PerturbationError
from robustlab.adapters.byte_draws import Draws, u32s
from robustlab.adapters.codepoints import decode, encode
from robustlab.adapters.lexicons import (
    ABBREVIATIONS,
    LEET,
    keyboard_neighbours,
    punctuation_doubling_list,
    visual_lookalikes,
)
from robustlab.adapters.registry import register
from robustlab.adapters.text_utils import match_case

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


def _geometric_gaps(p: float, draws: Draws):
    """Gaps between Bernoulli(p) successes (0 < p < 1): one draw per success, not per char."""
    log_q = math.log1p(-p)
    log, rand = math.log, draws.random
    while True:
        yield 1 + int(log(1.0 - rand()) / log_q)


@register
class DuplicatePunctuations(Perturbation):
    """Every punctuation mark doubled ("," -> ",,"): the papers' own design, no randomness.

    ``str.translate`` with a list table (index = code point) instead of a dict: the same work at
    a third of the cost (a list is indexed, a dict hashed, per character)."""

    name = "duplicate_punctuations"
    level = "character"
    deterministic = True
    randomness = "none"
    source = "000"
    summary = "doubles every punctuation mark ('!' -> '!!')"

    def apply(self, text: str, rng: Any) -> str:
        return text.translate(punctuation_doubling_list())

    def perturb_batch(self, texts, seed: int = 0) -> list[str]:
        self._ready()
        table = punctuation_doubling_list()
        return [t.translate(table) for t in texts]


@register
class ButterFingers(Perturbation):
    """Keyboard typos: each letter replaced by a neighbouring QWERTY key with probability ``prob``."""

    name = "butter_fingers_perturbation"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "keyboard-neighbour typos, each letter with probability prob"

    def __init__(self, prob: float = 0.05) -> None:
        self.prob = prob

    def validate(self) -> None:
        _check_prob(self.name, prob=self.prob)

    def apply_stream(self, text: str, stream: Any) -> str:
        n, p = len(text), self.prob
        if n == 0 or p <= 0:
            return text
        draws = Draws(stream, 2 * n * p + 8)
        get = keyboard_neighbours().get
        chars: list[str] | None = None
        gaps = iter(lambda: 1, 0) if p >= 1 else _geometric_gaps(p, draws)
        i = -1
        for gap in gaps:
            i += gap
            if i >= n:
                break
            options = get(text[i])
            if options:
                if chars is None:
                    chars = list(text)
                chars[i] = options[draws.below(len(options))]
        return text if chars is None else "".join(chars)


@register
class ShuffleWord(Perturbation):
    """All whitespace-separated words in random order, joined by single spaces.

    The order sorts the words by 32-bit keys read from the stream (a uniform permutation up to
    ties, which break by position, probability < n**2 / 2**33); an order equal to the original
    is redrawn (a silent no-op otherwise), up to 10 times."""

    name = "shuffle_word"
    level = "word"
    randomness = "bytes"
    source = "000"
    summary = "shuffles the order of all words"

    def apply_stream(self, text: str, stream: Any) -> str:
        words = text.split()
        n = len(words)
        if n < 2 or len(set(words)) < 2:
            return text
        blob = stream.digest(40 * n)  # room for the 10 draws
        for t in range(10):
            keys = u32s(blob[4 * n * t: 4 * n * (t + 1)])
            new = [words[i] for i in sorted(range(n), key=keys.__getitem__)]
            if new != words:
                break
        return " ".join(new)


@register
class RandomUpper(Perturbation):
    """``corrupt_proportion`` of the character positions, drawn without replacement, upper-cased."""

    name = "random_upper_transformation"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "upper-cases a random proportion of the characters"

    def __init__(self, corrupt_proportion: float = 0.1) -> None:
        self.corrupt_proportion = corrupt_proportion

    def validate(self) -> None:
        _check_prob(self.name, corrupt_proportion=self.corrupt_proportion)

    def apply_stream(self, text: str, stream: Any) -> str:
        n = len(text)
        k = int(n * self.corrupt_proportion)
        if k == 0:
            return text
        draws = Draws(stream, 2 * k + 8)
        below = draws.below
        if 4 * k < n:  # few positions: rejection sampling
            picked: set[int] | list[int] = set()
            while len(picked) < k:
                picked.add(below(n))
        else:  # partial Fisher-Yates
            perm = list(range(n))
            for t in range(k):
                j = t + below(n - t)
                perm[t], perm[j] = perm[j], perm[t]
            picked = perm[:k]
        chars = list(text)
        for i in picked:
            chars[i] = chars[i].upper()
        return "".join(chars)


def _trie_regex(phrases: list[str]) -> str:
    """One alternation with shared prefixes factored out (a character trie): ``re`` then tries
    a handful of branches per position instead of every phrase. Spaces match any whitespace."""
    trie: dict = {}
    for ph in phrases:
        node = trie
        for ch in ph:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        end = "" in node
        alts = [(r"\s+" if ch == " " else re.escape(ch)) + build(sub)
                for ch, sub in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if end else body

    return build(trie)


@functools.cache
def _abbreviation_regex(ignore_case: bool) -> re.Pattern[str]:
    # whole words only: not inside a word, a contraction or a hyphenated compound ("be-all")
    body = _trie_regex(list(ABBREVIATIONS))
    return re.compile(rf"(?<![\w'’-])(?:{body})(?![\w'’-])", re.IGNORECASE if ignore_case else 0)


_APOSTROPHES = str.maketrans({"’": "'"})


@register
class InsertAbbreviation(Perturbation):
    """Words and phrases replaced by chat abbreviations ("you" -> "u", "the" -> "da", ...).

    Each match is replaced with probability ``prob`` (1.0, as in NL-Augmenter, replaces all).
    Matching is whole-word, case-insensitive and longest-first; the first letter's case (or ALL
    CAPS) is kept. The lexicon is ``robustlab.adapters.lexicons.ABBREVIATIONS``.
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
        _check_prob(self.name, prob=self.prob)

    def apply(self, text: str, rng: Any) -> str:
        if self.prob >= 1.0:
            return self._replace(text, None)
        return super().apply(text, rng)

    def apply_stream(self, text: str, stream: Any) -> str:
        return self._replace(text, Draws(stream, 8))

    def _replace(self, text: str, draws: Draws | None) -> str:
        low = text.lower().translate(_APOSTROPHES)
        if len(low) == len(text):  # same positions: match the lowered copy, no IGNORECASE
            matches = _abbreviation_regex(False).finditer(low)
        else:  # a few characters lower-case to two ("İ"): match the text itself
            matches = _abbreviation_regex(True).finditer(text)
        parts: list[str] = []
        pos = 0
        prob = self.prob
        for m in matches:
            if draws is not None and draws.random() >= prob:
                continue
            a, b = m.span()
            found = text[a:b]
            key = " ".join(found.lower().replace("’", "'").split())
            parts.append(text[pos:a])
            parts.append(match_case(found, ABBREVIATIONS[key]))
            pos = b
        if not parts:
            return text
        parts.append(text[pos:])
        return "".join(parts)


@register
class WhitespacePerturbation(Perturbation):
    """Each whitespace removed with ``remove_prob``; a space added after other chars with ``add_prob``."""

    name = "whitespace_perturbation"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "randomly removes spaces and inserts spaces inside words"

    def __init__(self, remove_prob: float = 0.1, add_prob: float = 0.05) -> None:
        self.remove_prob = remove_prob
        self.add_prob = add_prob

    def validate(self) -> None:
        _check_prob(self.name, remove_prob=self.remove_prob, add_prob=self.add_prob)

    def apply_stream(self, text: str, stream: Any) -> str:
        # one Bernoulli(q) stream at the larger rate, thinned per character kind: the same
        # per-character probabilities as one uniform per character, at one draw per candidate
        n = len(text)
        q = max(self.remove_prob, self.add_prob)
        if q <= 0 or n == 0:
            return text
        keep_space, add = self.remove_prob / q, self.add_prob / q
        draws = Draws(stream, 3 * n * q + 8)
        rand = draws.random
        gaps = iter(lambda: 1, 0) if q >= 1 else _geometric_gaps(q, draws)
        parts: list[str] = []
        pos, i = 0, -1
        for gap in gaps:
            i += gap
            if i >= n:
                break
            if text[i].isspace():
                if keep_space >= 1.0 or rand() < keep_space:
                    parts.append(text[pos:i])
                    pos = i + 1
            elif add >= 1.0 or rand() < add:
                parts.append(text[pos: i + 1])
                parts.append(" ")
                pos = i + 1
        if not parts:
            return text
        parts.append(text[pos:])
        return "".join(parts)


@functools.cache
def _lookalike_tables() -> tuple[Any, Any]:
    """(count, options) numpy tables over ASCII code points for the visual look-alikes."""
    import numpy as np

    table = visual_lookalikes()
    width = max(len(v) for v in table.values())
    count = np.zeros(128, dtype=np.uint64)
    options = np.zeros((128, width), dtype=np.uint32)
    for c, opts in table.items():
        count[ord(c)] = len(opts)
        options[ord(c), : len(opts)] = [ord(o) for o in opts]
    return count, options


@register
class VisualAttackLetters(Perturbation):
    """Each Latin letter replaced, with probability ``perturb_pct``, by a visually similar letter.

    One 32-bit value u per character decides and picks: replaced when u < t = round(p * 2**32),
    then look-alike number (u * m) // t of its m (uniform up to m / t, < 1e-6 at the default)."""

    name = "visual_attack_letters"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "letters -> visually similar Unicode letters ('a' -> 'ạ', 'o' -> 'о')"

    def __init__(self, perturb_pct: float = 0.5) -> None:
        self.perturb_pct = perturb_pct

    def validate(self) -> None:
        _check_prob(self.name, perturb_pct=self.perturb_pct)

    def apply_many(self, texts: list[str], streams: list[Any]) -> list[str]:
        import numpy as np

        thr = round(self.perturb_pct * 2**32)
        if thr == 0:
            return list(texts)
        count, options = _lookalike_tables()
        u = np.frombuffer(b"".join(s.digest(4 * len(t)) for t, s in zip(texts, streams,
                                                                         strict=True)),
                          dtype="<u4").astype(np.uint64)
        cps = encode(texts)
        idx = np.minimum(cps, 127)  # 127 (DEL) has no look-alikes: stands for every non-ASCII
        m = count[idx]
        hit = (u < thr) & (m > 0)
        pick = np.minimum((u * m) // thr, options.shape[1] - 1)
        new = np.where(hit, options[idx, pick], cps)
        return decode(new, [len(t) for t in texts])


@functools.cache
def _leet_tables() -> tuple[Any, Any, frozenset[str]]:
    """(candidate?, single-char replacement) numpy tables over ASCII, and the keys whose
    replacement is longer than one character (spliced afterwards)."""
    import numpy as np

    is_cand = np.zeros(128, dtype=bool)
    repl = np.arange(128, dtype=np.uint32)
    multi = set()
    for c, r in LEET.items():
        is_cand[ord(c)] = True
        if len(r) == 1:
            repl[ord(c)] = ord(r)
        else:
            multi.add(c)
    return is_cand, repl, frozenset(multi)


@register
class LeetLetters(Perturbation):
    """Leet encoding (e->3, o->0, ...): ``int(max_leet * len(text))`` draws, with replacement,
    among the encodable characters (NL-Augmenter's rule), each drawn one encoded."""

    name = "leet_letters"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "leet encoding of letters (e->3, o->0, h->4)"

    def __init__(self, max_leet: float = 0.5) -> None:
        self.max_leet = max_leet

    def validate(self) -> None:
        _check_prob(self.name, max_leet=self.max_leet)

    def apply_many(self, texts: list[str], streams: list[Any]) -> list[str]:
        import numpy as np

        is_cand, repl, multi = _leet_tables()
        lengths = [len(t) for t in texts]
        cps = encode(texts)
        cand = is_cand[np.minimum(cps, 127)] & (cps < 128)
        pos = np.flatnonzero(cand)  # global positions of the encodable characters
        starts = np.cumsum([0, *lengths])
        per_text = np.diff(np.searchsorted(pos, starts))  # candidates per text
        first = np.searchsorted(pos, starts[:-1])  # index in pos of each text's first one
        ks = [int(self.max_leet * n) if c else 0 for n, c in zip(lengths, per_text.tolist(),
                                                                   strict=True)]
        if not any(ks):
            return list(texts)
        u = np.frombuffer(b"".join(s.digest(4 * k) for s, k in zip(streams, ks, strict=True)
                                   if k), dtype="<u4").astype(np.uint64)
        kk = np.asarray(ks)
        c = np.repeat(per_text.astype(np.uint64), kk)
        drawn = pos[np.repeat(first, kk) + ((u * c) >> np.uint64(32)).astype(np.int64)]
        new = cps.copy()
        new[drawn] = repl[cps[drawn]]
        out = decode(new, lengths)
        if multi:  # "N" -> "11": splice the multi-character encodings into the texts
            multi_cps = [ord(m) for m in multi]
            special = np.unique(drawn[np.isin(cps[drawn], multi_cps)])
            if len(special):
                owner = np.searchsorted(starts, special, side="right") - 1
                for t in np.unique(owner).tolist():
                    chars = list(out[t])
                    for g in special[owner == t].tolist():
                        i = g - int(starts[t])
                        chars[i] = LEET[chars[i]]
                    out[t] = "".join(chars)
        return out
