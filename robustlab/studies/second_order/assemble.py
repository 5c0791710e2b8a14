"""Assembling a second-order ``textattack.Attack`` from robustlab's parts: the goal, the
neighbour swap, the constraints and a search. Above :mod:`.components` and :mod:`.results`,
so neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textattack.constraints.overlap import MaxWordsPerturbed
from textattack.search_methods import SearchMethod

from robustlab.studies.second_order.components import (
    AttackState,
    NeighbourSwap,
    PatchFrozen,
    SecondOrderGoal,
    textattack_quiet,
)
from robustlab.studies.second_order.neighbourhood import lm_check_for, make_source
from robustlab.studies.second_order.results import SecondOrderAttack


def build_attack(model_wrapper: Any, search: SearchMethod, *, max_distance: int,
                 source: Any = None, pairs: Any = None, blacklist: Sequence[str] = (),
                 kappa: int = 20, delta: float = 3.0, query_budget: float = float("inf"),
                 model_batch_size: int = 512, lm_check: Any = None):
    """Goal + NeighbourSwap + (PatchFrozen, ℓ0 ball) + ``search`` -> ``textattack.Attack``
    (a :class:`~robustlab.studies.second_order.results.SecondOrderAttack`, whose results print
    the patch pair). ``lm_check`` (``mlm:PATH`` or a LanguageModelCheck): the authors'
    language-model check on the patch words."""
    state = AttackState()
    src = make_source(source, blacklist=blacklist, kappa=kappa, delta=delta)
    goal = SecondOrderGoal(model_wrapper, pairs=pairs, blacklist=blacklist,
                           query_budget=query_budget, model_batch_size=model_batch_size,
                           state=state, lm_check=lm_check_for(lm_check, src))
    transformation = NeighbourSwap(src, state)
    constraints = [PatchFrozen(state), MaxWordsPerturbed(max_num_words=max_distance)]
    with textattack_quiet():
        attack = SecondOrderAttack(goal, constraints, transformation, search)
    search.transformation = transformation  # lets the search prefetch a whole beam in one batch
    attack.so_state, attack.so_source = state, src
    return attack
