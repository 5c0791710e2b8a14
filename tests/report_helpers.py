"""Reading a rendered report back: its tables (HTML or Markdown rendered by markdown-it-py)."""

from __future__ import annotations

from html.parser import HTMLParser


class Tables(HTMLParser):
    """Every <table> of an HTML page as {caption, head, rows, marks}, cell text unescaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._classes: list[str] = []
        self._in_caption = False
        self.images: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"caption": "", "head": [], "rows": [], "marks": {}})
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._classes = (a.get("class") or "").split()
        elif tag == "img":
            self.images.append(a.get("src") or "")
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            text = "".join(self._cell).strip()
            t = self.tables[-1]
            if tag == "td":
                for c in ("best", "second"):
                    if c in self._classes:
                        t["marks"][(len(t["rows"]), len(self._row))] = c
            self._row.append(text)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            t = self.tables[-1]
            if not t["head"]:
                t["head"] = self._row
            else:
                t["rows"].append(self._row)
            self._row = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption and self.tables:
            self.tables[-1]["caption"] += data
        elif self._in_title:
            self.title += data


def parse(html_text: str) -> Tables:
    p = Tables()
    p.feed(html_text)
    return p


def table(page: Tables, caption_part: str) -> dict:
    """The first table whose caption contains ``caption_part``."""
    for t in page.tables:
        if caption_part in t["caption"]:
            return t
    raise AssertionError(f"no table captioned {caption_part!r}; have "
                         f"{[t['caption'][:40] for t in page.tables]}")


def markdown_html(md_text: str) -> str:
    """CommonMark (with GFM tables) rendered by markdown-it-py, the reference parser."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(md_text)
