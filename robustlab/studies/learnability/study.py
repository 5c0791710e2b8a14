"""The learnability / CENT study: exp 0–4 of paper 000's Table 1 over models × perturbations ×
p-grid × seeds, as deterministic, resumable cells (docs/run-directory.md, kind "learnability").

Design, settling what the paper leaves open (SPEC §2):

* **Cells.** One per (model, perturbation, seed, experiment, p); key
  ``model=…|pert=…|exp=…|p=…|seed=…``. Cells are ordered model → seed → perturbation, so cells
  that share a trained model or a perturbed dataset run next to each other.
* **exp 0 / 1 share one model.** Standard and robustness both train on clean data with true
  labels; the clean model of (model, seed) is trained once per process (LRU cache) and evaluated
  on the clean test set (A0) and on the fully perturbed test set (A1). A robustness cell stores
  both, so robustness = A1 − A0 always compares the same model.
* **exp 2** trains on clean + perturbed copies (true labels) and tests on the perturbed test set.
* **exp 3/4 (learnability at p)** follows Algorithm 1: random labels l' by a fair coin drawn from
  ``numpy.random.default_rng([seed, …])`` independently of the text, uniform z per training
  example, ``x* = g(x)`` iff ``l' = 1 and z < p``. The labels and z depend on the seed only (not
  on p or the perturbation): the curves of one seed use common random numbers, so the examples
  perturbed at p are a subset of those at p' > p. The test set gets its own random labels; the
  l'=1 half is perturbed entirely; learnability = ATE over that half (accuracy- and
  probability-based, :mod:`robustlab.metrics.learnability`).
* **Same steps** for every training of a study (the papers' control).
* **Quick estimate** (``estimate="quick"``, ``robustlab learnability --estimate quick``): the
  learnability cells are only p = ``estimate_p`` for every seed plus p = 1 for the first seed (the
  learnable-at-all check): 4 trainings per pair at 3 seeds instead of 24. They are the very cells
  of the full grid (same keys, same parameters, same results), so an estimate run and a full run
  are comparable cell by cell (:mod:`robustlab.studies.learnability.estimate`).
* **Caches (per process):** loaded data, perturbed copies of each split keyed by (dataset
  fingerprint, perturbation signature, seed), the clean model and its clean-test predictions;
  tokenizations are cached by the models' tokenizer (``robustlab.models.vocab``).
* **No-ops** are counted, not hidden: ``noop_rate`` is the share of texts the perturbation left
  unchanged among those it was applied to (the treated test half for learnability).
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.errors import InputError
from robustlab.metrics.learnability import learnability_ate, learnability_prob
from robustlab.outputs import refuse_link
from robustlab.runs import fields as field_options
from robustlab.runs.cells import CellOutput
from robustlab.runs.predictions import prediction_rows
from robustlab.runs.store import Cell
from robustlab.runs.study import Plan, RunContext
from robustlab.signature import make_signature
from robustlab.studies.learnability.config import (  # noqa: F401 - the study's public names
    EXPERIMENTS,
    KIND,
    PAPER_PERTURBATIONS,
    ROBUSTNESS_EXPERIMENTS,
    LearnabilityStudy,
    cell_key,
    format_p,
)
from robustlab.textfmt import echo

#: hidden directory of a run where worker processes share trained clean models (removed at the end)
CACHE_DIR = ".model-cache"


# ---- per-process caches ---------------------------------------------------------------------------

_DATA: dict[str, Any] = {}
_PERTURBED: OrderedDict[tuple[str, str, int, str], tuple[list[Any], np.ndarray, float]] = \
    OrderedDict()
_CLEAN: OrderedDict[tuple[Any, ...], tuple[Any, np.ndarray]] = OrderedDict()
_PERTURBED_MAX, _CLEAN_MAX = 64, 2


def _data_key(dataset: dict[str, Any], max_train: int | None, max_test: int | None) -> str:
    return repr((sorted(dataset.items()), max_train, max_test))


def _data(params: dict[str, Any]):
    from robustlab.studies.learnability.data import load_splits

    if "shared" in params["dataset"]:  # a travelling cell: the splits came by the object store
        splits = _DATA.get(_shared_key(params["dataset"]["shared"]))
        if splits is None:
            raise RuntimeError("this worker holds no copy of the study's data (cells without "
                               "a dataset path need install_splits first)")
        return splits
    key = _data_key(params["dataset"], params["max_train"], params["max_test"])
    splits = _DATA.get(key)
    if splits is None:
        splits = load_splits(params["dataset"], params["max_train"], params["max_test"])
        _DATA.clear()  # one study's data at a time per process
        _DATA[key] = splits
    want = params.get("data_fingerprint")
    if want and splits.fingerprint != want:
        raise InputError(f"the dataset changed since the study started (fingerprint "
                         f"{splits.fingerprint} != {want}); start a new run directory")
    return splits


def _shared_key(fingerprint: str) -> str:
    return f"shared:{fingerprint}"


def install_splits(splits: Any) -> None:
    """Worker side of a travelling study: the splits the driver put in Ray's object store."""
    _DATA.clear()
    _DATA[_shared_key(splits.fingerprint)] = splits


def portable_params(params: dict[str, Any]) -> dict[str, Any]:
    """Driver side: a cell's parameters with no driver path, for a node that shares no files.

    The dataset becomes a reference to the splits installed by :func:`install_splits`; the
    clean-model cache of exp 0/1 becomes a node-local directory (trained once per node). The
    store keeps the original parameters, so configuration, keys and signatures do not change.
    """
    from robustlab.runs.ray_backend import NODE_PREFIX
    from robustlab.signature import fingerprint

    out = {**params, "dataset": {"shared": params["data_fingerprint"]}}
    if params.get("cache_dir"):
        out["cache_dir"] = NODE_PREFIX + fingerprint(str(params["cache_dir"]), n=16)
    return out


def _perturbation(spec: str):
    from robustlab.perturbations.registry import parse_spec

    # a cell's spec comes from a configuration that run_study validated with the run's trust
    # (a stored or planned module:Class never gets here); the class check still applies
    return parse_spec(spec, trusted=True)


def perturbed_split(splits: Any, split: str, pert: Any, seed: int) -> tuple[list[Any], np.ndarray]:
    """All texts of a split perturbed with ``seed`` (cached), and which ones changed."""
    key = (splits.fingerprint, pert.signature(), int(seed), split)
    hit = _PERTURBED.get(key)
    if hit is None:
        texts = splits.train_texts if split == "train" else splits.test_texts
        t0 = time.perf_counter()
        new, changed = perturb_examples(pert, texts, seed)
        hit = (new, changed, time.perf_counter() - t0)
        _PERTURBED[key] = hit
        while len(_PERTURBED) > _PERTURBED_MAX:
            _PERTURBED.popitem(last=False)
    else:
        _PERTURBED.move_to_end(key)
    return hit[0], hit[1]


def perturb_examples(pert: Any, examples: Sequence[Any], seed: int) -> tuple[list[Any], np.ndarray]:
    """Perturb texts, or both sides of sentence pairs; ``changed`` flags texts g altered."""
    if examples and not isinstance(examples[0], str):
        sides = list(zip(*examples, strict=True))
        done = [pert.perturb_batch(list(s), seed) for s in sides]
        new = [tuple(parts) for parts in zip(*done, strict=True)]
    else:
        new = pert.perturb_batch(list(examples), seed)
    changed = np.fromiter((a != b for a, b in zip(new, examples, strict=True)), dtype=bool,
                          count=len(new))
    return new, changed


def _new_model(spec: str, seed: int, steps: int, num_threads: int | None,
               device: str | None = None):
    from robustlab.studies.learnability.data import build_model

    # as _perturbation: the configuration was validated with the run's trust before any cell
    return build_model(spec, seed=seed, steps=steps, num_threads=num_threads, device=device,
                       trusted=True)


def _clean_model(params: dict[str, Any], splits: Any) -> tuple[Any, np.ndarray, float, float]:
    """The (model, seed) model trained on clean data and its clean-test probabilities, with the
    training time spent in this call and the model time (fit/load + predict) spent in this call
    (both 0 on an in-memory cache hit)."""
    key = (params["model"], splits.fingerprint, params["seed"], params["steps"])
    hit = _CLEAN.get(key)
    if hit is not None:
        _CLEAN.move_to_end(key)
        return hit[0], hit[1], 0.0, 0.0
    from robustlab.runs.ray_backend import node_dir
    from robustlab.studies.learnability.data import shared_fit

    def build() -> Any:
        return _new_model(params["model"], params["seed"], params["steps"],
                          params.get("num_threads"), params.get("device"))

    def fit(model: Any) -> float:
        t = time.perf_counter()
        model.fit(splits.train_texts, splits.train_labels, steps=params["steps"])
        return time.perf_counter() - t

    t0 = time.perf_counter()
    model, train_s, trained_here = shared_fit(node_dir(params.get("cache_dir")), repr(key), build, fit)
    hit = (model, np.asarray(model.predict_proba(splits.test_texts)))
    _CLEAN[key] = hit
    while len(_CLEAN) > _CLEAN_MAX:
        _CLEAN.popitem(last=False)
    return hit[0], hit[1], train_s if trained_here else 0.0, time.perf_counter() - t0


def clear_caches() -> None:
    """Forget cached data, perturbed splits and models (tests; long-lived processes)."""
    _DATA.clear()
    _PERTURBED.clear()
    _CLEAN.clear()


def _acc(pred: np.ndarray, labels: np.ndarray) -> float:
    return float((np.asarray(pred) == np.asarray(labels)).mean()) if len(labels) else math.nan


# ---- the cell function -----------------------------------------------------------------------------


def label_randomness(seed: int, n_train: int, n_test: int) -> tuple[np.ndarray, np.ndarray,
                                                                     np.ndarray]:
    """Random labels l' (fair coin, train and test) and uniform z per training example.

    A pure function of ``seed`` and the sizes: independent of the texts, of p and of the
    perturbation (paper 000 Algorithm 1 lines 3–10).
    """
    rng = np.random.default_rng([int(seed), 0x1EA2])
    train_l = rng.integers(0, 2, size=n_train)
    test_l = rng.integers(0, 2, size=n_test)
    z = rng.random(n_train)
    return train_l, test_l, z


def learnability_train_set(texts: Sequence[Any], perturbed: Sequence[Any], labels: np.ndarray,
                           z: np.ndarray, p: float) -> tuple[list[Any], np.ndarray]:
    """Eq. 3: x*_i = g(x_i) if l'_i = 1 and z_i < p, else x_i. Returns texts and the mask."""
    mask = (labels == 1) & (z < p)
    return [g if m else x for x, g, m in zip(texts, perturbed, mask, strict=True)], mask


def _test_of(pert: Any, splits: Any) -> tuple[str, str | None]:
    """The perturbation's CheckList test on this data's task (its number of classes)."""
    from robustlab.metrics.checklist_tests import checklist_type

    n = max(list(splits.train_labels) + list(splits.test_labels), default=1) + 1
    return checklist_type(pert, max(2, int(n)))


def _checklist_result(pert: Any, predictions: Sequence[dict[str, Any]],
                      n_classes: int) -> dict[str, Any]:
    """A robustness cell's CheckList test (as an eval cell's, :mod:`robustlab.metrics.
    checklist_tests`): its type, and among the texts the perturbation changed how many changed
    the prediction and how many failed the test (none for a "changed" test)."""
    from robustlab.metrics.checklist_tests import CHANGED, checklist_type, example_fails

    test, expectation = checklist_type(pert, n_classes)
    moved = [r for r in predictions if r["original"] != r["perturbed"]]
    failed = sum(bool(example_fails(test, r["pred_before"], r["pred_after"], r["prob_before"],
                                    r["prob_after"])) for r in moved)
    return {"test": test, "expectation": expectation, "n_classes": n_classes,
            "changed": len(moved),
            "flipped": sum(r["pred_after"] != r["pred_before"] for r in moved),
            "failed": None if test == CHANGED else failed,
            "failure_rate": None if test == CHANGED or not moved else failed / len(moved)}


def run_cell(kind: str, params: dict[str, Any]) -> CellOutput:
    """Run one cell (top level and picklable: process pools and Ray call it by reference)."""
    t_start = time.perf_counter()
    splits = _data(params)
    pert = _perturbation(params["perturbation"])
    exp, seed, steps = params["experiment"], int(params["seed"]), int(params["steps"])
    test_labels = np.asarray(splits.test_labels)
    res: dict[str, Any] = {
        "model": params["model"], "perturbation": params["perturbation"], "seed": seed,
        "experiment": exp, "p": params["p"], "accuracy": None, "learnability_acc": None,
        "learnability_prob": None, "n_train": len(splits.train_texts),
        "n_test": len(splits.test_texts), "n_treated": None, "noop_rate": None,
        "train_seconds": 0.0, "steps": steps,
    }
    records: list[dict[str, Any]] = []
    predictions: list[dict[str, Any]] = []  # exp 1: per test example, before/after g
    t_model = 0.0  # time inside fit / predict_proba (the "model" share for the benchmark)
    if exp in ("standard", "robustness"):
        # train_seconds is 0 when the cell reused a clean model trained elsewhere
        model, proba_clean, res["train_seconds"], t_model = _clean_model(params, splits)
        a0 = _acc(proba_clean.argmax(1), test_labels)
        if exp == "standard":
            res["accuracy"] = a0
        else:
            pert_test, changed = perturbed_split(splits, "test", pert, seed)
            t1 = time.perf_counter()
            proba_pert = np.asarray(model.predict_proba(pert_test))
            a1 = _acc(proba_pert.argmax(1), test_labels)
            t_model += time.perf_counter() - t1
            predictions = prediction_rows(splits.test_texts, pert_test, test_labels,
                                          proba_clean, proba_pert)
            res.update(accuracy=a1, accuracy_clean=a0, robustness=a1 - a0,
                       noop_rate=float(1 - changed.mean()),
                       **_checklist_result(pert, predictions, int(proba_clean.shape[1])))
            if res["test"] != "INV":  # A1 never against a label the perturbation invalidated
                res.update(accuracy=None, robustness=None)
    elif exp == "augmentation" and _test_of(pert, splits)[0] != "INV":
        # training on perturbed texts under their original labels would teach labels the
        # perturbation invalidated, and A2 would score against them: not run, said so
        res.update(dict(zip(("test", "expectation"), _test_of(pert, splits), strict=True)),
                   skipped="label-changing perturbation: no augmentation with its old labels")
    elif exp == "augmentation":
        pert_train, _ = perturbed_split(splits, "train", pert, seed)
        pert_test, changed = perturbed_split(splits, "test", pert, seed)
        model = _new_model(params["model"], seed, steps, params.get("num_threads"),
                           params.get("device"))
        t0 = time.perf_counter()
        model.fit(list(splits.train_texts) + list(pert_train),
                  list(splits.train_labels) * 2, steps=steps)
        res["train_seconds"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        res["accuracy"] = _acc(model.predict(pert_test), test_labels)
        t_model += time.perf_counter() - t0
        res["predict_seconds"] = time.perf_counter() - t1
        res.update(noop_rate=float(1 - changed.mean()), n_train=2 * len(splits.train_texts))
    elif exp == "learnability":
        res_l, rec, t_model = _learnability(params, splits, pert, seed, steps)
        res.update(res_l)
        records = rec
    else:
        raise InputError(f"unknown experiment {exp!r}")
    res["seconds"] = time.perf_counter() - t_start
    res["model_seconds"] = t_model
    sig = make_signature(kind, **field_options.cell_parts(LearnabilityStudy, {
        "experiments": exp, "models": params["model"], "perturbations": pert.signature(),
        "p_grid": params["p"], "seeds": seed, "steps": steps,
        "dataset": f"{splits.name}#{splits.fingerprint}"}))
    res["signature"] = sig
    return CellOutput(result=res, records=records, signature=sig, predictions=predictions)


def _learnability(params: dict[str, Any], splits: Any, pert: Any, seed: int,
                  steps: int) -> tuple[dict[str, Any], list[dict[str, Any]], float]:
    p = float(params["p"])
    train_l, test_l, z = label_randomness(seed, len(splits.train_texts), len(splits.test_texts))
    pert_train, _ = perturbed_split(splits, "train", pert, seed)
    pert_test, changed_test = perturbed_split(splits, "test", pert, seed)
    train_texts, mask = learnability_train_set(splits.train_texts, pert_train, train_l, z, p)
    model = _new_model(params["model"], seed, steps, params.get("num_threads"),
                       params.get("device"))
    t0 = time.perf_counter()
    model.fit(train_texts, train_l, steps=steps)
    train_s = time.perf_counter() - t0
    treated = test_l == 1
    idx = np.flatnonzero(treated)
    t1 = time.perf_counter()
    proba_clean = np.asarray(model.predict_proba(splits.test_texts))
    # untreated examples are identical in both test sets: predict only the treated half again
    proba_pert = proba_clean.copy()
    if len(idx):
        proba_pert[idx] = np.asarray(model.predict_proba([pert_test[i] for i in idx]))
    predict_s = time.perf_counter() - t1
    pred_c, pred_p = proba_clean.argmax(1), proba_pert.argmax(1)
    res = {
        "accuracy": _acc(pred_c, test_l),
        "accuracy_perturbed": _acc(pred_p, test_l),
        "learnability_acc": learnability_ate(pred_p, pred_c, test_l, treated),
        "learnability_prob": learnability_prob(proba_pert, proba_clean, test_l, treated),
        "n_treated": int(treated.sum()),
        "n_train_perturbed": int(mask.sum()),
        "n_train_treated": int((train_l == 1).sum()),
        "noop_rate": float(1 - changed_test[idx].mean()) if len(idx) else None,
        "train_noop_rate": float(1 - np.mean([pert_train[i] != splits.train_texts[i]
                                              for i in np.flatnonzero(mask)]))
        if mask.any() else None,
        "train_seconds": train_s,
        "predict_seconds": predict_s,
    }
    # per treated example: correct before/after (l'=1 there) and P(l'=1) before/after
    records = [{"i": int(i), "c0": int(pred_c[i] == 1), "c1": int(pred_p[i] == 1),
                "p0": round(float(proba_clean[i, 1]), 6), "p1": round(float(proba_pert[i, 1]), 6)}
               for i in idx]
    return res, records, train_s + predict_s


# ---- the study ---------------------------------------------------------------------------------------


@dataclass
class Learnability:
    """The learnability / robustness study (:class:`robustlab.runs.study.Study`)."""

    config: LearnabilityStudy

    @property
    def kind(self) -> str:
        return self.config.kind

    def inputs(self) -> list[tuple[str, str | None, str]]:
        return study_inputs(self.config)

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        """Load the data and check every model and perturbation on it (nothing written)."""
        from robustlab.studies.learnability.data import preflight

        study = self.config
        warn_retrained(study.models)
        splits = preflight(list(study.models), list(study.perturbations), study.dataset,
                           study.max_train, study.max_test, trusted=ctx.trusted)
        _warn_symmetric(study.perturbations)
        _DATA.clear()  # the sequential executor reuses the splits the preflight loaded
        _DATA[_data_key(study.dataset, study.max_train, study.max_test)] = splits
        # worker processes share the clean model of exp 0/1 through files (one process per
        # machine trains it, the others load it); the sequential executor shares it in memory
        # the cache is a run-directory file: a link planted there is refused, never resolved
        cache = None if ctx.executor == "sequential" else \
            str(refuse_link(out.resolve() / CACHE_DIR))
        cells = study.cells(splits.fingerprint, num_threads=ctx.threads, cache_dir=cache,
                            device=ctx.device)
        backend = {}
        if ctx.executor == "ray":
            backend = ray_options(splits, cells)
        # a resume must see the data the finished cells saw: compared with the fingerprint
        # stored when the run started (not with one recomputed from today's files)
        return Plan(cells=cells, cell_fn=run_cell,
                    name=f"{study.kind}: {', '.join(study.models)} on {splits.name}",
            pins={"data": (splits.fingerprint, _data_what(study.dataset))}, backend=backend,
            state=splits)

    def adopt(self, stored: dict[str, Any], *, trusted: bool = False) -> Learnability | None:
        """The run an earlier version stored, if it is this study with model paths spelled
        relative to the working directory (its cell keys keep that spelling)."""
        from robustlab.models.registry import canonical_model_spec

        mine = self.config.to_dict()
        if {k: v for k, v in stored.items() if k != "models"} != \
                {k: v for k, v in mine.items() if k != "models"}:
            return None
        models = stored.get("models")
        if not isinstance(models, list) or [canonical_model_spec(str(m)) for m in models] \
                != mine["models"]:
            return None
        return Learnability(LearnabilityStudy.from_dict(stored, trusted=trusted))

    def write_outputs(self, store: Any, out: Path, plan: Plan, ctx: RunContext,
                      report: Any) -> dict[str, Any]:
        from robustlab.studies.learnability.report import write_outputs

        # seconds: every invocation of this run (a resume adds to the earlier ones)
        summary = write_outputs(store, out, seconds=store.elapsed(), plots=ctx.plots)
        if report.complete:
            shutil.rmtree(out / CACHE_DIR, ignore_errors=True)
        return summary


def run_study(study: LearnabilityStudy, out_dir: str | os.PathLike[str], *,
              executor: str = "sequential", workers: int = 1, ray_address: str | None = None,
              gpus_per_task: float = 0.0, cpus_per_task: float = 1.0, command: str | None = None,
              progress: bool = True, plots: bool = True, threads: int | None = 1,
              device: str = "auto", log: Callable[[str], None] | None = None,
              trusted: bool = True) -> dict[str, Any]:
    """Run (or resume) ``study`` into ``out_dir`` as :func:`robustlab.run` does;
    returns the summary (also in ``out_dir/summary.json``). The Python API of earlier versions:
    ``command`` is ignored (the stored command is derived from the configuration)."""
    from robustlab.runs.study import run_with

    return run_with(Learnability(study), out_dir, executor=executor, workers=workers,
                    ray_address=ray_address, gpus_per_task=gpus_per_task,
                    cpus_per_task=cpus_per_task, device=device, threads=threads,
                    progress=progress, plots=plots, trusted=trusted, log=log).summary


def warn_retrained(models: Sequence[str]) -> list[str]:
    """One stderr line per saved model: a study that trains per cell retrains it from its
    family and hyperparameters (it is never tested as it is: that is ``robustlab eval``)."""
    import sys

    from robustlab.models.registry import is_saved_model

    saved = [m for m in models if is_saved_model(m)]
    for m in saved:
        echo(f"note: --model {m} is a saved model: this study trains a new model per cell from "
              "its family and hyperparameters (a Hugging Face model from its saved weights); "
              "to test the saved model as it is, use `robustlab eval`", file=sys.stderr)
    return saved


def study_inputs(study: LearnabilityStudy) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of what the study reads: its data file(s) or dataset name, and
    each model's weights where it starts from a file (a saved model, a checkpoint, MiniLM)."""
    from robustlab.models.registry import model_input

    ds = study.dataset
    items: list[tuple[str, str | None, str]] = [
        ("dataset", ds.get("path") or ds.get("name"), "--dataset"),
        ("test_dataset", ds.get("test_path"), "--test-dataset")]
    for spec in study.models:
        items.append((f"model:{spec}", *model_input(spec)))
    items += perturbation_inputs(study.perturbations)
    return items


def perturbation_inputs(specs: Sequence[str]) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of the resources the perturbations read (``Perturbation.reads``:
    codespell's dictionary, WordNet), once each."""
    from robustlab.perturbations.registry import parse_spec
    from robustlab.resources import resource_file

    items: list[tuple[str, str | None, str]] = []
    for spec in specs:
        pert = parse_spec(spec, trusted=True)  # a validated configuration's (see _perturbation)
        for name in getattr(pert, "reads", ()):
            path, origin = resource_file(name)
            items.append((f"resource:{name}", str(path) if path else None,
                          f"{origin} (perturbation {pert.name})"))
    return items


def _data_what(dataset: dict[str, Any]) -> str:
    """The data files (or dataset name) of a spec, for messages."""
    if dataset.get("path"):
        return "--data " + str(dataset["path"]) + (
            f" and --test-data {dataset['test_path']}" if dataset.get("test_path") else "")
    return f"--dataset {dataset.get('name')}"


def _warn_symmetric(perturbations: Sequence[str]) -> list[str]:
    """Warn (stderr) about perturbations with g(g(x)) = x: learnability assumes asymmetric g."""
    import sys

    from robustlab.perturbations.registry import parse_spec

    names = [spec for spec in perturbations  # after validation and preflight (_perturbation)
             if not getattr(parse_spec(spec, trusted=True), "asymmetric", True)]
    for spec in names:
        echo(f"warning: perturbation {spec!r} is symmetric (g(g(x)) = x, e.g. negation): "
             "learnability needs an asymmetric g (g(g(x)) != x), so its figures for "
             "it are not meaningful", file=sys.stderr)
    return names


def ray_options(splits: Any, cells: Sequence[Cell]) -> dict[str, Any]:
    """Backend options for Ray: the splits travel by the object store, cells carry no path."""
    from robustlab.runs.ray_backend import Travel

    node_dirs = tuple(sorted({portable_params(c.params)["cache_dir"] for c in cells
                              if c.params.get("cache_dir")}))
    return {"travel": Travel(shared=splits, install=install_splits, portable=portable_params,
                             node_dirs=node_dirs)}


def from_stored(config: Any, trusted: bool) -> Learnability:
    """The study of a configuration object from Python, or of a stored one (its
    :class:`~robustlab.studies.kind.StudyKind`)."""
    from robustlab.runs.study import study_of

    return study_of(Learnability, LearnabilityStudy, config, trusted)
