"""The old home of EvalScreen (now in its study's package, :mod:`robustlab.studies.eval.screen`)."""

from robustlab.studies.eval.screen import EvalScreen  # noqa: F401
