"""``robustlab perturb``: perturb one column of a text/TSV/CSV/JSONL file, row for row.

Guarantees (docs/cli.md): row count in == row count out; every row carries ``changed`` (and
``error`` when any row failed, with that row's text left as it was); failures are listed on stderr
with a summary; the output is written atomically, so a bad option, an unknown perturbation or a
malformed input leaves no output file at all (exit code 2).

The file is streamed (:mod:`robustlab.data.stream`): memory stays bounded by one batch of rows
whatever the file's size, and the output is byte for byte what reading it whole would give.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

from robustlab.data.files import FORMATS
from robustlab.data.row_jobs import (
    PROGRESS_MIN_ROWS,
    NeedErrorColumn,
    OutputPlan,
    PerturbReport,
    build_perturbation,
    plan_output,
    print_report,
    progress_bar,
)
from robustlab.options import (
    add_encoding_option,
    add_format_option,
    add_header_option,
    add_quiet_option,
    add_seed_option,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "perturb",
        help="perturb a column of a text/TSV/CSV/JSONL file",
        description="Apply one perturbation to one column of a file and write the same rows with "
        "that column perturbed, plus a 'changed' flag (and an 'error' column when a row failed). "
        "Seeded: the same --seed gives the same output for a text, whatever else is in the file.",
        epilog="examples:\n"
        "  robustlab perturb -p leet_letters -i reviews.csv -o leet.csv --column text\n"
        "  robustlab perturb -p butter_fingers_perturbation --param prob=0.1 -i s.txt -o t.jsonl\n"
        "  robustlab perturb -p textattack:WordSwapWordNet -i stsa.binary.dev "
        "--format label-text -o wn.tsv\n"
        "`robustlab list perturbations` shows every name and its parameters.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-p", "--perturbation", required=True, metavar="NAME",
                   help="perturbation name from `robustlab list perturbations`, optionally with "
                   "parameters as NAME:key=value,...; or textattack:<Transformation|Augmenter> / "
                   "nlaugmenter:<module.ClassName>")
    p.add_argument("--pps", type=int, metavar="N",
                   help="maximum perturbations per sample (paper 001 uses 1-4); only for "
                   "perturbations that take a 'pps' parameter")
    p.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a perturbation parameter (repeatable); values parse as int/float/bool/str")
    add_seed_option(p, help="random seed, 0 <= S < 2**32 (default 0); each row's randomness "
                    "depends only on the seed and its own text")
    p.add_argument("-i", "--input", required=True, metavar="FILE", help="input file")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output file, written atomically (format from its extension, or "
                   "--output-format); a .txt output holds only the perturbed text")
    p.add_argument("--column", metavar="NAME|INDEX",
                   help="column to perturb, by header name or 0-based index (default: a column "
                   "named text/sentence/review(s)/..., or the only column)")
    add_format_option(p, dest="fmt", choices=FORMATS,
                      help="input format (default: from the extension; unknown extensions are "
                      "text, one row per line). label-text is '<label> <text>' per line (SST, MR)")
    p.add_argument("--output-format", choices=FORMATS,
                   help="output format (default: from the output extension, else the input "
                   "format)")
    add_encoding_option(p, default="utf-8",
                        help="input encoding (default utf-8; e.g. cp1252 for Windows/Latin-1 "
                        "files). Output is always UTF-8")
    add_header_option(p)
    add_quiet_option(p, dest="no_progress",
                     help=f"no progress bar (shown on stderr from {PROGRESS_MIN_ROWS} rows)")
    from robustlab.commands._task_files import add_task_options

    add_task_options(p)  # CoNLL, STS, SNLI, WikiQA files in their own format
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robustlab.commands._task_files import run_task_file, task_for
    from robustlab.data.stream import apply_batched, restartable, write_stream
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    try:
        task = task_for(args)
        pert = build_perturbation(args.perturbation, args.param, args.pps,
                                  trusted=getattr(args, "trusted", True))
        if task is not None:
            return run_task_file(args, task, [pert])
        plan = plan_output(args)
    except ResourceMissing as exc:
        raise RobustlabError(str(exc)) from None
    # Every row carries an 'error' column when any row failed; that is known only at the end, so
    # the first pass assumes none and, at the first failure, the file is written again with it
    # (each row's output depends only on the seed and its text, so the second pass is identical).
    # Stdout, a FIFO or a device is written as rows come and cannot be redone: it has the column.
    with_error = "error" in plan.reader.columns or not restartable([args.output])
    while True:
        report = PerturbReport()
        bar = progress_bar(args, pert.name, reader=plan.reader)
        try:
            rows = _perturbed_rows(plan, pert, args.seed, with_error, report, bar, apply_batched)
            write_stream(args.output, rows, plan.fmt,
                         plan.columns(["changed", "error"] if with_error else ["changed"]),
                         plan.header)
        except NeedErrorColumn:
            with_error = True
            continue
        except ResourceMissing as exc:
            raise RobustlabError(str(exc)) from None
        finally:
            bar.close()
        break
    print_report(report, args, plan.fmt, pert)
    return 1 if report.n_failed else 0


def _perturbed_rows(plan: OutputPlan, pert, seed: int, with_error: bool, report: PerturbReport,
                    bar, apply_batched) -> Iterator[dict[str, Any]]:
    col = plan.column
    for line, row, (res,) in apply_batched(plan.reader, [(pert, seed)], col, on_batch=bar.update):
        report.count(line, res.changed, res.error)
        if res.error is not None and not with_error:
            raise NeedErrorColumn
        row[col] = res.text
        row["changed"] = res.changed
        if with_error:
            row["error"] = res.error or ""
        yield row


