"""``robustlab perturb``: perturb one column of a text/TSV/CSV/JSONL file, row for row.

Guarantees (docs/cli.md): row count in == row count out; every row carries ``changed`` (and
``error`` when any row failed, with that row's text left as it was); failures are listed on stderr
with a summary; the output is written atomically, so a bad option, an unknown perturbation or a
malformed input leaves no output file at all (exit code 2).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from typing import Any

from robustlab.data.files import FORMATS

_CHUNK = 512
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
    """What happened to the rows of one file."""

    rows: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: list[tuple[int, str]] = field(default_factory=list)  # (line, message)

    def summary(self) -> str:
        return (f"{self.rows} rows: {self.changed} changed, {self.unchanged} unchanged, "
                f"{len(self.failed)} failed")


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


def perturb_table(table, pert, column: str, seed: int = 0, progress: bool = False):
    """Perturb ``column`` of a :class:`~robustlab.data.files.Table`; return (new table, report)."""
    from tqdm import tqdm

    values = table.column(column)
    report = PerturbReport(rows=len(values))
    texts, changed, errors = list(values), [False] * len(values), [None] * len(values)
    todo = [i for i, v in enumerate(values) if isinstance(v, str)]
    for i, v in enumerate(values):
        if not isinstance(v, str):
            errors[i] = f"not a string ({'null' if v is None else type(v).__name__})"
    bar = tqdm(total=len(todo), unit="row", disable=not progress, file=sys.stderr,
               desc=pert.name, dynamic_ncols=True)
    try:
        for start in range(0, len(todo), _CHUNK):
            idx = todo[start : start + _CHUNK]
            for i, o in zip(idx, pert.perturb_outcomes([values[i] for i in idx], seed=seed),
                            strict=True):
                texts[i], changed[i], errors[i] = o.text, o.changed, o.error
            bar.update(len(idx))
    finally:
        bar.close()
    lines = table.lines or list(range(1, len(values) + 1))
    for i, err in enumerate(errors):
        if err is not None:
            report.failed.append((lines[i], err))
    report.changed = sum(changed)
    report.unchanged = report.rows - report.changed - len(report.failed)
    new_cols: dict[str, list[Any]] = {column: texts, "changed": changed}
    if report.failed or "error" in table.columns:
        new_cols["error"] = [e or "" for e in errors]
    return table.with_columns(**new_cols), report


def run(args: argparse.Namespace) -> int:
    from robustlab.data.files import format_for, read_rows, write_rows
    from robustlab.errors import RobustlabError
    from robustlab.resources import ResourceMissing

    try:
        pert = build_perturbation(args.perturbation, args.param, args.pps)
        out_fmt = args.output_format or (
            format_for(args.output) if _known_extension(args.output) else None)
        table = read_rows(args.input, args.fmt, args.encoding, args.header)
        out_fmt = out_fmt or table.fmt
        if args.output_format is None and out_fmt == "text" and table.fmt == "label-text":
            out_fmt = "label-text"  # a .txt output keeps the labels of a `<label> <text>` input
        column = table.column_name(args.column)
        if out_fmt == "label-text" and (column != "text" or "label" not in table.columns):
            raise RobustlabError("--output-format label-text needs a 'label' column and the "
                                 "perturbed column named 'text'; write .jsonl/.tsv/.csv instead")
        show = not args.no_progress and len(table) >= _PROGRESS_MIN_ROWS
        result, report = perturb_table(table, pert, column, args.seed, show)
    except ResourceMissing as exc:
        raise RobustlabError(str(exc)) from None
    header = table.header if table.fmt in ("tsv", "csv") else True
    columns = [column] if out_fmt == "text" else None
    write_rows(args.output, result, out_fmt, columns=columns, header=header)
    _report(report, args, out_fmt, pert)
    return 1 if report.failed else 0


def _known_extension(path: str) -> bool:
    from pathlib import Path

    return Path(path).suffix.lower() in (".txt", ".tsv", ".tab", ".csv", ".jsonl", ".ndjson")


def _report(report: PerturbReport, args: argparse.Namespace, out_fmt: str, pert) -> None:
    err = sys.stderr
    for line, msg in report.failed[:10]:
        print(f"{args.input}: line {line}: {msg}", file=err)
    if len(report.failed) > 10:
        print(f"... and {len(report.failed) - 10} more failed rows (see the 'error' column)",
              file=err)
    if out_fmt in ("text", "label-text"):
        print(f"note: a {out_fmt} output holds no 'changed'/'error' columns; write .jsonl, .tsv "
              "or .csv to keep them", file=err)
    print(f"{pert.signature()} seed={args.seed}: {report.summary()} -> {args.output}", file=err)
