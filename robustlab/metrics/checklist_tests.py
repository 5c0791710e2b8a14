"""CheckList's test types for one perturbation of a classification task (Ribeiro et al., 2020).

* **INV** (invariance) — a label-preserving perturbation: the prediction should not change. An
  example fails when it does; A1 (accuracy on the perturbed texts, against the original label) is
  meaningful because the label still holds.
* **DIR** (directional expectation) — a label-changing perturbation whose expectation the
  perturbation declares for the task (:attr:`Perturbation.expectations`): ``negation`` on a
  binary task expects ``flip``: the prediction changes, or the probability of the original label
  falls. An example fails when neither happens. A1 is not computed: the original label no longer
  holds.
* **changed** — a label-changing perturbation with no expectation declared for the task: only
  the share of changed predictions is reported, with no pass/fail and no A1.

Pure functions: the eval study, ``robustlab failures``, the report, the TUI and ``robustlab
check`` all decide with these, so they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

INV, DIR, CHANGED = "INV", "DIR", "changed"
#: what each declared expectation means (shown in reports and docs)
EXPECTATIONS = {"flip": "the prediction changes or P(original label) falls",
                # sentence pairs (NLI, robustlab.tasks): premise P entails hypothesis H, so P
                # cannot entail not-H (P would contradict itself): a pair whose hypothesis
                # alone was negated and whose gold label is entailment fails when the model
                # still predicts entailment
                "not entailment": "a hypothesis negated on an entailment pair is not "
                                  "predicted entailment"}


def task_of(n_classes: int) -> str:
    """The task name perturbations declare expectations for: ``binary`` (two classes, e.g.
    robustlab's sentiment sets) or ``N-class``."""
    return "binary" if int(n_classes) == 2 else f"{int(n_classes)}-class"


def checklist_type(perturbation: Any, n_classes: int) -> tuple[str, str | None]:
    """(INV | DIR | changed, the DIR expectation or None) of a perturbation on a task."""
    return declared_type(perturbation, task_of(n_classes))


def declared_type(perturbation: Any, task: str | None) -> tuple[str, str | None]:
    """(INV | DIR | changed, the expectation or None) of a perturbation on the task that
    perturbations name ``task`` (:func:`task_of`; ``nli`` for sentence pairs whose hypothesis is
    perturbed; None: no expectation can hold)."""
    if getattr(perturbation, "label_preserving", True):
        return INV, None
    declared: Mapping[str, str] = getattr(perturbation, "expectations", None) or {}
    exp = declared.get(task) if task is not None else None
    if exp is not None and exp not in EXPECTATIONS:
        raise ValueError(f"{getattr(perturbation, 'name', perturbation)}: unknown expectation "
                         f"{exp!r}; known: {', '.join(EXPECTATIONS)}")
    return (DIR, exp) if exp else (CHANGED, None)


def example_fails(test: str, pred_before: int, pred_after: int, prob_before: float,
                  prob_after: float) -> bool | None:
    """Whether one changed example fails its test (None: the test has no pass/fail).

    ``prob_*`` are the probabilities of the example's original label before and after."""
    if test == INV:
        return int(pred_after) != int(pred_before)
    if test == DIR:  # "flip": the prediction changes or P(original label) falls
        return int(pred_after) == int(pred_before) and float(prob_after) >= float(prob_before)
    return None


def header(test: str, expectation: str | None = None) -> str:
    """The test's name as a column header or row tag: ``INV``, ``DIR flip``, ``changed``."""
    return f"DIR {expectation}" if test == DIR and expectation else test


__all__ = ["CHANGED", "DIR", "EXPECTATIONS", "INV", "checklist_type", "declared_type",
           "example_fails", "header", "task_of"]
