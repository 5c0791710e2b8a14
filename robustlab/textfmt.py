"""Plain text for the terminal: the CLI's result tables (one formatter for every command) and
the one sanitiser for text that came from elsewhere.

Anything read from a dataset, a run directory (store, worker.log, worker.json, summary.json), a
model folder or a plan may be hostile: an example text holding ``ESC ] 0 ; title BEL`` retitles
the terminal, ``ESC ] 52`` writes the clipboard, ``ESC [ 2 J`` clears the screen, U+009B is an
8-bit CSI, and the bidi controls (U+202E …) or U+2028 reorder or hide the text around them.
:func:`printable` shows every such character as its Python escape (``\\x1b``, ``\\u202e``), so
it is seen, never interpreted. The CLI prints through :func:`echo` (tests/
test_security_terminal.py checks that no other ``print`` remains), :func:`align` escapes every
cell, and the TUI builds its widgets' text with :func:`robustlab.tui.plain.plain` over the same
function.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import IO, Any


def printable(text: object, *, lines: bool = False) -> str:
    """``text`` with every character that is not printable escaped as in a Python literal.

    Escaped: C0 and C1 controls (ESC, BEL, CR, U+009B …), DEL, format characters (bidi
    overrides and isolates, zero-width characters), line and paragraph separators, other
    separators than the ASCII space, surrogates, private-use and unassigned code points (what
    :meth:`str.isprintable` calls non-printable). ``lines=True`` keeps ``\\n`` and ``\\t`` (a log
    tail, a multi-line message); everything else is escaped there too.
    """
    s = text if isinstance(text, str) else str(text)
    if s.isprintable():  # the common case: one C-level scan, no copy
        return s
    keep = "\n\t" if lines else ""
    return "".join(c if c.isprintable() or c == " " or c in keep else repr(c)[1:-1] for c in s)


def echo(*parts: object, sep: str = " ", file: IO[str] | None = None, flush: bool = False
         ) -> None:
    """``print`` for the CLI: the line goes through :func:`printable` (newlines and tabs kept), so
    a value from a dataset or a run directory never reaches the terminal as control codes."""
    print(printable(sep.join(map(str, parts)), lines=True),
          file=sys.stdout if file is None else file, flush=flush)


def align(head: Sequence[str], rows: Sequence[Sequence[object]], *, rule: bool = False) -> str:
    """Left-aligned columns two spaces apart, no trailing blanks; ``rule`` adds ``---`` under
    the header. Every cell is :func:`printable` (one line, control characters escaped)."""
    cells = [[printable(x) for x in row] for row in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    lines = ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
             for r in cells]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def spread_text(v: dict[str, Any] | None, digits: int = 3, plain: str = "-") -> str:
    """mean±std over seeds; the mean alone when one seed ran (no made-up "±0.000")."""
    if not v or v.get("mean") is None:
        return plain
    n = v.get("n")
    if n is None:
        n = len([x for x in v.get("values") or [] if x is not None]) or (2 if v.get("std") else 1)
    if n <= 1 or v.get("std") is None:
        return f"{v['mean']:.{digits}f}"
    return f"{v['mean']:.{digits}f}±{v['std']:.{digits}f}"


def short_model(model: object) -> str:
    """A model as tables and screens show it: a path by its last component, ``object:NAME`` by
    its name; a family or ``hf:ID`` as it is. The full spec stays in the run's config."""
    s = str(model or "?").removeprefix("object:")
    # a path as a run stores it (absolute; or ./, ../, ~ as typed): by its last component. A
    # family spec or hub id may hold a "/" (bow:x=a/b, org/name): kept whole
    if not s.startswith(("/", "./", "../", "~")):
        return s
    return s.rstrip("/").rsplit("/", 1)[-1] or s


class LineProgress:
    """A progress report for a stream that is not a terminal (a log file, a pipe, CI): whole
    lines, ``desc: n/total (p%)``, at most every ``every`` seconds and at the end, never the
    carriage returns a tqdm bar redraws itself with. Offers the part of tqdm's interface the
    commands use (``update``, ``write``, ``set_postfix``, ``close``)."""

    def __init__(self, total: int, desc: str, *, initial: int = 0, unit: str = "",
                 file: IO[str] | None = None, every: float = 30.0) -> None:
        import time

        self.total, self.desc, self.n, self.unit = int(total), desc, int(initial), unit
        self.file = file if file is not None else sys.stderr
        self.every, self._clock = every, time.monotonic
        self._last = self._clock()
        self._postfix = ""
        self._closed = False

    def _line(self) -> None:
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        unit = f" {self.unit}s" if self.unit else ""
        echo(f"{self.desc}: {self.n}/{self.total}{unit}{pct}{self._postfix}", file=self.file,
             flush=True)
        self._last = self._clock()

    def update(self, n: int = 1) -> None:
        self.n += int(n)
        if self._clock() - self._last >= self.every:
            self._line()

    def set_postfix(self, **kw: object) -> None:
        self._postfix = ", " + ", ".join(f"{k}={v}" for k, v in kw.items()) if kw else ""

    def write(self, text: str) -> None:
        echo(text, file=self.file, flush=True)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._line()


def progress(total: int, desc: str, *, unit: str = "it", initial: int = 0,
             file: IO[str] | None = None) -> Any:
    """A tqdm bar on a terminal, else :class:`LineProgress` (no carriage returns in logs)."""
    stream = file if file is not None else sys.stderr
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if not tty:
        return LineProgress(total, printable(desc), initial=initial, unit=unit, file=stream)
    from tqdm import tqdm

    return tqdm(total=total, initial=initial, desc=printable(desc), unit=unit, file=stream,
                dynamic_ncols=True, smoothing=0.1)


#: the notes :func:`note_once` printed in this process
_NOTES: set[str] = set()


def note_once(line: str, file: IO[str] | None = None) -> bool:
    """Print a note on stderr the first time this process sees it (a resource fallback is a
    fact about the process, not about each cell or seed that meets it). True when printed."""
    if line in _NOTES:
        return False
    _NOTES.add(line)
    echo(line, file=file if file is not None else sys.stderr, flush=True)
    return True
