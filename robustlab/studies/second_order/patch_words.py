"""Patch words p = (p1, p2) for second-order attacks (paper 002, Sec. 3.2 and Algorithm 2, line 2).

Candidate pairs are synonym pairs from a neighbour table (the paper: counter-fitted synonyms).
For a sentence x the attack uses the pair with p1 present **exactly once** in x (so x ⊕ p is
well defined) and p2 absent, maximising |f_soft(p2) − f_soft(p1)| where f_soft(w) is the model's
probability output on the one-word sentence ``w``. As in the authors' code, a table entry
(w1, w2) serves both ways (w1 -> w2 and w2 -> w1) and equal scores go to the entry listed first
(:class:`PairTable`). Single-word predictions are cached per selector, and a selector belongs to
one model (one goal function), so the cache is per model; it saves time, never queries.

Pair sources, in the order :func:`default_pair_source` tries them: ``$ROBUSTLAB_PATCH_TABLE``;
TextAttack's counter-fitted embedding neighbours when already in TextAttack's cache (never
downloaded here); the team's ``counterfitted_neighbors.json`` when present; WordNet synonyms.
Multi-class models: |f_soft(p2) − f_soft(p1)| is the largest absolute change of any class
probability (binary models: the class-1 difference, see :func:`pair_score`).

With a language-model check (:class:`~robustlab.studies.second_order.neighbourhood.
LanguageModelCheck`, the authors' ``_get_active_biaswords``) the pair chosen is the best-scoring
one whose swapped sentence passes it, so ungrammatical swaps such as (to, de) or (a, una) from a
multilingual synonym table are not used; none passing means no patch (the example is skipped).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robustlab.errors import InputError
from robustlab.studies.second_order.neighbourhood import LanguageModelCheck, load_table, match_case


@dataclass(frozen=True)
class Patch:
    """The chosen patch: words, the position of p1 in the sentence, and the selection score."""

    p1: str
    p2: str
    index: int
    score: float

    def as_list(self) -> list[str]:
        return [self.p1, self.p2]


def textattack_counterfitted_table(max_neighbours: int = 8, max_distance: float = 0.5,
                                   vocab: Sequence[str] | None = None) -> dict[str, list[str]]:
    """Neighbours from TextAttack's counter-fitted GloVe embedding, only if already cached.

    ``vocab`` limits the words looked up (the embedding has 65k words; a full table is slow).
    """
    from robustlab.resources import textattack_cache_dir

    d = textattack_cache_dir() / "word_embeddings" / "paragramcf"
    if not d.is_dir():
        raise InputError(f"TextAttack's counter-fitted embedding is not cached at {d}; pass a "
                         "neighbour table file instead (--patch-table FILE)")
    from robustlab.resources import ensure_textattack

    ensure_textattack()
    from textattack.shared import WordEmbedding

    emb = WordEmbedding.counterfitted_GLOVE_embedding()
    words = vocab if vocab is not None else list(emb._word2index)
    out: dict[str, list[str]] = {}
    for w in words:
        try:
            idx = emb.word2index(w)
        except KeyError:
            continue
        nn = emb.nearest_neighbours(idx, max_neighbours + 1)
        out[w] = [emb.index2word(j) for j in nn
                  if j != idx and emb.get_cos_sim(idx, j) >= 1 - max_distance]
    return out


def default_pair_source() -> str:
    """Where candidate pairs come from when the caller gives none (see the module docstring)."""
    return default_pair_source_origin()[0]


def default_pair_source_origin() -> tuple[str, str]:
    """:func:`default_pair_source` and how it was found (for the run's input record): the
    environment, TextAttack's cache, the shared folder seen from the current directory, or
    WordNet. Never a location relative to robustlab's own install."""
    env = os.environ.get("ROBUSTLAB_PATCH_TABLE")
    if env:
        return env, "default: $ROBUSTLAB_PATCH_TABLE"
    from robustlab.resources import shared_dir_origin, textattack_cache_dir

    if (textattack_cache_dir() / "word_embeddings" / "paragramcf").is_dir():
        return "textattack-counterfitted", "default: TextAttack's cache ($TA_CACHE_DIR)"
    root, rule = shared_dir_origin()
    shared = root / "data" / "synonyms" / "counterfitted_neighbors.json"
    if shared.is_file():
        return str(shared), f"default: shared folder ({rule})"
    return "wordnet", "default: WordNet (no table found)"


class PairTable:
    """The neighbour relation patch pairs are drawn from, read in both directions.

    Why both: the authors build their anchor-word list from every table entry (w1, w2) and accept
    it for a sentence when w1 is there once and w2 absent *or* the other way round
    (``goal_function.is_good_biaswords``); counter-fitted tables are not symmetric (14,222 of
    their 109,104 entries have no reverse), so reading ``table[p1]`` only misses pairs.

    ``rank`` reproduces their tie-break: the anchor list is sorted by score with a stable sort,
    so among equal scores the entry listed first in the table (key order, then neighbour order)
    wins. For sources that are functions (WordNet, the embedding) there is no table order; their
    rank is the order of discovery (sentence position, then neighbour order).
    """

    def __init__(self, forward: Callable[[str], list[str]], name: str,
                 table: dict[str, list[str]] | None = None,
                 reverse_pool: Callable[[str], list[str]] | None = None) -> None:
        self.forward, self.name = forward, name
        self._table = table
        self._reverse_pool = reverse_pool
        self._reverse: dict[str, list[str]] | None = None
        self._keypos: dict[str, int] | None = None

    def reverse(self, word: str) -> list[str]:
        """Words whose neighbours include ``word``."""
        if self._table is not None:
            if self._reverse is None:
                rev: dict[str, list[str]] = {}
                for k, vs in self._table.items():
                    for v in vs:
                        rev.setdefault(v, []).append(k)
                self._reverse = rev
            return self._reverse.get(word, [])
        pool = self._reverse_pool(word) if self._reverse_pool is not None else []
        return [k for k in pool if word in self.forward(k)]

    def rank(self, a: str, b: str) -> tuple[int, int] | None:
        """Position of the first table entry linking a and b (either direction), or None."""
        if self._table is None:
            return None
        if self._keypos is None:
            self._keypos = {k: i for i, k in enumerate(self._table)}
        best = None
        for x, y in ((a, b), (b, a)):
            vs = self._table.get(x)
            if vs is not None and y in vs:
                r = (self._keypos[x], vs.index(y))
                best = r if best is None or r < best else best
        return best

    def partners(self, word: str) -> list[str]:
        """Neighbours of ``word`` in either direction, forward ones first, without repeats."""
        return list(dict.fromkeys([*self.forward(word), *self.reverse(word)]))


def neighbour_fn(source: str | dict[str, list[str]] | None) -> tuple[Callable[[str], list[str]],
                                                                       str]:
    """A ``word -> synonyms`` function (one direction) and its name; see :func:`pair_table`."""
    table = pair_table(source)
    return table.forward, table.name


def pair_table(source: str | dict[str, list[str]] | None) -> PairTable:
    """The :class:`PairTable` of a table file, a dict, ``wordnet`` or ``textattack-counterfitted``."""
    source = source or default_pair_source()
    if isinstance(source, dict):
        table: dict[str, list[str]] = {}
        for k, vs in source.items():  # keys merged case-insensitively, order kept
            table.setdefault(k.lower(), []).extend(v.lower() for v in vs)
        return PairTable(lambda w: table.get(w, []), "table:<dict>", table=table)
    if source == "wordnet":
        from robustlab.studies.second_order.neighbourhood import WordNetSource

        wn = WordNetSource(max_candidates=8)
        pool = WordNetSource(max_candidates=10_000)  # synonymy is symmetric: reverse ⊆ all lemmas
        return PairTable(wn.word_candidates, "wordnet", reverse_pool=pool.word_candidates)
    if source == "textattack-counterfitted":
        cache: dict[tuple[str, int], list[str]] = {}

        def ta(w: str, k: int = 8) -> list[str]:
            if (w, k) not in cache:
                cache[(w, k)] = textattack_counterfitted_table(max_neighbours=k, vocab=[w]).get(w, [])
            return cache[(w, k)]

        # cosine similarity is symmetric, so a word listing w lies near w; searched among w's 50
        # nearest (a word ranking w in its top 8 but beyond w's top 50 is missed: documented)
        return PairTable(ta, "textattack-counterfitted", reverse_pool=lambda w: ta(w, 50))
    table = {k: [v.lower() for v in vs] for k, vs in load_table(source).items()}
    return PairTable(lambda w: table.get(w, []), f"table:{Path(source).name}", table=table)


def pair_score(proba1: np.ndarray, proba2: np.ndarray) -> float:
    """|f_soft(p2) − f_soft(p1)|. Binary: the class-1 difference exactly, as the authors compute
    it (the max over both classes is equal in exact arithmetic, but ``(1 − a) − (1 − b)`` rounds
    to 1.0 for saturated single-word outputs, which made ties the authors do not have).
    Multi-class: the largest absolute change of any class probability."""
    if len(proba1) == 2:
        return float(abs(proba2[1] - proba1[1]))
    return float(np.max(np.abs(proba2 - proba1)))


class PatchSelector:
    """Chooses p for a sentence; caches single-word predictions (one selector per model).

    The cache saves model time only: :attr:`last_queries` is the number of single-word inputs
    the last sentence needed, whether or not they were cached, so per-example query counts are a
    function of the example alone (not of which examples ran before, e.g. after a resume).
    """

    #: candidates checked by the first batched language-model call; each further call checks
    #: twice as many (most sentences need one: checking 8 at once cost 8x the masked-LM work)
    LM_FIRST_CHUNK = 1

    def __init__(self, pairs: str | dict[str, list[str]] | None = None, *,
                 blacklist: Sequence[str] = (), lm_check: LanguageModelCheck | None = None
                 ) -> None:
        self.table = pair_table(pairs)
        self.neighbours, self.source_name = self.table.forward, self.table.name
        self.blacklist = {b.lower() for b in blacklist}
        self.lm_check = lm_check
        self._single: dict[str, np.ndarray] = {}
        self.last_queries = 0
        self.last_lm_rejected = 0

    def clear_cache(self) -> None:
        """Forget cached single-word predictions (per-example query counts then do not depend
        on which examples were attacked before in the same process)."""
        self._single.clear()

    def single_word_proba(self, words: Sequence[str],
                          predict: Callable[[list[str]], np.ndarray]) -> dict[str, np.ndarray]:
        todo = [w for w in dict.fromkeys(words) if w not in self._single]
        if todo:
            probs = np.asarray(predict(todo), dtype=np.float64)
            for w, p in zip(todo, probs, strict=False):
                self._single[w] = p
        return {w: self._single[w] for w in words}

    def candidates(self, words: Sequence[str]) -> list[tuple[str, str, int]]:
        """All (p1, p2, index) with p1 exactly once in ``words``, p2 absent and (p1, p2) linked
        by the table in either direction."""
        return [c[:3] for c in self._ranked_candidates(words)]

    def _ranked_candidates(self, words: Sequence[str]) -> list[tuple[str, str, int, tuple]]:
        low = [w.lower() for w in words]
        counts: dict[str, int] = {}
        for w in low:
            counts[w] = counts.get(w, 0) + 1
        present = set(low)
        out = []
        for i, w in enumerate(low):
            if counts[w] != 1 or w in self.blacklist:
                continue
            for j, n in enumerate(self.table.partners(w)):
                if n != w and n not in present and n.isalpha() and n not in self.blacklist:
                    r = self.table.rank(w, n)
                    out.append((w, n, i, (0, *r) if r is not None else (1, i, j)))
        return out

    def choose(self, words: Sequence[str],
               predict: Callable[[list[str]], np.ndarray]) -> Patch | None:
        """The pair maximising |f_soft(p2) − f_soft(p1)|, ties to the earlier table entry (see
        :class:`PairTable`); None when no pair applies."""
        cands = self._ranked_candidates(words)
        self.last_queries = len(dict.fromkeys(w for c in cands for w in c[:2]))
        self.last_lm_rejected = 0
        if not cands:
            return None
        proba = self.single_word_proba([w for c in cands for w in c[:2]], predict)
        ranked = []
        for p1, p2, i, rank in cands:
            score = pair_score(proba[p1], proba[p2])
            if np.isfinite(score):
                ranked.append(((-score, rank), Patch(p1, p2, i, score)))
        ranked.sort(key=lambda kp: kp[0])
        if self.lm_check is None:
            return ranked[0][1] if ranked else None
        # the authors' order: the best-scoring pair whose swap passes the language model
        text = " ".join(words)
        b, size = 0, self.LM_FIRST_CHUNK
        while b < len(ranked):
            chunk = [p for _, p in ranked[b: b + size]]
            b, size = b + size, size * 2
            swaps = []
            for p in chunk:
                w = list(words)
                w[p.index] = match_case(w[p.index], p.p2)
                swaps.append((text, " ".join(w)))
            for p, ok in zip(chunk, self.lm_check.passes_many(swaps), strict=True):
                if ok:
                    return p
                self.last_lm_rejected += 1
        return None
