"""Study forms derived from the command line itself (headless).

The new-study screen does not keep its own list of options: it reads the argparse parser of
``robustlab`` (``robustlab.cli.build_parser``, handed in by ``robustlab tui``), so every study subcommand with an ``--out``
option is a recipe and each of its options is a field with the command's own default, choices and
help. A form's values become an argv; validation is the real parser parsing that argv. What the
TUI launches is therefore exactly the copyable command line it shows.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex
import time
from dataclasses import dataclass, field
from typing import Any

SKIP_DESTS = {"help", "func", "version"}


@dataclass
class Field:
    dest: str
    flag: str | None  # None for a positional
    kind: str  # text | flag | choice | list
    default: Any
    help: str = ""
    choices: list[str] = field(default_factory=list)
    required: bool = False
    negate: bool = False  # store_false flag

    @property
    def label(self) -> str:
        return self.flag or self.dest

    def default_text(self) -> str:
        d = self.default
        if d is None or d is argparse.SUPPRESS:
            return ""
        if isinstance(d, (list, tuple)):
            return " ".join(map(str, d))
        return str(d)


@dataclass
class Recipe:
    name: str  # "learnability", "cross-domain mt"
    path: list[str]  # the subcommand words
    help: str
    fields: list[Field]
    parser: argparse.ArgumentParser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    out = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            for name, sub in action.choices.items():
                out[name] = (sub, helps.get(name, ""))
    return out


def _fields(parser: argparse.ArgumentParser) -> list[Field]:
    fields = []
    for a in parser._actions:
        if a.dest in SKIP_DESTS or isinstance(a, (argparse._HelpAction,
                                                  argparse._SubParsersAction)):
            continue
        flag = next((s for s in a.option_strings if s.startswith("--")),
                    a.option_strings[0] if a.option_strings else None)
        if isinstance(a, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            kind = "flag"
        elif a.choices is not None and a.nargs in (None, "?"):
            kind = "choice"
        elif a.nargs in ("+", "*") or (isinstance(a.nargs, int) and a.nargs > 1):
            kind = "list"
        else:
            kind = "text"
        fields.append(Field(
            dest=a.dest, flag=flag, kind=kind, default=a.default,
            help=(a.help or "").replace("%(default)s", str(a.default)),
            choices=[str(c) for c in a.choices] if a.choices else [],
            required=bool(a.required) or not a.option_strings and a.nargs not in ("?", "*"),
            negate=isinstance(a, argparse._StoreFalseAction)))
    return fields


def recipes(parser: argparse.ArgumentParser) -> list[Recipe]:
    """Every study subcommand (those writing a run directory, i.e. with ``--out``)."""
    out: list[Recipe] = []

    def walk(p: argparse.ArgumentParser, path: list[str], helptext: str) -> None:
        subs = _subparsers(p)
        if subs:
            for name, (sub, h) in subs.items():
                if name in ("tui",):
                    continue
                walk(sub, [*path, name], h)
            return
        fields = _fields(p)
        if path and any(f.flag == "--out" for f in fields):
            out.append(Recipe(" ".join(path), path, helptext or p.description or "", fields, p))

    walk(parser, [], "")
    seen: set[int] = set()  # aliases (cent = learnability) share a parser: list it once
    unique = []
    for r in out:
        if id(r.parser) not in seen:
            seen.add(id(r.parser))
            unique.append(r)
    return unique


def default_out(recipe: Recipe, root: str = "runs", now: float | None = None) -> str:
    """A fresh run directory name for the form (``now``: the app's clock, fixed in tests)."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{root}/{'-'.join(recipe.path)}-{stamp}"


def build_argv(recipe: Recipe, values: dict[str, Any]) -> list[str]:
    """The argv for the form values; options equal to their default are left out."""
    argv = list(recipe.path)
    positionals: list[str] = []
    for f in recipe.fields:
        v = values.get(f.dest)
        if f.kind == "flag":
            if bool(v) and f.flag:
                argv.append(f.flag)
            continue
        text = ("" if v is None else str(v)).strip()
        if not text or (text == f.default_text() and not f.required):
            continue
        parts = shlex.split(text) if f.kind == "list" else [text]
        if f.flag is None:
            positionals += parts
        else:
            argv += [f.flag, *parts]
    return argv + positionals


def validate(recipe: Recipe, argv: list[str], parser: argparse.ArgumentParser) -> str | None:
    """None if the real command-line parser accepts ``argv``, else its error message."""
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit:
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        return lines[-1] if lines else "invalid options"
    return None


def check(recipe: Recipe, argv: list[str], parser: argparse.ArgumentParser
          ) -> tuple[str | None, str | None]:
    """(error, dest of the field at fault) for a form's argv; (None, None) when it may launch.

    Two steps, both the command's own: the real parser parses ``argv`` (types, choices, required
    options), then the command's pre-run checks run on the parsed options without touching the
    disk (``--seeds 0,x``, an unknown perturbation, a missing data file are caught here, not by a
    worker that dies after launch).
    """
    error = validate(recipe, argv, parser)
    if error is None:
        with contextlib.redirect_stderr(io.StringIO()):
            args = parser.parse_args(argv)
        args.trusted = False  # a form's specs are data: registered names only (robustlab.trust)
        try:
            semantic_check(args)
            refuse_endpoint_key(args)
        except Exception as exc:  # noqa: BLE001 - any refusal is shown beside its field
            error = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return error, (field_of(recipe, error) if error else None)


def refuse_endpoint_key(args: argparse.Namespace) -> None:
    """A form's model is data (it may come from a stored run): a card that sends a key
    (``api_key_env``) is started from the command line, where the user names it; a card
    without one, or a URL, launches from the form (docs/endpoints.md)."""
    from robustlab.endpoints.card import is_endpoint, parse_spec
    from robustlab.errors import InputError

    model = getattr(args, "model", None)
    for spec in model if isinstance(model, list) else [model]:
        if isinstance(spec, str) and is_endpoint(spec):
            card = parse_spec(spec)
            if card.api_key_env:
                raise InputError(f"--model {spec}: the card sends the key in "
                                 f"${card.api_key_env} to {card.host}; a form never sends a "
                                 "key: start it from the command line (robustlab "
                                 f"{getattr(args, 'command', 'eval')} --model {spec} …)")


def semantic_check(args: argparse.Namespace) -> None:
    """The pre-run checks of the command ``args`` parsed into (raise on a bad option).

    Every command declares them with ``set_defaults(check=fn)`` (the study commands through
    :func:`robustlab.studies.learnability.command.add_study_options`), the same hook
    :func:`robustlab.cli.main` runs before the handler.
    """
    hook = getattr(args, "check", None)
    if callable(hook):
        hook(args)


def field_of(recipe: Recipe, error: str) -> str | None:
    """The field an error message names (its first ``--option``, aliases included)."""
    import re

    for flag in re.findall(r"--[A-Za-z0-9][A-Za-z0-9-]*", error):
        action = recipe.parser._option_string_actions.get(flag)
        if action is not None:
            return action.dest
    return None


def hints(fld: Field) -> str:
    """Names a field can take, from the registries (perturbations, models) when available."""
    name = fld.dest.lower()
    try:
        if "pert" in name:
            from robustlab.perturbations.registry import describe

            return "available: " + ", ".join(r["name"] for r in describe())
        if name.startswith("model"):
            from robustlab.models import registry  # may not exist yet: degrade to no hint

            return "available: " + ", ".join(registry.available_models())
    except Exception:  # noqa: BLE001 - a hint is optional
        return ""
    return ""
