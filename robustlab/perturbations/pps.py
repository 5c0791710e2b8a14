"""PPS (perturbations per sample, paper 001): the shared parameter of the Moradi & Samwald
perturbations, validated in one place."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from robustlab.perturbations.base import Perturbation, PerturbationError

__all__ = ["PPS_MAX", "PPSPerturbation"]

PPS_MAX = 4
T = TypeVar("T")


class PPSPerturbation(Perturbation):
    """Base of the paper-001 perturbations: ``pps`` is the *maximum* number of edits per text.

    A text gets ``min(pps, number of eligible places)`` edits at distinct places, so a text with
    fewer eligible words than ``pps`` is edited as much as it can be (and left unchanged, reported
    as a no-op, when nothing is eligible).
    """

    source = "001"

    def __init__(self, pps: int = 1) -> None:
        self.pps = pps

    def validate(self) -> None:
        pps = self.pps
        if isinstance(pps, bool) or not isinstance(pps, int) or not 1 <= pps <= PPS_MAX:
            raise PerturbationError(
                f"{self.name}: pps (perturbations per sample) must be an integer from 1 to "
                f"{PPS_MAX}, got {pps!r}"
            )

    def pick(self, rng: random.Random, items: Sequence[T]) -> list[T]:
        """Up to ``pps`` distinct items, in random order (one draw when only one is wanted)."""
        n = len(items)
        if n == 0:
            return []
        if self.pps == 1 or n == 1:
            return [items[int(rng.random() * n)]]
        return rng.sample(items, min(self.pps, n))
