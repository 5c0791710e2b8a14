"""Held-out data by construction: what ``robustlab train`` leaves beside a model so that a later
``robustlab eval`` tests it on data it did not train on, and can tell when it does not.

* ``heldout.tsv`` — the split train held out (or its ``--test-dataset``), as a TSV with a header
  (``label``, ``text`` [, ``text_pair``]) that every command reads back as it was;
* ``train_rows.txt`` — one short hash per distinct training text (SHA-256, first 16 hex digits;
  no text is stored), so eval counts how many of its examples the model trained on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: the held-out split beside a trained model
HELDOUT_FILE = "heldout.tsv"
#: hashes of the training texts beside a trained model
TRAIN_ROWS_FILE = "train_rows.txt"


def row_hash(text: Any) -> str:
    """A text's (or a pair's) identity for overlap counting: whitespace at the ends ignored."""
    parts = (text,) if isinstance(text, str) else tuple(text)
    joined = "\x1f".join(str(p).strip() for p in parts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def write_training_rows(model_dir: str | Path, texts: Iterable[Any]) -> Path:
    path = Path(model_dir) / TRAIN_ROWS_FILE
    path.write_text("".join(f"{h}\n" for h in sorted({row_hash(t) for t in texts})),
                    encoding="ascii")
    return path


def read_training_rows(model_dir: str | Path) -> set[str] | None:
    """The training texts' hashes a model directory holds (None: a model saved before this, a
    checkpoint, or a damaged file: nothing to compare)."""
    path = Path(model_dir) / TRAIN_ROWS_FILE
    try:
        lines = path.read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return None
    if not all(len(h) == 16 and all(c in "0123456789abcdef" for c in h) for h in lines):
        return None
    return set(lines)


def overlap(texts: Sequence[Any], trained: set[str]) -> int:
    """How many of ``texts`` the model trained on (by :func:`row_hash`)."""
    return sum(row_hash(t) in trained for t in texts)


def write_heldout(model_dir: str | Path, texts: Sequence[Any], labels: Sequence[int]) -> Path:
    from robustlab.data.files import write_rows

    pairs = bool(texts) and not isinstance(texts[0], str)
    rows = [{"label": int(y), "text": t[0], "text_pair": t[1]} if pairs else
            {"label": int(y), "text": t} for t, y in zip(texts, labels, strict=True)]
    cols = ["label", "text", "text_pair"] if pairs else ["label", "text"]
    return write_rows(Path(model_dir) / HELDOUT_FILE, rows, columns=cols)


__all__ = ["HELDOUT_FILE", "TRAIN_ROWS_FILE", "overlap", "read_training_rows", "row_hash",
           "write_heldout", "write_training_rows"]
