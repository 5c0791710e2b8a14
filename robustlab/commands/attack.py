"""``robustlab attack``: second-order recipes into a run directory (``robustlab textattack`` is
TextAttack's own CLI: commands/textattack.py).

A thin adapter: the options come from :class:`~robustlab.studies.second_order.config.AttackConfig`,
the study runs through the one lifecycle (:func:`robustlab.runs.study.run_study`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from robustlab.runs.study import RunContext, run_study
from robustlab.studies.second_order.config import RECIPE_NAMES, AttackConfig
from robustlab.textfmt import echo

__all__ = ["RECIPE_NAMES", "register", "summary_line"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attack", help="second-order attacks SO-Beam / SO-Enum / random baseline",
                       description="Attack a model with a second-order recipe (paper 002); "
                       "results go to a run directory (see docs/attacks.md).")
    AttackConfig.add_arguments(p)
    # the victim and the masked LM of the neighbourhoods run on --device
    RunContext.add_arguments(p, plots=False)
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """The options alone (files looked at, nothing loaded): before anything is created."""
    AttackConfig.from_args(args).validate(trusted=getattr(args, "trusted", True))
    RunContext.from_args(args).validate()


def status_printer(args: argparse.Namespace):
    """One line per set-up step on stderr (the first example comes after ~10 s of imports and
    loading), unless --quiet."""
    return lambda msg: echo(f"robustlab attack: {msg}", file=sys.stderr, flush=True)


def _num(value: float | None, fmt: str = ".2f") -> str:
    return "n/a" if value is None else format(value, fmt)


def summary_line(recipe: str, summary: dict[str, Any], out: str) -> str:
    c = summary["counts"]
    return (f"{recipe}: {c['successful']} successful, {c['failed']} failed, {c['skipped']} "
            f"skipped; success rate {_num(summary['success_rate'], '.1%')}; mean l0 "
            f"{_num(summary['mean_l0'])}; {summary['seconds_per_example']:.2f} s and "
            f"{summary['queries_per_example']:.0f} model queries per example -> {out}")


def run(args: argparse.Namespace) -> int:
    from robustlab.studies.second_order.study import Attack

    ctx = RunContext.from_args(args, log=status_printer(args))
    outcome = run_study(Attack(AttackConfig.from_args(args)), args.out, ctx)
    echo(summary_line(args.recipe, outcome.summary, args.out))
    if outcome.failed:
        from robustlab.runs.store import print_failed_cells

        keys = outcome.failed
        print_failed_cells(args.out, keys, f"robustlab attack: {len(keys)} example(s) failed; "
                           "rerun the same command to retry them:")
    return 0 if outcome.complete else 1
