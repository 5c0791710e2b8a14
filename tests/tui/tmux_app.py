"""Run the TUI with the test settings (the sleepy study as the program) for the tmux tests."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from robustlab.tui.app import RobustlabApp  # noqa: E402
from tui.conftest import make_settings  # noqa: E402

if __name__ == "__main__":
    cwd = Path(sys.argv[1])
    RobustlabApp([], make_settings(cwd=cwd, poll_seconds=0.3)).run()
