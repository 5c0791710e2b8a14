"""Checking what the run store reads back: its JSON payloads and stored example texts.

``PRAGMA quick_check`` proves that SQLite's pages are well formed, not that a row still holds
what was written: a damaged byte inside a cell's result, a record or an example text leaves a
valid database (issue 21 item 9). So every payload is verified when it is read:

* rows written since schema 3 carry a CRC-32 of their bytes (:func:`checksum`), compared first;
  CRC-32 finds any burst of up to 32 flipped bits and all but 1 in 2³² other damage. It is a
  check against accidents, not an authentication: whoever can edit the file can recompute it
  (the trust boundary holds anyway: a store is data, parsed as JSON, never executed);
* rows of older stores have no checksum and are checked by decoding (UTF-8, JSON) and by the
  type each field must have: what old damage leaves type-correct cannot be told from data.

Invalid UTF-8 is read back with ``surrogateescape`` (:func:`lenient_text`, the connection's
text factory) so that one damaged text does not make SQLite abort a whole query; such a text is
then reported as damaged here, with the cell it belongs to.
"""

from __future__ import annotations

import json
import math
import zlib
from collections.abc import Mapping
from typing import Any

#: the columns of a stored prediction that its checksum covers, in order (the cell and the
#: example index are its key)
PREDICTION_VALUES = ("original", "perturbed", "label", "pred_before", "prob_before",
                     "pred_after", "prob_after")
_FLOATS = ("prob_before", "prob_after")


class Damaged(ValueError):
    """A stored payload does not verify; the message says which part and how."""


def lenient_text(raw: bytes) -> str:
    """sqlite3 text factory: invalid UTF-8 survives as lone surrogates (found by :func:`load`)
    instead of an ``OperationalError`` that would abort the whole query."""
    return raw.decode("utf-8", "surrogateescape")


def checksum(text: str | None, *more: str | None) -> int:
    """CRC-32 of the UTF-8 bytes of the texts (None and "" differ), as stored in ``crc``
    columns."""
    crc = zlib.crc32(b"\xff" if text is None else text.encode("utf-8", "surrogateescape")
                     + b"\x00")
    for t in more:
        crc = zlib.crc32(b"\xff" if t is None else t.encode("utf-8", "surrogateescape")
                         + b"\x00", crc)
    return crc


def verify(text: Any, crc: int | None, what: str) -> None:
    """Raise :class:`Damaged` unless ``text`` is text, valid UTF-8 and matches its checksum
    (when it has one): everything :func:`load` checks short of decoding the JSON."""
    if not isinstance(text, str):
        raise Damaged(f"{what} is {'missing' if text is None else type(text).__name__}, "
                      "not JSON text")
    try:
        data = text.encode("utf-8")  # strict: a text read back with surrogates was not UTF-8
    except UnicodeEncodeError:
        raise Damaged(f"{what} is not valid UTF-8") from None
    if crc is not None and zlib.crc32(data + b"\x00") != crc:  # = checksum(text), encoded once
        raise Damaged(f"{what} fails its checksum")


def load_bytes(data: Any, crc: int | None, what: str, kind: type | tuple[type, ...] = object
               ) -> Any:
    """:func:`load` of a payload selected as ``CAST(column AS BLOB)``: the fast path for the
    many rows of ``records`` (no text factory, one CRC over the bytes, JSON decoded from them)."""
    if not isinstance(data, bytes):
        raise Damaged(f"{what} is missing")
    if crc is not None and zlib.crc32(b"\x00", zlib.crc32(data)) != crc:
        raise Damaged(f"{what} fails its checksum")
    try:
        value = json.loads(data)
    except UnicodeDecodeError:
        raise Damaged(f"{what} is not valid UTF-8") from None
    except ValueError as exc:
        raise Damaged(f"{what} is not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(value, kind):
        raise Damaged(f"{what} is a JSON {type(value).__name__}, not the stored type")
    return value


def load(text: Any, crc: int | None, what: str, kind: type | tuple[type, ...] = dict) -> Any:
    """The JSON value of one stored payload, verified; :class:`Damaged` names ``what`` failed."""
    verify(text, crc, what)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise Damaged(f"{what} is not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(value, kind):
        raise Damaged(f"{what} is a JSON {type(value).__name__}, not "
                      f"{'an object' if kind is dict else 'the stored type'}")
    return value


def _utf8(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise Damaged(f"{what} is not valid UTF-8") from None


def _normal(field: str, value: Any) -> Any:
    """A prediction value as SQLite gives it back (REAL columns are floats, booleans ints)."""
    if value is None:
        return None
    if field in _FLOATS:
        return float(value)
    return int(value) if isinstance(value, bool) else value


def prediction_checksum(row: Mapping[str, Any]) -> int:
    """The checksum of one prediction row's values (:data:`PREDICTION_VALUES`)."""
    values = [_normal(f, row.get(f)) for f in PREDICTION_VALUES]
    return checksum(json.dumps(values, ensure_ascii=False, allow_nan=True))


def check_prediction(row: Mapping[str, Any], crc: int | None) -> None:
    """Raise :class:`Damaged` unless a stored prediction row verifies (by its checksum when it
    has one, else by the type of each value: texts are text, labels and predictions are
    integers or strings, probabilities numbers in [0, 1])."""
    what = f"prediction #{row.get('idx')}"
    for f in ("original", "perturbed"):
        if row.get(f) is not None and not isinstance(row[f], str):
            raise Damaged(f"{what}: the {f} text is {type(row[f]).__name__}, not text")
        if row.get(f) is not None:
            _utf8(row[f], f"{what}: the {f} text")
    if crc is not None:
        try:
            ok = prediction_checksum(row) == crc
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise Damaged(f"{what} fails its checksum")
        return
    for f in ("label", "pred_before", "pred_after"):
        v = row.get(f)
        if v is not None and (isinstance(v, (bytes, float)) or not isinstance(v, (int, str))):
            raise Damaged(f"{what}: {f} is {type(v).__name__}, not a label")
    for f in _FLOATS:
        v = row.get(f)
        if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)
                              or math.isnan(v) or not 0.0 <= v <= 1.0):
            raise Damaged(f"{what}: {f} {v!r} is not a probability")


def summary_line(damaged: Mapping[str, str], where: str, shown: int = 3) -> str | None:
    """One line naming the damaged cells a reader skipped: a count and the first few keys with
    why (None when there are none)."""
    if not damaged:
        return None
    items = list(damaged.items())
    first = "; ".join(f"{k} ({why})" for k, why in items[:shown])
    more = f"; … and {len(items) - shown} more" if len(items) > shown else ""
    n = len(items)
    return (f"skipped {n} damaged cell{'s' if n != 1 else ''} of {where}: {first}{more}. "
            "Rerunning the study's command recomputes them")
