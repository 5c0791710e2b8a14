"""``robustlab learnability`` (alias ``cent``), ``robustlab robustness`` and ``robustlab correlate``.

Thin adapters over :mod:`robustlab.studies.learnability.study`: parse options into a
:class:`LearnabilityStudy`, run it into ``--out DIR`` (re-running the same command resumes), print
the per-pair table and the hypothesis tests. The exact command line is stored in the run row
(with absolute paths) so the TUI can resume the run from anywhere.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from robustlab.commands._options import (
    add_dataset_options,
    add_model_option,
    add_quiet_option,
    add_seeds_option,
    split_specs,
)
from robustlab.errors import InputError
from robustlab.studies.learnability.thresholds import add_threshold_options, gate, threshold_args
from robustlab.textfmt import echo

DEFAULT_GRID = "0.001,0.005,0.01,0.02,0.05,0.1,0.5,1.0"
DEFAULT_PERTURBATIONS = ("duplicate_punctuations,butter_fingers_perturbation,shuffle_word,"
                         "random_upper_transformation,insert_abbreviation,"
                         "whitespace_perturbation,visual_attack_letters,leet_letters")


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
    p.set_defaults(func=run_correlate)


def add_study_options(p: argparse.ArgumentParser, *, learnability: bool = True,
                      out_required: bool = True) -> None:
    g = p.add_argument_group("study")
    add_model_option(g, multi=True)
    add_dataset_options(g, test=True, split=False)
    g.add_argument("--perturbations", default=DEFAULT_PERTURBATIONS, metavar="LIST",
                   help="comma-separated perturbation specs (default: the paper's eight)")
    if learnability:
        g.add_argument("--p-grid", default=DEFAULT_GRID, metavar="LIST",
                       help=f"perturbation probabilities (default {DEFAULT_GRID})")
        g.add_argument("--estimate", choices=("full", "quick"), default="full",
                       help="full: the whole p-grid and its log-AUC (default); quick: a cheap "
                       "learnability ESTIMATE, learnability at --estimate-p for every seed plus "
                       "p=1 for the first seed (4 instead of 24 trainings per pair at 3 seeds)")
        g.add_argument("--estimate-p", type=float, default=0.02, metavar="P",
                       help="p of the learnability estimate (default 0.02, the most "
                       "discriminating p of paper 000 Table 4)")
        g.add_argument("--experiments", default="standard,robustness,augmentation,learnability",
                       metavar="LIST", help="which of exp 0/1/2/3-4 to run (default all; "
                       "'learnability' alone gives CENT without the robustness side)")
    add_seeds_option(g)
    g.add_argument("--steps", type=int, default=200,
                   help="training steps, the same for every experiment (default 200)")
    g.add_argument("--max-train", type=int, metavar="N", help="balanced subsample of the train set")
    g.add_argument("--max-test", type=int, metavar="N", help="balanced subsample of the test set")
    from robustlab.commands._executor_options import add_executor_arguments

    e = p.add_argument_group("execution")
    e.add_argument("--out", required=out_required, metavar="DIR",
                   help="run directory (re-running the same command resumes it)")
    add_executor_arguments(e)
    e.add_argument("--threads", type=int, default=1,
                   help="torch threads per training (default 1; see docs/learnability.md)")
    from robustlab.models.device import add_device_option

    add_device_option(e)
    e.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    add_quiet_option(e)
    p.set_defaults(check=check_args)


def _split(values: list[str] | str | None) -> list[str]:
    """A LIST option (seeds, p-grid, experiments): comma and/or space separated."""
    if values is None:
        return []
    items = values if isinstance(values, list) else [values]
    return [s for v in items for s in re.split(r"[,\s]+", v) if s]


def _floats(text: str, opt: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in _split(text))
    except ValueError:
        raise InputError(f"{opt}: expected comma-separated numbers, got {text!r}") from None


def _ints(text: str, opt: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in _split(text))
    except ValueError:
        raise InputError(f"{opt}: expected comma-separated integers, got {text!r}") from None


def dataset_spec(args: argparse.Namespace) -> dict[str, Any]:
    """``--dataset NAME|FILE [--test-dataset FILE] …`` as a dataset spec: ``{"path": …}`` with
    the file options for a file, ``{"name": …}`` for a name (the same dicts ``--data FILE`` and
    ``--dataset NAME`` gave before the two options became one, so signatures do not change)."""
    from robustlab.data.datasets import resolve_dataset

    spec = resolve_dataset(args.dataset or "demo", must_exist=False)
    test = getattr(args, "test_dataset", None)
    if "path" in spec:
        if test:
            test_spec = resolve_dataset(test, "--test-dataset", must_exist=False)
            if "path" not in test_spec:
                raise InputError(f"--test-dataset {test}: a test FILE goes with a data file; a "
                                 "named dataset brings its own test split")
            spec["test_path"] = test_spec["path"]
        for key in ("format", "encoding", "text_column", "text_pair_column", "label_column",
                    "header"):
            if getattr(args, key, None) is not None:
                spec[key] = getattr(args, key)
        return spec
    if test:
        raise InputError(f"--test-dataset needs --dataset FILE (a named dataset, here "
                         f"{spec['name']!r}, brings its own test split)")
    given = [f"--{k.replace('_', '-')}" for k in ("format", "encoding", "header", "text_column",
                                                   "text_pair_column", "label_column")
             if getattr(args, k, None) is not None]
    if given:
        raise InputError(f"{', '.join(given)}: file options, but --dataset {spec['name']} is a "
                         "dataset name, not a file")
    return spec


def _check_experiments(text: str) -> bool:
    from robustlab.studies.learnability.study import EXPERIMENTS

    bad = sorted(set(_split(text)) - set(EXPERIMENTS))
    if bad or not _split(text):
        raise InputError(f"--experiments: unknown {', '.join(bad) or '(empty)'}; choose from "
                         f"{', '.join(EXPERIMENTS)}")
    return True


def study_from_args(args: argparse.Namespace):
    from robustlab.studies.learnability.study import (
        EXPERIMENTS,
        ROBUSTNESS_EXPERIMENTS,
        LearnabilityStudy,
    )

    kind = args.study_kind
    models = split_specs(args.model)
    if not models:
        raise InputError("--model: give at least one model (e.g. --model bow)")
    estimate = getattr(args, "estimate", "full") if kind == "learnability" else "full"
    estimate_p = getattr(args, "estimate_p", None)
    p_grid_text = getattr(args, "p_grid", None) or DEFAULT_GRID
    if estimate == "quick" and _floats(p_grid_text, "--p-grid") != _floats(DEFAULT_GRID, ""):
        raise InputError("--p-grid does not go with --estimate quick (its p are --estimate-p and "
                         "1); drop one of them")
    return LearnabilityStudy(
        models=tuple(models), perturbations=tuple(split_specs(args.perturbations)),
        dataset=dataset_spec(args),
        p_grid=_floats(p_grid_text, "--p-grid") if kind == "learnability"
        else (),
        seeds=_ints(args.seeds, "--seeds"),
        experiments=tuple(e for e in EXPERIMENTS if e in _split(args.experiments))
        if kind == "learnability" and _check_experiments(args.experiments)
        else ROBUSTNESS_EXPERIMENTS,
        steps=args.steps, max_train=args.max_train, max_test=args.max_test, kind=kind,
        estimate=estimate, estimate_p=0.02 if estimate_p is None else float(estimate_p),
    )


def command_line(args: argparse.Namespace, name: str, study: Any) -> str:
    """The canonical command that reproduces (and resumes) this run, with absolute paths."""
    argv = ["robustlab", name]
    for m in study.models:
        argv += ["--model", m]
    ds = study.dataset
    if "name" in ds:
        argv += ["--dataset", ds["name"]]
    else:
        argv += ["--dataset", ds["path"]]
        for key, flag in (("test_path", "--test-dataset"), ("format", "--format"),
                          ("encoding", "--encoding"), ("text_column", "--text-column"),
                          ("text_pair_column", "--text-pair-column"),
                          ("label_column", "--label-column")):
            if key in ds:
                argv += [flag, str(ds[key])]
        if "header" in ds:
            argv.append("--header" if ds["header"] else "--no-header")
    argv += ["--perturbations", ",".join(study.perturbations)]
    if study.kind == "learnability" and study.estimate == "quick":
        argv += ["--estimate", "quick", "--estimate-p", format(study.estimate_p, "g"),
                 "--experiments", ",".join(study.experiments)]
    elif study.kind == "learnability":
        argv += ["--p-grid", ",".join(format(p, "g") for p in study.p_grid),
                 "--experiments", ",".join(study.experiments)]
        if "estimate_p" in study.config():
            argv += ["--estimate-p", format(study.estimate_p, "g")]
    argv += ["--seeds", ",".join(str(s) for s in study.seeds), "--steps", str(study.steps)]
    for flag, v in (("--max-train", study.max_train), ("--max-test", study.max_test)):
        if v is not None:
            argv += [flag, str(v)]
    argv += ["--out", str(Path(args.out).resolve()), "--executor", args.executor,
             "--workers", str(args.workers), "--threads", str(args.threads)]
    if args.ray_address:
        argv += ["--ray-address", args.ray_address]
    if args.gpus_per_task:
        argv += ["--gpus-per-task", str(args.gpus_per_task)]
    if getattr(args, "cpus_per_task", 1.0) != 1.0:
        argv += ["--cpus-per-task", str(args.cpus_per_task)]
    if getattr(args, "device", "auto") != "auto":
        argv += ["--device", args.device]
    if args.no_plots:
        argv.append("--no-plots")
    return shlex.join(argv)


def check_args(args: argparse.Namespace) -> None:
    """Every pre-run check of a study command, without touching the disk beyond looking at
    paths: run by :func:`robustlab.cli.main` before the handler (so nothing is created when one
    fails) and by the TUI's new-study form beside the field at fault."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.models.registry import check_model_spec
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import parse_spec

    study = study_from_args(args)
    study.validate()
    resolve_dataset(args.dataset or "demo")  # a missing file or an unknown name stops here
    if getattr(args, "test_dataset", None):
        resolve_dataset(args.test_dataset, "--test-dataset")
    for spec in study.models:
        check_model_spec(spec, user_class=True)
    for spec in study.perturbations:
        try:
            parse_spec(spec)
        except PerturbationError as exc:
            raise InputError(f"--perturbations: {exc}") from None
    for opt in ("workers", "threads"):
        if getattr(args, opt, 1) < 1:
            raise InputError(f"--{opt} must be >= 1, got {getattr(args, opt)}")
    threshold_args(args)


def execute(args: argparse.Namespace, name: str) -> int:
    """Run the study described by ``args`` and print the results; shared with ``demo``."""
    from robustlab.studies.learnability.report import chance_text, correlations_text, results_table
    from robustlab.studies.learnability.study import run_study

    study = study_from_args(args)
    if args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    summary = run_study(study, args.out, executor=args.executor, workers=args.workers,
                        ray_address=args.ray_address, gpus_per_task=args.gpus_per_task,
                        cpus_per_task=getattr(args, "cpus_per_task", 1.0),
                        command=command_line(args, name, study), progress=not args.quiet,
                        plots=not args.no_plots, threads=args.threads,
                        device=getattr(args, "device", "auto"),
                        log=None if args.quiet else
                        (lambda m: echo(f"robustlab {name}: {m}", file=sys.stderr, flush=True)))
    echo(results_table(summary["pairs"]))
    if chance_text(summary["pairs"]):
        echo(chance_text(summary["pairs"]))
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
