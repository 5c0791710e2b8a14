"""Text for Textual widgets from values that came from data: plain, never markup.

A ``str`` given to ``Static``/``Label``/``DataTable``/``border_title``/``notify`` is parsed as
Textual markup: an example text holding ``[/b]`` raised ``MarkupError`` and killed the app, and
``[link=…]`` made a link. A :class:`rich.text.Text` is shown as it is, so every widget that shows
a dataset text, a stored value, a path, a log line or an error message gets one from
:func:`plain`, whose characters went through :func:`robustlab.textfmt.printable` (control
characters shown as ``\\x1b``, never sent to the terminal).
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Input

from robustlab.textfmt import printable


def plain(value: object, style: str = "", *, lines: bool = False) -> Text:
    """``value`` as literal text: control characters escaped, markup not interpreted.
    ``lines=True`` keeps newlines (a multi-line message, a log tail)."""
    return Text(printable("" if value is None else value, lines=lines), style=style)


def append(text: Text, value: object, style: str = "", *, lines: bool = False) -> Text:
    """Append ``value`` to ``text`` as :func:`plain` does (for styled lines built in parts)."""
    text.append(printable("" if value is None else value, lines=lines), style=style)
    return text


class PlainInput(Input):
    """An ``Input`` whose typed or pasted text is :func:`printable`: a control character pasted
    into it (say, a file name copied from a hostile listing) becomes its visible escape, never a
    raw byte the field would send to the terminal; what the field shows is what it holds."""

    def replace(self, text: str, start: int, end: int) -> None:
        super().replace(printable(text), start, end)
