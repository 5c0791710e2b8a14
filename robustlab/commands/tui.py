"""``robustlab tui [RUN_DIR …]``: the terminal UI (start, follow and explore runs)."""

from __future__ import annotations

import argparse

from robustlab.options import add_quiet_option


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tui", help="terminal UI: start studies, follow runs live, browse their results",
        description="Follow and explore run directories (or folders of them); start, stop and "
        "resume studies as detached workers that survive closing the TUI.")
    p.add_argument("run_dirs", nargs="*", metavar="RUN_DIR",
                   help="run directories or folders of runs (default: ./runs)")
    p.add_argument("--runs-root", default="runs",
                   help="where studies started from the TUI write their run dirs (default: runs)")
    p.add_argument("--poll", type=float, default=1.0,
                   help="seconds between store reads while following a run (default: 1)")
    p.add_argument("--light", action="store_true", help="start with the light theme")
    add_quiet_option(p, help="accepted by every command; this one shows no progress")
    p.set_defaults(func=run, check=check_args)


#: the longest poll interval accepted (an hour): beyond it a followed run never looks live
MAX_POLL = 3600.0


def check_args(args: argparse.Namespace) -> None:
    """Before the app starts: a poll interval that is a finite, positive number of seconds (nan
    and inf would hang or crash its timers), and a --runs-root that can be a directory."""
    import math
    from pathlib import Path

    from robustlab.errors import InputError

    if not math.isfinite(args.poll) or not 0 < args.poll <= MAX_POLL:
        raise InputError(f"--poll must be positive and at most {MAX_POLL:g} seconds, got "
                         f"{args.poll}")
    root = Path(args.runs_root).expanduser()
    if root.exists() and not root.is_dir():
        raise InputError(f"--runs-root {args.runs_root}: exists and is not a directory")
    for run_dir in args.run_dirs:
        if Path(run_dir).exists() and not Path(run_dir).is_dir():
            raise InputError(f"{run_dir}: not a directory (give run directories or folders "
                             "of them)")


def run(args: argparse.Namespace) -> int:
    try:
        from robustlab.tui.app import RobustlabApp, Settings
    except ModuleNotFoundError as exc:
        from robustlab.errors import InputError

        raise InputError(f"the TUI needs textual: pip install 'robustlab[tui]' ({exc})") from exc
    check_args(args)
    settings = Settings(runs_root=args.runs_root, poll_seconds=args.poll,
                        theme="textual-light" if args.light else "textual-dark",
                        parser=args.build_parser)
    app = RobustlabApp(args.run_dirs, settings)
    app.run()
    # an exception that ended the app (Textual prints its traceback after leaving the screen)
    # is a failure: exit non-zero, never 0
    return app.return_code or 0
