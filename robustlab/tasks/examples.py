"""What one example of each task is. Frozen values: a perturbation returns a new example.

``row`` keeps what the file said beyond the fields a task uses (STS's genre and year, WikiQA's
document ids, the POS and chunk columns of CoNLL), so writing a corpus back gives the same file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CandidatesExample", "PairExample", "TaggedExample", "TextExample"]


@dataclass(frozen=True)
class TextExample:
    """One text and its class (a string as written in the file: ``"3"``, ``"positive"``)."""

    text: str
    label: str | None = None
    row: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class PairExample:
    """Two texts (premise/hypothesis, sentence1/sentence2) and a class or a score."""

    first: str
    second: str
    label: str | float | None = None
    row: Mapping[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class TaggedExample:
    """A token sequence with one IOB2 tag per token (CoNLL).

    ``columns[i]`` are token i's middle columns (CoNLL-2003: POS and chunk); ``doc_start`` is
    the ``-DOCSTART-`` line written before this sentence, when one was."""

    tokens: tuple[str, ...]
    tags: tuple[str, ...]
    columns: tuple[tuple[str, ...], ...] = ()
    doc_start: str | None = None

    def __post_init__(self) -> None:
        if len(self.tokens) != len(self.tags):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.tags)} tags")
        if self.columns and len(self.columns) != len(self.tokens):
            raise ValueError(f"{len(self.tokens)} tokens but {len(self.columns)} column rows")

    @property
    def text(self) -> str:
        """The sentence as one line, tokens joined by single spaces (what perturbations see)."""
        return " ".join(self.tokens)


@dataclass(frozen=True)
class CandidatesExample:
    """A question with its candidate sentences, each labelled 1 (answers it) or 0 (WikiQA)."""

    qid: str
    question: str
    candidates: tuple[str, ...]
    labels: tuple[int, ...]
    rows: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if len(self.candidates) != len(self.labels):
            raise ValueError(f"{len(self.candidates)} candidates but {len(self.labels)} labels")
