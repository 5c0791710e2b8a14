"""Perturb and augment jobs over row files: option checks, the output plan, the report.

Shared by ``robustlab perturb`` and ``robustlab augment`` (the streaming itself is
:mod:`robustlab.data.stream`), so both validate the same way before any work and report rows,
changes and failures the same way.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

from robustlab.textfmt import echo

__all__ = ["PROGRESS_MIN_ROWS", "NeedErrorColumn", "OutputPlan", "PerturbReport",
           "build_perturbation", "plan_output", "print_report", "progress_bar"]

KEEP_FAILURES = 10
PROGRESS_MIN_ROWS = 1000


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
            if len(self.failed) < KEEP_FAILURES and (not self.failed
                                                      or self.failed[-1] != (line, error)):
                self.failed.append((line, error))
        elif changed:
            self.changed += 1
        else:
            self.unchanged += 1

    def summary(self) -> str:
        return (f"{self.rows} rows: {self.changed} changed, {self.unchanged} unchanged, "
                f"{self.n_failed} failed")


def build_perturbation(spec: str, params: list[str], pps: int | None, *, trusted: bool = False):
    """The perturbation named by the CLI flags (spec, --param, --pps), validated. ``trusted``:
    the spec was typed on this command line (may name ``module:Class``; robustlab.trust)."""
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import parse_params, parse_spec

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
        return parse_spec(spec, trusted=trusted, **overrides)
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
    from robustlab.outputs import refuse_same_file

    # before anything is read or written: -o (or --train-file) naming the input, by inode
    refuse_same_file({"-o/--output": args.output,
                      "--train-file": getattr(args, "train_file", None)},
                     {"-i/--input": args.input})
    out_fmt = args.output_format or (format_for(args.output) if known_extension(args.output)
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


def progress_bar(args: argparse.Namespace, desc: str, unit: str = "row", *,
                 reader: Any = None):
    """A bar on stderr (whole lines when stderr is not a terminal) for inputs of at least
    PROGRESS_MIN_ROWS rows, else a no-op one (tqdm's import is ~15 ms of a small job's start-up,
    so it is imported only when shown). ``reader``: the input's reader, whose header line is
    not a row (the bar ended at 1600/1601)."""
    from robustlab.data.stream import count_lines
    from robustlab.textfmt import progress

    total = 0 if args.no_progress else count_lines(args.input)
    if reader is not None and getattr(reader, "fmt", None) in ("tsv", "csv") and \
            getattr(reader, "header", False):
        total -= 1
    if total < PROGRESS_MIN_ROWS:
        return _NoBar()
    return progress(total, desc, unit=unit, file=sys.stderr)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


class NeedErrorColumn(Exception):
    """A row failed after rows without an 'error' column were written: start again with one."""


def known_extension(path: str) -> bool:
    from pathlib import Path

    return Path(path).suffix.lower() in (".txt", ".tsv", ".tab", ".csv", ".jsonl", ".ndjson")


def print_report(report: PerturbReport, args: argparse.Namespace, out_fmt: str, pert) -> None:
    """Failures (the first ten), a note on formats without flags, and the one-line summary."""
    err = sys.stderr
    for line, msg in report.failed[:KEEP_FAILURES]:
        echo(f"{args.input}: line {line}: {msg}", file=err)
    if report.n_failed > KEEP_FAILURES:
        echo(f"... and {report.n_failed - KEEP_FAILURES} more failed rows (see the 'error' "
             "column)", file=err)
    if out_fmt in ("text", "label-text"):
        echo(f"note: a {out_fmt} output holds no 'changed'/'error' columns; write .jsonl, .tsv "
             "or .csv to keep them", file=err)
    echo(f"{pert.signature()} seed={args.seed}: {report.summary()} -> {args.output}", file=err)
