"""``robustlab perturb`` and ``robustlab augment`` on a task's own files (CoNLL, STS, SNLI pairs,
WikiQA), written back in the same format (:mod:`robustlab.tasks`).

A file goes this way when ``--task`` names a task other than classification, or, without
``--task``, ``--column`` and ``--format``, when the file is read as CoNLL, STS or WikiQA
(:func:`robustlab.tasks.detect_task`; a ``label<TAB>text<TAB>text`` file is taken as pairs only
with ``--task pair``, since such a TSV is also a classifier's pair file, perturbed column by
column as before). The task says what a perturbation changes: CoNLL tags follow their tokens
(:mod:`robustlab.tasks.align`; a perturbation that cannot keep them is refused before anything is
read), pairs change the field ``--perturb-field`` names (default both; WikiQA: the question).

The output has the input's format, so it holds no ``changed``/``error`` columns: the counts and
the first failures go to stderr, as for a ``.txt`` output of ``perturb``. An example the
perturbation could not change, or whose tags could not be aligned, is written as it was.
``augment`` writes each example followed by its N copies (copy k seeded as ``augment`` seeds
it: :class:`robustlab.data.stream.CopyJobs`). The whole file is read, then written atomically.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.textfmt import echo

#: the options of the row path that mean nothing for a task's file
_ROW_OPTIONS = (("column", "--column"), ("fmt", "--format"), ("output_format", "--output-format"),
                ("header", "--header"), ("train_file", "--train-file"),
                ("label_column", "--label-column"))
#: failures listed on stderr before the count of the rest
KEEP_FAILURES = 10


def add_task_options(p: argparse.ArgumentParser) -> None:
    """``--task`` and ``--perturb-field`` (for perturb and augment)."""
    from robustlab.tasks import FIELDS

    p.add_argument("--task", metavar="TASK",
                   help="the input's task: ner (CoNLL), similarity (STS), pair (SNLI "
                   "label<TAB>premise<TAB>hypothesis), answer-selection (WikiQA); the output "
                   "has the same format. Default: CoNLL, STS and WikiQA files are recognised")
    p.add_argument("--perturb-field", choices=FIELDS,
                   help="which text of a pair a perturbation changes (default: both; the "
                   "question for answer-selection)")


def task_for(args: argparse.Namespace) -> str | None:
    """The task whose file ``args.input`` is, or None for the row path (module docstring)."""
    from robustlab.tasks import detect_task, get_task

    asked = get_task(args.task).name if getattr(args, "task", None) else None
    if asked == "classification":
        asked = None
    elif asked is None and getattr(args, "column", None) is None and \
            getattr(args, "fmt", None) is None and Path(args.input).is_file():
        detected = detect_task(args.input, encoding=getattr(args, "encoding", None) or "utf-8")
        asked = detected if detected in ("ner", "similarity", "answer-selection") else None
    if asked is None and getattr(args, "perturb_field", None):
        raise InputError("--perturb-field is for a pair file; give --task pair|similarity|"
                         "answer-selection")
    if asked is not None:
        given = [flag for dest, flag in _ROW_OPTIONS if getattr(args, dest, None) is not None]
        if given:
            raise InputError(f"{', '.join(given)}: a {asked} file keeps its own format; these "
                             "options are for a column of a text/TSV/CSV/JSONL file")
    return asked


def run_task_file(args: argparse.Namespace, task_name: str, perts: list[Any],
                  copies: int | None = None, exclude_original: bool = True) -> int:
    """Perturb (``copies`` None) or augment the task file ``args.input`` into ``args.output``."""
    from robustlab.data.stream import CopyJobs
    from robustlab.tasks import get_task

    task = get_task(task_name)
    field = task.field(args.perturb_field)
    for pert in perts:
        why = task.refusal(pert)
        if why:
            raise InputError(why)
    enc = {"encoding": args.encoding} if getattr(args, "encoding", None) else {}
    corpus = task.read(args.input, **enc)
    if Path(args.output).expanduser().resolve() == Path(args.input).expanduser().resolve():
        raise InputError(f"-o {args.output}: is the input; write to another file")
    jobs = list(CopyJobs(perts, args.seed, copies)) if copies else [(perts[0], args.seed)]
    per_job = [task.perturb(corpus.examples, pert, seed=seed, field=field)
               for pert, seed in jobs]
    examples, changed, failed = [], 0, []
    for i, ex in enumerate(corpus.examples):
        if not exclude_original:
            examples.append(ex)
        for done in per_job:
            p = done[i]
            examples.append(p.example)
            changed += p.changed
            if p.error:
                failed.append((i, p.error))
    task.write(args.output, corpus.with_examples(examples))
    for i, msg in failed[:KEEP_FAILURES]:
        echo(f"{args.input}: example {i + 1}: {msg}", file=sys.stderr)
    if len(failed) > KEEP_FAILURES:
        echo(f"... and {len(failed) - KEEP_FAILURES} more left unperturbed", file=sys.stderr)
    n = len(corpus.examples) * len(jobs)
    unit = {"ner": "sentences", "answer-selection": "questions"}.get(task.name, "pairs")
    sig = "+".join(p.signature() for p in perts)
    echo(f"{sig} seed={args.seed} ({task.name}"
         + (f", field {field}" if field else "") + f"): {changed}/{n} {unit} changed, "
         f"{len(failed)} left unperturbed with an error -> {args.output} "
         f"({len(examples)} {unit}, {corpus.fmt} format)", file=sys.stderr)
    return 1 if failed else 0


def augment_task_file(args: argparse.Namespace, task_name: str, specs: list[str]) -> int:
    """``robustlab augment`` on a task's file: the perturbations built from ``specs`` (a missing
    resource is one line), then :func:`run_task_file` with ``-n`` copies."""
    from robustlab.data.row_jobs import build_perturbation
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    try:
        perts = [build_perturbation(s, args.param, args.pps,
                                     trusted=getattr(args, "trusted", True)) for s in specs]
        return run_task_file(args, task_name, perts, args.n, args.exclude_original)
    except ResourceMissing as exc:
        raise RobustlabError(str(exc)) from None
