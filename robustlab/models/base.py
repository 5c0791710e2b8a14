"""The one trainable-classifier interface every recipe uses.

Estimator rules (scikit-learn): the constructor only stores parameters; ``fit`` sets learned
state with trailing underscores (``model_``, ``n_classes_``), returns ``self`` and forgets earlier
fits; every random choice comes from the ``seed`` parameter. ``predict_proba`` batches internally.

Implementations (``robustlab.models``): TextRNN, bag-of-words, CNN, LSTM (torch, trained from
scratch) and any Hugging Face sequence-classification checkpoint (fine-tuned with transformers).
``save(dir)`` writes ``robustlab_model.json`` + safetensors weights; :func:`load_model` turns a
family name, a checkpoint or a saved directory into a classifier.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np


class TextClassifier:
    """Abstract base: ``fit(texts, labels)``, ``predict_proba(texts)``, ``save``/``load``."""

    #: family name used by the CLI (``--model textrnn``) and stored with results
    family: ClassVar[str] = ""
    #: True for models that are pretrained and fine-tuned (need their checkpoint to rebuild)
    pretrained: ClassVar[bool] = False

    n_classes_: int
    #: set by ``robustlab train`` (not a parameter): ``fit`` shows steps, loss and ETA on stderr
    #: (:mod:`robustlab.models.progress`); studies leave it off and show per-cell progress
    show_progress: bool = False

    def fit(self, texts: Sequence[str] | Sequence[tuple[str, str]], labels: Sequence[int],
            *, steps: int | None = None) -> TextClassifier:
        """Train (from scratch or from the checkpoint) for a fixed number of optimiser steps."""
        raise NotImplementedError

    def predict_proba(self, texts: Sequence[str] | Sequence[tuple[str, str]]) -> np.ndarray:
        """Class probabilities, shape (n, n_classes_), float64, rows sum to 1."""
        raise NotImplementedError

    def predict(self, texts: Sequence[str] | Sequence[tuple[str, str]]) -> np.ndarray:
        return np.asarray(self.predict_proba(texts)).argmax(axis=1)

    def save(self, directory: str | os.PathLike[str]) -> None:
        raise NotImplementedError

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> TextClassifier:
        raise NotImplementedError

    def get_params(self) -> dict[str, Any]:
        import inspect

        names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
        return {n: getattr(self, n) for n in names if hasattr(self, n)}

    def model_id(self) -> str:
        """Stable identifier stored in signatures (family + key params)."""
        params = ",".join(f"{k}={v}" for k, v in sorted(self.get_params().items()))
        return f"{self.family}({params})"
