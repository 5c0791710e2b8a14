"""Patch words p = (p1, p2) for second-order attacks (paper 002, Sec. 3.2 and Algorithm 2, line 2).

Candidate pairs are synonym pairs from a neighbour table (the paper: counter-fitted synonyms).
For a sentence x the attack uses the pair with p1 present **exactly once** in x (so x ⊕ p is
well defined) and p2 absent, maximising |f_soft(p2) − f_soft(p1)| where f_soft(w) is the model's
probability output on the one-word sentence ``w``. Single-word predictions are cached per
selector, and a selector belongs to one model (one goal function), so the cache is per model.

Pair sources, in the order :func:`default_pair_source` tries them: ``$ROBUSTLAB_PATCH_TABLE``;
TextAttack's counter-fitted embedding neighbours when already in TextAttack's cache (never
downloaded here); the team's ``counterfitted_neighbors.json`` when present; WordNet synonyms.
Multi-class models: |f_soft(p2) − f_soft(p1)| is the largest absolute change of any class
probability (equal to the binary definition for two classes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from robustlab.errors import InputError
from robustlab.recipes.neighbourhood import load_table


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
    env = os.environ.get("ROBUSTLAB_PATCH_TABLE")
    if env:
        return env
    from robustlab.resources import shared_data_dir, textattack_cache_dir

    if (textattack_cache_dir() / "word_embeddings" / "paragramcf").is_dir():
        return "textattack-counterfitted"
    shared = shared_data_dir() / "synonyms" / "counterfitted_neighbors.json"
    if shared.is_file():
        return str(shared)
    return "wordnet"


def neighbour_fn(source: str | dict[str, list[str]] | None) -> tuple[Callable[[str], list[str]],
                                                                       str]:
    """A ``word -> synonyms`` function and its name, from a table file, a dict or ``wordnet``."""
    source = source or default_pair_source()
    if isinstance(source, dict):
        table = {k.lower(): [v.lower() for v in vs] for k, vs in source.items()}
        return (lambda w: table.get(w, [])), "table:<dict>"
    if source == "wordnet":
        from robustlab.recipes.neighbourhood import WordNetSource

        wn = WordNetSource(max_candidates=8)
        return wn.word_candidates, "wordnet"
    if source == "textattack-counterfitted":
        cache: dict[str, list[str]] = {}

        def ta(w: str) -> list[str]:
            if w not in cache:
                cache[w] = textattack_counterfitted_table(vocab=[w]).get(w, [])
            return cache[w]

        return ta, "textattack-counterfitted"
    table = {k: [v.lower() for v in vs] for k, vs in load_table(source).items()}
    return (lambda w: table.get(w, [])), f"table:{Path(source).name}"


class PatchSelector:
    """Chooses p for a sentence; caches single-word predictions (one selector per model)."""

    def __init__(self, pairs: str | dict[str, list[str]] | None = None, *,
                 blacklist: Sequence[str] = ()) -> None:
        self.neighbours, self.source_name = neighbour_fn(pairs)
        self.blacklist = {b.lower() for b in blacklist}
        self._single: dict[str, np.ndarray] = {}

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
        """All (p1, p2, index) with p1 exactly once in ``words`` and p2 absent."""
        low = [w.lower() for w in words]
        counts: dict[str, int] = {}
        for w in low:
            counts[w] = counts.get(w, 0) + 1
        present = set(low)
        out = []
        for i, w in enumerate(low):
            if counts[w] != 1 or w in self.blacklist:
                continue
            for n in self.neighbours(w):
                if n != w and n not in present and n.isalpha() and n not in self.blacklist:
                    out.append((w, n, i))
        return out

    def choose(self, words: Sequence[str],
               predict: Callable[[list[str]], np.ndarray]) -> Patch | None:
        """The pair maximising |f_soft(p2) − f_soft(p1)|; None when no pair applies."""
        cands = self.candidates(words)
        if not cands:
            return None
        proba = self.single_word_proba([w for c in cands for w in c[:2]], predict)
        best = None
        for p1, p2, i in cands:
            score = float(np.max(np.abs(proba[p2] - proba[p1])))
            if not np.isfinite(score):
                continue
            if best is None or score > best.score:
                best = Patch(p1, p2, i, score)
        return best
