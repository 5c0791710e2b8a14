"""``robustlab resume DIR``: continue a run from its stored configuration.

The study is rebuilt from what the run directory stores (:mod:`robustlab.studies.stored`), as
untrusted data: no stored command line is parsed or run, specs may only name registered things,
and every file it writes stays in ``DIR``. Runtime options (``--executor``, ``--workers``,
``--device``, …) not given here are those the run last ran with (stored in its meta, checked as
data), else the defaults: a run started with ``--executor process --workers 2`` — from the
command line, Python or the TUI — continues that way. This is what the TUI's Resume runs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import sys

from robustlab.runs.study import RunContext, run_study
from robustlab.textfmt import echo
from robustlab.trust import private_workdir


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("resume", help="continue a run directory from its stored configuration",
                       description=__doc__.splitlines()[0])
    p.add_argument("run_dir", metavar="DIR", help="the run directory (a study's --out)")
    p.add_argument("--adopt-input", metavar="FILE", action="append", default=[],
                   help="a file the run reads but has no checksum of (its recorded inputs are "
                   "missing: deleted, or a run of an earlier version): resume reads it and records "
                   "it; repeat for each such input")
    RunContext.add_arguments(p, threads=True, out=False)
    # not given: the run's stored context decides (run below), then RunContext's defaults
    p.set_defaults(func=run, **dict.fromkeys(RunContext.STORED))


def run(args: argparse.Namespace) -> int:
    from robustlab.studies.stored import load

    stored = load(args.run_dir)
    given = {k for k in RunContext.STORED if getattr(args, k) is not None}
    for key, value in stored.context.items():
        if key not in given:
            setattr(args, key, value)
    for key, value in dataclasses.asdict(RunContext()).items():
        if key in RunContext.STORED and getattr(args, key) is None:
            setattr(args, key, value)
    ctx = dataclasses.replace(RunContext.from_args(args, trusted=False, log=lambda m: echo(
        f"robustlab resume: {m}", file=sys.stderr, flush=True)), adopt=tuple(args.adopt_input))
    how = shlex.join(ctx.argv())
    kept = sorted(set(stored.context) - given)
    ctx.say(f"resuming {stored.study.kind} run {stored.run_dir} from its {stored.source}: "
            f"{stored.command}" + (f" ({how}{'; as it last ran' if kept else ''})"
                                   if how else ""))
    if stored.links:
        # a run made by an earlier version names models by paths relative to where it was
        # started: resolved there explicitly, they are linked into a private directory, never
        # entered themselves (anyone who can write the run's parent would choose what a library
        # finds there by name)
        os.chdir(private_workdir(stored.links))
    from robustlab.resources import use_recorded_shared

    note = use_recorded_shared(stored.shared)  # where the run first found its resources
    if note:
        ctx.say(note)
    outcome = run_study(stored.study, stored.run_dir, ctx)
    report = outcome.report
    echo(f"{stored.study.kind}: {report.done} of {report.total} cells done -> "
          f"{stored.run_dir / 'summary.json'}")
    if not outcome.complete:
        from robustlab.runs.store import print_failed_cells

        print_failed_cells(stored.run_dir, outcome.failed,
                           f"{len(outcome.failed)} cells did not finish; resume again to retry "
                           "them:")
        return 1
    return 0
