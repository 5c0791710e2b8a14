"""Perturbations behind one interface: the 8 of paper 000 and the 14 of paper 001 (Moradi &
Samwald), with their registry (:mod:`robustlab.perturbations.registry`).

Importing this package loads neither torch nor textattack nor checklist. The adapters to
NL-Augmenter, TextAttack and CheckList are in :mod:`robustlab.integrations`.
"""

from robustlab.perturbations.base import Outcome, Perturbation, PerturbationError, rng_for
from robustlab.perturbations.registry import (
    available,
    describe,
    get_class,
    make,
    parse_spec,
    register,
)

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
