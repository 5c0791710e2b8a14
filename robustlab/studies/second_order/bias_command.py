"""``robustlab bias``: counterfactual token bias B(p, k) over neighbourhoods of a test set.

A thin adapter: the options come from :class:`~robustlab.studies.second_order.config.BiasConfig`,
the study runs through the one lifecycle (:func:`robustlab.runs.study.run_study`).
"""

from __future__ import annotations

import argparse
import sys

from robustlab.runs.study import RunContext, run_study
from robustlab.studies.second_order.config import BiasConfig
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bias", help="counterfactual token bias B(p,k) (paper 002, Sec. 4)",
                       description="B(p,k) = mean F_soft(x;p) over Neighbor_k(X_test), k=0..3; "
                       "writes a run directory (see docs/attacks.md).")
    BiasConfig.add_arguments(p)
    from robustlab.endpoints import add_options

    # bias's own --budget samples the neighbourhoods: the endpoint's is --max-queries
    add_options(p.add_argument_group("a model behind an endpoint (docs/endpoints.md)"),
                budget=False, max_queries=True)
    # the model and the masked LM of the neighbourhoods run on --device
    RunContext.add_arguments(p)
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """The options alone (files looked at, nothing loaded): before anything is created."""
    from robustlab.endpoints import set_limits

    set_limits(args, budget=False)  # --max-queries, --max-concurrency: checked before anything exists
    BiasConfig.from_args(args).validate(trusted=getattr(args, "trusted", True))
    RunContext.from_args(args).validate()


def run(args: argparse.Namespace) -> int:
    from robustlab.endpoints import set_limits
    from robustlab.studies.second_order.bias import Bias

    set_limits(args, budget=False)
    config = BiasConfig.from_args(args)
    ctx = RunContext.from_args(args, log=lambda m: echo(f"robustlab bias: {m}",
                                                          file=sys.stderr, flush=True))
    outcome = run_study(Bias(config), args.out, ctx)
    summary = outcome.summary
    ks = config.ks
    echo(f"{'pair':>18s} " + " ".join(f"{'B(k=' + str(k) + ')':>10s}" for k in ks))
    for pair in dict.fromkeys("/".join(r["pair"]) for r in summary["table"]):
        row = {r["k"]: r for r in summary["table"] if "/".join(r["pair"]) == pair}
        cells = [("n/a" if row.get(k, {}).get("B") is None else f"{row[k]['B']:+.4f}")
                 for k in ks]
        echo(f"{pair:>18s} " + " ".join(f"{c:>10s}" for c in cells))
    echo(f"-> {args.out}")
    if summary.get("endpoint"):
        from robustlab.studies.second_order.attack_command import endpoint_line

        echo(endpoint_line(summary["endpoint"]))
    if outcome.failed:
        from robustlab.runs.store import print_failed_cells

        print_failed_cells(args.out, outcome.failed,
                           f"robustlab bias: {len(outcome.failed)} cell(s) failed; rerun the "
                           "same command to retry them:")
    return 0 if outcome.complete else 1
