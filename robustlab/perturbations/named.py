"""The table of registered perturbation classes, and the checks on a class a spec names.

Kept apart from :mod:`robustlab.perturbations.registry` (which loads the built-in modules and
the integrations by name): the built-ins register themselves here and the integrations check
classes here, so nothing the registry loads imports the registry back.
"""

from __future__ import annotations

import importlib
from typing import Any

from robustlab.perturbations.base import Perturbation, PerturbationError

#: name -> class of every registered perturbation (built-ins, entry points)
REGISTERED: dict[str, type[Perturbation]] = {}


def register(cls: type[Perturbation]) -> type[Perturbation]:
    """Class decorator: make ``cls`` available under ``cls.name``."""
    if not cls.name:
        raise TypeError(f"{cls.__name__} has no name")
    other = REGISTERED.get(cls.name)
    if other is not None and other is not cls and other.__qualname__ != cls.__qualname__:
        raise TypeError(f"perturbation name {cls.name!r} is taken by {other.__qualname__}")
    REGISTERED[cls.name] = cls
    return cls


def refuse_untrusted(spec: str, trusted: bool) -> None:
    """A class named by its import path is code the user chose to run: accepted only from the
    command line being run, never from a stored run, a plan or a TUI form (those are data)."""
    if not trusted:
        raise PerturbationError(
            f"{spec!r} names a class by its import path, which is accepted only when typed on "
            "the command line; a stored run, a plan or a TUI form may name registered "
            "perturbations only (`robustlab list perturbations`). To use it, pass it yourself "
            "on the command line (--perturbations or -p)")


def import_class(module_name: str, cls_name: str, spec: str) -> type:
    """``module_name.cls_name`` imported (a trusted spec only), or one clear error."""
    if not module_name or not cls_name.isidentifier() or not all(
            part.isidentifier() for part in module_name.split(".")):
        raise PerturbationError(f"{spec}: expected package.module:ClassName")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = getattr(exc, "name", None)
        if isinstance(exc, ModuleNotFoundError) and missing and not (
                missing == module_name or module_name.startswith(missing + ".")):
            # the module is there; one of its own dependencies is not installed
            raise PerturbationError(f"{spec}: {module_name} needs the module {missing!r}, "
                                    "which is not installed") from None
        raise PerturbationError(f"{spec}: cannot import {module_name} ({exc}); is it on "
                                "PYTHONPATH?") from None
    cls = getattr(module, cls_name, None)
    if not isinstance(cls, type):
        raise PerturbationError(f"{spec}: {module_name} has no class {cls_name}")
    return cls


def _stdlib(cls: type) -> bool:
    import sys

    top = (cls.__module__ or "").partition(".")[0]
    return top in sys.stdlib_module_names or top == "builtins"


def check_class(cls: Any, base: type | tuple[type, ...], what: str, spec: str) -> type:
    """``cls`` if it is a concrete subclass of ``base`` defined outside the standard library;
    else one error naming what the slot expects. Nothing else named by a spec is ever called."""
    import inspect

    if (not isinstance(cls, type) or not issubclass(cls, base) or cls in (
            base if isinstance(base, tuple) else (base,)) or inspect.isabstract(cls)
            or _stdlib(cls)):
        shown = f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else repr(cls)
        raise PerturbationError(f"{spec}: {shown} is not {what}; refused (nothing was called)")
    return cls
