"""``robustlab recipe-path NAME``: the recipe file of the installed package, for TextAttack's
``--attack-from-file`` (``textattack attack --attack-from-file "$(robustlab recipe-path
so-beam)^build" ...``), so the stock CLI works outside a checkout."""

from __future__ import annotations

import argparse
import importlib.util

from robustlab.options import add_quiet_option
from robustlab.textfmt import echo

#: recipe name -> the stable module TextAttack loads (robustlab/recipes/so_*.py)
RECIPE_FILES = {"so-beam": "robustlab.recipes.so_beam", "so-enum": "robustlab.recipes.so_enum",
                "so-random": "robustlab.recipes.so_random"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recipe-path", help="print the file of a second-order recipe, for "
                       "`textattack attack --attack-from-file FILE^build`",
                       description="Print the absolute path of a recipe file of the installed "
                       "robustlab (TextAttack's --attack-from-file wants a file path).")
    p.add_argument("name", choices=sorted(RECIPE_FILES), help="recipe name")
    p.add_argument("--build", action="store_true",
                   help="append TextAttack's '^build' (the function that builds the attack)")
    add_quiet_option(p, help="accepted by every command; this one shows no progress")
    p.set_defaults(func=run)


def recipe_path(name: str) -> str:
    """Absolute path of the recipe's stable file, found without importing it (no TextAttack)."""
    spec = importlib.util.find_spec(RECIPE_FILES[name])
    if spec is None or not spec.origin:  # a broken installation
        from robustlab.errors import InputError

        raise InputError(f"recipe {name!r}: {RECIPE_FILES[name]} is not installed")
    from pathlib import Path

    return str(Path(spec.origin).resolve())


def run(args: argparse.Namespace) -> int:
    echo(recipe_path(args.name) + ("^build" if args.build else ""))
    return 0
