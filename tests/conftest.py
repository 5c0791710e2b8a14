"""Shared fixtures. Tests that need ../shared/data skip with a clear reason when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from robustlab.resources import minilm_mlm_path, shared_data_dir, shared_dir  # noqa: E402

# resolve ../shared once, from the directory pytest starts in (tests may chdir later)
os.environ.setdefault("ROBUSTLAB_SHARED", str(shared_dir()))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = shared_data_dir()
    if not d.is_dir():
        pytest.skip(f"needs the team's shared data at {d} (absent on this machine)")
    return d


@pytest.fixture(scope="session")
def minilm_mlm() -> Path:
    d = minilm_mlm_path()
    if not (d / "config.json").exists():
        pytest.skip(f"needs the shared fill-mask model at {d} (absent on this machine)")
    return d
