"""A Hugging Face checkpoint as a model to test: loaded with a *trained* classification head
(never a random one), from local files only, without remote code, from a folder of regular
files (:func:`robustlab.models.folder.check_model_folder`). What ``eval``, ``attack`` and
``bias`` accept as ``--model`` besides a folder saved by ``robustlab train``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.folder import check_model_folder


def load_checkpoint(spec: str, device: str | None = None) -> Any:
    """A Hugging Face checkpoint with a *trained* sequence-classification head, as a robustlab
    :class:`~robustlab.models.hf.HFClassifier` ready to predict. Refused (InputError, exit 2)
    when the head is freshly initialised (transformers reports missing weights), so nothing is
    evaluated with a random head; only local files are read (``local_files_only``)."""
    from robustlab.models.hf import HFClassifier

    src = spec[3:] if spec.startswith("hf:") else spec
    local = Path(src).expanduser()
    where = str(local) if local.is_dir() else src
    model, _ = checked_checkpoint(spec, where)
    clf = HFClassifier(checkpoint=where, name=Path(where).name or where, device=device)
    return clf.hold(model, model.config.num_labels)


#: the checkpoint the command's pre-run check loaded, reused by the study's plan (one load)
CHECKED: dict[str, tuple[Any, Any]] = {}


def checked_checkpoint(spec: str, where: str) -> tuple[Any, Any]:
    """(model, tokenizer) of a checkpoint whose classification head was trained, or
    InputError; loaded once per process."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    if Path(where).is_dir():
        check_model_folder(Path(where))
        if not (Path(where) / "config.json").is_file():
            raise InputError(f"--model {spec}: cannot load a sequence-classification checkpoint "
                             "from local files (a directory without robustlab_model.json or "
                             "config.json: pass a directory written by `robustlab train` or a "
                             "HF checkpoint); a hub checkpoint must be in the local cache")
    hit = CHECKED.get(where)
    if hit is not None:
        return hit
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        model, info = AutoModelForSequenceClassification.from_pretrained(
            where, output_loading_info=True, local_files_only=True, trust_remote_code=False)
        tok = AutoTokenizer.from_pretrained(where, local_files_only=True,
                                            trust_remote_code=False)
    except Exception as exc:  # noqa: BLE001 - transformers, safetensors, torch: any damage
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"--model {spec}: cannot load a sequence-classification checkpoint "
                         f"from local files ({first[:200]}); a hub checkpoint must be in the "
                         "local cache") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    missing = sorted(set(info.get("missing_keys") or []) |
                     {m[0] if isinstance(m, tuple | list) else str(m)
                      for m in info.get("mismatched_keys") or []})
    if missing:
        shown = ", ".join(missing[:4]) + (" …" if len(missing) > 4 else "")
        raise InputError(f"--model {spec}: the checkpoint has no trained classification head "
                         f"(transformers initialised {shown} at random); fine-tune it first "
                         f"(robustlab train --model {spec} --dataset … --out DIR) and evaluate "
                         "the saved directory")
    CHECKED.clear()
    CHECKED[where] = (model, tok)
    return model, tok


def check_checkpoint(spec: str) -> None:
    """A checkpoint spec (not a saved robustlab directory) has a trained classification head:
    loaded here, before anything is created, and kept for the study (InputError otherwise)."""
    from robustlab.endpoints.card import is_endpoint
    from robustlab.models.registry import is_saved_model

    if spec.startswith("object:") or is_endpoint(spec) or is_saved_model(spec):
        return
    src = spec[3:] if spec.startswith("hf:") else spec
    local = Path(src).expanduser()
    checked_checkpoint(spec, str(local) if local.is_dir() else src)




def load_trained_model(spec: str, device: str | None = None) -> Any:
    """The model ``spec`` names, trained: a folder saved by ``robustlab train``, a checkpoint
    with a trained head (:func:`load_checkpoint`); a family name gives a new, untrained model
    (the callers that need a trained one refuse family names first)."""
    from robustlab.endpoints.card import is_endpoint

    if is_endpoint(spec):  # eval, check and attack take one (their own predictor)
        raise InputError(f"--model {spec}: a model behind an endpoint is taken by robustlab "
                         "eval, check and attack, not by this command (docs/endpoints.md)")
    from robustlab.models.registry import (
        available_models,
        is_saved_model,
        load_model,
        parse_model_spec,
    )

    if is_saved_model(spec) or parse_model_spec(spec)[0] in available_models():
        return load_model(spec, device=device)
    return load_checkpoint(spec, device)
