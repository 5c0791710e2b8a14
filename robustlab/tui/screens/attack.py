"""Attack results (SO-Beam, SO-Enum, random): filterable example list and an example browser."""

from __future__ import annotations

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Static

from robustlab.textfmt import printable
from robustlab.tui.messages import Loaded
from robustlab.tui.plain import plain
from robustlab.tui.results import AttackView, load_attack, load_example, word_diff
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


def render_example(ex: dict) -> Text:
    """Original, vulnerable x̃ and patched x̃ ⊕ p (changed words highlighted), the patch words,
    every prediction with its probabilities, queries and time. Every value of the record is
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
    out.append_text(highlighted(orig, "bold reverse red"))
    out.append("\nvulnerable ", style="bold")
    out.append_text(highlighted(pert, "bold reverse green") if ex.get("perturbed")
                    else Text("—", style="dim"))
    if ex.get("patched"):
        _, patched = word_diff(ex.get("perturbed") or "", ex["patched"])
        out.append("\n⊕ patch    ", style="bold")
        out.append_text(highlighted(patched, "bold reverse magenta"))
    patch = ex.get("patch")
    out.append("\n\npatch      ", style="bold")
    out.append(printable(f"{patch[0]} → {patch[1]}" if patch else "none"))
    out.append("\nlabel      " + printable(ex.get("ground_truth")))
    out.append("\nprediction " + printable(
        f"{fmt(ex.get('original_output'))} {_proba(ex.get('original_proba'))}  →  "
        f"{fmt(ex.get('perturbed_output'))} {_proba(ex.get('perturbed_proba'))}"))
    if ex.get("patched_output") is not None:
        out.append(printable(f"  ⊕ p: {fmt(ex.get('patched_output'))} "
                             f"{_proba(ex.get('patched_proba'))}"))
    out.append("\n" + printable(f"ℓ0 {fmt(ex.get('l0'))} · queries {fmt(ex.get('queries'))} · "
                                f"{fmt(ex.get('seconds'), 2)} s · source {ex.get('source')}"))
    return out


class ExampleLoaded(Loaded):
    """One example's full record, read in a worker."""


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
                yield Static("select an example", id="detail")

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
        detail = self.query_one("#detail", Static)
        detail.update(plain(message.error, lines=True) if message.error else
                      render_example(message.view) if message.view else "no record")

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
