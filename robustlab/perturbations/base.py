"""The common perturbation interface.

A perturbation g maps a text to a perturbed text. Every perturbation in robustlab — built in or
adapted from NL-Augmenter / TextAttack — is a :class:`Perturbation` subclass and so shares:

* ``name`` and ``display_name`` (a label given with ``spec@label``, for tables and plots;
  never part of the signature), ``level`` (character / word / sentence), ``asymmetric`` (g(g(x)) != x, which
  learnability requires), ``label_preserving``, ``deterministic`` (output independent of the
  random stream) and ``heavy`` (loads a model or a large lexicon) as class attributes;
* ``apply(text, rng)``: one text, drawing randomness only from ``rng`` (a :class:`random.Random`);
* ``perturb(text, seed)`` / ``perturb_batch(texts, seed)``: seeded and deterministic. The stream
  for a text is derived from ``(seed, text)``, so the output for a text does not depend on batch
  size, batch order or what else is in the batch;
* ``perturb_outcomes(texts, seed)``: the same with a ``changed`` flag per text, so experiments
  count no-ops instead of silently treating them as perturbed.

Constructors only store their parameters (scikit-learn's rule): building one costs nothing, and
``get_params()`` / ``clone()`` / the CLI flags / the stored signature all come from the
constructor signature. Parameter checks live in :meth:`Perturbation.validate`, which the batch
methods and the registry call.

Per-text randomness comes in one of three kinds (class attribute ``randomness``), because
seeding a stream per text is what makes outputs independent of batching, and that seeding used to
dominate the cheap perturbations (a ``random.Random(int)`` costs 5-15 µs, more than butter-fingers
spends on a whole SST-2 sentence; ``bench/bench_perturbations.py``):

* ``"rng"`` (the default): ``apply(text, rng)`` with a :class:`random.Random` seeded from
  (seed, name, text) by :func:`rng_for`. For perturbations drawing many varied numbers
  (shuffles of lists, ``rng.sample``), where the Mersenne Twister's methods pay for the seeding.
* ``"bytes"``: ``apply_stream(text, stream)`` with ``stream`` a SHAKE-128 object over
  (seed, name, text) (:func:`stream_for`): ``stream.digest(n)`` gives the first n bytes of an
  endless, pure-function-of-(seed, name, text) stream (asking for more later extends the same
  stream), in about 1 µs from a cached keyed prefix. The per-character perturbations read their
  decisions straight from these bytes (thresholds on bytes, ``bytes.translate`` tables).
* ``"none"``: deterministic perturbations; no stream is built at all.
* ``"bulk"``: the perturbation derives its own per-text randomness from (seed, text) for a whole
  list at once (``perturb_many(texts, seed)``), for work so cheap that even one stream object per
  text would dominate (shuffle_word: one keyed BLAKE2b per text, then numpy).

``apply(text, rng)`` works for every kind (a "bytes" perturbation derives its stream from 16
bytes of ``rng``), so callers holding their own ``random.Random`` keep working. The global
``random`` state is never touched.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import operator
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from robustlab.errors import InputError

Level = Literal["character", "word", "sentence"]

__all__ = [
    "Level",
    "Outcome",
    "Perturbation",
    "PerturbationError",
    "check_prob",
    "rng_for",
    "stream_for",
]


class PerturbationError(InputError):
    """Raised for bad perturbation parameters (unknown name, PPS out of range, ...)."""


def rng_for(seed: int, text: str, salt: str = "") -> random.Random:
    """The random stream for one text: a pure function of (seed, salt, text)."""
    h = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8, person=b"robustlab")
    h.update(salt.encode("utf-8"))
    return random.Random((int(seed) << 64) ^ int.from_bytes(h.digest(), "little"))


def check_prob(owner: str, **probs: float) -> None:
    """Raise :class:`PerturbationError` unless every value is a number in [0, 1]."""
    for name, value in probs.items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
            raise PerturbationError(f"{owner}: {name} must be a number in [0, 1], got {value!r}")


@functools.lru_cache(maxsize=1024)
def _stream_prefix(seed: int, salt: str) -> Any:
    """SHAKE-128 state after absorbing (seed, salt): copied per text, never re-absorbed."""
    s = salt.encode("utf-8", "surrogatepass")
    head = int(seed).to_bytes(16, "little", signed=True) + len(s).to_bytes(4, "little") + s
    return hashlib.shake_128(head)


def stream_for(seed: int, text: str, salt: str = "") -> Any:
    """The byte stream for one text: ``.digest(n)`` is a pure function of (seed, salt, text, n),
    and ``digest(m)[:n] == digest(n)`` for m > n (an extendable-output function)."""
    h = _stream_prefix(int(seed), salt).copy()
    h.update(text.encode("utf-8", "surrogatepass"))
    return h


#: texts per apply_many call in perturb_batch (bounds the memory of vectorised perturbations)
_CHUNK = 4096
_ENCODE = operator.methodcaller("encode", "utf-8", "surrogatepass")


class _NoRandomness:
    """Passed as ``rng`` to deterministic perturbations: any use is a bug, reported clearly."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"a perturbation declared randomness='none' used rng.{name}")


NO_RANDOMNESS: Any = _NoRandomness()


@dataclass(frozen=True)
class Outcome:
    """The result of perturbing one text."""

    original: str
    text: str
    changed: bool
    error: str | None = None


class Perturbation:
    """Base class of every robustlab perturbation (see the module docstring)."""

    name: ClassVar[str] = ""
    level: ClassVar[Level] = "character"
    asymmetric: ClassVar[bool] = True
    label_preserving: ClassVar[bool] = True
    #: a label-changing perturbation's expectation per task (CheckList DIR test), e.g.
    #: ``{"binary": "flip"}``; a task it names nothing for gets no pass/fail
    #: (:mod:`robustlab.metrics.checklist_tests`)
    expectations: ClassVar[Mapping[str, str]] = {}
    deterministic: ClassVar[bool] = False
    heavy: ClassVar[bool] = False
    #: where the perturbation comes from (paper id or library), shown by ``robustlab list``
    source: ClassVar[str] = ""
    #: one line shown by ``robustlab list perturbations``
    summary: ClassVar[str] = ""
    #: external resources it reads (names of :func:`robustlab.resources.resource_file`), so a
    #: study records their path and checksum among its inputs
    reads: ClassVar[tuple[str, ...]] = ()
    #: version of the perturbation's rules: bumped when a rule change changes outputs for the
    #: same parameters, and written into :meth:`signature` (``name/v2(...)``) from 2 on, so
    #: results of old and new rules never share a signature
    version: ClassVar[int] = 1

    # ---- parameters (scikit-learn style) -------------------------------------------------
    @classmethod
    def param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        sig = inspect.signature(cls.__init__)
        return {
            n: (None if sig.parameters[n].default is inspect.Parameter.empty
                else sig.parameters[n].default)
            for n in cls.param_names()
        }

    def get_params(self) -> dict[str, Any]:
        return {n: getattr(self, n) for n in self.param_names()}

    def clone(self, **overrides: Any) -> Perturbation:
        params = self.get_params()
        params.update(overrides)
        return type(self)(**params).with_label(getattr(self, "_label", None))

    # ---- display label (presentation only: not a parameter, not in the signature) -----------
    @property
    def display_name(self) -> str:
        """What tables and plots show: the label given with ``spec@label``, else ``name``."""
        return getattr(self, "_label", None) or self.name

    def with_label(self, label: str | None) -> Perturbation:
        """Set the display label (None: back to ``name``) and return ``self``."""
        if label is not None and (not label.strip() or "\n" in label):
            raise PerturbationError(f"{self.name}: a display label must be one non-empty line")
        self._label = label.strip() if label else None
        return self

    def validate(self) -> None:
        """Check parameters; raise :class:`PerturbationError` with a clear message."""

    def signature(self) -> str:
        """Short, stable description stored with every result, e.g. ``leet_letters(prob=0.5)``."""
        params = ",".join(f"{k}={v!r}" for k, v in sorted(self.get_params().items()))
        version = f"/v{self.version}" if self.version > 1 else ""
        return f"{self.name}{version}({params})"

    def __repr__(self) -> str:
        params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({params})"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.get_params() == other.get_params()  # type: ignore[union-attr]

    def __hash__(self) -> int:
        return hash((type(self).__name__, repr(sorted(self.get_params().items()))))

    #: where per-text randomness comes from: "rng", "bytes" or "none" (see the module docstring)
    randomness: ClassVar[str] = "rng"

    # ---- the one method a subclass writes --------------------------------------------------
    def apply(self, text: str, rng: random.Random) -> str:
        """Perturb one text using only ``rng`` for randomness. Return ``text`` when impossible."""
        if self.randomness == "bytes":
            return self.apply_stream(text, hashlib.shake_128(rng.randbytes(16)))
        if self.randomness == "bulk":
            return self.perturb_many([text], rng.getrandbits(63))[0]
        raise NotImplementedError

    def perturb_many(self, texts: list[str], seed: int) -> list[str]:
        """For ``randomness = "bulk"``: the outputs for ``texts``, each a function of (seed, its
        own text) alone."""
        raise NotImplementedError

    def apply_stream(self, text: str, stream: Any) -> str:
        """For ``randomness = "bytes"``: perturb one text reading randomness from ``stream``."""
        return self.apply_many([text], [stream])[0]

    def apply_many(self, texts: list[str], streams: list[Any]) -> list[str]:
        """:meth:`apply_stream` for a chunk of texts, each with its own stream. Override one of
        the two; overriding this one lets a perturbation work on the whole chunk at once
        (numpy tables), its outputs still a function of each (text, stream) alone."""
        if type(self).apply_stream is Perturbation.apply_stream:
            raise NotImplementedError(f"{type(self).__name__} defines neither apply_stream "
                                      "nor apply_many")
        f = self.apply_stream
        return [f(t, s) for t, s in zip(texts, streams, strict=True)]

    def setup(self) -> None:
        """Load heavy resources (lexicons, models). Called once before the first batch."""

    # ---- seeded front doors -------------------------------------------------------------------
    def _ready(self) -> None:
        if not getattr(self, "_robustlab_ready", False):
            self.validate()
            self.setup()
            self._robustlab_ready = True

    def _one(self, text: str, seed: int) -> str:
        """The seeded output for one text, through the stream kind the class declares."""
        kind = self.randomness
        if kind == "bytes":
            return self.apply_stream(text, stream_for(seed, text, self.name))
        if kind == "none":
            return self.apply(text, NO_RANDOMNESS)
        if kind == "bulk":
            return self.perturb_many([text], seed)[0]
        return self.apply(text, rng_for(seed, text, self.name))

    def perturb(self, text: str, seed: int = 0) -> str:
        """Perturb one text; same (seed, text) gives the same output."""
        self._ready()
        return self._one(text, seed)

    def perturb_batch(self, texts: Iterable[str], seed: int = 0) -> list[str]:
        """Perturb many texts; each output depends only on (seed, its own text)."""
        self._ready()
        kind, name = self.randomness, self.name
        if kind == "bytes":
            prefix = _stream_prefix(int(seed), name)
            texts = texts if isinstance(texts, list) else list(texts)
            out: list[str] = []
            fresh, update = prefix.copy, type(prefix).update
            for a in range(0, len(texts), _CHUNK):
                chunk = texts[a: a + _CHUNK]
                streams = [fresh() for _ in chunk]
                # C-level loops (map over method descriptors): no Python frame per text
                for _ in map(update, streams, map(_ENCODE, chunk)):
                    pass
                out += self.apply_many(chunk, streams)
            return out
        if kind == "bulk":
            texts = texts if isinstance(texts, list) else list(texts)
            return [o for a in range(0, len(texts), _CHUNK)
                    for o in self.perturb_many(texts[a: a + _CHUNK], seed)]
        apply = self.apply
        if kind == "none":
            return [apply(t, NO_RANDOMNESS) for t in texts]
        return [apply(t, rng_for(seed, t, name)) for t in texts]

    def perturb_outcomes(self, texts: Sequence[str], seed: int = 0) -> list[Outcome]:
        """Like :meth:`perturb_batch`, with a changed flag and a per-text error instead of raising.

        The texts go through :meth:`perturb_batch` at once (a numpy perturbation such as
        ``leet_letters`` works on the whole chunk: 17k -> 110k rows/s in ``robustlab perturb``);
        only when that raises are they redone one by one, to report which texts failed. The
        outputs are the same either way: each is a function of (seed, its own text) alone."""
        self._ready()
        texts = texts if isinstance(texts, list) else list(texts)
        try:
            batch = self.perturb_batch(texts, seed)
        except Exception:  # some text fails: find which, below
            batch = None
        if batch is not None and len(batch) == len(texts):
            return [Outcome(t, p, p != t) for t, p in zip(texts, batch, strict=True)]
        out: list[Outcome] = []
        for t in texts:
            try:
                p = self._one(t, seed)
            except Exception as exc:  # reported per text, never dropped (CLI row accounting)
                out.append(Outcome(t, t, False, f"{type(exc).__name__}: {exc}"))
                continue
            out.append(Outcome(t, p, p != t))
        return out

    def __call__(self, text: str, seed: int = 0) -> str:
        return self.perturb(text, seed)


class Identity(Perturbation):
    """g(x) = x. Not asymmetric; its learnability must be 0 (a known-answer case for tests)."""

    name = "identity"
    level = "sentence"
    asymmetric = False
    deterministic = True
    randomness = "none"
    summary = "returns the text unchanged (control for learnability)"

    def apply(self, text: str, rng: random.Random) -> str:
        return text


class AppendToken(Perturbation):
    """Append a fixed token. A planted spurious feature: a model can learn it perfectly."""

    name = "append_token"
    level = "word"
    deterministic = True
    randomness = "none"
    summary = "appends a fixed token (a planted spurious feature; control for learnability)"

    def __init__(self, token: str = "zxqv") -> None:
        self.token = token

    def validate(self) -> None:
        if not self.token or any(c.isspace() for c in self.token):
            raise PerturbationError("append_token: token must be a non-empty word without spaces")

    def apply(self, text: str, rng: random.Random) -> str:
        return f"{text} {self.token}" if text.strip() else self.token
