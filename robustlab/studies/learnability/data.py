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

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.build import build_model  # noqa: F401  (the study's name for it)
from robustlab.signature import fingerprint as _fingerprint


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


#: keys of a dataset spec that are passed to robustlab.data.datasets.load_dataset
_READER_KEYS = {"format": "fmt", "fmt": "fmt", "encoding": "encoding",
                "text_column": "text_column", "text_pair_column": "text_pair_column",
                "label_column": "label_column", "header": "header"}
TEST_SIZE = 0.2


def load_splits(spec: dict[str, Any], max_train: int | None = None,
                max_test: int | None = None) -> Splits:
    """Load and validate the train/test splits named by ``spec``, balanced-subsampled.

    ``spec`` is ``{"name": NAME}`` for a named dataset (``demo``, a Hugging Face name such as
    ``glue/sst2`` — train split and its validation/test split) or ``{"path": TRAIN_FILE,
    "test_path": TEST_FILE, "format": …, "encoding": …, "text_column": …, "label_column": …}``
    for local files. Without a test file (and for ``demo``) a seeded stratified 20 % test split
    is made. Loading goes through :func:`robustlab.data.datasets.load_dataset` (rows with an
    empty text are dropped there and counted in the dataset's ``source``). Subsampling is seeded
    (seed 0) and balanced, the same for every cell of the study.
    """
    from robustlab.data.datasets import HF_DATASETS, load_dataset

    opts = {_READER_KEYS[k]: v for k, v in spec.items() if k in _READER_KEYS and v is not None}
    if spec.get("path"):
        where = str(spec["path"])
        train = load_dataset(where, **opts)
        test = load_dataset(str(spec["test_path"]), **opts) if spec.get("test_path") else None
    elif spec.get("name"):
        where = str(spec["name"])
        if where in HF_DATASETS or where.startswith("hf:"):
            train = load_dataset(where, split="train", **opts)
            test_split = spec.get("test_split") or (
                "validation" if "glue" in HF_DATASETS.get(where, ("",))[0] else "test")
            test = load_dataset(where, split=test_split, **opts)
        else:
            train, test = load_dataset(where, **opts), None
    else:
        raise InputError("no dataset: pass --dataset NAME or --data FILE")
    if test is None:
        train, test = train.split(test_size=spec.get("test_size", TEST_SIZE), seed=0)
    if max_train is not None and max_train < len(train):
        train = train.subsample(_balanced_cap(train.class_counts(), max_train), seed=0)
    if max_test is not None and max_test < len(test):
        test = test.subsample(_balanced_cap(test.class_counts(), max_test), seed=0)
    train_x, train_y = list(train.texts), [int(v) for v in train.labels]
    test_x, test_y = list(test.texts), [int(v) for v in test.labels]
    _check(train_x, train_y, f"{where} (train)")
    _check(test_x, test_y, f"{spec.get('test_path') or where} (test)",
           n_classes=max(train_y) + 1)
    fp = _fingerprint([train_x, train_y, test_x, test_y])
    return Splits(Path(where).name if spec.get("path") else where, fp, train_x, train_y,
                  test_x, test_y)


def _balanced_cap(counts: dict[int, int], n: int) -> int:
    """The largest balanced sample size <= n the class counts allow."""
    return min(n, min(counts.values()) * len(counts))


# ---- models ----------------------------------------------------------------------------------------


def shared_fit(cache_dir: str | None, key: str, build: Callable[[], Any],
               fit: Callable[[Any], float]) -> tuple[Any, float, bool]:
    """Train ``build()`` with ``fit`` once per ``key`` among processes sharing ``cache_dir``.

    The first process takes a file lock, trains and saves the model (``save``/``load`` of the
    TextClassifier interface); the others wait on the lock and load it, so a clean model is
    trained once per machine instead of once per worker. Returns (model, train seconds, trained
    here). Without ``cache_dir`` (or without POSIX locks) it just trains.
    """
    if not cache_dir:
        model = build()
        return model, fit(model), True
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no shared cache
        model = build()
        return model, fit(model), True
    import json

    from robustlab.outputs import atomic_dir, open_run_file, refuse_link, write_json
    from robustlab.signature import fingerprint

    d = refuse_link(cache_dir)  # inside the run directory: links there are never followed
    d.mkdir(parents=True, exist_ok=True)
    name = fingerprint(key, n=16)
    target, meta = refuse_link(d / name), d / name / "robustlab_cache.json"
    lock_fd = open_run_file(d / f"{name}.lock", os.O_RDWR | os.O_CREAT)
    with os.fdopen(lock_fd, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if meta.is_file():
                model = type(build()).load(target)
                return model, float(json.loads(meta.read_text())["train_seconds"]), False
            model = build()
            seconds = fit(model)
            with atomic_dir(target) as tmp:
                model.save(tmp)
                write_json(tmp / meta.name, {"key": key, "train_seconds": seconds})
            return model, seconds, True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def check_tokenizable(model: Any, texts: list[Any], where: str) -> None:
    """Raise InputError if ``model``'s tokenizer leaves a text with no tokens.

    Whitespace-only texts never get here (the loader drops them); what remains are texts made
    only of characters a tokenizer discards (zero-width or control characters for WordPiece).
    """
    checker = getattr(model, "check_texts", None)
    if callable(checker):
        checker(texts)
        return
    if hasattr(model, "vocab_") or hasattr(model, "lowercase"):  # robustlab's torch families
        from robustlab.models.vocab import check_nonempty

        check_nonempty(texts, bool(getattr(model, "lowercase", False)))
        return
    checkpoint = getattr(model, "checkpoint", None)
    if checkpoint is None:
        return
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(checkpoint, trust_remote_code=False)
    if not texts or isinstance(texts[0], str):
        sides = [texts]
    else:
        sides = [list(side) for side in zip(*texts, strict=True)]
    for side in sides:
        ids = tok(side, add_special_tokens=False)["input_ids"]
        for i, row in enumerate(ids):
            if not row:
                raise InputError(f"{where}: example {i} ({side[i]!r:.60}) has no tokens for "
                                 f"{checkpoint}'s tokenizer; remove it")


def preflight(models: list[str], perturbations: list[str], dataset: dict[str, Any],
              max_train: int | None, max_test: int | None, *, trusted: bool = False) -> Splits:
    """Check every input before anything is written: data, perturbations, model names.
    ``trusted``: the specs were typed on this command line (may name ``module:Class``)."""
    from robustlab.perturbations.registry import parse_spec

    for spec in perturbations:
        parse_spec(spec, trusted=trusted)
    splits = load_splits(dataset, max_train, max_test)
    for spec in models:
        model = build_model(spec, seed=0, steps=1, trusted=trusted)
        check_tokenizable(model, splits.train_texts, f"{splits.name} (train), --model {spec}")
    return splits
