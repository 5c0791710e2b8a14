"""A study's command-line options, read from its configuration's fields.

As ``transformers.HfArgumentParser`` builds a parser from a dataclass and TextAttack's
``AttackArgs`` names options after fields, each field of a :class:`~robustlab.runs.study.StudyConfig`
that is an option carries an :class:`Option` in its metadata (``cli``, made by :func:`option`):
its flags, help, argparse keywords, how the parsed text becomes the field's value and how the
value is written back as options. Three generic functions do the rest for every kind:

* :func:`add_arguments` — the options, with the field's default (one default, written once);
* :func:`from_args` — the config of a parsed command line;
* :func:`argv` — the options that give a config (for people: shown and stored with the run,
  never parsed back).

A field that several flags make (a dataset and its file options, a model spec) names the
shared helpers that add and read them (``add``, ``read``, ``show``); a field without ``cli``
metadata is not an option (a value derived from others, or a display name).
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: metadata key of a field's :class:`Option`
KEY = "cli"
#: "no command-line default given": the field's own default is the option's
FIELD_DEFAULT = object()


@dataclass(frozen=True)
class Option:
    """How one config field is an option (see :func:`option`)."""

    flags: tuple[str, ...] = ()
    help: str | Callable[[Any], str] | None = None
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)
    default: Any = FIELD_DEFAULT
    parse: Callable[[Any], Any] | None = None
    add: Callable[[Any], None] | None = None
    read: Callable[[argparse.Namespace], Any] | None = None
    show: Callable[[Any, Any], list[str]] | None = None
    always: bool = False
    #: where the option appears in ``--help`` (default: its field's place)
    order: float | None = None
    #: where it appears in :func:`argv` (default: its field's place)
    argv_order: float | None = None
    #: whether the option exists for a command (``when(context)``, the keywords of
    #: :func:`add_arguments`: e.g. only for ``kind="learnability"``); None: always
    when: Callable[[dict[str, Any]], bool] | None = None

    @property
    def name(self) -> str:
        """The option as messages and :func:`argv` spell it: its long flag."""
        longs = [f for f in self.flags if f.startswith("--")]
        return (longs or list(self.flags) or [""])[0]


def option(*flags: str, help: str | Callable[[Any], str] | None = None,
           default: Any = FIELD_DEFAULT, parse: Callable[[Any], Any] | None = None,
           add: Callable[[Any], None] | None = None,
           read: Callable[[argparse.Namespace], Any] | None = None,
           show: Callable[[Any, Any], list[str]] | None = None, always: bool = False,
           order: float | None = None, argv_order: float | None = None,
           when: Callable[[dict[str, Any]], bool] | None = None,
           **kwargs: Any) -> dict[str, Any]:
    """Field metadata making the field an option: ``flags`` (``"-n", "--samples"``), ``help``
    (text, or a function of the field's default), argparse ``kwargs`` (``type``, ``metavar``,
    ``choices`` …) and ``default`` when the command line's default differs from the field's (a
    LIST option's text, or None for "computed"). ``parse`` turns the parsed value into the
    field's; ``add``/``read`` replace adding and reading for an option of several flags;
    ``show(value, config)`` writes the value as options (by default ``--flag value`` when it
    differs from the field's default, or always with ``always``); ``order`` and ``argv_order``
    place it in ``--help`` and in :func:`argv` when that differs from the field order (which the
    signature follows, so it never changes); ``when(context)`` says whether a command has the
    option at all (one config behind two commands)."""
    return {KEY: Option(tuple(flags), help, dict(kwargs), default, parse, add, read, show,
                        always, order, argv_order, when)}


def options(cls: Any) -> list[tuple[dataclasses.Field, Option]]:
    """The fields of ``cls`` that are options, in field order."""
    return [(f, f.metadata[KEY]) for f in dataclasses.fields(cls) if KEY in f.metadata]


def field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return None


def _placed(found: list[tuple[dataclasses.Field, Option]], attr: str
            ) -> list[tuple[dataclasses.Field, Option]]:
    def at(i: int) -> tuple[float, int]:
        v = getattr(found[i][1], attr)
        return (v if v is not None else i, i)

    return [found[i] for i in sorted(range(len(found)), key=at)]


def add_arguments(cls: Any, group: Any, **context: Any) -> None:
    """Add every option of ``cls`` to ``group`` (a parser or an argument group); ``context``
    (e.g. ``kind=…``) decides the options that only some commands have (``when``)."""
    for f, opt in _placed(options(cls), "order"):
        if opt.when is not None and not opt.when(context):
            continue
        if opt.add is not None:
            opt.add(group)
            continue
        default = field_default(f) if opt.default is FIELD_DEFAULT else opt.default
        kw = dict(opt.kwargs)
        if "action" not in kw or kw["action"] not in ("store_true", "store_false"):
            kw.setdefault("default", default)
        if opt.help is not None:
            kw["help"] = opt.help(default) if callable(opt.help) else opt.help
        group.add_argument(*opt.flags, dest=f.name, **kw)


def from_args(cls: Any, args: argparse.Namespace, **fixed: Any) -> Any:
    """The config of a parsed command line (``fixed``: fields the command sets itself). Fields
    resolved from several options at once come from the class's ``derive_options(args,
    **fixed)`` (a dict), when it has one. Not validated yet:
    :meth:`~robustlab.runs.study.StudyConfig.validate` checks it."""
    derive = getattr(cls, "derive_options", None)
    values = {**(derive(args, **fixed) if derive is not None else {}), **fixed}
    for f, opt in options(cls):
        if f.name in values:
            continue
        if opt.read is not None:
            values[f.name] = opt.read(args)
            continue
        raw = getattr(args, f.name)
        values[f.name] = opt.parse(raw) if opt.parse is not None else raw
    return cls(**values)


def _text(v: Any) -> str:
    return format(v, "g") if isinstance(v, float) else str(v)


def argv(config: Any, command: Sequence[str]) -> list[str]:
    """``command`` and the options that give ``config``: each option whose value differs from
    its field's default (or that is always written), in field order."""
    out = list(command)
    for f, opt in _placed(options(type(config)), "argv_order"):
        value = getattr(config, f.name)
        if not opt.always and value == field_default(f):
            continue
        if opt.show is not None:
            out += opt.show(value, config)
        elif isinstance(value, bool):
            out.append(opt.name if value else f"--no-{opt.name[2:]}")
        elif value is not None:
            out += [opt.name, _text(value)]
    return out


# ---- cell signatures ---------------------------------------------------------------------------

#: metadata key of a field's :class:`CellPart`
CELL_KEY = "cell"


@dataclass(frozen=True)
class CellPart:
    """How one config field enters each cell's signature (see :func:`in_cell`)."""

    name: str
    order: float
    show: Callable[[Any, Any], Any] | None = None


def in_cell(name: str, order: float, show: Callable[[Any, Any], Any] | None = None
            ) -> dict[str, Any]:
    """Field metadata: the field enters every cell's signature as ``name:value``, at place
    ``order`` (the order runs already stored their cells' signatures in: never change it),
    written by ``show(value, values)`` (default: as it is). A field without it is in no cell
    signature. Combine with :func:`option`: ``metadata={**option(...), **in_cell(...)}``."""
    return {CELL_KEY: CellPart(name, order, show)}


def cell_parts(cls: Any, values: Any) -> dict[str, Any]:
    """The ``name: value`` parts of a cell's signature that ``cls``'s fields make, in their
    order: ``values`` is the config itself, or a mapping from field name to the cell's own
    value of that field (one model of ``models``, the loaded dataset's fingerprint …)."""
    parts = []
    for f in dataclasses.fields(cls):
        part = f.metadata.get(CELL_KEY)
        if part is None:
            continue
        value = values[f.name] if isinstance(values, Mapping) else getattr(values, f.name)
        parts.append((part.order, part.name, part.show(value, values) if part.show else value))
    return {name: value for _, name, value in sorted(parts, key=lambda p: p[0])}


__all__ = ["CELL_KEY", "FIELD_DEFAULT", "KEY", "CellPart", "Option", "add_arguments", "argv",
           "cell_parts", "field_default", "from_args", "in_cell", "option", "options"]
