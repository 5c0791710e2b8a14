"""The eight perturbations of the learnability papers (000 and 003), names as there.

Behaviour and default intensities follow the papers (000, Figure 3 and section 4.1) and, where they
say no more, NL-Augmenter's transformations of the same name. Differences from NL-Augmenter are
deliberate and documented in docs/perturbations.md: randomness comes only from the per-text stream
(NL-Augmenter reseeds the global ``random`` with the same seed before every text), a keyboard typo
always changes the letter, and the tables are robustlab's own (``robustlab.perturbations.lexicons``),
made to behave like NL-Augmenter's where that changes what a model sees (measured by
``bench/bench_perturbation_fidelity.py``). ``--perturbations papers`` runs NL-Augmenter's own
code instead (:mod:`robustlab.perturbations.presets`).

Speed (``bench/bench_perturbations.py``): every perturbation here is at least 3x NL-Augmenter's
equivalent. Randomness is read from a per-text byte stream (``randomness = "bytes"``, see
:mod:`robustlab.perturbations.base`) or not built at all (``"none"``); per-character decisions go
through precomputed tables: ``str.translate`` with a list table, numpy look-ups over a whole
chunk of texts (visual, leet), or geometric skips that cost one draw per *edit* (typos, spaces).
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
from typing import Any

from robustlab.perturbations.abbreviations import InsertAbbreviation
from robustlab.perturbations.base import Perturbation, check_prob
from robustlab.perturbations.byte_draws import Draws
from robustlab.perturbations.codepoints import decode, encode
from robustlab.perturbations.lexicons import (
    LEET,
    keyboard_typos,
    punctuation_doubling_list,
    visual_lookalikes,
)
from robustlab.perturbations.named import register

_ENCODE = operator.methodcaller("encode", "utf-8", "surrogatepass")

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
    """Keyboard typos: each letter, with probability ``prob``, replaced by a letter key near it.

    "Near" is NL-Augmenter's reach (``lexicons.keyboard_typos``: keys within 2.5 key widths, of
    which touching keys are about 40 %), not only the touching keys; unlike NL-Augmenter, whose
    lists include the key itself, a typo always changes the letter."""

    name = "butter_fingers_perturbation"
    level = "character"
    randomness = "bytes"
    source = "000"
    summary = "keyboard-neighbour typos, each letter with probability prob"

    def __init__(self, prob: float = 0.05) -> None:
        self.prob = prob

    def validate(self) -> None:
        check_prob(self.name, prob=self.prob)

    def apply_stream(self, text: str, stream: Any) -> str:
        n, p = len(text), self.prob
        if n == 0 or p <= 0:
            return text
        draws = Draws(stream, 2 * n * p + 8)
        get = keyboard_typos().get
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


_GOLDEN = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1


def _splitmix64(x: Any) -> Any:
    """SplitMix64's finaliser (numpy uint64 arrays, wrapping): a counter -> a random word."""
    import numpy as np

    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@register
class ShuffleWord(Perturbation):
    """All whitespace-separated words in random order, joined by single spaces.

    Randomness ("bulk"): each text's 64-bit key hashes the text and (seed, name) (see
    ``_text_keys``); word i gets the sort key SplitMix64(key + (i + 1) * golden ratio), and the words are
    sorted by it (a uniform permutation up to 64-bit ties, broken by position). Hashing, keys,
    sorting and joining run over a whole chunk of texts in C/numpy, which is what makes it faster
    than a plain ``random.shuffle`` loop. An order that gives the text (or its words) back would
    be a silent no-op, so it is redrawn with the next counter block, up to 10 times; a text whose
    words are all equal comes back unchanged."""

    name = "shuffle_word"
    level = "word"
    randomness = "bulk"
    source = "000"
    summary = "shuffles the order of all words"

    def perturb_many(self, texts: list[str], seed: int) -> list[str]:
        import numpy as np

        split = list(map(str.split, texts))
        sizes = np.fromiter(map(len, split), dtype=np.int64, count=len(split))
        sel = np.flatnonzero(sizes > 1)
        if not len(sel):
            return list(texts)
        partial = len(sel) < len(texts)
        sel_list = sel.tolist()
        originals = [texts[i] for i in sel_list] if partial else texts
        if partial:
            split = [split[i] for i in sel_list]
            sizes = sizes[sel]
        keys = self._text_keys(originals, seed)
        ends = np.cumsum(sizes)
        rank = np.arange(int(ends[-1]), dtype=np.uint64) - np.repeat(
            (ends - sizes).astype(np.uint64), sizes)
        word_keys = _splitmix64(np.repeat(keys, sizes) + (rank + np.uint64(1)) * np.uint64(_GOLDEN))
        owner = np.repeat(np.arange(len(sizes), dtype=np.uint64), sizes)
        # by text, then the key's top 32 bits; a stable sort breaks ties by position
        order = np.argsort((owner << np.uint64(32)) | (word_keys >> np.uint64(32)), kind="stable")
        moved = np.concatenate([[0], np.cumsum(order != np.arange(len(order)))])
        fixed = moved[ends] == moved[ends - sizes]  # identity order
        words = list(itertools.chain.from_iterable(split))
        words.append("\n")  # split() leaves no whitespace in words: "\n" marks text ends
        idx = np.insert(order, ends[:-1], len(words) - 1)
        pieces = " ".join(operator.itemgetter(*idx.tolist())(words)).split(" \n ")
        same = np.fromiter(map(operator.eq, pieces, originals), dtype=bool, count=len(pieces))
        for j in np.flatnonzero(fixed | same).tolist():
            new = self._redraw(split[j], int(keys[j]))
            pieces[j] = originals[j] if new is None else " ".join(new)
        if not partial:
            return pieces
        out = list(texts)
        for i, piece in zip(sel_list, pieces, strict=True):
            out[i] = piece
        return out

    def _text_keys(self, texts: list[str], seed: int) -> Any:
        """A 64-bit key per text: CRC-32 of its UTF-8 bytes and its length, mixed with a BLAKE2b
        digest of (seed, name) through SplitMix64. Why CRC-32: one C call per text (a keyed
        BLAKE2b object per text cost as much as the whole shuffle); it only seeds the word keys,
        and equal CRCs of two different texts (p = 2**-32) just give them related orders."""
        import hashlib
        import zlib

        import numpy as np

        salt = int.from_bytes(hashlib.blake2b(f"{int(seed)}|{self.name}".encode(),
                                              digest_size=8).digest(), "little")
        n = len(texts)
        crc = np.fromiter(map(zlib.crc32, map(_ENCODE, texts)), dtype=np.uint64, count=n)
        lengths = np.fromiter(map(len, texts), dtype=np.uint64, count=n)
        return _splitmix64(_splitmix64(crc ^ np.uint64(salt)) + lengths)

    @staticmethod
    def _redraw(words: list[str], key: int) -> list[str] | None:
        """Draws 2..10 (counter blocks t * 2**32): the first gave the text back; None if all
        words are equal."""
        import numpy as np

        n = len(words)
        if len(set(words)) < 2:
            return None
        new = words
        for t in range(1, 10):
            ctr = np.arange(1, n + 1, dtype=np.uint64) + np.uint64(t << 32)
            k = _splitmix64(np.uint64(key) + ctr * np.uint64(_GOLDEN)) >> np.uint64(32)
            new = [words[j] for j in np.argsort(k, kind="stable").tolist()]
            if new != words:
                break
        return new


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
        check_prob(self.name, corrupt_proportion=self.corrupt_proportion)

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
        check_prob(self.name, remove_prob=self.remove_prob, add_prob=self.add_prob)

    def apply_many(self, texts: list[str], streams: list[Any]) -> list[str]:
        # one 32-bit value u per character, as NL-Augmenter draws one random number per
        # character: a whitespace goes when u < remove_prob * 2**32, any other character gets a
        # space after it when u < add_prob * 2**32; the edit is done on code-point arrays
        import numpy as np

        remove = round(self.remove_prob * 2**32)
        add = round(self.add_prob * 2**32)
        if remove == 0 and add == 0:
            return list(texts)
        lengths = [len(t) for t in texts]
        u = np.frombuffer(b"".join(s.digest(4 * n) for s, n in zip(streams, lengths,
                                                                   strict=True)), dtype="<u4")
        cps = encode(texts)
        space = _is_space(cps)
        keep = ~(space & (u < remove))
        plus = ~space & (u < add)
        pairs = np.stack([cps, np.full_like(cps, 32)], axis=1).ravel()
        mask = np.stack([keep, plus], axis=1).ravel()
        ends = np.cumsum([0, *lengths])
        emitted = np.concatenate([[0], np.cumsum(keep.astype(np.int64) + plus)])
        return decode(pairs[mask], np.diff(emitted[ends]).tolist())


@functools.cache
def _space_table() -> Any:
    """``str.isspace`` for every code point up to U+3000 (the last whitespace in Unicode)."""
    import numpy as np

    return np.array([chr(c).isspace() for c in range(0x3001)], dtype=bool)


def _is_space(cps: Any) -> Any:
    import numpy as np

    table = _space_table()
    return table[np.minimum(cps, len(table) - 1)] & (cps < len(table))


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
        check_prob(self.name, perturb_pct=self.perturb_pct)

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
        check_prob(self.name, max_leet=self.max_leet)

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
