"""What a second-order study records as its inputs (:mod:`robustlab.runs.inputs`): the
neighbourhood source and the patch-pair table, with where each came from. Shared by the attack
(:mod:`.study`) and bias (:mod:`.bias`) studies."""

from __future__ import annotations

import os
from typing import Any

from robustlab.resources import named_source_path
from robustlab.studies.second_order.patch_words import default_pair_source_origin


def source_input(spec: Any, option: str = "--source/--mlm") -> tuple[str | None, str]:
    """``(value, origin)`` of a neighbourhood source for the run's input record: the table file,
    the masked LM (directory or hub id), or WordNet's corpus directory; ``None`` (the default)
    resolves as :func:`~robustlab.studies.second_order.neighbourhood.make_source` does."""
    if spec is not None and not isinstance(spec, str):
        return str(getattr(spec, "name", type(spec).__name__)), f"{option} (an object)"
    origin = option
    if not spec:
        env = os.environ.get("ROBUSTLAB_NEIGHBOURHOOD")
        spec, origin = (env, "default: $ROBUSTLAB_NEIGHBOURHOOD") if env else ("wordnet",
                                                                               "default")
    if spec == "wordnet":
        path = named_source_path("wordnet")
        return (str(path) if path else "wordnet"), f"{origin} wordnet (NLTK data)"
    for prefix in ("table:", "mlm:"):
        if spec.startswith(prefix):
            return spec[len(prefix):], origin
    return spec, origin


def pairs_input(pairs: Any, option: str = "--patch-table") -> tuple[str | None, str]:
    """``(value, origin)`` of the table patch pairs are drawn from; ``None`` (the default)
    resolves as :func:`~robustlab.studies.second_order.patch_words.default_pair_source` does,
    so the run records which table "default" was. A dict given in Python has no file (its
    fingerprint is in the config)."""
    if pairs is None:
        value, origin = default_pair_source_origin()
    elif isinstance(pairs, str):
        value, origin = pairs, option
    else:
        return None, option
    if value in ("wordnet", "textattack-counterfitted"):
        path = named_source_path(value)
        return (str(path) if path else value), (origin if pairs is None else f"{origin} {value}")
    return value, origin


def attack_inputs(kwargs: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of the recipe's own inputs: neighbourhood source, patch table."""
    return [("neighbourhood", *source_input(kwargs.get("source"))),
            ("patch_table", *pairs_input(kwargs.get("pairs")))]
