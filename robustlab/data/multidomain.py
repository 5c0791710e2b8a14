"""Multi-domain sentiment data: Blitzer et al. (2007) Amazon reviews and extra-domain CSVs.

* ``<root>/<domain>/{positive,negative}.review``: Blitzer's **pseudo-XML** (raw ``&`` and ``<``
  inside the text, so it is not well-formed XML). Fields are cut out with a regex
  (``<review_text>(.*?)</review_text>``, DOTALL), never with an XML parser. Label 1 = positive
  (ratings 4–5), 0 = negative (ratings 1–2), from the file name.
* ``<root>/extra_domains/<domain>.csv``: ``reviews,labels`` with quoted multi-line fields, read
  with the real CSV parser of :func:`robustlab.data.files.read_rows`; ``<br />`` becomes a space.

``load_domain(root, "books")`` works for both; :func:`available_domains` lists what a root holds.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from robustlab.data.files import read_rows, regular_input
from robustlab.errors import InputError

AMAZON_DOMAINS = ("books", "dvd", "electronics", "kitchen")
EXTRA_DOMAINS = ("airline", "imdb", "blog")
_REVIEW = re.compile(r"<review>(.*?)</review>", re.S)
_FIELD = {name: re.compile(rf"<{name}>(.*?)</{name}>", re.S)
          for name in ("review_text", "title", "rating", "asin", "product_type")}
_BR = re.compile(r"<br\s*/?>", re.I)  # IMDB's HTML line breaks: whitespace, not words
_POLARITY = {"positive": 1, "negative": 0}


@dataclass
class DomainData:
    """Texts and 0/1 labels of one domain, and where they came from."""

    domain: str
    texts: list[str]
    labels: list[int]
    source: str

    def __len__(self) -> int:
        return len(self.texts)


def read_review_file(path: str | os.PathLike[str], with_title: bool = False) -> list[str]:
    """The review texts of one ``.review`` file (optionally ``title. text``), in file order."""
    p = regular_input(path)  # a FIFO or /dev/zero is refused, not read forever
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{p}: no such file") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{p}: line {line}: not valid UTF-8") from None
    out = []
    for m in _REVIEW.finditer(text):
        block = m.group(1)
        body = _FIELD["review_text"].search(block)
        if body is None:
            line = text.count("\n", 0, m.start()) + 1
            raise InputError(f"{p}: line {line}: <review> without <review_text>")
        t = " ".join(body.group(1).split())
        if with_title:
            title = _FIELD["title"].search(block)
            if title and title.group(1).strip():
                t = f"{' '.join(title.group(1).split())}. {t}"
        out.append(t)
    if not out:
        raise InputError(f"{p}: no <review> blocks (is this a Blitzer .review file?)")
    return out


def read_domain_csv(path: str | os.PathLike[str], text_column: str = "reviews",
                    label_column: str = "labels") -> tuple[list[str], list[int]]:
    table = read_rows(path, fmt="csv", header=True)
    for col in (text_column, label_column):
        if col not in table.columns:
            raise InputError(f"{path}: no {col!r} column (columns: {', '.join(table.columns)})")
    texts, labels = [], []
    for row, line in zip(table.rows, table.lines, strict=True):
        try:
            lab = int(float(row[label_column]))
        except (TypeError, ValueError):
            raise InputError(f"{path}: line {line}: label {row[label_column]!r} is not 0/1") from None
        if lab not in (0, 1):
            raise InputError(f"{path}: line {line}: label {lab} is not 0/1")
        texts.append(" ".join(_BR.sub(" ", str(row[text_column])).split()))
        labels.append(lab)
    return texts, labels


def available_domains(root: str | os.PathLike[str]) -> list[str]:
    """Domains present under ``root``: Amazon folders first, then extra-domain CSVs."""
    r = Path(root)
    names = [d.name for d in sorted(r.iterdir())
             if d.is_dir() and (d / "positive.review").exists()] if r.is_dir() else []
    extra = r / "extra_domains"
    if extra.is_dir():
        names += [p.stem for p in sorted(extra.glob("*.csv"))]
    return names


def load_domain(root: str | os.PathLike[str], domain: str, with_title: bool = False) -> DomainData:
    """One domain's reviews: ``<root>/<domain>/*.review`` or ``<root>/extra_domains/<domain>.csv``
    (``domain`` may also be a path to a CSV file)."""
    r = Path(root)
    folder = r / domain
    if (folder / "positive.review").exists():
        texts, labels = [], []
        for pol, lab in _POLARITY.items():
            f = folder / f"{pol}.review"
            t = read_review_file(f, with_title)
            texts += t
            labels += [lab] * len(t)
        return DomainData(domain, texts, labels, str(folder))
    for csv_path in (r / "extra_domains" / f"{domain}.csv", r / f"{domain}.csv", Path(domain)):
        if csv_path.suffix == ".csv" and csv_path.is_file():
            texts, labels = read_domain_csv(csv_path)
            return DomainData(csv_path.stem, texts, labels, str(csv_path))
    have = available_domains(r)
    raise InputError(f"no domain {domain!r} under {r} (available: {', '.join(have) or 'none'}); "
                     "a domain is a folder with positive.review/negative.review or a "
                     "reviews,labels CSV")
