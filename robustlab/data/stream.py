"""Row files in constant memory: read, perturb and write them batch by batch.

:mod:`robustlab.data.files` is the one home of the *formats* (what a row is, how a header is
detected, how a value is written, which values a format cannot hold); this module applies the same
rules to files too large to hold in memory, for ``robustlab perturb`` and ``robustlab augment``:

* :class:`RowReader` decodes a file in 1 MiB blocks with the codec's incremental decoder and yields
  ``(line, row)`` pairs, exactly the rows and line numbers that :func:`~robustlab.data.files.
  read_rows` gives (same header detection on the same 50-row sample, same messages for the same
  faults). JSONL files are read twice: the first pass collects the columns (the union of keys in
  order of first appearance, which every written row carries) and validates every line, so a
  malformed file fails before any work is done.
* :func:`apply_batched` runs perturbations over rows in bounded batches (the only perturbation
  loop of the two commands), never holding more than about :data:`HOLD_BYTES` of results,
  however many copies per row (:class:`CopyJobs`, generated as they are needed).
* :func:`write_outputs` / :func:`write_stream` write rendered batches through
  :func:`robustlab.outputs.open_output`: a file appears complete or not at all; ``-``, a FIFO or
  a device (``/dev/null``) is written in place as rows come.

Memory is bounded by the batch size and the longest row (:data:`~robustlab.data.files.MAX_LINE`),
not by the file or the number of copies.
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import itertools
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustlab.data.files import (
    HEADER_SAMPLE,
    MAX_LINE,
    FileFormatError,
    Table,
    detect_header,
    format_for,
    regular_input,
    render_rows,
)

__all__ = ["BATCH", "HOLD_BYTES", "BatchWriter", "CopyJobs", "Output", "RowReader",
           "apply_batched", "count_lines", "derived_seed", "restartable", "write_outputs",
           "write_stream"]

#: texts per perturbation call (the same chunk size ``robustlab perturb`` always used)
BATCH = 512
_BLOCK = 1 << 20


def count_lines(path: str | os.PathLike[str]) -> int:
    """Lines in a file (a last line without newline counts): a cheap row estimate for the bar."""
    n, last = 0, b"\n"
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


@dataclass
class _Pos:
    """Bytes and newlines consumed before the current block (for decode-error positions)."""

    offset: int = 0
    newlines: int = 0
    last_nl: int = -1


class RowReader:
    """Rows of one file, streamed; see the module docstring. Iterating twice reads it twice."""

    def __init__(self, path: str | os.PathLike[str], fmt: str | None = None,
                 encoding: str = "utf-8", header: bool | None = None) -> None:
        self.path = Path(path)
        self.fmt = format_for(self.path, fmt)
        self.encoding = encoding
        try:
            codecs.lookup(encoding)
        except LookupError:
            raise FileFormatError(
                f"unknown encoding {encoding!r} (e.g. utf-8, cp1252, latin-1)") from None
        regular_input(self.path)  # read twice or more: a FIFO or /dev/zero is refused
        try:
            with open(self.path, "rb"):
                pass
        except OSError as exc:
            raise FileFormatError(f"{self.path}: cannot read ({exc.strerror})") from None
        self.header = False
        if self.fmt == "text":
            self.columns = ["text"]
        elif self.fmt == "label-text":
            self.columns = ["label", "text"]
        elif self.fmt == "jsonl":
            self.header = True
            seen: dict[str, None] = {}
            for _, obj in self._jsonl():
                seen.update(dict.fromkeys(obj))
            self.columns = list(seen)
        else:
            sample: list[list[str]] = []
            first_line = 0
            for line, rec in self._records():
                if not sample:
                    first_line = line
                sample.append(rec)
                if len(sample) > HEADER_SAMPLE:
                    break
            self.header = detect_header(sample, self.fmt) if header is None else bool(header)
            if self.header and sample:
                self.columns = [c if c else str(j) for j, c in enumerate(sample[0])]
                if len(set(self.columns)) != len(self.columns):
                    raise FileFormatError(
                        f"{self.path}: line {first_line}: duplicate column names in header "
                        f"{self.columns}; pass --no-header to name columns by index")
            else:
                self.columns = [str(j) for j in range(len(sample[0]) if sample else 0)]

    def column_name(self, key: str | int | None = None) -> str:
        """A column by name or 0-based index, or the text column (the rules of :class:`Table`)."""
        return Table(self.columns, [], self.fmt, self.header, self.path).column_name(key)

    # ---- decoding --------------------------------------------------------------------------------
    def _blocks(self) -> Iterator[str]:
        """Decoded text, block by block; a decode error names line, byte and the fix."""
        enc = self.encoding.lower().replace("_", "-")
        decoder = codecs.getincrementaldecoder(self.encoding)()
        pos = _Pos()
        with open(self.path, "rb") as f:
            first = True
            while True:
                block = f.read(_BLOCK)
                if first and enc in ("utf-8", "utf8") and block.startswith(b"\xef\xbb\xbf"):
                    block = block[3:]
                first = False
                pending = len(decoder.getstate()[0])
                try:
                    text = decoder.decode(block, final=not block)
                except UnicodeDecodeError as exc:
                    raise self._decode_error(exc, block, pos, pending, enc) from None
                if text:
                    yield text
                if not block:
                    return
                nl = block.rfind(b"\n")
                if nl >= 0:
                    pos.newlines += block.count(b"\n")
                    pos.last_nl = pos.offset + nl
                pos.offset += len(block)

    def _decode_error(self, exc: UnicodeDecodeError, block: bytes, pos: _Pos, pending: int,
                      enc: str) -> FileFormatError:
        at = pos.offset - pending + exc.start  # absolute byte offset (after a UTF-8 BOM)
        inside = block[: max(0, at - pos.offset)]
        line = pos.newlines + inside.count(b"\n") + 1
        nl = inside.rfind(b"\n")
        last_nl = pos.offset + nl if nl >= 0 else pos.last_nl
        col = at - (last_nl + 1) + 1
        bad = exc.object[exc.start : exc.end].hex(" ")
        hint = (" If the file is Windows/Latin-1 text, pass --encoding cp1252."
                if enc in ("utf-8", "utf8") else "")
        return FileFormatError(
            f"{self.path}: line {line}, byte {col}: not valid {self.encoding} (bytes {bad}).{hint}")

    def _lines(self) -> Iterator[tuple[int, str]]:
        """Lines split on ``\\n`` only (``\\r\\n`` accepted), as ``files._split_lines`` does."""
        carry, n = "", 0
        for text in self._blocks():
            parts = (carry + text).split("\n")
            carry = parts.pop()
            for ln in parts:
                n += 1
                yield n, ln[:-1] if ln.endswith("\r") else ln
            self._bound(carry, n + 1)
        if carry:
            yield n + 1, carry[:-1] if carry.endswith("\r") else carry

    def _csv_pieces(self) -> Iterator[str]:
        """Lines with their ends, split on \\r, \\n and \\r\\n like ``StringIO(newline='')``."""
        carry = ""
        for text in self._blocks():
            pieces = io.StringIO(carry + text, newline="").readlines()
            carry = pieces.pop() if pieces and not pieces[-1].endswith("\n") else ""
            self._bound(carry, None)
            yield from pieces
        if carry:
            yield carry

    def _bound(self, carry: str, line: int | None) -> None:
        """A line still open after :data:`MAX_LINE` characters ends the read: memory stays
        bounded (and joining ever longer pieces quadratic time is avoided)."""
        if len(carry) > MAX_LINE:
            at = f"line {line}" if line is not None else "a line"
            raise FileFormatError(
                f"{self.path}: {at} is longer than {MAX_LINE:,} characters without a line "
                "break; not a row file?")

    # ---- records ---------------------------------------------------------------------------------
    def _jsonl(self) -> Iterator[tuple[int, dict[str, Any]]]:
        for i, ln in self._lines():
            if not ln.strip():
                continue
            try:
                obj = json.loads(ln)
            except json.JSONDecodeError as exc:
                raise FileFormatError(f"{self.path}: line {i}: not valid JSON ({exc.msg}, column "
                                      f"{exc.colno})") from None
            if not isinstance(obj, dict):
                raise FileFormatError(f"{self.path}: line {i}: expected a JSON object per line, "
                                      f"found {type(obj).__name__}")
            yield i, obj

    def _records(self) -> Iterator[tuple[int, list[str]]]:
        if self.fmt == "tsv":
            for i, ln in self._lines():
                if ln.strip():
                    yield i, ln.split("\t")
            return
        old = csv.field_size_limit()
        csv.field_size_limit(MAX_LINE)  # 100k-character rows are legitimate
        reader = csv.reader(self._csv_pieces(), strict=True)
        start = 1
        try:
            for rec in reader:
                if rec and not (len(rec) == 1 and not rec[0].strip()):
                    yield start, rec
                start = reader.line_num + 1
        except csv.Error as exc:
            raise FileFormatError(
                f"{self.path}: line {reader.line_num}: malformed CSV ({exc})") from None
        finally:
            csv.field_size_limit(old)

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any]]]:
        if self.fmt == "text":
            for i, ln in self._lines():
                yield i, {"text": ln}
        elif self.fmt == "label-text":
            for i, ln in self._lines():
                label, _, rest = ln.partition(" ")
                yield i, {"label": label, "text": rest}
        elif self.fmt == "jsonl":
            yield from self._jsonl()
        else:
            cols, skip = self.columns, self.header
            for line, rec in self._records():
                if skip:
                    skip = False
                    continue
                if len(rec) != len(cols):
                    what = "tab" if self.fmt == "tsv" else "comma"
                    raise FileFormatError(
                        f"{self.path}: line {line}: expected {len(cols)} {what}-separated fields, "
                        f"found {len(rec)}" + (" (TSV has no quoting: a tab inside a field "
                                               "splits it)" if self.fmt == "tsv" else ""))
                yield line, dict(zip(cols, rec, strict=True))


# ---- perturbing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    """One perturbation of one value: the text written, whether it changed, the error if any."""

    text: Any
    changed: bool
    error: str | None = None


def derived_seed(seed: int, k: int) -> int:
    """The seed of a row's k-th output: ``seed`` itself for k = 0 (so one output per row equals
    ``robustlab perturb`` with the same seed), else a hash of (seed, k)."""
    if k == 0:
        return int(seed)
    h = hashlib.blake2b(f"{int(seed)}:{k}".encode(), digest_size=8, person=b"rl-augment")
    return int.from_bytes(h.digest(), "little")


class CopyJobs(Sequence[tuple[Any, int]]):
    """The ``(perturbation, seed)`` of copy k of every row (``robustlab augment``), computed when
    asked: copies cycle through ``perts``, copy k has :func:`derived_seed` (``seed``, k // len).
    Built up front, ``-n 10**12`` jobs would fill memory before the first row is read."""

    def __init__(self, perts: Sequence[Any], seed: int, n: int) -> None:
        self.perts, self.seed, self.n = list(perts), int(seed), int(n)

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, k: int) -> tuple[Any, int]:  # type: ignore[override]
        if not isinstance(k, int):
            raise TypeError("CopyJobs takes integer indexes")
        if k < 0:
            k += self.n
        if not 0 <= k < self.n:
            raise IndexError(k)
        return self.perts[k % len(self.perts)], derived_seed(self.seed, k // len(self.perts))

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        for k in range(self.n):
            yield self[k]


#: about the most memory the results of one batch take (rows × jobs × (text + objects)):
#: ``augment -n`` shrinks the batch to stay under it, so memory does not grow with -n × rows
HOLD_BYTES = 32 << 20
#: bytes a result takes besides its text (the Outcome and Result objects, the str header)
_RESULT_BYTES = 300


def apply_batched(rows: Iterable[tuple[int, dict[str, Any]]], jobs: Sequence[tuple[Any, int]],
                  column: str, batch: int | None = None,
                  on_batch: Callable[[int], None] | None = None,
                  ) -> Iterator[tuple[int, dict[str, Any], Iterable[Result]]]:
    """Yield ``(line, row, results)`` in input order, one result per job ``(perturbation, seed)``
    in job order.

    Texts go to ``perturb_outcomes`` ``batch`` (default :data:`BATCH`) at a time, each job on
    the same batch; a batch also ends once its results would take about :data:`HOLD_BYTES`
    (``len(jobs)`` × its texts), so with many jobs (``augment -n``) it holds fewer rows, and a
    row whose own results exceed that gets a lazy iterator that perturbs its copies a few at a
    time (consume it before asking for the next row). Memory is thus bounded whatever
    ``len(jobs)`` × rows. At most ``4 * batch`` rows are held, so rows whose value is not a
    string (reported, not perturbed) cannot grow a batch without bound. ``on_batch(n)`` is
    called after each batch with its number of rows (the progress bar).
    """
    batch = batch or BATCH
    n_jobs = len(jobs)
    pending: list[tuple[int, dict[str, Any]]] = []
    texts: list[str] = []
    held = 0  # estimated bytes of the pending batch's results

    def flush() -> Iterator[tuple[int, dict[str, Any], Iterable[Result]]]:
        lazy = len(texts) == 1 and held > HOLD_BYTES  # one row's copies alone are too many
        outs = [] if lazy else [iter(p.perturb_outcomes(texts, seed=s)) if texts else iter(())
                                for p, s in jobs]
        for line, row in pending:
            value = row.get(column)
            res: Iterable[Result]
            if not isinstance(value, str):
                res = itertools.repeat(_not_a_string(value), n_jobs)
            elif lazy:  # the one text's copies, a job at a time as they are consumed
                res = (Result(o.text, o.changed, o.error) for o in _lazy_outcomes(value, jobs))
            else:
                res = [Result(o.text, o.changed, o.error) for o in (next(it) for it in outs)]
            yield line, row, res
        if on_batch:
            on_batch(len(pending))
        pending.clear()
        texts.clear()

    for line, row in rows:
        pending.append((line, row))
        value = row.get(column)
        if isinstance(value, str):
            texts.append(value)
            held += n_jobs * (_RESULT_BYTES + len(value))
        if len(texts) >= batch or len(pending) >= 4 * batch or held >= HOLD_BYTES:
            yield from flush()
            held = 0
    if pending:
        yield from flush()


def _lazy_outcomes(text: str, jobs: Sequence[tuple[Any, int]]) -> Iterator[Any]:
    """The outcome of every job on one text, computed a job at a time (each has its own seed, so
    they cannot share a ``perturb_outcomes`` call)."""
    for p, s in jobs:
        yield from p.perturb_outcomes([text], seed=s)


def _not_a_string(value: Any) -> Result:
    return Result(value, False, f"not a string ({'null' if value is None else type(value).__name__})")


# ---- writing ---------------------------------------------------------------------------------------


@dataclass
class Output:
    """One output file of a streamed job: where, in which format, which columns, header or not."""

    path: Path
    fmt: str
    columns: list[str]
    header: bool = True


class BatchWriter:
    """Renders records into an open file ``batch`` at a time, with
    :func:`~robustlab.data.files.write_rows`' rendering (byte for byte); a value the format cannot
    hold raises :class:`FileFormatError` naming its row."""

    def __init__(self, f: Any, out: Output, batch: int | None = None) -> None:
        self.f, self.out, self.batch = f, out, batch or BATCH
        self.written = 0
        self._buf: list[Mapping[str, Any]] = []
        self._first = True

    def write(self, record: Mapping[str, Any]) -> None:
        self._buf.append(record)
        if len(self._buf) >= self.batch:
            self.flush()

    def flush(self) -> None:
        if not self._buf and not self._first:
            return
        o = self.out
        text = render_rows(o.path, o.fmt, self._buf, o.columns, o.header and self._first,
                       self.written)
        try:
            self.f.write(text)
        except OSError as exc:  # a device or FIFO written in place: /dev/full, a closed reader
            raise FileFormatError(f"{o.path}: cannot write ({exc.strerror or exc})") from None
        self.written += len(self._buf)
        self._first = False
        self._buf = []


def write_outputs(outputs: Sequence[Output],
                  produce: Callable[[list[BatchWriter]], None]) -> list[int]:
    """Open every output (:func:`robustlab.outputs.open_output`, as paths the user named), let
    ``produce(writers)`` stream into them, flush; returns rows written per output.

    A regular file (or a new path) is written atomically: nothing is moved into place unless
    ``produce`` and every flush succeed, so an error leaves no output file. ``-``, a FIFO or a
    device is written in place as rows come (:func:`restartable` is then False); a write error
    names the output.
    """
    from contextlib import ExitStack

    writers: list[BatchWriter] = []
    with ExitStack() as stack:
        for o in outputs:
            writers.append(BatchWriter(stack.enter_context(_opened(o.path)), o))
        produce(writers)
        for w in writers:
            w.flush()
    return [w.written for w in writers]


@contextmanager
def _opened(path: Path) -> Iterator[Any]:
    """:func:`robustlab.outputs.open_output` whose own failures (opening, the final flush,
    the rename) are one line naming ``path``."""
    from robustlab.outputs import open_output

    cm = open_output(path, user=True)
    try:
        f = cm.__enter__()
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        yield f
    except BaseException:
        if not cm.__exit__(*sys.exc_info()):
            raise
        return
    try:
        cm.__exit__(None, None, None)
    except OSError as exc:
        raise FileFormatError(f"{path}: cannot write ({exc.strerror or exc})") from None


def restartable(paths: Iterable[str | os.PathLike[str] | None]) -> bool:
    """True when every output is written atomically, so a pass can be abandoned and started
    again (perturb/augment redo the file with an ``error`` column at the first failed row);
    False when one is standard output, a FIFO or a device, written as rows come."""
    from robustlab.outputs import output_target

    return all(output_target(p, user=True).replaceable for p in paths if p is not None)


def write_stream(path: str | os.PathLike[str], records: Iterable[Mapping[str, Any]], fmt: str,
                 columns: Sequence[str], header: bool = True) -> int:
    """Write ``records`` atomically as ``fmt``, a batch at a time; returns the row count."""

    def produce(writers: list[BatchWriter]) -> None:
        for r in records:
            writers[0].write(r)

    return write_outputs([Output(Path(path), fmt, list(columns), header)], produce)[0]
