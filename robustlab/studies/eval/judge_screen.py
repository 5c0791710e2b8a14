"""Paper 001's human check in the TUI (``j`` on an eval run): one drawn sample at a time,
original above perturbed with the label, judged by single keys — ``c`` consistent, ``r`` then a
digit to relabel, ``d`` drop, ``n``/``p`` next/previous, escape back. Fits 80×24.

The sample is drawn into the run's store on first open (:func:`robustlab.studies.eval.judge.
draw_into`), as ``robustlab judge RUN --sample`` does; each verdict is written by a thread
worker (the event loop never waits on SQLite) in its own transaction."""

from __future__ import annotations

from typing import Any

from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static

from robustlab.tui.plain import append, plain
from robustlab.tui.screens.base import RunScreen


class JudgeScreen(RunScreen):
    BINDINGS = [
        Binding("c", "verdict('consistent')", "Consistent"),
        Binding("r", "relabel", "Relabel"),
        Binding("d", "verdict('drop')", "Drop"),
        Binding("n", "move(1)", "Next"),
        Binding("p", "move(-1)", "Prev", show=False),
    ]

    def __init__(self, path) -> None:
        super().__init__(path)
        self.pos = 0
        self.relabelling = False
        self.saved = 0

    def body(self) -> ComposeResult:
        with Vertical(id="judge"):
            yield Static("", id="judge-head")
            yield Static("", id="judge-original", classes="detail")
            yield Static("", id="judge-perturbed", classes="detail")
            yield Static("", id="judge-help")

    def load(self) -> dict[str, Any]:  # a thread: draws the sample on first open
        from robustlab.runs.store import RunStore
        from robustlab.studies.eval.judge import draw_into, label_names_of, n_classes_of

        with RunStore(self.path) as store:
            n_classes = n_classes_of(store)
            samples = store.judgements()
            if not samples:
                draw_into(store)
                samples = store.judgements()
            names = label_names_of(store, n_classes)
        return {"samples": samples, "n_classes": n_classes, "names": names}

    def show(self, view: dict[str, Any]) -> None:
        todo = [i for i, s in enumerate(view["samples"]) if s["verdict"] is None]
        self.pos = todo[0] if todo else 0
        self._paint()

    @property
    def samples(self) -> list[dict[str, Any]]:
        return self.view["samples"] if self.view else []

    def _paint(self) -> None:
        if not self.samples:
            return
        from robustlab.studies.eval.judge import label_text, labels_help

        s = self.samples[self.pos]
        names = self.view.get("names")
        done = sum(x["verdict"] is not None for x in self.samples)
        self.set_status(f"{done} of {len(self.samples)} judged · paper 001's check: is the "
                        "perturbed text meaningful and consistent with the label?")
        verdict = s["verdict"] or "not judged"
        self.query_one("#judge-head", Static).update(plain(
            f"[{self.pos + 1}/{len(self.samples)}] {s['perturbation']} · label "
            f"{label_text(s['label'], names)} · "
            f"{verdict}"))
        self.query_one("#judge-original", Static).update(
            append(plain("original : "), s["original"]))
        self.query_one("#judge-perturbed", Static).update(
            append(plain("perturbed: "), s["perturbed"]))
        n = self.view["n_classes"]
        help_ = (f"relabel to which label? press {labels_help(n, names)} (escape: cancel)"
                 if self.relabelling else
                 f"c consistent · r<label> relabel ({labels_help(n, names)}) · d drop · "
                 "n/p next/prev")
        self.query_one("#judge-help", Static).update(plain(help_))

    def action_move(self, step: int) -> None:
        if self.samples:
            self.pos = (self.pos + int(step)) % len(self.samples)
            self.relabelling = False
            self._paint()

    def action_relabel(self) -> None:
        if self.samples:
            self.relabelling = True
            self._paint()

    def on_key(self, event: events.Key) -> None:
        if not self.relabelling:
            return
        event.stop()
        event.prevent_default()
        self.relabelling = False
        if event.character and event.character.isdigit() and \
                int(event.character) < self.view["n_classes"]:
            self.action_verdict(f"relabel:{event.character}")
        else:
            self._paint()

    def action_verdict(self, verdict: str) -> None:
        if not self.samples:
            return
        s = self.samples[self.pos]
        s["verdict"] = verdict
        self._save(s["sample"], verdict)
        todo = [i for i, x in enumerate(self.samples) if x["verdict"] is None]
        after = [i for i in todo if i > self.pos]
        self.pos = (after or todo or [self.pos])[0]
        self._paint()

    @work(thread=True, group="judge-save")
    def _save(self, sample: str, verdict: str) -> None:
        import getpass

        from robustlab.runs.store import RunStore

        try:
            from robustlab.studies.eval.judge import refresh_outputs

            with RunStore(self.path) as store:
                store.set_verdicts([(sample, verdict, getpass.getuser())])
                refresh_outputs(store)  # eval.csv/png and summary.json follow the judgements
            self.saved += 1
        except Exception as exc:  # noqa: BLE001 - shown, never lost silently
            self.app.call_from_thread(self.notify, f"not saved: {exc}", severity="error",
                                      markup=False)
