"""Reproducibility signatures: versions of the stack and a short, stable fingerprint.

Versions are read from package metadata (``importlib.metadata``), never by importing the
packages, so taking a signature is cheap and loads neither torch nor textattack.
"""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from importlib import metadata
from typing import Any

from robustlab.version import __version__

TRACKED = ("numpy", "scipy", "torch", "transformers", "textattack", "checklist", "sacrebleu",
           "datasets", "ray", "textual", "nltk", "lemminflect")


def versions() -> dict[str, Any]:
    out: dict[str, Any] = {"robustlab": __version__, "python": sys.version.split()[0],
                           "platform": platform.platform()}
    for name in TRACKED:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


def fingerprint(obj: Any, n: int = 12) -> str:
    """A short hash of any JSON-able object (dataset contents, configs)."""
    blob = json.dumps(obj, sort_keys=True, default=str).encode("utf-8")
    return hashlib.blake2b(blob, digest_size=16).hexdigest()[:n]


def make_signature(kind: str, **fields: Any) -> str:
    """sacreBLEU-style signature ``kind|k:v|...|v:VERSION`` (the version always last)."""
    parts = [kind] + [f"{k}:{v}" for k, v in fields.items() if v is not None]
    parts.append(f"v:{__version__}")
    return "|".join(parts)
