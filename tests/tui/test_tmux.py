"""The real app in a real terminal: tmux runs ``robustlab tui``, we type and read the screen.

Needs the ``tmux`` binary (Debian: apt-get install tmux); skips with that reason without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

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

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
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
        tmux("send-keys", "-t", "tui", "Escape", "t")
        tmux.wait_for("attack-sobeam")
        tmux("send-keys", "-t", "tui", "q")
        end = time.monotonic() + 15
        while time.monotonic() < end and "tui" in tmux("list-sessions"):
            time.sleep(0.2)
        assert "tui" not in tmux("list-sessions"), "q must quit the app"
    finally:
        tmux("kill-server")
