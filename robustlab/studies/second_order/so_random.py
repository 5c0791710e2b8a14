"""Random second-order baseline (paper 002, "Double Perturbation", Appendix A.1) as a TextAttack
recipe.

"Randomly replacing up to 6 words" with the same masked LM and thresholds as SO-Beam. Settled
ambiguities: ``walks`` = 20 independent seeded random walks (as many as SO-Beam's beam, so the
two search the same number of candidates per round); each step picks a random position (never
the patch word) and a random candidate the source proposes for it, and is evaluated; the first F ≠ 0 ends the search. The walk is a pure
function of (``seed``, sentence).
"""

from __future__ import annotations

from typing import Any

NAME = "so-random"


def build(model_wrapper: Any, *, source: Any = None, pairs: Any = None, blacklist=(),
          max_changes: int = 6, walks: int = 20, seed: int = 0, kappa: int = 20,
          delta: float = 3.0, query_budget: float = float("inf"), model_batch_size: int = 512,
          lm_check: Any = None, **_: Any):
    """A ``textattack.Attack`` running the random baseline against ``model_wrapper``."""
    from robustlab.studies.second_order.assemble import build_attack
    from robustlab.studies.second_order.search import RandomWalks

    return build_attack(model_wrapper, RandomWalks(max_changes, walks, seed),
                        max_distance=max_changes, source=source, pairs=pairs,
                        blacklist=blacklist, kappa=kappa, delta=delta,
                        query_budget=query_budget, model_batch_size=model_batch_size,
                        lm_check=lm_check)
