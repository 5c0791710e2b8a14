"""``robustlab bias``: counterfactual token bias B(p, k) over neighbourhoods of a test set."""

from __future__ import annotations

import argparse
import os
import shlex
import sys

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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bias", help="counterfactual token bias B(p,k) (paper 002, Sec. 4)",
                       description="B(p,k) = mean F_soft(x;p) over Neighbor_k(X_test), k=0..3; "
                       "writes a run directory (see docs/attacks.md).")
    add_model_option(p, multi=False, required=True,
                     help="saved robustlab model, family or checkpoint (exactly one)")
    add_dataset_options(p, required=True, pairs=False, format_dest="dataset_format",
                        help="a file (label-text, TSV, CSV, JSONL) or a dataset name (demo, "
                        "sst2, TextAttack's NAME^CONFIG^SPLIT, …); split --split (default test)")
    p.add_argument("--num-examples", "-n", type=int, default=None)
    p.add_argument("--pairs", default="builtin",
                   help="builtin | checklist | all | FILE (one 'p1 p2' per line)")
    p.add_argument("--k", dest="ks", default="0,1,2,3", help="distances, e.g. 0,1,2,3")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--mlm", default=None, help="masked LM directory or hub id")
    src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")
    p.add_argument("--kappa", type=int, default=20)
    p.add_argument("--delta", type=float, default=3.0)
    p.add_argument("--budget", type=int, default=2000,
                   help="at most this many sentences per (pair, k); larger levels are sampled")
    p.add_argument("--parents", type=int, default=200,
                   help="at most this many sentences of level k-1 are expanded into level k")
    p.add_argument("--start", choices=["test", "filter"], default="test",
                   help="build neighbourhoods from X_test or from X_filter (|F_soft| < 0.005)")
    add_seed_option(p, help="seed of the neighbourhood sampling (default 0)")
    p.add_argument("--out", required=True, help="run directory")
    add_quiet_option(p, dest="no_progress")
    add_executor_options(p)
    from robustlab.models.device import add_device_option

    add_device_option(p)  # the model and the masked LM of the neighbourhoods
    p.set_defaults(func=run, check=check)


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise InputError(f"--k {text!r}: expected comma-separated integers like 0,1,2,3") \
            from None
    if not ks or ks[0] < 0:
        raise InputError(f"--k {text!r}: distances must be >= 0")
    return ks


def check(args: argparse.Namespace) -> None:
    """The options alone (nothing loaded): run before ``run`` creates anything. ``--model`` is
    checked by loading it, which ``run`` does before the run directory is created."""
    from robustlab.commands._options import at_least
    from robustlab.data.datasets import resolve_dataset

    resolve_dataset(args.dataset)
    _ks(args.ks)
    at_least(args, 1, "num_examples", "kappa", "budget", "parents")
    at_least(args, 0, "delta")


def command_inputs(args: argparse.Namespace, source: str | None
                   ) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of what the run reads, recorded with checksums: the dataset,
    the model, a --pairs file and the neighbourhood source (its default resolved)."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.models.registry import model_input
    from robustlab.studies.second_order.study import source_input

    ds = resolve_dataset(args.dataset)
    named = args.pairs in ("builtin", "checklist", "all")
    return [("dataset", ds.get("path") or ds.get("name"), "--dataset"),
            ("model", *model_input(args.model)),
            ("pairs", None if named else args.pairs, "--pairs"),
            ("neighbourhood", *source_input(source))]


def run(args: argparse.Namespace) -> int:
    check_out_dir(args.out)  # a file, under a file, read-only: stop first
    from robustlab.data.datasets import load_examples
    from robustlab.studies.second_order.bias import resolve_pairs, run_bias_study
    from robustlab.studies.second_order.neighbourhood import make_source

    ks = _ks(args.ks)
    pairs = resolve_pairs(args.pairs)
    protected = sorted({w for p in pairs for w in p})
    spec = args.source or (f"mlm:{args.mlm}" if args.mlm else None)
    from robustlab.models.device import resolve_device

    device = str(resolve_device(getattr(args, "device", "auto")))
    source = make_source(spec, blacklist=protected, kappa=args.kappa, delta=args.delta,
                         device=device)
    examples = load_examples(args.dataset, n=args.num_examples,
                             **load_options(args, format_dest="dataset_format"))
    from robustlab.models.registry import load_model

    model = load_model(args.model, device=device)
    name = getattr(model, "model_id", lambda: args.model)()
    summary = run_bias_study(
        predict=model.predict_proba, model_name=name, texts=[t for t, _ in examples],
        pairs=pairs, source=source, out=args.out, ks=ks, budget=args.budget,
        parents=args.parents, seed=args.seed, start=args.start,
        dataset_name=args.dataset, command=shlex.join(["robustlab", *sys.argv[1:]]),
        progress=not args.no_progress, model_spec=args.model,
        source_spec={"spec": spec or os.environ.get("ROBUSTLAB_NEIGHBOURHOOD") or "wordnet",
                     "blacklist": protected, "kappa": args.kappa, "delta": args.delta},
        inputs=command_inputs(args, spec),
        log=None if args.no_progress else
        (lambda m: echo(f"robustlab bias: {m}", file=sys.stderr, flush=True)),
        **executor_kwargs(args))
    echo(f"{'pair':>18s} " + " ".join(f"{'B(k=' + str(k) + ')':>10s}" for k in ks))
    for pair in dict.fromkeys("/".join(r["pair"]) for r in summary["table"]):
        row = {r["k"]: r for r in summary["table"] if "/".join(r["pair"]) == pair}
        cells = [("n/a" if row.get(k, {}).get("B") is None else f"{row[k]['B']:+.4f}")
                 for k in ks]
        echo(f"{pair:>18s} " + " ".join(f"{c:>10s}" for c in cells))
    echo(f"-> {args.out}")
    return 0 if summary["complete"] else 1
