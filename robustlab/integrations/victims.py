"""Adapters that let TextAttack and CheckList query any robustlab :class:`TextClassifier`.

Both go through :class:`CountingPredictor`, the one choke point that batches model calls and
counts queries (so "model queries" in reports is exact). TextAttack and CheckList are imported
only when a wrapper is built (``import textattack`` takes ~15 s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from robustlab.models.base import TextClassifier


class CountingPredictor:
    """Batched ``predict_proba`` that counts examples (queries) and calls."""

    def __init__(self, model: TextClassifier, batch_size: int = 256) -> None:
        self.model = model
        self.batch_size = batch_size
        self.queries = 0
        self.calls = 0

    def __call__(self, texts: Sequence[Any]) -> np.ndarray:
        texts = [t if isinstance(t, str) else tuple(t) for t in texts]
        self.calls += 1
        self.queries += len(texts)
        if not texts:
            return np.zeros((0, getattr(self.model, "n_classes_", 2)), dtype=np.float64)
        parts = [np.asarray(self.model.predict_proba(texts[s: s + self.batch_size]))
                 for s in range(0, len(texts), self.batch_size)]
        return np.concatenate(parts, axis=0)


_TA_CLASS: type | None = None


def _textattack_class() -> type:
    """Define the ModelWrapper subclass on first use (keeps textattack out of import time)."""
    global _TA_CLASS
    if _TA_CLASS is None:
        from robustlab.resources import ensure_textattack

        ensure_textattack()
        from textattack.models.wrappers import ModelWrapper

        class RobustlabModelWrapper(ModelWrapper):
            """TextAttack view of a robustlab classifier: list of inputs -> probabilities.

            Inputs are strings, or tuples of strings for sentence pairs (TextAttack passes a
            tuple when a dataset has several input columns). No gradients: white-box recipes
            that call ``get_grad`` are not supported.
            """

            def __init__(self, model: TextClassifier, batch_size: int = 256) -> None:
                self.model = model
                self.predictor = CountingPredictor(model, batch_size)

            def __call__(self, text_input_list: list[Any], **kwargs: Any) -> np.ndarray:
                return self.predictor(text_input_list)

            @property
            def queries(self) -> int:
                return self.predictor.queries

            def _tokenize(self, inputs: list[str]) -> list[list[str]]:
                from robustlab.models.vocab import tokenize

                return [list(tokenize(t)) for t in inputs]

        _TA_CLASS = RobustlabModelWrapper
    return _TA_CLASS


def textattack_wrapper(model: TextClassifier, batch_size: int = 256):
    """A ``textattack.models.wrappers.ModelWrapper`` over ``model`` (returns probabilities)."""
    return _textattack_class()(model, batch_size)


def checklist_predict_fn(model: TextClassifier, batch_size: int = 256
                         ) -> Callable[[Sequence[Any]], tuple[np.ndarray, np.ndarray]]:
    """CheckList prediction function ``texts -> (preds, confs)`` (confs = class probabilities),
    built with CheckList's own ``PredictorWrapper.wrap_softmax``. ``fn.predictor.queries``
    counts the examples sent to the model."""
    from checklist.pred_wrapper import PredictorWrapper

    predictor = CountingPredictor(model, batch_size)
    fn = PredictorWrapper.wrap_softmax(predictor)
    fn.predictor = predictor  # type: ignore[attr-defined]
    return fn


def model_wrapper_for(model: Any) -> Any:
    """``model`` as a TextAttack ModelWrapper (unchanged when it already is one)."""
    from robustlab.resources import ensure_textattack

    ensure_textattack()
    from textattack.models.wrappers import ModelWrapper

    if isinstance(model, ModelWrapper):
        return model
    return textattack_wrapper(model)


def load_victim(spec: str, device: str | None = None) -> tuple[Any, str]:
    """The attack victim named by ``--model`` (saved directory, family or checkpoint) as a
    TextAttack ModelWrapper, with the model id the run records."""
    from robustlab.models.checkpoint import load_trained_model

    model = load_trained_model(spec, device=device)
    return model_wrapper_for(model), getattr(model, "model_id", lambda: spec)()
