"""Data locations resolve from the environment or the current directory, never the package path."""

from __future__ import annotations

from pathlib import Path

from robustlab import resources


def test_shared_dir_follows_env_then_cwd(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(tmp_path / "elsewhere"))
    assert resources.shared_dir() == (tmp_path / "elsewhere").resolve()

    monkeypatch.delenv("ROBUSTLAB_SHARED")
    work = tmp_path / "proj" / "checkout"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    # nothing beside the checkout: the answer is ../shared of the cwd, not the package's folder
    assert resources.shared_dir() == (tmp_path / "proj" / "shared").resolve()
    (tmp_path / "proj" / "shared").mkdir()
    assert resources.shared_data_dir() == (tmp_path / "proj" / "shared" / "data").resolve()
    (work / "shared").mkdir()
    assert resources.shared_dir() == (work / "shared").resolve()
    # the old rule was "shared/ beside the package's checkout": never that
    pkg_root = Path(resources.__file__).resolve().parents[2]
    assert resources.shared_dir() != (pkg_root / "shared").resolve()
