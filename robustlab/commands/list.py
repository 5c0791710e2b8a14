"""``robustlab list perturbations [--json]``: what is available, straight from the registries.

Other registries (recipes, models, ...) plug in by adding an entry to :data:`LISTERS`: a function
returning rows (dicts) and the columns shown in the table.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from robustlab.options import add_quiet_option
from robustlab.textfmt import align, echo


def _perturbations() -> list[dict[str, Any]]:
    from robustlab.perturbations.registry import describe

    return describe()


def _fmt_params(params: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "-"


def _textattack() -> list[dict[str, Any]]:
    from robustlab.integrations.textattack import available_components

    return available_components()


#: name -> (rows function, table columns, footer)
def _models() -> list[dict[str, Any]]:
    from robustlab.models.registry import PRETRAINED, TORCH_FAMILIES

    return [{"name": n, "kind": "pretrained" if n in PRETRAINED else "from scratch",
             "summary": d} for n, d in {**TORCH_FAMILIES, **PRETRAINED}.items()]


LISTERS: dict[str, tuple[Callable[[], list[dict[str, Any]]], tuple[str, ...], str]] = {
    "perturbations": (
        _perturbations,
        ("name", "level", "asymmetric", "label_preserving", "source", "params", "summary"),
        "Also accepted by --perturbation: textattack:<Transformation or Augmenter>[:k=v,...] "
        "(e.g. textattack:WordSwapWordNet) and nlaugmenter:<module.ClassName>[:k=v,...].\n"
        "asymmetric = g(g(x)) != x (valid for learnability); see docs/perturbations.md.\n"
        "Preset for --perturbations lists: papers = the eight learnability perturbations as the "
        "papers ran them (NL-Augmenter's own code, reseed=False, when it is on PYTHONPATH).",
    ),
    "models": (
        _models,
        ("name", "kind", "summary"),
        "--model also takes NAME:key=value,... (e.g. textrnn:hidden=128), a Hugging Face "
        "checkpoint (a directory with config.json, hf:ID or a hub id) or a directory saved by "
        "`robustlab train`; see docs/models-and-data.md.",
    ),
    "textattack": (
        _textattack,
        ("name", "kind", "level", "summary"),
        "Use with --perturbation textattack:NAME[:k=v,...]; some need resources that are not "
        "offline (counter-fitted embeddings, hub models): see docs/adapters.md.",
    ),
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "list",
        help="list perturbations (and other registered components)",
        description="List what robustlab can use, read from its registries.",
    )
    p.add_argument("what", choices=sorted(LISTERS),
                   help="perturbations (robustlab's registry), models (the --model families) or textattack (TextAttack "
                   "transformations/augmenters usable as textattack:NAME; imports TextAttack)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON array of objects instead of a table (for scripts)")
    add_quiet_option(p, help="accepted by every command; this one shows no progress")
    p.set_defaults(func=run)


def _table(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, dict):
            return _fmt_params(v)
        if isinstance(v, bool):
            return "yes" if v else "no"
        return str(v) if v not in (None, "") else "-"

    return align(columns, [[cell(r.get(c)) for c in columns] for r in rows])


def run(args: argparse.Namespace) -> int:
    fn, columns, footer = LISTERS[args.what]
    rows = fn()
    if args.json:
        text = json.dumps(rows, indent=2, default=str)
    else:
        text = _table(rows, columns) + (f"\n\n{footer}" if footer else "")
    try:
        echo(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `robustlab list perturbations | head`
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
