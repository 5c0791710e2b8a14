"""Control perturbations with known answers: identity (learnability 0) and a planted token."""

from robustlab.adapters.base import AppendToken, Identity
from robustlab.adapters.registry import register

register(Identity)
register(AppendToken)
