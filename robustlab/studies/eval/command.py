"""``robustlab eval``: a trained model tested as it is, on a dataset under perturbations.

A thin adapter (the name follows ``textattack eval``): the options come from
:class:`~robustlab.studies.eval.config.EvalConfig`, the study runs through the one lifecycle
(:func:`robustlab.runs.study.run_study`). Nothing is trained: see docs/eval.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from robustlab.runs.study import RunContext, run_study
from robustlab.textfmt import align, echo

_EPILOG = """examples:
  robustlab train --model bow --dataset train.tsv --test-dataset dev.tsv --out models/sst-bow
  robustlab eval --model models/sst-bow --dataset dev.tsv --out runs/eval-bow
  robustlab eval --model models/sst-bow --dataset dev.tsv --perturbations leet_letters,char_swap \\
      --seeds 0,1,2 -n 3 --out runs/eval-bow-2
  robustlab failures runs/eval-bow        # the failing examples
  robustlab report runs/eval-bow          # an HTML report
  robustlab eval --model models/ner --dataset conll2003/test.txt --out runs/ner
      # NER, similarity (STS), answer selection (WikiQA), pairs (SNLI): the task is read
      # from the data (or --task); --perturb-field first|second|both for pairs (docs/tasks.md)
"""


def register(sub: argparse._SubParsersAction) -> None:
    from robustlab.studies.eval.config import EvalConfig

    p = sub.add_parser("eval", help="test a trained model as it is under perturbations "
                       "(A0, A1, A1-A0, failure rate; nothing is trained)",
                       description="Evaluate a trained model, as it is, on a dataset under "
                       "each perturbation: clean accuracy A0, perturbed accuracy A1, A1 - A0, "
                       "the failure rate (prediction changed on changed texts) and the no-op "
                       "rate, every example's predictions kept (see docs/eval.md).",
                       epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    EvalConfig.add_arguments(p)
    from robustlab.endpoints import add_options

    add_options(p.add_argument_group("a model behind an endpoint (docs/endpoints.md)"))
    RunContext.add_arguments(p)
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """The options (files looked at; a checkpoint is loaded to check its head): before
    anything is created."""
    from robustlab.endpoints import set_limits
    from robustlab.studies.eval.config import EvalConfig
    from robustlab.studies.eval.predict import check_checkpoint

    set_limits(args)  # --budget, --max-concurrency: checked before anything exists
    config = EvalConfig.from_args(args)
    config.validate(trusted=False)
    RunContext.from_args(args).validate()
    if config.task:  # a task's model, data and perturbations: robustlab.studies.eval.tasks
        from robustlab.studies.eval.tasks import check_task_run

        check_task_run(config)
        return
    check_checkpoint(config.model)  # a checkpoint's head is checked before anything exists


def _log(msg: str) -> None:
    echo(f"robustlab eval: {msg}", file=sys.stderr, flush=True)


def print_summary(summary: dict[str, Any]) -> None:
    """A0, the headline (worst perturbations), warnings on stderr, then the table worst first."""
    from robustlab.studies.eval.study import TABLE_HEAD, fmt, table_rows

    if summary.get("task"):  # NER, pairs, similarity, answer selection: the task's metric
        from robustlab.studies.eval.tasks import print_task_summary

        print_task_summary(summary)
        return
    rows = summary.get("perturbations") or []
    clean = summary.get("clean_accuracy")
    for w in summary.get("warnings") or []:
        echo(f"robustlab eval: warning: {w}", file=sys.stderr)
    if rows and summary.get("headline"):
        echo(summary["headline"])
    if clean is not None:
        echo(f"clean accuracy A0 {fmt(clean)} on {summary.get('n_examples')} examples")
    ep = summary.get("endpoint")
    if ep:
        echo(endpoint_line(ep))
    if rows and any("invalid" in r for r in rows):  # answers that named no label, perturbed
        echo(align([*TABLE_HEAD, "invalid"], [[*t, str(r.get("invalid", "-"))] for t, r in
                                              zip(table_rows(rows), rows, strict=True)],
                   rule=True))
    elif rows:
        echo(align(TABLE_HEAD, table_rows(rows), rule=True))
        echo("test: INV = prediction should not change (A1 against the original label); "
             "DIR flip = prediction should change or P(label) fall (no A1: the label changed); "
             "changed = no pass/fail; judged n=K = scored on K hand-judged samples against "
             "their corrected labels (robustlab judge). fail rate and changed: among the "
             "texts the perturbation changed")


def endpoint_line(ep: dict[str, Any]) -> str:
    """One line of an endpoint run's costs (stdout, report)."""
    from robustlab.endpoints.costs import resent_note, tokens_shown

    return (f"endpoint {ep['url']}: {ep['requests']} requests stored ({ep['sent_this_run']} "
            f"sent this run, {ep['reused_this_run']} answers reused), {tokens_shown(ep)}, "
            f"{ep['invalid']} invalid answers" + resent_note(ep))


def run(args: argparse.Namespace) -> int:
    from robustlab.endpoints import set_limits
    from robustlab.studies.eval.config import EvalConfig
    from robustlab.studies.eval.tasks import study_for

    set_limits(args)
    ctx = RunContext.from_args(args, log=_log)
    outcome = run_study(study_for(EvalConfig.from_args(args)), args.out, ctx)
    print_summary(outcome.summary)
    echo(f"wrote {args.out} ({', '.join(outcome.summary['files'])}) in "
         f"{outcome.summary['seconds']:.1f}s")
    if outcome.failed:
        from robustlab.runs.store import print_failed_cells

        keys = outcome.failed
        print_failed_cells(args.out, keys, f"robustlab eval: {len(keys)} of "
                           f"{outcome.report.total} cell(s) failed; rerun the same command to "
                           "retry them:")
    return 0 if outcome.complete else 1
