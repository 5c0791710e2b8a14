"""Search methods of the second-order attacks (paper 002), as TextAttack ``SearchMethod``s.

* :class:`BeamSearch`: SO-Beam, Algorithm 2 (beam β, at most k rounds, stop at the first F ≠ 0,
  else keep the β candidates with the smallest Eq. 4 loss, i.e. the largest TextAttack score);
* :class:`Enumerate`: SO-Enum, Neighbor_1 then Neighbor_2 (k ≤ 2), fewest changes first;
* :class:`RandomWalks`: the random baseline of Appendix A.1.

Each search prefetches a whole beam/level from the neighbourhood source in one batched call
(``transformation.prefetch``) before asking TextAttack for the transformations of each text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textattack.search_methods import SearchMethod

from robustlab.studies.second_order.components import SUCCEEDED, NeighbourSwap


def l0(original: Any, text: Any) -> int:
    return len(original.all_words_diff(text))


class _SOSearch(SearchMethod):
    @property
    def is_black_box(self) -> bool:
        return True

    def _prefetch(self, texts: Sequence[Any]) -> None:
        tr = getattr(self, "transformation", None)
        if tr is not None and hasattr(tr, "prefetch"):
            tr.prefetch(texts)

    def _neighbours(self, texts: Sequence[Any], original: Any, seen: set[str]) -> list[Any]:
        self._prefetch(texts)
        out = []
        for t in texts:
            for n in self.get_transformations(t, original_text=original):
                if n.text not in seen:
                    seen.add(n.text)
                    out.append(n)
        return out

    @staticmethod
    def _best_success(results: Sequence[Any], original: Any) -> Any | None:
        succ = [r for r in results if r.goal_status == SUCCEEDED]
        if not succ:
            return None
        return min(succ, key=lambda r: (l0(original, r.attacked_text), -r.score,
                                        r.attacked_text.text))


class BeamSearch(_SOSearch):
    """SO-Beam (Algorithm 2): beam β, at most k rounds of Neighbor_1, stop at the first F ≠ 0."""

    def __init__(self, beam_width: int = 20, max_rounds: int = 6) -> None:
        self.beam_width, self.max_rounds = beam_width, max_rounds

    def perform_search(self, initial_result):
        if initial_result.goal_status == SUCCEEDED:
            return initial_result
        x0 = initial_result.attacked_text
        beam, best, seen = [x0], initial_result, {x0.text}
        for _ in range(self.max_rounds):
            new = self._neighbours(beam, x0, seen)
            if not new:
                break
            results, over = self.get_goal_results(new)
            hit = self._best_success(results, x0)
            if hit is not None:
                return hit
            if not results:
                break
            results.sort(key=lambda r: (-r.score, r.attacked_text.text))
            if results[0].score > best.score:
                best = results[0]
            if over:
                break
            beam = [r.attacked_text for r in results[: self.beam_width]]
        return best

    def extra_repr_keys(self):
        return ["beam_width", "max_rounds"]


class Enumerate(_SOSearch):
    """SO-Enum: Neighbor_1, then Neighbor_2, ... (k ≤ 2); the success with the fewest changes."""

    def __init__(self, max_distance: int = 2, chunk: int = 1024) -> None:
        if max_distance > 2:
            raise ValueError("SO-Enum enumerates k <= 2 (exponential); use SO-Beam for larger k")
        self.max_distance, self.chunk = max_distance, chunk

    def perform_search(self, initial_result):
        if initial_result.goal_status == SUCCEEDED:
            return initial_result
        x0 = initial_result.attacked_text
        seen, level, best = {x0.text}, [x0], initial_result
        for _ in range(self.max_distance):
            parents, nxt = level, []
            for s in range(0, len(parents), max(1, self.chunk // 64)):
                cand = self._neighbours(parents[s: s + max(1, self.chunk // 64)], x0, seen)
                for c in range(0, len(cand), self.chunk):
                    results, over = self.get_goal_results(cand[c: c + self.chunk])
                    hit = self._best_success(results, x0)
                    if hit is not None:
                        return hit
                    for r in results:
                        if r.score > best.score:
                            best = r
                    nxt += [r.attacked_text for r in results]
                    if over:
                        return best
            level = nxt
            if not level:
                break
        return best

    def extra_repr_keys(self):
        return ["max_distance"]


class RandomWalks(_SOSearch):
    """Random baseline (Appendix A.1): ``walks`` seeded random walks of up to ``max_changes``
    substitutions from the same neighbourhood; every step of every walk is evaluated.

    A step picks a random position (never the patch word), then a random candidate the source
    proposes for it; positions without (constraint-passing) candidates are skipped. So only the
    chosen position is sent to a masked LM, batched across the walks of a step.
    """

    def __init__(self, max_changes: int = 6, walks: int = 20, seed: int = 0) -> None:
        self.max_changes, self.walks, self.seed = max_changes, walks, seed

    def perform_search(self, initial_result):
        from robustlab.perturbations.base import rng_for

        if initial_result.goal_status == SUCCEEDED:
            return initial_result
        x0 = initial_result.attacked_text
        rng = rng_for(self.seed, x0.text, "so-random")
        current, best = [x0] * self.walks, initial_result
        tr = self.transformation
        for _ in range(self.max_changes):
            orders = [rng.sample(tr._positions(t), len(tr._positions(t))) for t in current]
            # one batched source call for every walk's first-choice position
            tr.source.candidates_many([(t.text, t.words, o[:1]) for t, o in
                                       zip(current, orders, strict=True) if o], tr._exclude())
            nxt = [s for s in (self._random_step(t, x0, rng, tr, o)
                               for t, o in zip(current, orders, strict=True)) if s is not None]
            if not nxt:
                break
            results, over = self.get_goal_results(nxt)
            hit = self._best_success(results, x0)
            if hit is not None:
                return hit
            for r in results:
                if r.score > best.score:
                    best = r
            if over:
                break
            current = [r.attacked_text for r in results]
        return best

    def _random_step(self, t: Any, x0: Any, rng: Any, tr: Any, order: list[int]) -> Any | None:
        for i in order:
            cands = tr.candidates(t, [i]).get(i, [])
            for j in rng.sample(range(len(cands)), len(cands)):
                new = tr.swap(t, i, cands[j])
                if self.filter_transformations([new], t, x0):
                    return new
        return None

    def check_transformation_compatibility(self, transformation) -> bool:
        return isinstance(transformation, NeighbourSwap)

    def extra_repr_keys(self):
        return ["max_changes", "walks", "seed"]
