"""What a run read: every resolved input, where its location came from, its size and SHA-256.

A study's results are only as reproducible as the files behind them, and several of those files
are found rather than named (the default SO-Beam patch table, the multi-domain data root, the
MiniLM checkpoint shipped by a package). So every input is *resolved* first — from the command
line, an environment variable or the current directory, never from robustlab's own install
location — then recorded under ``config["inputs"]`` of the run (the store, ``summary.json``),
printed when the run starts, compared when it resumes, and shown by ``robustlab report`` and the
TUI. The record, one entry per role (docs/run-directory.md, "inputs")::

    "inputs": {
      "dataset":     {"path": "/abs/dev.tsv", "origin": "--dataset", "size": 81234,
                      "sha256": "9f2c…"},
      "patch_table": {"path": "/abs/shared/data/synonyms/counterfitted_neighbors.json",
                      "origin": "default: $ROBUSTLAB_SHARED or ./shared, ../shared", …},
      "model":       {"path": "/abs/models/sst-bow", "origin": "--model", "size": …,
                      "sha256": "…", "files": 3},
      "neighbourhood": {"name": "wordnet", "origin": "default", "path": …}
    }

A directory's ``sha256`` is taken over the sorted list of its files' relative paths, sizes and
SHA-256s (``files`` counts them), so renaming or editing any file changes it. An input that is
not a local file (a hub dataset name, ``wordnet``) has a ``name`` instead; its contents are
pinned by the study's data fingerprint where there is one.

Inputs are **not** part of any signature: a signature names what was computed (the model, the
data fingerprint, the recipe), and the same data read from another path computes the same thing.
A resume compares checksums, not paths (:func:`changed`), and refuses when one differs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

#: the key of ``config`` (and of ``summary.json["config"]``) holding the records
KEY = "inputs"

_CHUNK = 1 << 20
#: directory entries that are never an input's content (caches, VCS metadata)
_SKIP_DIRS = {".git", "__pycache__", ".cache", ".ipynb_checkpoints"}
#: (path, size, mtime_ns, inode) -> sha256: a file is hashed once per process
_DIGESTS: dict[tuple[str, int, int, int], str] = {}

Record = dict[str, Any]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes (cached per process by path, size, mtime and inode)."""
    p = Path(path)
    st = p.stat()
    key = (str(p.resolve()), st.st_size, st.st_mtime_ns, st.st_ino)
    hit = _DIGESTS.get(key)
    if hit is None:
        h = hashlib.sha256()
        with open(p, "rb") as fh:
            for block in iter(lambda: fh.read(_CHUNK), b""):
                h.update(block)
        hit = _DIGESTS[key] = h.hexdigest()
    return hit


def _dir_files(root: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in filenames:
            f = Path(dirpath) / name
            if f.is_file():  # a symlink to a file counts (Hugging Face snapshots are links)
                out.append(f)
    return sorted(out, key=lambda f: f.relative_to(root).as_posix())


def describe(value: str | os.PathLike[str], origin: str) -> Record:
    """The record of one input: a local file or directory gets its absolute path, size, SHA-256
    (and file count); anything else (a dataset name, ``wordnet``) is kept as a ``name``."""
    p = Path(value).expanduser()
    if p.exists() and not p.is_file() and not p.is_dir():
        from robustlab.data.files import regular_input

        regular_input(p, origin)  # a FIFO or a device cannot be hashed and then read: refused
    if p.is_file():
        return {"path": str(p.resolve()), "origin": origin, "size": p.stat().st_size,
                "sha256": file_sha256(p)}
    if p.is_dir():
        h = hashlib.sha256()
        size = 0
        files = _dir_files(p)
        for f in files:
            n = f.stat().st_size
            size += n
            h.update(f"{f.relative_to(p).as_posix()}\0{n}\0{file_sha256(f)}\n".encode())
        return {"path": str(p.resolve()), "origin": origin, "size": size,
                "sha256": h.hexdigest(), "files": len(files)}
    return {"name": str(value), "origin": origin}


def collect(items: Iterable[tuple[str, str | os.PathLike[str] | None, str]]) -> dict[str, Record]:
    """``[(role, value, origin), …]`` -> ``{role: record}`` (``None`` values are skipped; the
    first record of a role wins)."""
    out: dict[str, Record] = {}
    for role, value, origin in items:
        if value is not None and str(value) != "" and role not in out:
            out[role] = describe(value, origin)
    return out


def data_and_model(dataset: Mapping[str, Any], model: str, *, data_given: bool,
                   model_given: bool) -> list[tuple[str, str | None, str]]:
    """The ``dataset`` and ``model`` input items of a study that tests one model on one dataset
    (eval, attack, bias). What Python handed in as objects (examples, a model) is no file and
    is not recorded."""
    from robustlab.models.registry import model_input  # on use: perturb records no model

    items: list[tuple[str, str | None, str]] = []
    if not data_given:
        items.append(("dataset", dataset.get("path") or dataset.get("name"), "--dataset"))
    if not model_given:
        items.append(("model", *model_input(model)))
    return items


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def role_label(role: str) -> str:
    """``patch_table`` -> ``patch table``; ``domain:books`` stays as it is."""
    return role.replace("_", " ")


def describe_line(role: str, rec: Mapping[str, Any]) -> str:
    """One line for a person: ``dataset: /abs/dev.tsv (--dataset; 79.3 KiB, sha256 9f2c41ab07de)``."""
    origin = rec.get("origin") or "?"
    if "path" in rec and "sha256" in rec:
        files = f", {rec['files']} files" if "files" in rec else ""
        what = f"{rec['path']} ({origin}; {human_size(int(rec.get('size') or 0))}{files}, " \
               f"sha256 {str(rec['sha256'])[:12]})"
    else:
        what = f"{rec.get('name', rec.get('path', '?'))} ({origin})"
    from robustlab.textfmt import printable  # a stored record is shown, never interpreted

    return printable(f"{role_label(role)}: {what}")


def lines(inputs: Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """:func:`describe_line` for every record, in recorded order."""
    return [describe_line(role, rec) for role, rec in (inputs or {}).items()]


def announce(inputs: Mapping[str, Mapping[str, Any]] | None,
             say: Callable[[str], None] | None) -> None:
    """Show what the run reads, one line each, before any work (``say`` None: silent)."""
    if say is None:
        return
    for line in lines(inputs):
        say(f"input {line}")


def _identity(rec: Mapping[str, Any]) -> tuple[Any, ...]:
    """What must stay the same for finished cells to still describe this input: the checksum
    of a file or directory, the name of anything else (a path may move; content may not)."""
    if "sha256" in rec:
        return ("sha256", rec["sha256"])
    return ("name", rec.get("name"))


def changed(stored: Mapping[str, Mapping[str, Any]] | None,
            now: Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """The inputs of ``now`` whose content differs from the run's ``stored`` records, one line
    each naming the role, where it came from and both checksums. A role the run never
    recorded (a run made before inputs were recorded, or before that role was) is not a
    difference: there is nothing to compare it with."""
    from robustlab.textfmt import printable  # stored records are shown, never interpreted

    out = []
    stored = stored or {}
    for role, rec in (now or {}).items():
        old = stored.get(role)
        if old is None or _identity(old) == _identity(rec):
            continue
        out.append(printable(f"{role_label(role)} ({rec.get('origin', '?')}): {_short(old)} "
                             f"when the run started, {_short(rec)} now"))
    return out


def _short(rec: Mapping[str, Any]) -> str:
    if "sha256" in rec:
        return f"{rec.get('path')} sha256 {str(rec['sha256'])[:12]}"
    return str(rec.get("name", rec.get("path")))


def merged(stored: Mapping[str, Mapping[str, Any]] | None,
           now: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Record]:
    """The records a resumed run keeps: the stored ones (the run's start), plus roles recorded
    for the first time now."""
    out = {k: dict(v) for k, v in (stored or {}).items()}
    for role, rec in (now or {}).items():
        out.setdefault(role, dict(rec))
    return out


def split_config(config: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Record]]:
    """(config without ``inputs``, its input records)."""
    rest = {k: v for k, v in config.items() if k != KEY}
    return rest, dict(config.get(KEY) or {})


# ---- a study's dataset and model items, as given and as stored -----------------------------------
# (shared by the slices that read one dataset file and one trained model: attack, bias, eval)

#: file options of a dataset spec, with their JSON types (a stored run is untrusted)
FILE_OPTIONS: dict[str, tuple[type, ...]] = {
    "format": (str,), "encoding": (str,), "header": (bool,), "text_column": (str, int),
    "label_column": (str, int), "split": (str,)}
#: prefix of a model that was given as a Python object (no spec to rebuild it from)
OBJECT = "object:"


def dataset_from_args(args: argparse.Namespace, format_dest: str = "dataset_format"
                      ) -> dict[str, Any]:
    """``--dataset NAME|FILE`` and its file options as a stored spec: ``{"path": ABS}`` or
    ``{"name": NAME}`` plus the options given."""
    from robustlab.data.datasets import resolve_dataset
    from robustlab.options import column

    spec = resolve_dataset(args.dataset)
    for key, dest in (("format", format_dest), ("encoding", "encoding"), ("header", "header"),
                      ("text_column", "text_column"), ("label_column", "label_column"),
                      ("split", "split")):
        value = getattr(args, dest, None)
        if value is not None:
            spec[key] = column(value) if key.endswith("_column") else value
    return spec


def check_dataset(spec: Any) -> None:
    """A dataset spec: a name or an existing file, and known file options of their types."""
    if not isinstance(spec, dict) or not (spec.get("name") or spec.get("path")):
        raise InputError("--dataset: give a data file or a dataset name")
    for key, value in spec.items():
        if key in ("name", "path"):
            if not isinstance(value, str):
                raise InputError(f"--dataset: {key} must be a string")
            continue
        types_ = FILE_OPTIONS.get(key)
        if types_ is None:
            raise InputError(f"--dataset: unknown dataset option {key!r}")
        if not isinstance(value, types_) or (isinstance(value, bool) and bool not in types_):
            raise InputError(f"--dataset: {key} must be {' or '.join(t.__name__ for t in types_)}"
                             f", got {value!r:.60}")
    if spec.get("path") and not Path(spec["path"]).is_file():
        raise InputError(f"--dataset {spec['path']}: no such file")


def dataset_argv(spec: dict[str, Any]) -> list[str]:
    argv = ["--dataset", str(spec.get("path") or spec.get("name"))]
    for key, flag in (("format", "--format"), ("encoding", "--encoding"),
                      ("text_column", "--text-column"), ("label_column", "--label-column"),
                      ("split", "--split")):
        if key in spec:
            argv += [flag, str(spec[key])]
    if "header" in spec:
        argv.append("--header" if spec["header"] else "--no-header")
    return argv


def load_options(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec's file options as :func:`robustlab.data.datasets.load_examples` arguments."""
    return {("fmt" if k == "format" else k): v for k, v in spec.items()
            if k not in ("name", "path")}


def local_path(value: str | None) -> str | None:
    """A file or directory option's canonical form: absolute when it names a local path."""
    if not value:
        return value
    p = Path(value).expanduser()
    return str(p.resolve()) if p.exists() or value.startswith((".", "~", "/")) else value


def canonical_source(spec: str | None) -> str | None:
    """``--source``/``--mlm`` in stored form: ``table:ABS`` / ``mlm:ABS`` for local paths."""
    if not spec:
        return None
    for prefix in ("table:", "mlm:"):
        if spec.startswith(prefix):
            return prefix + (local_path(spec[len(prefix):]) or "")
    return spec


def check_source(spec: str | None, option: str = "--source") -> None:
    if spec is None or spec == "wordnet":
        return
    if spec.startswith("table:"):
        if not Path(spec[6:]).is_file():
            raise InputError(f"{option} {spec}: no such table file")
        return
    if spec.startswith("mlm:"):  # a masked LM that cannot load stops here, not in a cell
        from robustlab.resources import check_checkpoint

        check_checkpoint(spec[4:], option)
        return
    raise InputError(f"{option} {spec!r}: expected wordnet, table:FILE or mlm:PATH_OR_HUB_ID")


def check_trained_model(spec: str, *, trusted: bool) -> None:
    """An attack, a bias study or eval needs a trained model: a saved directory or a checkpoint,
    never a family name (it would be untrained) or a path that does not exist."""
    from robustlab.models.registry import (
        available_models,
        check_model_spec,
        family_shadows_directory,
        parse_model_spec,
    )

    if spec.startswith(OBJECT):  # a model object given from Python: the caller's to check
        return
    from robustlab.endpoints.card import is_endpoint, parse_spec

    if is_endpoint(spec):  # a model behind HTTP: its card (or URL) is checked, nothing sent
        parse_spec(spec)
        return
    local = Path(spec).expanduser()
    if not spec.startswith("hf:") and (os.sep in spec or "/" in spec or
                                       spec.startswith((".", "~"))) and not local.exists():
        # a path, never a hub id (hub ids go as hf:ID): a typo is not a download
        raise InputError(f"--model {spec}: no such model directory (a hub checkpoint is "
                         "named hf:ID)")
    shadowed = family_shadows_directory(spec)
    if shadowed:
        raise InputError(f"--model {spec}: is both a model family (which would be untrained) "
                         f"and the directory {shadowed}; pass {shadowed} to use the saved model")
    check_model_spec(spec, user_class=trusted)
    name, _ = parse_model_spec(spec)
    if name in available_models():
        raise InputError(f"--model {spec}: an untrained {name} model predicts at random, so "
                         f"it tests nothing; train it first (robustlab train --model {spec} "
                         "--dataset … --out DIR) and pass the saved directory")


def refuse_object_model(config: Mapping[str, Any]) -> None:
    """A stored configuration whose model was a Python object cannot be rebuilt from the store
    (``robustlab resume``, the TUI): one line saying to resume it from Python."""
    model = config.get("model") if isinstance(config, Mapping) else None
    if isinstance(model, str) and model.startswith(OBJECT):
        raise InputError(f"this run was made from Python with a model object "
                         f"({model[len(OBJECT):][:60]!r}); resume it from Python with the "
                         "same object")


DATASET_HELP = ("a file (label-text, TSV, CSV, JSONL) or a dataset name (demo, sst2, TextAttack's "
                "NAME^CONFIG^SPLIT, …); split --split (default test)")


def trained_model_field(help: str) -> Any:
    """A config field holding the one trained model a study reads (``--model``, exactly one,
    stored in canonical form): its option, from :mod:`robustlab.runs.fields`."""
    import dataclasses

    from robustlab.runs.fields import option

    def add(g: Any) -> None:
        from robustlab.options import add_model_option

        add_model_option(g, multi=False, required=True, help=help)

    def read(args: argparse.Namespace) -> str:
        from robustlab.endpoints import canonical_spec, is_endpoint
        from robustlab.models.registry import canonical_model_spec

        kind = getattr(args, "endpoint_kind", None)
        if kind or is_endpoint(args.model):
            return canonical_spec(args.model, kind)
        return canonical_model_spec(args.model)

    return dataclasses.field(metadata=option(add=add, read=read,
                                             show=lambda v, _: ["--model", v], always=True))


def dataset_file_field() -> Any:
    """A config field holding the one dataset a study reads (``--dataset`` and its file
    options, stored as a spec: :func:`dataset_from_args`)."""
    import dataclasses

    from robustlab.runs.fields import option

    def add(g: Any) -> None:
        from robustlab.options import add_dataset_options

        add_dataset_options(g, required=True, pairs=False, format_dest="dataset_format",
                            help=DATASET_HELP)

    return dataclasses.field(metadata=option(add=add, read=dataset_from_args,
                                             show=lambda v, _: dataset_argv(v), always=True))
