"""One package per study, named after what its paper measures, and the registry of their kinds.

* :mod:`robustlab.studies.learnability` — perturbation learnability / CENT, robustness and
  augmentation Δ (papers 000, 003; paper 001's robustness): kinds ``learnability``,
  ``robustness``.
* :mod:`robustlab.studies.second_order` — second-order attacks SO-Beam / SO-Enum and
  counterfactual bias (paper 002): kinds ``attack``, ``bias``.
* :mod:`robustlab.studies.cross_domain` — consistency across domains (paper 004): kind
  ``cross-domain``.
* :mod:`robustlab.studies.eval` — a trained model tested as it is under perturbations (no
  training): kind ``eval``.

Each package holds its configuration (a :class:`robustlab.runs.study.StudyConfig`), its cells
and cell function, its summary, figures, report section, command, TUI screen and the view the
screen reads (``view.py``), and declares its kinds
once (``KINDS``, :class:`robustlab.studies.kind.StudyKind`). :data:`PACKAGES` lists the
packages — a new kind is a new package and one line there — and everything that dispatches on a
run's kind reads :func:`kinds` / :func:`find`: :func:`study_from_config` rebuilds any kind from
a stored configuration (``robustlab resume``, the TUI), the report picks its section, the TUI
its screen, the command line the kind's own command. :mod:`robustlab.studies.stored` reads run
directories written by earlier versions.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from robustlab.errors import InputError
from robustlab.studies.kind import StudyKind

#: the study packages, one line per package: their ``KINDS`` are every kind robustlab runs (a
#: name from a run directory only ever selects one of these; it never names code to import)
PACKAGES = [
    "robustlab.studies.learnability",
    "robustlab.studies.second_order",
    "robustlab.studies.cross_domain",
    "robustlab.studies.eval",
]


def kinds() -> dict[str, StudyKind]:
    """Every declared kind by its name, in :data:`PACKAGES` order (importing a study package
    loads no torch: its ``__init__`` only declares)."""
    out: dict[str, StudyKind] = {}
    for package in PACKAGES:
        for kind in importlib.import_module(package).KINDS:
            if kind.name in out:
                raise TypeError(f"study kind {kind.name!r} is declared twice ({package})")
            out[kind.name] = kind
    return out


def find(name: Any) -> StudyKind | None:
    """The kind a run of stored kind ``name`` belongs to (by name or alias), or None."""
    if not isinstance(name, str):
        return None
    for kind in kinds().values():
        if name == kind.name or name in kind.aliases:
            return kind
    return None


def study_from_config(kind: str, config: Mapping[str, Any], *, trusted: bool = False) -> Any:
    """The study of ``kind`` whose :meth:`~robustlab.runs.study.StudyConfig.to_dict` is
    ``config`` (inputs record removed). ``trusted`` only for a configuration the user typed."""
    declared = find(kind)
    if declared is None:
        known = sorted(n for k in kinds().values() for n in (k.name, *k.aliases))
        raise InputError(f"unknown study kind {str(kind)[:40]!r}; robustlab runs "
                         f"{', '.join(known)}")
    study = declared.rebuild(config, trusted)
    if study.kind != kind:
        raise InputError(f"the stored configuration is a {study.kind} study, not {kind}")
    return study


__all__ = ["PACKAGES", "StudyKind", "find", "kinds", "study_from_config"]
