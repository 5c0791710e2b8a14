"""Plain-text tables for stdout (the CLI's result tables), one formatter for every command."""

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
