"""CheckList (0.0.11): robustlab perturbations inside CheckList suites, and back.

* :func:`checklist_fn` turns a perturbation into a ready ``perturb_fn`` for
  ``checklist.perturb.Perturb.perturb(data, fn, ...)``: it returns the perturbed string (or a
  list of ``n`` distinct ones), and ``None`` when the perturbation cannot change the example, which
  is how CheckList is told to skip it. ``meta=True`` returns ``(outputs, meta)`` as CheckList
  expects. spaCy ``Doc`` examples are read through ``.text``; tuples of strings (QQP/NLI pairs)
  are perturbed element-wise (``fields`` picks the elements).
* :func:`perturb_data` builds the same ``{'data': [[original, perturbed...], ...], 'meta': ...}``
  structure *without* importing ``checklist.perturb`` (which pulls in ``pattern`` and its
  import-time NLTK downloads; :func:`robustlab.resources.checklist_perturb` imports it offline when
  you want CheckList's own functions). ``nsamples`` is drawn with the seed, not numpy's global RNG.
* :func:`inv_test` and :func:`dir_test` build ``checklist.test_types.INV`` / ``DIR`` tests from a
  perturbation and data; they carry name/capability/description, so ``suite.add(test)`` puts them in
  an existing ``TestSuite`` and ``suite.run(PredictorWrapper.wrap_softmax(f))`` runs them. DIR's
  default expectation for a perturbation that is not label-preserving (negation) is "the
  prediction changes" (:func:`expect_change`); pass ``expect=`` for monotonic confidence, etc.
* :func:`from_checklist` wraps a string-level CheckList perturb function (``Perturb.add_typos``,
  ``Perturb.contractions``, ...) as a robustlab perturbation; CheckList draws from the global numpy
  and ``random`` generators, so each call runs with them seeded per text and restored afterwards.
  Blank texts come back unchanged without calling the function.

Only ``checklist.test_types`` and ``checklist.expect`` are imported (inside the builders); neither
needs ``pattern``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from robustlab.perturbations.base import Level, Perturbation, PerturbationError
from robustlab.perturbations.global_rng import seeded_global_rng

__all__ = [
    "CheckListPerturbation",
    "PerturbedData",
    "checklist_fn",
    "dir_test",
    "expect_change",
    "from_checklist",
    "inv_test",
    "perturb_data",
]


class PerturbedData(dict):
    """``{'data': ..., 'meta': ...}`` with attribute access, like CheckList's ``MunchWithAdd``
    (so both ``INV(**t)`` and ``t.data`` work)."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None


def _text_of(example: Any) -> Any:
    """The example as CheckList shows it: a str, or a tuple of str for pairs (QQP, NLI)."""
    if isinstance(example, str):
        return example
    if isinstance(example, (tuple, list)) and all(isinstance(x, str) for x in example):
        return tuple(example)
    text = getattr(example, "text", None)  # spaCy Doc / Span
    if isinstance(text, str):
        return text
    raise PerturbationError(
        f"CheckList example of type {type(example).__name__} is not a string, a tuple of strings "
        "or a spaCy Doc"
    )


def _perturb_one(perturbation: Perturbation, example: Any, seed: int,
                 fields: Sequence[int] | None) -> Any:
    if isinstance(example, str):
        return perturbation.perturb(example, seed=seed)
    return tuple(perturbation.perturb(x, seed=seed) if fields is None or j in fields else x
                 for j, x in enumerate(example))


def _variants(perturbation: Perturbation, example: Any, seed: int, n: int,
              fields: Sequence[int] | None = None) -> list[Any]:
    """Up to ``n`` distinct changed outputs, from seeds seed, seed+1, ... (at most 3n tries)."""
    out: list[Any] = []
    tries = 1 if perturbation.deterministic else 3 * n
    for k in range(tries):
        new = _perturb_one(perturbation, example, seed + k, fields)
        if new != example and new not in out:
            out.append(new)
            if len(out) == n:
                break
    return out


def checklist_fn(perturbation: Perturbation, seed: int = 0, n: int = 1,
                 fields: Sequence[int] | None = None) -> Callable[..., Any]:
    """A ``perturb_fn`` for ``Perturb.perturb``: one output (n=1) or a list, None = no change.

    Examples may be strings, spaCy Docs (``.text``) or tuples of strings (sentence pairs):
    tuples are perturbed element-wise, only at the indices in ``fields`` when given.
    """
    perturbation.validate()
    if n < 1:
        raise PerturbationError(f"n must be >= 1, got {n}")

    def fn(example: Any, *args: Any, meta: bool = False, **kwargs: Any) -> Any:
        outs = _variants(perturbation, _text_of(example), seed, n, fields)
        if not outs:
            return None
        result: Any = outs[0] if n == 1 else outs
        if meta:
            info = perturbation.signature()
            return result, (info if n == 1 else [info] * len(outs))
        return result

    fn.__name__ = f"robustlab_{perturbation.name.replace(':', '_')}"
    fn.__doc__ = f"CheckList perturb_fn applying {perturbation.signature()} (seed={seed}, n={n})."
    return fn


def perturb_data(data: Sequence[Any], perturbation: Perturbation, seed: int = 0, n: int = 1,
                 keep_original: bool = True, nsamples: int | None = None,
                 meta: bool = False, fields: Sequence[int] | None = None) -> PerturbedData:
    """What ``Perturb.perturb(data, checklist_fn(p, seed, n), keep_original, nsamples)`` returns,
    without importing ``checklist.perturb``; examples the perturbation cannot change are skipped.
    ``meta=True`` adds ``meta``: per row ``[None (original), signature, ...]``."""
    fn = checklist_fn(perturbation, seed, n, fields)
    order = list(range(len(data)))
    if nsamples:
        random.Random(seed).shuffle(order)
    rows, metas = [], []
    for i in order:
        outs = fn(data[i])
        if outs is None:
            continue
        outs = outs if n > 1 else [outs]
        row = ([_text_of(data[i])] if keep_original else []) + outs
        rows.append(row)
        metas.append(([None] if keep_original else []) + [perturbation.signature()] * len(outs))
        if nsamples and len(rows) == nsamples:
            break
    result = PerturbedData(data=rows)
    if meta:
        result["meta"] = metas
    return result


def _describe(perturbation: Perturbation, kind: str) -> str:
    base = perturbation.summary or perturbation.name
    return f"{kind} under robustlab perturbation {perturbation.signature()}: {base}"


def inv_test(perturbation: Perturbation, data: Sequence[Any], seed: int = 0, n: int = 1,
             threshold: float = 0.1, nsamples: int | None = None, name: str | None = None,
             capability: str = "Robustness", description: str | None = None,
             labels: Any = None, expect: Any = None, fields: Sequence[int] | None = None) -> Any:
    """A CheckList INV test: predictions should not change under ``perturbation``."""
    from checklist.test_types import INV

    t = perturb_data(data, perturbation, seed, n, True, nsamples, meta=True, fields=fields)
    _check_nonempty(t, perturbation)
    return INV(t.data, expect=expect, threshold=threshold, meta=t.meta, labels=labels,
               name=name or f"INV {perturbation.name}", capability=capability,
               description=description or _describe(perturbation, "invariance"))


def expect_change() -> Any:
    """CheckList expectation: the prediction must differ from the original's (e.g. negation)."""
    from checklist.expect import Expect

    def changed(orig_pred: Any, pred: Any, orig_conf: Any, conf: Any, labels: Any = None,
                meta: Any = None) -> bool:
        return bool(pred != orig_pred)

    return Expect.pairwise(changed)


def dir_test(perturbation: Perturbation, data: Sequence[Any], expect: Any = None, seed: int = 0,
             n: int = 1, nsamples: int | None = None, name: str | None = None,
             capability: str | None = None, description: str | None = None,
             labels: Any = None, fields: Sequence[int] | None = None) -> Any:
    """A CheckList DIR test. ``expect`` defaults to :func:`expect_change` for perturbations that are
    not label-preserving; for label-preserving ones give one, e.g.
    ``Expect.monotonic(label=1, increasing=False, tolerance=0.1)``."""
    from checklist.test_types import DIR

    if expect is None:
        if perturbation.label_preserving:
            raise PerturbationError(
                f"{perturbation.name} is label-preserving: a DIR test needs an explicit expect= "
                "(or use inv_test)"
            )
        expect = expect_change()
    t = perturb_data(data, perturbation, seed, n, True, nsamples, meta=True, fields=fields)
    _check_nonempty(t, perturbation)
    return DIR(t.data, expect, meta=t.meta, labels=labels,
               name=name or f"DIR {perturbation.name}",
               capability=capability or ("Negation" if "negat" in perturbation.name else
                                         "Robustness"),
               description=description or _describe(perturbation, "directional expectation"))


def _check_nonempty(t: PerturbedData, perturbation: Perturbation) -> None:
    if not t.data:
        raise PerturbationError(f"{perturbation.name} changed none of the examples; a CheckList "
                                "test needs at least one perturbed example")


# ---- CheckList -> robustlab -------------------------------------------------------------------


class CheckListPerturbation(Perturbation):
    """A string-level CheckList perturb function as a robustlab perturbation (module docstring)."""

    source = "checklist"
    summary = "a CheckList perturb function"

    def __init__(self, fn: Callable[..., Any], kwargs: dict[str, Any] | None = None,
                 level: Level = "word", asymmetric: bool = True,
                 label_preserving: bool = True) -> None:
        self.fn = fn
        self.kwargs = kwargs
        self.level = level  # type: ignore[misc]
        self.asymmetric = asymmetric  # type: ignore[misc]
        self.label_preserving = label_preserving  # type: ignore[misc]
        self.name = f"checklist:{getattr(fn, '__name__', type(fn).__name__)}"  # type: ignore[misc]

    def validate(self) -> None:
        if not callable(self.fn):
            raise PerturbationError(f"{self.name}: not callable")

    def apply(self, text: str, rng: random.Random) -> str:
        if not text.strip():  # CheckList's string functions index into the text (add_typos)
            return text
        with seeded_global_rng(rng.getrandbits(32)):
            out = self.fn(text, **(self.kwargs or {}))
        if isinstance(out, str):
            outs = [out]
        elif isinstance(out, (list, tuple)):
            outs = [o for o in out if isinstance(o, str)]
        else:
            outs = []
        outs = sorted({o for o in outs if o != text})
        return rng.choice(outs) if outs else text


def from_checklist(fn: Callable[..., Any], **kwargs: Any) -> CheckListPerturbation:
    """Wrap e.g. ``Perturb.add_typos`` (string in, string or list out); ``kwargs``: ``kwargs`` for
    ``fn``, ``level``, ``asymmetric``, ``label_preserving``."""
    pert = CheckListPerturbation(fn, **kwargs)
    pert.validate()
    return pert
