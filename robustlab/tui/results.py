"""Generic building blocks of the results screens: numbers out of a summary, a cell's result,
a word-by-word diff. Each study kind's own reader (its *view*: the tables and plots of its
results screen) lives in its study package beside its screen (``studies/<kind>/view.py``,
``second_order/attack_view.py``, …), loaded by that screen.

Final aggregates come from ``summary.json`` (written by the study itself: the TUI never
recomputes a metric); per-cell detail comes from the store, so a run still in progress shows
what is done so far. Field names follow docs/run-directory.md.
"""

from __future__ import annotations

import difflib
import os
import re
from typing import Any

from robustlab.runs.store import RunStore


def num(v: Any) -> float | None:
    """A number of a summary (a ``{"mean": …}`` block's mean), or None."""
    if isinstance(v, dict):
        v = v.get("mean")
    return float(v) if isinstance(v, (int, float)) else None


def load_example(path: str | os.PathLike[str], key: str) -> dict[str, Any] | None:
    """The result of cell ``key`` (None when it is missing or damaged)."""
    with RunStore(path, readonly=True) as store:
        cell = store.cell(key)
    return cell.result if cell else None


_TOKEN = re.compile(r"\S+")


def word_diff(a: str, b: str | None) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Both sentences as (word, changed) pairs, aligned word by word with difflib."""
    wa = _TOKEN.findall(a or "")
    if b is None:  # no vulnerable example: nothing to highlight
        return [(w, False) for w in wa], []
    wb = _TOKEN.findall(b)
    ca, cb = [False] * len(wa), [False] * len(wb)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=wa, b=wb, autojunk=False).get_opcodes():
        if tag != "equal":
            ca[i1:i2] = [True] * (i2 - i1)
            cb[j1:j2] = [True] * (j2 - j1)
    return list(zip(wa, ca, strict=True)), list(zip(wb, cb, strict=True))
