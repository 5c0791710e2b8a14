"""How many model queries a second-order attack may ask, before it starts (issue 34: a model
behind a paid endpoint is asked only what the user agreed to pay for).

A query is one text sent to the model. Per example the attack asks (components.py):

* the patch selection: one single-word input per distinct word of the candidate pairs
  (:meth:`PatchSelector.candidates`, counted exactly here, without asking the model); an
  example with no candidate pair is skipped and asks nothing more;
* x0 once for its class, and the initial result: x0 and x0 ⊕ p (3);
* every candidate x̃ twice (x̃ and x̃ ⊕ p). Neighbor_1 of a sentence of L words has at most
  (L − 1)·c members (every position but the patch word's, at most c words each: κ, or for a
  ``table:`` source min(κ, its longest entry), since a lexical source's candidates are the
  word's entry cut to κ), so SO-Beam (β, k rounds) evaluates at most N1 + (k − 1)·β·N1
  candidates with N1 = (L − 1)·c, SO-Enum
  (k ≤ 2) N1 (+ N1·N1 for k = 2), the random baseline β walks × k steps; ``--query-budget``
  caps the candidates (TextAttack counts the initial result as one of them).

So the estimate is an **upper bound** (the worst case: no success stops the search early, no
candidate is a duplicate or filtered out, every text asked is new to the endpoint); an endpoint
run asks fewer, since the run's store and the client answer a text asked before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueryEstimate:
    """An attack's worst-case queries over the examples it still has to attack."""

    queries: int
    examples: int
    skipped: int
    how: str

    def line(self) -> str:
        return (f"at most {self.queries:,} model queries for {self.examples} example(s) "
                f"({self.skipped} with no patch pair ask none) — an upper bound: {self.how}")


def candidate_bound(recipe: str, kwargs: dict[str, Any], words: int) -> tuple[int, str]:
    """The most candidates x̃ one example of ``words`` words may evaluate, and how."""
    kappa = int(kwargs.get("kappa", 20))
    # the most words a position may get: κ, or fewer for a table (its longest entry)
    per = min(kappa, int(kwargs.get("per_position") or kappa))
    c = f"c={per} (κ={kappa}, a table's longest entry {per})" if per < kappa else f"c=κ={kappa}"
    n1 = max(words - 1, 0) * per
    if recipe == "so-beam":
        beta, k = int(kwargs.get("beam_width", 20)), int(kwargs.get("max_rounds", 6))
        bound = n1 + (k - 1) * beta * n1
        how = f"SO-Beam's worst case, N1 + (k-1)·β·N1 with N1 = (L-1)·c, β={beta}, k={k}, {c}"
    elif recipe == "so-enum":
        k = int(kwargs.get("max_distance", 2))
        bound = n1 + (n1 * n1 if k >= 2 else 0)
        how = f"SO-Enum's Neighbor_1..{k}, N1 = (L-1)·c, {c}"
    else:
        walks, k = int(kwargs.get("walks", 20)), int(kwargs.get("max_changes", 6))
        bound = walks * k
        how = f"the random baseline's walks × steps = {walks}×{k}"
    budget = kwargs.get("query_budget")
    if budget is not None and budget != float("inf") and int(budget) < bound:
        return int(budget), f"{how}, capped by --query-budget {int(budget)}"
    return bound, how


def estimate(recipe: str, kwargs: dict[str, Any], texts: Sequence[str],
             pairs_selector: Any) -> QueryEstimate:
    """The worst-case queries of attacking ``texts`` (module docstring); ``pairs_selector``:
    a :class:`~robustlab.studies.second_order.patch_words.PatchSelector` over the run's pairs
    (its candidates need no model)."""
    from textattack.shared import AttackedText

    total = skipped = 0
    how = ""
    for text in texts:
        words = AttackedText(text).words
        singles = len(dict.fromkeys(w for c in pairs_selector.candidates(words) for w in c[:2]))
        if not singles:
            skipped += 1
            continue
        bound, how = candidate_bound(recipe, kwargs, len(words))
        total += singles + 3 + 2 * bound
    return QueryEstimate(total, len(texts), skipped, how or candidate_bound(recipe, kwargs, 1)[1])


__all__ = ["QueryEstimate", "candidate_bound", "estimate"]
