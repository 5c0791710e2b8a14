"""The old home of BiasScreen (now in its study's package, :mod:`robustlab.studies.second_order.bias_screen`)."""

from robustlab.studies.second_order.bias_screen import BiasScreen  # noqa: F401
