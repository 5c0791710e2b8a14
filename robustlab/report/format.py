"""How report blocks write values: numbers to fixed digits, mean ± sd over seeds, and a
sentence's changed words marked. Below the sections and the studies' own report sections
(``robustlab.studies.<kind>.report``), which both use them."""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from robustlab.report.doc import Segments
from robustlab.textfmt import spread_text

DIGITS = 3


def num(v: Any, digits: int = DIGITS, signed: bool = False) -> str:
    """A number as report text: fixed decimals, '–' for missing / non-finite."""
    if isinstance(v, Mapping):
        v = v.get("mean")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(float(v)):
        return "–"
    return f"{float(v):{'+' if signed else ''}.{digits}f}"


def spread(v: Any, digits: int = DIGITS) -> str:
    """mean ± std over seeds; the mean alone for one seed (a single seed has no spread)."""
    if not isinstance(v, Mapping):
        return num(v, digits)
    return spread_text(dict(v), digits, plain="–")


def word_key(w: str) -> str:
    return w.strip(".,;:!?\"'()[]").lower() or w


def marked_words(before: str, after: str, patch: Sequence[str] = ()) -> Segments:
    """``after`` as segments: words that differ from ``before`` are 'changed'; words of the patch
    pair (when unchanged otherwise) are 'patch'."""
    a, b = before.split(), after.split()
    segs: Segments = []
    pw = {str(p).lower() for p in patch}
    # compared as the attack's word-level ℓ0 sees them: case and surrounding punctuation do
    # not make a word "changed"
    sm = difflib.SequenceMatcher(a=[word_key(w) for w in a], b=[word_key(w) for w in b],
                                 autojunk=False)
    for op, _, _, j1, j2 in sm.get_opcodes():
        for w in b[j1:j2]:
            style = "changed" if op != "equal" else ("patch" if word_key(w) in pw else "")
            segs.append((w, style))
    out: Segments = []
    for i, (w, st) in enumerate(segs):
        if i:
            out.append((" ", ""))
        out.append((w, st))
    return out
