"""``robustlab demo``: a small learnability study end to end on the bundled demo dataset (CPU).

Two from-scratch models × four of the paper's perturbations × the full p-grid × two seeds, on
a balanced subsample of the project's own demo sentences (no download, no shared data). It is the
same ``robustlab learnability`` run a user would type — the command is printed and stored, so
re-running the demo resumes it and the TUI lists it like any other run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from robustlab.data.datasets import load_dataset
from robustlab.errors import InputError
from robustlab.outputs import atomic_write
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
    from robustlab.studies.learnability.command import add_study_options

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
    from robustlab.studies.learnability.command import check_args

    if args.export:
        from robustlab.outputs import check_out_dir

        check_out_dir(args.export, "--export")
        return
    args.model = args.model or list(DEMO_MODELS)
    check_args(args)


def run(args: argparse.Namespace) -> int:
    import time

    from robustlab.studies.learnability.command import execute

    if args.export:
        for path in export_demo(args.export):
            echo(f"wrote {path}")
        echo("train.tsv and dev.tsv: the demo sentences ('sentence<TAB>label', label 1 = "
             "positive); gate.toml: a CI gate for the model the README tour trains "
             "(models/sst-bow), tested as it is; plan.toml: a plan that trains and tests model "
             "families (`robustlab check plan.toml`)")
        return 0
    args.model = args.model or list(DEMO_MODELS)
    echo(f"robustlab demo: {', '.join(args.model)} × {args.perturbations} on "
         f"{args.dataset}; output in {args.out}/", flush=True)
    t0 = time.perf_counter()
    rc = execute(args, "learnability")
    echo(f"demo finished in {time.perf_counter() - t0:.0f} s. Explore it with `robustlab tui` "
         f"or rerun `robustlab correlate {args.out}`.")
    return rc


# ---- --export DIR: the tour's files ----------------------------------------------------------

EXPORT_FILES = ("train.tsv", "dev.tsv", "gate.toml", "plan.toml")

#: the sample test plan (``robustlab check plan.toml``): the exported files, relative to the plan
GATE_PLAN = """\
# A CI gate for a trained model: `robustlab check gate.toml` (written by `robustlab demo --export`).
# `model` names a trained model: it is evaluated as it is (robustlab eval), nothing is trained.
# Paths are relative to this file. Format: docs/cli.md ("robustlab check").
model = "models/sst-bow"  # the tour's `robustlab train ... --out models/sst-bow`
data = "dev.tsv"          # the held-out data the thresholds are measured on
seeds = [0]               # perturbation seeds
out = "runs/gate"         # the run directory (re-running resumes it)

[defaults]
max_drop = 0.05           # accuracy may drop at most 5 points under each perturbation

[[test]]
perturbation = "duplicate_punctuations"

[[test]]
perturbation = "leet_letters"
min_accuracy = 0.8
"""

SAMPLE_PLAN = """\
# A robustness test plan for `robustlab check plan.toml` (written by `robustlab demo --export`).
# Paths are relative to this file. Format: docs/cli.md ("robustlab check").
data = "train.tsv"        # training data: a 'sentence<TAB>label' TSV with a header
test_data = "dev.tsv"     # held-out data the thresholds are measured on
models = ["bow"]
seeds = [0]
steps = 150
out = "runs/check"        # the run directory (re-running resumes it)

[defaults]
max_drop = 0.05           # accuracy may drop at most 5 points under each perturbation

[[test]]                  # passes: doubled punctuation hardly moves a bag-of-words model
perturbation = "duplicate_punctuations"

[[test]]                  # fails: l33t spelling turns most words into unknown tokens
perturbation = "leet_letters"
min_accuracy = 0.8
"""


def export_demo(directory: str, n: int = 2000, dev_fraction: float = 0.2,
                seed: int = 0) -> list[str]:
    """Write the demo sentences as ``train.tsv`` and ``dev.tsv`` (GLUE SST-2's layout: a
    ``sentence<TAB>label`` header, label 1 = positive), :data:`GATE_PLAN` as ``gate.toml`` and
    :data:`SAMPLE_PLAN` as ``plan.toml``
    into ``directory``, so the README tour runs from a fresh directory. The split is the one
    ``robustlab train --dataset demo`` holds out (seeded, stratified). Existing files are refused
    (nothing is written then); each file is written whole or not at all."""
    out = Path(directory).expanduser()
    there = [name for name in EXPORT_FILES if (out / name).exists() or (out / name).is_symlink()]
    if there:
        raise InputError(f"--export {directory}: {', '.join(there)} already exist there; remove "
                         "them or export to another directory")
    data = load_dataset(f"demo:{n}")
    train, dev = data.split(dev_fraction, seed=seed)
    out.mkdir(parents=True, exist_ok=True)

    def tsv(ds):
        def write(f):
            f.write("sentence\tlabel\n")
            for text, label in zip(ds.texts, ds.labels, strict=True):
                f.write(f"{text}\t{int(label)}\n")
        return write

    atomic_write(out / "train.tsv", tsv(train), user=True)
    atomic_write(out / "dev.tsv", tsv(dev), user=True)
    atomic_write(out / "gate.toml", lambda f: f.write(GATE_PLAN), user=True)
    atomic_write(out / "plan.toml", lambda f: f.write(SAMPLE_PLAN), user=True)
    return [str(out / name) for name in EXPORT_FILES]
