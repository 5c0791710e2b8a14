"""Writing a run directory's final files atomically (see docs/run-directory.md).

A file that exists is complete: everything goes through a temporary file in the same directory
and ``os.replace``. Files and directories get ordinary permissions (``0666``/``0777`` minus the
umask), including files that libraries create privately (safetensors writes ``0600``).
:func:`check_out_dir` refuses an unusable ``--out`` before anything is computed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def json_default(o: Any) -> Any:
    """``json.dumps(default=)`` for what results hold besides JSON types: numpy scalars and
    arrays (read from numpy only when it is loaded: never imported for this), paths."""
    np = sys.modules.get("numpy")  # a numpy value exists only if numpy is loaded
    if np is not None:
        if isinstance(o, np.generic):
            return o.item()
        if isinstance(o, np.ndarray):
            return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def atomic_write(path: str | os.PathLike[str], write: Callable[[Any], None], mode: str = "w") -> Path:
    """Call ``write(fileobj)`` on a temporary file, then move it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        kwargs = {"encoding": "utf-8", "newline": ""} if "b" not in mode else {}
        with os.fdopen(fd, mode, **kwargs) as f:
            write(f)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


@contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; on success it replaces ``path`` (an existing
    directory there is removed first), on failure it is deleted. A directory that exists is
    complete (saved models, caches)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        yield tmp
        _normalise_modes(tmp)
        if path.exists():
            shutil.rmtree(path)
        os.replace(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _normalise_modes(root: Path) -> None:
    """Give ``root`` and everything in it the modes of ordinary new files (umask respected):
    mkdtemp makes 0700, and some writers (safetensors) create 0600 files."""
    mask = _umask()
    os.chmod(root, 0o777 & ~mask)
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            os.chmod(os.path.join(dirpath, d), 0o777 & ~mask)
        for f in filenames:
            full = os.path.join(dirpath, f)
            if not os.path.islink(full):
                exe = os.stat(full).st_mode & 0o111
                os.chmod(full, (0o777 if exe else 0o666) & ~mask)


def check_out_dir(path: str | os.PathLike[str] | None, opt: str = "--out") -> None:
    """InputError (one line) if ``path`` cannot become a directory we write in; creates nothing.

    Catches an existing file, a path under a file, a read-only file system and a directory
    without write permission, before any work is done.
    """
    from robustlab.errors import InputError

    if not path:
        return
    p = Path(path).expanduser()
    if p.exists() and not p.is_dir():
        raise InputError(f"{opt} {path}: exists and is not a directory; choose a directory path")
    probe = p
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise InputError(f"{opt} {path}: {probe} is a file, not a directory")
    try:
        readonly = bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        readonly = False
    if readonly:
        raise InputError(f"{opt} {path}: {probe} is on a read-only file system; choose another "
                         "directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(f"{opt} {path}: no permission to write in {probe}; choose another "
                         "directory")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    return atomic_write(
        path, lambda f: f.write(json.dumps(obj, indent=2, sort_keys=False, default=json_default)
                                + "\n"))


def write_jsonl(path: str | os.PathLike[str], records: Iterable[Any]) -> Path:
    def w(f):
        for r in records:
            f.write(json.dumps(r, default=json_default, ensure_ascii=False) + "\n")

    return atomic_write(path, w)


def save_figure(fig: Any, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Save a matplotlib figure atomically (Agg backend; never needs a display)."""
    return atomic_write(path, lambda f: fig.savefig(f, format="png", **kwargs), mode="wb")
