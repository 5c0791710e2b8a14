"""NL-Augmenter, both ways, without requiring NL-Augmenter.

NL-Augmenter (GEM-benchmark/NL-Augmenter, not on PyPI) defines a transformation as a
``SentenceOperation`` subclass: class attributes ``tasks`` (``TaskType`` members), ``languages``,
``keywords``, ``heavy``; constructor ``(seed=0, max_outputs=1)`` storing ``seed``/``max_outputs``/
``verbose``; ``generate(sentence) -> list[str]``; classmethods ``name()``, ``domain()``,
``is_heavy()`` and ``compare(raw, outputs)``.

* :func:`from_nlaugmenter` wraps any object (or class) with that interface as a robustlab
  :class:`~robustlab.perturbations.base.Perturbation`. NL-Augmenter operations seed themselves once, at
  construction, and many call ``random.seed``/``np.random.seed`` inside ``generate``, clobbering
  everyone's global state. The wrapper therefore (1) sets the operation's ``seed`` attribute from
  the per-text robustlab stream before each call, so outputs follow robustlab's (seed, text) rule,
  and (2) saves and restores the global ``random`` and (when loaded) ``numpy.random`` states around
  ``generate``, so nothing leaks out. Among several outputs one is picked with the same stream;
  an operation that returns nothing, or only the input, is a no-op (the text comes back unchanged).
  Blank (empty or whitespace-only) texts come back unchanged without calling ``generate``.
  ``reseed=False`` instead calls ``generate`` exactly as NL-Augmenter does: the operation keeps
  its own ``seed`` (0 unless given), and since NL-Augmenter's transformations re-seed the global
  generators with it at every call, every text gets the same random sequence. That is how the
  papers' perturbed data were made (paper 000's Figure 3 is reproduced character for character
  in this mode only); the outputs then do not depend on robustlab's seed.
* :func:`to_nlaugmenter` / :func:`nlaugmenter_class` expose a robustlab perturbation as an
  NL-Augmenter transformation: a real ``SentenceOperation`` subclass when ``nlaugmenter`` (or the
  older top-level ``interfaces`` layout) is importable, otherwise :class:`SentenceOperation`, a
  stand-in defined here with the same attributes and methods. ``generate`` returns
  ``max_outputs`` perturbations made with seeds ``seed, seed+1, ...`` (one for a deterministic
  perturbation, whose outputs would all be equal).
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import inspect
import random
import sys
from collections.abc import Iterator
from typing import Any

from robustlab.perturbations.base import Level, Perturbation, PerturbationError
from robustlab.perturbations.global_rng import isolated_global_rng
from robustlab.textfmt import echo

__all__ = [
    "NLAugmenterPerturbation",
    "SentenceOperation",
    "TaskType",
    "from_nlaugmenter",
    "from_spec",
    "isolated_global_rng",
    "nlaugmenter_class",
    "to_nlaugmenter",
]


# ---- stand-ins for NL-Augmenter's interface (used only when nlaugmenter is not importable) ----


class TaskType(enum.Enum):
    """Stand-in for ``nlaugmenter.tasks.TaskTypes.TaskType`` (same member names and values)."""

    TEXT_CLASSIFICATION = (1,)
    TEXT_TO_TEXT_GENERATION = (2,)
    TEXT_TAGGING = (3,)
    DIALOGUE_ACT_TO_TEXT = (4,)
    TABLE_TO_TEXT = (5,)
    RDF_TO_TEXT = (6,)
    RDF_TO_RDF = (7,)
    QUESTION_ANSWERING = (8,)
    QUESTION_GENERATION = (9,)
    AMR_TO_TEXT = (10,)
    E2E_TASK = (11,)
    SENTIMENT_ANALYSIS = (12,)
    PARAPHRASE_DETECTION = (13,)
    TEXTUAL_ENTAILMENT = (14,)
    QUALITY_ESTIMATION = (15,)


class SentenceOperation:
    """Stand-in for NL-Augmenter's ``Operation``/``SentenceOperation`` with the same surface."""

    languages: Any = None
    tasks: Any = None
    seed = 0
    heavy = False
    max_outputs = 1
    keywords: Any = None

    def __init__(self, seed: int = 0, verbose: bool = False, max_outputs: int = 1) -> None:
        self.seed = seed
        self.verbose = verbose
        self.max_outputs = max_outputs
        if self.verbose:
            echo(f"Loading Operation {self.name()}")

    @classmethod
    def compare(cls, raw: object, pt: list[object]) -> tuple[int, int]:
        """(successful, failed) perturbations, as NL-Augmenter's evaluation counts them."""
        if len(pt) == 0:
            return 0, 1
        failed = sum(1 for p in pt if p == raw)
        return len(pt) - failed, failed

    @classmethod
    def is_heavy(cls) -> bool:
        return cls.heavy

    @classmethod
    def domain(cls) -> tuple[Any, Any]:
        return cls.tasks, cls.languages

    @classmethod
    def name(cls) -> str:
        return cls.__name__

    def generate(self, sentence: str) -> list[str]:
        raise NotImplementedError

    def filter(self, sentence: str) -> bool:
        raise NotImplementedError


def _real_interface() -> tuple[type, Any] | None:
    """NL-Augmenter's own SentenceOperation and TaskType when importable (both layouts)."""
    for ops, tasks in (("nlaugmenter.interfaces.SentenceOperation", "nlaugmenter.tasks.TaskTypes"),
                       ("interfaces.SentenceOperation", "tasks.TaskTypes")):
        try:
            op_mod = importlib.import_module(ops)
            task_mod = importlib.import_module(tasks)
        except Exception:  # absent, or an unrelated top-level `interfaces` package
            continue
        base = getattr(op_mod, "SentenceOperation", None)
        task_type = getattr(task_mod, "TaskType", None)
        if isinstance(base, type) and task_type is not None:
            return base, task_type
    return None


# ---- NL-Augmenter -> robustlab -------------------------------------------------------------------

_KEYWORD_LEVELS: tuple[tuple[str, Level], ...] = (
    ("morphological", "character"),
    ("noise", "character"),
    ("lexical", "word"),
)


def _level_from_keywords(keywords: Any) -> Level:
    kws = {str(k).lower() for k in (keywords or ())}
    for kw, level in _KEYWORD_LEVELS:
        if kw in kws:
            return level
    return "sentence"


def snake_case(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i and (not name[i - 1].isupper() or
                                   (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


class NLAugmenterPerturbation(Perturbation):
    """An NL-Augmenter transformation as a robustlab perturbation (see the module docstring)."""

    level: Level = "sentence"
    source = "nl-augmenter"
    summary = "an NL-Augmenter SentenceOperation"

    def __init__(self, operation: Any, reseed: bool = True, level: Level | None = None,
                 asymmetric: bool = True, label_preserving: bool = True,
                 on_error: str = "raise") -> None:
        self.operation = operation
        self.reseed = reseed
        self.on_error = on_error
        self.level = level  # type: ignore[assignment]
        self.asymmetric = asymmetric  # type: ignore[misc]
        self.label_preserving = label_preserving  # type: ignore[misc]
        op_cls = operation if isinstance(operation, type) else type(operation)
        folder = _transformation_folder(op_cls.__module__)
        self.name = f"nlaugmenter:{folder or snake_case(op_cls.__name__)}"  # type: ignore[misc]
        self.heavy = bool(getattr(op_cls, "heavy", False))  # type: ignore[misc]
        # NL-Augmenter's own transformation folder is recorded among a study's inputs
        self.reads = (f"nlaugmenter:{folder}",) if folder and op_cls.__module__.startswith(
            "nlaugmenter.") else ()  # type: ignore[misc]
        # reseed=False: the operation's fixed seed decides everything, robustlab's seed nothing
        self.deterministic = (  # type: ignore[misc]
            not reseed and int(getattr(operation, "max_outputs", 1) or 1) <= 1)
        if level is None:
            self.level = _level_from_keywords(getattr(op_cls, "keywords", None))

    def get_params(self) -> dict[str, Any]:
        params = super().get_params()
        params["level"] = self.level  # the inferred level, so clone() keeps it
        return params

    def signature(self) -> str:
        """The operation's class, ``max_outputs``, its other scalar settings (``perturb_pct``…:
        two settings must not share cached outputs), and the wrapper's mode when not the
        default (``reseed=False`` with the operation's fixed ``seed``; ``on_error``)."""
        op = self.operation
        op_cls = op if isinstance(op, type) else type(op)
        extra = ""
        if not isinstance(op, type):
            extra = f",max_outputs={getattr(op, 'max_outputs', 1)!r}"
            settings = {k: v for k, v in vars(op).items()
                        if not k.startswith("_") and k not in ("seed", "verbose", "max_outputs")
                        and isinstance(v, (bool, int, float, str, type(None)))}
            extra += "".join(f",{k}={v!r}" for k, v in sorted(settings.items()))
        if not self.reseed:
            extra += f",reseed=False,seed={getattr(op, 'seed', 0)!r}"
        if self.on_error != "raise":
            extra += f",on_error={self.on_error!r}"
        return f"{self.name}({op_cls.__module__}.{op_cls.__qualname__}{extra})"

    def validate(self) -> None:
        if not callable(getattr(self.operation, "generate", None)):
            raise PerturbationError(
                f"{self.name}: {self.operation!r} has no generate(sentence) method; "
                "expected an NL-Augmenter SentenceOperation"
            )
        if self.on_error not in ON_ERROR:
            raise PerturbationError(f"{self.name}: on_error must be one of {', '.join(ON_ERROR)}, "
                                    f"got {self.on_error!r}")

    def setup(self) -> None:
        if isinstance(self.operation, type):  # a class: build it the NL-Augmenter way
            self.operation = self.operation(seed=0)

    def apply(self, text: str, rng: random.Random) -> str:
        if not text.strip():  # many operations tokenize/index and fail on blank input
            return text
        op = self.operation
        if self.reseed and hasattr(op, "seed"):
            op.seed = rng.getrandbits(31)
        with isolated_global_rng():
            if self.on_error == "raise":
                outputs = op.generate(text)
            else:
                try:
                    outputs = op.generate(text)
                except Exception:  # on_error="unchanged": a failure is a no-op, counted as one
                    return text
        if isinstance(outputs, str):
            outputs = [outputs]
        candidates = [o for o in (outputs or ()) if isinstance(o, str) and o != text]
        if not candidates:
            return text
        return candidates[0] if len(candidates) == 1 else rng.choice(candidates)


def from_nlaugmenter(operation: Any, **kwargs: Any) -> NLAugmenterPerturbation:
    """Wrap an NL-Augmenter SentenceOperation (instance or class) as a robustlab perturbation.

    ``kwargs``: ``reseed`` (default True: follow robustlab's per-text seeding; False: call
    ``generate`` exactly as NL-Augmenter does, the papers' realisation), ``level``
    (default: from the ``keywords``: morphological/noise -> character, lexical -> word, else
    sentence), ``asymmetric`` and ``label_preserving`` (default True; NL-Augmenter does not say),
    ``on_error`` ("raise", the default, or "unchanged": a text on which ``generate`` raises comes
    back unchanged, a no-op; NL-Augmenter's ``leet_letters`` raises on a text with no encodable
    character, e.g. SST-2's "and it is .").
    """
    pert = NLAugmenterPerturbation(operation, **kwargs)
    pert.validate()
    return pert


_WRAPPER_KEYS = {"reseed", "level", "asymmetric", "label_preserving", "on_error"}
#: what the wrapper does when ``generate`` raises
ON_ERROR = ("raise", "unchanged")


#: where NL-Augmenter keeps transformation ``<folder>``: today's package and the older layout
_FOLDER_MODULES = ("nlaugmenter.transformations.{}.transformation", "transformations.{}.transformation")


def names_a_folder(target: str) -> bool:
    """Whether ``target`` (``nlaugmenter:TARGET``) names NL-Augmenter's transformation by its
    folder, in either spelling: ``<folder>`` or the class in that folder's module
    (``nlaugmenter.transformations.<folder>.transformation.Class``, or the older top-level
    ``transformations.…``; the papers preset and runs stored by earlier versions spell it so).
    Such a spec is registered, not an arbitrary import path: it is accepted from data too."""
    if target.isidentifier():
        return True
    module_name, _, cls_name = target.rpartition(".")
    folder = _transformation_folder(module_name)
    return (cls_name.isidentifier() and folder is not None and folder.isidentifier()
            and module_name in {p.format(folder) for p in _FOLDER_MODULES})


def _transformation_folder(module_name: str) -> str | None:
    """``butter_fingers_perturbation`` for NL-Augmenter's ``…transformations.<folder>.transformation``."""
    parts = module_name.split(".")
    if len(parts) >= 3 and parts[-1] == "transformation" and parts[-3] == "transformations":
        return parts[-2]
    return None


#: the modules that define NL-Augmenter's SentenceOperation base (today's package, the older
#: top-level layout) and robustlab's stand-in
_BASE_MODULES = ("nlaugmenter.interfaces.SentenceOperation", "interfaces.SentenceOperation",
                 __name__)


def is_operation_class(cls: Any) -> bool:
    """What a spec may name as an NL-Augmenter transformation: a class (not a base itself)
    whose ancestors include a class called ``SentenceOperation`` defined in NL-Augmenter's
    ``interfaces.SentenceOperation`` module (either layout) or robustlab's stand-in, that
    defines ``generate``, and that is not from the standard library. Checked by the ancestors'
    module names, so NL-Augmenter need not be importable to tell; nothing else is ever called."""
    if not isinstance(cls, type) or cls.__name__ == "SentenceOperation":
        return False
    top = (cls.__module__ or "").partition(".")[0]
    if top in sys.stdlib_module_names or top == "builtins":
        return False
    bases = cls.__mro__[1:]
    return callable(getattr(cls, "generate", None)) and any(
        b.__name__ == "SentenceOperation" and b.__module__ in _BASE_MODULES for b in bases)


def _operation_in(module: Any) -> type | None:
    """The SentenceOperation class a transformation module defines (None if not exactly one)."""
    found = [c for c in vars(module).values() if isinstance(c, type)
             and c.__module__ == module.__name__ and is_operation_class(c)]
    return found[0] if len(found) == 1 else None


class _DownloadRefused(Exception):
    """Raised in place of ``nltk.download`` while an NL-Augmenter transformation is imported,
    built or run: robustlab never downloads behind the user's back."""

    def __init__(self, resource: str) -> None:
        super().__init__(resource)
        self.resource = resource


@contextlib.contextmanager
def _no_downloads(spec: str) -> Iterator[None]:
    """Refuse NLTK downloads (some transformations call ``nltk.download`` when imported or
    built, which offline ends in a traceback) and turn whatever the third-party code raises into
    one :class:`PerturbationError` that names the real cause: a missing module (``torchtext``),
    a refused download, a missing model or resource. Only ``nltk`` modules already loaded are
    patched; a transformation that imports nltk itself gets the patched function too, since
    nltk is imported here first when it is installed."""
    try:
        import nltk
    except ImportError:
        nltk = None  # type: ignore[assignment]
    original = getattr(nltk, "download", None)

    def refuse(info_or_id: Any = None, *args: Any, **kwargs: Any) -> bool:
        raise _DownloadRefused(str(info_or_id))

    if nltk is not None:
        nltk.download = refuse
    try:
        yield
    except PerturbationError:
        raise
    except _DownloadRefused as exc:
        raise PerturbationError(
            f"{spec}: the transformation tries to download the NLTK resource "
            f"{exc.resource!r}; robustlab does not download: install it yourself "
            f"(python -m nltk.downloader {exc.resource}) and rerun") from None
    except ModuleNotFoundError as exc:
        raise PerturbationError(f"{spec}: {_missing_module(exc)}") from None
    except Exception as exc:  # the transformation's own failure: one line, never a traceback
        what = " ".join(str(exc).split()) or type(exc).__name__
        raise PerturbationError(f"{spec}: the transformation failed while loading: "
                                f"{type(exc).__name__}: {what[:300]}") from None
    finally:
        if nltk is not None:
            nltk.download = original


def _missing_module(exc: ModuleNotFoundError) -> str:
    """``needs the Python module 'torchtext', which is not installed``: a transformation's own
    dependency, named (not "is NL-Augmenter on PYTHONPATH?")."""
    top = (exc.name or str(exc)).split(".")[0]
    return (f"the transformation needs the Python module {exc.name!r}, which is not installed "
            f"(install {top!r} into this environment, or choose another transformation)")


def _is_the_module(exc: ImportError, name: str) -> bool:
    """Whether ``exc`` says ``name`` itself (or a package on its path) is absent, as opposed to
    something ``name`` imports."""
    missing = getattr(exc, "name", None)
    return isinstance(exc, ModuleNotFoundError) and bool(missing) and (
        missing == name or name.startswith(missing + "."))


def _resolve_folder(folder: str) -> type:
    """The transformation class of NL-Augmenter's folder ``folder`` (its short name)."""
    spec = f"nlaugmenter:{folder}"
    if not folder.isidentifier():
        raise PerturbationError(f"{spec}: not a transformation folder name or a "
                                "module.ClassName path")
    absent = []
    for pattern in _FOLDER_MODULES:
        name = pattern.format(folder)
        try:
            with _no_downloads(spec):
                try:
                    module = importlib.import_module(name)
                except ModuleNotFoundError as exc:
                    if not _is_the_module(exc, name):
                        raise  # the transformation is there; one of its imports is not
                    absent.append(exc.name)
                    continue
        except PerturbationError as exc:
            raise PerturbationError(f"{exc} (NL-Augmenter's {name})") from None
        cls = _operation_in(module)
        if cls is None:
            raise PerturbationError(
                f"nlaugmenter:{folder}: {name} does not define exactly one SentenceOperation "
                "subclass; give nlaugmenter:<module.ClassName> on the command line")
        return cls
    raise PerturbationError(f"{spec}: cannot import NL-Augmenter's transformation {folder!r}: "
                            f"{_not_found(folder, absent)}")


def _not_found(folder: str, absent: list[str]) -> str:
    """No such folder: where NL-Augmenter was looked for and, when it is importable, which
    transformation folders it has."""
    try:
        pkg = importlib.import_module("nlaugmenter.transformations")
    except ImportError:
        return (f"NL-Augmenter is not importable (no module {absent[0]!r}); put its checkout on "
                "PYTHONPATH, or give nlaugmenter:<module.ClassName>")
    import pkgutil

    have = sorted(m.name for m in pkgutil.iter_modules(list(pkg.__path__)) if m.ispkg)
    where = ", ".join(str(p) for p in pkg.__path__)
    return (f"the NL-Augmenter checkout at {where} has no transformation folder {folder!r} "
            f"(it has: {', '.join(have) or 'none'})")


def _constructor_params(cls: type) -> str:
    """``seed=0, max_outputs=1``: the parameters ``cls(...)`` takes, for a message."""
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):
        return "unknown"
    shown = [str(p) for n, p in sig.parameters.items() if n != "self"
             and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values()):
        shown.append("**kwargs")
    return ", ".join(shown) or "none"


def _construct(spec: str, cls: type, params: dict[str, Any]) -> Any:
    """``cls(**params)``; an unknown parameter names the constructor's actual ones, a failure
    inside the constructor (a missing model, a refused download) its real cause."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        sig = None
    if sig is not None:
        try:
            sig.bind(**params)
        except TypeError as exc:
            wrapper = ", ".join(sorted(_WRAPPER_KEYS))
            raise PerturbationError(
                f"{spec}: {cls.__name__}() {exc}; its constructor takes "
                f"({_constructor_params(cls)}), the adapter {wrapper}") from None
    with _no_downloads(spec):
        try:
            return cls(**params)
        except TypeError as exc:
            raise PerturbationError(
                f"{spec}: {exc}; {cls.__name__} takes ({_constructor_params(cls)})") from None


def from_spec(target: str, *, trusted: bool = False, **params: Any) -> NLAugmenterPerturbation:
    """``nlaugmenter:<folder>[:k=v,...]`` (NL-Augmenter's transformation folder name, e.g.
    ``butter_fingers_perturbation``) or ``nlaugmenter:package.module.ClassName[:k=v,...]``
    (for :func:`registry.parse_spec`, which lets the latter through only when the user typed
    it). The class must pass :func:`is_operation_class` before it is called.

    Parameters named reseed/level/asymmetric/label_preserving configure the wrapper; the others
    (e.g. ``max_outputs``, ``seed``) go to the operation's constructor.
    """
    from robustlab.perturbations.named import import_class

    module_name, _, cls_name = target.rpartition(".")
    spec = f"nlaugmenter:{target}"
    if not module_name:
        cls = _resolve_folder(target)
    else:
        with _no_downloads(spec):
            cls = import_class(module_name, cls_name, spec)
    if not is_operation_class(cls):
        raise PerturbationError(
            f"{spec}: {cls.__module__}.{cls.__qualname__} is not an NL-Augmenter "
            "SentenceOperation subclass; refused (nothing was called)")
    wrapper = {k: params.pop(k) for k in list(params) if k in _WRAPPER_KEYS}
    return from_nlaugmenter(_construct(spec, cls, params), **wrapper)


# ---- robustlab -> NL-Augmenter -------------------------------------------------------------------

_LEVEL_KEYWORDS = {
    "character": ["morphological", "noise", "rule-based"],
    "word": ["lexical", "rule-based"],
    "sentence": ["syntactic", "rule-based"],
}


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.replace(":", "_").split("_") if part)


def nlaugmenter_class(perturbation: Perturbation) -> type:
    """A SentenceOperation subclass that applies ``perturbation`` (constructor ``(seed, max_outputs)``)."""
    perturbation.validate()
    real = _real_interface()
    base, task_type = real if real is not None else (SentenceOperation, TaskType)
    pert = perturbation

    def __init__(self, seed: int = 0, max_outputs: int = 1) -> None:  # noqa: N807
        base.__init__(self, seed, max_outputs=max_outputs)
        self.perturbation = pert

    def generate(self, sentence: str) -> list[str]:
        n = 1 if pert.deterministic else max(1, int(self.max_outputs))
        return [pert.perturb(sentence, seed=int(self.seed) + k) for k in range(n)]

    attrs = {
        "__init__": __init__,
        "generate": generate,
        "__doc__": f"robustlab perturbation {pert.signature()} as an NL-Augmenter transformation.",
        "__module__": __name__,
        "tasks": [task_type.TEXT_CLASSIFICATION, task_type.TEXT_TO_TEXT_GENERATION],
        "languages": ["en"],
        "keywords": list(_LEVEL_KEYWORDS.get(pert.level, [])),
        "heavy": bool(pert.heavy),
        "perturbation": pert,
    }
    return type(_camel(pert.name) or "RobustlabPerturbation", (base,), attrs)


def to_nlaugmenter(perturbation: Perturbation, seed: int = 0, max_outputs: int = 1) -> Any:
    """An NL-Augmenter transformation instance applying ``perturbation``."""
    return nlaugmenter_class(perturbation)(seed=seed, max_outputs=max_outputs)
