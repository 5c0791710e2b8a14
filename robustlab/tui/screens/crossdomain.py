"""The old home of CrossDomainScreen (now in its study's package, :mod:`robustlab.studies.cross_domain.screen`)."""

from robustlab.studies.cross_domain.screen import CrossDomainScreen  # noqa: F401
