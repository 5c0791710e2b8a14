"""``robustlab textattack``: TextAttack's own CLI, run in-process, with robustlab's names.

Everything after ``textattack`` goes to TextAttack's parser. Added for ``textattack attack``:
``--recipe so-beam|so-enum|so-random``; ``--model`` also takes a directory saved by
``robustlab train`` or a robustlab family; ``--dataset-from-huggingface`` (or ``--dataset``)
also takes a data file or ``demo`` (offline); second-order attacks print the patch pair, count
their summary for second-order results and add patch columns to ``--log-to-csv``
(robustlab.studies.second_order.textattack_cli).
"""

from __future__ import annotations

import argparse
import sys

from robustlab.options import add_quiet_option


def register(sub: argparse._SubParsersAction) -> None:
    t = sub.add_parser("textattack", add_help=False,
                       help="TextAttack's CLI with so-beam/so-enum/so-random and robustlab "
                       "models and data files",
                       description="Everything after `textattack` goes to TextAttack's CLI.")
    t.add_argument("-h", "--help", dest="ta_help", action="store_true",
                   help="TextAttack's own help")
    add_quiet_option(t, help="accepted by every command (before TextAttack's arguments); "
                     "TextAttack prints its own progress")
    t.add_argument("ta_args", nargs=argparse.REMAINDER)
    t.set_defaults(func=run)


def textattack_argv(ta_args: list[str], help_: bool = False) -> list[str]:
    """TextAttack's argv. ``--dataset X`` (robustlab's spelling; an ambiguous prefix for
    TextAttack's parser) becomes ``--dataset-from-huggingface X`` in ``attack``."""
    args = list(ta_args)
    if args[:1] == ["attack"]:
        for i, a in enumerate(args):
            if a == "--":
                break
            if a == "--dataset":
                args[i] = "--dataset-from-huggingface"
            elif a.startswith("--dataset="):
                args[i] = "--dataset-from-huggingface=" + a.split("=", 1)[1]
    return ["textattack", *(["--help"] if help_ else []), *args]


def refuse_endpoint(argv: list[str]) -> None:
    """A ``--model`` naming a model behind HTTP is refused in one line before TextAttack
    starts: its recipes and ``eval`` ask with no query estimate or budget
    (docs/endpoints.md)."""
    from robustlab.endpoints.card import is_endpoint
    from robustlab.errors import InputError

    for i, a in enumerate(argv):
        if a == "--":
            break
        value = argv[i + 1] if a == "--model" and i + 1 < len(argv) else \
            a.split("=", 1)[1] if a.startswith("--model=") else None
        if value is not None and is_endpoint(value):
            raise InputError(f"--model {value}: TextAttack's recipes ask a model with no query "
                             "estimate or budget; attack a model behind an endpoint with "
                             "robustlab attack --model CARD (--max-queries N, "
                             "docs/endpoints.md)")


def run(args: argparse.Namespace) -> int:
    from robustlab.studies.second_order.textattack_cli import cli_hooks, register_recipes

    argv = textattack_argv(args.ta_args, args.ta_help)
    refuse_endpoint(argv)
    register_recipes(argv)
    from textattack.commands.textattack_cli import main as ta_main

    old, sys.argv = sys.argv, argv
    try:
        with cli_hooks():
            ta_main()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = old
    return 0
