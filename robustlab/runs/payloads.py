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

from robustlab.data.files import nests_within

#: the columns of a stored prediction that its checksum covers, in order (the cell and the
#: example index are its key)
PREDICTION_VALUES = ("original", "perturbed", "label", "pred_before", "prob_before",
                     "pred_after", "prob_after")
_FLOATS = ("prob_before", "prob_after")

#: the most characters one stored payload may hold: far above any result or record robustlab
#: writes (a record holds one example), and what a reader can hold without being swamped
MAX_CHARS = 1 << 26
#: the deepest nesting of arrays and objects in a stored payload: robustlab writes at most a
#: handful of levels; a 100,000-deep array would overflow the recursion of every reader
MAX_DEPTH = 64
#: the largest magnitude of a stored time (seconds since 1970: the year 5138) or duration
MAX_TIME = 1e11


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
    if len(data) > MAX_CHARS:
        raise Damaged(f"{what} holds {len(data)} bytes, more than robustlab ever stores")


def _decode(data: str | bytes, what: str) -> Any:
    """The JSON value of a payload nesting at most :data:`MAX_DEPTH` deep. The decoder
    recurses (a 100,000-deep array raises RecursionError in it and in every reader after it),
    so a text with more brackets than that is scanned first."""
    brackets = (data.count(b"[") + data.count(b"{") if isinstance(data, bytes)
                else data.count("[") + data.count("{"))
    if brackets > MAX_DEPTH and not nests_within(data, MAX_DEPTH):
        raise Damaged(f"{what} nests deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data)
    except RecursionError:  # pragma: no cover - the scan above finds it first
        raise Damaged(f"{what} nests deeper than {MAX_DEPTH} levels") from None


def load_bytes(data: Any, crc: int | None, what: str, kind: type | tuple[type, ...] = object
               ) -> Any:
    """:func:`load` of a payload selected as ``CAST(column AS BLOB)``: the fast path for the
    many rows of ``records`` (no text factory, one CRC over the bytes, JSON decoded from them)."""
    if not isinstance(data, bytes):
        raise Damaged(f"{what} is missing")
    if crc is not None and zlib.crc32(b"\x00", zlib.crc32(data)) != crc:
        raise Damaged(f"{what} fails its checksum")
    if len(data) > MAX_CHARS:
        raise Damaged(f"{what} holds {len(data)} bytes, more than robustlab ever stores")
    try:
        value = _decode(data, what)
    except Damaged:
        raise
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
        value = _decode(text, what)
    except Damaged:
        raise
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


#: what a typed column of the run store may hold: ``text`` (valid UTF-8, at most
#: :data:`MAX_CHARS`), ``count`` (an integer >= 0), ``int``, ``time`` (seconds since 1970) and
#: ``seconds`` (a duration), each finite and within :data:`MAX_TIME`; ``?`` allows NULL
def check_columns(row: Mapping[str, Any], types: Mapping[str, str], what: str) -> None:
    """Raise :class:`Damaged` naming the first column of ``row`` whose value is not of its
    type in ``types`` (columns the row lacks, as in older stores, are skipped)."""
    for column, kind in types.items():
        if column not in row.keys():
            continue
        v = row[column]
        if v is None and kind.endswith("?"):
            continue
        kind = kind.rstrip("?")
        if kind == "text":
            ok = isinstance(v, str) and len(v) <= MAX_CHARS
            if ok:
                _utf8(v, f"{what}: {column}")
        elif kind in ("int", "count"):
            ok = isinstance(v, int) and not isinstance(v, bool) and abs(v) < 1 << 53 and (
                kind == "int" or v >= 0)
        else:  # time, seconds
            ok = (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                  and 0 <= v <= MAX_TIME)
        if not ok:
            shown = repr(v)[:40] + ("…" if len(repr(v)) > 40 else "")
            raise Damaged(f"{what}: {column} is {shown}, not a {kind}")


#: a number in a shape (:func:`check_shape`): an int or a float (NaN allowed: robustlab stores
#: an undefined statistic as NaN), never a bool
NUMBER = "number"
#: cell kind -> the shape of its stored result (see :func:`register_result`)
RESULT_SHAPES: dict[str, dict[str, Any]] = {}


def register_result(kind: str, shape: dict[str, Any]) -> None:
    """Declare the shape of the results of cells of ``kind``, checked whenever one is read
    (:func:`check_result`): the study that writes them declares what its summaries and
    reports index, so a result that is valid JSON with a valid checksum but another shape
    (``{}``, ``{"accuracy": "x"}``) is damage, named, and never computed on."""
    RESULT_SHAPES[kind] = shape


def check_result(kind: Any, value: Any) -> None:
    """Raise :class:`Damaged` unless ``value`` has the shape registered for ``kind`` (any
    object when none is)."""
    shape = RESULT_SHAPES.get(kind) if isinstance(kind, str) else None
    if shape is not None:
        check_shape(value, shape, "result")


def check_shape(value: Any, shape: Any, what: str) -> None:
    """Raise :class:`Damaged` naming the first part of ``value`` that is not of ``shape``: a
    type (``str``, ``int``, ``bool``); :data:`NUMBER`; another string (that very value);
    ``None`` (null); a tuple of choices; a
    list ``[SHAPE]`` (an array of such items); a dict ``{str: SHAPE}`` (an object of such
    values) or ``{"key": SHAPE, ...}`` (an object with at least these keys)."""
    if isinstance(shape, tuple):
        errors = []
        for choice in shape:
            try:
                return check_shape(value, choice, what)
            except Damaged as exc:
                errors.append(str(exc))
        raise Damaged(errors[0])
    if shape is None:
        ok = value is None
    elif shape == NUMBER:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(shape, str):  # a literal value
        ok = value == shape
    elif isinstance(shape, type):
        ok = isinstance(value, shape) and (shape is bool or not isinstance(value, bool))
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise Damaged(f"{what} is {_kind(value)}, not an array")
        for i, item in enumerate(value):
            check_shape(item, shape[0], f"{what}[{i}]")
        return
    else:  # dict
        if not isinstance(value, dict):
            raise Damaged(f"{what} is {_kind(value)}, not an object")
        if list(shape) == [str]:
            for k, v in value.items():
                check_shape(v, shape[str], f"{what}.{k}")
            return
        for k, sub in shape.items():
            if k not in value:
                raise Damaged(f"{what} has no {k!r}")
            check_shape(value[k], sub, f"{what}.{k}")
        return
    if not ok:
        name = shape if isinstance(shape, str) else getattr(shape, "__name__", "null")
        raise Damaged(f"{what} is {_kind(value)}, not {name}")


def _kind(value: Any) -> str:
    return "null" if value is None else f"a JSON {type(value).__name__} ({repr(value)[:30]})"


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
