"""Pure metric functions, one home per concept.

* :mod:`robustlab.metrics.learnability` — learnability ATE (accuracy- and probability-based),
  log-AUC average learnability, robustness, post-augmentation Δ, seed spread, Spearman tests,
  the learnability@p table; CENT sensitivity (the same estimand).
* :mod:`robustlab.metrics.consistency` — mean, variance, coefficient of variation, (ε,γ)-robustness,
  bagging and design bagging, leave-one-domain-out.
* :mod:`robustlab.metrics.ranking` — system rankings, pairwise agreement, Kendall τ.
* :mod:`robustlab.metrics.mt` — segment and corpus BLEU/chrF/TER through sacreBLEU.
* :mod:`robustlab.metrics.tasks` — paper 001's task metrics: accuracy/micro-/macro-F1, entity F1
  (seqeval), Pearson/Spearman, answer-selection F1/MAP/MRR.

The names below are facades over those modules (sacreBLEU-style ``compat`` functions), resolved
lazily so ``import robustlab.metrics`` stays cheap.
"""

from __future__ import annotations

from robustlab.lazy import lazy_exports

_FACADES = {
    # learnability / CENT
    "learnability_ate": "learnability",
    "learnability_prob": "learnability",
    "log_auc": "learnability",
    "max_log_auc": "learnability",
    "robustness": "learnability",
    "post_augmentation_delta": "learnability",
    "seed_spread": "learnability",
    "spearman": "learnability",
    "at_p_table": "learnability",
    "cent_sensitivity": "learnability",
    "DEFAULT_P_GRID": "learnability",
    # cross-domain consistency
    "mean": "consistency",
    "variance": "consistency",
    "cov": "consistency",
    "gamma": "consistency",
    "gamma_curve": "consistency",
    "gamma_auc": "consistency",
    "normalize_curves": "consistency",
    "bags": "consistency",
    "design_bags": "consistency",
    "bagged": "consistency",
    "leave_one_out": "consistency",
    # rankings
    "rank": "ranking",
    "pairwise_agreement": "ranking",
    "kendall_tau": "ranking",
    # machine translation (sacreBLEU)
    "MTScorer": "mt",
    "corpus_bleu": "mt",
    # task metrics (paper 001)
    "classification_metrics": "tasks",
    "entity_metrics": "tasks",
    "similarity_metrics": "tasks",
    "answer_selection_metrics": "tasks",
}

__getattr__, __dir__, __all__ = lazy_exports("robustlab.metrics", _FACADES)
