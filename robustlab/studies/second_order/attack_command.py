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
    from robustlab.endpoints import add_options

    add_options(p.add_argument_group("a model behind an endpoint (docs/endpoints.md)"),
                budget=False, max_queries=True)
    # the victim and the masked LM of the neighbourhoods run on --device
    RunContext.add_arguments(p, plots=False)
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """The options alone (files looked at, nothing loaded): before anything is created."""
    from robustlab.endpoints import set_limits

    set_limits(args)  # --max-queries, --max-concurrency: checked before anything exists
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
            f"skipped; success rate {_num(summary['success_rate'], '.3f')}; mean l0 "
            f"{_num(summary['mean_l0'], '.3f')}; {summary['seconds_per_example']:.2f} s and "
            f"{summary['queries_per_example']:.0f} model queries per example -> {out}")


def results_table(summary: dict[str, Any]) -> str:
    """TextAttack's "Attack Results" table (its ``log_summary``): counts, original accuracy,
    accuracy under attack, success rate, words changed and queries, in robustlab's number
    format (fractions with 3 decimals). Original accuracy: the examples the model got right
    (attacked = successful + failed; skipped ones it got wrong), as TextAttack counts it."""
    c = summary["counts"]
    n = c["successful"] + c["failed"] + c["skipped"]
    rows = [("Number of successful attacks:", str(c["successful"])),
            ("Number of failed attacks:", str(c["failed"])),
            ("Number of skipped attacks:", str(c["skipped"])),
            ("Original accuracy:", _num((c["successful"] + c["failed"]) / n if n else None,
                                        ".3f")),
            ("Accuracy under attack:", _num(c["failed"] / n if n else None, ".3f")),
            ("Attack success rate:", _num(summary.get("success_rate"), ".3f")),
            ("Average num. words changed:", _num(summary.get("mean_l0"), ".3f")),
            ("Avg num queries:", _num(summary.get("queries_per_example"), ".1f"))]
    w0 = max(len(a) for a, _ in rows)
    w1 = max(len(b) for _, b in rows)
    rule = f"+-{'-' * w0}-+-{'-' * w1}-+"
    lines = [rule, f"| {'Attack Results':<{w0}} | {'':<{w1}} |", rule]
    lines += [f"| {a:<{w0}} | {b:<{w1}} |" for a, b in rows]
    return "\n".join([*lines, rule])


def example_lines(out: str, limit: int = 2) -> list[str]:
    """The first successful attacks, TextAttack style: label change, then the texts."""
    import json
    from pathlib import Path

    lines: list[str] = []
    try:
        records = [json.loads(x) for x in Path(out, "results.jsonl").read_text(
            encoding="utf-8").splitlines() if x.strip()]
    except (OSError, ValueError):
        return lines
    shown = [r for r in records if r.get("result_type") == "successful"][:limit]
    for i, r in enumerate(shown, 1):
        # a second-order attack succeeds where the perturbed text and its patched twin are
        # predicted differently (paper 002): both are shown
        lines += ["", f"--- successful attack {i} of {len(shown)} (example "
                      f"{r.get('index', '?')}): label {r.get('ground_truth', '?')}; prediction "
                      f"original {r.get('original_output', '?')}, perturbed "
                      f"{r.get('perturbed_output', '?')}, patched {r.get('patched_output', '?')}",
                  f"  - {r.get('original', '')}", f"  + {r.get('perturbed', '')}",
                  f"  ~ {r.get('patched', '')}"]
    return lines


def endpoint_line(ep: dict[str, Any]) -> str:
    """What the attack asked of its endpoint (stdout): queries and requests this run, the
    store's totals, tokens, and why it stopped."""
    from robustlab.endpoints.costs import tokens_shown

    line = (f"endpoint {ep['url']}: {ep['queries_this_run']} queries in {ep['sent_this_run']} "
            f"requests sent this run ({ep['reused_this_run']} answers reused from the run's "
            f"store; estimate at most {ep.get('estimate')}), {ep['requests']} requests stored, "
            f"{tokens_shown(ep)}, {ep['invalid']} invalid answers")
    if ep.get("stopped"):
        line += (f"; {ep['stopped']}: every answer is stored, rerun the same command (or with "
                 "a larger --max-queries) to continue")
    return line


def run(args: argparse.Namespace) -> int:
    from robustlab.endpoints import set_limits
    from robustlab.studies.second_order.study import Attack

    set_limits(args)
    ctx = RunContext.from_args(args, log=status_printer(args))
    outcome = run_study(Attack(AttackConfig.from_args(args)), args.out, ctx)
    echo(results_table(outcome.summary))
    for line in example_lines(args.out):
        echo(line)
    echo(summary_line(args.recipe, outcome.summary, args.out))
    if outcome.summary.get("endpoint"):
        echo(endpoint_line(outcome.summary["endpoint"]))
    if outcome.failed:
        from robustlab.runs.store import print_failed_cells

        keys = outcome.failed
        print_failed_cells(args.out, keys, f"robustlab attack: {len(keys)} example(s) failed; "
                           "rerun the same command to retry them:")
    return 0 if outcome.complete else 1
