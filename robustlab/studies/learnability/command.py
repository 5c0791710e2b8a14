"""``robustlab learnability`` (alias ``cent``), ``robustlab robustness`` and ``robustlab correlate``.

Thin adapters over :mod:`robustlab.studies.learnability`: the options come from
:class:`~robustlab.studies.learnability.config.LearnabilityStudy` (defaults live there), the
study runs through the one lifecycle (:func:`robustlab.runs.study.run_study`) into ``--out DIR``
(re-running the same command resumes), then the per-pair table and the hypothesis tests print.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from robustlab.errors import InputError
from robustlab.options import add_quiet_option
from robustlab.runs.study import RunContext, run_study
from robustlab.studies.learnability.config import LearnabilityStudy
from robustlab.studies.learnability.study import Learnability
from robustlab.studies.learnability.thresholds import add_threshold_options, gate, threshold_args
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    for name, aliases, kind, help_ in (
        ("learnability", ["cent"], "learnability",
         "perturbation learnability / CENT sensitivity (exp 0-4: learnability, robustness, Δ)"),
        ("robustness", [], "robustness", "robustness A1-A0 and post-augmentation Δ (exp 0/1/2)"),
    ):
        p = sub.add_parser(name, aliases=aliases, help=help_, description=help_)
        add_study_options(p, learnability=kind == "learnability")
        add_threshold_options(p)
        p.set_defaults(func=run, study_kind=kind, command_name=name)
    p = sub.add_parser("correlate", help="hypothesis tests (Spearman ρ, Table 3/4) over finished "
                       "learnability run directories")
    p.add_argument("run_dirs", nargs="+", metavar="DIR", help="run directories (--out of studies)")
    p.add_argument("--json", metavar="FILE", help="also write the correlations to FILE")
    p.add_argument("--no-write", action="store_true",
                   help="with one DIR: do not rewrite its summary.json / tables / plots")
    p.add_argument("--measure", choices=("auto", "log-auc", "estimate"), default="auto",
                   help="learnability measure of the tests: the log-AUC average of full grids, or "
                   "the quick estimate (learnability at --estimate-p); auto: the estimate as soon "
                   "as one DIR is a quick-estimate run")
    p.add_argument("--estimate-p", type=float, metavar="P",
                   help="p of the estimate (default: the runs' own, 0.02)")
    add_quiet_option(p, help="accepted by every command; correlate shows no progress")
    p.set_defaults(func=run_correlate)


def add_study_options(p: argparse.ArgumentParser, *, learnability: bool = True,
                      out_required: bool = True) -> None:
    """The study's options (from its config) and the runtime ones (from :class:`RunContext`)."""
    LearnabilityStudy.add_arguments(p, "learnability" if learnability else "robustness")
    RunContext.add_arguments(p, threads=True, out_required=out_required)
    p.set_defaults(check=check_args)


def study_from_args(args: argparse.Namespace) -> LearnabilityStudy:
    """The study's configuration from a parsed command line (paths absolute)."""
    return LearnabilityStudy.from_args(args, args.study_kind)


def check_args(args: argparse.Namespace) -> None:
    """Every pre-run check of a study command, without touching the disk beyond looking at
    paths: run by :func:`robustlab.cli.main` before the handler (so nothing is created when one
    fails) and by the TUI's new-study form beside the field at fault (untrusted there)."""
    study_from_args(args).validate(trusted=getattr(args, "trusted", True))
    RunContext.from_args(args).validate()
    threshold_args(args)


def execute(args: argparse.Namespace, name: str) -> int:
    """Run the study described by ``args`` and print the results; shared with ``demo``."""
    from robustlab.studies.learnability.report import (
        chance_text,
        correlations_text,
        results_table,
        undertrained_text,
    )

    study = study_from_args(args)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    ctx = RunContext.from_args(args, log=lambda m: echo(f"robustlab {name}: {m}",
                                                          file=sys.stderr, flush=True))
    outcome = run_study(Learnability(study), args.out, ctx)
    summary = outcome.summary
    echo(results_table(summary["pairs"]))
    for warn in (chance_text(summary["pairs"]), undertrained_text(summary["pairs"])):
        if warn:
            echo(warn)
    if study.kind == "learnability":
        echo()
        echo(correlations_text(summary["correlations"]) if study.estimate != "quick" else
             "quick estimate: no average learnability (log-AUC); its own tests follow")
    if summary.get("estimate"):  # the quick estimate's own section (never the log-AUC)
        from robustlab.studies.learnability.estimate import estimate_text

        echo()
        echo(estimate_text(summary["estimate"], table=study.estimate == "quick"))
    out = Path(args.out)
    echo(f"\nresults: {out / 'summary.json'}, {out / 'results.jsonl'}; files: "
         f"{', '.join(summary['files'])}")
    if not summary["complete"]:
        from robustlab.runs.store import print_failed_cells

        keys = summary["failed_cells"]
        print_failed_cells(out, keys, f"{len(keys)} cells did not finish; rerun the same command "
                           "to retry them:", more=f" (all in {out / 'summary.json'})")
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    """The study, then the CI thresholds (``--min-accuracy``/``--max-drop``/…) if given."""
    thresholds = threshold_args(args)  # checked before the run directory is created
    from robustlab.outputs import messages_off_stdout

    with messages_off_stdout(getattr(args, "junit_xml", None)):  # --junit-xml -: to stderr
        return _run(args, thresholds)


def _run(args: argparse.Namespace, thresholds: dict[str, float]) -> int:
    rc = execute(args, args.command_name)
    if not thresholds:
        return rc
    study = study_from_args(args)
    gated = gate(args.out, study.models, study.perturbations, thresholds,
                 suite=f"robustlab {args.command_name}", junit=args.junit_xml)
    return max(rc, gated)


def run_correlate(args: argparse.Namespace) -> int:
    """Hypothesis tests with the log-AUC (full grids) or the learnability estimate (quick runs,
    or ``--measure estimate``); the output names the measure it used."""
    from robustlab.outputs import messages_off_stdout, refuse_run_file, refuse_same_file
    from robustlab.runs.store import run_files

    refuse_same_file({"--json": args.json},  # before a summary.json is rewritten
                     {f"{d} {f.name}": f for d in args.run_dirs for f in run_files(d)})
    refuse_run_file("--json", args.json, args.run_dirs)  # and those not written yet
    with messages_off_stdout(args.json):  # --json -: the tables go to stderr
        return _correlate(args)


def _correlate(args: argparse.Namespace) -> int:
    from robustlab.studies.learnability.estimate import correlate_estimate, is_quick, run_results
    from robustlab.studies.learnability.report import correlate_dirs

    dirs = [Path(d) for d in args.run_dirs]
    quick = [d for d in dirs if is_quick(run_results(d, results=False)[0].config)]
    measure = args.measure
    if measure == "auto":
        measure = "estimate" if quick or args.estimate_p is not None else "log-auc"
    if measure == "estimate":
        return correlate_estimate(dirs, estimate_p=args.estimate_p, json_path=args.json)
    if quick:
        raise InputError(f"{quick[0]}: a quick-estimate run has no log-AUC; use --measure "
                         "estimate (or auto)")
    echo("measure: average learnability = log-AUC over the p-grid (paper 000 Eq. 5)")
    rc = correlate_dirs(dirs, json_path=args.json, write=not args.no_write)
    if len(dirs) == 1 and not args.no_write:  # the grid's own estimate, and its best p
        from robustlab.studies.learnability.estimate import estimate_text
        from robustlab.studies.learnability.report import load_summary

        text = estimate_text(load_summary(dirs[0]).get("estimate"), table=False)
        if text:
            echo(f"\n{text}")
    return rc
