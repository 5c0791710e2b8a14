"""The real app in a real terminal: tmux runs ``robustlab tui``, we type and read the screen.

Needs the ``tmux`` binary (Debian: apt-get install tmux); skips with that reason without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="needs tmux (apt-get install tmux)")


class Tmux:
    def __init__(self, name: str) -> None:
        self.base = ["tmux", "-L", name]  # a private server: never touches the user's sessions

    def __call__(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True,
                              timeout=20).stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "tui")

    def wait_for(self, text: str, timeout: float = 120.0) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            shown = self.screen()
            if text in shown:
                return shown
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen shows:\n{self.screen()}")


def test_tui_in_tmux(runs, tmp_path):
    tmux = Tmux(f"robustlab-test-{os.getpid()}")
    root = runs["learn"].parent
    cmd = f"{sys.executable} -m robustlab tui {root} --poll 0.3"
    tmux("new-session", "-d", "-s", "tui", "-e", "TERM=xterm-256color", cmd)
    try:
        shown = tmux.wait_for("attack-sobeam")
        assert tmux("display", "-p", "-t", "tui", "#{window_width}x#{window_height}").strip() \
            == "80x24"  # the smallest size the TUI supports
        assert "learn-running" in shown and "running" in shown  # this test process is its pid
        assert "died" in shown and "corrupt" in shown
        assert "CUDA out of memory" in shown  # first row (attack-died) explains itself
        assert "n New study" in shown and "s Stop" in shown  # the footer shows the keys
        time.sleep(0.5)
        tmux("send-keys", "-t", "tui", "Down")
        tmux.wait_for("/attack-sobeam")  # the detail line follows the cursor
        tmux("send-keys", "-t", "tui", "Enter")
        tmux.wait_for("success 0.600")
        shown = tmux.wait_for("original   the film is a charming")
        assert "vulnerable the film is one delightful" in shown
        tmux.wait_for("f Filter")
        tmux("send-keys", "-t", "tui", "Down", "Down")
        tmux.wait_for("vulnerable he delivers a gentle performance")
        tmux("send-keys", "-t", "tui", "Escape")  # (a key right after ESC would read as alt+key)
        tmux.wait_for("learn-running")
        time.sleep(0.5)
        dark = tmux("capture-pane", "-p", "-e", "-t", "tui")
        tmux("send-keys", "-t", "tui", "t")  # light theme: same text, other colours
        end = time.monotonic() + 60
        while time.monotonic() < end and tmux("capture-pane", "-p", "-e", "-t", "tui") == dark:
            time.sleep(0.2)
        light = tmux("capture-pane", "-p", "-e", "-t", "tui")
        assert light != dark and "learn-running" in tmux.screen()
        tmux("send-keys", "-t", "tui", "q")
        end = time.monotonic() + 60
        while time.monotonic() < end and "tui" in tmux("list-sessions"):
            time.sleep(0.2)
        assert "tui" not in tmux("list-sessions"), "q must quit the app"
    finally:
        tmux("kill-server")


def test_a_study_started_in_the_tui_survives_the_terminal_going_away(tmp_path):
    """Start a study from the form in tmux, kill tmux (like a dropped SSH connection: SIGHUP to
    the TUI), and the detached study still finishes."""
    import sqlite3

    tmux = Tmux(f"robustlab-test-hup-{os.getpid()}")
    app = Path(__file__).with_name("tmux_app.py")
    tmux("new-session", "-d", "-s", "tui", "-e", "TERM=xterm-256color",
         f"{sys.executable} {app} {tmp_path}")
    try:
        tmux.wait_for("No runs yet")
        tmux("send-keys", "-t", "tui", "n")
        tmux.wait_for("$ robustlab sleepy --out runs/sleepy-")
        for key in ("Enter", "Tab", "End", "BSpace"):  # into the form; --cells: 6 → 30
            tmux("send-keys", "-t", "tui", key)
            time.sleep(0.3)
        tmux("send-keys", "-t", "tui", "-l", "30")
        tmux.wait_for("--cells 30")
        tmux("send-keys", "-t", "tui", "C-l")
        tmux.wait_for("running")
        tmux.wait_for("done 2")  # a couple of cells finished while we watched
    finally:
        tmux("kill-server")
    [run_dir] = list((tmp_path / "runs").iterdir())
    store = run_dir / "store.sqlite"

    def done() -> int:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        try:
            return conn.execute("SELECT COUNT(*) FROM cells WHERE status='done'").fetchone()[0]
        finally:
            conn.close()

    end = time.monotonic() + 300
    while time.monotonic() < end and done() < 30:
        time.sleep(0.5)
    assert done() == 30, (run_dir / "worker.log").read_text()
    assert "finished 30/30 cells" in (run_dir / "worker.log").read_text()
