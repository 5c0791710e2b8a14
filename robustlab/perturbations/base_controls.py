"""Control perturbations with known answers: identity (learnability 0) and a planted token."""

from robustlab.perturbations.base import AppendToken, Identity
from robustlab.perturbations.named import register

register(Identity)
register(AppendToken)
