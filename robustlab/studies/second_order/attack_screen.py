"""Attack results (SO-Beam, SO-Enum, random): filterable example list and an example browser."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from robustlab.studies.second_order.attack_view import AttackView, load_attack
from robustlab.textfmt import printable
from robustlab.tui.messages import Loaded
from robustlab.tui.plain import plain
from robustlab.tui.results import load_example, word_diff
from robustlab.tui.screens.base import RunScreen
from robustlab.tui.specs import fmt
from robustlab.tui.widgets.heat_table import HeatTable

FILTERS = {"all": None, "successful": "successful", "failed": "failed", "skipped": "skipped"}


def highlighted(words: list[tuple[str, bool]], style: str) -> Text:
    """A sentence with its changed words styled (each word escaped: data, never markup)."""
    text = Text()
    for i, (w, changed) in enumerate(words):
        if i:
            text.append(" ")
        text.append(printable(w), style=style if changed else "")
    return text


def _proba(p) -> str:
    return "[" + ", ".join(fmt(float(x)) for x in p) + "]" if isinstance(p, list) else fmt(p)


#: the width of the labels of :func:`render_example` ("vulnerable " and the others)
LABEL_WIDTH = 11


def hang(value: Text, width: int | None) -> Text:
    """``value`` wrapped to ``width - LABEL_WIDTH`` cells with its continuation lines indented
    under the first (a hanging indent), so a long sentence does not wrap back under its label
    at 80 columns. ``width`` None: unwrapped (the terminal wraps it)."""
    room = (width or 0) - LABEL_WIDTH
    if room < 20 or value.cell_len <= room:
        return value
    lines = value.wrap(Console(width=room, color_system=None), room)
    return Text("\n" + " " * LABEL_WIDTH).join(line.rstrip() or line for line in lines)


def render_example(ex: dict, width: int | None = None) -> Text:
    """Original, vulnerable x̃ and patched x̃ ⊕ p (changed words highlighted), the patch words,
    every prediction with its probabilities, queries and time; sentences get a hanging indent
    under their label when ``width`` (the pane's) is given. Every value of the record is
    :func:`printable` (the record is data from the store)."""
    orig, pert = word_diff(ex.get("original") or "", ex.get("perturbed"))
    out = Text()
    out.append(printable(f"example {ex.get('index')}  "), style="bold")
    out.append(printable(ex.get("result_type")), style={
        "successful": "bold green", "failed": "bold red"}.get(ex.get("result_type"),
                                                               "bold yellow"))
    if ex.get("skip_reason"):
        out.append(printable(f" ({ex['skip_reason']})"))
    out.append("\n\noriginal   ", style="bold")
    out.append_text(hang(highlighted(orig, "bold reverse red"), width))
    out.append("\nvulnerable ", style="bold")
    out.append_text(hang(highlighted(pert, "bold reverse green"), width) if ex.get("perturbed")
                    else Text("—", style="dim"))
    if ex.get("patched"):
        _, patched = word_diff(ex.get("perturbed") or "", ex["patched"])
        out.append("\n⊕ patch    ", style="bold")
        out.append_text(hang(highlighted(patched, "bold reverse magenta"), width))
    patch = ex.get("patch")
    out.append("\n\npatch      ", style="bold")
    out.append(printable(f"{patch[0]} → {patch[1]}" if patch else "none"))
    out.append("\nlabel      " + printable(ex.get("ground_truth")))
    prediction = Text(printable(
        f"{fmt(ex.get('original_output'))} {_proba(ex.get('original_proba'))}  →  "
        f"{fmt(ex.get('perturbed_output'))} {_proba(ex.get('perturbed_proba'))}"))
    if ex.get("patched_output") is not None:
        prediction.append(printable(f"  ⊕ p: {fmt(ex.get('patched_output'))} "
                                    f"{_proba(ex.get('patched_proba'))}"))
    out.append("\nprediction ")
    out.append_text(hang(prediction, width))
    out.append("\n" + printable(f"ℓ0 {fmt(ex.get('l0'))} · queries {fmt(ex.get('queries'))} · "
                                f"{fmt(ex.get('seconds'), 2)} s · source {ex.get('source')}"))
    return out


class ExampleLoaded(Loaded):
    """One example's full record, read in a worker."""


class ExampleDetail(Static):
    """The selected example. Its content is the unwrapped record (what tests and copies read);
    it is drawn with a hanging indent for the pane's width, re-wrapped when resized."""

    example: dict | None = None

    def show_example(self, ex: dict | None) -> None:
        self.example = ex
        self.update(render_example(ex) if ex else "no record")

    def render(self):  # noqa: ANN201 - a Rich renderable, as Static.render
        if self.example:
            return render_example(self.example, self.content_region.width or None)
        return super().render()

    def get_content_height(self, container, viewport, width: int) -> int:  # noqa: ANN001
        if self.example and width > 0:  # lines the hanging-indented text takes, wraps included
            text = render_example(self.example, width)
            return len(text.wrap(Console(width=width, color_system=None), width))
        return super().get_content_height(container, viewport, width)

    def on_resize(self, event: events.Resize) -> None:
        if self.example:
            self.refresh(layout=True)


class AttackScreen(RunScreen):
    BINDINGS = [
        Binding("f", "cycle_filter", "Filter"),
        Binding("s", "filter('successful')", "Succeeded", show=False),
        Binding("x", "filter('failed')", "Failed", show=False),
        Binding("k", "filter('skipped')", "Skipped", show=False),
        Binding("a", "filter('all')", "All", show=False),
    ]

    def __init__(self, path) -> None:
        super().__init__(path)
        self.filter = "all"

    def body(self) -> ComposeResult:
        with Horizontal(id="split"):
            yield HeatTable(cursor_type="row", id="examples")
            with VerticalScroll(id="detail-box"):
                yield ExampleDetail("select an example", id="detail")

    def load(self) -> AttackView:
        return load_attack(self.path)

    def show(self, view: AttackView) -> None:
        self._status()
        self.query_one("#examples", HeatTable).show(view.filtered(FILTERS[self.filter]))

    def _status(self) -> None:
        s = self.view.summary
        c = s.get("counts") or {}
        parts = [f"{s.get('recipe', '?')}",
                 f"success {fmt(s.get('success_rate'))}",
                 f"ℓ0 {fmt(s.get('mean_l0'), 2)}",
                 f"queries/ex {fmt(s.get('queries_per_example'), 1)}",
                 " ".join(f"{k} {c.get(k, 0)}" for k in ("successful", "failed", "skipped")),
                 f"filter: {self.filter} [f]"]
        if s.get("in_progress"):
            parts.append("in progress")
        self.set_status(" · ".join(parts))

    @on(DataTable.RowHighlighted, "#examples")
    def _row(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value:
            self._example(event.row_key.value)

    @work(thread=True, exclusive=True, group="example")
    def _example(self, key: str) -> None:
        try:
            self.post_message(ExampleLoaded(load_example(self.path, key)))
        except Exception as exc:  # noqa: BLE001
            self.post_message(ExampleLoaded(error=str(exc)))

    def on_example_loaded(self, message: ExampleLoaded) -> None:
        message.stop()
        detail = self.query_one("#detail", ExampleDetail)
        if message.error:
            detail.example = None
            detail.update(plain(message.error, lines=True))
        else:
            detail.show_example(message.view)

    def action_cycle_filter(self) -> None:
        names = list(FILTERS)
        self.action_filter(names[(names.index(self.filter) + 1) % len(names)])

    def action_filter(self, name: str) -> None:
        self.filter = name
        if self.view is not None:
            self.show(self.view)

    def exportables(self):
        if self.view is None:
            return {}
        return {f"examples ({self.filter})": self.query_one("#examples", HeatTable).sorted_table()}
