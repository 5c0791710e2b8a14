"""``robustlab report RUN_DIR [RUN_DIR …] [--out FILE] [--format html|md]``.

One document per study (or a side-by-side comparison of several runs of one kind): a
self-contained HTML page (figures inlined, no network, no JavaScript) or CommonMark. A thin
adapter over :func:`robustlab.report.write_report`, which the TUI calls too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from robustlab.options import add_quiet_option
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write one HTML or Markdown report of finished (or "
                       "running) run directories, in the papers' table layouts",
                       description="Write a report a colleague can open: the papers' tables and "
                       "figures, augmentation advice, and each run's command line, "
                       "configuration, versions and status.")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR",
                   help="run directories (several of one kind are compared side by side)")
    p.add_argument("--out", metavar="FILE",
                   help="output file (default RUN_DIR/report.html or report.md)")
    p.add_argument("--format", choices=("html", "md"), default=None,
                   help="html (default; self-contained) or md (CommonMark; figures as PNGs in "
                   "FILE_figures/); default from the --out suffix")
    add_quiet_option(p, help="no 'report: FILE' line when the report goes to stdout")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robustlab.outputs import is_stdout
    from robustlab.report import write_report

    def warn(line: str) -> None:
        echo(f"robustlab report: warning: {line}", file=sys.stderr)

    path = write_report([Path(d) for d in args.run_dirs], args.out, args.format, warn=warn)
    if is_stdout(args.out):
        if not args.quiet:
            echo(f"report: {path}", file=sys.stderr)
    else:
        echo(f"report: {path}")
    return 0
