"""What robustlab trusts, in one place (the threat model is in docs/run-directory.md).

The command line the user types and the packages installed in the environment are trusted: a
spec typed there may name a class by its import path (``package.module:Class``). Everything
else is data: a run directory (its store, stored configuration and command, ``worker.json``), a
plan from elsewhere, a dataset, a model folder and what a TUI form holds. A spec from data may
only name registered things (built-ins, entry points, NL-Augmenter folders, TextAttack names);
whoever names a class, it is checked to be of the slot's kind before it is called.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

#: set to "1" in the environment of a process the TUI launches from a form: its command line
#: came from a form, so its specs are data (registered names only); it can only remove trust
REGISTERED_ONLY_ENV = "ROBUSTLAB_REGISTERED_ONLY"


#: torch reads it at every ``torch.load``: a load that asks for ``weights_only=False`` (flair's
#: model files, any library's checkpoint) is made ``weights_only=True``, so a crafted pickle
#: found anywhere cannot run code. The few legitimate full-pickle loads (flair's own models from
#: its install cache) lift it for one absolute path (:func:`full_pickle_allowed`).
FORCE_WEIGHTS_ONLY_ENV = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"


def _cwd_entries(pythonpath: str | None, cwd: str) -> set[str]:
    """The ``sys.path`` entries ``$PYTHONPATH`` adds that mean "the working directory" (or a
    folder relative to it): an empty entry (``export PYTHONPATH=X:$PYTHONPATH`` with an empty
    ``$PYTHONPATH`` ends in ``:``) or a relative one. An entry also named by its absolute path
    is the user's choice and is kept."""
    parts = (pythonpath or "").split(os.pathsep)
    named = {os.path.normpath(p) for p in parts if p and os.path.isabs(p)}
    implied = {os.path.normpath(os.path.join(cwd, p)) for p in parts
               if pythonpath and not os.path.isabs(p)}
    return (implied - named) | {""}


def clean_import_path(path: Sequence[str], *, pythonpath: str | None = None,
                      cwd: str | None = None, module_main: bool = False) -> list[str]:
    """``path`` (a ``sys.path``) without the entries that mean the working directory: ``''``,
    the directory ``python -m`` puts first (``module_main``, unless ``-P``/``PYTHONSAFEPATH``
    did not put it there) and empty or relative ``$PYTHONPATH`` entries."""
    cwd = os.getcwd() if cwd is None else cwd
    pythonpath = os.environ.get("PYTHONPATH") if pythonpath is None else pythonpath
    out = list(path)
    if module_main and not sys.flags.safe_path and out and os.path.normpath(out[0] or cwd) \
            == os.path.normpath(cwd):
        out = out[1:]
    drop = _cwd_entries(pythonpath, cwd)
    return [p for p in out if p and os.path.normpath(p) not in drop]


def clean_pythonpath(value: str | None) -> str | None:
    """``$PYTHONPATH`` for a child process: absolute entries only (None when none is left)."""
    kept = [p for p in (value or "").split(os.pathsep) if p and os.path.isabs(p)]
    return os.pathsep.join(kept) if kept else None


def harden_process(*, module_main: bool = False) -> None:
    """At the entry of every robustlab process (the console script, ``python -m robustlab``,
    a worker the TUI launches): nothing is imported from the working directory or a folder
    relative to it, in this process or its children (``PYTHONSAFEPATH``, a cleaned
    ``$PYTHONPATH``: multiprocessing and Ray workers inherit them), and no ``torch.load``
    unpickles anything but tensors unless :func:`full_pickle_allowed` names the file."""
    sys.path[:] = clean_import_path(sys.path, module_main=module_main)
    os.environ["PYTHONSAFEPATH"] = "1"
    os.environ[FORCE_WEIGHTS_ONLY_ENV] = "1"
    cleaned = clean_pythonpath(os.environ.get("PYTHONPATH"))
    if cleaned is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = cleaned


@contextlib.contextmanager
def full_pickle_allowed() -> Iterator[None]:
    """Lift :data:`FORCE_WEIGHTS_ONLY_ENV` for one load whose file the caller has checked to be
    in a library's install cache (by absolute path)."""
    saved = os.environ.pop(FORCE_WEIGHTS_ONLY_ENV, None)
    try:
        yield
    finally:
        if saved is not None:
            os.environ[FORCE_WEIGHTS_ONLY_ENV] = saved


def private_workdir(links: dict[str, Path] | None = None) -> Path:
    """A new directory only this user can enter: the working directory of a worker whose run
    directory (or its parent) may hold files someone else put there, so that no library that
    resolves a name against the working directory finds them. Empty, except for ``links``:
    relative paths a run of an earlier version stored (model folders, whose spelling its cell
    keys use), each a link to the absolute path it was resolved to beforehand."""
    root = Path(tempfile.mkdtemp(prefix="robustlab-cwd-")).resolve()
    for rel, target in (links or {}).items():
        parts = Path(rel).parts
        if not parts or Path(rel).is_absolute() or ".." in parts:
            raise ValueError(f"not a plain relative path: {rel!r}")
        link = root.joinpath(*parts)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(Path(target).resolve())
    return root
