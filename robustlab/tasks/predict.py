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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from robustlab.tasks.base import Task
from robustlab.tasks.perturb import TaskError

__all__ = ["predict"]


def predict(task: Task, model: Any, examples: Sequence[Any]) -> list[Any]:
    """``model``'s predictions for ``examples`` in ``task``'s normal form (checked)."""
    examples = list(examples)
    if not examples:
        return []
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
