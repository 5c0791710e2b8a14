"""Lazy re-exports for package ``__init__`` files (PEP 562).

A package lists which of its submodules defines each public name; the submodule is imported on
first access, so ``import robustlab.metrics`` or ``import robustlab.studies.second_order`` stays
cheap (no torch, no textattack) while ``from robustlab.studies.learnability import run_study``
keeps working.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, names: Mapping[str, str]
                 ) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for ``package``: ``names`` maps each exported name to
    the submodule (relative to ``package``) that defines it."""
    exported = sorted(names)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return exported

    return __getattr__, __dir__, exported
