"""Reading a run directory for a report: the run row, cell counts, summary.json, cell results.

Only data is read (SQLite rows and JSON); nothing from the directory is executed. A run whose
``summary.json`` is missing (still running, died) or says ``complete: false``, or whose store
status is not ``done``, is *incomplete*, and every report says so on its first lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from robustlab.errors import InputError


@dataclass
class RunData:
    path: Path
    kind: str  # as stored (learnability, robustness, cent, attack, bias, cross-domain, …)
    name: str
    status: str
    config: dict[str, Any]
    command: str | None
    versions: dict[str, Any]
    created: float | None
    updated: float | None
    error: str | None
    counts: dict[str, int]
    summary: dict[str, Any] | None
    results: list[dict[str, Any]] = field(default_factory=list)
    records: dict[str, list[Any]] = field(default_factory=dict)  # cell key -> records (bias)
    failed: dict[str, str] = field(default_factory=dict)  # cell key -> last error line
    signatures: dict[str, int] = field(default_factory=dict)  # cell signature -> done cells
    #: cell key -> what failed, for done cells left out because their stored data is damaged
    damaged: dict[str, str] = field(default_factory=dict)
    #: one line naming them (count and first keys), None when there are none
    damaged_line: str | None = None

    @property
    def complete(self) -> bool:
        return bool(self.summary and self.summary.get("complete")) and self.status == "done" \
            and self.counts.get("done", 0) == sum(self.counts.values()) and not self.damaged

    @property
    def incomplete_reason(self) -> str | None:
        if self.complete:
            return None
        total = sum(self.counts.values())
        why = [f"run status '{self.status}'", f"{self.counts.get('done', 0)} of {total} cells done"]
        if self.counts.get("failed"):
            why.append(f"{self.counts['failed']} failed")
        if self.damaged:
            why.append(f"{len(self.damaged)} left out (damaged stored data: "
                       f"{', '.join(list(self.damaged)[:3])}{' …' if len(self.damaged) > 3 else ''})")
        if self.summary is None:
            why.append("no summary.json (the run has not finished)")
        elif not self.summary.get("complete"):
            why.append("summary.json says complete: false")
        return "; ".join(why)


def load_run(path: str | Path, *, records_for: tuple[str, ...] = ()) -> RunData:
    """Read one run directory; :class:`InputError` (one clear line) when it is not one.
    Per-cell records (they can be large) are read only for the kinds in ``records_for`` (the
    report: those whose section declares it reads them, ``StudyKind.records``)."""
    from robustlab.runs.store import DamagedCell, RunStore, StoreError, is_run_dir

    p = Path(path)
    if not p.is_dir():
        raise InputError(f"{p}: no such run directory")
    if not is_run_dir(p):
        raise InputError(f"{p}: not a run directory (no store.sqlite); pass a study's --out")
    try:
        with RunStore(p, readonly=True) as store:
            info = store.run_info()
            if info is None:
                raise InputError(f"{p}: the run store is empty (no run row)")
            counts = store.counts()
            cells = store.cells()  # one read: results, failures and signatures
            results = [c.result for c in cells if c.status == "done" and c.result is not None]
            failed = {}
            signatures: dict[str, int] = {}
            for c in cells:
                if c.status == "failed":
                    lines = (c.error or "failed").strip().splitlines()
                    failed[c.key] = lines[-1] if lines else "failed"
                if c.status == "done" and c.signature:
                    signatures[c.signature] = signatures.get(c.signature, 0) + 1
            records: dict[str, list[Any]] = {}
            if info.kind in records_for:
                for c in cells:
                    if c.status == "done":
                        try:
                            records[c.key] = store.records(c.key)
                        except DamagedCell:  # noted in store.damaged: the cell is left out
                            pass
                results = [c.result for c in cells if c.status == "done"
                           and c.result is not None and c.key not in store.damaged]
            damaged, damaged_line = dict(store.damaged), store.skipped_line()
    except StoreError as exc:
        raise InputError(str(exc)) from None
    except Exception as exc:  # sqlite3.DatabaseError etc.: a corrupt store is bad input
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{p}: cannot read the run store ({exc})") from None
    summary = None
    sp = p / "summary.json"
    if sp.is_file():
        try:
            summary = json.loads(sp.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise InputError(f"{sp}: not valid JSON ({exc})") from None
        if not isinstance(summary, dict):
            raise InputError(f"{sp}: expected a JSON object")
    return RunData(path=p, kind=info.kind, name=info.name, status=info.status,
                   config=info.config or {}, command=info.command,
                   versions=info.versions or {}, created=info.created, updated=info.updated,
                   error=info.error, counts=counts, summary=summary, results=results,
                   records=records, failed=failed, signatures=signatures, damaged=damaged,
                   damaged_line=damaged_line)
