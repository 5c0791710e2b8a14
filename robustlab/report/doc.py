"""A report as plain blocks, and its two renderers: self-contained HTML and CommonMark.

Why blocks: the section builders (:mod:`robustlab.report.sections`) decide *what* a report says
once; the renderers decide how it is written, and they are the only places text meets markup.
Everything read from a run directory may be hostile (a perturbation named ``<script>``, a
command line with ``|`` or ``*``, an example text holding terminal escape sequences), so every
string goes through :func:`robustlab.textfmt.printable` (control characters shown as ``\x1b``:
a report printed with ``cat`` sends none to the terminal) and then :func:`html.escape` (HTML) or
:func:`md_escape` (CommonMark backslash escapes for every ASCII punctuation character that could
start markup); no renderer ever inserts unescaped run-directory text. The HTML needs no network
and no JavaScript: CSS is inline, figures are PNG ``data:`` URIs, and ``prefers-color-scheme``
switches between a light and a dark palette (figures sit on white cards in both).
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from robustlab.textfmt import printable

#: a table cell: text, or segments (text, style) with style "", "changed" or "patch"
Segments = list[tuple[str, str]]
CellValue = str | Segments


@dataclass
class Heading:
    text: str
    level: int = 2
    anchor: str | None = None


@dataclass
class Para:
    text: str
    kind: str = "p"  # p | note | warning | incomplete


@dataclass
class Code:
    text: str


@dataclass
class Table:
    columns: list[str]
    rows: list[list[CellValue]]
    caption: str = ""
    marks: dict[tuple[int, int], str] = field(default_factory=dict)  # (row, col) -> best|second
    numeric: bool = True  # right-align columns after the first


@dataclass
class Figure:
    png: bytes
    alt: str
    caption: str = ""
    name: str = "figure.png"


@dataclass
class Columns:
    """Blocks of several runs truly side by side: one column per run in HTML (a flex row that
    wraps to one column below ~900 px), one after the other in Markdown (which has no layout)."""
    columns: list[list[Any]]
    labels: list[str] = field(default_factory=list)


Block = Heading | Para | Code | Table | Figure | Columns


@dataclass
class Document:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, *blocks: Block) -> None:
        self.blocks.extend(blocks)


# ---- HTML --------------------------------------------------------------------------------------

CSS = """
:root { color-scheme: light dark; --fg: #1b1f23; --bg: #ffffff; --muted: #57606a;
  --rule: #d0d7de; --head: #f3f4f6; --warn-bg: #fff4e5; --warn-fg: #7a4100;
  --inc-bg: #ffe3e3; --inc-fg: #8b0000; --mark: #fff3a3; --patch: #cfe8ff; --link: #0550ae; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3; --rule: #30363d; --head: #161b22;
    --warn-bg: #3b2300; --warn-fg: #ffd8a8; --inc-bg: #4a0d0d; --inc-fg: #ffc9c9;
    --mark: #6b5900; --patch: #0b3b66; --link: #79c0ff; } }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg);
  background: var(--bg); max-width: 72rem; margin: 2rem auto; padding: 0 1rem; }
h1, h2, h3 { line-height: 1.25; } h2 { border-bottom: 1px solid var(--rule); padding-bottom: .2em; }
a { color: var(--link); }
table { border-collapse: collapse; margin: .5rem 0 1.2rem; font-size: 13px; max-width: 100%; }
.scroll { max-width: 100%; overflow-x: auto; }
caption { caption-side: top; text-align: left; color: var(--muted); padding-bottom: .3rem; }
th, td { border: 1px solid var(--rule); padding: .25rem .5rem; vertical-align: top;
  overflow-wrap: break-word; }
td.long { overflow-wrap: anywhere; min-width: 12rem; max-width: 36rem; }
th[title] { text-decoration: underline dotted; cursor: help; }
th { background: var(--head); text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.best { font-weight: 700; } td.second { text-decoration: underline; }
pre { background: var(--head); padding: .6rem; overflow-x: auto; white-space: pre-wrap;
  word-break: break-all; font-size: 12px; }
.note { color: var(--muted); }
.headline { font-weight: 600; font-size: 1.05rem; }
.warning, .incomplete { padding: .5rem .8rem; border-radius: 4px; }
.warning { background: var(--warn-bg); color: var(--warn-fg); }
.incomplete { background: var(--inc-bg); color: var(--inc-fg); font-weight: 700; }
figure { margin: 1rem 0; } figure img { max-width: 100%; height: auto; background: #fff;
  padding: 4px; border-radius: 4px; } figcaption { color: var(--muted); font-size: 13px; }
mark.changed { background: var(--mark); color: inherit; font-weight: 600; }
mark.patch { background: var(--patch); color: inherit; font-style: italic; }
.side { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-start; }
.side > .col { flex: 1 1 430px; min-width: 0; max-width: 100%; }
.side > .col > h4:first-child { margin-top: .3rem; }
"""


def _h(text: Any) -> str:
    return html.escape(printable(text, lines=True), quote=True)


def _cell_html(v: CellValue) -> str:
    if isinstance(v, str):
        return _h(v)
    return "".join(_h(t) if not style else f'<mark class="{_h(style)}">{_h(t)}</mark>'
                   for t, style in v)


def to_html(doc: Document) -> str:
    """The whole document as one self-contained HTML5 page."""
    out = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           '<meta name="color-scheme" content="light dark">',
           f"<title>{_h(doc.title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
           f"<h1>{_h(doc.title)}</h1>"]
    out += _blocks_html(doc.blocks)
    out += ["</body>", "</html>", ""]
    return "\n".join(out)


def _blocks_html(blocks: Sequence[Block]) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            level = min(max(b.level, 2), 4)
            anchor = f' id="{_h(b.anchor)}"' if b.anchor else ""
            out.append(f"<h{level}{anchor}>{_h(b.text)}</h{level}>")
        elif isinstance(b, Para):
            cls = "" if b.kind == "p" else f' class="{_h(b.kind)}"'
            out.append(f"<p{cls}>{_h(b.text)}</p>")
        elif isinstance(b, Code):
            out.append(f"<pre><code>{_h(b.text)}</code></pre>")
        elif isinstance(b, Table):
            out.append(_table_html(b))
        elif isinstance(b, Figure):
            data = base64.b64encode(b.png).decode("ascii")
            out.append(f'<figure><img src="data:image/png;base64,{data}" alt="{_h(b.alt)}">'
                       + (f"<figcaption>{_h(b.caption)}</figcaption>" if b.caption else "")
                       + "</figure>")
        elif isinstance(b, Columns):
            out.append('<div class="side">')
            for i, col in enumerate(b.columns):
                out.append('<div class="col">')
                if i < len(b.labels):
                    out.append(f"<h4>{_h(b.labels[i])}</h4>")
                out += _blocks_html(col)
                out.append("</div>")
            out.append("</div>")
    return out


_NUMBER = re.compile(r"^(?:[+\-−]?\d|–$)")
_LONG_TOKEN = re.compile(r"\S{28,}")
#: a column header longer than this is shown shortened, the whole text in its ``title``
HEADER_MAX = 36


def numeric_columns(t: Table, strict: bool = False) -> list[bool]:
    """Which columns hold numbers ('–' counts as a missing number): these, and only these,
    are right-aligned. HTML aligns a cell that looks numeric in a column most of whose cells
    are numbers (``strict=False``: a "recipe" row in a column of rates); Markdown aligns whole
    columns, so there one text cell keeps the column left-aligned (``strict=True``)."""
    out = []
    for j in range(len(t.columns)):
        vals = [r[j] for r in t.rows if j < len(r)]
        filled = [v for v in vals if not isinstance(v, str) or v.strip() not in ("", "–")]
        nums = [v for v in filled if isinstance(v, str) and _NUMBER.match(v.strip())]
        ok = bool(nums) and (len(nums) == len(filled) if strict else 2 * len(nums) >= len(filled))
        out.append(t.numeric and j > 0 and ok)
    return out


def short_header(text: str, limit: int = HEADER_MAX) -> str:
    """A header cut to ``limit`` characters with an ellipsis (the renderer keeps the whole
    text in a ``title``): a model id of 200 characters must not widen a column of numbers."""
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _th(c: str) -> str:
    short = short_header(c)
    if short == c:
        return f"<th>{_h(c)}</th>"
    return f'<th title="{_h(c)}">{_h(short)}</th>'


def _table_html(t: Table) -> str:
    rows = ['<div class="scroll"><table>']
    if t.caption:
        rows.append(f"<caption>{_h(t.caption)}</caption>")
    rows.append("<thead><tr>" + "".join(_th(c) for c in t.columns) + "</tr></thead>")
    rows.append("<tbody>")
    numeric = numeric_columns(t)
    for i, row in enumerate(t.rows):
        cells = []
        for j, v in enumerate(row):
            cls = []
            if j < len(numeric) and numeric[j] and isinstance(v, str) and _NUMBER.match(v):
                cls.append("num")
            if (i, j) in t.marks:
                cls.append(t.marks[(i, j)])
            if isinstance(v, str) and _LONG_TOKEN.search(v):
                cls.append("long")  # a path or signature: may break anywhere, never widen
            attr = f' class="{" ".join(cls)}"' if cls else ""
            cells.append(f"<td{attr}>{_cell_html(v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    rows += ["</tbody>", "</table></div>"]
    return "\n".join(rows)


# ---- CommonMark ----------------------------------------------------------------------------------

#: the characters that open inline markup anywhere: code, emphasis, links and images, raw HTML
#: and autolinks, table cell boundaries, strikethrough, entities, hard-break backslashes
_MD_INLINE = re.compile(r"([\\`*_\[\]<>|~&!{}])")
#: what opens a block when it starts a line: headings, lists, quotes, rules, setext underlines
_MD_BLOCK_START = re.compile(r"^(\s*)(>|[#+\-=*_](?=[\s#+\-=*_]|$)|\d{1,9}(?=[.)](?:\s|$)))")


def md_escape(text: Any) -> str:
    """Backslash-escape (CommonMark §2.4) every character that could open inline markup, and a
    block marker at the start, so text from a run directory can never open a link, emphasis,
    raw HTML, a table cell boundary, an entity or a heading; newlines become spaces (a table row
    is one line), and control characters are :func:`printable` escapes (``\\x1b`` shown as
    text). Digits and dots stay readable ("0.440", not "0\\.440")."""
    s = _MD_INLINE.sub(r"\\\1", printable(re.sub(r"[\r\n\t]+", " ", str(text))))
    m = _MD_BLOCK_START.match(s)
    if m:
        marker = m.group(2)
        if marker[0].isdigit():  # "1." / "1)" would start an ordered list: escape the dot
            end = m.end(2)
            return s[:end] + "\\" + s[end:]
        return s[:m.start(2)] + "\\" + s[m.start(2):]
    return s


def _cell_md(v: CellValue, mark: str | None = None) -> str:
    if isinstance(v, str):
        s = md_escape(v) if v else " "
    else:
        s = "".join(md_escape(t) if not style or not t.strip() else
                    (f"**{md_escape(t)}**" if style == "changed" else f"*{md_escape(t)}*")
                    for t, style in v)
    if mark == "best" and s.strip():
        return f"**{s}**"
    if mark == "second" and s.strip():
        return f"<u>{s}</u>"
    return s


def to_markdown(doc: Document, figure_dir: str | None = None) -> str:
    """The document as CommonMark with GFM pipe tables; figures are linked as
    ``figure_dir/name`` (written beside the file) or omitted when ``figure_dir`` is None."""
    out = [f"# {md_escape(doc.title)}", ""]
    out += _blocks_md(doc.blocks, figure_dir)
    return "\n".join(out).rstrip() + "\n"


def _blocks_md(blocks: Sequence[Block], figure_dir: str | None) -> list[str]:
    out: list[str] = []
    for b in blocks:
        if isinstance(b, Heading):
            out += ["#" * min(max(b.level, 2), 4) + " " + md_escape(b.text), ""]
        elif isinstance(b, Para):
            prefix = {"warning": "> **Warning:** ", "incomplete": "> **INCOMPLETE:** ",
                      "note": "> "}.get(b.kind, "")
            out += [prefix + md_escape(b.text), ""]
        elif isinstance(b, Code):
            code = printable(b.text, lines=True)
            fence = "~~~~" if "```" in code or "~~~" in code else "```"
            while fence in code:
                fence += "~"
            out += [fence, code, fence, ""]
        elif isinstance(b, Table):
            out += _table_md(b)
        elif isinstance(b, Figure) and figure_dir is not None:
            # a file name may hold a run directory's name: percent-encoded, it stays one link
            out += [f"![{md_escape(b.alt)}]({quote(f'{figure_dir}/{b.name}')})", ""]
            if b.caption:
                out += [f"*{md_escape(b.caption)}*", ""]
        elif isinstance(b, Columns):
            for i, col in enumerate(b.columns):
                if i < len(b.labels):
                    out += [f"#### {md_escape(b.labels[i])}", ""]
                out += _blocks_md(col, figure_dir)
    return out


def _table_md(t: Table) -> list[str]:
    lines = [f"*{md_escape(t.caption)}*", ""] if t.caption else []
    lines.append("| " + " | ".join(md_escape(c) for c in t.columns) + " |")
    numeric = numeric_columns(t, strict=True)
    lines.append("|" + "|".join("---:" if numeric[j] else ":---"
                                for j in range(len(t.columns))) + "|")
    for i, row in enumerate(t.rows):
        lines.append("| " + " | ".join(_cell_md(v, t.marks.get((i, j)))
                                       for j, v in enumerate(row)) + " |")
    return [*lines, ""]


def figures(doc: Document) -> Sequence[Figure]:
    """Every figure of the document, those inside side-by-side columns too."""
    def walk(blocks: Sequence[Any]) -> list[Figure]:
        out: list[Figure] = []
        for b in blocks:
            if isinstance(b, Figure):
                out.append(b)
            elif isinstance(b, Columns):
                for col in b.columns:
                    out += walk(col)
        return out

    return walk(doc.blocks)
