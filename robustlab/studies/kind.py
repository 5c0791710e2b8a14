"""What a study kind declares about itself, once, in its package's ``__init__``.

A kind is one package (``robustlab/studies/<kind>/``) whose ``__init__`` sets ``KINDS`` to its
:class:`StudyKind` declarations; :mod:`robustlab.studies` lists the packages (one line each) and
every place that dispatches on a run's kind — ``robustlab resume``, ``robustlab report``, the
command line, the TUI's results screens — reads these declarations instead of a table of its own.

A declaration names its parts by ``module:attribute`` *inside its own package*, so declaring a
kind imports nothing heavy, and each part is loaded only by the layer that uses it (the TUI
loads the screen, the report its section, the command line its command). The parts:

* ``study`` — ``(config, trusted: bool) -> Study``: the study of a config object (from
  ``robustlab.run``) or of a stored configuration (the run row's, inputs record removed; read
  as untrusted data unless ``trusted``);
* ``section`` — ``(runs: Sequence[RunData]) -> blocks``: the kind's section of ``robustlab
  report`` (built from :mod:`robustlab.report.doc` and :mod:`robustlab.report.sections`);
  without one the report shows the summary's fields;
* ``screen`` — a TUI screen class taking the run directory: the run's results; without one the
  TUI shows the generic summary screen;
* ``command`` — a module with ``register(subparsers)`` adding the kind's command(s) to
  ``robustlab`` (listed by the kind's name; ``robustlab <kind name or alias>`` loads only it).
  :mod:`robustlab.commands` keeps the practitioner tools that are no study kind.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class StudyKind:
    """One run kind, as its package declares it (module docstring)."""

    #: the run kind stored in the run row (``robustlab resume`` rebuilds it by this name)
    name: str
    #: the declaring package (``__name__`` of its ``__init__``): parts are found inside it
    package: str
    #: ``module:function`` ``(config, trusted) -> Study`` for a stored configuration (a dict,
    #: untrusted data unless ``trusted``) or a config object given from Python
    study: str
    #: the heading of the kind's report section
    title: str = ""
    #: other stored kinds shown as this one (``robustness`` and ``cent`` are learnability's)
    aliases: tuple[str, ...] = ()
    #: ``module:function`` of the report section, or None (the generic section)
    section: str | None = None
    #: ``module:Class`` of the TUI results screen, or None (the generic screen)
    screen: str | None = None
    #: ``module`` registering the kind's command(s), or None (the command lives elsewhere)
    command: str | None = None
    #: whether its report section reads every cell's records (``RunData.records``: they can be
    #: large, so they are read only for such kinds)
    records: bool = False

    def part(self, which: str) -> Any:
        """The declared part ``which`` (``study``, ``section``, ``screen``), imported now; None
        when the kind declares none. Only names the package itself declared are imported."""
        ref = getattr(self, which)
        if ref is None:
            return None
        module, _, attr = ref.partition(":")
        mod = importlib.import_module(f"{self.package}.{module}")
        return getattr(mod, attr) if attr else mod

    def rebuild(self, config: Any, trusted: bool) -> Any:
        """The study whose stored configuration is ``config`` (see :attr:`study`)."""
        return self.part("study")(config, trusted)


__all__ = ["StudyKind"]
