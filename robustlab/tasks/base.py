"""The task concept: one object per task says what an example and a prediction are, how its
files are read and written, which of its texts a perturbation changes, how it is scored and what
a failure is. Commands, studies, reports and the TUI ask the task instead of branching on it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from robustlab.tasks.formats import Corpus, write_corpus
from robustlab.tasks.perturb import Perturbed, TaskError, perturb_texts

__all__ = ["FIELDS", "Task"]

#: the values of ``--perturb-field``: the first text of a pair (the question for answer
#: selection), the second (the candidate sentences), or both
FIELDS = ("first", "second", "both")


class Task:
    """Base of the five tasks (:mod:`robustlab.tasks.builtin`); subclasses fill the class
    attributes and the methods marked so."""

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""
    #: file formats :meth:`read` accepts (the first is the default)
    formats: ClassVar[tuple[str, ...]] = ()
    #: what one prediction is, in words (for messages and docs)
    prediction: ClassVar[str] = ""
    #: metric names :meth:`metrics` returns at top level; the first is the task's headline
    metric_names: ClassVar[tuple[str, ...]] = ()
    #: the metric paper 001 reports for the task (Table 1)
    paper_metric: ClassVar[str] = ""
    #: the fields a perturbation may change: () for one text, FIELDS for two
    fields: ClassVar[tuple[str, ...]] = ()
    default_field: ClassVar[str | None] = None
    #: the batch method a model of this task has (:func:`robustlab.tasks.predict.predict`)
    predict_method: ClassVar[str] = ""

    @property
    def primary_metric(self) -> str:
        return self.metric_names[0]

    # ---- files -----------------------------------------------------------------------------
    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        """The examples of a file (subclass)."""
        raise NotImplementedError

    def write(self, path: str | os.PathLike[str], corpus: Corpus, *, user: bool = True) -> Path:
        """Write ``corpus`` back in its own format (nothing written on an error)."""
        return write_corpus(path, corpus, user=user)

    # ---- predictions and metrics ----------------------------------------------------------
    def model_inputs(self, examples: Sequence[Any]) -> list[Any]:
        """What the task's predict method takes for ``examples`` (subclass)."""
        raise NotImplementedError

    def gold(self, examples: Sequence[Any]) -> list[Any]:
        """The gold answer of each example, in the form of a prediction (subclass)."""
        raise NotImplementedError

    def check_predictions(self, examples: Sequence[Any], predictions: Sequence[Any]) -> list[Any]:
        """``predictions`` in the task's normal form, or :class:`TaskError` naming the first bad
        one (wrong count, wrong length, not a number, unknown class)."""
        if len(predictions) != len(examples):
            raise TaskError(f"{self.name}: {len(predictions)} predictions for {len(examples)} "
                            "examples")
        return [self.normal_prediction(ex, p, i) for i, (ex, p) in
                enumerate(zip(examples, predictions, strict=True))]

    def normal_prediction(self, example: Any, prediction: Any, index: int) -> Any:
        raise NotImplementedError

    def metrics(self, examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, Any]:
        """The task's metrics of ``predictions`` against the examples' gold (subclass)."""
        raise NotImplementedError

    def failed(self, before: Any, after: Any, perturbed: Perturbed | None = None,
               tolerance: float | None = None) -> bool:
        """Whether the prediction on a perturbed example (``after``) fails the one on its clean
        original (``before``), in the task's terms (subclass)."""
        raise NotImplementedError

    # ---- what a perturbation's outcome is tested against (CheckList test types) ---------
    def test_type(self, perturbation: Any, field: str | None = None,
                  examples: Sequence[Any] = ()) -> tuple[str, str | None]:
        """CheckList's test of ``perturbation`` on this task
        (:mod:`robustlab.metrics.checklist_tests`): ``INV`` for a label-preserving one (scored
        against the gold label, failing by :meth:`failed`); for a label-changing one (negation)
        ``DIR`` with the expectation the perturbation declares for the task, else ``changed``
        (the share of moved predictions only: no metric against a label it invalidated, no
        pass/fail). Subclasses say where an expectation is sound."""
        from robustlab.metrics.checklist_tests import declared_type

        return declared_type(perturbation, None)

    def expectation_failed(self, expectation: str, original: Any, perturbed: Any, before: Any,
                           after: Any) -> bool | None:
        """Whether a changed example fails a ``DIR`` test's ``expectation`` (None: the
        expectation says nothing about this example, e.g. an NLI pair that is not entailment);
        subclasses that declare an expectation in :meth:`test_type` decide it."""
        raise NotImplementedError(f"{self.name}: no DIR expectation {expectation!r}")

    # ---- perturbations ---------------------------------------------------------------------
    def field(self, field: str | None) -> str | None:
        """The field to perturb: ``field`` checked, or the task's default."""
        if field is None:
            return self.default_field
        if not self.fields:
            raise TaskError(f"--perturb-field {field}: a {self.name} example has one text; the "
                            "option is for pairs")
        if field not in self.fields:
            raise TaskError(f"--perturb-field {field!r}: choose from {', '.join(self.fields)}")
        return field

    def refusal(self, perturbation: Any) -> str | None:
        """One line saying why ``perturbation`` cannot be applied to this task, or None."""
        return None

    def perturb(self, examples: Sequence[Any], perturbation: Any, seed: int = 0,
                field: str | None = None) -> list[Perturbed]:
        """Each example perturbed (its label kept; tags follow tokens); seeded."""
        raise NotImplementedError

    def _perturb_fields(self, examples: Sequence[Any], perturbation: Any, seed: int,
                        names: Sequence[str], field: str | None) -> list[Perturbed]:
        """Shared by the text tasks: perturb the attribute(s) ``names`` picks by ``field``."""
        from dataclasses import replace

        field = self.field(field)
        chosen = names if field in (None, "both") else [names[FIELDS.index(field)]]
        texts = {n: [getattr(ex, n) for ex in examples] for n in chosen}
        outs = {n: perturb_texts(perturbation, texts[n], seed) for n in chosen}
        result = []
        for i, ex in enumerate(examples):
            errors = [outs[n][i][1] for n in chosen if outs[n][i][1]]
            if errors:
                result.append(Perturbed(ex, ex, False, errors[0]))
                continue
            new = replace(ex, **{n: outs[n][i][0] for n in chosen})
            result.append(Perturbed(ex, new, new != ex))
        return result


def finite(value: Any, what: str) -> float:
    """``value`` as a finite float, or :class:`TaskError` naming ``what``."""
    try:
        f = float(value)
    except (TypeError, ValueError):
        raise TaskError(f"{what}: {value!r} is not a number") from None
    if not math.isfinite(f):
        raise TaskError(f"{what}: {value!r} is not a finite number")
    return f
