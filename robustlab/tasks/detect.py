"""The task a data file holds, read from its first lines, for a command given a file and no
``--task``. Rules, first match wins (each names a format of :mod:`robustlab.tasks.formats`):

* a WikiQA header (``QuestionID``, ``Question``, ``Sentence``, ``Label`` among its tab-separated
  names) -> answer-selection;
* a ``-DOCSTART-`` line, or space- or tab-separated token lines whose last column is an IOB tag
  (``O``, ``B-X``, ``I-X``) in sentences separated by blank lines -> ner;
* tab-separated lines of at least 7 fields with a number in the fifth -> similarity (STS);
* ``label<TAB>text<TAB>text`` lines -> pair;
* anything else -> classification.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robustlab.data.files import read_rows
from robustlab.tasks.align import IOB2_TAG

__all__ = ["SAMPLE_LINES", "dataset_task", "detect_task"]

#: lines looked at
SAMPLE_LINES = 200


def _number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def detect_task(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """The name of the task ``path`` holds (module docstring)."""
    rows = read_rows(path, fmt="text", encoding=encoding).rows[: SAMPLE_LINES]
    lines = [r["text"] for r in rows]
    filled = [ln for ln in lines if ln.strip()]
    if not filled:
        return "classification"
    head = set(filled[0].split("\t"))
    if {"QuestionID", "Question", "Sentence", "Label"} <= head:
        return "answer-selection"
    if filled[0].startswith("-DOCSTART-"):
        return "ner"
    token_lines = [ln for ln in filled if not ln.startswith("-DOCSTART-")]
    if len(filled) < len(lines) and all(
            len(ln.split()) >= 2 and IOB2_TAG.fullmatch(ln.split()[-1]) for ln in token_lines):
        return "ner"
    fields = [ln.split("\t") for ln in filled]
    if all(len(f) >= 7 and _number(f[4]) for f in fields):
        return "similarity"
    if all(len(f) == 3 and f[1].strip() and f[2].strip() for f in fields):
        return "pair"
    return "classification"


#: ``format`` values that leave a file's task to be read from it (a task's own formats)
TASK_FORMATS = (None, "conll", "sts", "snli", "wikiqa")


def dataset_task(dataset: Mapping[str, Any]) -> str | None:
    """The task of a dataset spec (``{"path": ..., "encoding": ...}``) read from its file, or
    None (a named dataset; a file read with column or non-task format options, which are
    single texts). One rule for ``eval`` and a ``check`` plan, so a plan knows its task before
    anything runs."""
    path = dataset.get("path")
    if not path or not Path(path).is_file() or {"text_column", "label_column"} & set(dataset) \
            or dataset.get("format") not in TASK_FORMATS:
        return None
    return detect_task(path, encoding=dataset.get("encoding") or "utf-8")
