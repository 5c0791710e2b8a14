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
and cell function, its summary, figures and report section; :func:`study_from_config` rebuilds
any kind from a stored configuration (``robustlab resume``, the TUI), and
:mod:`robustlab.studies.stored` reads run directories written by earlier versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from robustlab.errors import InputError


def _learnability(config: Mapping[str, Any], trusted: bool) -> Any:
    from robustlab.studies.learnability.config import LearnabilityStudy
    from robustlab.studies.learnability.study import Learnability

    return Learnability(LearnabilityStudy.from_dict(config, trusted=trusted))


def _python_only(config: Mapping[str, Any]) -> None:
    model = config.get("model")
    if isinstance(model, str) and model.startswith("object:"):
        raise InputError(f"this run was made from Python with a model object "
                         f"({model[7:][:60]!r}); resume it from Python with the same object")


def _attack(config: Mapping[str, Any], trusted: bool) -> Any:
    from robustlab.studies.second_order.config import AttackConfig
    from robustlab.studies.second_order.study import Attack

    _python_only(config)
    return Attack(AttackConfig.from_dict(config, trusted=trusted))


def _bias(config: Mapping[str, Any], trusted: bool) -> Any:
    from robustlab.studies.second_order.bias import Bias
    from robustlab.studies.second_order.config import BiasConfig

    _python_only(config)
    return Bias(BiasConfig.from_dict(config, trusted=trusted))


def _cross_domain(config: Mapping[str, Any], trusted: bool) -> Any:
    from robustlab.studies.cross_domain.clf import Clf, ClfStudy
    from robustlab.studies.cross_domain.study import MT, MTStudy, Scores, ScoresStudy

    task = config.get("task") if isinstance(config, Mapping) else None
    kinds = {"mt": (MT, MTStudy), "clf": (Clf, ClfStudy), "scores": (Scores, ScoresStudy)}
    if task not in kinds:
        raise InputError(f"unknown cross-domain task {str(task)[:20]!r}; robustlab runs "
                         f"{', '.join(kinds)}")
    study, config_cls = kinds[task]
    return study(config_cls.from_dict(config, trusted=trusted))


def _eval(config: Mapping[str, Any], trusted: bool) -> Any:
    from robustlab.studies.eval.config import EvalConfig
    from robustlab.studies.eval.study import Eval

    _python_only(config)
    return Eval(EvalConfig.from_dict(config, trusted=trusted))


#: run kind -> how a study of that kind is rebuilt from its stored configuration (code chosen
#: by a name from the store, never a name that picks code: unknown kinds are refused)
KINDS = {
    "learnability": _learnability,
    "robustness": _learnability,
    "attack": _attack,
    "bias": _bias,
    "cross-domain": _cross_domain,
    "eval": _eval,
}


def study_from_config(kind: str, config: Mapping[str, Any], *, trusted: bool = False) -> Any:
    """The study of ``kind`` whose :meth:`~robustlab.runs.study.StudyConfig.to_dict` is
    ``config`` (inputs record removed). ``trusted`` only for a configuration the user typed."""
    build = KINDS.get(kind) if isinstance(kind, str) else None
    if build is None:
        raise InputError(f"unknown study kind {str(kind)[:40]!r}; robustlab runs "
                         f"{', '.join(sorted(KINDS))}")
    study = build(config, trusted)
    if study.kind != kind:
        raise InputError(f"the stored configuration is a {study.kind} study, not {kind}")
    return study
