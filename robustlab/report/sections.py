"""The building blocks of every report section: provenance, inputs, dates, figures, side-by-side
columns, and the generic section of a kind that declares none.

Each study kind's section lives in its own package (``robustlab.studies.<kind>``, declared by its
:class:`~robustlab.studies.kind.StudyKind`) and is made of these blocks and those of
:mod:`robustlab.report.doc`. Numbers come from ``summary.json`` as the study wrote it (never
recomputed), formatted with a fixed number of decimals, so a reader can check any cell against
the file.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

from robustlab import plots
from robustlab.report.doc import Code, Columns, Figure, Heading, Para, Table
from robustlab.report.load import RunData
from robustlab.runs import inputs as run_inputs

Blocks = list[Any]
#: figure width (inches) in a side-by-side column: two columns share the ~1150 px page
HALF_WIDTH = 5.0


def utc(ts: float | None) -> str:
    return "–" if not ts else time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))


def duration(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "–"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h {m:02d}m {sec:02d}s" if h else f"{m}m {sec:02d}s" if m else f"{sec}s") + \
        f" ({seconds:.1f} s)"


def png(fig: Any, alt: str, caption: str, name: str) -> Figure:
    return Figure(plots.png_bytes(fig), alt, caption, name)


# ---- every report: the run's provenance ----------------------------------------------------------


def status_line(run: RunData) -> Para:
    if run.complete:
        return Para(f"{run.path.name}: complete (every cell finished; summary.json complete).",
                    "note")
    return Para(f"{run.path.name} is INCOMPLETE and its figures are not final: "
                f"{run.incomplete_reason}.", "incomplete")


def provenance(run: RunData) -> Blocks:
    """Command line, configuration, signature, versions, seeds, dates, wall time, status."""
    s = run.summary or {}
    total = sum(run.counts.values())
    seeds = run.config.get("seeds", run.config.get("seed"))
    wall = s.get("seconds")
    wall_text = duration(wall) if isinstance(wall, (int, float)) else (
        duration(run.updated - run.created) + " (store timestamps)"
        if run.updated and run.created else "–")
    rows = [
        ["directory", str(run.path)], ["kind", run.kind], ["name", run.name],
        ["status", f"{run.status} ({'complete' if run.complete else 'INCOMPLETE'})"],
        ["cells", f"{run.counts.get('done', 0)} done of {total}"
         + "".join(f", {run.counts[k]} {k}" for k in ("running", "pending", "failed")
                   if run.counts.get(k))],
        ["signature", str(s.get("signature") or "–")],
        ["cell signatures", "; ".join(f"{sig} ({n} cells)" for sig, n in
                                      list(run.signatures.items())[:5])
         + (f"; … {len(run.signatures) - 5} more" if len(run.signatures) > 5 else "") or "–"],
        ["seeds", "–" if seeds is None else json.dumps(seeds)],
        ["started", utc(run.created)], ["last update", utc(run.updated)],
        ["wall time", wall_text],
        ["versions", ", ".join(f"{k} {v}" for k, v in sorted(run.versions.items())) or "–"],
    ]
    if run.error:
        rows.append(["error", run.error])
    out: Blocks = [Heading(f"Run {run.path.name}", 3), status_line(run),
                   Table(["field", "value"], rows, numeric=False)]
    if run.failed:
        frows = [[k, v] for k, v in list(run.failed.items())[:10]]
        out.append(Table(["failed cell", "last error line"], frows,
                         f"{len(run.failed)} failed cells (first 10)", numeric=False))
    out += inputs_blocks(run.config)
    out += [Para("Command line (reproduces and resumes the run):", "note"),
            Code(run.command or "(not recorded)"),
            Para("Configuration:", "note"),
            Code(compact_json(run.config))]
    return out


def compact_json(value: Any, indent: int = 2, width: int = 96, _level: int = 0) -> str:
    """JSON laid out for reading: an object one key per line, but a list or object that fits
    on one line stays on it (``"pairs": [["he", "she"], ["his", "her"]]``, not one token per
    line). Still valid JSON, keys sorted, so it can be pasted back."""
    flat = json.dumps(value, sort_keys=True, ensure_ascii=False)
    pad = " " * (indent * (_level + 1))
    if not isinstance(value, (dict, list)) or len(flat) + len(pad) <= width or not value:
        return flat
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) or len(json.dumps(v)) <= 40 for v in value):
            # scalars or short items (word pairs): fill lines
            lines, line = [], ""
            for v in value:
                item = json.dumps(v, ensure_ascii=False) + ","
                if line and len(pad) + len(line) + len(item) > width:
                    lines.append(line.rstrip())
                    line = ""
                line += item + " "
            lines.append(line.rstrip().rstrip(","))
            body = "\n".join(pad + x for x in lines)
        else:
            body = ",\n".join(pad + compact_json(v, indent, width, _level + 1) for v in value)
        return "[\n" + body + "\n" + " " * (indent * _level) + "]"
    body = ",\n".join(f"{pad}{json.dumps(str(k), ensure_ascii=False)}: "
                      + compact_json(value[k], indent, width, _level + 1) for k in sorted(value))
    return "{\n" + body + "\n" + " " * (indent * _level) + "}"


NO_INPUTS = "Inputs: not recorded (run made before robustlab recorded its inputs)."


def _size_text(rec: Mapping[str, Any]) -> str:
    """Human size with the exact byte count: the bytes are what a reader compares."""
    size = rec.get("size")
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        return "–" if size is None else str(size)
    return f"{size} B" if size < 1024 else f"{run_inputs.human_size(size)} ({size} B)"


def inputs_blocks(config: Mapping[str, Any]) -> Blocks:
    """The files and names the run read (``config["inputs"]``), one row each, so a reader can
    check a result against the exact data, model and tables behind it. Values are shown as
    stored (the renderers escape them); a run made before inputs were recorded says so."""
    recorded = config.get(run_inputs.KEY)
    if not isinstance(recorded, Mapping):
        return [Para(NO_INPUTS, "note")]
    rows: list[list[Any]] = []
    for role, rec in recorded.items():
        rec = rec if isinstance(rec, Mapping) else {"name": rec}
        where = rec.get("path", rec.get("name"))
        sha = rec.get("sha256")
        files = rec.get("files")
        rows.append([run_inputs.role_label(str(role)), "–" if where is None else str(where),
                     str(rec.get("origin") or "–"), _size_text(rec),
                     "–" if sha is None else str(sha)[:12], "–" if files is None else str(files)])
    if not rows:
        return [Para("Inputs: none recorded (the run named no input files).", "note")]
    return [Table(["input", "path or name", "origin", "size", "sha256", "files"], rows,
                  "Inputs the run read (sha256: first 12 hex digits; a directory's is taken "
                  "over its files' paths, sizes and checksums)", numeric=False)]


def side_by_side(parts: Sequence[tuple[RunData, Blocks]]) -> Blocks:
    """One run's blocks as they are; several runs' in columns side by side (labelled)."""
    parts = [(run, blocks) for run, blocks in parts if blocks]
    if not parts:
        return []
    if len(parts) == 1:
        return list(parts[0][1])
    return [Columns([list(b) for _, b in parts], [run.path.name for run, _ in parts])]


def pv(c: Mapping[str, Any]) -> str:
    p = c.get("p_value")
    return "–" if not isinstance(p, (int, float)) else f"{p:.3g}"


# ---- anything else -------------------------------------------------------------------------------


def generic_section(runs: Sequence[RunData]) -> Blocks:
    out: Blocks = []
    for run in runs:
        s = run.summary or {}
        rows = [[k, json.dumps(v, ensure_ascii=False)[:200]] for k, v in s.items()
                if k not in ("config", "versions", "files", "signature")]
        out.append(Table(["summary field", "value"], rows, f"{run.path.name}: summary.json",
                         numeric=False))
    return out
