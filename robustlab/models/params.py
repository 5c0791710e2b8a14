"""What each model family accepts: its parameters, their defaults and their allowed values.

A spec such as ``bow:hidden=-3``, ``textrnn:steps=1e20``, ``cnn:lr=nan`` or ``minilm:batch_size=0``
used to reach torch and end in a traceback mid-study (issue 21 item 12). Every value is checked
here, by the families' constructors (:class:`~robustlab.models.torch_models.TorchClassifier`,
:class:`~robustlab.models.hf.HFClassifier`) and, before anything runs or is created, by
``check_model_spec``, the studies' option checks and the TUI, without importing torch (this
module is plain data): one ``InputError`` naming the family, the parameter and what it takes.

The bounds are sanity limits, not tuning advice: an upper bound is where a value can only be a
typo (``steps=1e20``: 10¹⁴ years at 3 ms a step; ``embed_dim=1e9``: a 400 GB embedding table).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from robustlab.errors import InputError

#: the most optimiser steps any family accepts (a month of 0.25 s steps); beyond is a typo
MAX_STEPS = 10_000_000
#: the widest layer (embedding, hidden) a family accepts
MAX_WIDTH = 65_536
MAX_BATCH = 1_000_000
SEED_LIMIT = 2**32  # seeds are 0 <= seed < 2**32, as everywhere (numpy's SeedSequence range)


@dataclass(frozen=True)
class Rule:
    """One parameter's allowed values: a type and a range (closed unless ``open_low`` /
    ``open_high`` exclude an end), or a set of choices; ``none`` lets it be None."""

    kind: type
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    choices: tuple[Any, ...] = ()
    none: bool = False

    def describe(self) -> str:
        if self.choices:
            return "one of " + ", ".join(map(str, self.choices))
        name = {int: "an integer", float: "a number", bool: "true or false", str: "a text"}[
            self.kind]
        if self.low is not None and self.high is not None:
            name += (f" {'>' if self.open_low else '>='} {_num(self.low)} and "
                     f"{'<' if self.open_high else '<='} {_num(self.high)}")
        elif self.low is not None:
            name += f" {'>' if self.open_low else '>='} {_num(self.low)}"
        return name + (" (or none)" if self.none else "")

    def check(self, value: Any) -> Any:
        """The value, normalised (``1e3`` -> 1000 for an integer), or ValueError."""
        if value is None:
            if self.none:
                return None
            raise ValueError
        if self.choices:
            if isinstance(value, str) and value.lower() in self.choices:
                return value.lower()
            if value in self.choices and not isinstance(value, bool):
                return value
            raise ValueError
        if self.kind is bool:
            if isinstance(value, bool):
                return value
            raise ValueError
        if self.kind is str:
            if isinstance(value, str):
                return value
            raise ValueError
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError
        if self.kind is int:
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError
                value = int(value)
        else:
            value = float(value) if not isinstance(value, int) else value
        if self.low is not None and (value < self.low or (self.open_low and value == self.low)):
            raise ValueError
        if self.high is not None and (value > self.high or (self.open_high and
                                                            value == self.high)):
            raise ValueError
        return value


def _num(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _int(low: int, high: int, none: bool = False) -> Rule:
    return Rule(int, low, high, none=none)


#: parameters every torch family accepts (per-family defaults override some of them)
TORCH_COMMON: dict[str, Any] = {
    "steps": 200,          # optimiser steps per fit (same across a study)
    "batch_size": 64,
    "lr": 2e-3,            # Adam
    "weight_decay": 0.0,
    "embed_dim": 64,
    "hidden": 64,
    "dropout": 0.2,
    "max_len": 50,         # tokens per example (pairs: shared between the sides)
    "max_vocab": 30000,
    # Training singletons map to <unk>, so the <unk> embedding is trained on the rare-word
    # distribution that unseen (e.g. perturbed) test words resemble; with min_freq=1 it stayed at
    # its random init. Measured on SST-2 dev, 3 seeds, 200 steps: textrnn 0.728 -> 0.755,
    # bow 0.765 -> 0.772 accuracy, with a smaller seed spread.
    "min_freq": 2,
    "lowercase": False,    # keep case: case perturbations must stay visible to the model
    "seed": 0,
    "num_threads": 1,      # torch intra-op threads in fit/predict (small ops: 1 is fastest; None: leave)
    "device": None,        # None/"auto": CUDA when available, else CPU (runtime, not in model_id)
    "predict_batch_size": 512,
}

#: each torch family's own defaults (over :data:`TORCH_COMMON`)
TORCH_DEFAULTS: dict[str, dict[str, Any]] = {
    "textrnn": {"cell": "lstm", "bidirectional": True, "layers": 1, "lr": 4e-3},
    "bow": {"embed_dim": 100, "hidden": 100, "lr": 5e-3},
    "cnn": {"embed_dim": 100, "hidden": 100, "lr": 5e-3, "kernel_sizes": (3, 4, 5),
            "dropout": 0.3},
    "lstm": {"embed_dim": 100, "hidden": 100, "cell": "lstm", "bidirectional": False,
             "layers": 1},
    "transformer": {"layers": 3, "heads": 4, "lr": 3e-3, "dropout": 0.1},
}

_COMMON_RULES: dict[str, Rule] = {
    "steps": _int(1, MAX_STEPS),
    "batch_size": _int(1, MAX_BATCH),
    "lr": Rule(float, 0, 10, open_low=True),
    "weight_decay": Rule(float, 0, 100),
    "seed": _int(0, SEED_LIMIT - 1),
    "num_threads": _int(0, 1024, none=True),  # 0 or none: leave torch's setting
    "device": Rule(str, none=True),
    "predict_batch_size": _int(1, MAX_BATCH),
}

TORCH_RULES: dict[str, Rule] = {
    **_COMMON_RULES,
    "embed_dim": _int(1, MAX_WIDTH),
    "hidden": _int(1, MAX_WIDTH),
    "dropout": Rule(float, 0, 1, open_high=True),
    "max_len": _int(1, 100_000),
    "max_vocab": _int(2, 100_000_000),
    "min_freq": _int(1, 2**31),
    "lowercase": Rule(bool),
    "cell": Rule(str, choices=("lstm", "gru", "rnn")),
    "bidirectional": Rule(bool),
    "layers": _int(1, 64),
    "heads": _int(1, 256),
}

#: :class:`~robustlab.models.hf.HFClassifier`'s parameters (its constructor's defaults are the
#: home of the values; the names must match them, which tests/test_bad_inputs.py checks)
HF_RULES: dict[str, Rule] = {
    **_COMMON_RULES,
    "checkpoint": Rule(str),
    "name": Rule(str, none=True),
    "max_length": _int(1, 1_000_000),  # or "auto"
    "warmup_ratio": Rule(float, 0, 1),
    "precision": Rule(str, choices=("auto", "fp32", "bf16", "fp16")),
    "tokenizer": Rule(str, none=True),
}


def family_of(name: str) -> str:
    """The parameter table of a model spec's name: a torch family, ``minilm``, else ``hf`` (a
    checkpoint)."""
    low = str(name).lower()
    return low if low in TORCH_DEFAULTS or low == "minilm" else "hf"


def torch_defaults(family: str) -> dict[str, Any]:
    return {**TORCH_COMMON, **TORCH_DEFAULTS[family]}


def _bad(family: str, key: str, value: Any, what: str) -> InputError:
    return InputError(f"--model {family}: {key}={value!r} is out of range: {key} takes {what}")


def check_params(family: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` of ``family`` (a torch family, ``minilm`` or ``hf``) checked and normalised;
    one :class:`InputError` for an unknown parameter or a value out of range."""
    if family in TORCH_DEFAULTS:
        allowed, rules = torch_defaults(family), TORCH_RULES
    elif family in ("hf", "minilm"):
        allowed, rules = HF_RULES, HF_RULES
    else:
        return dict(params)
    unknown = sorted(set(params) - set(allowed))
    if unknown:
        raise InputError(f"--model {family}: unknown parameter(s) {', '.join(unknown)}; "
                         f"accepted: {', '.join(sorted(allowed))}")
    out: dict[str, Any] = {}
    for key, value in params.items():
        if key == "kernel_sizes":
            out[key] = _kernel_sizes(family, value)
            continue
        if key == "max_length" and isinstance(value, str) and value.lower() == "auto":
            out[key] = "auto"
            continue
        rule = rules[key]
        try:
            out[key] = rule.check(value)
        except ValueError:
            raise _bad(family, key, value, rule.describe() + (" or auto" if key == "max_length"
                                                              else "")) from None
    if family == "transformer":
        merged = {**torch_defaults(family), **out}
        if merged["embed_dim"] % merged["heads"]:
            raise InputError(f"--model transformer: embed_dim={merged['embed_dim']} is not a "
                             f"multiple of heads={merged['heads']} (each head gets "
                             "embed_dim/heads dimensions)")
    return out


def _kernel_sizes(family: str, value: Any) -> tuple[int, ...]:
    """CNN widths: a list of integers 1..100 (one width from the command line: ``kernel_sizes=3``)."""
    items = [value] if isinstance(value, (int, float)) and not isinstance(value, bool) else value
    rule = _int(1, 100)
    try:
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items:
            raise ValueError
        return tuple(rule.check(k) for k in items)
    except ValueError:
        raise _bad(family, "kernel_sizes", value, "convolution widths, integers >= 1 and <= "
                   "100 (one width on the command line, e.g. kernel_sizes=3)") from None
