"""Every file robustlab writes goes through here (see docs/run-directory.md, "Links and outputs").

Two kinds of destination, told apart by who named them:

* **A file in a run directory or cache** (``summary.json``, ``results.jsonl``, CSV/PNG, a saved
  model; the default): it must be a regular file or absent. A symbolic link or a FIFO/device in
  its place is refused with one line (:class:`~robustlab.errors.InputError`), never followed:
  a run directory may come from someone else, and a planted ``summary.json -> ~/.bashrc`` must
  not redirect a write.
* **An output the user named** (``-o``, ``--train-file``, ``report --out``, ``--csv``,
  ``--json``, ``--junit-xml``; ``user=True``): links are resolved, because the user chose the
  path. ``-`` is standard output and ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` are that
  file descriptor, written where it stands; a FIFO, a device (``/dev/null``, ``/dev/full``) or
  another non-regular file is opened and written in place, streamed, and never unlinked or
  replaced.

A regular file (or a new path) is written atomically either way: a temporary file in the same
directory, then ``os.replace``, so a file that exists is complete. Temporary names carry
robustlab's mark, a hash of the host name and the writer's pid
(``.NAME.robustlab-tmp.HOST.PID.XXXXXXXX``); the next write of ``NAME`` removes those whose writer
is dead on this host (a ``kill -9`` leftover) and nothing else. Files and directories get
ordinary permissions (``0666``/``0777`` minus the umask), including files that libraries create
privately (safetensors writes ``0600``).

:func:`check_out_dir` refuses an unusable ``--out`` before anything is computed,
:func:`resolve_run_dir` resolves a run directory that is itself a link once (and says so), and
:func:`refuse_same_file` refuses an output that is one of the command's inputs (by inode).
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from robustlab.errors import InputError
from robustlab.procs import pid_alive
from robustlab.textfmt import echo

#: the mark of robustlab's temporary files and directories (see the module docstring)
TMP_TAG = "robustlab-tmp"
#: characters of the output's name kept in a temporary name (NAME_MAX is 255 bytes)
_NAME_KEEP = 120
#: names that mean "this file descriptor" rather than a file to replace
_FD_NAMES = {"-": 1, "/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")


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


# ---- where a write goes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """Where an output is written: ``atomic`` (temporary file + rename at ``path``), ``stream``
    (the existing FIFO/device ``path`` opened in place) or ``fd`` (file descriptor ``fd``)."""

    kind: str
    path: Path
    fd: int | None = None

    @property
    def replaceable(self) -> bool:
        """True when a failed write leaves nothing behind (atomic), so it can be started again."""
        return self.kind == "atomic"


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "a regular file"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
                       (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "a special file"


def file_kind(path: str | os.PathLike[str]) -> str:
    """What ``path`` is, in words, for messages (links followed): ``a FIFO``, ``a directory``…"""
    try:
        return _kind(os.stat(path).st_mode)
    except OSError:
        return "missing"


def fd_of(path: str | os.PathLike[str]) -> int | None:
    """The file descriptor a name stands for (``-``, ``/dev/stdout``, ``/dev/fd/N``), else None."""
    s = os.fspath(path)
    if s in _FD_NAMES:
        return _FD_NAMES[s]
    m = _FD_PATH.match(s)
    return int(m.group(1)) if m else None


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """True when writing ``path`` writes this process's standard output (``-o -``): the
    command then prints its own messages on stderr so the two do not mix."""
    return path is not None and fd_of(path) == 1


@contextmanager
def messages_off_stdout(*outputs: str | os.PathLike[str] | None) -> Iterator[None]:
    """While one of a command's outputs is its standard output (``--csv -``), what it prints
    for people goes to stderr, so the output stays clean."""
    if any(is_stdout(o) for o in outputs):
        with redirect_stdout(sys.stderr):
            yield
    else:
        yield


def output_target(path: str | os.PathLike[str], *, user: bool = False) -> Target:
    """Classify ``path`` (see the module docstring); InputError when it cannot be written."""
    p = Path(os.fspath(path)).expanduser() if os.fspath(path) != "-" else Path("-")
    if user:
        fd = fd_of(path)
        if fd is not None:
            return Target("fd", p, fd)
        try:
            st = os.stat(p)  # links followed: the user chose this path
        except FileNotFoundError:
            return Target("atomic", Path(os.path.realpath(p)))  # new (a dangling link's target)
        except OSError as exc:
            raise InputError(f"{path}: cannot write ({exc.strerror})") from None
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: is a directory; give an output file name")
        if stat.S_ISREG(st.st_mode):
            return Target("atomic", Path(os.path.realpath(p)))
        return Target("stream", p)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return Target("atomic", p)
    if stat.S_ISREG(st.st_mode):
        return Target("atomic", p)
    if stat.S_ISLNK(st.st_mode):
        raise InputError(f"{p}: is a symbolic link; robustlab does not write through links in a "
                         "run directory (remove the link and rerun)")
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{p}: is a directory; expected a file")
    raise InputError(f"{p}: is {_kind(st.st_mode)}, not a regular file; robustlab writes only "
                     "regular files here (remove it and rerun)")


# ---- temporary files -------------------------------------------------------------------------------


def _host_tag() -> str:
    return hashlib.blake2b(socket.gethostname().encode(), digest_size=4).hexdigest()


def _tmp_prefix(name: str) -> str:
    return f".{name[:_NAME_KEEP]}.{TMP_TAG}.{_host_tag()}.{os.getpid()}."


def _stale_pattern(name: str) -> re.Pattern[str]:
    # tempfile's random part: 8 characters of [a-z0-9_]
    return re.compile(re.escape(f".{name[:_NAME_KEEP]}.{TMP_TAG}.{_host_tag()}.")
                      + r"(\d+)\.[a-z0-9_]{8}\Z")


def remove_stale(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files (and directories) left beside ``path`` by robustlab writers
    that died on this host (``kill -9`` during a write); returns what was removed.

    Only names with robustlab's mark, this host's tag and a pid that is not alive are touched,
    and only regular files or directories (never a link) owned by this user: anything else,
    another host's write in progress or a file that merely looks similar, is kept.
    """
    p = Path(path)
    pattern = _stale_pattern(p.name)
    removed: list[Path] = []
    try:
        entries = list(os.scandir(p.parent if str(p.parent) else "."))
    except OSError:
        return removed
    for e in entries:
        m = pattern.match(e.name)
        if not m or int(m.group(1)) == os.getpid() or pid_alive(int(m.group(1))):
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if st.st_uid != os.getuid():
                continue
            if stat.S_ISREG(st.st_mode):
                os.unlink(e.path)
            elif stat.S_ISDIR(st.st_mode):
                shutil.rmtree(e.path)
            else:
                continue
        except OSError:
            continue
        removed.append(Path(e.path))
    return removed


# ---- writing -----------------------------------------------------------------------------------------


def _text_kwargs(mode: str) -> dict[str, Any]:
    return {"encoding": "utf-8", "newline": ""} if "b" not in mode else {}


@contextmanager
def open_output(path: str | os.PathLike[str], mode: str = "w", *,
                user: bool = False) -> Iterator[IO[Any]]:
    """A file object to write ``path`` (see the module docstring): a temporary file moved into
    place when the block ends without error (deleted otherwise), or the FIFO, device or file
    descriptor itself, written in place and never removed."""
    target = output_target(path, user=user)
    if target.kind == "fd":
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # what the command printed comes before the output
        f = open(os.dup(target.fd), mode, closefd=True, **_text_kwargs(mode))  # noqa: SIM115
        try:
            yield f
        finally:
            f.close()
        return
    if target.kind == "stream":
        fd = os.open(target.path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
        if stat.S_ISREG(os.fstat(fd).st_mode):  # replaced by a regular file since the check
            os.close(fd)
            target = Target("atomic", Path(os.path.realpath(target.path)))
        else:
            f = open(fd, mode, closefd=True, **_text_kwargs(mode))  # noqa: SIM115
            try:
                yield f
            finally:
                f.close()
            return
    dest = target.path
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(dest)
    fd, tmp = tempfile.mkstemp(prefix=_tmp_prefix(dest.name), dir=dest.parent)
    try:
        with os.fdopen(fd, mode, **_text_kwargs(mode)) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results are ordinary files
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write(path: str | os.PathLike[str], write: Callable[[Any], None], mode: str = "w",
                 *, user: bool = False) -> Path:
    """Call ``write(fileobj)`` on :func:`open_output` of ``path``; returns ``path``.

    ``user=False`` (a run-directory file): a link or non-regular file there is refused.
    ``user=True`` (a path the user named): ``-``, FIFOs and devices are written in place.
    """
    with open_output(path, mode, user=user) as f:
        write(f)
    return Path(path)


@contextmanager
def atomic_dir(path: str | os.PathLike[str], *, user: bool = False) -> Iterator[Path]:
    """Yield a temporary directory beside ``path``; on success it replaces ``path``, on failure
    it is deleted. A directory that exists is complete (saved models, caches).

    An existing directory is first moved aside under a temporary name, so a crash between the
    two renames leaves a stale temporary (removed by the next write), never nothing. A link at
    ``path`` is refused, or with ``user=True`` resolved (the directory it names is replaced).
    """
    p = Path(path).expanduser()
    if p.is_symlink():
        if not user:
            raise InputError(f"{p}: is a symbolic link; robustlab does not write through links "
                             "in a run directory (remove the link and rerun)")
        p = Path(os.path.realpath(p))
    if p.exists() and not p.is_dir():
        raise InputError(f"{p}: exists and is not a directory")
    p.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(p)
    tmp = Path(tempfile.mkdtemp(prefix=_tmp_prefix(p.name), dir=p.parent))
    try:
        yield tmp
        _normalise_modes(tmp)
        old = None
        if p.exists():
            old = Path(tempfile.mkdtemp(prefix=_tmp_prefix(p.name), dir=p.parent))
            os.replace(p, old)  # onto the empty directory just made
        os.replace(tmp, p)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
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


# ---- run directories ---------------------------------------------------------------------------------

_REPORTED: set[tuple[str, str]] = set()


def resolve_run_dir(path: str | os.PathLike[str]) -> Path:
    """``path``, or where it points when the run directory itself is a symbolic link: resolved
    once, said once on stderr, then used by its resolved path (a link changed during the run
    cannot move the rest of its writes elsewhere)."""
    p = Path(path).expanduser()
    if not p.is_symlink():
        return p
    real = Path(os.path.realpath(p))
    if (str(p), str(real)) not in _REPORTED:
        _REPORTED.add((str(p), str(real)))
        echo(f"robustlab: run directory {p} is a symbolic link; using {real}", file=sys.stderr)
    return real


def refuse_link(path: str | os.PathLike[str], what: str | None = None) -> Path:
    """``path`` if it is not a symbolic link (it may be absent); else InputError naming it."""
    p = Path(path)
    if p.is_symlink():
        where = f"{what}: {p}" if what else str(p)
        raise InputError(f"{where}: is a symbolic link; robustlab does not follow links inside a "
                         "run directory (remove the link and rerun)")
    return p


def open_run_file(path: str | os.PathLike[str], flags: int, mode: int = 0o666) -> int:
    """``os.open`` of a file inside a run directory with ``O_NOFOLLOW`` (a link there is never
    followed) and ``O_NONBLOCK`` (a FIFO planted there cannot block); anything but a regular file
    is refused. Returns the descriptor, blocking again."""
    p = Path(path)
    try:
        fd = os.open(p, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY,
                     mode)
    except OSError as exc:
        try:
            kind = _kind(os.lstat(p).st_mode)
        except OSError:
            raise exc from None
        if kind == "a symbolic link" or exc.errno == errno.ELOOP:
            raise InputError(f"{p}: is a symbolic link; robustlab does not follow links inside "
                             "a run directory (remove the link and rerun)") from None
        if kind != "a regular file":  # a FIFO without a reader answers ENXIO
            raise InputError(f"{p}: is {kind}, not a regular file (remove it and rerun)"
                             ) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(f"{p}: is {_kind(st.st_mode)}, not a regular file (remove it and rerun)")
    os.set_blocking(fd, True)
    return fd


def check_out_dir(path: str | os.PathLike[str] | None, opt: str = "--out") -> None:
    """InputError (one line) if ``path`` cannot become a directory we write in; creates nothing.

    Catches an existing file, a path under a file, a read-only file system and a directory
    without write permission, before any work is done.
    """
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


# ---- an output must not be an input -------------------------------------------------------------------


def _same(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


#: the files of a run directory, by name (the store, its SQLite sidecars, the final files, the
#: worker's record and log, the TUI's study.json; ``robustlab.runs.store`` writes them): an
#: output the user names is never one of them, whether it exists yet or not
RUN_FILE_NAMES = ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "store.sqlite-journal",
                  "summary.json", "results.jsonl", "worker.json", "worker.log", "study.json")


def refuse_run_file(option: str, path: str | os.PathLike[str] | None,
                    run_dirs: Iterable[str | os.PathLike[str] | None]) -> None:
    """InputError (one line, before anything is written) when the output ``path`` is, or will
    be, one of the files of a run directory in ``run_dirs`` (:data:`RUN_FILE_NAMES`, compared by
    name, links resolved): ``--junit-xml RUN/summary.json`` before the run has written it,
    ``--csv RUN/store.sqlite-wal``. ``-`` and ``/dev/fd/N`` are skipped."""
    if path is None or str(path) == "-" or fd_of(path) is not None:
        return
    p = Path(path).expanduser()
    spellings = {(p.name, os.path.realpath(p.parent)),
                 (Path(os.path.realpath(p)).name, os.path.dirname(os.path.realpath(p)))}
    for d in run_dirs:
        if d is None:
            continue
        real = os.path.realpath(Path(d).expanduser())
        for name, parent in spellings:
            if name in RUN_FILE_NAMES and parent == real:
                raise InputError(f"{option} {path}: is the run's own {name}; writing it would "
                                 "destroy the run. Choose another output file")


def refuse_foreign_dir(option: str, path: str | os.PathLike[str], *, force: bool) -> None:
    """InputError when ``path`` is a non-empty directory that is not a robustlab run (no
    ``store.sqlite``): a study writes ``summary.json``, ``results.jsonl`` and CSV files there,
    replacing a project's own files of those names. ``--force`` allows it."""
    p = Path(path).expanduser()
    if force or not p.is_dir() or (p / RUN_FILE_NAMES[0]).exists():
        return
    try:
        empty = next(os.scandir(p), None) is None
    except OSError:
        return  # check_out_dir reports what cannot be written
    if not empty:
        raise InputError(f"{option} {path}: is a directory that holds files and is not a "
                         "robustlab run; the run's summary.json, results.jsonl and tables would "
                         "replace files of those names there. Choose a new or empty directory, "
                         "or pass --force")


def refuse_same_file(outputs: Mapping[str, str | os.PathLike[str] | None],
                     inputs: Mapping[str, str | os.PathLike[str] | None]) -> None:
    """InputError (one line, before anything is written) when an output is the same file as an
    input, or two outputs are one file: compared by device and inode (``os.path.samefile``,
    links followed), so ``./x``, a hard link or a symbolic link to the input are all caught.
    Keys are the options (``-o``, ``-i``); ``None`` values and ``-`` are skipped."""
    outs = [(k, v) for k, v in outputs.items() if v is not None and fd_of(v) is None]
    ins = [(k, v) for k, v in inputs.items() if v is not None and fd_of(v) is None]
    for i, (ko, o) in enumerate(outs):
        for ki, src in ins:
            if _same(o, src):
                raise InputError(f"{ko} {o}: is the same file as {ki} {src}; writing it would "
                                 "destroy the input. Choose another output file")
        for ko2, o2 in outs[i + 1:]:
            one = _same(o, o2) or os.path.realpath(o) == os.path.realpath(o2)
            if one and file_kind(o) != "a character device":  # /dev/null twice is harmless
                raise InputError(f"{ko2} {o2}: is the same file as {ko} {o}; give two different "
                                 "files")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_json(path: str | os.PathLike[str], obj: Any, *, user: bool = False) -> Path:
    return atomic_write(
        path, lambda f: f.write(json.dumps(obj, indent=2, sort_keys=False, default=json_default)
                                + "\n"), user=user)


def write_jsonl(path: str | os.PathLike[str], records: Iterable[Any], *, user: bool = False
                ) -> Path:
    def w(f: io.TextIOBase) -> None:
        for r in records:
            f.write(json.dumps(r, default=json_default, ensure_ascii=False) + "\n")

    return atomic_write(path, w, user=user)


def save_figure(fig: Any, path: str | os.PathLike[str], *, user: bool = False,
                **kwargs: Any) -> Path:
    """Save a matplotlib figure atomically (Agg backend; never needs a display)."""
    return atomic_write(path, lambda f: fig.savefig(f, format="png", **kwargs), mode="wb",
                        user=user)
