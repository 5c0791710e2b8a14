"""``robustlab attack``: second-order recipes into a run directory (``robustlab textattack`` is
TextAttack's own CLI: commands/textattack.py)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from robustlab.commands._executor_options import add_executor_options, executor_kwargs
from robustlab.commands._options import (
    add_dataset_options,
    add_model_option,
    add_quiet_option,
    add_seed_option,
    load_options,
)
from robustlab.errors import InputError
from robustlab.outputs import check_out_dir
from robustlab.textfmt import echo

RECIPE_NAMES = ("so-beam", "so-enum", "so-random")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("attack", help="second-order attacks SO-Beam / SO-Enum / random baseline",
                       description="Attack a model with a second-order recipe (paper 002); "
                       "results go to a run directory (see docs/attacks.md).")
    p.add_argument("--recipe", required=True, help=f"one of {', '.join(RECIPE_NAMES)}")
    add_model_option(p, multi=False, required=True,
                     help="a saved robustlab model directory, a family name or a HF checkpoint "
                     "(exactly one)")
    add_dataset_options(p, required=True, pairs=False, format_dest="dataset_format",
                        help="a file (label-text, TSV, CSV, JSONL) or a dataset name (demo, "
                        "sst2, TextAttack's NAME^CONFIG^SPLIT, …); split --split (default test)")
    p.add_argument("--num-examples", "-n", type=int, default=None, help="attack the first N")
    p.add_argument("--query-budget", type=int, default=None,
                   help="maximum candidates x̃ per example (each costs two model inputs)")
    add_seed_option(p, help="seed of the random baseline (default 0)")
    p.add_argument("--checkpoint-interval", type=int, default=None,
                   help="accepted for TextAttack compatibility: the run store checkpoints "
                   "every example, so any value behaves like 1")
    p.add_argument("--log-to-csv", nargs="?", const="attack_results.csv", default=None,
                   metavar="NAME", help="also write a TextAttack-style CSV into --out")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--mlm", default=None, help="masked LM (directory or hub id) as source")
    src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")
    p.add_argument("--patch-table", default=None,
                   help="synonym pairs: a JSON neighbour table, or 'wordnet'")
    p.add_argument("--kappa", type=int, default=20)
    p.add_argument("--delta", type=float, default=3.0)
    p.add_argument("--beam-width", type=int, default=20)
    p.add_argument("--max-distance", "-k", type=int, default=None,
                   help="rounds/ℓ0 radius (default 6 for so-beam/so-random, 2 for so-enum)")
    p.add_argument("--model-batch-size", type=int, default=512,
                   help="sentences per call to the model wrapper (it batches further)")
    p.add_argument("--ppl-model", default=None, help="causal LM for median perplexity (gpt2)")
    p.add_argument("--out", required=True, help="run directory")
    add_quiet_option(p, dest="no_progress")
    add_executor_options(p)
    from robustlab.models.device import add_device_option

    add_device_option(p)  # the victim and the masked LM of the neighbourhoods
    p.set_defaults(func=run, check=check)


def check(args: argparse.Namespace) -> None:
    """The options alone (nothing loaded): run before ``run`` creates anything. ``--model`` is
    checked by loading it, which ``run`` does before the run directory is created."""
    from robustlab.commands._options import at_least
    from robustlab.data.datasets import resolve_dataset

    if args.recipe not in RECIPE_NAMES:
        raise InputError(f"unknown recipe {args.recipe!r}; choose from {', '.join(RECIPE_NAMES)}")
    resolve_dataset(args.dataset)
    at_least(args, 1, "num_examples", "query_budget", "kappa", "beam_width", "max_distance",
             "model_batch_size")
    at_least(args, 0, "delta")


def recipe_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    source = args.source or (f"mlm:{args.mlm}" if args.mlm else None)
    kw: dict[str, Any] = {"source": source, "pairs": args.patch_table, "kappa": args.kappa,
                          "delta": args.delta, "model_batch_size": args.model_batch_size}
    if args.query_budget is not None:
        kw["query_budget"] = args.query_budget
    k = args.max_distance
    if args.recipe == "so-beam":
        kw.update(beam_width=args.beam_width, max_rounds=k or 6)
    elif args.recipe == "so-enum":
        kw.update(max_distance=k or 2)
    else:
        kw.update(max_changes=k or 6, walks=args.beam_width, seed=args.seed)
    return kw


def command_inputs(args: argparse.Namespace) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of the files the command line names (the recipe adds its
    neighbourhood source and patch table): recorded in the run with their checksums."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.models.registry import model_input

    ds = resolve_dataset(args.dataset)
    return [("dataset", ds.get("path") or ds.get("name"), "--dataset"),
            ("model", *model_input(args.model)),
            ("ppl_model", getattr(args, "ppl_model", None), "--ppl-model")]


def status_printer(args: argparse.Namespace):
    """One line per set-up step on stderr (the first example comes after ~10 s of imports and
    loading), unless --no-progress/--quiet."""
    if getattr(args, "no_progress", False) or getattr(args, "quiet", False):
        return lambda _msg: None
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
    check_out_dir(args.out)  # a file, under a file, read-only: stop first
    from robustlab.models.device import resolve_device
    from robustlab.studies.second_order.neighbourhood import mlm_device
    from robustlab.studies.second_order.study import RECIPES, import_textattack, run_attack_study

    if args.recipe not in RECIPES:
        raise InputError(f"unknown recipe {args.recipe!r}; choose from {', '.join(RECIPES)}")
    if args.recipe == "so-enum" and (args.max_distance or 2) > 2:
        raise InputError("--max-distance for so-enum must be <= 2 (use so-beam for larger k)")
    say = status_printer(args)
    if args.patch_table and args.patch_table not in ("wordnet", "textattack-counterfitted"):
        from robustlab.studies.second_order.neighbourhood import load_table

        load_table(args.patch_table)  # a missing or invalid table stops before --out is created
    from robustlab.data.datasets import load_examples
    from robustlab.integrations import victims

    say(f"reading --dataset {args.dataset}")
    examples = load_examples(args.dataset, n=args.num_examples,
                             **load_options(args, format_dest="dataset_format"))
    if not examples:
        raise InputError(f"--dataset {args.dataset}: no examples")
    say("importing TextAttack")
    import_textattack()
    device = str(resolve_device(getattr(args, "device", "auto")))
    say(f"loading model {args.model} on {device}")
    wrapper, model_name = victims.load_victim(args.model, device)
    with mlm_device(device):
        summary = run_attack_study(
            recipe=args.recipe, model_wrapper=wrapper, model_name=model_name,
            examples=examples, out=args.out, dataset_name=args.dataset,
            recipe_kwargs=recipe_kwargs(args), csv_name=args.log_to_csv,
            ppl_model=args.ppl_model, command=shlex.join(["robustlab", *sys.argv[1:]]),
            progress=not args.no_progress, model_spec=args.model, log=say,
            inputs=command_inputs(args), **executor_kwargs(args))
    echo(summary_line(args.recipe, summary, args.out))
    if summary["failed_cells"]:
        from robustlab.runs.store import print_failed_cells

        keys = summary["failed_cells"]
        print_failed_cells(args.out, keys, f"robustlab attack: {len(keys)} example(s) failed; "
                           "rerun the same command to retry them:")
    return 0 if summary["complete"] else 1
