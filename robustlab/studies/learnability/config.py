"""The configuration of a learnability / robustness study, and the options derived from it.

:class:`LearnabilityStudy` is the run's identity (stored as :meth:`to_dict`, rebuilt by
``robustlab resume`` with :meth:`from_dict`); its fields hold every default, and
:meth:`add_arguments` / :meth:`from_args` derive the command line from them (as TextAttack's
``AttackArgs`` does), so a default is written once and checked once (:meth:`validate`).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from robustlab.errors import InputError
from robustlab.metrics.learnability import CHECK_P, DEFAULT_ESTIMATE_P, DEFAULT_P_GRID
from robustlab.models.params import MAX_STEPS
from robustlab.models.registry import canonical_model_spec, check_model_spec
from robustlab.options import (
    SEED_LIMIT,
    add_dataset_options,
    add_model_option,
    add_seeds_option,
    check_seed_count,
    dataset_spec,
    floats,
    ints,
    split_list,
    split_specs,
)
from robustlab.perturbations.base import PerturbationError
from robustlab.perturbations.presets import PAPER_PERTURBATIONS, expand
from robustlab.perturbations.registry import parse_spec
from robustlab.runs import fields as field_options
from robustlab.runs import payloads
from robustlab.runs.fields import in_cell, option
from robustlab.runs.store import Cell
from robustlab.runs.study import StudyConfig

KIND = "learnability"
KINDS = ("learnability", "robustness")
EXPERIMENTS = ("standard", "robustness", "augmentation", "learnability")
ROBUSTNESS_EXPERIMENTS = ("standard", "robustness", "augmentation")
for _kind in KINDS:  # what the summaries index in every cell's result (docs/run-directory.md)
    payloads.register_result(_kind, {
        "model": str, "perturbation": str, "seed": int, "experiment": str,
        "accuracy": (payloads.NUMBER, None), "p": (payloads.NUMBER, None)})
ESTIMATE_MODES = ("full", "quick")
#: the keys a stored dataset spec may have, with their JSON types (a stored run is untrusted)
DATASET_KEYS: dict[str, tuple[type, ...]] = {
    "name": (str,), "path": (str,), "test_path": (str,), "format": (str,), "encoding": (str,),
    "text_column": (str, int), "text_pair_column": (str, int), "label_column": (str, int),
    "header": (bool,), "test_split": (str,), "test_size": (float, int),
}


def _learn(context: dict[str, Any]) -> bool:
    """The options only ``learnability`` has (not ``robustness``)."""
    return context.get("kind", KIND) == "learnability"


def format_p(p: float | None) -> str:
    """A probability as cell keys and tables show it (6 significant digits)."""
    return "-" if p is None else format(float(p), "g")



def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)

@dataclass(frozen=True)
class LearnabilityStudy(StudyConfig):
    """Pure configuration of a study (cheap to build; ``validate`` checks it).

    ``models`` are model specs (a family such as ``bow``/``textrnn``, ``family:key=value,…``, a
    Hugging Face checkpoint or a saved model directory, by its absolute path); ``perturbations``
    are perturbation specs (``name`` or ``name:key=value,…``); ``dataset`` is a dataset spec
    understood by :func:`robustlab.studies.learnability.data.load_splits`.
    """

    KIND: ClassVar[str] = KIND

    # the fields' order is the signature's; ``order`` places an option in --help. p_grid,
    # experiments, estimate and estimate_p are options of ``learnability`` only (``robustness``
    # fixes them), resolved together with the models by derive_options. ``in_cell``: each
    # cell's signature is exp, model, pert, p, seed, steps, data — the cell's own value of
    # these fields, in the order stored runs have (study.py's cell function gives the values)
    models: tuple[str, ...] = field(metadata={**option(
        add=lambda g: add_model_option(g, multi=True),
        show=lambda v, _: [x for m in v for x in ("--model", m)], always=True),
        **in_cell("model", 1)})
    perturbations: tuple[str, ...] = field(default=PAPER_PERTURBATIONS, metadata={**option(
        "--perturbations", default=",".join(PAPER_PERTURBATIONS), metavar="LIST",
        help="comma-separated perturbation specs (default: the paper's eight as robustlab's "
        "built-ins; 'papers': the eight as the papers ran them)",
        parse=lambda v: tuple(split_specs(v)), argv_order=2.5,
        show=lambda v, _: ["--perturbations", ",".join(v)], always=True),
        **in_cell("pert", 2)})
    dataset: dict[str, Any] = field(default_factory=lambda: {"name": "demo"}, metadata={**option(
        add=lambda g: add_dataset_options(g, test=True, split=False), read=dataset_spec,
        order=0.5, show=lambda v, _: dataset_argv(v), always=True), **in_cell("data", 6)})
    p_grid: tuple[float, ...] = field(default=DEFAULT_P_GRID, metadata={**option(
        "--p-grid", default=",".join(str(p) for p in DEFAULT_P_GRID), metavar="LIST",
        help=lambda d: f"perturbation probabilities (default {d})", when=_learn,
        show=lambda v, c: c.learnability_argv(), always=True),
        **in_cell("p", 3, lambda v, _: format_p(v))})
    seeds: tuple[int, ...] = field(default=(0, 1, 2), metadata={**option(
        add=lambda g: add_seeds_option(g, default="0,1,2"), read=lambda a: ints(a.seeds, "--seeds"),
        show=lambda v, _: ["--seeds", ",".join(str(s) for s in v)], always=True),
        **in_cell("seed", 4)})
    experiments: tuple[str, ...] = field(default=EXPERIMENTS, metadata={**option(
        "--experiments", default=",".join(EXPERIMENTS), metavar="LIST", order=3.3, when=_learn,
        help="which of exp 0/1/2/3-4 to run (default all; 'learnability' alone gives CENT "
        "without the robustness side)", show=lambda v, _: []), **in_cell("exp", 0)})
    steps: int = field(default=200, metadata={**option(
        "--steps", type=int, always=True,
        help=lambda d: f"training steps, the same for every experiment (default {d})"),
        **in_cell("steps", 5)})
    max_train: int | None = field(default=None, metadata=option(
        "--max-train", type=int, metavar="N", help="balanced subsample of the train set"))
    max_test: int | None = field(default=None, metadata=option(
        "--max-test", type=int, metavar="N", help="balanced subsample of the test set"))
    kind: str = KIND
    #: "full": the whole p-grid; "quick": only estimate_p (every seed) and p = 1 (first seed)
    estimate: str = field(default="full", metadata=option(
        "--estimate", choices=ESTIMATE_MODES, order=3.1, when=_learn, show=lambda v, _: [],
        help="full: the whole p-grid and its log-AUC (default); quick: a cheap learnability "
        "ESTIMATE, learnability at --estimate-p for every seed plus p=1 for the first seed (4 "
        "instead of 24 trainings per pair at 3 seeds)"))
    estimate_p: float = field(default=DEFAULT_ESTIMATE_P, metadata=option(
        "--estimate-p", type=float, metavar="P", order=3.2, when=_learn, show=lambda v, _: [],
        help=lambda d: f"p of the learnability estimate (default {d:g}: its ρ with average "
        "learnability, robustness and Δ peaks there in paper 000 Table 4)"))

    def __post_init__(self) -> None:
        # a preset ("papers") becomes its concrete specs: the stored config names what ran
        object.__setattr__(self, "perturbations", tuple(expand(self.perturbations)))
        if self.estimate == "quick":  # the grid of a quick estimate is fixed by estimate_p
            ps = sorted({float(self.estimate_p), CHECK_P}) if 0 < self.estimate_p <= 1 else []
            object.__setattr__(self, "p_grid", tuple(ps))

    def study_kind(self) -> str:
        return self.kind

    # ---- checks ----------------------------------------------------------------------------------

    def validate(self, *, trusted: bool = False) -> None:
        """Check the options (not the data); raise InputError naming the option and the fix."""
        if self.kind not in KINDS:
            raise InputError(f"unknown study kind {self.kind!r}; choose from {', '.join(KINDS)}")
        if not self.models:
            raise InputError("--model: give at least one model (e.g. --model bow)")
        if not self.perturbations:
            raise InputError("--perturbations: give at least one perturbation (e.g. leet_letters)")
        if not self.seeds:
            raise InputError("--seeds: give at least one seed")
        check_seed_count(self.seeds)
        if len(set(self.seeds)) != len(self.seeds):
            raise InputError(f"--seeds: duplicate seeds in {list(self.seeds)}")
        bad_seeds = [s for s in self.seeds if not 0 <= int(s) < SEED_LIMIT]
        if bad_seeds:
            raise InputError(f"--seeds: {bad_seeds[0]} is out of range; seeds are integers "
                             f"0 <= seed < 2**32 ({SEED_LIMIT}, numpy's limit)")
        unknown = sorted(set(self.experiments) - set(EXPERIMENTS))
        if unknown or not self.experiments:
            raise InputError(f"--experiments: unknown {', '.join(unknown) or '(empty)'}; choose "
                             f"from {', '.join(EXPERIMENTS)}")
        if self.estimate not in ESTIMATE_MODES:
            raise InputError(f"--estimate: unknown {self.estimate!r}; choose from "
                             f"{', '.join(ESTIMATE_MODES)}")
        if not (0 < float(self.estimate_p) <= 1):
            raise InputError(f"--estimate-p must lie in (0, 1], got {self.estimate_p}")
        if self.estimate == "quick" and "learnability" not in self.experiments:
            raise InputError("--estimate quick estimates learnability: keep 'learnability' in "
                             "--experiments")
        if "learnability" in self.experiments:
            p = list(self.p_grid)
            increasing = all(b > a for a, b in zip(p, p[1:], strict=False))
            if not p or any(not (0 < x <= 1) for x in p) or not increasing:
                raise InputError(f"--p-grid: probabilities must be increasing values in (0, 1], "
                                 f"got {p}")
            seen: dict[str, float] = {}
            for x in p:  # cell keys hold p to 6 significant digits (format_p)
                if format_p(x) in seen:
                    raise InputError(
                        f"--p-grid: {seen[format_p(x)]!r} and {x!r} are the same probability "
                        f"to the 6 significant digits of cell keys ({format_p(x)}); drop one")
                seen[format_p(x)] = x
        if not _integer(self.steps) or int(self.steps) < 1:
            raise InputError(f"--steps must be >= 1, got {self.steps!r}")
        if int(self.steps) > MAX_STEPS:  # 1e20 steps is a typo, not a study
            raise InputError(f"--steps {self.steps} is out of range: at most {MAX_STEPS} "
                             "optimiser steps per training")
        for opt, v in (("--max-train", self.max_train), ("--max-test", self.max_test)):
            if v is not None and (not _integer(v) or int(v) < 2):
                raise InputError(f"{opt} must be >= 2 (one example per class), got {v!r}")
        if len(set(self.models)) != len(self.models):
            raise InputError(f"--model: duplicate models in {list(self.models)}")
        if len(set(self.perturbations)) != len(self.perturbations):
            raise InputError(f"--perturbations: duplicates in {list(self.perturbations)}")
        check_dataset_spec(self.dataset)
        for spec in self.models:
            check_model_spec(spec, user_class=trusted)
        for spec in self.perturbations:
            try:
                parse_spec(spec, trusted=trusted)
            except PerturbationError as exc:
                raise InputError(f"--perturbations: {exc}") from None

    # ---- the stored identity -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Every option that determines results (stored in the run row; a resume must match)."""
        d = super().to_dict()
        if self.estimate == "full" and float(self.estimate_p) == DEFAULT_ESTIMATE_P:
            # a full grid with the default estimate keeps the configuration (and so the resume
            # check) of run directories written before the estimate existed
            del d["estimate"], d["estimate_p"]
        return d

    #: the name earlier versions gave :meth:`to_dict`
    config = to_dict

    def describe(self) -> str:
        where = self.dataset.get("name") or Path(str(self.dataset.get("path"))).name
        return f"{self.kind}: {', '.join(self.models)} on {where}"

    def learnability_ps(self, seed: int) -> tuple[float, ...]:
        """The p of the learnability cells of ``seed``: the grid, or for a quick estimate
        estimate_p (every seed) plus the p = 1 check (first seed only)."""
        if self.estimate != "quick" or int(seed) == int(self.seeds[0]):
            return tuple(self.p_grid)
        return (float(self.estimate_p),)

    def cells(self, fingerprint: str = "", num_threads: int | None = 1,
              cache_dir: str | None = None, device: str = "auto") -> list[Cell]:
        """Deterministic expansion into cells (order: model → seed → perturbation → exp → p).

        ``num_threads`` (torch threads per training) is a runtime option, not configuration:
        it does not change what is computed, so a resume may use another executor. So is
        ``cache_dir``, where worker processes share the clean model of exp 0/1, and ``device``
        (``--device``): a study started on a CPU machine resumes on a GPU one.
        """
        out: list[Cell] = []
        common = {"dataset": self.dataset, "steps": int(self.steps), "max_train": self.max_train,
                  "max_test": self.max_test, "data_fingerprint": fingerprint,
                  "num_threads": num_threads, "cache_dir": cache_dir, "device": device}
        for model in self.models:
            for seed in self.seeds:
                for pert in self.perturbations:
                    for exp in EXPERIMENTS:
                        if exp not in self.experiments:
                            continue
                        ps: Sequence[float | None] = (self.learnability_ps(seed)
                                                      if exp == "learnability" else [None])
                        for p in ps:
                            params = {"model": model, "perturbation": pert, "experiment": exp,
                                      "p": p, "seed": int(seed), **common}
                            out.append(Cell(cell_key(model, pert, exp, p, seed), self.kind, params))
        return out

    # ---- the command line ----------------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, kind: str = KIND) -> None:
        """The study's options (one "study" group), from the fields; ``robustness`` has no
        p-grid, estimate or experiments options."""
        field_options.add_arguments(cls, parser.add_argument_group("study"), kind=kind)

    @classmethod
    def derive_options(cls, args: argparse.Namespace, kind: str = KIND, **_: Any
                       ) -> dict[str, Any]:
        """The models and the learnability-only options, resolved together (a quick estimate
        fixes its own grid; ``robustness`` runs exp 0/1/2)."""
        d = {f.name: f.default for f in fields(cls)}
        models = split_specs(args.model)
        if not models:
            raise InputError("--model: give at least one model (e.g. --model bow)")
        learn = kind == "learnability"
        estimate = getattr(args, "estimate", d["estimate"]) if learn else d["estimate"]
        estimate_p = getattr(args, "estimate_p", None)
        grid_text = getattr(args, "p_grid", None)
        p_grid = floats(grid_text, "--p-grid") if learn and grid_text else (
            d["p_grid"] if learn else ())
        if estimate == "quick" and tuple(p_grid) != tuple(d["p_grid"]):
            raise InputError("--p-grid does not go with --estimate quick (its p are "
                             "--estimate-p and 1); drop one of them")
        if learn:
            experiments = split_list(getattr(args, "experiments", None) or ",".join(
                d["experiments"]))
            unknown = sorted(set(experiments) - set(EXPERIMENTS))
            if unknown or not experiments:
                raise InputError(f"--experiments: unknown {', '.join(unknown) or '(empty)'}; "
                                 f"choose from {', '.join(EXPERIMENTS)}")
            experiments = [e for e in EXPERIMENTS if e in experiments]
        else:
            experiments = list(ROBUSTNESS_EXPERIMENTS)
        return {"models": tuple(canonical_model_spec(m) for m in models),
                "p_grid": tuple(p_grid), "experiments": tuple(experiments),
                "estimate": estimate,
                "estimate_p": d["estimate_p"] if estimate_p is None else float(estimate_p)}

    @classmethod
    def from_args(cls, args: argparse.Namespace, kind: str = KIND) -> LearnabilityStudy:
        """The config of a parsed command line (paths made absolute); not yet validated."""
        return field_options.from_args(cls, args, kind=kind)

    def argv(self) -> list[str]:
        """The command that reproduces this study (for people; never parsed back)."""
        return field_options.argv(self, [self.kind])

    def learnability_argv(self) -> list[str]:
        """The learnability-only options as one block (their order depends on the mode)."""
        if self.kind == "learnability" and self.estimate == "quick":
            return ["--estimate", "quick", "--estimate-p", format(self.estimate_p, "g"),
                    "--experiments", ",".join(self.experiments)]
        if self.kind != "learnability":
            return []
        out = ["--p-grid", ",".join(format_p(p) for p in self.p_grid),
               "--experiments", ",".join(self.experiments)]
        if "estimate_p" in self.to_dict():
            out += ["--estimate-p", format(self.estimate_p, "g")]
        return out


def check_dataset_spec(spec: Any) -> None:
    """A dataset spec holds known keys of the right JSON types, and a name or a path."""
    if not isinstance(spec, dict):
        raise InputError(f"--dataset: a dataset spec must be an object, got {type(spec).__name__}")
    for key, value in spec.items():
        types_ = DATASET_KEYS.get(key)
        if types_ is None:
            raise InputError(f"--dataset: unknown dataset option {key!r}")
        if value is not None and (not isinstance(value, types_) or
                                  (isinstance(value, bool) and bool not in types_)):
            raise InputError(f"--dataset: {key} must be {' or '.join(t.__name__ for t in types_)}"
                             f", got {value!r:.60}")
    if not (spec.get("name") or spec.get("path")):
        raise InputError("--dataset: give a data file or a dataset name")
    for key, flag in (("path", "--dataset"), ("test_path", "--test-dataset")):
        if spec.get(key) and not Path(spec[key]).is_file():
            what = "is a directory" if Path(spec[key]).is_dir() else "no such file"
            raise InputError(f"{flag} {spec[key]}: {what}")


def dataset_argv(ds: dict[str, Any]) -> list[str]:
    """The command-line options that give the dataset spec ``ds``."""
    if "name" in ds:
        return ["--dataset", str(ds["name"])]
    argv = ["--dataset", str(ds["path"])]
    for key, flag in (("test_path", "--test-dataset"), ("format", "--format"),
                      ("encoding", "--encoding"), ("text_column", "--text-column"),
                      ("text_pair_column", "--text-pair-column"),
                      ("label_column", "--label-column")):
        if key in ds:
            argv += [flag, str(ds[key])]
    if "header" in ds:
        argv.append("--header" if ds["header"] else "--no-header")
    return argv


def cell_key(model: str, pert: str, exp: str, p: float | None, seed: int) -> str:
    return f"model={model}|pert={pert}|exp={exp}|p={format_p(p)}|seed={int(seed)}"
