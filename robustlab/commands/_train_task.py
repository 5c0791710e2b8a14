"""``robustlab train --task ner|pair|similarity|answer-selection``: a model for a task beyond single
texts (:mod:`robustlab.tasks`), trained and saved as ``robustlab train`` saves a classifier.

The task comes from ``--task`` or, for a data file, from the file itself
(:func:`robustlab.tasks.detect_task`). Each task has the head it needs:

================  =================================================  ==========================
task              minilm / a Hugging Face checkpoint                 fast baseline (CPU)
================  =================================================  ==========================
ner               token classification (:class:`HFTagger`)          ``feature-tagger``
similarity        one regression output (:class:`HFPairScorer`)      ``bow-pair-scorer``
pair              sequence classification on pairs (HFClassifier)    ``bow-pair-classifier``
answer-selection  pair classification of (question, sentence),       ``overlap-ranker``
                  class 1 = answers; candidates ranked by P(1)
================  =================================================  ==========================

The output folder (written whole or not at all) is a ``save_pretrained`` folder (or a baseline's
JSON + ``.npy``) whose ``robustlab_model.json`` names the ``family``, the ``task`` and, for ner
and pair, the ``labels``; beside it, the held-out split in the task's own file format
(``heldout`` + the data file's extension, named in ``train_info.json``), the training rows'
hashes (``train_rows.txt``) and ``train_info.json`` with the task's metrics on train and
held-out data.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.textfmt import echo

#: the tasks ``--task`` takes here (classification is today's ``robustlab train``)
TRAIN_TASKS = ("ner", "pair", "similarity", "answer-selection")
#: file options of the single-text readers: a task's file format is fixed by the task
_FILE_OPTIONS = ("format", "header", "text_column", "text_pair_column", "label_column", "split")
#: HF parameters a task model takes (``--param`` / ``minilm:key=value``); ``warmup_ratio`` is
#: the classifier's name for ``warmup``
_HF_TASK_PARAMS = ("steps", "lr", "batch_size", "max_length", "weight_decay", "warmup")
#: most training examples scored for the printed training metric
TRAIN_EVAL_MAX = 2000


def task_name(args: argparse.Namespace) -> str:
    """The task of this training: ``--task`` (checked against what the data file holds), else
    what the file holds, else classification. Cached on ``args``."""
    cached = getattr(args, "task_resolved_", None)
    if cached is not None:
        return cached
    from robustlab.tasks import detect_task, get_task

    asked = get_task(args.task).name if getattr(args, "task", None) else None
    detected = None
    path = Path(str(args.dataset)).expanduser()
    if path.is_file():
        detected = detect_task(path, encoding=getattr(args, "encoding", None) or "utf-8")
        if detected == "pair" and _has_header(path):
            detected = "classification"  # label/text/text_pair TSV: a classifier's pair file
    if asked and detected and detected != "classification" and detected != asked:
        raise InputError(f"--task {asked}: {args.dataset} holds {detected} data (read from the "
                         f"file); pass --task {detected}, or a {asked} file")
    name = asked or detected or "classification"
    if name != "classification" and name not in TRAIN_TASKS:
        raise InputError(f"--task {name}: train takes {', '.join(TRAIN_TASKS)} (or no --task "
                         "for a classifier)")
    args.task_resolved_ = name
    return name


def _has_header(path: Path) -> bool:
    with open(path, encoding="utf-8", errors="replace") as f:
        first = f.readline().split("\t")[0].strip().lower()
    return first in ("label", "gold_label", "labels")


def _kind(spec: str, task: str) -> str:
    """``baseline`` or ``hf`` for a --model value, or InputError saying what the task takes."""
    from robustlab.models.registry import TORCH_FAMILIES, parse_model_spec
    from robustlab.models.task_baselines import BASELINE_TASKS

    name, _ = parse_model_spec(spec)
    ours = next(f for f, t in BASELINE_TASKS.items() if t == task)
    takes = f"--task {task} trains minilm, a Hugging Face checkpoint or {ours}"
    if name in BASELINE_TASKS:
        if BASELINE_TASKS[name] != task:
            raise InputError(f"--model {name}: is the {BASELINE_TASKS[name]} baseline; {takes}")
        return "baseline"
    if name.lower() in TORCH_FAMILIES:
        raise InputError(f"--model {name}: is a single-text classifier family; {takes}")
    return "hf"


def check(args: argparse.Namespace, task: str) -> None:
    """Pre-run checks of a task training (options only)."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.models.registry import (
        USER_CLASS,
        check_model_spec,
        family_shadows_directory,
        is_saved_model,
        parse_model_spec,
    )
    from robustlab.options import at_least

    given = [f"--{k.replace('_', '-')}" for k in _FILE_OPTIONS if getattr(args, k, None)
             is not None]
    if given:
        raise InputError(f"{', '.join(given)}: a {task} file has its own format; these options "
                         "are for single-text files")
    for opt, value in (("--dataset", args.dataset), ("--test-dataset", args.test_dataset)):
        if value and "path" not in resolve_dataset(value, opt, must_exist=False):
            raise InputError(f"{opt} {value}: --task {task} reads a data file (a named dataset "
                             "is single texts)")
        if value:
            resolve_dataset(value, opt)
    if USER_CLASS.match(args.model) and not args.model.startswith("hf:"):
        raise InputError(f"--model {args.model}: train builds a model family or a checkpoint")
    kind = _kind(args.model, task)
    if kind == "baseline" and args.steps is not None:
        raise InputError(f"--steps: {args.model} is fitted to convergence, not for a number of "
                         "steps")
    if kind == "hf":
        check_model_spec(args.model)
        if is_saved_model(args.model) and not family_shadows_directory(args.model):
            raise InputError(f"--model {args.model}: is already a trained model; pass minilm or "
                             "a checkpoint to train a new one")
    at_least(args, 1, "steps", "max_examples")
    if not 0 < args.test_size < 1:
        raise InputError(f"--test-size must be between 0 and 1, got {args.test_size}")
    _, spec_params = parse_model_spec(args.model)
    _model_params(kind, {**spec_params, **_extra(args)})


def _extra(args: argparse.Namespace) -> dict[str, Any]:
    from robustlab.commands._train_io import params_of

    out = params_of(args.param)
    if args.steps is not None:
        out["steps"] = args.steps
    return out


def _model_params(kind: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` checked for the model kind (names; HF values through the hf checks)."""
    if kind == "baseline":
        return params
    from robustlab.models.params import check_params

    params = dict(params)
    if "warmup_ratio" in params:
        params["warmup"] = params.pop("warmup_ratio")
    bad = sorted(set(params) - set(_HF_TASK_PARAMS) - {"seed", "device"})
    if bad:
        raise InputError(f"--param {bad[0]}: a task model takes {', '.join(_HF_TASK_PARAMS)}")
    hf = {("warmup_ratio" if k == "warmup" else k): v for k, v in params.items()}
    checked = check_params("hf", hf)
    if checked.get("max_length", 1) == "auto":
        checked.pop("max_length")
    return {("warmup" if k == "warmup_ratio" else k): v for k, v in checked.items()}


def make_task_model(spec: str, task: str, params: dict[str, Any], seed: int,
                    device: str | None) -> Any:
    """A new, untrained model for ``task`` from a --model value (module table)."""
    from robustlab.models.registry import parse_model_spec

    kind = _kind(spec, task)
    name, spec_params = parse_model_spec(spec)
    params = _model_params(kind, {**spec_params, **params})
    if kind == "baseline":
        from robustlab.models.task_baselines import baseline_class

        cls = baseline_class(name)
        if "seed" in cls.__init__.__code__.co_varnames:
            params.setdefault("seed", seed)
        try:
            return cls(**params)
        except TypeError as exc:
            raise InputError(f"--model {spec}: {exc}") from None
    from robustlab.models.registry import make_model

    if task in ("pair", "answer-selection"):  # the sequence classifier, on pairs
        hf = {("warmup_ratio" if k == "warmup" else k): v for k, v in params.items()}
        return make_model(name, **{"seed": seed, **hf, "device": device})
    base = make_model(name, seed=seed, device=device)  # resolves minilm and checkpoints
    from robustlab.models.hf_tasks import HFPairScorer, HFTagger

    cls = HFTagger if task == "ner" else HFPairScorer
    model = cls(base.checkpoint, **{"seed": seed, **params, "device": device})
    model.name = base.name or name
    return model


def _split(examples: list[Any], test_size: float, seed: int) -> tuple[list[Any], list[Any]]:
    import numpy as np

    order = np.random.default_rng(seed).permutation(len(examples))
    n_test = max(1, int(round(test_size * len(examples))))
    if n_test >= len(examples):
        raise InputError(f"{len(examples)} example(s): too few to hold {test_size:.0%} out")
    test = sorted(order[:n_test].tolist())
    train = sorted(order[n_test:].tolist())
    return [examples[i] for i in train], [examples[i] for i in test]


def _fingerprint(task: Any, examples: Sequence[Any]) -> str:
    blob = json.dumps([task.model_inputs(examples), task.gold(examples)], default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _row_keys(task: Any, examples: Sequence[Any]) -> list[Any]:
    """What identifies a training example for eval's overlap count (a sentence as its tokens
    joined by spaces, a pair as its two texts, a question as its text)."""
    if task.name == "ner":
        return [ex.text for ex in examples]
    if task.name == "answer-selection":
        return [ex.question for ex in examples]
    return [(ex.first, ex.second) for ex in examples]


def fit_task_model(model: Any, task: Any, examples: Sequence[Any]) -> list[str] | None:
    """Fit ``model`` on ``examples``; the label list it learnt (ner, pair) or None."""
    inputs = task.model_inputs(examples)
    if task.name == "ner":
        model.fit(inputs, task.gold(examples))
        return list(model.tags_ if hasattr(model, "tags_") else model.model_.classes_)
    if task.name == "similarity":
        model.fit(inputs, task.gold(examples))
        return None
    if task.name == "pair":
        classes = task.classes(examples)
        if len(classes) < 2:
            raise InputError(f"pair: the training data has one class ({classes[0]}); a "
                             "classifier needs two or more")
        index = {c: i for i, c in enumerate(classes)}
        gold = task.gold(examples)
        if hasattr(model, "predict_proba") and hasattr(model, "hold"):  # HFClassifier
            model.fit(inputs, [index[g] for g in gold])
            _name_classes(model, classes)
            model.classes_ = classes
        else:
            model.fit(inputs, gold)
        return classes
    # answer selection
    if hasattr(model, "predict_candidate_scores"):
        model.fit(inputs, task.gold(examples))
        return None
    pairs = [(ex.question, c) for ex in examples for c in ex.candidates]
    labels = [int(y) for ex in examples for y in ex.labels]
    if len(set(labels)) < 2:
        raise InputError("answer-selection: the training data has no answering sentence (or "
                         "only answering ones); the pair classifier needs both")
    model.fit(pairs, labels)
    _name_classes(model, ["0", "1"])
    return None


def _name_classes(model: Any, classes: list[str]) -> None:
    """The class names in the saved config (``id2label``), so a pipeline shows them."""
    config = model.model_.config
    config.id2label = dict(enumerate(classes))
    config.label2id = {c: i for i, c in enumerate(classes)}


def run(args: argparse.Namespace, task_name_: str) -> int:
    from robustlab.commands._train_io import model_path, record_inputs, refuse_inputs_inside
    from robustlab.models.device import resolve_device
    from robustlab.outputs import atomic_dir, check_out_dir, write_json
    from robustlab.tasks import get_task
    from robustlab.tasks.predict import predict

    check_out_dir(args.out)
    out = Path(args.out)
    if out.exists() and not (out.is_dir() and not any(out.iterdir())) and not args.force:
        raise InputError(f"--out {out}: already exists; pass --force to replace it or choose "
                         "another directory")
    refuse_inputs_inside(out, args)
    resolve_device(args.device)
    task = get_task(task_name_)
    kind = _kind(args.model, task.name)
    enc = {"encoding": args.encoding} if getattr(args, "encoding", None) else {}
    corpus = task.read(args.dataset, **enc)
    if args.test_dataset:
        train, test = list(corpus.examples), list(task.read(args.test_dataset, **enc).examples)
    else:
        train, test = _split(list(corpus.examples), args.test_size, args.seed)
    if args.max_examples and args.max_examples < len(train):
        import numpy as np

        keep = np.sort(np.random.default_rng(args.seed).permutation(len(train))
                       [: args.max_examples])
        train = [train[i] for i in keep]
    if task.name == "ner":  # entity types the model could never tag: before any training
        task.check_tag_set(sorted({t for ex in train for t in ex.tags}), test,
                           where="the training split")
    # announced once the data is read and checked: a bad file is one error line, nothing else
    recorded = record_inputs(args, model=kind == "hf")
    model = make_task_model(args.model, task.name, _extra(args), args.seed, args.device)
    model.show_progress = not args.quiet
    model_id = model.model_id() if hasattr(model, "model_id") else args.model
    unit = "questions" if task.name == "answer-selection" else (
        "sentences" if task.name == "ner" else "pairs")
    echo(f"training {model_id} for {task.name} on {args.dataset}: {len(train)} {unit}; "
         f"held out: {len(test)}", flush=True)
    t0 = time.perf_counter()
    labels = fit_task_model(model, task, train)
    seconds = time.perf_counter() - t0
    import numpy as np

    n_eval = min(len(train), TRAIN_EVAL_MAX)
    idx = np.sort(np.random.default_rng(args.seed).permutation(len(train))[:n_eval])
    sample = [train[i] for i in idx]
    train_m = task.metrics(sample, predict(task, model, sample))
    test_m = task.metrics(test, predict(task, model, test))
    metric = task.primary_metric
    heldout = "heldout" + (Path(args.dataset).suffix or ".txt")
    with atomic_dir(out, user=True) as tmp:
        model.save(tmp)
        _stamp(tmp, task.name, labels)
        task.write(tmp / heldout, corpus.with_examples(test), user=False)
        from robustlab.data.heldout import write_training_rows

        write_training_rows(tmp, _row_keys(task, train))
        write_json(tmp / "train_info.json", {
            "task": task.name, "model": args.model, "model_id": model_id, "data": args.dataset,
            "heldout": heldout,
            "train": {"n": len(train), "fingerprint": _fingerprint(task, train),
                      "source": str(args.dataset)},
            "test": {"n": len(test), "fingerprint": _fingerprint(task, test),
                     "source": str(args.test_dataset or args.dataset)},
            "seed": args.seed, "steps": getattr(model, "steps_", None), "labels": labels,
            "metric": metric, "train_metrics": _plain(train_m), "train_metrics_n": n_eval,
            "test_metrics": _plain(test_m), "seconds": seconds, "inputs": recorded})
    part = "" if n_eval == len(train) else f" (sample of {n_eval})"
    echo(f"train {metric}{part} {train_m[metric]:.3f}  held-out {metric} "
         f"{test_m[metric]:.3f}  ({seconds:.1f} s)\nsaved to {out}  (use --model "
         f"{model_path(out)}; held-out split: {model_path(out / heldout)})")
    return 0


def _plain(metrics: dict[str, Any]) -> dict[str, Any]:
    """The top-level numbers of a metrics dict (per-type tables left out of train_info)."""
    return {k: float(v) for k, v in metrics.items() if isinstance(v, int | float)}


def _stamp(directory: Path, task: str, labels: list[str] | None) -> None:
    """Add the task (and the label list) to the folder's ``robustlab_model.json``."""
    path = directory / "robustlab_model.json"
    meta = json.loads(path.read_text(encoding="utf-8"))
    meta["task"] = task
    if labels is not None:
        meta["labels"] = [str(x) for x in labels]
    path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
