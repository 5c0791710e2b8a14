"""A model folder is data someone else may have written: what robustlab reads from one is
checked before anything is opened or allocated (issue 29, F7): every entry a regular file or
folder, ``robustlab_model.json`` bounded JSON whose family, classes, steps and vocabulary have
the types and ranges a saved model has."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

META_FILE = "robustlab_model.json"
#: family -> one-line description (kept here so listing does not import torch)
TORCH_FAMILIES: dict[str, str] = {
    "textrnn": "TextRNN: embedding + bidirectional LSTM + max pooling (papers' non-pretrained)",
    "bow": "bag-of-words: mean embedding + one hidden layer (seed 002)",
    "cnn": "Kim CNN: convolutions of width 3/4/5, max-over-time pooling (seed 002)",
    "lstm": "LSTM: one unidirectional LSTM layer, 100 hidden (seed 002)",
    "transformer": "small Transformer encoder: 3 layers, 4 heads, 64 hidden (seed 002)",
}

#: the largest robustlab_model.json read: its vocabulary of a million words is ~20 MB
MAX_META_BYTES = 64 << 20
#: the most classes a saved model may have (the output layer is allocated from it)
MAX_CLASSES = 100_000
#: the most entries of a saved vocabulary (the embedding is allocated from it)
MAX_VOCAB = 5_000_000


def check_model_folder(d: Path) -> None:
    """Every entry of a model folder (and of its subfolders) is a regular file or a folder,
    links followed: a FIFO named ``model.safetensors`` would block the loader forever (in
    native code, where Ctrl-C does not reach), a device would be read without end. Checked
    before anything in it is opened."""
    from robustlab.outputs import file_kind

    todo, seen = [d], 0
    while todo:
        folder = todo.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            raise InputError(f"{folder}: cannot list the model folder ({exc.strerror})") from None
        for entry in entries:
            seen += 1
            if seen > 10_000:
                raise InputError(f"{d}: more than 10000 files; not a model folder")
            try:
                is_dir, is_file = entry.is_dir(), entry.is_file()
            except OSError:
                is_dir = is_file = False
            if is_dir and len(Path(entry.path).relative_to(d).parts) < 4:
                todo.append(Path(entry.path))
            elif not is_file and not is_dir:
                raise InputError(f"{entry.path}: is {file_kind(entry.path)}, not a regular file; "
                                 "a model folder holds files only")


def read_meta(d: Path) -> dict[str, Any]:
    """The saved model's metadata (plain JSON; never code), checked (types and ranges of what
    is allocated from it: classes, vocabulary), or one InputError naming the file."""
    from robustlab.data.files import load_json_bounded

    check_model_folder(d)
    meta = load_json_bounded(d / META_FILE, "the saved model's metadata",
                             max_bytes=MAX_META_BYTES)
    # a model folder is data: it names a registered family (a string), never a class to call
    if not isinstance(meta, dict) or not isinstance(meta.get("family"), str) or not (
            meta["family"] in TORCH_FAMILIES or meta["family"] == "hf"):
        family = meta.get("family") if isinstance(meta, dict) else None
        raise InputError(f"{d / META_FILE}: unknown model family {family!r:.80}; a saved model "
                         f"names one of {', '.join([*TORCH_FAMILIES, 'hf'])}")
    if not isinstance(meta.get("params", {}), dict):
        raise InputError(f"{d / META_FILE}: params must be a JSON object")
    n = meta.get("n_classes")
    if not isinstance(n, int) or isinstance(n, bool) or not 2 <= n <= MAX_CLASSES:
        raise InputError(f"{d / META_FILE}: n_classes is {n!r:.40}, not a number of classes "
                         f"(an integer from 2 to {MAX_CLASSES})")
    steps = meta.get("steps", 0)
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise InputError(f"{d / META_FILE}: steps is {steps!r:.40}, not a count of steps")
    if meta["family"] != "hf":
        vocab = meta.get("vocab")
        if not (isinstance(vocab, list) and all(isinstance(w, str) for w in vocab)):
            raise InputError(f"{d / META_FILE}: vocab is not a list of words")
        if len(vocab) > MAX_VOCAB:
            raise InputError(f"{d / META_FILE}: a vocabulary of {len(vocab)} words, more than "
                             f"the {MAX_VOCAB} a saved model may have")
    return meta




@contextmanager
def saving(path: str | os.PathLike[str]) -> Iterator[None]:
    """Writing weights: safetensors reports a failed write (a full disk, a read-only file
    system) as ``SafetensorError("… IoError(Os { code: 28, … })")``, not ``OSError``; it is
    turned into the OSError it is, so the command says it in one line like any other."""
    from safetensors import SafetensorError

    try:
        yield
    except SafetensorError as exc:
        code = re.search(r"code: (\d+)", str(exc))
        if code is None:
            raise
        errno_ = int(code.group(1))
        raise OSError(errno_, os.strerror(errno_), str(path)) from None
