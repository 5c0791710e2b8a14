"""Perturbations behind one interface, and adapters to NL-Augmenter, TextAttack and CheckList.

Importing this package loads neither torch nor textattack nor checklist; each adapter imports its
library inside the functions that need it.
"""

from robustlab.adapters.base import Outcome, Perturbation, PerturbationError, rng_for
from robustlab.adapters.registry import available, describe, get_class, make, parse_spec, register

__all__ = [
    "Outcome",
    "Perturbation",
    "PerturbationError",
    "available",
    "describe",
    "get_class",
    "make",
    "parse_spec",
    "register",
    "rng_for",
]
