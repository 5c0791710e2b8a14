"""``robustlab augment``: several perturbed copies of every row, in the spirit of ``textattack
augment``.

Each input row gives ``--transformations-per-example`` N output rows (plus the original first,
unless ``--exclude-original``; N defaults to the number of perturbations), always N, so rows out = rows in × N (+ rows in): a copy the
perturbation could not change is kept and flagged ``changed=false`` (TextAttack drops such copies
and duplicates; counting them is what lets a study report no-op rates). With several
perturbations the N copies cycle through them in the order given. Copy k of a row is seeded by
(``--seed``, k, its text) only, so the same seed gives the same file, and copy 0 equals
``robustlab perturb`` with that seed. Labels and every other column are carried along; the file
is streamed (:mod:`robustlab.data.stream`) in constant memory and written atomically.

TextAttack's ``textattack augment`` options are accepted with the same meaning:
``--input-csv``/``--output-csv`` (``-i``/``-o``), ``--input-column``/``--i`` (``--column``),
``--transformations-per-example``/``--t`` (``-n``), ``--random-seed`` (``--seed``),
``--exclude-original``, ``--overwrite`` (the output is always replaced, atomically), and
``--recipe``/``-r NAME`` with ``--pct-words-to-swap``/``--p F``: TextAttack's own augmentation
recipe (:data:`TEXTATTACK_RECIPES`) run through the ``textattack:`` adapter, for the recipes
that run offline; the others are refused naming what they would download.

``--train-file FILE`` also writes the training set of paper 001's experiment 2 (data
augmentation): every original plus its perturbed copies, with true labels, as ``label``/``text``
rows that ``robustlab train --data FILE`` and ``--data`` of the studies read.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path
from typing import Any

from robustlab.data.files import FORMATS
from robustlab.data.row_jobs import (
    PROGRESS_MIN_ROWS,
    NeedErrorColumn,
    PerturbReport,
    build_perturbation,
    plan_output,
    print_report,
    progress_bar,
)
from robustlab.errors import InputError
from robustlab.options import (
    add_encoding_option,
    add_format_option,
    add_header_option,
    add_quiet_option,
    add_seed_option,
)
from robustlab.perturbations.presets import expand
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "augment",
        help="write N perturbed copies of every row of a file (like `textattack augment`)",
        description="Augment a file: every row is followed by N perturbed copies "
        "(--transformations-per-example), labels and other columns carried along, with "
        "'perturbation' and 'changed' columns. Seeded and streamed.",
        epilog="examples:\n"
        "  robustlab augment -p char_swap,leet_letters -n 4 -i train.tsv -o aug.tsv\n"
        "  robustlab augment -p word_delete --pps 2 --exclude-original -i dev.jsonl -o d.jsonl\n"
        "  robustlab augment -p leet_letters -i stsa.binary.train --format label-text "
        "-o aug.jsonl --train-file exp2.tsv\n"
        "`robustlab list perturbations` shows every name and its parameters.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-p", "--perturbation", "--perturbations", action="append",
                   metavar="NAME[,NAME...]", dest="perturbation",
                   help="perturbation(s) from `robustlab list perturbations`, comma separated or "
                   "repeated; each may carry parameters as NAME:key=value,... (or --recipe)")
    p.add_argument("-r", "--recipe", choices=sorted(TEXTATTACK_RECIPES), metavar="NAME",
                   help="a `textattack augment` recipe instead of -p: "
                   + ", ".join(k for k, v in TEXTATTACK_RECIPES.items() if v[0])
                   + " run TextAttack's own augmenter offline; "
                   + ", ".join(k for k, v in TEXTATTACK_RECIPES.items() if not v[0])
                   + " are refused (they download models or embeddings)")
    p.add_argument("--pct-words-to-swap", "--p", type=float, metavar="F", dest="pct_words",
                   help="with --recipe: fraction of the words each copy changes (at least one; "
                   "TextAttack's meaning; default 0.1)")
    p.add_argument("-n", "--transformations-per-example", "--t", type=int, metavar="N", dest="n",
                   help="perturbed copies per row (default: one per perturbation given, 2 with "
                   "--recipe as in TextAttack; at most 10000)")
    p.add_argument("--exclude-original", action="store_true",
                   help="do not write the original rows (by default each is written first)")
    p.add_argument("--pps", type=int, metavar="N",
                   help="maximum perturbations per sample, for every perturbation that takes it")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a parameter for every perturbation given (repeatable)")
    add_seed_option(p)
    p.add_argument("-i", "--input", "--input-csv", required=True, metavar="FILE",
                   help="input file (format from its extension)")
    p.add_argument("-o", "--output", "--output-csv", required=True, metavar="FILE",
                   help="output file, written atomically (format from its extension)")
    p.add_argument("--overwrite", action="store_true",
                   help="accepted for `textattack augment`: -o is always replaced (atomically)")
    p.add_argument("--column", "--input-column", "--i", metavar="NAME|INDEX",
                   help="column to perturb (default: the text column, as in `robustlab "
                   "perturb`)")
    p.add_argument("--label-column", metavar="NAME|INDEX",
                   help="label column for --train-file (default: 'label')")
    p.add_argument("--train-file", metavar="FILE",
                   help="also write an experiment-2 training file (originals + copies, "
                   "label/text columns; format from its extension)")
    add_format_option(p, dest="fmt", choices=FORMATS, help="input format")
    p.add_argument("--output-format", choices=FORMATS, help="output format")
    add_encoding_option(p, default="utf-8", help="input encoding (default utf-8)")
    add_header_option(p)
    add_quiet_option(p, dest="no_progress",
                     help=f"no progress bar (shown on stderr from {PROGRESS_MIN_ROWS} rows)")
    from robustlab.commands._task_files import add_task_options

    add_task_options(p)  # CoNLL, STS, SNLI, WikiQA files in their own format
    p.set_defaults(func=run)


#: ``textattack augment --recipe NAME`` -> (the TextAttack augmenter robustlab runs through its
#: ``textattack:`` adapter, or None and why it is refused). The refused ones download a model or
#: embeddings on first use; robustlab never downloads behind the user's back.
TEXTATTACK_RECIPES: dict[str, tuple[str | None, str]] = {
    "eda": ("EasyDataAugmenter", ""),
    "wordnet": ("WordNetAugmenter", ""),
    "charswap": ("CharSwapAugmenter", ""),
    "embedding": (None, "needs TextAttack's counter-fitted GloVe embeddings, a download; offline "
                  "use --recipe wordnet, or -p word_synonym"),
    "checklist": (None, "needs flair's NER model (a download) to find names and locations"),
    "clare": (None, "needs the distilroberta-base masked LM and the Universal Sentence Encoder "
              "(downloads)"),
    "back_trans": (None, "needs MarianMT translation models (downloads)"),
    "back_transcription": (None, "needs text-to-speech and speech recognition models "
                           "(downloads)"),
}


def recipe_spec(name: str, pct_words: float | None) -> str:
    """``--recipe NAME [--pct-words-to-swap F]`` as a ``textattack:`` perturbation spec: the
    augmenter makes one augmentation per call (robustlab asks for each of the N copies with its
    own seed), changing ``max(int(F * words), 1)`` words as in TextAttack."""
    target, why = TEXTATTACK_RECIPES[name]
    if target is None:
        raise InputError(f"--recipe {name}: not run by robustlab augment: it {why}")
    pct = 0.1 if pct_words is None else pct_words
    if not 0.0 <= pct <= 1.0:
        raise InputError(f"--pct-words-to-swap {pct_words}: must be between 0 and 1")
    return f"textattack:{target}:pct_words_to_swap={pct!r},transformations_per_example=1"


def split_specs(values: list[str]) -> list[str]:
    """``a,b:k=1,j=2,c`` -> ``[a, b:k=1,j=2, c]``: a piece ``key=value`` (no ``:`` before its
    ``=``) continues the previous perturbation's parameters (the shared splitter's
    ``continue_bare`` rule)."""
    from robustlab.options import split_specs as split

    return expand(split(values, continue_bare=True))  # 'papers': the eight of paper 000


#: the most copies per row (``-n``). Memory does not grow with it (copies are generated and
#: written as they come), but the output does: rows out = rows in × (N + 1), so a 10k-row file
#: at the maximum is 10^8 rows (about 10 GB of TSV); beyond that it is sampling, not augmentation
MAX_COPIES = 10_000


def run(args: argparse.Namespace) -> int:
    """``robustlab augment``: the perturbations (or recipe), the input and outputs checked
    before any work, then every row written with its copies, then the one-line report."""
    specs = _specs(args)
    from robustlab.commands._task_files import augment_task_file, task_for

    task = task_for(args)
    if task is not None:  # a task's file (CoNLL, STS, SNLI, WikiQA), written in its format
        return augment_task_file(args, task, specs)
    perts, plan, train, label = _prepare(args, specs)
    _check_space(args)
    report, written = _augment(args, perts, plan, train, label)
    n_in = report.rows // args.n
    print_report(report, args, plan.fmt, _Joined(perts))
    echo(f"augment: {n_in} rows in -> {written[0]} rows out ({args.n} per row"
         f"{'' if args.exclude_original else ' + the original'})"
         + (f"; training file {args.train_file}: {written[1]} rows" if train else ""),
         file=sys.stderr)
    return 1 if report.n_failed else 0


def _specs(args: argparse.Namespace) -> list[str]:
    """The perturbation specs (a recipe's or -p's) and ``args.n``, the copies per row (default:
    2 for a recipe, one per perturbation), checked."""
    if args.recipe and args.perturbation:
        raise InputError("--recipe and -p/--perturbation: give one (a recipe is TextAttack's "
                         "augmenter, -p names robustlab perturbations)")
    if args.pct_words is not None and not args.recipe:
        raise InputError("--pct-words-to-swap goes with --recipe (TextAttack's augmenters); "
                         "robustlab perturbations take --pps N, the edits per copy")
    specs = ([recipe_spec(args.recipe, args.pct_words)] if args.recipe
             else split_specs(args.perturbation or []))
    if not specs:
        raise InputError("-p/--perturbation: give at least one perturbation name (or "
                         "--recipe NAME)")
    if args.n is None:
        args.n = 2 if args.recipe else len(specs)
    if args.n < 1:
        raise InputError(f"--transformations-per-example {args.n}: must be at least 1")
    if args.n > MAX_COPIES:
        raise InputError(f"--transformations-per-example {args.n}: at most {MAX_COPIES} copies "
                         f"per row (rows out = rows in x (N + 1); {MAX_COPIES} copies of a 10k-row "
                         "file is already 10^8 rows)")
    return specs


def _prepare(args: argparse.Namespace, specs: list[str]) -> tuple[list[Any], Any, Any, Any]:
    """The perturbations built, the input's reading plan, and the ``--train-file`` output with
    the input's label column (None, None without one); a missing resource is one line."""
    from robustlab.data.files import format_for
    from robustlab.data.stream import Output
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    try:
        perts = [build_perturbation(s, args.param, args.pps,
                                     trusted=getattr(args, "trusted", True)) for s in specs]
        plan = plan_output(args)
        train = label = None
        if args.label_column is not None and not args.train_file:
            plan.reader.column_name(args.label_column)  # an unknown column: one line, as below
            raise InputError("--label-column names the label column of --train-file (the "
                             "output keeps every column as it is); give --train-file too")
        if args.train_file:
            label = plan.reader.column_name(args.label_column or "label")
            if label == plan.column:
                raise InputError("--label-column: the label column cannot be the text column")
            train = Output(Path(args.train_file), format_for(args.train_file), ["label", "text"])
    except ResourceMissing as exc:
        raise RobustlabError(str(exc)) from None
    return perts, plan, train, label


def _augment(args: argparse.Namespace, perts: list[Any], plan: Any, train: Any,
             label: Any) -> tuple[PerturbReport, list[int]]:
    """Write the output (and the training file): the report and the rows written to each.
    A file is written atomically and is redone with an 'error' column at the first failure;
    stdout, a FIFO or a device is written as rows come, so it gets that column at once."""
    from robustlab.data.stream import CopyJobs, Output, restartable, write_outputs
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    jobs = CopyJobs(perts, args.seed, args.n)  # generated as needed: -n never builds a list
    with_error = "error" in plan.reader.columns or not restartable([args.output,
                                                                     args.train_file])
    while True:
        report = PerturbReport()
        bar = progress_bar(args, "augment", reader=plan.reader)
        extra = ["perturbation", "changed"] + (["error"] if with_error else [])
        outputs = [Output(Path(args.output), plan.fmt, plan.columns(extra) or [], plan.header)]
        if train:
            outputs.append(train)
        produce = functools.partial(_write_rows, args=args, plan=plan, jobs=jobs,
                                    names=[pert.name for pert in perts], train=train,
                                    label=label, with_error=with_error, bar=bar, report=report)
        try:
            written = write_outputs(outputs, produce)
        except NeedErrorColumn:
            with_error = True
            continue
        except ResourceMissing as exc:
            raise RobustlabError(str(exc)) from None
        finally:
            bar.close()
        return report, written


def _write_rows(writers: list[Any], *, args: argparse.Namespace, plan: Any, jobs: Any,
                names: list[str], train: Any, label: Any, with_error: bool, bar: Any,
                report: PerturbReport) -> None:
    """One row at a time: its original, then each copy as it is made (never all -n)."""
    from robustlab.data.stream import apply_batched

    col = plan.column
    for line, row, results in apply_batched(plan.reader, jobs, col, on_batch=bar.update):
        original = row.get(col)
        lab = row.get(label) if train else None
        if not args.exclude_original:
            first = dict(row)
            first.update(perturbation="", changed=False)
            if with_error:
                first["error"] = ""
            writers[0].write(first)
        if train:
            writers[1].write({"label": lab, "text": original})
        for k, res in enumerate(results):
            report.count(line, res.changed, res.error)
            if res.error is not None and not with_error:
                raise NeedErrorColumn
            copy = dict(row)
            copy[col], copy["changed"] = res.text, res.changed
            copy["perturbation"] = names[k % len(names)]
            if with_error:
                copy["error"] = res.error or ""
            writers[0].write(copy)
            if train:
                writers[1].write({"label": lab, "text": res.text})


def _check_space(args: argparse.Namespace) -> None:
    """Refuse, before any work, an output that cannot fit: each file written atomically needs
    about (input size) × (copies + original) bytes free on its file system (a lower bound:
    copies carry two more columns)."""
    import os
    import shutil

    from robustlab.outputs import output_target
    from robustlab.runs.inputs import human_size

    per_row = args.n + (0 if args.exclude_original else 1)
    for opt, path, rows in (("-o", args.output, per_row),
                            ("--train-file", args.train_file, args.n + 1)):
        if path is None:
            continue
        target = output_target(path, user=True)
        if target.kind != "atomic":
            continue  # a FIFO, a device or stdout: its reader decides
        need = os.path.getsize(args.input) * rows
        probe = target.path.parent
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        try:
            free = shutil.disk_usage(probe).free
        except OSError:
            continue
        if need > free:
            raise InputError(f"{opt} {path}: augment would write at least {human_size(need)} "
                             f"(input {human_size(os.path.getsize(args.input))} x {rows} rows per "
                             f"row), more than the {human_size(free)} free there; lower -n or "
                             "free space")


class _Joined:
    """The signatures of several perturbations, for the one-line summary."""

    def __init__(self, perts: list[Any]) -> None:
        self.perts = perts

    def signature(self) -> str:
        return "+".join(p.signature() for p in self.perts)
