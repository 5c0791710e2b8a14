"""Reading and writing the file formats of the five tasks; reading a file and writing it back
gives the same file (for files in the layout described here).

Lines are read through :func:`robustlab.data.files.read_rows` (its encoding errors, regular-file
check and ``\\n``-only line splitting) and written through :func:`robustlab.data.files.write_rows`
(atomic: a file that exists is complete; nothing is written when a value cannot be held).

* ``conll``: one token per line, ``token [middle columns] tag`` split on single spaces (or tabs,
  kept), a blank line after each sentence, ``-DOCSTART-`` lines each followed by a blank line.
  Tags are IOB2 (CoNLL-2003 as shared; an IOB1 file is refused naming the line unless read with
  ``scheme="iob1"``, which converts it). Several blank
  lines in a row are read as one (written back as one).
* ``sts``: STS benchmark lines ``genre filename year id score sentence1 sentence2 [more]``,
  split on tabs with no quoting (a CSV reader merges lines at the bare ``"``), the score in the
  declared range (0-5).
* ``snli``: ``label<TAB>premise<TAB>hypothesis`` without a header (TextFooler's SNLI sample).
* ``wikiqa``: WikiQA's TSV with its header; rows of one question are consecutive.
* the single-text formats of :mod:`robustlab.data.files` (``label-text``, ``tsv``, ``csv``,
  ``jsonl``).

Every error is a :class:`~robustlab.data.files.FileFormatError` (exit 2) naming file and line.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.data.files import FileFormatError, format_for, read_rows, write_rows
from robustlab.tasks.align import iob1_to_iob2, iob2_error
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample, TextExample

__all__ = [
    "STS_FIELDS",
    "WIKIQA_COLUMNS",
    "Corpus",
    "read_conll",
    "read_labelled_texts",
    "read_snli",
    "read_sts",
    "read_wikiqa",
    "write_corpus",
]

STS_FIELDS = ("genre", "filename", "year", "id", "score", "sentence1", "sentence2")
WIKIQA_COLUMNS = ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID",
                  "Sentence", "Label")


@dataclass
class Corpus:
    """The examples of one file and what is needed to write them back in its format."""

    fmt: str
    examples: list[Any]
    path: Path | None = None
    layout: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.examples)

    def with_examples(self, examples: list[Any]) -> Corpus:
        return Corpus(self.fmt, list(examples), self.path, dict(self.layout))


def _lines(path: str | os.PathLike[str], encoding: str) -> tuple[Path, list[str]]:
    table = read_rows(path, fmt="text", encoding=encoding)
    return Path(path), [r["text"] for r in table.rows]


# ---- CoNLL ---------------------------------------------------------------------------------------


def read_conll(path: str | os.PathLike[str], encoding: str = "utf-8",
               scheme: str = "iob2") -> Corpus:
    """Sentences of a CoNLL file (module docstring); the tag is the last column.
    ``scheme="iob1"`` reads the original CoNLL-2003 tagging and converts it to IOB2 (written
    back as IOB2)."""
    if scheme not in ("iob1", "iob2"):
        raise FileFormatError(f"tag scheme {scheme!r}: choose iob1 or iob2")
    path, lines = _lines(path, encoding)
    examples: list[TaggedExample] = []
    toks: list[str] = []
    tags: list[str] = []
    middle: list[tuple[str, ...]] = []
    docs: list[str] = []
    width = sep = None
    first_line = width_line = 0

    def flush() -> None:
        nonlocal toks, tags, middle, docs
        if toks:
            why = iob2_error(iob1_to_iob2(tags) if scheme == "iob1" else tags)
            if why:
                raise FileFormatError(
                    f"{path}: sentence at line {first_line}: {why}; robustlab reads IOB2 tags "
                    "(an IOB1 file is read with scheme iob1)")
            if scheme == "iob1":
                tags = list(iob1_to_iob2(tags))
            examples.append(TaggedExample(tuple(toks), tuple(tags), tuple(middle),
                                          "\n".join(docs) if docs else None))
            toks, tags, middle, docs = [], [], [], []

    for n, line in enumerate(lines, 1):
        if not line.strip():
            flush()
            continue
        if sep is None:
            sep = "\t" if "\t" in line else " "
        fields = line.split(sep)
        if fields[0] == "-DOCSTART-":
            flush()
            docs.append(line)
            continue
        if width is None:
            width, width_line = len(fields), n
            if width < 2:
                raise FileFormatError(
                    f"{path}: line {n}: one column ({line!r}); a CoNLL file has 'token ... tag' "
                    "columns with the NER tag last (is the tag column missing?)")
        if len(fields) != width:
            raise FileFormatError(
                f"{path}: line {n}: {len(fields)} column(s), but line {width_line} has {width}: "
                "a column (the tag?) is missing, or a token holds a space")
        if any(not f for f in fields):
            raise FileFormatError(f"{path}: line {n}: an empty column (two separators in a row)")
        if not toks:
            first_line = n
        toks.append(fields[0])
        tags.append(fields[-1])
        middle.append(tuple(fields[1:-1]))
    flush()
    if not examples:
        raise FileFormatError(f"{path}: no sentence (an empty CoNLL file)")
    return Corpus("conll", examples, path, {"sep": sep or " ", "trailing_docs": docs or None,
                                           "width": width})


def _conll_lines(path: Path, corpus: Corpus) -> list[str]:
    sep, width = corpus.layout.get("sep", " "), corpus.layout.get("width")
    out: list[str] = []
    for k, ex in enumerate(corpus.examples):
        if not isinstance(ex, TaggedExample):
            raise FileFormatError(f"{path}: example {k} is not a tagged sentence")
        for doc in (ex.doc_start.split("\n") if ex.doc_start else ()):
            out += [doc, ""]
        for i, (tok, tag) in enumerate(zip(ex.tokens, ex.tags, strict=True)):
            middle = ex.columns[i] if ex.columns else ()
            if width is not None and ex.columns and len(middle) != width - 2:
                raise FileFormatError(f"{path}: sentence {k + 1}, token {i + 1}: "
                                      f"{len(middle) + 2} columns, the file has {width}")
            cells = (tok, *middle, tag)
            if any(not c or any(ch.isspace() for ch in c) for c in cells):
                raise FileFormatError(f"{path}: sentence {k + 1}, token {i + 1}: {tok!r} is "
                                      "empty or holds whitespace, which a CoNLL line cannot hold")
            out.append(sep.join(cells))
        out.append("")
    for doc in corpus.layout.get("trailing_docs") or ():
        out += [doc, ""]
    return out


# ---- STS -----------------------------------------------------------------------------------------


def read_sts(path: str | os.PathLike[str], encoding: str = "utf-8",
             score_range: tuple[float, float] = (0.0, 5.0)) -> Corpus:
    """STS benchmark pairs; the score of each line must lie in ``score_range``."""
    path, lines = _lines(path, encoding)
    lo, hi = score_range
    examples = []
    for n, line in enumerate(lines, 1):
        fields = line.split("\t")
        if len(fields) < len(STS_FIELDS):
            raise FileFormatError(
                f"{path}: line {n}: {len(fields)} tab-separated field(s), expected at least "
                f"{len(STS_FIELDS)} ({' '.join(STS_FIELDS)}): a pair needs both sentences")
        try:
            score = float(fields[4])
        except ValueError:
            score = math.nan
        if not math.isfinite(score) or not lo <= score <= hi:
            raise FileFormatError(f"{path}: line {n}: score {fields[4]!r} is not a number in "
                                  f"the declared range {lo:g}-{hi:g}")
        if not fields[5].strip() or not fields[6].strip():
            raise FileFormatError(f"{path}: line {n}: an empty sentence; a pair needs two texts")
        examples.append(PairExample(fields[5], fields[6], score, {"fields": tuple(fields)}))
    if not examples:
        raise FileFormatError(f"{path}: no pair (an empty file)")
    return Corpus("sts", examples, path, {"score_range": (lo, hi)})


def _score_text(raw: str, value: float) -> str:
    try:
        if float(raw) == value:
            return raw  # "5.000" stays "5.000"
    except ValueError:
        pass
    return repr(float(value))


def _sts_lines(path: Path, corpus: Corpus) -> list[str]:
    out = []
    for k, ex in enumerate(corpus.examples):
        fields = list(ex.row.get("fields") or ("", "", "", str(k), "", "", ""))
        fields[4] = _score_text(fields[4], float(ex.label))
        fields[5], fields[6] = ex.first, ex.second
        for f in (ex.first, ex.second):
            if "\t" in f or "\n" in f or "\r" in f:
                raise FileFormatError(f"{path}: pair {k + 1}: a sentence holds a tab or line "
                                      "break, which an STS line cannot hold")
        out.append("\t".join(fields))
    return out


# ---- SNLI pairs ----------------------------------------------------------------------------------


def read_snli(path: str | os.PathLike[str], encoding: str = "utf-8") -> Corpus:
    """``label<TAB>premise<TAB>hypothesis`` lines."""
    table = read_rows(path, fmt="tsv", encoding=encoding, header=False)
    if table.columns and len(table.columns) != 3:
        raise FileFormatError(
            f"{path}: line {table.lines[0]}: {len(table.columns)} tab-separated field(s), "
            "expected 3 (label, premise, hypothesis): a pair needs two texts")
    examples = []
    for row, n in zip(table.rows, table.lines, strict=True):
        if not row["1"].strip() or not row["2"].strip():
            raise FileFormatError(f"{path}: line {n}: an empty text; a pair needs two texts")
        if not row["0"].strip():
            raise FileFormatError(f"{path}: line {n}: an empty label")
        examples.append(PairExample(row["1"], row["2"], row["0"], dict(row)))
    if not examples:
        raise FileFormatError(f"{path}: no pair (an empty file)")
    return Corpus("snli", examples, Path(path), {})


# ---- WikiQA --------------------------------------------------------------------------------------


def read_wikiqa(path: str | os.PathLike[str], encoding: str = "utf-8") -> Corpus:
    """Questions with their candidate sentences from WikiQA's TSV (header required)."""
    table = read_rows(path, fmt="tsv", encoding=encoding, header=True)
    missing = [c for c in ("QuestionID", "Question", "Sentence", "Label") if c not in table.columns]
    if missing:
        raise FileFormatError(f"{path}: line 1: no column(s) {', '.join(missing)} in the header "
                              f"({', '.join(table.columns)}); expected WikiQA's "
                              f"{' '.join(WIKIQA_COLUMNS)}")
    examples: list[CandidatesExample] = []
    group: list[tuple[dict[str, Any], int]] = []

    def flush() -> None:
        if group:
            rows = [r for r, _ in group]
            examples.append(CandidatesExample(rows[0]["QuestionID"], rows[0]["Question"],
                                              tuple(r["Sentence"] for r in rows),
                                              tuple(int(r["Label"]) for r in rows), tuple(rows)))
            group.clear()

    for row, n in zip(table.rows, table.lines, strict=True):
        if row["Label"] not in ("0", "1"):
            raise FileFormatError(f"{path}: line {n}: Label {row['Label']!r} is not 0 or 1")
        if not row["Question"].strip() or not row["Sentence"].strip():
            raise FileFormatError(f"{path}: line {n}: an empty question or sentence")
        if group and row["QuestionID"] != group[0][0]["QuestionID"]:
            flush()
        if group and row["Question"] != group[0][0]["Question"]:
            raise FileFormatError(f"{path}: line {n}: question {row['QuestionID']} reads "
                                  f"differently than on line {group[0][1]}")
        group.append((row, n))
    flush()
    if not examples:
        raise FileFormatError(f"{path}: no question (only a header)")
    return Corpus("wikiqa", examples, Path(path), {"columns": list(table.columns)})


# ---- single texts --------------------------------------------------------------------------------


def read_labelled_texts(path: str | os.PathLike[str], fmt: str | None = None,
                        encoding: str = "utf-8", text_column: str | int | None = None,
                        label_column: str | int | None = None,
                        header: bool | None = None) -> Corpus:
    """Single texts with a class: a ``.txt`` (or extension-less) file is read as the Kim-2014
    ``<label> <text>`` lines (a classification file needs labels), other formats as
    :func:`robustlab.data.files.read_rows` reads them; columns as in ``robustlab.data``."""
    from robustlab.data.datasets import LABEL_COLUMN_NAMES

    fmt = format_for(path, fmt)
    fmt = "label-text" if fmt == "text" else fmt
    table = read_rows(path, fmt=fmt, encoding=encoding, header=header)
    if fmt == "label-text":
        text_col, label_col = "text", "label"
    else:
        text_col = table.column_name(text_column)
        label_col = (table.column_name(label_column) if label_column is not None else
                     next((c for c in LABEL_COLUMN_NAMES if c in table.columns), None))
        if label_col is None:
            raise FileFormatError(f"{path}: which column holds the label? Pass the label column "
                                  f"(columns: {', '.join(map(repr, table.columns))})")
    examples = []
    for row, n in zip(table.rows, table.lines or range(1, len(table) + 1), strict=True):
        text, label = row.get(text_col), row.get(label_col)
        if not isinstance(text, str):
            raise FileFormatError(f"{path}: line {n}: no text in column {text_col!r}")
        if label is None or not str(label).strip():
            raise FileFormatError(f"{path}: line {n}: no label in column {label_col!r}")
        examples.append(TextExample(text, str(label), row))
    if not examples:
        raise FileFormatError(f"{path}: no example (an empty file)")
    return Corpus(fmt, examples, Path(path), {"columns": list(table.columns), "header": table.header,
                                              "text": text_col, "label": label_col})


# ---- writing -------------------------------------------------------------------------------------


def write_corpus(path: str | os.PathLike[str], corpus: Corpus, *, user: bool = True) -> Path:
    """Write ``corpus`` in its format (nothing is written when an example cannot be held)."""
    path = Path(path)
    fmt = corpus.fmt
    if fmt in ("conll", "sts"):
        lines = _conll_lines(path, corpus) if fmt == "conll" else _sts_lines(path, corpus)
        return write_rows(path, [{"text": ln} for ln in lines], fmt="text", user=user)
    if fmt == "snli":
        rows = [{"0": str(ex.label), "1": ex.first, "2": ex.second} for ex in corpus.examples]
        return write_rows(path, rows, fmt="tsv", columns=["0", "1", "2"], header=False, user=user)
    if fmt == "wikiqa":
        columns = corpus.layout.get("columns") or list(WIKIQA_COLUMNS)
        rows = []
        for ex in corpus.examples:
            base = ex.rows or [{} for _ in ex.candidates]
            for r, sent, label in zip(base, ex.candidates, ex.labels, strict=True):
                rows.append({**r, "QuestionID": ex.qid, "Question": ex.question,
                             "Sentence": sent, "Label": str(label)})
        return write_rows(path, rows, fmt="tsv", columns=columns, header=True, user=user)
    text_col, label_col = corpus.layout.get("text", "text"), corpus.layout.get("label", "label")
    rows = [{**ex.row, text_col: ex.text, label_col: ex.label} for ex in corpus.examples]
    columns: Sequence[str] = corpus.layout.get("columns") or [label_col, text_col]
    return write_rows(path, rows, fmt=fmt, columns=list(columns),
                      header=bool(corpus.layout.get("header", True)), user=user)
