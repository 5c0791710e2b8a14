"""The option convention shared by every command (docs/cli.md, "Option convention").

One spelling per idea, the others kept as aliases so that older command lines (and the command
lines stored in run directories) still parse:

* ``--dataset NAME|FILE`` (aliases ``--data``, ``--dataset-from-huggingface``): a file when it
  exists or looks like a path, else a dataset name (:func:`robustlab.data.datasets.resolve_dataset`);
  ``--test-dataset`` (alias ``--test-data``); the file options ``--format`` (alias
  ``--dataset-format``), ``--encoding``, ``--header/--no-header``, ``--text-column``,
  ``--text-pair-column``, ``--label-column``, ``--split``;
* ``--model``: repeatable, space or comma separated on the commands that take several models
  (a spec's own ``family:key=v,key2=w`` commas are kept together), exactly one elsewhere;
* ``--seed`` (alias ``--random-seed``); multi-seed studies take ``--seeds LIST`` with ``--seed``
  accepted for it;
* ``--quiet`` (alias ``--no-progress``).

Each command declares a group with one call; the values are checked by argparse (types, a second
``--dataset``, several models where one is expected) and by the command's ``check`` hook
(``set_defaults(check=fn)``, run by :func:`robustlab.cli.main` and by the TUI's forms) before
anything is created. Nothing here imports numpy, torch or a command module.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

#: numpy (RandomState, SeedSequence entropy per word), torch and random all accept 0 <= seed < 2**32
SEED_LIMIT = 2**32
#: the most seeds one study runs (each multiplies its cells; the papers ran 3 to 10)
MAX_SEEDS = 1000


def check_seed_count(seeds: Any) -> None:
    """A study's seeds are at most :data:`MAX_SEEDS` (typed, from a plan or a stored run: a
    stored configuration with 200,000 seeds made 600,000 cells)."""
    from robustlab.errors import InputError

    if len(seeds) > MAX_SEEDS:
        raise InputError(f"--seeds: {len(seeds)} seeds, more than the {MAX_SEEDS} one study "
                         "may run; split it into several runs")

#: the option strings of each convention, canonical spelling first (docs/cli.md's table)
DATASET_FLAGS = ("--dataset", "--data", "--dataset-from-huggingface")
TEST_DATASET_FLAGS = ("--test-dataset", "--test-data")
FORMAT_FLAGS = ("--format", "--dataset-format")
SEED_FLAGS = ("--seed", "--random-seed")
SEEDS_FLAGS = ("--seeds", "--seed", "--random-seed")
QUIET_FLAGS = ("--quiet", "--no-progress")


def seed(text: str) -> int:
    """``--seed``: an integer 0 <= seed < 2**32 (numpy's limit), refused up front otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected an integer") from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"seed {value} is out of range: seeds are integers 0 <= seed < 2**32")
    return value


def split_specs(values: list[str] | str | None, *, continue_bare: bool = False) -> list[str]:
    """``a,b:k=1,j=2,c`` -> ``[a, b:k=1,j=2, c]``.

    Specs (models, perturbations) may carry parameters ``name:key=value,key2=value``, whose
    commas are not list separators: a piece ``key=value`` (no ``:`` before its ``=``) continues
    the previous spec when that spec has parameters (a ``:``), and is a spec of its own otherwise
    (so ``bow,steps=5`` is refused as the model ``steps=5``, not silently read as parameters).
    ``continue_bare`` (``robustlab augment``'s documented rule): a ``key=value`` piece always
    continues the previous spec, so ``-p char_swap,pps=2`` is ``char_swap`` with ``pps=2``.
    """
    if values is None:
        return []
    specs: list[str] = []
    for value in [values] if isinstance(values, str) else values:
        for piece in str(value).split(","):
            piece = piece.strip()
            if not piece:
                continue
            head = piece.split("=", 1)[0]
            if "=" in piece and ":" not in head and specs and (continue_bare or ":" in specs[-1]):
                specs[-1] += "," + piece
            else:
                specs.append(piece)
    return specs


class _Once(argparse.Action):
    """Store one value; the same option given again with another value is an error (two
    datasets, two test sets: which one was meant cannot be guessed)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        seen = namespace.__dict__.setdefault("_options_given", {})
        if self.dest in seen and seen[self.dest][1] != values:
            first, value = seen[self.dest]
            raise argparse.ArgumentError(
                self, f"given twice ({first} {value} and {option_string} {values}); "
                f"{'/'.join(self.option_strings)} are one option: give it once")
        seen[self.dest] = (option_string, values)
        setattr(namespace, self.dest, values)


class _Models(argparse.Action):
    """``--model A B``, ``--model A,B`` and ``--model A --model B`` all give ``[A, B]``."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        seen = namespace.__dict__.setdefault("_options_given", {})
        have = list(getattr(namespace, self.dest) or []) if self.dest in seen else []
        seen[self.dest] = (option_string, values)
        setattr(namespace, self.dest, have + split_specs(values))


class _OneModel(argparse.Action):
    """``--model SPEC`` of a single-model command: several models are an error naming them."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        seen = namespace.__dict__.setdefault("_options_given", {})
        given = ([seen[self.dest][1]] if self.dest in seen else []) + list(values)
        specs = [s for v in given for s in _one_model_pieces(v)]
        if len(specs) > 1:
            raise argparse.ArgumentError(
                self, f"this command takes one model, got {len(specs)} ({', '.join(specs)}); run "
                "it once per model (learnability, robustness and cross-domain clf take several)")
        seen[self.dest] = (option_string, specs[0] if specs else "")
        setattr(namespace, self.dest, specs[0] if specs else "")


def _one_model_pieces(value: str) -> list[str]:

    if Path(value).expanduser().exists():  # a saved model directory may have a comma
        return [value]
    return split_specs(value) or [value]


# ---- option groups -------------------------------------------------------------------------------


def add_model_option(g: Any, *, multi: bool, required: bool = False, default: Any = None,
                     help: str | None = None) -> None:
    """``--model``: several (space/comma separated, repeatable) or exactly one."""
    what = ("model family (bow, textrnn, cnn, lstm, transformer, minilm), family:key=value,…, a "
            "HF checkpoint or a saved model dir (`robustlab list models`)")
    g.add_argument("--model", nargs="+", action=_Models if multi else _OneModel,
                   required=required, default=default, metavar="SPEC",
                   help=help or (f"{what}; several: repeat --model, or separate with spaces or "
                                 "commas" if multi else f"{what}; exactly one"))


def add_dataset_options(g: Any, *, required: bool = False, default: str | None = None,
                        test: bool = False, pairs: bool = True, split: bool = True,
                        format_dest: str = "format", help: str | None = None) -> None:
    """``--dataset NAME|FILE`` and the file options that go with it (same names everywhere)."""
    g.add_argument(*DATASET_FLAGS, dest="dataset", action=_Once, required=required,
                   default=default, metavar="NAME|FILE",
                   help=help or "a data file (TSV/CSV/JSONL or '<label> <text>' lines) or a "
                   "dataset name: demo, sst2, glue/sst2, imdb, hf:NAME, TextAttack's "
                   "NAME^CONFIG^SPLIT; a file when it exists or looks like a path")
    if test:
        g.add_argument(*TEST_DATASET_FLAGS, dest="test_dataset", action=_Once, metavar="FILE",
                       help="held-out test file (same file options; default: a seeded split)")
    add_format_option(g, dest=format_dest)
    add_encoding_option(g)
    add_header_option(g)
    g.add_argument("--text-column", metavar="NAME|INDEX",
                   help="text column of a file (name or 0-based index; default: detected)")
    if pairs:
        g.add_argument("--text-pair-column", metavar="NAME|INDEX",
                       help="second text column for sentence pairs (QQP, NLI)")
    g.add_argument("--label-column", metavar="NAME|INDEX",
                   help="label column of a file (name or 0-based index; default: detected)")
    if split:
        g.add_argument("--split", default=None,
                       help="split of a hub dataset (a split in NAME^CONFIG^SPLIT wins)")


def add_format_option(g: Any, *, dest: str = "format", choices: Any = None,
                      default: str | None = None, help: str | None = None) -> None:
    g.add_argument(*FORMAT_FLAGS, dest=dest, choices=choices, default=default,
                   help=help or "file format: text, label-text, tsv, csv, jsonl (default: from "
                   "the extension, or detected)")


def encoding(value: str) -> str:
    """argparse type of ``--encoding``: a text encoding Python knows (not a codec such as
    base64 or zlib, which would fail later with a traceback)."""
    from robustlab.data.files import text_encoding
    from robustlab.errors import InputError

    try:
        return text_encoding(value)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_encoding_option(g: Any, *, default: str | None = None, help: str | None = None) -> None:
    g.add_argument("--encoding", default=default, type=encoding,
                   help=help or "file encoding (default utf-8; e.g. cp1252 for MR, SUBJ, TREC)")


def add_header_option(g: Any) -> None:
    g.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="TSV/CSV: whether the first row is a header (default: detected)")


def absolute(path: str | None) -> str | None:
    """A path option as the run stores it: absolute, ``~`` expanded (None and "" kept), so a
    resumed run reads the same file from any directory."""
    return str(Path(path).expanduser().resolve()) if path else path


def add_seed_option(g: Any, *, default: int = 0, help: str | None = None) -> None:
    """``--seed S`` (alias ``--random-seed``), range-checked by argparse."""
    g.add_argument(*SEED_FLAGS, dest="seed", type=seed, default=default, metavar="S",
                   help=help or f"random seed, 0 <= S < 2**32 (default {default})")


def add_seeds_option(g: Any, *, default: str = "0,1,2") -> None:
    """``--seeds LIST`` of a multi-seed study; ``--seed S`` (and ``--random-seed``) name it too."""
    g.add_argument(*SEEDS_FLAGS, dest="seeds", default=default, metavar="LIST",
                   help=f"seeds, comma separated (default {default}); --seed S runs one")


def add_quiet_option(g: Any, *, dest: str = "quiet", help: str | None = None) -> None:
    """``--quiet`` (alias ``--no-progress``): no progress bar."""
    g.add_argument(*QUIET_FLAGS, dest=dest, action="store_true",
                   help=help or "no progress bar")


def load_options(args: argparse.Namespace, *, format_dest: str = "format") -> dict[str, Any]:
    """The file options of ``args`` as keyword arguments of
    :func:`robustlab.data.datasets.load_dataset` (only those the command declares)."""
    out: dict[str, Any] = {}
    for key, kw in ((format_dest, "fmt"), ("encoding", "encoding"), ("header", "header"),
                    ("text_column", "text_column"), ("text_pair_column", "text_pair_column"),
                    ("label_column", "label_column"), ("split", "split")):
        value = getattr(args, key, None)
        if value is not None:
            out[kw] = column(value) if key.endswith("_column") else value
    return out


def column(v: str | None) -> str | int | None:
    """A column option: a 0-based index when it is a number, else a header name."""
    return int(v) if v is not None and v.lstrip("-").isdigit() else v


def at_least(args: argparse.Namespace, minimum: float, *names: str) -> None:
    """InputError unless every option in ``names`` that is set is a finite number >= ``minimum``
    (``nan`` compares false with everything, so it used to pass)."""
    import math

    from robustlab.errors import InputError

    for name in names:
        value = getattr(args, name, None)
        if value is not None and (not math.isfinite(value) or value < minimum):
            flag = "--" + name.replace("_", "-")
            raise InputError(f"{flag} must be >= {minimum:g}, got {value}")


def dataset_spec(args: argparse.Namespace) -> dict[str, Any]:
    """``--dataset NAME|FILE [--test-dataset FILE] …`` as a dataset spec: ``{"path": …}`` with
    the file options for a file, ``{"name": …}`` for a name (the same dicts ``--data FILE`` and
    ``--dataset NAME`` gave before the two options became one, so signatures do not change)."""
    # the dataset readers load numpy: imported here, so `robustlab perturb` (which imports this
    # module for its option groups) starts without them
    from robustlab.data.datasets import resolve_dataset
    from robustlab.errors import InputError

    spec = resolve_dataset(args.dataset or "demo", must_exist=False)
    test = getattr(args, "test_dataset", None)
    if "path" in spec:
        if test:
            test_spec = resolve_dataset(test, "--test-dataset", must_exist=False)
            if "path" not in test_spec:
                raise InputError(f"--test-dataset {test}: a test FILE goes with a data file; a "
                                 "named dataset brings its own test split")
            spec["test_path"] = test_spec["path"]
        for key in ("format", "encoding", "text_column", "text_pair_column", "label_column",
                    "header"):
            if getattr(args, key, None) is not None:
                spec[key] = getattr(args, key)
        return spec
    if test:
        raise InputError(f"--test-dataset needs --dataset FILE (a named dataset, here "
                         f"{spec['name']!r}, brings its own test split)")
    given = [f"--{k.replace('_', '-')}" for k in ("format", "encoding", "header", "text_column",
                                                   "text_pair_column", "label_column")
             if getattr(args, k, None) is not None]
    if given:
        raise InputError(f"{', '.join(given)}: file options, but --dataset {spec['name']} is a "
                         "dataset name, not a file")
    return spec


# ---- LIST options (seeds, p-grid, experiments) ------------------------------------------------


def split_list(values: list[str] | str | None) -> list[str]:
    """A LIST option (seeds, p-grid, experiments): comma and/or space separated."""
    if values is None:
        return []
    items = values if isinstance(values, list) else [values]
    return [s for v in items for s in re.split(r"[,\s]+", str(v)) if s]


def floats(text: str, opt: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in split_list(text))
    except ValueError:
        raise InputError(f"{opt}: expected comma-separated numbers, got {text!r}") from None


def ints(text: str, opt: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in split_list(text))
    except ValueError:
        raise InputError(f"{opt}: expected comma-separated integers, got {text!r}") from None
