"""Messages posted by the TUI's thread workers (data flows up as messages, never by reaching
into widgets). Progress messages coalesce: a newer one replaces a pending one for the same run,
so a fast grid cannot flood the event queue."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.message import Message

from robustlab.tui.data import Progress, RunSummary


class RunsScanned(Message):
    """A fresh listing of every run (replaces a pending older listing)."""

    def __init__(self, runs: list[RunSummary]) -> None:
        super().__init__()
        self.runs = runs

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunsScanned)


class RunProgress(Message):
    """The latest progress of one run (replaces a pending one for the same run)."""

    def __init__(self, path: Path, progress: Progress) -> None:
        super().__init__()
        self.path = path
        self.progress = progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunProgress) and message.path == self.path


class Loaded(Message):
    """A results view finished loading in a worker (``error`` set when it could not)."""

    def __init__(self, view: Any = None, error: str | None = None) -> None:
        super().__init__()
        self.view = view
        self.error = error

    def can_replace(self, message: Message) -> bool:
        return type(message) is type(self)


class RunSelected(Message):
    """The user chose a run in the list."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
