"""A DataTable that shows a :class:`~robustlab.tui.specs.Table`: heat colours, keyboard sort,
and paging, so a 10,000-row table costs one page of widgets (sorting and export use all rows)."""

from __future__ import annotations

from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.coordinate import Coordinate
from textual.widgets import DataTable

from robustlab.textfmt import printable
from robustlab.tui.specs import Table, fmt

# a diverging scale that reads on light and dark backgrounds (blue = low, red = high)
_SCALE = ["#3b4cc0", "#6f92f3", "#aac7fd", "#dddddd", "#f7b89c", "#e7745b", "#b40426"]
_FG = ["white", "black", "black", "black", "black", "black", "white"]


def heat_style(v: float, lo: float, hi: float) -> str:
    """The background for ``v`` on the scale of its column (lo..hi)."""
    if hi <= lo:
        i = len(_SCALE) // 2
    else:
        i = min(len(_SCALE) - 1, max(0, round((v - lo) / (hi - lo) * (len(_SCALE) - 1))))
    return f"{_FG[i]} on {_SCALE[i]}"


def _sort_key(v: Any) -> Any:
    try:
        return (0, float(v))
    except (TypeError, ValueError):
        return (1, "" if v is None else str(v))


class HeatTable(DataTable):
    """Heat coloured, sortable from the keyboard (``o`` sorts by the next column, or by the
    cursor's column in cell-cursor tables; ``O`` reverses) and paged (``]`` / ``[``).

    Every cell and header is a :class:`~rich.text.Text` of :func:`robustlab.textfmt.printable`
    text: a ``str`` cell would be parsed as markup (``[/b]`` in a perturbation name raised
    ``MarkupError``) and a control character in it would reach the terminal. Screens read the
    values of a row with :meth:`row_values` (the table's own values, not the text shown).
    """

    DEFAULT_CSS = """
    HeatTable { height: 1fr; }
    """
    BINDINGS = [
        Binding("o", "sort_column", "Sort"),
        Binding("O", "sort_reverse", "Reverse", show=False),
        Binding("right_square_bracket", "page(1)", "Next page", show=False),
        Binding("left_square_bracket", "page(-1)", "Previous page", show=False),
    ]

    def __init__(self, *args: Any, page_size: int = 500, **kwargs: Any) -> None:
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(*args, **kwargs)
        self.spec: Table | None = None
        self.page_size = page_size
        self.page = 0
        self._order: list[int] = []
        self._ranges: dict[int, tuple[float, float]] = {}
        self._sorted: tuple[int, bool] | None = None
        self._index: dict[str, int] = {}  # row key -> index in spec.rows

    @property
    def pages(self) -> int:
        return max(1, -(-len(self._order) // self.page_size))

    def show(self, table: Table, keep_cursor: bool = False) -> None:
        """Replace the contents with ``table`` (keeping the sort order and, optionally, the
        cursor row and page)."""
        row = self.cursor_row
        same_columns = self.spec is not None and self.spec.headers() == table.headers()
        self.spec = table
        if same_columns:
            self.clear()  # keep the columns (and their widths): no flicker on live updates
        else:
            self.clear(columns=True)
            self.add_columns(*[Text(printable(h)) for h in table.headers()])
            self._sorted = None
        self._ranges = {}
        for name in table.heat:
            if name in table.columns:
                j = table.columns.index(name)
                vals = [r[j] for r in table.rows if isinstance(r[j], (int, float))
                        and not isinstance(r[j], bool)]
                if vals:
                    self._ranges[j] = (min(vals), max(vals))
        self._order = list(range(len(table.rows)))
        if self._sorted is not None:
            self._apply_sort()
        if not keep_cursor:
            self.page = 0
        self._render_page()
        if keep_cursor and self.row_count:
            self.move_cursor(row=min(row, self.row_count - 1))

    #: a text column is never elided below this many cells
    MIN_TEXT_WIDTH = 10

    def _on_resize(self, event: events.Resize) -> None:
        super()._on_resize(event)
        self.fit_width()

    def fit_width(self) -> None:
        """Fit the table to the widget's width (80 columns included) by eliding the widest text
        column with '…' instead of cutting the table at the screen edge: the full value stays in
        the row (detail panes, sorting, export). A table that fits keeps its natural widths;
        when even the elided column would be narrower than :data:`MIN_TEXT_WIDTH`, the table
        scrolls sideways as before."""
        if self.spec is None or not self.columns:
            return
        avail = self.scrollable_content_region.width
        cols = self.ordered_columns
        if avail <= 0 or len(cols) != len(self.spec.columns):
            return
        lo = self.page * self.page_size
        shown = [self.spec.rows[i] for i in self._order[lo:lo + self.page_size]]
        mark = self._sorted[0] if self._sorted is not None else None
        natural = [max([cell_len(printable(h)) + (2 if j == mark else 0)] +  # " ▲"
                       [cell_len(printable(fmt(r[j]))) for r in shown])
                   for j, h in enumerate(self.spec.headers())]
        text_cols = [j for j in range(len(cols)) if j not in self._ranges
                     and any(isinstance(r[j], str) for r in shown)]
        for col in cols:
            col.auto_width = True
        excess = sum(w + 2 * self.cell_padding for w in natural) - avail
        if excess > 0 and text_cols:
            j = max(text_cols, key=natural.__getitem__)
            if natural[j] - excess >= self.MIN_TEXT_WIDTH:
                cols[j].auto_width = False
                cols[j].width = natural[j] - excess
        self._require_update_dimensions = True
        self._clear_caches()
        self.refresh()

    def _keys(self) -> list[str]:
        assert self.spec is not None
        return self.spec.keys or [str(i) for i in range(len(self.spec.rows))]

    def _render_page(self) -> None:
        assert self.spec is not None
        self.page = min(self.page, self.pages - 1)
        self.clear()
        keys = self._keys()
        self._index = {k: i for i, k in enumerate(keys)}
        lo = self.page * self.page_size
        for i in self._order[lo:lo + self.page_size]:
            self.add_row(*[self._cell(v, self._ranges.get(j))
                           for j, v in enumerate(self.spec.rows[i])], key=keys[i])
        notes = []
        if self.pages > 1:
            notes.append(f"rows {lo + 1}–{min(lo + self.page_size, len(self._order))} of "
                         f"{len(self._order)} · [ ] page")
        if self._sorted is not None:
            col, reverse = self._sorted
            notes.append(f"sorted by {printable(self.spec.columns[col])} "
                         f"{'↓' if reverse else '↑'}")
        self.border_subtitle = Text(" · ".join(notes)) if notes else None
        self._mark_sorted_header()
        self.fit_width()

    def _mark_sorted_header(self) -> None:
        """The sorted column's header carries ▲ (ascending) or ▼ (descending): the indicator is
        where the eye is, not only in the border (which a borderless table does not draw)."""
        assert self.spec is not None
        cols = self.ordered_columns
        if len(cols) != len(self.spec.columns):
            return
        for j, (col, head) in enumerate(zip(cols, self.spec.headers(), strict=True)):
            text = printable(head)
            if self._sorted is not None and self._sorted[0] == j:
                text += " ▼" if self._sorted[1] else " ▲"
            col.label = Text(text)
            col.content_width = max(col.content_width, cell_len(text))

    @staticmethod
    def _cell(v: Any, rng: tuple[float, float] | None) -> Text:
        text = printable(fmt(v))
        if rng is None or not isinstance(v, (int, float)) or isinstance(v, bool):
            return Text(text, no_wrap=True, overflow="ellipsis")  # elided by fit_width
        return Text(text, style=heat_style(float(v), *rng), justify="right")

    def action_page(self, step: int) -> None:
        if self.spec is not None and 0 <= self.page + step < self.pages:
            self.page += step
            self._render_page()

    def action_sort_column(self) -> None:
        if self.spec is None or not self.spec.columns:
            return
        if self.cursor_type == "cell":
            col = self.cursor_column
        else:
            col = 0 if self._sorted is None else (self._sorted[0] + 1) % len(self.spec.columns)
        self._sort(col, False)

    def action_sort_reverse(self) -> None:
        col, reverse = self._sorted or (0, False)
        self._sort(col, not reverse)

    def _sort(self, col: int, reverse: bool) -> None:
        """Sort every row (not just the page shown), then show the first page."""
        if self.spec is None:
            return
        self._sorted = (col, reverse)
        self._apply_sort()
        self.page = 0
        self._render_page()
        if self.row_count:
            self.move_cursor(row=0)

    def _apply_sort(self) -> None:
        assert self.spec is not None and self._sorted is not None
        col, reverse = self._sorted
        rows = self.spec.rows
        self._order.sort(key=lambda i: _sort_key(rows[i][col]), reverse=reverse)

    def row_values(self, row: int | None = None) -> list[Any] | None:
        """The values of the table row shown at ``row`` (default: the cursor's), as the
        :class:`Table` holds them (``get_row_at`` returns the escaped text on screen)."""
        if self.spec is None or not self.row_count:
            return None
        row = self.cursor_row if row is None else row
        key = self.coordinate_to_cell_key(Coordinate(row, 0)).row_key.value
        i = self._index.get(key) if key is not None else None
        return None if i is None else list(self.spec.rows[i])

    def current_key(self) -> str | None:
        """The key of the row under the cursor (the cell key for cell tables)."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def sorted_table(self) -> Table | None:
        """All rows (every page) in the order shown, for export."""
        if self.spec is None:
            return None
        return Table(self.spec.title, self.spec.columns, [self.spec.rows[i] for i in self._order],
                     self.spec.heat, labels=self.spec.labels)
