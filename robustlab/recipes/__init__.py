"""Studies and attacks, one package per family of the source papers.

* :mod:`robustlab.recipes.learnability` — perturbation learnability / CENT, robustness and
  augmentation Δ (papers 000/001): the study grid (``study``), its data and models (``data``),
  the quick estimate (``estimate``), tables and tests (``report``), per-example predictions
  (``predictions``) and pass/fail gates (``thresholds``).
* :mod:`robustlab.recipes.second_order` — second-order attacks and counterfactual bias
  (paper 002): TextAttack components (``components``), search methods (``search``), the recipes
  ``so_beam`` / ``so_enum`` / ``so_random``, neighbourhoods and patch words, the attack study
  (``study``) and the bias study (``bias``).
* :mod:`robustlab.recipes.cross_domain` — consistency across domains (paper 004): MT and score
  tables (``study``), classifiers trained per domain (``clf``), tables and plots (``report``).

``robustlab/recipes/so_beam.py`` (and ``so_enum.py``, ``so_random.py``) stay here as the stable
files for ``textattack attack --attack-from-file FILE^build``; ``robustlab recipe-path so-beam``
prints the one of the installed package.
"""
