"""Loading a trained model for a task of :mod:`robustlab.tasks` (``robustlab eval`` on NER,
pairs, similarity, answer selection), and saying which task a model folder is for.

A model folder is data: its task is read from JSON (``robustlab_model.json``'s ``task``, the
family of a baseline's or task model's metadata, the head named in a checkpoint's
``config.json``), never from code. A folder whose task differs from the data's is refused in
one line before anything is loaded; a checkpoint whose head was never trained is refused by the
loaders (:mod:`robustlab.models.hf_tasks`, :mod:`robustlab.models.checkpoint`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.task_baselines import BASELINE_TASKS  # baseline family -> task

__all__ = ["check_model_task", "declared_task", "load_task_model", "model_tags"]

#: the prefix of a model given from Python (robustlab.runs.inputs.OBJECT)
OBJECT = "object:"
#: robustlab.models.hf_tasks folders: family -> task
HF_TASK_FAMILIES = {"hf-tagger": "ner", "hf-pair-scorer": "similarity"}


def _json(path: Path) -> dict[str, Any]:
    from robustlab.data.files import load_json_bounded

    data = load_json_bounded(path, path.name, max_bytes=50_000_000)
    return data if isinstance(data, dict) else {}


def _folder(spec: str) -> Path | None:
    """The local folder of a model spec (a hub id in the local cache: its snapshot)."""
    if spec.startswith(OBJECT):
        return None
    src = spec[3:] if spec.startswith("hf:") else spec
    local = Path(src).expanduser()
    if local.is_dir():
        return local
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(src, local_files_only=True))
    except Exception:  # noqa: BLE001 - not in the cache: the loader says so
        return None


def declared_task(spec: str) -> tuple[str | None, str]:
    """(the task a model folder is for, what said so): ``robustlab_model.json``'s ``task``,
    a baseline's or task model's family, else its Hugging Face head (token classification ->
    ner; one output or ``problem_type`` regression -> similarity; a sequence classifier ->
    None, it may classify texts or pairs). (None, "") for an object or no folder."""
    from robustlab.models.folder import META_FILE, check_model_folder
    from robustlab.models.hf_tasks import META_FILE as HF_TASK_META
    from robustlab.models.task_baselines import META_FILE as BASELINE_META
    from robustlab.tasks import get_task

    d = _folder(spec)
    if d is None:
        return None, ""
    check_model_folder(d)
    if (d / META_FILE).is_file():
        task = _json(d / META_FILE).get("task")
        if isinstance(task, str):
            return get_task(task).name, f"{d / META_FILE} (task {task!r})"
    for meta, families in ((BASELINE_META, BASELINE_TASKS), (HF_TASK_META, HF_TASK_FAMILIES)):
        if (d / meta).is_file():
            family = _json(d / meta).get("family")
            if family in families:
                return families[family], f"{d.name} (a {family} model)"
    if (d / "config.json").is_file():
        config = _json(d / "config.json")
        arch = " ".join(str(a) for a in config.get("architectures") or [])
        if "ForTokenClassification" in arch:
            return "ner", f"{d.name} (a token-classification head)"
        n = config.get("num_labels", len(config.get("id2label") or {}) or None)
        if "ForSequenceClassification" in arch and (
                n == 1 or config.get("problem_type") == "regression"):
            return "similarity", f"{d.name} (a one-output regression head)"
        if "ForSequenceClassification" not in arch:
            return None, f"config.json names {arch or 'no architecture'}, no task head"
    return None, ""


def _compatible(model_task: str | None, task: str) -> bool:
    if model_task is None:
        return task in ("classification", "pair", "answer-selection")
    return model_task == task or (model_task == "pair" and task == "answer-selection")


def check_model_task(spec: str, task: str) -> None:
    """InputError (one line) when the model ``spec`` names is for another task than the data."""
    model_task, where = declared_task(spec)
    if not _compatible(model_task, task):
        if model_task is None and "no task head" in where:  # a base checkpoint
            raise InputError(f"--model {spec}: {where}, so a {task} head would be drawn at "
                             "random; fine-tune it first (robustlab train --task "
                             f"{task}) and evaluate the saved folder")
        what = model_task or "classification"
        said = f" ({where})" if where else ""
        raise InputError(f"--model {spec}: a {what} model{said} cannot be evaluated on {task} "
                         f"data; use a {task} model, or data of the model's task (the task "
                         "is read from the data file or given by --task)")


class _PairClasses:
    """A Hugging Face pair classifier whose ``id2label`` names its classes."""

    def __init__(self, model: Any, classes: list[str]) -> None:
        self.model = model
        self.classes_ = classes

    def predict_proba(self, pairs: Sequence[Any]) -> Any:
        return self.model.predict_proba(list(pairs))


def load_task_model(spec: str, task: str, device: str | None = None) -> Any:
    """The trained model ``spec`` names, for ``task`` (module docstring); InputError when it
    is for another task or its head was never trained."""
    from robustlab.models import hf_tasks, task_baselines
    from robustlab.models.checkpoint import load_checkpoint
    from robustlab.models.folder import META_FILE, TORCH_FAMILIES
    from robustlab.models.hf_tasks import META_FILE as HF_TASK_META
    from robustlab.models.task_baselines import META_FILE as BASELINE_META

    check_model_task(spec, task)
    d = _folder(spec)
    if d is None:
        raise InputError(f"--model {spec}: no such model folder, and not in the local cache")
    # every robustlab folder's metadata is robustlab_model.json: its family says which kind
    family = _json(d / BASELINE_META).get("family") if (d / BASELINE_META).is_file() else None
    if family in BASELINE_TASKS:
        return task_baselines.baseline_class(family).load(d)
    model_task, _ = declared_task(spec)
    if model_task == "ner":
        return hf_tasks.HFTagger.load(d, device=device or "auto")
    if model_task == "similarity" or (task == "similarity" and not (d / HF_TASK_META).is_file()):
        return hf_tasks.HFPairScorer.load(d, device=device or "auto")
    if (d / META_FILE).is_file() and _json(d / META_FILE).get("family") in (*TORCH_FAMILIES,
                                                                             "hf"):
        from robustlab.models.registry import load_saved

        clf = load_saved(d, device=device)  # a classifier `robustlab train` saved, on pairs
    else:
        clf = load_checkpoint(str(d), device)
    config = _json(d / "config.json") if (d / "config.json").is_file() else {}
    names = config.get("id2label") or {}
    classes = [str(names.get(str(i), "")) for i in range(len(names))]
    if classes and not any(c.upper().startswith("LABEL_") or not c for c in classes):
        return _PairClasses(clf, classes)
    return clf


def model_tags(model: Any) -> list[str] | None:
    """The tags a tagger can predict (HF: its ``id2label``; a baseline: its classes), or None
    when it does not say (an object from Python)."""
    tags = getattr(model, "tags_", None)
    if tags is None:
        tags = getattr(getattr(model, "model_", None), "classes_", None)
    if tags is None and hasattr(model, "pipe"):
        tags = getattr(model, "classes_", None)
    return None if tags is None else [str(t) for t in tags]
