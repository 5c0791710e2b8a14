"""Which perturbations to augment with, per model: paper 000's H2 turned into advice.

H2 says post-augmentation benefit Δ (A2 − A1) is largest where learnability is high. The advice
ranks each model's perturbations by the *expected* benefit of augmenting with them:

* the **measured Δ** where exp 2 ran for that pair (direct evidence, always preferred);
* otherwise the Δ **predicted from learnability** by a least-squares line fitted over the pairs
  that have both, but only when the learnability–Δ relation is trustworthy;
* otherwise the pair is ordered by learnability alone and marked as a hypothesis.

Learnability is the full average (log-AUC) or, when a run only has it, the quick estimate
(``learnability_estimate``). The relation it rests on is reported beside the advice: Spearman ρ,
its p-value (exact at small n, :func:`robustlab.metrics.ranking.spearman_test`) and n, with a
verdict that says plainly when it is too weak to trust. Models at chance accuracy are flagged:
their learnability and robustness mean nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from robustlab.metrics.ranking import spearman_test

#: the relation is trusted when ρ > 0, p < ALPHA and n ≥ MIN_N
ALPHA = 0.05
MIN_N = 5
#: a model is "at chance" when its clean accuracy is within this margin of 1/n_classes
CHANCE_MARGIN = 0.03
#: a seed "under-trained" when its clean accuracy A0 is more than this (10 points) below the
#: median A0 of the same model's other seeds (docs/learnability.md, "Reading the output")
UNDERTRAINED_MARGIN = 0.10


def _num(v: Any) -> float | None:
    if isinstance(v, Mapping):
        v = v.get("mean", v.get("value"))
    if isinstance(v, (int, float)) and math.isfinite(float(v)):
        return float(v)
    return None


def learnability_of(pair: Mapping[str, Any]) -> tuple[float | None, str | None]:
    """(value, source): the full average learnability, else the quick estimate if present."""
    full = _num(pair.get("avg_learnability"))
    if full is not None:
        return full, "full"
    est = _num(pair.get("learnability_estimate"))
    return (est, "estimate") if est is not None else (None, None)


def chance_models(pairs: Sequence[Mapping[str, Any]], n_classes: int | None = None
                  ) -> dict[str, float]:
    """{model: clean accuracy} for models whose mean exp-0 accuracy is at chance level.

    Chance is 1/n_classes (2 when the run does not say). Such a model did not learn the task, so
    a learnability of 0.000 or a robustness of 0.000 describes the trainer, not the perturbation.
    """
    chance = 1.0 / (n_classes or 2)
    accs: dict[str, list[float]] = {}
    for r in pairs:
        a = _num(r.get("accuracy_standard"))
        if a is not None:
            accs.setdefault(r["model"], []).append(a)
    return {m: sum(v) / len(v) for m, v in accs.items()
            if v and sum(v) / len(v) <= chance + CHANCE_MARGIN}


def undertrained_seeds(pairs: Sequence[Mapping[str, Any]]
                       ) -> dict[tuple[str, Any], tuple[float, float]]:
    """{(model, seed): (its clean accuracy A0, the median A0 of the model's other seeds)} for
    seeds whose A0 is more than :data:`UNDERTRAINED_MARGIN` below that median.

    One seed's model that under-trained (A0 0.67 where the other seeds reach 0.99) drags every
    mean of its model; the means stay as measured (the run's numbers are not edited), but the
    seed is named so the reader can rerun with more ``--steps`` or leave it out with ``--seeds``.
    The other seeds' median (not the mean of all) keeps one bad seed from hiding itself; at
    least one other seed is needed.
    """
    per_model: dict[str, dict[Any, float]] = {}
    for r in pairs:
        a0 = r.get("accuracy_standard") or {}
        values = a0.get("values") if isinstance(a0, Mapping) else None
        seeds = r.get("seeds") or []
        if not values or len(values) != len(seeds):
            continue
        mine = per_model.setdefault(r["model"], {})
        for seed, v in zip(seeds, values, strict=True):
            if v is not None and math.isfinite(float(v)):
                mine.setdefault(seed, float(v))  # exp 0 is per (model, seed): same in every pair
    out: dict[tuple[str, Any], tuple[float, float]] = {}
    for model, accs in per_model.items():
        for seed, a0 in accs.items():
            others = sorted(v for s, v in accs.items() if s != seed)
            if not others:
                continue
            mid = len(others) // 2
            median = others[mid] if len(others) % 2 else (others[mid - 1] + others[mid]) / 2
            if median - a0 > UNDERTRAINED_MARGIN:
                out[(model, seed)] = (a0, median)
    return out


def relation(pairs: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The learnability–Δ relation over every pair with both: ρ, p, n, p_method, trusted,
    verdict and a least-squares slope/intercept (for predicting Δ when trusted)."""
    # one scale only: the full log-AUC (0..3) and the quick estimate (0..1) do not mix
    use = "full" if any(learnability_of(r)[1] == "full" for r in pairs) else "estimate"
    xs, ys = [], []
    for r in pairs:
        x, src = learnability_of(r)
        y = _num(r.get("delta"))
        if x is not None and y is not None and src == use:
            xs.append(x)
            ys.append(y)
    rel = spearman_test(xs, ys)
    rho, p, n = rel["rho"], rel["p_value"], rel["n"]
    trusted = rho is not None and rho > 0 and p is not None and p < ALPHA and n >= MIN_N
    has_x = any(learnability_of(r)[0] is not None for r in pairs)
    has_y = any(_num(r.get("delta")) is not None for r in pairs)
    if n == 0 and not has_x:
        verdict = ("no learnability was measured (a robustness-only run): the ranking is by "
                   "measured Δ alone")
    elif n == 0 and not has_y:
        verdict = ("no pair has a measured Δ (exp 2 did not run): the ranking by learnability "
                   "is paper 000's hypothesis H2, not evidence from this run")
    elif n == 0:
        verdict = "no pair has both learnability and a measured Δ: the relation is unknown"
    elif rho is None:
        verdict = (f"ρ undefined (n={n}; needs ≥ 3 pairs that vary): too weak to trust, rank "
                   "by measured Δ where it exists")
    elif trusted:
        verdict = (f"ρ = {rho:+.3f}, p = {p:.3g} ({rel['p_method']}, n={n}): learnability "
                   "predicts the benefit of augmentation in this run")
    elif rho <= 0:
        verdict = (f"ρ = {rho:+.3f}, p = {p:.3g} ({rel['p_method']}, n={n}): learnability does "
                   "NOT predict the benefit here (relation not positive); trust measured Δ only")
    else:
        why = f"n={n} < {MIN_N}" if n < MIN_N else f"p ≥ {ALPHA}"
        verdict = (f"ρ = {rho:+.3f}, p = {p:.3g} ({rel['p_method']}, n={n}): too weak to trust "
                   f"({why}); learnability-only rankings are a hypothesis")
    out = {**rel, "trusted": trusted, "verdict": verdict, "slope": None, "intercept": None,
           "learnability": use}
    if trusted and len(set(xs)) >= 2:
        import numpy as np

        slope, intercept = np.polyfit(np.asarray(xs), np.asarray(ys), 1)
        out["slope"], out["intercept"] = float(slope), float(intercept)
    return out


def advise(pairs: Sequence[Mapping[str, Any]], n_classes: int | None = None) -> dict[str, Any]:
    """``{"relation": …, "chance": {model: acc}, "models": {model: [row, …]}}``; rows best
    first: {perturbation, learnability, learnability_source, delta, expected_delta, basis}."""
    rel = relation(pairs)
    chance = chance_models(pairs, n_classes)
    models: dict[str, list[dict[str, Any]]] = {}
    for r in pairs:
        x, src = learnability_of(r)
        d = _num(r.get("delta"))
        if d is not None:
            n = (r.get("delta") or {}).get("n") if isinstance(r.get("delta"), Mapping) else None
            exp, basis = d, "measured Δ" + (f" ({n} seed{'s' if n != 1 else ''})" if n else "")
        elif x is not None and rel["slope"] is not None and src == rel["learnability"]:
            exp, basis = rel["slope"] * x + rel["intercept"], "Δ predicted from learnability"
        else:
            exp, basis = None, "learnability only (hypothesis H2)"
        if r["model"] in chance:
            basis = "model at chance: meaningless"
        models.setdefault(r["model"], []).append({
            "perturbation": r["perturbation"], "learnability": x, "learnability_source": src,
            "delta": d, "expected_delta": exp, "basis": basis})
    for rows in models.values():
        rows.sort(key=lambda w: (w["expected_delta"] is None,
                                 -(w["expected_delta"] if w["expected_delta"] is not None else 0),
                                 -(w["learnability"] if w["learnability"] is not None else -1e9),
                                 w["perturbation"]))
    return {"relation": rel, "chance": chance, "models": models}


def advice_text(adv: Mapping[str, Any], top: int | None = None) -> str:
    """Plain-text advice (``robustlab correlate`` stdout and the TUI)."""
    from robustlab.textfmt import align

    lines = ["augmentation advice (perturbations ranked by expected benefit of augmenting with "
             "them)", f"  relation learnability–Δ: {adv['relation']['verdict']}"]
    for m, acc in adv["chance"].items():
        lines.append(f"  WARNING {m}: clean accuracy {acc:.3f} is at chance level; its "
                     "learnability and robustness mean nothing (the model did not learn)")
    for model, rows in adv["models"].items():
        lines.append(f"\n{model}:")
        body = [[str(i + 1), r["perturbation"], _f(r["learnability"]) + (
            " (est.)" if r["learnability_source"] == "estimate" else ""),
            _f(r["delta"]), _f(r["expected_delta"]), r["basis"]]
            for i, r in enumerate(rows[:top] if top else rows)]
        lines.append(align(["#", "perturbation", "learnability", "measured Δ", "expected Δ",
                            "basis"], body, rule=True))
    return "\n".join(lines)


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:+.3f}"
