"""TextAttack (0.3.11), both ways. ``textattack`` is imported inside the functions only.

robustlab -> TextAttack

* :func:`to_textattack_transformation` gives a ``textattack.transformations.Transformation``, so
  a robustlab perturbation composes with TextAttack constraints, goal functions and search
  methods. Two modes:

  - ``"word"`` (default for character-level perturbations): a ``WordSwap`` whose replacements for
    a word are the perturbation applied to that word alone (seeds ``seed .. seed+n-1``). It honours
    ``indices_to_modify`` and pre-transformation constraints exactly like TextAttack's own
    ``WordSwapQWERTY``, and word-swap-only search methods (greedy WIR, genetic, PSO) accept it.
    Replacements holding whitespace are dropped (they would change the word count).
  - ``"text"`` (default for word/sentence-level perturbations, whose effect needs context): each
    candidate is the perturbation of the whole text. ``indices_to_modify`` is **not** enforced
    (a negation or a word-order change touches several words); ``modified_indices`` and
    ``original_index_map`` are kept consistent by aligning old and new words with ``difflib``.

* :func:`to_textattack_augmenter` gives a ``textattack.augmentation.Augmenter`` subclass over that
  transformation (same constructor options: constraints, pct_words_to_swap,
  transformations_per_example, ...). Its ``augment`` is seeded: TextAttack draws from the global
  ``random``, so each call runs with the global ``random``/``numpy.random`` state seeded from
  ``(seed, text)`` and restored afterwards.

TextAttack -> robustlab

* :func:`from_textattack` wraps any ``Transformation`` or ``Augmenter`` as a robustlab
  :class:`~robustlab.perturbations.base.Perturbation`. TextAttack's components use the global ``random``
  and ``numpy.random``; the wrapper **isolates** them: it saves their states, seeds them from the
  per-text robustlab stream, calls TextAttack, and restores the states (so results are
  reproducible and nobody else's random state changes). A transformation is applied ``pps`` times
  (default 1), each time to a not-yet-modified word: word positions are tried in a seeded random
  order, one at a time (fast on 100k-character texts), and a candidate is chosen uniformly among
  that word's candidates, sorted by text for a stable order. An augmenter's output is chosen among
  its augmentations that differ from the input. No candidate -> the text comes back unchanged.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import random
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

from robustlab.integrations.nlaugmenter import snake_case
from robustlab.perturbations.base import Level, Perturbation, PerturbationError, rng_for
from robustlab.perturbations.global_rng import seeded_global_rng

__all__ = [
    "TextAttackPerturbation",
    "available_components",
    "from_spec",
    "from_textattack",
    "to_textattack_augmenter",
    "to_textattack_transformation",
]


def _textattack():
    from robustlab.resources import ensure_textattack

    ensure_textattack()
    import textattack

    from robustlab.integrations.loaders import guard_flair

    guard_flair()  # flair taggers (POS, NER) from flair's cache only, never the working directory

    return textattack


# ---- robustlab -> TextAttack ------------------------------------------------------------------


def _align(old: Sequence[str], new: Sequence[str]) -> tuple[dict[int, int], set[int]]:
    """Map old word index -> new index (kept or 1:1 replaced) and the set of changed new indices."""
    mapping: dict[int, int] = {}
    changed: set[int] = set()
    sm = difflib.SequenceMatcher(a=list(old), b=list(new), autojunk=False)
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if tag != "equal":
            changed.update(range(j1, j2))
        if tag == "equal" or (tag == "replace" and i2 - i1 == j2 - j1):
            mapping.update({i1 + k: j1 + k for k in range(i2 - i1)})
        elif tag == "replace":
            mapping.update({i1 + k: min(j1 + k, j2 - 1) for k in range(i2 - i1)})
    return mapping, changed


@functools.cache
def _classes() -> dict[str, type]:
    """TextAttack subclasses, defined on first use so that importing this module stays cheap."""
    ta = _textattack()
    import numpy as np
    from textattack.shared import AttackedText
    from textattack.transformations import Transformation, WordSwap

    class RobustlabWordSwap(WordSwap):
        """A robustlab perturbation applied to one word at a time (see the module docstring)."""

        def __init__(self, perturbation: Perturbation, num_candidates: int = 1, seed: int = 0):
            super().__init__()
            self.perturbation, self.num_candidates, self.seed = perturbation, num_candidates, seed

        def _get_replacement_words(self, word: str) -> list[str]:
            out: list[str] = []
            for k in range(self.num_candidates):
                w = self.perturbation.perturb(word, seed=self.seed + k)
                if w and w != word and not any(c.isspace() for c in w) and w not in out:
                    out.append(w)
            return out

        def extra_repr_keys(self) -> list[str]:
            return ["perturbation", "num_candidates", "seed"]

    class RobustlabTextTransformation(Transformation):
        """A robustlab perturbation applied to the whole text (see the module docstring)."""

        def __init__(self, perturbation: Perturbation, num_candidates: int = 1, seed: int = 0):
            self.perturbation, self.num_candidates, self.seed = perturbation, num_candidates, seed

        def _candidate(self, current: Any, seed: int) -> Any | None:
            inputs = current._text_input
            new_input = OrderedDict(
                (k, self.perturbation.perturb(v, seed=seed)) for k, v in inputs.items())
            if new_input == inputs:
                return None
            old_words = current.words
            attrs: dict[str, Any] = {"previous_attacked_text": current}
            if "label_names" in current.attack_attrs:
                attrs["label_names"] = current.attack_attrs["label_names"]
            new = AttackedText(new_input, attack_attrs=attrs)
            mapping, changed = _align(old_words, new.words)
            old_map = current.attack_attrs["original_index_map"]
            new.attack_attrs["original_index_map"] = np.array(
                [mapping.get(int(c), -1) if c >= 0 else -1 for c in old_map], dtype=old_map.dtype)
            kept = {mapping[i] for i in current.attack_attrs["modified_indices"] if i in mapping}
            new.attack_attrs["modified_indices"] = kept | changed
            new.attack_attrs["newly_modified_indices"] = set(changed)
            return new

        def _get_transformations(self, current_text: Any, indices_to_modify: Any) -> list[Any]:
            seen, out = set(), []
            for k in range(self.num_candidates):
                cand = self._candidate(current_text, self.seed + k)
                if cand is not None and cand.text not in seen:
                    seen.add(cand.text)
                    out.append(cand)
            return out

        @property
        def deterministic(self) -> bool:
            return True  # a pure function of (text, seed): TextAttack may cache it

        def extra_repr_keys(self) -> list[str]:
            return ["perturbation", "num_candidates", "seed"]

    class PerturbationAugmenter(ta.augmentation.Augmenter):
        """An Augmenter over a robustlab perturbation whose ``augment`` is seeded by (seed, text)."""

        def __init__(self, transformation: Any, seed: int = 0, **kwargs: Any) -> None:
            super().__init__(transformation, **kwargs)
            self.seed = seed

        def augment(self, text: str) -> Any:
            with seeded_global_rng(rng_for(self.seed, text, "augment").getrandbits(63)):
                return super().augment(text)

    return {"word": RobustlabWordSwap, "text": RobustlabTextTransformation,
            "augmenter": PerturbationAugmenter}


def to_textattack_transformation(perturbation: Perturbation, mode: str | None = None,
                                 num_candidates: int = 1, seed: int = 0) -> Any:
    """A TextAttack ``Transformation`` applying ``perturbation``.

    ``mode``: "word" (per-word WordSwap; default for character-level perturbations) or "text"
    (whole text; default otherwise). ``num_candidates``: how many seeds (``seed``,
    ``seed+1``, ...) propose candidates per word / per text.
    """
    perturbation.validate()
    mode = mode or ("word" if perturbation.level == "character" else "text")
    if mode not in ("word", "text"):
        raise PerturbationError(f"mode must be 'word' or 'text', got {mode!r}")
    if num_candidates < 1:
        raise PerturbationError(f"num_candidates must be >= 1, got {num_candidates}")
    return _classes()[mode](perturbation, num_candidates=num_candidates, seed=seed)


def to_textattack_augmenter(perturbation: Perturbation, constraints: Sequence[Any] = (),
                            mode: str | None = None, num_candidates: int = 1, seed: int = 0,
                            **augmenter_kwargs: Any) -> Any:
    """A seeded ``textattack.augmentation.Augmenter`` (recipe) applying ``perturbation``.

    ``augmenter_kwargs`` are TextAttack's: ``pct_words_to_swap``, ``transformations_per_example``,
    ``high_yield``, ``fast_augment``.
    """
    transformation = to_textattack_transformation(perturbation, mode, num_candidates, seed)
    return _classes()["augmenter"](transformation, seed=seed, constraints=list(constraints),
                                   **augmenter_kwargs)


# ---- TextAttack -> robustlab ------------------------------------------------------------------


def _level_of(cls_name: str) -> Level:
    if any(k in cls_name for k in ("Character", "QWERTY", "Homoglyph", "CharSwap")):
        return "character"
    if any(k in cls_name for k in ("Sentence", "BackTrans", "Clare", "CLARE")):
        return "sentence"
    return "word"


class TextAttackPerturbation(Perturbation):
    """A TextAttack Transformation or Augmenter as a robustlab perturbation (module docstring)."""

    source = "textattack"
    summary = "a TextAttack transformation or augmenter"

    def __init__(self, component: Any, pps: int = 1, constraints: Sequence[Any] = (),
                 level: Level | None = None, asymmetric: bool = True,
                 label_preserving: bool = True) -> None:
        self.component = component
        self.pps = pps
        self.constraints = constraints
        self.level = level  # type: ignore[assignment]
        self.asymmetric = asymmetric  # type: ignore[misc]
        self.label_preserving = label_preserving  # type: ignore[misc]
        self.name = f"textattack:{snake_case(type(component).__name__)}"  # type: ignore[misc]
        if level is None:
            self.level = _level_of(type(component).__name__)

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params["level"] = self.level
        return params

    def signature(self) -> str:
        body = " ".join(str(self.component).split())
        return f"{self.name}(pps={self.pps!r},component={body})"

    def validate(self) -> None:
        if not isinstance(self.pps, int) or isinstance(self.pps, bool) or self.pps < 1:
            raise PerturbationError(f"{self.name}: pps must be an integer >= 1, got {self.pps!r}")

    def setup(self) -> None:
        ta = _textattack()
        from textattack.constraints import PreTransformationConstraint

        self._is_augmenter = isinstance(self.component, ta.augmentation.Augmenter)
        if not self._is_augmenter and not isinstance(self.component,
                                                     ta.transformations.Transformation):
            raise PerturbationError(f"{self.name}: {type(self.component).__name__} is neither a "
                                    "TextAttack Transformation nor an Augmenter")
        self._pre = [c for c in self.constraints if isinstance(c, PreTransformationConstraint)]
        self._post = [c for c in self.constraints if not isinstance(c, PreTransformationConstraint)]
        self._AttackedText = ta.shared.AttackedText

    def apply(self, text: str, rng: random.Random) -> str:
        if not text.strip():
            return text
        with seeded_global_rng(rng.getrandbits(63)):
            if self._is_augmenter:
                outs = sorted({o for o in self.component.augment(text) if o != text})
                return rng.choice(outs) if outs else text
            return self._transform(text, rng)

    def _transform(self, text: str, rng: random.Random) -> str:
        original = current = self._AttackedText(text)
        for _ in range(self.pps):
            order = [i for i in range(current.num_words)
                     if i not in current.attack_attrs["modified_indices"]]
            rng.shuffle(order)
            for i in order:
                cands = self.component(current, self._pre, indices_to_modify=[i])
                for c in self._post:
                    if not cands:
                        break
                    cands = c.call_many(cands, original if c.compare_against_original else current)
                cands = sorted((c for c in cands if c.text != current.text), key=lambda c: c.text)
                if cands:
                    current = rng.choice(cands)
                    break
            else:
                break  # no word can be changed any more
        return current.text


def from_textattack(component: Any, **kwargs: Any) -> TextAttackPerturbation:
    """Wrap a TextAttack ``Transformation`` or ``Augmenter``; ``kwargs``: pps, constraints, level,
    asymmetric, label_preserving (see :class:`TextAttackPerturbation`)."""
    pert = TextAttackPerturbation(component, **kwargs)
    pert.validate()
    return pert


_WRAPPER_KEYS = {"pps", "level", "asymmetric", "label_preserving"}


@contextlib.contextmanager
def _no_nltk_downloads() -> Iterator[None]:
    """WordSwapWordNet's constructor calls ``nltk.download("omw-1.4")`` (a network call that fails
    offline and prints noise; English WordNet does not need it): skip it while building."""
    import nltk

    original = nltk.download
    nltk.download = lambda *a, **k: True
    try:
        yield
    finally:
        nltk.download = original


def from_spec(target: str, *, trusted: bool = False, **params: Any) -> TextAttackPerturbation:
    """``textattack:Name[:k=v,...]``: Name from ``textattack.transformations`` or
    ``textattack.augmentation`` (e.g. WordSwapWordNet, WordSwapQWERTY, EasyDataAugmenter), or
    ``textattack:package.module.Class`` (a spec the user typed: :func:`registry.parse_spec`
    lets it through only then). Either way the class must be a concrete TextAttack
    ``Transformation`` or ``Augmenter`` subclass before it is called.
    pps/level/asymmetric/label_preserving configure the wrapper; the rest go to Name's constructor.
    Every model the component loads gets an absolute, checked location
    (:func:`robustlab.integrations.loaders.building`; ``trusted``: the user typed the spec, so a
    relative model folder in it is theirs).
    """
    from robustlab.integrations.loaders import building
    from robustlab.perturbations.named import check_class, import_class

    ta = _textattack()
    spec = f"textattack:{target}"
    kinds = (ta.transformations.Transformation, ta.augmentation.Augmenter)
    what = "a TextAttack Transformation or Augmenter subclass"
    module_name, _, cls_name = target.rpartition(".")
    if module_name:
        cls = check_class(import_class(module_name, cls_name, spec), kinds, what, spec)
    else:
        cls = getattr(ta.transformations, target, None) or getattr(ta.augmentation, target, None)
        if not isinstance(cls, type):
            import difflib as _d

            names = [row["name"].partition(":")[2] for row in available_components()]
            close = _d.get_close_matches(target, names, n=3)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise PerturbationError(f"textattack:{target}: no such TextAttack transformation or "
                                    f"augmenter.{hint}")
        cls = check_class(cls, kinds, what, spec)
    wrapper = {k: params.pop(k) for k in list(params) if k in _WRAPPER_KEYS}
    if "WordNet" in target:
        from robustlab.resources import wordnet

        wordnet()  # a clear ResourceMissing instead of NLTK's LookupError
    try:
        with _no_nltk_downloads(), building(trusted=trusted):
            component = cls(**params)
    except (TypeError, AssertionError, ValueError) as exc:
        raise PerturbationError(f"textattack:{target}: {exc}") from None
    return from_textattack(component, **wrapper)


def available_components() -> list[dict[str, Any]]:
    """TextAttack's transformations and augmentation recipes usable as ``textattack:NAME``
    (``robustlab list perturbations --source textattack``)."""
    import inspect

    ta = _textattack()
    rows = []
    for kind, mod, base in (("transformation", ta.transformations,
                             ta.transformations.Transformation),
                            ("augmenter", ta.augmentation, ta.augmentation.Augmenter)):
        for name, cls in sorted(vars(mod).items()):
            if not (isinstance(cls, type) and issubclass(cls, base)) or inspect.isabstract(cls):
                continue
            own = inspect.cleandoc(cls.__dict__.get("__doc__") or "")  # not inherited
            if cls is base or name.startswith("_") or own.lower().startswith(("an abstract",
                                                                                "a base class")):
                continue
            doc = own.splitlines()
            rows.append({"name": f"textattack:{name}", "kind": kind, "level": _level_of(name),
                         "summary": doc[0] if doc else ""})
    return rows
