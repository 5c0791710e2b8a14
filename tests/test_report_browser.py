"""A real browser renders the HTML report offline: not blank, no broken image, dark mode works.

Needs Chromium (Debian package ``chromium``, installed by scripts/setup.sh when root); skipped
with that reason otherwise. Every run blocks name resolution (``--host-resolver-rules``), so
a page that needed the network would show broken images here.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from tui import fixtures

from robustlab.report import write_report

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no headless browser: install Debian's "
                                "chromium (scripts/setup.sh does when run as root)")
OFFLINE = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
           "--disable-extensions", "--host-resolver-rules=MAP * ~NOTFOUND",
           "--no-proxy-server", "--disable-background-networking"]

PROBE = """<script>
window.addEventListener('load', function () {
  var imgs = document.images, broken = 0;
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) { broken++; }
  }
  document.title = 'PROBE images=' + imgs.length + ' broken=' + broken + ' bg=' +
    getComputedStyle(document.body).backgroundColor + ' h=' + document.body.scrollHeight;
});
</script>"""


def _chromium(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([BROWSER, *OFFLINE, f"--user-data-dir={cwd / 'profile'}", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def _probe(report: Path, tmp: Path, *flags: str) -> dict[str, str]:
    """Load a copy of the report with a probe script appended (the report itself has none)."""
    probe = tmp / f"probe{len(flags)}.html"
    probe.write_text(report.read_text().replace("</body>", PROBE + "</body>"))
    res = _chromium(*flags, "--virtual-time-budget=10000", "--dump-dom", probe.as_uri(), cwd=tmp)
    m = re.search(r"<title>PROBE ([^<]*)</title>", res.stdout)
    assert m, f"the browser did not load the page: {res.stderr[-500:]}"
    return dict(kv.split("=", 1) for kv in re.findall(r"\w+=(?:rgb\([^)]*\)|\S+)", m.group(1)))


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    run = fixtures.learnability(tmp / "learn-done")
    return write_report([run], tmp / "report.html", "html")


def test_report_renders_offline_with_every_image(report, tmp_path):
    html = report.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing to fetch
    shot = tmp_path / "shot.png"
    res = _chromium("--window-size=1100,1600", f"--screenshot={shot}", report.as_uri(),
                    cwd=tmp_path)
    assert shot.is_file(), res.stderr[-500:]
    import matplotlib.image as mpimg

    px = mpimg.imread(shot)[..., :3]
    assert px.shape[0] >= 1000 and px.std() > 0.05  # not blank
    background = (np.abs(px - px[5, 5]).sum(axis=-1) > 0.1).mean()
    assert background > 0.03  # text and figures cover part of the page
    light = _probe(report, tmp_path)
    assert int(light["images"]) == html.count('<img src="data:image/png;base64,') == 3
    assert light["broken"] == "0"
    assert light["bg"] == "rgb(255, 255, 255)" and int(light["h"]) > 2000
    # prefers-color-scheme: dark switches the palette (readable in dark mode too)
    dark = _probe(report, tmp_path, "--force-dark-mode",
                  "--blink-settings=preferredColorScheme=0")
    assert dark["broken"] == "0" and dark["bg"] == "rgb(13, 17, 23)"
