"""Reading MT evaluation data: system outputs, references, per-segment domains, human scores.

Two layouts:

* **Plain files**: one segment per line (UTF-8), line-aligned across every system output and
  reference; a domain file with one label per line, or a TSV with a ``domain`` column and a
  header (like WMT's ``segments.tsv``). Systems are named ``NAME=PATH`` or by the file name
  (``…hyp.<NAME>.<lang>`` → NAME, else the file stem).
* **WMT22 General** (``../shared/data/wmt22_general``): ``<pair>/generaltest2022.<pair>.hyp.<SYS>.<tgt>``,
  ``…ref.<A|B>.<tgt>``, ``…segments.tsv`` and, for ru-en, ``human_DA/ad-sys-scores-<pair>.csv``.

Every problem is an :class:`~robustlab.errors.InputError` naming the file (and line): systems with
different segment counts, a domain file that does not match, empty hypotheses, non-UTF-8 bytes.
Files are read with :func:`robustlab.data.files.read_rows` (the one row reader).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robustlab.data.files import read_rows
from robustlab.errors import InputError

_HYP_NAME = re.compile(r"(?:^|\.)hyp\.(.+)\.[A-Za-z-]+$")
_SUFFIX_NUM = re.compile(r"\.\d+$")


@dataclass
class MTData:
    """Line-aligned systems, references and domains of one test set."""

    systems: dict[str, list[str]]
    refs: list[list[str]]
    domains: list[str]
    files: dict[str, str] = field(default_factory=dict)  # what was read, for the run config
    human: dict[str, float] | None = None

    @property
    def n_segments(self) -> int:
        return len(self.domains)

    def domain_names(self) -> list[str]:
        return list(dict.fromkeys(self.domains))


def read_segments(path: str | os.PathLike[str], *, allow_empty: bool = True,
                  what: str = "segment file") -> list[str]:
    """One segment per line (UTF-8; a bad byte is reported with its line)."""
    table = read_rows(path, fmt="text")
    lines = [r["text"] for r in table.rows]
    if not lines:
        raise InputError(f"{path}: empty {what} (expected one segment per line)")
    if not allow_empty:
        for i, ln in enumerate(lines, 1):
            if not ln.strip():
                raise InputError(
                    f"{path}: line {i}: empty hypothesis. Every line must hold a translation; "
                    "if the system really produced nothing there, pass --allow-empty")
    return lines


def system_name(path: str | os.PathLike[str]) -> str:
    """``generaltest2022.ru-en.hyp.Online-G.en`` → ``Online-G``; otherwise the file stem."""
    name = Path(path).name
    m = _HYP_NAME.search(name)
    return m.group(1) if m else Path(path).stem


def parse_system_specs(specs: Sequence[str]) -> dict[str, Path]:
    """``NAME=PATH`` or ``PATH`` items → ordered {name: path}; duplicate names are an error."""
    out: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or os.path.exists(spec):
            name, path = system_name(spec), spec
        if name in out:
            raise InputError(f"--systems: two systems are named {name!r} ({out[name]} and {path});"
                             " name them explicitly with NAME=PATH")
        out[name] = Path(path)
    if not out:
        raise InputError("--systems: give at least one system output file")
    return out


def read_domains(path: str | os.PathLike[str], n: int | None = None,
                 column: str = "domain") -> list[str]:
    """Per-segment domain labels: a TSV/CSV with a ``domain`` column, or one label per line."""
    p = Path(path)
    if p.suffix.lower() in (".tsv", ".csv"):
        table = read_rows(p, header=True)
        if column not in table.columns:
            raise InputError(f"{p}: no {column!r} column (columns: {', '.join(table.columns)}); "
                             "give a TSV/CSV with a header naming the domain column, or a plain "
                             "file with one domain label per line")
        labels = [str(v).strip() for v in table.column(column)]
        lines = table.lines
    else:
        labels = [s.strip() for s in read_segments(p, what="domain file")]
        lines = list(range(1, len(labels) + 1))
    for lab, line in zip(labels, lines, strict=True):
        if not lab:
            raise InputError(f"{p}: line {line}: empty domain label")
    if n is not None and len(labels) != n:
        raise InputError(f"{p}: {len(labels)} domain labels but the systems have {n} segments; "
                         "the domain file must have exactly one label per segment, in order")
    return labels


def load_mt(systems: Sequence[str] | dict[str, Path], refs: Sequence[str | os.PathLike[str]],
            domains: str | os.PathLike[str], *, allow_empty: bool = False) -> MTData:
    """Read plain files (see the module docstring); every count is checked against the refs."""
    specs = systems if isinstance(systems, dict) else parse_system_specs(systems)
    if not refs:
        raise InputError("--refs: give at least one reference file")
    ref_lines = [read_segments(r, what="reference file") for r in refs]
    n = len(ref_lines[0])
    for r, lines in zip(refs, ref_lines, strict=True):
        if len(lines) != n:
            raise InputError(f"{r}: {len(lines)} lines but {refs[0]} has {n}; references must be "
                             "line-aligned")
    hyps: dict[str, list[str]] = {}
    for name, path in specs.items():
        lines = read_segments(path, allow_empty=allow_empty, what="system output")
        if len(lines) != n:
            raise InputError(f"{path}: system {name!r} has {len(lines)} segments but the "
                             f"references ({refs[0]}) have {n}; all files must be line-aligned")
        hyps[name] = lines
    labels = read_domains(domains, n)
    files = {f"system:{k}": str(v) for k, v in specs.items()}
    files.update({f"ref:{i}": str(r) for i, r in enumerate(refs)})
    files["domains"] = str(domains)
    return MTData(hyps, ref_lines, labels, files)


def read_human(path: str | os.PathLike[str], column: str | None = None) -> dict[str, float]:
    """Human scores per system.

    Accepts WMT DA system files (``ad-sys-scores-*.csv``: space-separated, header
    ``RAW.SCR Z.SCR N SYS N.ALL``; the z-score is used unless ``column`` says ``RAW.SCR``; the
    ``.N`` suffix of system ids is stripped) and plain two-column ``system score`` files
    (whitespace, tab or comma separated, optional header)."""
    p = Path(path)
    rows = [r["text"] for r in read_rows(p, fmt="text").rows]
    rows = [r for r in rows if r.strip()]
    if not rows:
        raise InputError(f"{p}: empty human score file")
    head = re.split(r"[\s,]+", rows[0].strip())
    out: dict[str, float] = {}
    if "SYS" in head:
        col = column or ("Z.SCR" if "Z.SCR" in head else None)
        if col not in head:
            raise InputError(f"{p}: no column {col!r} (header: {' '.join(head)})")
        si, vi = head.index("SYS"), head.index(col)
        body = enumerate(rows[1:], 2)
        for line, row in body:
            f = row.split()
            try:
                out[_SUFFIX_NUM.sub("", f[si])] = float(f[vi])
            except (IndexError, ValueError):
                raise InputError(f"{p}: line {line}: cannot read system and {col}") from None
        return out
    start = 0
    try:
        float(head[-1])
    except ValueError:
        start = 1  # a header line
    for line, row in enumerate(rows[start:], start + 1):
        f = [x for x in re.split(r"[\t,]|\s+", row.strip()) if x]
        try:
            out[f[0]] = float(f[-1])
        except (IndexError, ValueError):
            raise InputError(f"{p}: line {line}: expected 'system score', got {row!r}") from None
    return out


def load_wmt22(root: str | os.PathLike[str], pair: str = "ru-en", refs: Sequence[str] = ("A",),
               systems: Sequence[str] | None = None, human: bool = True) -> MTData:
    """The WMT22 General layout (see the module docstring and ../shared/data/README.md)."""
    root = Path(root)
    d = root / pair if (root / pair).is_dir() else root
    if not d.is_dir():
        raise InputError(f"--wmt22-dir: {d} is not a directory (expected .../wmt22_general)")
    tgt = pair.split("-")[-1]
    prefix = f"generaltest2022.{pair}"
    found = {system_name(p): p for p in sorted(d.glob(f"{prefix}.hyp.*.{tgt}"))}
    if not found:
        raise InputError(f"{d}: no {prefix}.hyp.<SYSTEM>.{tgt} files (is --pair right?)")
    if systems:
        missing = [s for s in systems if s not in found]
        if missing:
            raise InputError(f"{d}: no output for system(s) {missing}; available: "
                             f"{', '.join(found)}")
        found = {s: found[s] for s in systems}
    ref_paths = []
    for r in refs:
        rp = d / f"{prefix}.ref.{r}.{tgt}"
        if not rp.exists():
            raise InputError(f"{rp}: no reference {r!r} for {pair}")
        ref_paths.append(rp)
    data = load_mt(found, ref_paths, d / f"{prefix}.segments.tsv")
    hp = d / "human_DA" / f"ad-sys-scores-{pair}.csv"
    if human and hp.exists():
        data.human = read_human(hp)
        data.files["human"] = str(hp)
    return data


def read_wmt_da_segments(path: str | os.PathLike[str], domains: Sequence[str],
                         column: str = "RAW.SCR") -> dict[str, tuple[list[float], list[str]]]:
    """Segment-level WMT DA (``ad-seg-scores-*.csv``: ``SYS SID RAW.SCR Z.SCR N``) as a score
    table {system: (scores, domain labels)}; ``SID`` is the 1-based line of ``domains``.

    Not every segment is judged for every system, so systems have different row counts. This is
    the paper's Figure 5 / Table 7 setting: (ε,γ)-robustness measured on human scores."""
    p = Path(path)
    rows = [r["text"] for r in read_rows(p, fmt="text").rows]
    if not rows:
        raise InputError(f"{p}: empty DA file")
    head = rows[0].split()
    for col in ("SYS", "SID", column):
        if col not in head:
            raise InputError(f"{p}: no {col!r} column (header: {' '.join(head)}); expected a "
                             "WMT ad-seg-scores file")
    si, ii, vi = head.index("SYS"), head.index("SID"), head.index(column)
    out: dict[str, tuple[list[float], list[str]]] = {}
    for line, row in enumerate(rows[1:], 2):
        f = row.split()
        if not f:
            continue
        try:
            name, sid, v = _SUFFIX_NUM.sub("", f[si]), int(f[ii]), float(f[vi])
        except (IndexError, ValueError):
            raise InputError(f"{p}: line {line}: cannot read SYS, SID and {column}") from None
        if not 1 <= sid <= len(domains):
            raise InputError(f"{p}: line {line}: segment id {sid} outside 1..{len(domains)} "
                             "(does the domain file belong to this test set?)")
        xs, ds = out.setdefault(name, ([], []))
        xs.append(v)
        ds.append(domains[sid - 1])
    return out
