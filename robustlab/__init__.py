"""robustlab: robustness testing for NLP models.

``import robustlab`` only defines things: it loads neither torch, textattack, checklist nor
textual, and never downloads anything (see :mod:`robustlab.resources`). ``robustlab.run(config,
out, **how)`` runs any study from Python (:mod:`robustlab.api`, loaded on first use).
"""

from typing import Any

from robustlab.version import __version__


def __getattr__(name: str) -> Any:
    if name == "run":
        from robustlab.api import run

        return run
    raise AttributeError(f"module 'robustlab' has no attribute {name!r}")


__all__ = ["__version__", "run"]
