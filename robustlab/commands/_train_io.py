"""What ``robustlab train`` does the same way for every task: ``--param`` values, the ``--out``
checks, the record of its inputs, and ``--out`` as a --model value (:mod:`.train`,
:mod:`._train_task`)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from robustlab.textfmt import echo


def params_of(items: list[str]) -> dict:
    from robustlab.errors import InputError
    from robustlab.perturbations.registry import parse_value

    out = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise InputError(f"--param {item!r}: expected KEY=VALUE")
        out[key.strip()] = parse_value(value.strip())
    return out


def model_path(out: Path) -> str:
    """``--out`` as a --model value that names the directory: ``./bow``, never ``bow`` (a bare
    name is read as a family when one has that name)."""
    text = str(out)
    if out.is_absolute() or text.startswith((".", "~")):
        return text
    return f".{os.sep}{text}"


def refuse_inputs_inside(out: Path, args: argparse.Namespace) -> None:
    """``--out`` is replaced whole: refuse it (before any work) when an input is that directory
    or inside it (``--force --out DIR --model DIR`` retraining in place, data kept in DIR)."""
    from robustlab.errors import InputError

    if not out.is_dir():
        return
    real = os.path.realpath(out)
    for opt, value in (("--dataset", args.dataset), ("--test-dataset", args.test_dataset),
                       ("--model", args.model)):
        if value and os.path.exists(value):
            p = os.path.realpath(value)
            if p == real or p.startswith(real + os.sep):
                raise InputError(f"{opt} {value}: is inside --out {out}, which training "
                                 "replaces; write the model to another directory")


def record_inputs(args: argparse.Namespace, model: bool = True) -> dict:
    """What training reads (data files, a starting checkpoint) with path, origin and SHA-256,
    recorded in ``train_info.json`` (:mod:`robustlab.runs.inputs`) and shown on stderr."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.models.registry import model_input
    from robustlab.runs import inputs

    items = [("dataset", spec_value(resolve_dataset(args.dataset, must_exist=False)),
              "--dataset"),
             ("test_dataset", args.test_dataset and spec_value(
                 resolve_dataset(args.test_dataset, "--test-dataset", must_exist=False)),
              "--test-dataset"),
             ("model", *(model_input(args.model) if model else (None, "--model")))]
    recorded = inputs.collect(items)
    inputs.announce(recorded, lambda m: echo(f"robustlab train: {m}", file=sys.stderr,
                                             flush=True))
    return recorded


def spec_value(spec: dict) -> str | None:
    return spec.get("path") or spec.get("name")
