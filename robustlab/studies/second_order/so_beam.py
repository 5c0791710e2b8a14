"""SO-Beam (paper 002, "Double Perturbation", Algorithm 2; Eq. 2 and Eq. 4) as a TextAttack recipe.

Use from Python (``textattack.Attacker(build(wrapper), dataset)``), from the stock CLI
(``textattack attack --attack-from-file robustlab/recipes/so_beam.py^build ...``) or as
``robustlab attack --recipe so-beam``.

Settled ambiguities (see docs/attacks.md):

* beam β = 20, at most k = 6 rounds; each round expands the whole beam by Neighbor_1 and stops
  at the first x̃ with F(x̃; p) ≠ 0 (among several, the fewest changes, then the lowest loss);
* the ℓ0 ball is measured against the original sentence (a word changed twice counts once);
* x0 already vulnerable (F(x0; p) ≠ 0) is reported as successful with ℓ0 = 0;
* neighbourhood source: ``source`` (``wordnet`` | ``table:FILE`` | ``mlm:PATH``), default
  ``$ROBUSTLAB_NEIGHBOURHOOD`` or WordNet (the paper's distilbert-base-uncased needs the hub);
* patch pairs: ``pairs`` (table file, dict or ``wordnet``), default per
  :func:`robustlab.studies.second_order.patch_words.default_pair_source`; ``lm_check``
  (``mlm:PATH``; ``robustlab attack`` finds one by default) keeps only pairs whose swap passes
  the authors' language-model check (PLL ≥ original − 1.5, sentences ≤ 20 words);
* query budget counts candidates x̃ (TextAttack's count); each costs two model inputs, all of
  which are counted in ``attack.so_state.model_queries``;
* multi-class models: success = the predicted class changes; f_soft = P(original prediction).
"""

from __future__ import annotations

from typing import Any

NAME = "so-beam"


def build(model_wrapper: Any, *, source: Any = None, pairs: Any = None, blacklist=(),
          beam_width: int = 20, max_rounds: int = 6, kappa: int = 20, delta: float = 3.0,
          query_budget: float = float("inf"), model_batch_size: int = 512, lm_check: Any = None,
          **_: Any):
    """A ``textattack.Attack`` running SO-Beam against ``model_wrapper``."""
    from robustlab.studies.second_order.assemble import build_attack
    from robustlab.studies.second_order.search import BeamSearch

    return build_attack(model_wrapper, BeamSearch(beam_width, max_rounds),
                        max_distance=max_rounds, source=source, pairs=pairs,
                        blacklist=blacklist, kappa=kappa, delta=delta,
                        query_budget=query_budget, model_batch_size=model_batch_size,
                        lm_check=lm_check)
