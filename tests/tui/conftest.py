"""Fixtures for the TUI tests: fixture run directories and app settings with a fixed clock."""

from __future__ import annotations

import asyncio
import inspect
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("textual", reason="the TUI tests need textual (pip install 'robustlab[tui]')")

from robustlab.tui.app import Settings  # noqa: E402
from tui import fixtures  # noqa: E402  (tests/ is on sys.path: rootdir-relative package)

HERE = Path(__file__).parent
# Snapshots show run paths, so their fixtures live at a fixed place (rebuilt every session).
SNAP_ROOT = Path("/tmp/robustlab-tui-snapshots")


@pytest.fixture(scope="session")
def runs(tmp_path_factory) -> dict[str, Path]:
    """One run directory of each kind and state (running = owned by this test process)."""
    return fixtures.make_all(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="session")
def snap_runs() -> Iterator[dict[str, Path]]:
    """The fixed place is shared by every suite on the machine: two suites side by side (two
    checkouts, 12:22 UTC 2026-11-28) rebuilt it under each other and a snapshot failed. An
    exclusive lock held until the session ends makes the second suite wait for the first."""
    import fcntl

    with open(f"{SNAP_ROOT}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(SNAP_ROOT, ignore_errors=True)
        yield fixtures.make_all(SNAP_ROOT)


def make_settings(**kw) -> Settings:
    """Fast polling, a fixed clock (durations in snapshots), the sleepy study as the program."""
    from tui.slow_study import build_parser

    base = dict(poll_seconds=0.2, clock=lambda: fixtures.T0 + 3600.0, parser=build_parser,
                program=[sys.executable, str(HERE / "slow_study.py")])
    base.update(kw)
    return Settings(**base)


@pytest.fixture
def settings(tmp_path) -> Settings:
    return make_settings(cwd=tmp_path)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """Run ``async def`` tests (Pilot) on a fresh event loop, without an async plugin."""
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        args = {n: pyfuncitem.funcargs[n] for n in pyfuncitem._fixtureinfo.argnames}
        asyncio.run(pyfuncitem.obj(**args))
        return True
    return None
