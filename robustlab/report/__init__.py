"""``robustlab report``: one document a researcher can send to colleagues.

:func:`build_document` reads run directories (:mod:`robustlab.report.load`), lays each kind out
as the papers do (the section each study package declares, built from
:mod:`robustlab.report.sections`; a kind without one gets the summary's fields) and :func:`write_report` renders it as one
self-contained HTML file or as CommonMark (:mod:`robustlab.report.doc`). Several run directories
of one kind are compared side by side; every run's provenance and completeness are stated.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from robustlab.errors import InputError
from robustlab.report.doc import Document, Heading, Para, figures, to_html, to_markdown
from robustlab.report.load import RunData, load_run

FORMATS = ("html", "md")


def build_document(run_dirs: Sequence[str | os.PathLike[str]], *,
                   title: str | None = None,
                   warn: Callable[[str], None] | None = None) -> Document:
    """The report of ``run_dirs`` as blocks (validates every directory before anything else);
    ``warn`` gets a line for each run whose damaged cells were left out (the report says so
    too)."""
    from robustlab.report import sections
    from robustlab.studies import find, kinds
    from robustlab.version import __version__

    if not run_dirs:
        raise InputError("give at least one run directory")
    records_for = tuple(n for k in kinds().values() if k.records for n in (k.name, *k.aliases))
    runs = [load_run(d, records_for=records_for) for d in run_dirs]
    for r in runs:
        if r.damaged_line and warn is not None:
            warn(r.damaged_line)
    groups: dict[str, list[RunData]] = {}
    for r in runs:  # runs of one kind (or of its aliases: robustness, cent) side by side
        kind = find(r.kind)
        groups.setdefault(kind.name if kind else r.kind, []).append(r)
    names = ", ".join(r.path.name for r in runs)
    doc = Document(title or f"robustlab report: {names}")
    doc.add(Para(f"Generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())} by "
                 f"robustlab {__version__} from {len(runs)} run director"
                 f"{'y' if len(runs) == 1 else 'ies'}.", "note"))
    for r in runs:
        if not r.complete:
            doc.add(Para(f"{r.path.name} is INCOMPLETE: {r.incomplete_reason}. Its numbers are "
                         "not final.", "incomplete"))
    for family, group in groups.items():
        kind = find(family)
        doc.add(Heading(kind.title if kind and kind.title else f"{family} runs", 2,
                        anchor=family))
        if len(group) > 1:
            doc.add(Para(f"{len(group)} runs compared side by side: "
                         + ", ".join(r.path.name for r in group) + ".", "note"))
        section = kind.part("section") if kind else None
        doc.add(*(section or sections.generic_section)(group))
        doc.add(Heading("Provenance", 3))
        for r in group:
            doc.add(*sections.provenance(r))
    return doc


def render(doc: Document, fmt: str, figure_dir: str | None = None) -> str:
    if fmt == "html":
        return to_html(doc)
    if fmt == "md":
        return to_markdown(doc, figure_dir)
    raise InputError(f"--format: unknown {fmt!r}; choose from {', '.join(FORMATS)}")


def default_out(run_dirs: Sequence[str | os.PathLike[str]], fmt: str) -> Path:
    """``report.html`` / ``report.md`` inside the (first) run directory."""
    return Path(run_dirs[0]) / f"report.{fmt}"


def write_report(run_dirs: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str] | None
                 = None, fmt: str | None = None,
                 warn: Callable[[str], None] | None = None) -> Path:
    """Write the report atomically and return its path. The format follows ``fmt`` or the
    suffix of ``out`` (.md → Markdown, else HTML). Markdown's figures are PNG files in
    ``<name>_figures/`` beside it (written first, so a report that exists is complete)."""
    from robustlab.outputs import (
        atomic_dir,
        atomic_write,
        output_target,
        refuse_run_file,
        refuse_same_file,
    )
    from robustlab.runs.store import run_files

    if fmt is None:
        fmt = "md" if out is not None and Path(out).suffix.lower() in (".md", ".markdown") \
            else "html"
    if fmt not in FORMATS:
        raise InputError(f"--format: unknown {fmt!r}; choose from {', '.join(FORMATS)}")
    # --out is the user's path (links resolved; '-', a FIFO or a device written in place); the
    # default report.html is a run-directory file (a link there is refused)
    user = out is not None
    path = Path(out) if out is not None else default_out(run_dirs, fmt)
    if path.is_dir():
        raise InputError(f"--out {path}: is a directory; give a file name")
    target = output_target(path, user=user)
    refuse_same_file({"--out": path} if user else {},
                     {f"{d}: {f.name}": f for d in run_dirs for f in run_files(d)})
    if user:  # and the run files that do not exist yet
        refuse_run_file("--out", path, run_dirs)
    doc = build_document(run_dirs, warn=warn)
    fig_dir = None
    if fmt == "md" and figures(doc):
        if target.kind != "atomic":
            raise InputError(f"--out {out}: a Markdown report's figures are PNG files beside it; "
                             "give a file name, or --format html (figures inlined)")
        fig_dir = f"{target.path.stem}_figures"
        with atomic_dir(target.path.parent / fig_dir, user=user) as tmp:
            for f in figures(doc):
                (tmp / f.name).write_bytes(f.png)
    text = render(doc, fmt, fig_dir)
    atomic_write(path, lambda f: f.write(text), user=user)
    return path
