"""``robustlab check PLAN.toml``: run a small robustness test plan and gate CI on its thresholds.

The plan (format in docs/cli.md and :mod:`robustlab.studies.learnability.thresholds`) names the data, models,
seeds and, per perturbation, thresholds such as ``min_accuracy = 0.8`` or ``max_drop = 0.05``.
A plan whose ``model`` is a trained model evaluates it as it is (the eval study: the artifact
that ships is what is gated); a plan listing families in ``models`` trains and tests them (the
robustness study, exp 0/1). Re-running resumes the same run directory. The command
prints a pass/fail table, writes JUnit XML for CI systems with ``--junit-xml FILE``, and exits 1
when a threshold fails or a check has no result, 0 when all pass, 2 on a bad plan.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from robustlab.errors import RobustlabError
from robustlab.options import add_quiet_option
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check", help="run a TOML robustness test plan; pass/fail table, JUnit XML, exit 1 on "
        "a failed threshold",
        description="Run the robustness tests of PLAN.toml (perturbations with thresholds: "
        "min_accuracy, max_drop, max_fail_rate; min_f1, min_pearson for a task's model) and fail (exit 1) when one is not met.",
        epilog="example plan:\n  dataset = \"demo\"\n  models = [\"bow\"]\n  seeds = [0]\n"
        "  [defaults]\n  max_drop = 0.05\n  [[test]]\n  perturbation = \"leet_letters\"\n"
        "  min_accuracy = 0.8\n\nexample:\n  robustlab check robustness.toml --junit-xml "
        "robustness.xml",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan", metavar="PLAN.toml", help="the test plan")
    p.add_argument("--junit-xml", metavar="FILE", help="write the results as JUnit XML")
    p.add_argument("--out", metavar="DIR",
                   help="run directory (default: the plan's 'out', else PLAN-run beside it)")
    p.add_argument("--force", action="store_true",
                   help="let the plan's 'out' be a directory that holds other files (its "
                   "summary.json, results.jsonl and tables are then replaced)")
    add_quiet_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robustlab.studies.learnability.thresholds import load_plan

    plan = load_plan(args.plan, args.out)
    if args.out is None:  # a plan (data) chose it: never a folder of someone's own files
        from robustlab.outputs import refuse_foreign_dir

        refuse_foreign_dir(f"{args.plan}: out", plan.out, force=args.force)
    if args.junit_xml:  # before the study writes anything: not the plan, its data or its store
        from robustlab.outputs import refuse_run_file, refuse_same_file
        from robustlab.runs.store import run_files

        refuse_same_file({"--junit-xml": args.junit_xml},
                         {"PLAN": args.plan, "the plan's data": plan.dataset.get("path"),
                          "the plan's test_data": plan.dataset.get("test_path"),
                          **{f"the run's {f.name}": f for f in run_files(plan.out)}})
        refuse_run_file("--junit-xml", args.junit_xml, [plan.out])  # and those not written yet
    from robustlab.outputs import messages_off_stdout

    with messages_off_stdout(args.junit_xml):  # --junit-xml -: the table goes to stderr
        return _run(args, plan)


def _run(args: argparse.Namespace, plan) -> int:
    from robustlab.runs.study import RunContext, run_study
    from robustlab.studies.learnability.study import Learnability

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # the plan's specs are data (trusted=False: no module:Class), but the plan is the file the
    # user named on this command line, so the card its model names may send its key
    ctx = RunContext(progress=not args.quiet, plots=False, trusted=False, endpoint_key=True,
                     log=None if args.quiet else
                     (lambda m: echo(f"robustlab check: {m}", file=sys.stderr, flush=True)))
    t0 = time.perf_counter()
    try:
        if plan.model is not None:  # a trained model: evaluated as it is, nothing trained
            from robustlab.studies.eval.predict import check_checkpoint
            from robustlab.studies.eval.tasks import check_task_run, study_for

            config = _eval_study(plan)
            config.validate(trusted=False)
            if config.task:  # NER, pairs, similarity, answer selection (read from the data)
                check_task_run(config)
            else:
                check_checkpoint(config.model)
            run_study(study_for(config), plan.out, ctx)
        else:
            # a plan is a file, not this command line: its specs may only name registered things
            run_study(Learnability(_robustness_study(plan)), plan.out, ctx)
    except RobustlabError as exc:
        raise _as_plan_hint(exc) from None
    return _report(args, plan, t0)


def _as_plan_hint(exc: RobustlabError) -> RobustlabError:
    """The data reader's hints name command-line flags (``pass --encoding cp1252``); in a plan
    the same fix is a key (``encoding = "cp1252"``, docs/cli.md)."""
    import re

    text = str(exc)
    m = re.search(r"pass --encoding (\S+?)\.", text)
    if m is None:
        return exc
    text = text.replace(m.group(0), f'set encoding = "{m.group(1)}" in the plan.')
    new = type(exc)(text)
    new.exit_code = exc.exit_code
    return new


def _eval_study(plan):
    """The eval study of a ``model = …`` plan: its test file (else its data), its
    perturbations, ``seeds`` as perturbation seeds."""
    from robustlab.studies.eval.config import EvalConfig

    ds = plan.dataset
    if "path" in ds:
        spec: dict = {"path": ds.get("test_path") or ds["path"]}
        for key in ("format", "encoding", "text_column", "label_column"):
            if ds.get(key) is not None:
                spec[key] = ds[key]
    else:
        spec = {"name": ds["name"]}
    return EvalConfig(model=str(plan.model), dataset=spec, perturbations=plan.perturbations,
                      seeds=plan.seeds, samples=plan.samples).resolved()


def _robustness_study(plan):
    """The train-then-test study of a ``models = [...]`` plan (exp 0/1)."""
    from robustlab.studies.learnability.study import ROBUSTNESS_EXPERIMENTS, LearnabilityStudy

    return LearnabilityStudy(
        models=plan.models, perturbations=plan.perturbations, dataset=plan.dataset, p_grid=(),
        seeds=plan.seeds, experiments=tuple(e for e in ROBUSTNESS_EXPERIMENTS
                                            if e in ("standard", "robustness")),
        steps=plan.steps, max_train=plan.max_train, max_test=plan.max_test, kind="robustness")


def _report(args: argparse.Namespace, plan, t0: float) -> int:
    """The pass/fail table (and JUnit XML) of a finished plan run."""
    from robustlab.outputs import atomic_write
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability.thresholds import evaluate, junit_xml, results_table

    with RunStore(plan.out, readonly=True) as store:
        checks = evaluate(store, plan.checks())
    seconds = time.perf_counter() - t0
    from robustlab.outputs import write_json
    from robustlab.studies.learnability.thresholds import CHECKS_FILE

    # the thresholds and their outcome, kept with the run: `robustlab report` shows them
    write_json(plan.out / CHECKS_FILE, {"plan": str(args.plan), "name": plan.name,
                                        "checks": [c.to_dict() for c in checks]})
    echo(results_table(checks))
    failed = sum(c.passed is not True for c in checks)
    echo(f"\n{len(checks) - failed} of {len(checks)} checks passed; run directory {plan.out}"
         + ("" if not failed else f"; failing examples: robustlab failures {plan.out}"))
    if args.junit_xml:
        payload = junit_xml(checks, plan.name, seconds)
        atomic_write(args.junit_xml, lambda f: f.write(payload), mode="wb", user=True)
        echo(f"JUnit XML -> {args.junit_xml}", file=sys.stderr)
    return 1 if failed else 0
