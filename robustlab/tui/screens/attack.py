"""The old home of AttackScreen (now in its study's package, :mod:`robustlab.studies.second_order.attack_screen`)."""

from robustlab.studies.second_order.attack_screen import AttackScreen  # noqa: F401
