"""Which torch device a model runs on, and the CUDA settings that go with it.

One place for ``--device auto|cpu|cuda|cuda:N`` so every command (train, learnability,
robustness, attack, bias, cross-domain) accepts the same values and fails the same way. The
device is a *runtime* choice: it is never part of a model id or a study signature, so a study
started on a CPU machine resumes on a GPU one.
"""

from __future__ import annotations

import re
from typing import Any

from robustlab.errors import InputError

#: values accepted by ``--device`` (``cuda:N`` is accepted too)
CHOICES = ("auto", "cpu", "cuda")
_SPEC = re.compile(r"^(auto|cpu|cuda(?::\d+)?|mps)$")


def add_device_option(parser: Any) -> None:
    """The one ``--device`` option of every command that runs a model."""
    parser.add_argument("--device", default="auto", metavar="DEV",
                        help="where models run: auto (CUDA when present, default), cpu, cuda, "
                        "cuda:N; not part of a study's signature (resume on another machine)")


def check_device(spec: str | None) -> str:
    """Validate a ``--device`` value without importing torch (for preflight); returns it."""
    value = "auto" if spec in (None, "") else str(spec).strip().lower()
    if not _SPEC.match(value):
        raise InputError(f"--device: unknown device {spec!r}; use auto, cpu, cuda or cuda:N")
    return value


def resolve_device(spec: str | None = "auto") -> Any:
    """``auto`` (or None) -> CUDA when present, else CPU; ``cuda``/``cuda:N`` must exist.

    Asking for CUDA on a machine without it is an :class:`InputError` naming the fix, not
    torch's ``AssertionError: Torch not compiled with CUDA enabled`` deep inside a training.
    """
    import torch

    value = check_device(spec)
    if value == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if value.startswith("cuda"):
        if not torch.cuda.is_available():
            raise InputError(f"--device {value}: no CUDA GPU is available here (torch "
                             f"{torch.__version__}); use --device cpu or --device auto")
        dev = torch.device(value)
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise InputError(f"--device {value}: only {torch.cuda.device_count()} CUDA "
                             f"device(s) here (cuda:0..cuda:{torch.cuda.device_count() - 1})")
        return dev
    if value == "mps" and not (getattr(torch.backends, "mps", None)
                               and torch.backends.mps.is_available()):
        raise InputError("--device mps: Apple's MPS backend is not available here")
    return torch.device(value)


def enable_fast_math(dev: Any) -> None:
    """TF32 matmuls on CUDA (Ampere and newer): several times faster fp32 matmuls outside the
    autocast regions with no effect on fine-tuning accuracy; a no-op on CPU.
    ``set_float32_matmul_precision`` is the API stable across torch 2.x (the ``allow_tf32``
    flags are being deprecated); cuDNN's TF32 is on by default."""
    import torch

    if getattr(dev, "type", str(dev)) == "cuda":
        torch.set_float32_matmul_precision("high")


def autocast_dtype(dev: Any, precision: str) -> Any:
    """The autocast dtype for ``precision`` on ``dev`` (None: full fp32).

    ``auto``: fp32 everywhere, with TF32 matmuls on CUDA (:func:`enable_fast_math`). Measured on
    an H100 (torch 2.11, transformers 5.17, batch 32, SST-2 lengths ≤ 56 tokens): bf16 autocast
    was 3.5× *slower* per step than TF32 fp32 for a BERT-base-sized model (0.133 vs 0.038 s) and
    MiniLM (bf16 0.047 vs fp32 0.021 s), the step being bound by host-side dispatch at these
    sizes, not by matmul throughput. ``bf16`` (any device) and ``fp16`` (CUDA, with a gradient
    scaler) stay available for long sequences and large batches where they pay.
    """
    import torch

    p = str(precision).lower()
    if p not in ("auto", "fp32", "bf16", "fp16"):
        raise InputError(f"precision: unknown {precision!r}; use auto, fp32, bf16 or fp16")
    kind = getattr(dev, "type", str(dev))
    if p in ("auto", "fp32"):
        return None
    if p == "fp16" and kind == "cpu":
        raise InputError("precision=fp16 needs a GPU; use bf16 or fp32 on CPU")
    return torch.bfloat16 if p == "bf16" else torch.float16
