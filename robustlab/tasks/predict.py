"""A model's predictions for a task's examples, from any object with the task's batch method:

==================  =================================  =====================================
task                method                             returns
==================  =================================  =====================================
classification      ``predict_proba(texts)``           a probability row per text
pair                ``predict_proba([(a, b), ...])``   a probability row per pair
similarity          ``predict_scores([(a, b), ...])``  a score per pair
ner                 ``predict_tags([tokens, ...])``    a tag sequence per sentence
answer-selection    ``predict_candidate_scores(        a score per candidate
                    [(question, candidates), ...])``
==================  =================================  =====================================

An answer-selection model may instead be a pair classifier (``predict_proba`` on
(question, sentence) pairs, class 1 = answers): its class-1 probability is the candidate's score.
A classifier's ``classes_`` (class names in probability order), when it has one, names the rows.

A ``transformers`` pipeline is wrapped by :class:`PipelinePredictor`: ``token-classification``
(built with ``aggregation_strategy="none"``) gives each word the tag of its first piece, found by
character offsets in the words joined by spaces; ``text-classification`` takes texts or
``{"text", "text_pair"}`` pairs and gives probability rows (``classes_`` from the model's
``id2label``), or, for a one-output model, the raw score.

A TextAttack ``ModelWrapper`` (``HuggingFaceModelWrapper``, ``PyTorchModelWrapper``,
``SklearnModelWrapper``, ...) is wrapped by :class:`TextAttackPredictor` for the tasks TextAttack
attacks: classification (a list of texts) and pairs (a list of ``(premise, hypothesis)``
tuples, what TextAttack's goal functions pass for a two-column dataset such as SNLI); answer
selection reads a pair wrapper's class-1 score. Its output (logits, as a Hugging Face wrapper
returns, or probabilities) becomes probability rows; the rows are named by the wrapped model's
``config.id2label`` when it has one, else by the data's classes in index order. TextAttack has no
wrapper or goal function for token tags (NER) or a regression score (similarity): such a
wrapper is refused in one line for those tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robustlab.tasks.base import Task
from robustlab.tasks.perturb import TaskError

__all__ = ["PipelinePredictor", "TextAttackPredictor", "predict"]


class PipelinePredictor:
    """A ``transformers`` pipeline behind the tasks' batch methods (module docstring)."""

    def __init__(self, pipe: Any, batch_size: int = 32) -> None:
        self.pipe = pipe
        self.batch_size = batch_size
        config = pipe.model.config
        self.classes_ = [str(config.id2label[i]) for i in range(config.num_labels)]

    def _need(self, kind: str) -> None:
        if self.pipe.task != kind:
            raise TaskError(f"a {self.pipe.task} pipeline cannot do what a {kind} pipeline does")

    def predict_tags(self, token_lists: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        self._need("token-classification")
        texts = [" ".join(t) for t in token_lists]
        outs = self.pipe(texts, batch_size=self.batch_size) if texts else []
        result = []
        for toks, pieces in zip(token_lists, outs, strict=True):
            starts, pos = {}, 0
            for i, tok in enumerate(toks):
                starts[pos] = i
                pos += len(tok) + 1
            tags = ["O"] * len(toks)
            seen: set[int] = set()
            for piece in pieces:
                if "entity" not in piece:
                    raise TaskError("the token-classification pipeline groups pieces into "
                                    "entities; build it with aggregation_strategy='none'")
                i = starts.get(piece.get("start"))
                if i is not None and i not in seen:
                    seen.add(i)
                    tags[i] = str(piece["entity"])
            result.append(tuple(tags))
        return result

    def _classify(self, inputs: Sequence[Any], **kw: Any) -> list[list[dict[str, Any]]]:
        self._need("text-classification")
        items = [x if isinstance(x, str) else {"text": x[0], "text_pair": x[1]} for x in inputs]
        return self.pipe(items, top_k=None, batch_size=self.batch_size, **kw) if items else []

    def predict_proba(self, inputs: Sequence[Any]) -> list[list[float]]:
        rows = []
        for out in self._classify(inputs):
            by = {str(d["label"]): float(d["score"]) for d in out}
            rows.append([by[c] for c in self.classes_])
        return rows

    def predict_scores(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if len(self.classes_) != 1:
            raise TaskError(f"a similarity pipeline has one output; this one has "
                            f"{len(self.classes_)} ({', '.join(self.classes_)})")
        return [float(out[0]["score"]) for out in self._classify(pairs, function_to_apply="none")]


def _is_pipeline(model: Any) -> bool:
    return any(c.__module__.startswith("transformers.pipelines") for c in type(model).__mro__)


def _is_textattack_wrapper(model: Any) -> bool:
    """A TextAttack ``ModelWrapper`` (textattack imported by whoever made it: never here)."""
    return any(c.__module__.startswith("textattack.models.wrappers") and
               c.__name__ == "ModelWrapper" for c in type(model).__mro__)


class TextAttackPredictor:
    """A TextAttack ``ModelWrapper`` behind ``predict_proba`` (module docstring): called on
    ``batch_size`` inputs at a time (a wrapper sends its whole list to the model in one batch;
    TextAttack's own attacks batch by 32), its output turned into probability rows."""

    #: the tasks TextAttack has wrappers and goal functions for
    TASKS = ("classification", "pair", "answer-selection")

    def __init__(self, wrapper: Any, task: Task, batch_size: int = 32) -> None:
        if task.name not in self.TASKS:
            raise TaskError(f"{task.name}: TextAttack has no wrapper for {task.prediction} "
                            f"(its wrappers and attacks are for classifiers); pass an object "
                            f"with {task.predict_method}() or a transformers pipeline")
        self.wrapper = wrapper
        self.batch_size = batch_size
        config = getattr(getattr(wrapper, "model", None), "config", None)
        id2label = getattr(config, "id2label", None)
        if id2label and len(id2label) == getattr(config, "num_labels", len(id2label)):
            self.classes_ = [str(id2label[i]) for i in range(len(id2label))]

    def predict_proba(self, inputs: Sequence[Any]) -> list[list[float]]:
        import numpy as np

        rows = []
        for a in range(0, len(inputs), self.batch_size):
            # a pair as a tuple: what TextAttack passes for a two-column dataset
            part = [x if isinstance(x, str) else tuple(x) for x in inputs[a: a + self.batch_size]]
            out = self.wrapper(part)
            if hasattr(out, "detach"):
                out = out.detach().float().cpu().numpy()
            arr = np.asarray(out, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[0] != len(part) or arr.shape[1] < 2:
                raise TaskError(f"the TextAttack wrapper returned shape {arr.shape} for "
                                f"{len(part)} inputs; a classifier's wrapper returns one row of "
                                "k >= 2 scores per input")
            if arr.min() < 0 or not np.allclose(arr.sum(axis=1), 1.0, atol=1e-4):
                arr = np.exp(arr - arr.max(axis=1, keepdims=True))  # logits: softmax
                arr /= arr.sum(axis=1, keepdims=True)
            rows.extend(arr.tolist())
        return rows


def predict(task: Task, model: Any, examples: Sequence[Any]) -> list[Any]:
    """``model``'s predictions for ``examples`` in ``task``'s normal form (checked)."""
    examples = list(examples)
    if not examples:
        return []
    if _is_pipeline(model):
        model = PipelinePredictor(model)
    elif _is_textattack_wrapper(model):
        model = TextAttackPredictor(model, task)
    method = getattr(model, task.predict_method, None)
    if method is None and task.name == "answer-selection" and hasattr(model, "predict_proba"):
        pairs = [(ex.question, c) for ex in examples for c in ex.candidates]
        probs = model.predict_proba(pairs)
        if len(probs) and len(probs[0]) != 2:
            raise TaskError(f"answer-selection: a pair classifier must have 2 classes (0, 1), "
                            f"this one has {len(probs[0])}")
        out, k = [], 0
        for ex in examples:
            out.append([float(p[1]) for p in probs[k: k + len(ex.candidates)]])
            k += len(ex.candidates)
        return task.check_predictions(examples, out)
    if method is None:
        raise TaskError(f"{task.name}: the model ({type(model).__name__}) has no "
                        f"{task.predict_method}() method; a {task.name} model predicts "
                        f"{task.prediction}")
    preds = list(method(task.model_inputs(examples)))
    classes = getattr(model, "classes_", None)
    if task.predict_method == "predict_proba" and classes is not None:
        return task.check_predictions(examples, preds, classes=[str(c) for c in classes])
    return task.check_predictions(examples, preds)
