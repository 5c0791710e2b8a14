"""The ``robustlab`` command line, in the style of ``textattack``.

Each subcommand lives in its own module under :mod:`robustlab.commands` and exposes
``register(subparsers)``; this file only discovers them, so commands stay thin adapters over the
Python API that the TUI uses too. Errors caused by the user's input (:class:`RobustlabError`)
print one clear message and exit with code 2; nothing is left half-written by the commands.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sqlite3
import sys

from robustlab import __version__
from robustlab.errors import RobustlabError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="robustlab",
        description="Robustness testing for NLP models: perturbations, learnability/CENT, "
        "second-order attacks, counterfactual bias and cross-domain consistency.",
    )
    parser.add_argument("--version", action="version", version=f"robustlab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import robustlab.commands as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"robustlab.commands.{info.name}")
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 1
    try:
        rc = args.func(args)
    except RobustlabError as exc:
        print(f"robustlab {args.command}: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except (OSError, sqlite3.OperationalError) as exc:
        # the environment failed mid-run (disk full, file system gone read-only, permissions):
        # one line, not a traceback; finished cells are in the run store and a rerun resumes
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"robustlab {args.command}: error: {getattr(exc, 'strerror', None) or exc}{where}; "
              "finished results are kept: fix this and rerun the same command to resume",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"robustlab {args.command}: interrupted; finished results are kept.", file=sys.stderr)
        return 130
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
