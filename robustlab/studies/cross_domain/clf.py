"""Classification across domains (paper 004, Section 5 and Tables 2, 4, 6).

For each model and each training domain: train on that domain (a seeded 85 % split, the paper's
15 % held out for in-domain accuracy), evaluate on every *other* domain, and treat the per-domain
accuracies (in percent, so ε is on the same 0–100 scale as BLEU) as the score vector X: mean,
variance, CoV, γ, leave-one-domain-out, bagging and design bagging over domains. One cell per
(model, train domain), key ``system=<model>@<domain>``; cells are top-level and picklable, so
``--executor process|ray`` trains them in parallel.

The paper tests on 21 Amazon domains; the shared data has 4 Amazon domains plus airline, imdb and
blog, so X has at most 6 entries per model (and bagging at 60 % draws 4 of them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.errors import InputError
from robustlab.models.params import MAX_STEPS
from robustlab.models.registry import canonical_model_spec, check_model_spec
from robustlab.options import absolute, add_model_option
from robustlab.runs.cells import CellOutput
from robustlab.runs.fields import cell_parts, in_cell, option
from robustlab.runs.study import Plan, RunContext
from robustlab.studies.cross_domain.study import (
    KIND,
    ConsistencyConfig,
    CrossDomainConfig,
    CrossDomainRun,
    consistency_option,
    consistency_signature,
    consistency_tables,
    system_cells,
)

_DATA: dict[tuple[str, str], Any] = {}


@dataclass(frozen=True)
class ClfStudy(CrossDomainConfig):
    """Classifiers trained on one domain and tested on the others (one cell each)."""

    TASK: ClassVar[str] = "clf"

    # the fields' order is the signature's and the stored dict's (``order``: the place in --help)
    root: str = field(metadata=option(
        "--data-dir", default=None, metavar="DIR", read=lambda a: _root(a.root),
        help="multi-domain data root (default: $ROBUSTLAB_SHARED/data/amazon_multidomain, "
        "else shared/ or ../shared/ from the current directory)",
        always=True, show=lambda v, _: ["--data-dir", v]))
    # in_cell: each cell's signature names its model, train domain and steps (its own model and
    # domain, not the tuples), after ``score:accuracy`` and before the consistency fields
    models: tuple[str, ...] = field(default=("bow",), metadata={**in_cell("model", 1), **option(
        add=lambda g: add_model_option(
            g, multi=True, default=["bow"],
            help="model family or spec (bow, cnn, textrnn, lstm, … or family:key=v,…), a HF "
            "checkpoint or a saved model dir; several: space or comma separated, or --model "
            "repeated (default bow)"),
        read=lambda a: tuple(canonical_model_spec(m) for m in a.model), order=-1,
        argv_order=-1, always=True, show=lambda v, _: ["--model", *v])})
    domains: tuple[str, ...] = field(default=(
        "books", "dvd", "electronics", "kitchen", "airline", "imdb", "blog"), metadata=option(
        "--domains", nargs="+", parse=tuple, always=True, show=lambda v, _: ["--domains", *v]))
    train_domains: tuple[str, ...] | None = field(default=None, metadata={**option(  # None: all
        "--train-domains", nargs="+", help="domains to train on (default: every --domains entry)",
        parse=lambda v: tuple(v) if v else None,
        show=lambda v, _: ["--train-domains", *v] if v else []), **in_cell("train", 2)})
    steps: int = field(default=300, metadata={**option(
        "--steps", type=int, help="optimiser steps per model", always=True),
        **in_cell("steps", 3)})
    max_train: int | None = field(default=None, metadata=option(  # after the 15 % hold-out
        "--max-train", type=int, help="cap on training examples"))
    max_test: int | None = field(default=None, metadata=option(  # per other domain
        "--max-test", type=int, help="cap on test examples per domain"))
    holdout: float = 0.15
    seed: int = field(default=0, metadata=option(  # one --seed: the consistency group's
        add=lambda g: None, read=lambda a: a.seed, show=lambda v, _: []))
    consistency: ConsistencyConfig = field(default_factory=ConsistencyConfig,
                                           metadata=consistency_option())

    def __post_init__(self) -> None:
        if self.train_domains is None:  # every domain: said once, so equal configs compare equal
            object.__setattr__(self, "train_domains", tuple(self.domains))

    def trains(self) -> tuple[str, ...]:
        return tuple(self.train_domains or self.domains)

    def validate(self, *, trusted: bool = False) -> None:
        if len(set(self.domains)) < 3:
            raise InputError(f"--domains: need at least 3 domains (one to train on and two to "
                             f"test, for leave-one-out), got {list(self.domains)}")
        bad = [d for d in self.trains() if d not in self.domains]
        if bad:
            raise InputError(f"--train-domains {bad} are not among --domains {list(self.domains)}")
        if not self.models:
            raise InputError("--model: give at least one model")
        if len(set(self.models)) != len(self.models):
            raise InputError(f"--model: duplicate models in {list(self.models)}")
        for spec in self.models:
            check_model_spec(spec, user_class=trusted)
        for opt, v in (("--max-train", self.max_train), ("--max-test", self.max_test)):
            if v is not None and v < 1:
                raise InputError(f"{opt} must be >= 1, got {v}")
        if self.steps < 1:
            raise InputError(f"--steps must be >= 1, got {self.steps}")
        if self.steps > MAX_STEPS:  # 1e20 steps is a typo, not a study
            raise InputError(f"--steps {self.steps} is out of range: at most {MAX_STEPS} "
                             "optimiser steps per training")
        if not 0 < self.holdout < 1:
            raise InputError(f"--holdout must be in (0, 1), got {self.holdout}")
        self.consistency.validate()
        for d in self.domains:  # read every domain now: bad data fails before the run starts
            _domain(self.root, d)

    def to_dict(self) -> dict[str, Any]:
        # train_domains stored resolved, as runs always stored it
        return {**super().to_dict(), "train_domains": list(self.trains())}

    #: the name earlier versions gave :meth:`to_dict`
    config = to_dict

    def describe(self) -> str:
        return f"cross-domain clf: {', '.join(self.models)}"

    def cells(self) -> dict[str, dict[str, Any]]:
        """One cell per (model, train domain); a saved (already trained) model is only
        evaluated, on every domain, in one cell ``<dir name>@trained``."""
        base = {k: v for k, v in self.to_dict().items() if k not in ("models", "train_domains",
                                                                       "task")}
        out: dict[str, dict[str, Any]] = {}
        for m in self.models:
            if _is_saved(m):
                out[f"{os.path.basename(os.path.normpath(m))}@trained"] = {
                    **base, "model": m, "train": None}
            else:
                out.update({f"{m}@{d}": {**base, "model": m, "train": d} for d in self.trains()})
        return out


def _root(data_dir: str | None) -> str:
    """``--data-dir``, by default the shared multi-domain data (robustlab.resources)."""
    if data_dir:
        return str(absolute(data_dir))
    from robustlab.resources import shared_dir_origin

    return str(Path(shared_dir_origin()[0], "data", "amazon_multidomain").resolve())


def _is_saved(spec: str) -> bool:
    try:
        from robustlab.models.registry import is_saved_model
    except ImportError:  # pragma: no cover - registry not installed
        return False
    return is_saved_model(spec)


def _domain(root: str, name: str) -> Any:
    from robustlab.data.multidomain import load_domain

    key = (root, name)
    if key not in _DATA:
        _DATA[key] = load_domain(root, name)
    return _DATA[key]


def _split(n: int, holdout: float, seed: int, max_train: int | None) -> tuple[np.ndarray,
                                                                               np.ndarray]:
    perm = np.random.default_rng(seed).permutation(n)
    k = max(1, int(round(holdout * n)))
    test, train = perm[:k], perm[k:]
    return (train[:max_train] if max_train else train), test


def _sample(n: int, cap: int | None, seed: int) -> np.ndarray:
    if not cap or cap >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, cap, replace=False))


def clf_cell(kind: str, params: dict[str, Any]) -> Any:
    """Train ``params['model']`` on ``params['train']``; accuracy on every other domain."""
    from robustlab.models.build import build_model

    t0 = time.perf_counter()
    root, train, seed = params["root"], params["train"], int(params["seed"])
    if train is None:  # a saved, trained model: evaluate only
        from robustlab.models.registry import load_model

        model = load_model(params["model"], device=params.get("device"))
        tr = ho = np.arange(0)
    else:
        src = _domain(root, train)
        tr, ho = _split(len(src), float(params["holdout"]), seed, params.get("max_train"))
        # the configuration was validated with the run's trust before any cell existed
        model = build_model(params["model"], seed=seed, steps=int(params["steps"]),
                            device=params.get("device"), trusted=True)
        model.fit([src.texts[i] for i in tr], [src.labels[i] for i in tr],
                  steps=int(params["steps"]))
    train_s = time.perf_counter() - t0

    def acc(texts: Sequence[str], labels: Sequence[int]) -> float:
        pred = np.asarray(model.predict(list(texts)))
        return float(100.0 * np.mean(pred == np.asarray(labels)))

    in_domain = None if train is None else acc([src.texts[i] for i in ho],
                                               [src.labels[i] for i in ho])
    per, n_test = {}, {}
    for j, d in enumerate(x for x in params["domains"] if x != train):
        dd = _domain(root, d)
        idx = _sample(len(dd), params.get("max_test"), seed + 1 + j)
        per[d] = acc([dd.texts[i] for i in idx], [dd.labels[i] for i in idx])
        n_test[d] = int(idx.size)
    cfg = ConsistencyConfig(eps=tuple(params["eps"]), grid_max=int(params["grid_max"]),
                            n_bags=int(params["n_bags"]), fraction=float(params["fraction"]),
                            seed=int(params["seed"]), eps_grid=params.get("eps_grid", "fixed"))
    labels = list(per)
    tables = consistency_tables(np.array([list(per.values())]), labels, cfg)[0]
    result = {"system": params["system"], "model": params["model"], "train_domain": train,
              "score": "accuracy", "in_domain_accuracy": in_domain, "per_domain": per,
              "n_test": n_test, "n_train": int(tr.size), **tables,
              "seconds": time.perf_counter() - t0, "train_seconds": train_s}
    records = [{"domain": d, "accuracy": per[d], "n": n_test[d]} for d in labels]
    return CellOutput(result=result, records=records,
                      signature=consistency_signature(cfg, score="accuracy", **cell_parts(
                          ClfStudy, {"models": params["model"], "train_domains": train,
                                     "steps": params["steps"]})))


@dataclass
class Clf(CrossDomainRun):
    """The cross-domain classification study (:class:`robustlab.runs.study.Study`)."""

    config: ClfStudy
    root_origin: str = "root"

    def inputs(self) -> list[tuple[str, str | None, str]]:
        return clf_inputs(self.config, self.root_origin)

    def plan(self, ctx: RunContext, out: Any) -> Plan:
        from robustlab.models.device import check_device

        device = check_device(ctx.device)
        cells = {k: {**v, "device": device} for k, v in self.config.cells().items()}
        return Plan(cells=system_cells(cells), cell_fn=clf_cell,
                    name=f"cross-domain clf: {len(cells)} systems")


def run_clf(study: ClfStudy, out_dir: str | os.PathLike[str], *, executor: str = "sequential",
            workers: int = 1, progress: bool = True, plots: bool = True, device: str = "auto",
            root_origin: str = "root", log: Callable[[str], None] | None = None,
            **_ignored: Any) -> dict[str, Any]:
    """Validate (reading every domain), then run or resume one cell per (model, train domain)
    (the Python API of :class:`Clf`). ``device`` is where models run: a runtime option, in no
    cell signature or config."""
    from robustlab.runs.study import run_with

    return run_with(Clf(study, root_origin=root_origin), out_dir, executor=executor,
                    workers=workers, device=device, progress=progress, plots=plots,
                    log=log).summary


def clf_inputs(study: ClfStudy, root_origin: str = "root") -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)``: each domain's folder or CSV as read, and each model that
    starts from a file."""
    from robustlab.models.registry import model_input

    items: list[tuple[str, str | None, str]] = [
        (f"domain:{d}", _domain(study.root, d).source, root_origin) for d in study.domains]
    items += [(f"model:{m}", *model_input(m)) for m in study.models]
    return items


__all__ = ["KIND", "Clf", "ClfStudy", "canonical_model_spec", "clf_cell", "run_clf"]


def from_stored(config: Any, trusted: bool) -> Any:
    """The study of a configuration, by its task: stored (a dict, read as untrusted data
    unless ``trusted``) or a config object from Python (its
    :class:`~robustlab.studies.kind.StudyKind`)."""
    from collections.abc import Mapping

    from robustlab.studies.cross_domain.study import MT, MTStudy, Scores, ScoresStudy

    for study, config_cls in ((MT, MTStudy), (Clf, ClfStudy), (Scores, ScoresStudy)):
        if isinstance(config, config_cls):
            return study(config)
    task = config.get("task") if isinstance(config, Mapping) else None
    tasks = {"mt": (MT, MTStudy), "clf": (Clf, ClfStudy), "scores": (Scores, ScoresStudy)}
    if task not in tasks:
        raise InputError(f"unknown cross-domain task {str(task)[:20]!r}; robustlab runs "
                         f"{', '.join(tasks)}")
    study, config_cls = tasks[task]
    return study(config_cls.from_dict(config, trusted=trusted))
