"""``robustlab.run(config, out, **how)``: the one Python entry point of every study kind.

``config`` is a study's configuration (``EvalConfig``, ``LearnabilityStudy``, ``AttackConfig``,
``BiasConfig``, a cross-domain config …; its kind's package builds the study, see
:class:`robustlab.studies.kind.StudyKind`) or a study object already holding runtime data (an
``Eval`` with a model object, an ``MT`` with its systems' outputs). ``how`` is how it runs, never
what it computes — the fields of :class:`robustlab.runs.study.RunContext`: ``executor``,
``workers``, ``device``, ``progress``, ``plots``, ``threads``, ``ray_address``,
``gpus_per_task``, ``cpus_per_task``, ``log``, and ``trusted`` (True by default: specs written
in the caller's own Python may name ``module:Class``). The context is stored in the run's meta,
outside every signature, so ``robustlab resume`` and the TUI continue the run the same way.
"""

from __future__ import annotations

import os
from typing import Any

from robustlab.runs.study import HOW, Outcome, context, run_study


def run(config: Any, out: str | os.PathLike[str], **how: Any) -> Outcome:
    """Run ``config`` into ``out`` (resuming it when ``out`` holds the same study) and return
    the :class:`~robustlab.runs.study.Outcome`: summary, completeness, failed cells."""
    from robustlab.errors import InputError
    from robustlab.studies import find

    ctx = context(**how)
    if hasattr(config, "plan") and hasattr(config, "config"):  # a study object
        study = config
    else:
        kind = find(getattr(config, "study_kind", lambda: None)())
        if kind is None:
            raise InputError(f"robustlab.run: {type(config).__name__} is not a study "
                             "configuration of a kind robustlab runs")
        study = kind.rebuild(config, ctx.trusted)
    return run_study(study, out, ctx)


__all__ = ["HOW", "run"]
