"""``robustlab demo``: a small learnability study end to end on the bundled demo dataset (CPU).

Two from-scratch models × four of the paper's perturbations × the full p-grid × two seeds, on
a balanced subsample of the project's own demo sentences (no download, no shared data). It is the
same ``robustlab learnability`` run a user would type — the command is printed and stored, so
re-running the demo resumes it and the TUI lists it like any other run.
"""

from __future__ import annotations

import argparse

from robustlab.textfmt import echo

DEMO_MODELS = ["bow,textrnn"]
DEMO = {
    "dataset": "demo",
    "perturbations": "leet_letters,random_upper_transformation,whitespace_perturbation,"
                     "shuffle_word",
    "seeds": "0,1",
    "steps": 150,
    "max_train": 800,
    "max_test": 400,
}


def register(sub: argparse._SubParsersAction) -> None:
    from robustlab.commands.learnability import add_study_options

    p = sub.add_parser("demo", help="run a small learnability study on the demo data (CPU, a few "
                       "minutes) and print where the results are",
                       description=__doc__.splitlines()[0])
    add_study_options(p, learnability=True, out_required=False)
    p.add_argument("--export", metavar="DIR",
                   help="only write the demo data as DIR/train.tsv and DIR/dev.tsv "
                   "('sentence<TAB>label') and a sample test plan DIR/plan.toml (the README "
                   "tour's inputs), then stop; runs no study")
    p.set_defaults(func=run, check=check, out="robustlab-demo", study_kind="learnability",
                   command_name="learnability", **DEMO)


def check(args: argparse.Namespace) -> None:
    """The learnability command's pre-run checks, with the demo's models when none is given."""
    from robustlab.commands.learnability import check_args

    if args.export:
        from robustlab.outputs import check_out_dir

        check_out_dir(args.export, "--export")
        return
    args.model = args.model or list(DEMO_MODELS)
    check_args(args)


def run(args: argparse.Namespace) -> int:
    import time

    from robustlab.commands.learnability import execute

    if args.export:
        from robustlab.data.demo import export_demo

        for path in export_demo(args.export):
            echo(f"wrote {path}")
        echo("train.tsv and dev.tsv: the demo sentences ('sentence<TAB>label', label 1 = "
             "positive); plan.toml: a sample plan for `robustlab check plan.toml`")
        return 0
    args.model = args.model or list(DEMO_MODELS)
    echo(f"robustlab demo: {', '.join(args.model)} × {args.perturbations} on "
         f"{args.dataset}; output in {args.out}/", flush=True)
    t0 = time.perf_counter()
    rc = execute(args, "learnability")
    echo(f"demo finished in {time.perf_counter() - t0:.0f} s. Explore it with `robustlab tui` "
         f"or rerun `robustlab correlate {args.out}`.")
    return rc
