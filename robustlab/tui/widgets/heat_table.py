"""A DataTable that shows a :class:`~robustlab.tui.specs.Table`: heat colours, keyboard sort."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

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


class HeatTable(DataTable):
    """Heat coloured and sortable from the keyboard: ``o`` sorts by the next column (by the
    cursor's column in cell-cursor tables), ``O`` reverses the order."""

    DEFAULT_CSS = """
    HeatTable { height: 1fr; }
    """
    BINDINGS = [Binding("o", "sort_column", "Sort"), Binding("O", "sort_reverse", "Reverse",
                                                              show=False)]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(*args, **kwargs)
        self.spec: Table | None = None
        self._sorted: tuple[int, bool] | None = None

    def show(self, table: Table, keep_cursor: bool = False) -> None:
        """Replace the contents with ``table``."""
        row = self.cursor_row
        same_columns = self.spec is not None and self.spec.columns == table.columns
        self.spec = table
        if same_columns:
            self.clear()  # keep the columns (and their widths): no flicker on live updates
        else:
            self.clear(columns=True)
            self.add_columns(*table.columns)
        ranges = {}
        for name in table.heat:
            if name in table.columns:
                j = table.columns.index(name)
                vals = [r[j] for r in table.rows if isinstance(r[j], (int, float))
                        and not isinstance(r[j], bool)]
                if vals:
                    ranges[j] = (min(vals), max(vals))
        keys = table.keys or [str(i) for i in range(len(table.rows))]
        self.add_rows_keyed(
            [[self._cell(v, ranges.get(j)) for j, v in enumerate(r)] for r in table.rows], keys)
        if keep_cursor and table.rows:
            self.move_cursor(row=min(row, len(table.rows) - 1))

    def add_rows_keyed(self, rows: list[list[Any]], keys: list[str]) -> None:
        for r, k in zip(rows, keys, strict=True):
            self.add_row(*r, key=k)

    @staticmethod
    def _cell(v: Any, rng: tuple[float, float] | None) -> Any:
        text = fmt(v)
        if rng is None or not isinstance(v, (int, float)) or isinstance(v, bool):
            return text
        return Text(text, style=heat_style(float(v), *rng), justify="right")

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
        self._sorted = (col, reverse)

        def key(v: Any) -> Any:
            if isinstance(v, Text):
                v = v.plain
            try:
                return (0, float(v))
            except (TypeError, ValueError):
                return (1, str(v))

        self.sort(self.ordered_columns[col].key, key=key, reverse=reverse)
        self.border_subtitle = f"sorted by {self.spec.columns[col]} {'↓' if reverse else '↑'}"

    def current_key(self) -> str | None:
        """The key of the row under the cursor (the cell key for cell tables)."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def sorted_table(self) -> Table | None:
        """The table as displayed (in its current sort order), for export."""
        if self.spec is None:
            return None
        index = {k: i for i, k in enumerate(self.spec.keys or
                                             [str(i) for i in range(len(self.spec.rows))])}
        rows = [self.spec.rows[index[r.key.value]] for r in self.ordered_rows]
        return Table(self.spec.title, self.spec.columns, rows, self.spec.heat)
