"""``robustlab train``: fit a model family or checkpoint on a dataset and save it.

The saved directory is what every other command accepts as ``--model MODEL_DIR``. It is written
to a temporary sibling directory and renamed into place at the end, so a failed or interrupted
training never leaves a half-written model behind.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from robustlab.commands._train_io import model_path, params_of, record_inputs, refuse_inputs_inside
from robustlab.options import (
    add_dataset_options,
    add_model_option,
    add_quiet_option,
    add_seed_option,
    load_options,
)
from robustlab.outputs import check_out_dir
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    from robustlab.models.registry import available_models

    p = sub.add_parser(
        "train", help="train a model (textrnn, bow, cnn, lstm, transformer, minilm, a HF "
        "checkpoint) on a dataset and save it",
        description="Train a classifier for a fixed number of optimiser steps and save it to "
        "--out (a directory every other command accepts as --model). Families: "
        + ", ".join(available_models()) + "; or a Hugging Face checkpoint directory / hub id.")
    add_model_option(p, multi=False, required=True,
                     help="family[:key=value,...], HF checkpoint or dir (exactly one)")
    from robustlab.commands._train_task import TRAIN_TASKS

    p.add_argument("--task", metavar="TASK",
                   help="what the model does: " + ", ".join(TRAIN_TASKS) + " (aliases conll, "
                   "nli, sts, wikiqa); default: read from the data file (CoNLL, STS, WikiQA, "
                   "label<TAB>text<TAB>text), else a single-text classifier. docs/tasks.md")
    add_dataset_options(p, required=True, test=True,
                        help="data file (TSV/CSV/JSONL or '<label> <text>' lines), 'demo' or a "
                        "hub name (glue/sst2, imdb, TextAttack's NAME^CONFIG^SPLIT, ...)")
    p.add_argument("--test-size", type=float, default=0.2,
                   help="held-out fraction when --test-dataset is not given (default 0.2)")
    p.add_argument("--steps", type=int, help="optimiser steps (default: the family's)")
    add_seed_option(p)
    p.add_argument("--max-examples", type=int,
                   help="balanced seeded subsample of the training data to this size")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="model parameter, repeatable (e.g. --param hidden=128)")
    p.add_argument("--out", required=True, help="directory to write the trained model to")
    p.add_argument("--force", action="store_true", help="replace an existing --out directory")
    from robustlab.models.device import add_device_option

    add_device_option(p)
    add_quiet_option(p, help="no training progress (steps, loss, ETA) on stderr")
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """Pre-run checks (options only; the data is read by ``run``): run before anything exists."""
    from robustlab.commands import _train_task as train_task

    task = train_task.task_name(args)
    if task != "classification":
        return train_task.check(args, task)
    from robustlab.data.datasets import resolve_dataset
    from robustlab.errors import InputError
    from robustlab.models.params import check_params, family_of
    from robustlab.models.registry import (
        USER_CLASS,
        check_model_spec,
        family_shadows_directory,
        is_saved_model,
        parse_model_spec,
    )
    from robustlab.options import at_least, dataset_spec

    if USER_CLASS.match(args.model) and not args.model.startswith("hf:"):
        raise InputError(f"--model {args.model}: train builds a model family or a checkpoint; "
                         "a TextClassifier class of your own is trained by the studies "
                         "(learnability, robustness, cent, cross-domain clf)")
    check_model_spec(args.model)
    if is_saved_model(args.model) and not family_shadows_directory(args.model):
        raise InputError(f"--model {args.model}: is already a trained model; pass a family or a "
                         "checkpoint to train a new one")
    resolve_dataset(args.dataset)
    if args.test_dataset:
        resolve_dataset(args.test_dataset, "--test-dataset")
    dataset_spec(args)  # file options with a dataset name are refused, not ignored
    at_least(args, 1, "steps", "max_examples")
    if not 0 < args.test_size < 1:
        raise InputError(f"--test-size must be between 0 and 1, got {args.test_size}")
    name, spec_params = parse_model_spec(args.model)  # with --param and --steps, in range
    extra = {**params_of(args.param), **({"steps": args.steps} if args.steps is not None else {})}
    check_params(family_of(name), {**spec_params, **extra})


#: most training examples scored for the printed training accuracy
TRAIN_EVAL_MAX = 2000


def run(args: argparse.Namespace) -> int:
    from robustlab.commands import _train_task as train_task

    task = train_task.task_name(args)
    if task != "classification":
        return train_task.run(args, task)
    check_out_dir(args.out)  # a file, under a file, read-only: stop first
    import time

    import numpy as np

    from robustlab.data.datasets import load_dataset
    from robustlab.errors import InputError
    from robustlab.models.registry import make_model
    from robustlab.outputs import atomic_dir, write_json

    out = Path(args.out)
    if out.exists() and not (out.is_dir() and not any(out.iterdir())) and not args.force:
        raise InputError(f"--out {out}: already exists; pass --force to replace it or choose "
                         "another directory")
    refuse_inputs_inside(out, args)
    from robustlab.models.device import resolve_device

    resolve_device(args.device)  # a missing GPU fails here, before any data is read
    opts = load_options(args)
    recorded = record_inputs(args)
    data = load_dataset(args.dataset, **opts)
    if args.test_dataset:
        train, test = data, load_dataset(args.test_dataset, **opts)
    else:
        train, test = data.split(args.test_size, seed=args.seed)
    if args.max_examples:
        train = train.subsample(min(args.max_examples, _balanced_max(train)), seed=args.seed)
    train.validate()
    params = params_of(args.param)
    if args.steps is not None:
        params["steps"] = args.steps  # so the stored model id names the steps actually used
    model = make_model(args.model, **{"seed": args.seed, **params, "device": args.device})
    model.show_progress = not args.quiet  # steps, loss and ETA on stderr while it trains
    echo(f"training {model.model_id()} on {train.name}: {len(train)} examples, "
         f"{train.n_classes} classes; held out: {len(test)}", flush=True)
    t0 = time.perf_counter()
    model.fit(train.texts, train.labels, steps=args.steps)
    seconds = time.perf_counter() - t0
    # training accuracy on a seeded sample of at most TRAIN_EVAL_MAX examples: a full pass over
    # a large training set costs as much as a third of the training itself for a pretrained
    # model on CPU (MiniLM on SST-2), and this number is only a fit check
    n_eval = min(len(train), TRAIN_EVAL_MAX)
    idx = np.sort(np.random.default_rng(args.seed).permutation(len(train))[:n_eval])
    train_acc = float(np.mean(model.predict([train.texts[i] for i in idx])
                              == np.asarray(train.labels)[idx]))
    test_acc = float(np.mean(model.predict(test.texts) == np.asarray(test.labels)))
    from robustlab.data.heldout import HELDOUT_FILE, write_heldout, write_training_rows

    with atomic_dir(out, user=True) as tmp:
        model.save(tmp)
        # held out by construction: the split to evaluate on, and what eval compares its data
        # with (docs/eval.md)
        write_heldout(tmp, test.texts, test.labels)
        write_training_rows(tmp, train.texts)
        write_json(tmp / "train_info.json", {
            "model": args.model, "model_id": model.model_id(), "data": args.dataset,
            "train": {"name": train.name, "n": len(train), "fingerprint": train.fingerprint,
                      "source": train.source},
            "test": {"name": test.name, "n": len(test), "fingerprint": test.fingerprint},
            "seed": args.seed, "steps": getattr(model, "steps_", args.steps),
            "train_accuracy": train_acc, "train_accuracy_n": n_eval,
            "test_accuracy": test_acc, "seconds": seconds, "inputs": recorded})
    sample = "" if n_eval == len(train) else f" (sample of {n_eval})"
    echo(f"train accuracy{sample} {train_acc:.3f}  held-out accuracy {test_acc:.3f}  "
         f"({seconds:.1f} s)\nsaved to {out}  (use --model {model_path(out)}; held-out "
         f"split: {model_path(out / HELDOUT_FILE)})")
    return 0


def _balanced_max(ds) -> int:
    counts = ds.class_counts()
    return min(counts.values()) * len(counts)
