"""Every report kind in a real browser (Playwright driving the system Chromium) at 1280×800.

What a reader would notice first is checked for every kind: nothing overflows the page
horizontally, every number in a table lies inside the viewport's width, long identifiers wrap
or are shortened with the whole text in a ``title``, every figure is loaded, not blank and shown
at (nearly) its own pixel size (so its ≥ 9 pt text stays ≥ 9 pt), and two runs are laid out
truly side by side (one column below ~900 px). A full-page screenshot of each report is kept
for a human to look at: under ``$ROBUSTLAB_TEST_ARTIFACTS`` when set, else the pytest tmp dir
(the path is printed).

A report kind is one entry of :data:`KINDS` (a builder of its run directories, cheap fixtures
from ``report_helpers``, nothing trained); the eval study's report joins when
``robustlab.studies.eval`` exists. Needs the PyPI package ``playwright`` (it ships its driver;
``playwright install`` is never run) and ``/usr/bin/chromium``; skipped with a reason otherwise.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import pytest
import report_helpers as rh
from tui import fixtures

from robustlab.report import write_report

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
WIDTH, HEIGHT = 1280, 800
#: a figure's text is drawn at ≥ 9 pt at DPI 110 (13.75 px); shown at ≥ 0.873 of its pixel
#: width it stays ≥ 12 CSS px = 9 pt
MIN_SCALE = 0.873

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("playwright") is None,
                       reason="Playwright is not installed (pip install -e .[dev])"),
    pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK),
                       reason=f"no Chromium at {CHROMIUM} (Debian package chromium)"),
]


def _eval_run(root: Path) -> list[Path]:
    """An eval run through the eval study's own Python API, on a toy keyword model."""
    import numpy as np

    from robustlab.studies.eval.study import evaluate

    class Toy:
        def predict_proba(self, texts: list[str]) -> np.ndarray:
            good = ("charming", "warm", "brilliant", "pleasant", "moving")
            return np.array([[0.2, 0.8] if any(w in t for w in good) else [0.7, 0.3]
                             for t in texts])

    examples = [(t, int(i % 2 == 0 or "brilliant" in t)) for i, t in enumerate(rh.SENTENCES * 3)]
    evaluate(Toy(), root / "eval", examples=examples, seeds=(0,),
             perturbations=["butter_fingers_perturbation", "shuffle_word"], progress=False,
             plots=False)
    return [root / "eval"]


#: kind -> builder of its run directories (several: a side-by-side comparison)
KINDS: dict[str, Callable[[Path], list[Path]]] = {
    "learnability-full": lambda r: [rh.learnability_run(r / "learn-full")],
    "learnability-quick": lambda r: [rh.learnability_run(r / "learn-quick", quick=True)],
    "robustness": lambda r: [rh.learnability_run(r / "robustness", kind="robustness",
                                                 learn=False)],
    "attack": lambda r: [rh.attack_run(r / "attack")],
    "bias": lambda r: [rh.bias_run(r / "bias")],
    "cross-domain-mt": lambda r: [rh.cross_domain_run(r / "xd-mt", "mt")],
    "cross-domain-clf": lambda r: [rh.cross_domain_run(r / "xd-clf", "clf")],
    "comparison": lambda r: [fixtures.learnability(r / "run-a"),
                             rh.learnability_run(r / "run-b", quick=True)],
}
if importlib.util.find_spec("robustlab.studies.eval") is not None:
    KINDS["eval"] = _eval_run

MEASURE = """() => {
  const W = window.innerWidth;
  const over = [...document.querySelectorAll('td.num')]
    .filter(e => e.getBoundingClientRect().right > W + 0.5).map(e => e.textContent);
  const wideTh = [...document.querySelectorAll('th')]
    .filter(e => e.textContent.length > 40).map(e => e.textContent);
  const imgs = [...document.images].map(img => {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0, s = 0, s2 = 0;
    for (let i = 0; i < d.length; i += 4 * 7) {
      const v = (d[i] + d[i + 1] + d[i + 2]) / 3; n++; s += v; s2 += v * v; }
    const r = img.getBoundingClientRect();
    return {complete: img.complete, natural: img.naturalWidth, shown: img.clientWidth - 8,
            right: r.right, variance: n ? s2 / n - (s / n) ** 2 : 0, alt: img.alt};
  });
  const cols = [...document.querySelectorAll('.side > .col')].map(e => {
    const r = e.getBoundingClientRect(); return {top: r.top + scrollY, left: r.left}; });
  return {scrollWidth: document.documentElement.scrollWidth, width: W, over, wideTh, imgs,
          cols, titled: [...document.querySelectorAll('th[title]')].map(e => e.title)};
}"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory) -> Path:
    root = os.environ.get("ROBUSTLAB_TEST_ARTIFACTS")
    out = Path(root) / "report-pages" if root else tmp_path_factory.mktemp("report-pages")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _open(browser, html: Path, width: int = WIDTH):
    page = browser.new_page(viewport={"width": width, "height": HEIGHT})
    page.route("http*://**", lambda route: route.abort())  # offline: nothing may be fetched
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    return page


@pytest.mark.parametrize("kind", list(KINDS))
def test_report_reads_right_at_1280px(kind, browser, artifacts, tmp_path):
    runs = KINDS[kind](tmp_path)
    html = write_report(runs, tmp_path / f"{kind}.html", "html")
    page = _open(browser, html)
    try:
        m = page.evaluate(MEASURE)
        shot = artifacts / f"report-{kind}.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot: {shot}")
    finally:
        page.close()
    assert m["scrollWidth"] <= m["width"], f"{kind}: the page is {m['scrollWidth']} px wide"
    assert not m["over"], f"{kind}: numbers right of the viewport: {m['over'][:5]}"
    assert not m["wideTh"], f"{kind}: headers not shortened: {m['wideTh']}"
    assert m["imgs"], f"{kind}: the report has no figure"
    for img in m["imgs"]:
        assert img["complete"] and img["natural"] > 0, f"{kind}: {img['alt']} not loaded"
        assert img["variance"] > 0, f"{kind}: {img['alt']} is blank"
        assert img["right"] <= m["width"], f"{kind}: {img['alt']} runs off the page"
        assert img["shown"] >= MIN_SCALE * img["natural"], (
            f"{kind}: {img['alt']} shown at {img['shown']} of its {img['natural']} px: its "
            "text would be under 9 pt")
    if len(runs) > 1:  # truly side by side: the columns share a top, one left of the other
        assert len(m["cols"]) >= 2, f"{kind}: no side-by-side columns"
        a, b = m["cols"][:2]
        assert a["top"] == b["top"] and b["left"] > a["left"]


def test_long_model_id_is_shortened_with_the_whole_text_in_a_title(browser, tmp_path):
    """A column header can never be a 150-character model id pushing every value right: long
    headers are cut, the whole text in a title; the id itself sits in a cell where it wraps."""
    from robustlab.report.doc import Document, Table, to_html

    doc = Document("t")
    doc.add(Table(["", f"run ({rh.LONG_MODEL})"], [["success rate", "0.917"]]))
    (tmp_path / "t.html").write_text(to_html(doc))
    page = _open(browser, tmp_path / "t.html")
    try:
        m = page.evaluate(MEASURE)
    finally:
        page.close()
    assert m["titled"] == [f"run ({rh.LONG_MODEL})"] and not m["over"]
    html = write_report([rh.attack_run(tmp_path / "attack")], tmp_path / "a.html", "html")
    page = _open(browser, html)
    try:
        rate = page.locator("td", has_text="0.500").first.bounding_box()
        model = page.locator("td", has_text="textrnn(batch_size").first.bounding_box()
    finally:
        page.close()
    assert rate["x"] + rate["width"] <= WIDTH and model["x"] + model["width"] <= WIDTH


def test_side_by_side_stacks_below_900px(browser, tmp_path):
    runs = KINDS["comparison"](tmp_path)
    html = write_report(runs, tmp_path / "cmp.html", "html")
    page = _open(browser, html, width=800)
    try:
        m = page.evaluate(MEASURE)
    finally:
        page.close()
    a, b = m["cols"][:2]
    assert b["top"] > a["top"] and a["left"] == b["left"]  # one column under the other
    assert m["scrollWidth"] <= m["width"]
