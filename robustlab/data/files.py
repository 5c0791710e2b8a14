"""Reading and writing row files: the one home for text, label-text, TSV, CSV and JSONL.

Every command and dataset loader that reads rows from a user's file goes through
:func:`read_rows` and writes them back with :func:`write_rows`, so the rules below hold everywhere:

* **Formats** (from the extension, or explicit ``fmt``):

  - ``text`` (``.txt`` and unknown extensions): one row per line, one column ``text``. Every line
    is a row, blank lines included. Lines are split on ``\\n`` only (``\\r\\n`` accepted), never
    on the other Unicode line breaks (U+0085, U+2028, form feed ...) that ``str.splitlines``
    honours, because those occur *inside* real rows (cp1252 files decoded as latin-1 are full of
    U+0085).
  - ``label-text``: the Kim-2014 benchmark layout ``<label><space><text>`` (SST, MR, TREC,
    TextFooler samples); columns ``label`` and ``text``. Never guessed from the extension.
  - ``tsv`` (``.tsv``, ``.tab``): one row per line, fields split on tab, **no quoting** (GLUE
    files contain bare ``"``). A value containing a tab or newline cannot be written as TSV.
  - ``csv`` (``.csv``): the standard ``csv`` module, quoted multi-line fields included.
  - ``jsonl`` (``.jsonl``, ``.ndjson``): one JSON object per line; blank lines are skipped.

* **Header** (TSV/CSV): ``header=True/False`` (``--header``/``--no-header``), or ``None`` to
  detect: a header is assumed when some column holds a non-number in the first row and numbers
  in all following (sampled) rows, e.g. ``sentence<TAB>label`` over ``0``/``1`` labels; or when
  the first row names a usual column (``text``, ``sentence``, ``label``, …, see
  :data:`HEADER_NAMES`) that does not occur again in that column, which catches string labels
  (``sentence<TAB>label`` over ``positive``/``negative``). When nothing decides, CSV assumes a
  header and TSV does not.
  Without a header, columns are named ``"0"``, ``"1"``, ...
* **Columns** are chosen by name, or by 0-based index (:meth:`Table.column_name`); negative
  indexes are refused (``-1`` would silently be the last column, usually the label).
* **Encoding**: UTF-8 (a BOM is dropped) unless ``encoding`` is given, e.g. ``cp1252``. Bytes that
  do not decode raise :class:`FileFormatError` naming the file, line and byte, and the
  ``--encoding`` fix. Output is always UTF-8.
* Rows with the wrong number of fields, JSON that is not an object, or a missing file raise
  :class:`FileFormatError` (an :class:`~robustlab.errors.InputError`): one clear message, never
  a traceback, and nothing is written.
* **Only regular files are read** (:func:`regular_input`): a FIFO, ``/dev/stdin`` or a device
  such as ``/dev/zero`` is refused before reading, because every reader needs the file twice
  (format and header detection, the row count, the SHA-256 of the run's input record) and
  ``/dev/zero`` never ends. A CSV field, and a line of a streamed file, is at most
  :data:`MAX_LINE` characters.
* Writing is atomic (:func:`robustlab.outputs.atomic_write`): a file that exists is complete.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

__all__ = [
    "FORMATS",
    "FileFormatError",
    "Table",
    "format_for",
    "read_rows",
    "regular_input",
    "write_rows",
]

FORMATS = ("text", "label-text", "tsv", "csv", "jsonl")
_EXTENSIONS = {
    ".txt": "text",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
#: column names taken as "the text" when no column is given, in order of preference
TEXT_COLUMN_NAMES = ("text", "sentence", "review", "reviews", "content", "document", "source",
                     "src", "premise", "question", "sentence1")
HEADER_SAMPLE = 50
#: the longest CSV field, and line of a streamed file (:mod:`robustlab.data.stream`), accepted:
#: rows of 100k characters are legitimate, a file without line breaks is not a row file
MAX_LINE = 64 << 20
#: first-row values that mark a header row (with the columns above) when no numeric column decides
HEADER_NAMES = frozenset((*TEXT_COLUMN_NAMES, "label", "labels", "gold_label", "class",
                          "sentiment", "target", "sentence2", "question1", "question2",
                          "hypothesis", "text_a", "text_b", "id", "idx"))


class FileFormatError(InputError):
    """A file cannot be read or written as asked; the message names the file, line and fix."""


@dataclass
class Table:
    """Rows read from a file: ``rows[i][column]``; ``lines[i]`` is the 1-based line row i starts on."""

    columns: list[str]
    rows: list[dict[str, Any]]
    fmt: str = "text"
    header: bool = False
    path: Path | None = None
    lines: list[int] = field(default_factory=list)
    #: blank lines skipped (TSV/CSV/JSONL only; in text formats every line is a row)
    skipped_blank: int = 0

    def __len__(self) -> int:
        return len(self.rows)

    def _where(self) -> str:
        return str(self.path) if self.path else "table"

    def column_name(self, key: str | int | None = None) -> str:
        """Resolve a column given by name or 0-based index; ``None`` picks the text column."""
        if key is None:
            for name in TEXT_COLUMN_NAMES:
                if name in self.columns:
                    return name
            if len(self.columns) == 1:
                return self.columns[0]
            raise FileFormatError(
                f"{self._where()}: which column holds the text? Pass --column NAME or INDEX "
                f"(columns: {self._listing()})"
            )
        if isinstance(key, str) and key in self.columns:
            return key
        try:
            idx = int(key)
        except (TypeError, ValueError):
            idx = None
        if idx is not None and idx < 0:
            raise FileFormatError(
                f"{self._where()}: column index {key!r} is negative; indexes are 0-based "
                f"(0..{len(self.columns) - 1}: {self._listing()}), or name the column")
        if idx is not None and idx < len(self.columns):
            return self.columns[idx]
        raise FileFormatError(
            f"{self._where()}: no column {key!r}; columns are {self._listing()} "
            "(by name, or by 0-based index)"
        )

    def _listing(self) -> str:
        return ", ".join(f"{i}={c!r}" for i, c in enumerate(self.columns)) or "none"

    def column(self, key: str | int | None = None) -> list[Any]:
        name = self.column_name(key)
        return [r.get(name) for r in self.rows]

    def with_columns(self, **values: Sequence[Any]) -> Table:
        """A copy with columns set (replaced in place, or appended in the order given)."""
        columns = list(self.columns)
        for name, vals in values.items():
            if len(vals) != len(self.rows):
                raise ValueError(f"column {name!r}: {len(vals)} values for {len(self.rows)} rows")
            if name not in columns:
                columns.append(name)
        rows = [dict(r) for r in self.rows]
        for name, vals in values.items():
            for r, v in zip(rows, vals, strict=True):
                r[name] = v
        return Table(columns, rows, self.fmt, self.header, self.path, list(self.lines),
                     self.skipped_blank)


# ---- reading -------------------------------------------------------------------------------------


def format_for(path: str | os.PathLike[str], fmt: str | None = None) -> str:
    """The format to use for ``path``: ``fmt`` when given, else from the extension, else text."""
    if fmt is not None:
        if fmt not in FORMATS:
            raise FileFormatError(f"unknown format {fmt!r}; choose from {', '.join(FORMATS)}")
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        raise FileFormatError(
            f"{path}: .json is not a row format; write one JSON object per line (.jsonl)"
        )
    return _EXTENSIONS.get(suffix, "text")


def regular_input(path: str | os.PathLike[str], what: str | None = None) -> Path:
    """``path`` if it is a regular file (links followed), else :class:`FileFormatError`.

    A FIFO, a socket or a device (``/dev/zero``, ``/dev/stdin``) is refused before any read:
    robustlab reads an input more than once (format and header detection, the progress bar's
    row count, the SHA-256 in the run's input record), which a stream cannot give, and a device
    like ``/dev/zero`` would be read forever. ``what`` (an option) prefixes the message.
    """
    import stat

    from robustlab.outputs import file_kind

    p = Path(path)
    where = f"{what} {p}" if what else str(p)
    try:
        mode = os.stat(p).st_mode
    except FileNotFoundError:
        raise FileFormatError(f"{where}: no such file") from None
    except OSError as exc:
        raise FileFormatError(f"{where}: cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise FileFormatError(f"{where}: is a directory, expected a file")
    if not stat.S_ISREG(mode):
        raise FileFormatError(
            f"{where}: is {file_kind(p)}, not a regular file; robustlab reads an input more "
            "than once (format detection, its SHA-256 for the run record), so save the stream "
            "to a file first")
    return p


def nests_within(data: str | bytes, limit: int) -> bool:
    """Whether the arrays and objects of a JSON text nest at most ``limit`` deep (a linear
    scan of brackets outside strings). Python's JSON decoder recurses: a text nested
    100,000 deep raises RecursionError in it, and a value nested a few thousand deep in every
    reader after it (``json.dumps``, ``copy.deepcopy``, comparisons)."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    level, in_string, escaped = 0, False, False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            level += 1
            if level > limit:
                return False
        elif ch in "]}":
            level -= 1
    return True


def load_json_bounded(path: Path, what: str, *, max_bytes: int, max_depth: int = 64) -> Any:
    """The JSON value of a small file someone else may have written (a model folder's
    metadata): a regular file of at most ``max_bytes``, nested at most ``max_depth`` deep;
    else one :class:`FileFormatError` naming it."""
    import stat as _stat

    try:
        st = os.stat(path)
        if not _stat.S_ISREG(st.st_mode):
            raise FileFormatError(f"{path}: {what} is not a regular file")
        if st.st_size > max_bytes:
            raise FileFormatError(f"{path}: {what} holds {st.st_size} bytes, more than the "
                                  f"{max_bytes} robustlab reads")
        data = path.read_bytes()
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot read {what} ({exc.strerror or exc})") from None
    if not nests_within(data, max_depth):
        raise FileFormatError(f"{path}: {what} nests deeper than {max_depth} levels")
    try:
        return json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise FileFormatError(f"{path}: {what} is not valid JSON "
                              f"({getattr(exc, 'msg', exc)})") from None


def text_encoding(name: str) -> str:
    """``name`` when Python has a text encoding of that name; else :class:`FileFormatError`.
    ``codecs`` also holds bytes-to-bytes and str-to-str transforms (base64, hex, zlib, uu,
    quopri, bz2, rot_13) that ``bytes.decode`` refuses with a LookupError of its own, and
    ``undefined``, which raises on every use: none of them reads a text file."""
    try:
        info = codecs.lookup(name)
    except (LookupError, TypeError, ValueError):
        raise FileFormatError(f"unknown encoding {name!r} (e.g. utf-8, cp1252, latin-1)"
                              ) from None
    if not getattr(info, "_is_text_encoding", True) or info.name == "undefined":
        raise FileFormatError(f"encoding {name!r} is not a text encoding (Python's {info.name} "
                              "codec transforms data, it does not read text); use e.g. utf-8, "
                              "cp1252, latin-1")
    return name


def decode_bytes(data: bytes, path: Path, encoding: str) -> str:
    text_encoding(encoding)
    enc = encoding.lower().replace("_", "-")
    if enc in ("utf-8", "utf8") and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode(encoding)
    except LookupError:
        raise FileFormatError(f"unknown encoding {encoding!r} (e.g. utf-8, cp1252, latin-1)") from None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        bad = data[exc.start : exc.end].hex(" ")
        hint = (" If the file is Windows/Latin-1 text, pass --encoding cp1252."
                if enc in ("utf-8", "utf8") else "")
        raise FileFormatError(
            f"{path}: line {line}, byte {col}: not valid {encoding} (bytes {bad}).{hint}"
        ) from None


def _split_lines(text: str) -> list[str]:
    """Split on \\n only (\\r\\n accepted); a final newline does not start a row."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def read_rows(
    path: str | os.PathLike[str],
    fmt: str | None = None,
    encoding: str = "utf-8",
    header: bool | None = None,
) -> Table:
    """Read a row file (see the module docstring for formats, headers and errors)."""
    path = Path(path)
    fmt = format_for(path, fmt)
    regular_input(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FileFormatError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot read ({exc.strerror})") from None
    text = decode_bytes(data, path, encoding)
    if fmt == "text":
        lines = _split_lines(text)
        return Table(["text"], [{"text": ln} for ln in lines], fmt, False, path,
                     list(range(1, len(lines) + 1)))
    if fmt == "label-text":
        rows = []
        for ln in _split_lines(text):
            label, _, rest = ln.partition(" ")
            rows.append({"label": label, "text": rest})
        return Table(["label", "text"], rows, fmt, False, path, list(range(1, len(rows) + 1)))
    if fmt == "jsonl":
        return _read_jsonl(text, path)
    return _read_delimited(text, path, fmt, header)


def _read_jsonl(text: str, path: Path) -> Table:
    rows, lines, columns, seen, blank = [], [], [], set(), 0
    for i, ln in enumerate(_split_lines(text), 1):
        if not ln.strip():
            blank += 1
            continue
        try:
            obj = json.loads(ln)
        except json.JSONDecodeError as exc:
            raise FileFormatError(f"{path}: line {i}: not valid JSON ({exc.msg}, column {exc.colno})"
                                  ) from None
        if not isinstance(obj, dict):
            raise FileFormatError(
                f"{path}: line {i}: expected a JSON object per line, found {type(obj).__name__}"
            )
        for k in obj:
            if k not in seen:
                seen.add(k)
                columns.append(k)
        rows.append(obj)
        lines.append(i)
    return Table(columns, rows, "jsonl", True, path, lines, blank)


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def detect_header(records: Sequence[Sequence[str]], fmt: str = "tsv") -> bool:
    """True when some column is a non-number in row 0 and numeric in the sampled rows after it."""
    if len(records) < 2:
        return fmt == "csv"
    first, rest = records[0], records[1 : 1 + HEADER_SAMPLE]
    for j, value in enumerate(first):
        col = [r[j] for r in rest if j < len(r)]
        if col and all(_is_number(v) for v in col):
            return not _is_number(value)
    for j, value in enumerate(first):
        if value.strip().lower() in HEADER_NAMES and all(
                j >= len(r) or r[j] != value for r in rest):
            return True
    return fmt == "csv"


def _read_delimited(text: str, path: Path, fmt: str, header: bool | None) -> Table:
    records: list[list[str]] = []
    lines: list[int] = []
    blank = 0
    if fmt == "tsv":
        for i, ln in enumerate(_split_lines(text), 1):
            if not ln.strip():
                blank += 1
                continue
            records.append(ln.split("\t"))
            lines.append(i)
    else:
        old = csv.field_size_limit()
        csv.field_size_limit(MAX_LINE)  # 100k-character rows are legitimate
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)
        start = 1
        try:
            for rec in reader:
                if not rec or (len(rec) == 1 and not rec[0].strip()):
                    blank += 1
                else:
                    records.append(rec)
                    lines.append(start)
                start = reader.line_num + 1
        except csv.Error as exc:
            raise FileFormatError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
        finally:
            csv.field_size_limit(old)
    if header is None:
        header = detect_header(records, fmt)
    if header and records:
        columns = [c if c else str(j) for j, c in enumerate(records[0])]
        if len(set(columns)) != len(columns):
            raise FileFormatError(f"{path}: line {lines[0]}: duplicate column names in header "
                                  f"{columns}; pass --no-header to name columns by index")
        records, lines = records[1:], lines[1:]
    else:
        width = len(records[0]) if records else 0
        columns = [str(j) for j in range(width)]
    rows = []
    for rec, ln in zip(records, lines, strict=True):
        if len(rec) != len(columns):
            what = "tab" if fmt == "tsv" else "comma"
            raise FileFormatError(
                f"{path}: line {ln}: expected {len(columns)} {what}-separated fields, found "
                f"{len(rec)}" + (" (TSV has no quoting: a tab inside a field splits it)"
                                 if fmt == "tsv" else "")
            )
        rows.append(dict(zip(columns, rec, strict=True)))
    return Table(columns, rows, fmt, bool(header), path, lines, blank)


# ---- writing -------------------------------------------------------------------------------------


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v)


def write_rows(
    path: str | os.PathLike[str],
    rows: Table | Iterable[Mapping[str, Any]],
    fmt: str | None = None,
    columns: Sequence[str] | None = None,
    header: bool = True,
    *,
    user: bool = False,
) -> Path:
    """Write rows atomically as ``fmt`` (default: from the extension). Output is UTF-8.
    ``user``: ``path`` is one the user named (``-`` and devices written in place, links
    resolved: :func:`robustlab.outputs.atomic_write`), not a run-directory file.

    ``rows`` is a :class:`Table` or dicts; ``columns`` (default: the table's, or the keys in order
    of first appearance) fixes the column order of TSV/CSV. ``text`` writes the single column
    (``text`` or the only one); ``label-text`` writes ``label`` and ``text``. A value that the
    format cannot hold (a newline in a text row, a tab in TSV) raises :class:`FileFormatError`
    before anything is written.
    """
    from robustlab.outputs import atomic_write

    path = Path(path)
    fmt = format_for(path, fmt)
    if isinstance(rows, Table):
        columns = list(columns or rows.columns)
        records = rows.rows
    else:
        records = [dict(r) for r in rows]
        if columns is None:
            seen: dict[str, None] = {}
            for r in records:
                seen.update(dict.fromkeys(r))
            columns = list(seen)
    columns = list(columns)
    payload = render_rows(path, fmt, records, columns, header)

    def w(f: Any) -> None:
        f.write(payload)

    if path.is_dir():
        raise FileFormatError(f"{path}: is a directory; give an output file name")
    try:
        return atomic_write(path, w, user=user)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({exc.strerror or exc})") from None


def render_rows(path: Path, fmt: str, records: Sequence[Mapping[str, Any]], columns: list[str],
            header: bool, start: int = 0) -> str:
    """The text of ``records`` in ``fmt``; ``start`` is the number of rows written before them
    (:mod:`robustlab.data.stream` renders a file batch by batch), for the row numbers of errors."""
    if fmt == "jsonl":
        return "".join(json.dumps({k: r.get(k) for k in columns} if columns else dict(r),
                                  ensure_ascii=False) + "\n" for r in records)
    if fmt in ("text", "label-text"):
        if fmt == "text":
            col = "text" if "text" in columns or not columns else columns[0]
            values = [_cell(r.get(col)) for r in records]
        else:
            values = [_cell(r.get("label")) + (" " + t if (t := _cell(r.get("text"))) else "")
                      for r in records]
        for i, v in enumerate(values):
            if "\n" in v or "\r" in v:
                raise FileFormatError(
                    f"{path}: row {start + i + 1} contains a line break, which a {fmt} file cannot hold; "
                    "write .jsonl or .csv instead"
                )
        return "".join(v + "\n" for v in values)
    if fmt == "tsv":
        out = []
        if header:
            out.append("\t".join(columns))
        for i, r in enumerate(records):
            cells = [_cell(r.get(c)) for c in columns]
            for c, v in zip(columns, cells, strict=True):
                if "\t" in v or "\n" in v or "\r" in v:
                    raise FileFormatError(
                        f"{path}: row {start + i + 1}, column {c!r} contains a tab or line break, which "
                        "TSV cannot hold; write .csv or .jsonl instead"
                    )
            out.append("\t".join(cells))
        return "".join(line + "\n" for line in out)
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\n")
    # QUOTE_MINIMAL only quotes characters of the line terminator, so a bare "\r" would be left
    # unquoted and read back as a line end: rows holding one are written fully quoted.
    quoted = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_ALL)
    if header:
        (quoted if any("\r" in c for c in columns) else writer).writerow(columns)
    for r in records:
        cells = [_cell(r.get(c)) for c in columns]
        (quoted if any("\r" in c for c in cells) else writer).writerow(cells)
    return buf.getvalue()

