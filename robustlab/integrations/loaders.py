"""Third-party loaders get absolute, trusted locations only (docs/run-directory.md, "Third-party
loaders").

Libraries robustlab calls resolve a *name* against the working directory before anything else,
and some unpickle what they find there:

* flair's ``SequenceTagger.load("upos-fast")`` (TextAttack's ``WordSwapInflections``,
  ``WordSwapChangeName``, ``WordSwapChangeLocation`` and the part-of-speech constraint call it
  with ``upos-fast``, ``ner``, ``flair/ner-<lang>``) first loads a *local file of that name* with
  ``torch.load(weights_only=False)``;
* transformers' ``from_pretrained("bert-base-uncased")`` (TextAttack's masked-LM swaps, back
  translation, CLARE, …) first reads a *folder of that name*, and without
  ``trust_remote_code=False`` asks whether to run the code its ``config.json`` names.

A stored configuration, a plan or a TUI form may name those components, and the working
directory may be the plan's folder or a colleague's. So:

* :func:`guard_flair` (installed whenever robustlab imports TextAttack): a flair model name is
  resolved only through flair's hub download into its install cache (``flair.cache_root``, by
  absolute path, offline from the cache), never against the working directory; every flair
  model file is loaded only from inside that cache, the one full-pickle load robustlab allows
  (:func:`robustlab.trust.full_pickle_allowed`); anything else is refused before it is read.
* :func:`hub_model_location`: the folder a transformers model name means, absolute: a local
  folder (checked: a directory of regular files whose ``config.json`` names no ``auto_map``
  code) or the hub cache's snapshot of a hub id (``local_files_only``); a relative path from
  data is refused. :func:`trusted_pretrained` loads through it with ``trust_remote_code=False``
  while a TextAttack component is built, so TextAttack's own ``from_pretrained(name)`` calls
  never see a bare name.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from robustlab.perturbations.base import PerturbationError
from robustlab.resources import ResourceMissing
from robustlab.textfmt import printable
from robustlab.trust import full_pickle_allowed

#: flair's short tagger names that map to its hub models (flair 0.15's own table, the names
#: TextAttack uses); other short names (direct-download models) are refused
FLAIR_HUB = {
    "upos": "flair/upos-english", "upos-fast": "flair/upos-english-fast",
    "pos": "flair/pos-english", "pos-fast": "flair/pos-english-fast",
    "ner": "flair/ner-english", "ner-fast": "flair/ner-english-fast",
    "ner-ontonotes": "flair/ner-english-ontonotes",
    "ner-ontonotes-fast": "flair/ner-english-ontonotes-fast",
    "ner-large": "flair/ner-english-large", "ner-multi": "flair/ner-multi",
    "multi-ner": "flair/ner-multi", "ner-multi-fast": "flair/ner-multi-fast",
    "pos-multi": "flair/upos-multi", "multi-pos": "flair/upos-multi",
    "chunk": "flair/chunk-english", "chunk-fast": "flair/chunk-english-fast",
}
#: a hub id: ``owner/name`` (optionally ``@revision`` for flair), no path syntax
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]*[A-Za-z0-9_-](@[\w.-]+)?")
_FLAIR_FIX = ("download it once where there is network (python -c \"from flair.models import "
              "SequenceTagger; SequenceTagger.load('NAME')\"), which puts it in flair's cache")


def _flair_cache() -> Path:
    import flair

    return Path(flair.cache_root).expanduser().resolve()


def flair_model_file(name: str) -> str:
    """The absolute path, inside flair's install cache, of the flair model ``name``; never a
    file found relative to the working directory (ResourceMissing or PerturbationError)."""
    cache = _flair_cache()
    path = Path(name)
    if path.is_absolute():
        real = path.resolve()
        if real.is_relative_to(cache) and real.is_file():
            return str(real)
        raise PerturbationError(f"flair model {printable(name)}: only files in flair's cache "
                                f"{cache} are loaded (a model file is code: it is unpickled)")
    hub = FLAIR_HUB.get(name) or (name if HUB_ID.fullmatch(name) else None)
    if hub is None:
        raise PerturbationError(f"flair model {printable(name)!r}: not one of flair's hub "
                                f"models ({', '.join(sorted(FLAIR_HUB))} or owner/name); "
                                "a file of that name in the working directory is never loaded")
    from flair.file_utils import hf_download

    try:
        found = Path(hf_download(hub)).resolve()
    except Exception as exc:  # offline and not cached, or no such model: never a local file
        raise ResourceMissing(f"flair model {name} ({hub})", _FLAIR_FIX.replace("NAME", name),
                              f"not in flair's cache {cache}: {type(exc).__name__}") from None
    if not (found.is_relative_to(cache) and found.is_file()):
        raise PerturbationError(f"flair model {printable(name)}: {found} is outside flair's "
                                f"cache {cache}; refused")
    return str(found)


def _load_torch_state(model_file: str) -> dict[str, Any]:
    """flair's ``load_torch_state``, for files inside flair's cache only (full pickle: flair
    saves whole objects), by absolute path."""
    from flair.file_utils import load_torch_state

    checked = flair_model_file(str(model_file)) if Path(str(model_file)).is_absolute() else None
    if checked is None:
        raise PerturbationError(f"flair model file {printable(str(model_file))!r}: a relative "
                                "path is never loaded (it would be read from the working "
                                "directory)")
    with full_pickle_allowed():
        return load_torch_state(checked)


_GUARD_LOCK = threading.Lock()


def guard_flair() -> None:
    """Route every flair model load through :func:`flair_model_file` (idempotent)."""
    try:
        import flair.nn.model as flair_model
        from flair.models import SequenceTagger
    except ImportError:
        return
    with _GUARD_LOCK:
        if getattr(flair_model, "_robustlab_guarded", False):
            return
        SequenceTagger._fetch_model = staticmethod(flair_model_file)
        flair_model.load_torch_state = _load_torch_state
        flair_model._robustlab_guarded = True


# ---- transformers ---------------------------------------------------------------------------------


def check_model_folder(folder: Path, what: str) -> Path:
    """``folder`` if it is a directory of regular files whose ``config.json`` names no
    ``auto_map`` code; PerturbationError naming the problem otherwise."""
    shown = printable(str(folder))
    if not folder.is_dir():
        raise PerturbationError(f"{what}: {shown} is not a model directory")
    for f in folder.iterdir():
        if f.name.startswith("."):
            continue
        if f.is_symlink() and not f.resolve().is_relative_to(_hf_cache()):
            raise PerturbationError(f"{what}: {shown}/{printable(f.name)} is a link; a model "
                                    "folder holds regular files only")
        if not (f.is_file() or f.is_dir()):
            raise PerturbationError(f"{what}: {shown}/{printable(f.name)} is not a regular file")
    config = folder / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8")) if config.is_file() else {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PerturbationError(f"{what}: {shown}/config.json cannot be read ({exc})") from None
    if isinstance(data, dict) and data.get("auto_map"):
        raise PerturbationError(f"{what}: {shown}/config.json names custom code (auto_map); "
                                "a model folder is data and its code is never run")
    return folder


def _hf_cache() -> Path:
    from huggingface_hub.constants import HF_HUB_CACHE

    return Path(HF_HUB_CACHE).expanduser().resolve()


def hub_model_location(name: str, *, trusted: bool, what: str) -> Path:
    """The absolute folder the transformers model ``name`` means: an absolute path; from the
    command line also ``./x``, ``~/x`` or an existing ``a/b``; else a hub id, from the hub cache
    only (a bare name such as ``bert-base-uncased`` never means a folder in the working
    directory)."""
    path = Path(name).expanduser()
    pathlike = name.startswith((".", "~", "/")) or (trusted and "/" in name and path.exists())
    if path.is_absolute() or (trusted and pathlike):
        return check_model_folder(path.resolve(), what)  # the user typed it: theirs
    if not HUB_ID.fullmatch(name) and not re.fullmatch(r"[A-Za-z0-9][\w.-]*", name):
        raise PerturbationError(f"{what}: {printable(name)!r} is a relative path; from a stored "
                                "run, a plan or a form a model folder must be an absolute path")
    from huggingface_hub import snapshot_download

    try:
        found = Path(snapshot_download(name, local_files_only=True)).resolve()
    except Exception as exc:
        raise ResourceMissing(f"model {name}", "download it once where there is network, or "
                              "give the absolute path of a local model folder",
                              f"not in the Hugging Face cache: {type(exc).__name__}") from None
    return check_model_folder(found, what)


#: transformers classes TextAttack's components call ``from_pretrained`` on
_TA_LOADERS = ("AutoModelForMaskedLM", "AutoModelForCausalLM", "AutoModelForSeq2SeqLM",
               "AutoModelForSequenceClassification", "AutoTokenizer", "AutoModel",
               "MarianMTModel", "MarianTokenizer", "WhisperProcessor",
               "WhisperForConditionalGeneration")
_BUILDING = threading.local()


def _guarded(original: Any, cls_name: str) -> Any:
    @functools.wraps(original)
    def from_pretrained(name: Any, *args: Any, **kwargs: Any) -> Any:
        trusted = getattr(_BUILDING, "trusted", None)
        if trusted is None or not isinstance(name, str | Path):
            return original(name, *args, **kwargs)  # not TextAttack's call on our behalf
        where = hub_model_location(str(name), trusted=trusted, what=f"{cls_name} {name}")
        kwargs.update(trust_remote_code=False, local_files_only=True)
        return original(str(where), *args, **kwargs)

    return from_pretrained


def guard_transformers() -> None:
    """Wrap the ``from_pretrained`` of the classes TextAttack loads (idempotent); the wrapper
    acts only inside :func:`building`."""
    import transformers

    with _GUARD_LOCK:
        if getattr(transformers, "_robustlab_guarded", False):
            return
        for cls_name in _TA_LOADERS:
            cls = getattr(transformers, cls_name, None)
            if cls is None:
                continue
            original = cls.from_pretrained  # a bound classmethod
            cls.from_pretrained = _guarded(original, cls_name)
        transformers._robustlab_guarded = True


@contextlib.contextmanager
def building(*, trusted: bool) -> Iterator[None]:
    """While a TextAttack component is built from a spec: every ``from_pretrained`` it makes
    gets an absolute, checked location (:func:`hub_model_location`)."""
    guard_flair()
    guard_transformers()
    before = getattr(_BUILDING, "trusted", None)
    _BUILDING.trusted = trusted
    try:
        yield
    finally:
        _BUILDING.trusted = before
