"""SO-Enum (paper 002, "Double Perturbation", Sec. 3.2 brute-force attack; Eq. 2, Eq. 3) as a
TextAttack recipe.

Enumerates Neighbor_1(x0), then Neighbor_2(x0) (k ≤ 2: the neighbourhood grows exponentially)
and returns a vulnerable example with the fewest changes. Settled ambiguities:

* the enumeration stops at the first distance level with a success; inside a level candidates
  are evaluated in chunks of 1,024 and the first chunk with a success ends the search (all its
  successes have the same ℓ0; the one with the lowest Eq. 4 loss is returned);
* neighbourhood, patch pairs, ℓ0 ball, query budget and multi-class rule as in ``so_beam``.
"""

from __future__ import annotations

from typing import Any

NAME = "so-enum"


def build(model_wrapper: Any, *, source: Any = None, pairs: Any = None, blacklist=(),
          max_distance: int = 2, kappa: int = 20, delta: float = 3.0,
          query_budget: float = float("inf"), model_batch_size: int = 512, lm_check: Any = None,
          **_: Any):
    """A ``textattack.Attack`` running SO-Enum (k ≤ 2) against ``model_wrapper``."""
    from robustlab.studies.second_order.assemble import build_attack
    from robustlab.studies.second_order.search import Enumerate

    return build_attack(model_wrapper, Enumerate(max_distance), max_distance=max_distance,
                        source=source, pairs=pairs, blacklist=blacklist, kappa=kappa,
                        delta=delta, query_budget=query_budget, model_batch_size=model_batch_size,
                        lm_check=lm_check)
