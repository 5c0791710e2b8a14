"""A fresh, untrained classifier from a model spec, with the runtime options its class takes.

Every study that trains per cell (learnability, cross-domain classification) builds its models
here, so a spec means the same model in each.
"""

from __future__ import annotations

import inspect
from typing import Any


def build_model(spec: str, *, seed: int, steps: int, num_threads: int | None = None,
                device: str | None = None, trusted: bool = False) -> Any:
    """A fresh, untrained classifier for ``spec`` seeded with ``seed``.

    A saved model directory stands for its family and hyperparameters: the study retrains it
    (a Hugging Face model restarts from its saved weights), since every cell trains its own.
    ``device`` and ``num_threads`` are runtime options (not in the model id or a signature);
    a Hugging Face model's checkpoint and tokenizer are loaded once per process
    (:mod:`robustlab.models.hf`), so building one per cell costs nothing. ``trusted``: the spec
    was typed on this command line, or belongs to a configuration that passed
    ``validate(trusted=...)`` (a ``package.module:Class`` is accepted only then).
    """
    from robustlab.models import registry  # loaded when a model is built, not on import

    options = {"seed": seed, "steps": steps, "num_threads": num_threads,
               "device": None if device in (None, "auto") else device}
    cls = registry.user_model_class(spec, trusted=trusted)
    if cls is not None:
        return cls(**_accepted(cls, options))
    if registry.is_saved_model(spec):
        saved_cls, saved = registry.saved_params(spec)  # metadata only: no weights per cell
        return saved_cls(**{**saved, **_accepted(saved_cls, options)})
    name, params = registry.parse_model_spec(spec)
    probe = registry.make_model(spec)
    return registry.make_model(name, **params, **{k: v for k, v in
                                                  _accepted(type(probe), options).items()
                                                  if k not in params})


def _accepted(cls: type, options: dict[str, Any]) -> dict[str, Any]:
    """The options ``cls`` takes (by ``param_defaults()`` or its constructor signature)."""
    defaults = getattr(cls, "param_defaults", None)
    if callable(defaults):
        names = set(defaults())
    else:
        names = set(inspect.signature(cls.__init__).parameters) - {"self"}
    return {k: v for k, v in options.items() if v is not None and k in names}
