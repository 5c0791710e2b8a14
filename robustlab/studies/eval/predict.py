"""Models as batch probability functions, for a study that tests a model as it is.

:func:`as_predictor` turns what ``robustlab eval`` accepts into a :class:`Predictor`: a model
spec (a directory saved by ``robustlab train``; a Hugging Face checkpoint with a trained
sequence-classification head, local or ``hf:ID`` in the local cache), or from Python any object
with a batch ``predict_proba(list[str])``, a TextAttack ``ModelWrapper`` or a ``transformers``
text-classification pipeline. Nothing is trained and nothing is downloaded.

A :class:`Predictor` predicts each distinct text once (a cache of probability rows): the clean
texts, every perturbed text however many perturbations, seeds or samples produce it, and a
no-op (a perturbed text equal to its original) reuses the clean prediction. Texts not yet
predicted go to the model sorted by length, in batches of ``batch_size``, so each batch is
padded only to its own longest text (robustlab's classifiers pad each batch dynamically under
``torch.inference_mode``; other models get the same order and batches).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from robustlab.endpoints.card import is_endpoint
from robustlab.errors import InputError
from robustlab.models.checkpoint import check_checkpoint, load_checkpoint

ProbaFn = Callable[[list[str]], np.ndarray]


class Predictor:
    """``predictor(texts)`` -> probabilities (n × classes), each distinct text predicted once."""

    def __init__(self, proba: ProbaFn, batch_size: int = 128, name: str = "model",
                 chunk: int | None = None, logits: bool = True) -> None:
        self.proba = proba
        self.batch_size = int(batch_size)
        #: texts per call of ``proba`` (default one batch); a robustlab classifier gets many
        #: batches per call, which it sorts by *token* length itself: character length is a
        #: poor proxy for perturbed texts (leetspeak splits into many word pieces), and the
        #: padding it wasted made MiniLM's predictions 2x its bare forward pass in the bench
        self.chunk = int(chunk or batch_size)
        self.name = name
        #: the model returns scores that may be logits (softmax applied), not probabilities
        self.logits = logits
        self.cache: dict[str, np.ndarray] = {}
        #: the model object behind ``proba`` (an endpoint's answers and counts), when known
        self.model: Any = None
        #: texts sent to the model, and seconds spent in it
        self.predicted = 0
        self.model_seconds = 0.0

    def missing(self, texts: Sequence[str]) -> list[str]:
        """The distinct texts of ``texts`` not predicted yet, shortest first."""
        cache = self.cache
        new = [t for t in dict.fromkeys(texts) if t not in cache]
        new.sort(key=len)
        return new

    def fill(self, texts: Sequence[str]) -> None:
        """Predict the texts not in the cache (length-sorted batches)."""
        new = self.missing(texts)
        bs = self.chunk
        t0 = time.perf_counter()
        with _inference():
            for s in range(0, len(new), bs):
                chunk = new[s: s + bs]
                probs = _checked(self.proba(chunk), len(chunk), self.name, self.logits)
                for t, row in zip(chunk, probs, strict=True):
                    self.cache[t] = row
        self.model_seconds += time.perf_counter() - t0
        self.predicted += len(new)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        self.fill(texts)
        if not texts:
            return np.zeros((0, 0))
        return np.stack([self.cache[t] for t in texts])


@contextlib.contextmanager
def _inference() -> Iterator[None]:
    """``torch.inference_mode`` around model calls when torch is loaded (a Python model may not
    use torch at all: then nothing is imported)."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        yield
        return
    with torch.inference_mode():
        yield


#: how far a row of ``predict_proba`` may sum from 1
PROBA_TOLERANCE = 1e-3


def _checked(probs: Any, n: int, name: str, logits: bool = True) -> np.ndarray:
    """Probabilities from a model's output: a float array n × classes whose rows sum to 1.
    ``logits``: scores that are not probabilities go through softmax (a TextAttack wrapper of a
    Hugging Face model returns logits); otherwise (``predict_proba``) they are an error."""
    if hasattr(probs, "detach"):
        probs = probs.detach().float().cpu().numpy()
    arr = np.asarray(probs, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] < 2:
        raise InputError(f"{name}: expected an array of shape ({n}, k) — one row of k >= 2 "
                         f"class probabilities per text — got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name}: returned non-finite scores")
    sums = arr.sum(axis=1)
    if not logits and (arr.min() < 0 or not np.allclose(sums, 1.0, atol=PROBA_TOLERANCE)):
        bad = int(np.argmax(np.abs(sums - 1.0)))
        raise InputError(f"{name}: predict_proba must return probabilities (each row >= 0, "
                         f"summing to 1 within {PROBA_TOLERANCE:g}); row {bad} sums to "
                         f"{sums[bad]:.4g} (min {arr.min():.4g}): logits? apply softmax, or pass "
                         "a callable returning logits")
    if arr.min() < 0 or not np.allclose(sums, 1.0, atol=1e-4):
        z = arr - arr.max(axis=1, keepdims=True)
        e = np.exp(z)
        arr = e / e.sum(axis=1, keepdims=True)
    return arr


# ---- what a model can be ---------------------------------------------------------------------------


def _is_pipeline(obj: Any) -> bool:
    import sys

    pipelines = sys.modules.get("transformers.pipelines")
    base = getattr(pipelines, "Pipeline", None) if pipelines is not None else None
    return base is not None and isinstance(obj, base)


def _is_textattack_wrapper(obj: Any) -> bool:
    import sys

    wrappers = sys.modules.get("textattack.models.wrappers")
    base = getattr(wrappers, "ModelWrapper", None) if wrappers is not None else None
    return base is not None and isinstance(obj, base)


def pipeline_proba(pipe: Any, batch_size: int = 128) -> ProbaFn:
    """A ``transformers`` text-classification pipeline as probabilities in the model's label
    order (``config.label2id``)."""
    label2id = {str(k): int(v) for k, v in pipe.model.config.label2id.items()}
    n = int(pipe.model.config.num_labels)

    def proba(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), n))
        for i, scores in enumerate(pipe(texts, top_k=None, batch_size=batch_size,
                                        truncation=True)):
            for s in scores:
                out[i, label2id[str(s["label"])]] = float(s["score"])
        return out

    return proba


def object_proba(model: Any, batch_size: int = 128) -> ProbaFn:
    """A Python model object as a probability function (see the module docstring)."""
    if _is_pipeline(model):
        return pipeline_proba(model, batch_size)
    if hasattr(model, "predict_batch_size"):  # a robustlab classifier batches by this
        with contextlib.suppress(AttributeError, TypeError):
            model.predict_batch_size = int(batch_size)
    if callable(getattr(model, "predict_proba", None)):
        return lambda texts: model.predict_proba(texts)
    if _is_textattack_wrapper(model) or callable(model):
        return lambda texts: model(texts)
    raise InputError(f"{type(model).__name__}: not a model robustlab can evaluate; pass an object "
                     "with a batch predict_proba(list[str]), a TextAttack ModelWrapper or a "
                     "transformers text-classification pipeline")


def load_trained(spec: str, device: str | None = None) -> Any:
    """The trained model a spec names: a saved robustlab directory or a checkpoint (see
    :func:`load_checkpoint`); a family name is refused (it would be untrained)."""
    from robustlab.models.registry import is_saved_model, load_saved
    from robustlab.runs.inputs import check_trained_model

    check_trained_model(spec, trusted=False)
    if is_saved_model(spec):
        return load_saved(spec, device=device)
    return load_checkpoint(spec, device)


def as_predictor(model: Any, *, device: str | None = None, batch_size: int = 128,
                 name: str = "model", run_dir: Any = None, trusted: bool = False) -> Predictor:
    """A :class:`Predictor` over a model spec (str) or a Python model object. An endpoint
    (:mod:`robustlab.endpoints`) stores its answers in ``run_dir``'s store as they arrive and
    reads the key its card names only when ``trusted`` (the spec was typed on this command
    line)."""
    if isinstance(model, str) and is_endpoint(model):
        return endpoint_predictor(model, run_dir=run_dir, trusted=trusted, name=name)
    if isinstance(model, str):
        model = load_trained(model, device)
    # robustlab's classifiers batch (by token length) inside predict_proba: give them many
    # batches at once; anything else gets one batch per call
    chunk = batch_size * CHUNK_BATCHES if hasattr(model, "predict_batch_size") else batch_size
    # predict_proba promises probabilities: anything else is an error, not softmaxed
    logits = not (callable(getattr(model, "predict_proba", None)) or _is_pipeline(model))
    pred = Predictor(object_proba(model, batch_size), batch_size, name, chunk=chunk,
                     logits=logits)
    pred.model = model
    return pred


#: batches per call of a robustlab classifier's predict_proba
CHUNK_BATCHES = 32
#: texts per call of an endpoint's predict_proba: every text a cell needs, so its requests
#: run ``--max-concurrency`` at a time (each answer is stored as it arrives, however many)
ENDPOINT_CHUNK = 1 << 20


def endpoint_predictor(spec: str, *, run_dir: Any, trusted: bool, name: str) -> Predictor:
    """A :class:`Predictor` over the endpoint ``spec`` names, its answers cached in
    ``run_dir``'s store (none: Python without a run)."""
    from robustlab.endpoints import LIMITS, open_endpoint
    from robustlab.runs.store import StoreCache

    cache = StoreCache(run_dir) if run_dir is not None else None
    model = open_endpoint(spec, cache=cache, trusted=trusted, limits=LIMITS)
    pred = Predictor(model.predict_proba, ENDPOINT_CHUNK, name, chunk=ENDPOINT_CHUNK,
                     logits=False)
    pred.model = model
    return pred


__all__ = ["Predictor", "as_predictor", "check_checkpoint", "load_checkpoint", "load_trained", "object_proba",
           "pipeline_proba"]
