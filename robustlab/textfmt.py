"""Plain text for the terminal: the CLI's result tables (one formatter for every command) and
escaping of text read from a run directory before it is shown."""

from __future__ import annotations

from collections.abc import Sequence


def align(head: Sequence[str], rows: Sequence[Sequence[object]], *, rule: bool = False) -> str:
    """Left-aligned columns two spaces apart, no trailing blanks; ``rule`` adds ``---`` under
    the header."""
    cells = [[str(x) for x in row] for row in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]
    lines = ["  ".join(x.ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
             for r in cells]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def printable(text: str) -> str:
    """``text`` with control characters escaped: text read from a run directory (a stored
    command, an error) is shown as it is, never interpreted by the terminal."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)
