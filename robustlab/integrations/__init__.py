"""robustlab and the other libraries of the ecosystem, both ways.

* :mod:`robustlab.integrations.textattack` — a robustlab perturbation as a TextAttack
  ``Transformation``/``Augmenter``, and TextAttack's as a robustlab perturbation.
* :mod:`robustlab.integrations.nlaugmenter` — NL-Augmenter ``SentenceOperation`` both ways.
* :mod:`robustlab.integrations.checklist` — CheckList perturbation functions and INV/DIR tests.
* :mod:`robustlab.integrations.victims` — any robustlab classifier as a TextAttack
  ``ModelWrapper`` or a CheckList prediction function (the counting choke point of model calls).

Importing a module here loads neither torch, textattack nor checklist: each imports its library
inside the functions that need it.
"""
