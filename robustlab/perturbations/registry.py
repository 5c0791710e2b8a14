"""The perturbation registry: one place that knows every perturbation by name.

Built-ins live in the modules listed in ``_BUILTIN_MODULES`` and register themselves with
:func:`~robustlab.perturbations.named.register` when imported (that table and the checks on a
class named by a spec live in :mod:`robustlab.perturbations.named`, below both the built-ins and
the integrations this registry loads by name, so neither imports this module back); third-party packages add theirs through the entry-point group
``robustlab.perturbations`` (each entry point names a Perturbation subclass). The CLI's choices,
``robustlab list perturbations`` and the TUI forms are all derived from here, never typed twice.
"""

from __future__ import annotations

import importlib
from typing import Any

from robustlab.perturbations.base import Perturbation, PerturbationError
from robustlab.perturbations.named import (  # noqa: F401  (registry.register etc. for plugins)
    REGISTERED,
    check_class,
    import_class,
    refuse_untrusted,
    register,
)
from robustlab.perturbations.presets import PAPER_PERTURBATIONS, PRESETS  # noqa: F401
from robustlab.textfmt import echo

_BUILTIN_MODULES = (
    "robustlab.perturbations.base_controls",
    "robustlab.perturbations.learnability_perturbations",
    "robustlab.perturbations.char_perturbations",
    "robustlab.perturbations.word_perturbations",
)
_loaded = False
_builtins_loaded = False


def _load_builtins() -> None:
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    for mod in _BUILTIN_MODULES:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:  # a module not written yet must not break the rest
            if exc.name != mod:
                raise


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    _load_builtins()
    from importlib import metadata  # ~50 ms to import: only when plugins are looked for

    try:
        eps = metadata.entry_points(group="robustlab.perturbations")
    except Exception:  # pragma: no cover - very old importlib.metadata
        eps = []
    for ep in eps:
        cls = ep.load()  # an installed package: trusted, but it must give what the slot expects
        if not (isinstance(cls, type) and issubclass(cls, Perturbation)):
            import sys

            echo(f"warning: entry point {ep.name!r} ({ep.value}) of group "
                 "robustlab.perturbations is not a robustlab Perturbation subclass; ignored",
                 file=sys.stderr)
            continue
        register(cls)


def available() -> dict[str, type[Perturbation]]:
    """Every registered perturbation class by name (sorted)."""
    _load()
    return dict(sorted(REGISTERED.items()))


def get_class(name: str) -> type[Perturbation]:
    # A built-in name is found without scanning the installed distributions for plugins (the
    # entry-point scan costs ~90 ms, most of `robustlab perturb`'s start-up); a plugin cannot
    # take a built-in's name (register refuses), so the answer is the same.
    _load_builtins()
    if name in REGISTERED:
        return REGISTERED[name]
    classes = available()
    if name not in classes:
        import difflib

        if name in PRESETS:  # a list, not one perturbation: expanded where lists are read
            raise PerturbationError(
                f"{name!r} is a preset of several perturbations ({PRESETS[name]}); give it as a "
                "list (--perturbations), or expand it with "
                "robustlab.perturbations.presets.expand")
        close = difflib.get_close_matches(name, list(classes), n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        raise PerturbationError(
            f"unknown perturbation {name!r}.{hint} `robustlab list perturbations` lists them all."
        )
    return classes[name]


def make(name: str, **params: Any) -> Perturbation:
    """Build and validate a perturbation by name; unknown parameters are an error, not ignored."""
    cls = get_class(name)
    allowed = set(cls.param_names())
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise PerturbationError(
            f"{name}: unknown parameter(s) {', '.join(unknown)}; "
            f"accepted: {', '.join(sorted(allowed)) or 'none'}"
        )
    return _build(cls, name, params)


#: spec prefixes resolved by an adapter module's ``from_spec(target, trusted=…, **params)``
#: (``trusted``: whether the user typed the spec), e.g.
#: ``textattack:WordSwapWordNet`` or ``nlaugmenter:my_pkg.module.ClassName:max_outputs=3``
EXTERNAL_PREFIXES = {
    "textattack": "robustlab.integrations.textattack",
    "nlaugmenter": "robustlab.integrations.nlaugmenter",
}


def parse_params(text: str, spec: str = "") -> dict[str, Any]:
    """Parse ``key=value,key=value`` (values parsed as int/float/bool/None/str)."""
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise PerturbationError(f"bad parameter {item!r} in {spec or text!r}; expected key=value")
        params[key.strip()] = parse_value(value.strip())
    return params


def split_label(spec: str) -> tuple[str, str | None]:
    """``("leet_letters:max_leet=0.3", "leet 30%")`` for ``"leet_letters:max_leet=0.3@leet 30%"``.

    The label is everything after the last ``@``; without one the label is None.
    """
    body, at, label = spec.strip().rpartition("@")
    if not at:
        return spec.strip(), None
    if not label.strip():
        raise PerturbationError(f"empty display label in {spec!r}; write spec@label")
    if not body.strip():
        raise PerturbationError(f"no perturbation before the label in {spec!r}")
    return body.strip(), label.strip()


def display_label(spec: str) -> str:
    """The name tables and plots show for ``spec``, without building the perturbation: its
    ``@label``; else the spec with an NL-Augmenter class path shortened to the transformation's
    folder (``nlaugmenter:a.transformations.x.transformation.Cls`` -> ``nlaugmenter:x``)."""
    body, label = split_label(spec)
    if label:
        return label
    prefix, colon, rest = body.partition(":")
    if prefix == "nlaugmenter" and colon:
        target, sep, params = rest.partition(":")
        module, _, _cls = target.rpartition(".")
        parts = module.split(".")
        if len(parts) >= 3 and parts[-1] == "transformation" and parts[-3] == "transformations":
            return f"nlaugmenter:{parts[-2]}{sep}{params}"
    return body


def parse_spec(spec: str, *, trusted: bool = False, **overrides: Any) -> Perturbation:
    """Parse ``name`` or ``name:key=value,key=value`` (values parsed as int/float/bool/str),
    optionally followed by ``@label``, the display label (:attr:`Perturbation.display_name`).

    A spec names a registered thing: a built-in or an installed package's entry point (group
    ``robustlab.perturbations``), ``nlaugmenter:<folder>`` (NL-Augmenter's transformation
    folder) or ``textattack:<Name>`` (a TextAttack transformation or augmenter). Only with
    ``trusted`` (the user typed the spec on this command line) may it name a class by its
    import path: ``package.module:Class`` (a robustlab Perturbation),
    ``nlaugmenter:package.module.Class`` or ``textattack:package.module.Class``. Either way the
    class is checked to be of the slot's kind before it is called (:func:`check_class`).
    ``overrides`` (e.g. from ``--param``) win over parameters in the spec.
    """
    body, label = split_label(spec)
    name, _, rest = body.partition(":")
    if name in EXTERNAL_PREFIXES:
        target, _, rest = rest.partition(":")
        target = target.strip()
        module = importlib.import_module(EXTERNAL_PREFIXES[name])
        if "." in target and not (name == "nlaugmenter" and module.names_a_folder(target)):
            refuse_untrusted(spec, trusted)  # an import path; a folder's class path is registered
        params = {**parse_params(rest, spec), **overrides}
        pert = module.from_spec(target, trusted=trusted, **params)
    elif "." in name and name not in REGISTERED:
        refuse_untrusted(spec, trusted)
        cls_name, _, rest = rest.partition(":")
        cls = check_class(import_class(name.strip(), cls_name.strip(), spec), Perturbation,
                          "a robustlab Perturbation subclass", spec)
        pert = _build(cls, spec, {**parse_params(rest, spec), **overrides})
    else:
        pert = make(name, **{**parse_params(rest, spec), **overrides})
    return pert.with_label(label) if label else pert


def _build(cls: type[Perturbation], spec: str, params: dict[str, Any]) -> Perturbation:
    try:
        pert = cls(**params)
    except TypeError as exc:
        raise PerturbationError(f"{spec}: {exc}") from None
    pert.validate()
    return pert


def parse_value(v: str) -> Any:
    """A ``key=value`` parameter's value: bool, None, int, float, else the string itself."""
    low = v.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def describe() -> list[dict[str, Any]]:
    """Rows for ``robustlab list perturbations`` and the TUI."""
    rows = []
    for name, cls in available().items():
        rows.append(
            {
                "name": name,
                "level": cls.level,
                "asymmetric": cls.asymmetric,
                "label_preserving": cls.label_preserving,
                "source": cls.source,
                "params": cls.param_defaults(),
                "summary": cls.summary,
            }
        )
    return rows


def asymmetric_names() -> list[str]:
    """Names of perturbations valid for learnability (g(g(x)) != x)."""
    return [n for n, c in available().items() if c.asymmetric]
