"""Tasks: what an example, a prediction, a metric and a failure are for each kind of model
robustlab tests (paper 001's five tasks and SNLI pairs), owned in one place.

    from robustlab.tasks import get_task
    ner = get_task("ner")
    corpus = ner.read("../shared/data/conll2003/test.txt")
    perturbed = ner.perturb(corpus.examples, make("word_delete"), seed=0)
    ner.metrics([p.example for p in perturbed], predictions)

Importing this package loads no model library; metrics import scikit-learn/scipy/seqeval when
called.
"""

from __future__ import annotations

from robustlab.tasks.base import FIELDS, Task
from robustlab.tasks.builtin import (
    AnswerSelection,
    Classification,
    Ner,
    PairClassification,
    Similarity,
)
from robustlab.tasks.detect import detect_task
from robustlab.tasks.formats import Corpus
from robustlab.tasks.perturb import Perturbed, TaskError

__all__ = [
    "FIELDS",
    "TASKS",
    "Corpus",
    "Perturbed",
    "Task",
    "TaskError",
    "available",
    "detect_task",
    "get_task",
]

#: every task by name, in the order of paper 001's Table 1 (SNLI pairs last)
TASKS: dict[str, Task] = {t.name: t for t in (Classification(), Ner(), Similarity(),
                                              AnswerSelection(), PairClassification())}
_ALIASES = {a: t.name for t in TASKS.values() for a in t.aliases}


def available() -> list[str]:
    """The task names."""
    return list(TASKS)


def get_task(name: str | Task) -> Task:
    """The task called ``name`` (or an alias: ``sts``, ``nli``, ``wikiqa``, ``conll``), or
    :class:`TaskError` listing the names."""
    if isinstance(name, Task):
        return name
    key = str(name).strip().lower().replace("_", "-")
    key = _ALIASES.get(key, _ALIASES.get(str(name).strip().lower(), key))
    if key not in TASKS:
        raise TaskError(f"unknown task {name!r}; choose from {', '.join(TASKS)} (aliases: "
                        f"{', '.join(sorted(_ALIASES))})")
    return TASKS[key]
