"""Trainable text classifiers behind one interface (see :mod:`robustlab.models.base`)."""

from robustlab.models.base import TextClassifier

__all__ = ["TextClassifier"]
