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
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from robustlab.data.files import FORMATS

_KEEP_FAILURES = 10
_PROGRESS_MIN_ROWS = 1000


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
    p.add_argument("--seed", type=int, default=0,
                   help="random seed (default 0); each row's randomness depends only on the seed "
                   "and its own text")
    p.add_argument("-i", "--input", required=True, metavar="FILE", help="input file")
    p.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output file, written atomically (format from its extension, or "
                   "--output-format); a .txt output holds only the perturbed text")
    p.add_argument("--column", metavar="NAME|INDEX",
                   help="column to perturb, by header name or 0-based index (default: a column "
                   "named text/sentence/review(s)/..., or the only column)")
    p.add_argument("--format", choices=FORMATS, dest="fmt",
                   help="input format (default: from the extension; unknown extensions are "
                   "text, one row per line). label-text is '<label> <text>' per line (SST, MR)")
    p.add_argument("--output-format", choices=FORMATS,
                   help="output format (default: from the output extension, else the input "
                   "format)")
    p.add_argument("--encoding", default="utf-8",
                   help="input encoding (default utf-8; e.g. cp1252 for Windows/Latin-1 files). "
                   "Output is always UTF-8")
    p.add_argument("--header", action=argparse.BooleanOptionalAction, default=None,
                   help="TSV/CSV: whether the first row is a header (default: detected)")
    p.add_argument("--no-progress", action="store_true",
                   help=f"no progress bar (shown on stderr from {_PROGRESS_MIN_ROWS} rows)")
    p.set_defaults(func=run)


@dataclass
class PerturbReport:
    """What happened to the rows of one file (the first failures are kept, all are counted)."""

    rows: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)  # (line, message), first ones
    n_failed: int = 0

    def count(self, line: int, changed: bool, error: str | None) -> None:
        self.rows += 1
        if error is not None:
            self.n_failed += 1
            if len(self.failed) < _KEEP_FAILURES and (not self.failed
                                                      or self.failed[-1] != (line, error)):
                self.failed.append((line, error))
        elif changed:
            self.changed += 1
        else:
            self.unchanged += 1

    def summary(self) -> str:
        return (f"{self.rows} rows: {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.n_failed} failed")


def build_perturbation(spec: str, params: list[str], pps: int | None):
    """The perturbation named by the CLI flags (spec, --param, --pps), validated."""
    from robustlab.adapters.base import PerturbationError
    from robustlab.adapters.registry import parse_params, parse_spec

    overrides: dict[str, Any] = {}
    for item in params:
        if "=" not in item:
            raise PerturbationError(f"--param {item!r}: expected KEY=VALUE")
        overrides.update(parse_params(item))
    if pps is not None:
        if pps < 1:
            raise PerturbationError(f"--pps {pps}: must be a positive integer (paper 001: 1-4)")
        overrides["pps"] = pps
    try:
        return parse_spec(spec, **overrides)
    except PerturbationError as exc:
        if pps is not None and "unknown parameter(s) pps" in str(exc):
            raise PerturbationError(f"{spec} does not take --pps ({exc})") from None
        raise


@dataclass
class OutputPlan:
    """Where and how the rows of a perturb/augment job are written (validated before any work)."""

    reader: Any  # robustlab.data.stream.RowReader
    column: str
    fmt: str
    header: bool

    def columns(self, extra: list[str]) -> list[str] | None:
        """Output columns: the input's plus ``extra`` (kept in place when already there)."""
        if self.fmt == "text":
            return [self.column]
        return self.reader.columns + [c for c in extra if c not in self.reader.columns]


def plan_output(args: argparse.Namespace):
    """Open ``--input`` as a stream and settle the output format, column and header."""
    from robustlab.data.files import format_for
    from robustlab.data.stream import RowReader
    from robustlab.errors import RobustlabError

    out_fmt = args.output_format or (format_for(args.output) if _known_extension(args.output)
                                     else None)
    reader = RowReader(args.input, args.fmt, args.encoding, args.header)
    out_fmt = out_fmt or reader.fmt
    if args.output_format is None and out_fmt == "text" and reader.fmt == "label-text":
        out_fmt = "label-text"  # a .txt output keeps the labels of a `<label> <text>` input
    column = reader.column_name(args.column)
    if out_fmt == "label-text" and (column != "text" or "label" not in reader.columns):
        raise RobustlabError("--output-format label-text needs a 'label' column and the "
                             "perturbed column named 'text'; write .jsonl/.tsv/.csv instead")
    header = reader.header if reader.fmt in ("tsv", "csv") else True
    return OutputPlan(reader, column, out_fmt, header)


def progress_bar(args: argparse.Namespace, desc: str, unit: str = "row"):
    """A tqdm bar on stderr for inputs of at least _PROGRESS_MIN_ROWS lines, else a no-op one
    (tqdm's import is ~15 ms of a small job's start-up, so it is imported only when shown)."""
    from robustlab.data.stream import count_lines

    total = 0 if args.no_progress else count_lines(args.input)
    if total < _PROGRESS_MIN_ROWS:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, desc=desc, dynamic_ncols=True)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class _NeedErrorColumn(Exception):
    """A row failed after rows without an 'error' column were written: start again with one."""


def run(args: argparse.Namespace) -> int:
    from robustlab.data.stream import apply_batched, write_stream
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    try:
        pert = build_perturbation(args.perturbation, args.param, args.pps)
        plan = plan_output(args)
    except ResourceMissing as exc:
        raise RobustlabError(str(exc)) from None
    # Every row carries an 'error' column when any row failed; that is known only at the end, so
    # the first pass assumes none and, at the first failure, the file is written again with it
    # (each row's output depends only on the seed and its text, so the second pass is identical).
    with_error = "error" in plan.reader.columns
    while True:
        report = PerturbReport()
        bar = progress_bar(args, pert.name)
        try:
            rows = _perturbed_rows(plan, pert, args.seed, with_error, report, bar, apply_batched)
            write_stream(args.output, rows, plan.fmt,
                         plan.columns(["changed", "error"] if with_error else ["changed"]),
                         plan.header)
        except _NeedErrorColumn:
            with_error = True
            continue
        except ResourceMissing as exc:
            raise RobustlabError(str(exc)) from None
        finally:
            bar.close()
        break
    _report(report, args, plan.fmt, pert)
    return 1 if report.n_failed else 0


def _perturbed_rows(plan: OutputPlan, pert, seed: int, with_error: bool, report: PerturbReport,
                    bar, apply_batched) -> Iterator[dict[str, Any]]:
    col = plan.column
    for line, row, (res,) in apply_batched(plan.reader, [(pert, seed)], col, on_batch=bar.update):
        report.count(line, res.changed, res.error)
        if res.error is not None and not with_error:
            raise _NeedErrorColumn
        row[col] = res.text
        row["changed"] = res.changed
        if with_error:
            row["error"] = res.error or ""
        yield row


def _known_extension(path: str) -> bool:
    from pathlib import Path

    return Path(path).suffix.lower() in (".txt", ".tsv", ".tab", ".csv", ".jsonl", ".ndjson")


def _report(report: PerturbReport, args: argparse.Namespace, out_fmt: str, pert) -> None:
    err = sys.stderr
    for line, msg in report.failed[:_KEEP_FAILURES]:
        print(f"{args.input}: line {line}: {msg}", file=err)
    if report.n_failed > _KEEP_FAILURES:
        print(f"... and {report.n_failed - _KEEP_FAILURES} more failed rows (see the 'error' "
              "column)", file=err)
    if out_fmt in ("text", "label-text"):
        print(f"note: a {out_fmt} output holds no 'changed'/'error' columns; write .jsonl, .tsv "
              "or .csv to keep them", file=err)
    print(f"{pert.signature()} seed={args.seed}: {report.summary()} -> {args.output}", file=err)
