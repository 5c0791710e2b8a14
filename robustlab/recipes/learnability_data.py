"""Data and models for the learnability study: train/test splits with a fingerprint, model specs.

Thin glue over :mod:`robustlab.data` and :mod:`robustlab.models` (their one home); what lives here
is only what the study needs on top: a :class:`Splits` record with a content fingerprint (stored in
every cell signature, and checked by workers so a changed file cannot mix into a resumed run), a
model-spec parser (``family``, ``family:key=value,…``, a checkpoint or saved directory, or
``package.module:Class`` for a user's own :class:`~robustlab.models.base.TextClassifier`), and a
preflight that turns every bad input into an :class:`~robustlab.errors.InputError` *before* the
run directory is created.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any

from robustlab.errors import InputError
from robustlab.runs.signature import fingerprint as _fingerprint


@dataclass(frozen=True)
class Splits:
    """A classification dataset ready for the study (labels 0..C-1, texts or text pairs)."""

    name: str
    fingerprint: str
    train_texts: list[Any]
    train_labels: list[int]
    test_texts: list[Any]
    test_labels: list[int]


def _check(texts: list[Any], labels: list[int], where: str, n_classes: int | None = None) -> None:
    from robustlab.data.labels import check_labels

    arr = check_labels(labels, len(texts), where=where, min_classes=1 if n_classes else 2)
    if n_classes is not None and int(arr.max()) >= n_classes:
        raise InputError(f"{where}: label {int(arr.max())} does not occur in the training data "
                         f"(classes 0..{n_classes - 1})")
    for i, t in enumerate(texts):
        parts = [t] if isinstance(t, str) else list(t)
        if not all(isinstance(s, str) for s in parts) or not any(s.strip() for s in parts):
            raise InputError(f"{where}: example {i} is empty after stripping whitespace "
                             f"({t!r:.60}); the tokenizer would leave nothing. Remove it.")


def load_splits(spec: dict[str, Any], max_train: int | None = None,
                max_test: int | None = None) -> Splits:
    """Load and validate the train/test splits named by ``spec``, balanced-subsampled.

    ``spec`` is ``{"name": NAME}`` for a named dataset (``demo``, ``sst2``, a Hugging Face name,
    …) or ``{"path": TRAIN_FILE, "test_path": TEST_FILE, ...reader options}`` for local files;
    both go through :func:`robustlab.data.datasets.load_dataset`. Subsampling is seeded (seed 0)
    and balanced, the same for every cell of the study.
    """
    try:
        from robustlab.data import datasets
    except ImportError:  # TEMPORARY until robustlab.data.datasets lands
        train_x, train_y, test_x, test_y = _files_fallback(spec)
    else:
        train_x, train_y, test_x, test_y = _as_lists(datasets.load_dataset(**spec))
    if max_train is not None and len(train_x) > max_train:
        train_x, train_y = _subsample(train_x, train_y, max_train)
    if max_test is not None and len(test_x) > max_test:
        test_x, test_y = _subsample(test_x, test_y, max_test)
    where = spec.get("path") or spec.get("name") or "dataset"
    _check(train_x, train_y, f"{where} (train)")
    _check(test_x, test_y, f"{where} (test)", n_classes=max(train_y) + 1)
    fp = _fingerprint([train_x, train_y, test_x, test_y])
    return Splits(str(spec.get("name") or where), fp, train_x, train_y, test_x, test_y)


def _files_fallback(spec: dict[str, Any]) -> tuple[list[Any], list[int], list[Any], list[int]]:
    from robustlab.data.files import read_rows

    if "path" not in spec or "test_path" not in spec:
        raise InputError(f"dataset {spec}: give a train file and a test file")
    out: list[Any] = []
    for key in ("path", "test_path"):
        t = read_rows(spec[key], spec.get("format"), spec.get("encoding", "utf-8"))
        out.append(t.column(spec.get("text_column")))
        try:
            out.append([int(v) for v in t.column(spec.get("label_column", "label"))])
        except (TypeError, ValueError) as exc:
            raise InputError(f"{spec[key]}: labels must be integers 0..C-1 ({exc})") from None
    return out[0], out[1], out[2], out[3]


def _as_lists(ds: Any) -> tuple[list[Any], list[int], list[Any], list[int]]:
    """Accept the dataset object of robustlab.data (train/test parts with texts and labels)."""
    train, test = ds.train, ds.test
    if test is None:
        raise InputError(f"{getattr(ds, 'name', 'dataset')}: no test split; pass --test-data FILE")
    return (list(train.texts), [int(v) for v in train.labels],
            list(test.texts), [int(v) for v in test.labels])


def _subsample(texts: list[Any], labels: list[int], n: int) -> tuple[list[Any], list[int]]:
    try:
        from robustlab.data import datasets
        idx = datasets.balanced_indices(labels, n, seed=0)
    except (ImportError, AttributeError):  # TEMPORARY until robustlab.data.datasets lands
        import numpy as np

        rng = np.random.default_rng(0)
        classes = sorted(set(labels))
        per = [list(rng.permutation([i for i, y in enumerate(labels) if y == c])) for c in classes]
        idx, k = [], 0
        while len(idx) < n and any(per):
            if per[k % len(per)]:
                idx.append(int(per[k % len(per)].pop()))
            k += 1
        idx.sort()
    return [texts[i] for i in idx], [labels[i] for i in idx]


# ---- models ----------------------------------------------------------------------------------------


def _user_class(spec: str) -> type | None:
    """``package.module:Class`` naming a TextClassifier subclass, else None."""
    mod, sep, attr = spec.partition(":")
    if not sep or not attr.isidentifier() or "=" in attr:
        return None
    try:
        module = importlib.import_module(mod)
    except ImportError:
        return None
    cls = getattr(module, attr, None)
    return cls if inspect.isclass(cls) else None


def build_model(spec: str, *, seed: int, steps: int, num_threads: int | None = None) -> Any:
    """A fresh, untrained classifier for ``spec`` seeded with ``seed``.

    A saved model directory stands for its family and hyperparameters: the study retrains it
    (a Hugging Face model restarts from its saved weights), since every cell trains its own.
    """
    options = {"seed": seed, "steps": steps, "num_threads": num_threads}
    cls = _user_class(spec)
    if cls is not None:
        return cls(**_accepted(cls, options))
    from robustlab.models import registry

    if registry.is_saved_model(spec):
        saved = registry.load_saved(spec)
        return type(saved)(**{**saved.get_params(), **_accepted(type(saved), options)})
    name, params = registry.parse_model_spec(spec)
    probe = registry.make_model(spec)
    return registry.make_model(name, **params, **{k: v for k, v in
                                                  _accepted(type(probe), options).items()
                                                  if k not in params})


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The options ``cls`` takes (by ``param_defaults()`` or its constructor signature)."""
    defaults = getattr(cls, "param_defaults", None)
    if callable(defaults):
        names = set(defaults())
    else:
        names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    return {k: v for k, v in options.items() if v is not None and k in names}


def preflight(models: list[str], perturbations: list[str], dataset: dict[str, Any],
              max_train: int | None, max_test: int | None) -> Splits:
    """Check every input before anything is written: data, perturbations, model names."""
    from robustlab.adapters.registry import parse_spec

    for spec in perturbations:
        parse_spec(spec)
    splits = load_splits(dataset, max_train, max_test)
    for spec in models:
        model = build_model(spec, seed=0, steps=1)
        check = getattr(model, "check_texts", None)
        if callable(check):
            check(splits.train_texts)
    return splits
