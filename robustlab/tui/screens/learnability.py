"""The old home of LearnabilityScreen (now in its study's package, :mod:`robustlab.studies.learnability.screen`)."""

from robustlab.studies.learnability.screen import LearnabilityScreen  # noqa: F401
