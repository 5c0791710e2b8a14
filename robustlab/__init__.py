"""robustlab: robustness testing for NLP models.

``import robustlab`` only defines things: it loads neither torch, textattack, checklist nor
textual, and never downloads anything (see :mod:`robustlab.resources`).
"""

__version__ = "0.1.0"
