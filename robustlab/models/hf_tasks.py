"""Hugging Face models for the tasks beyond single-text classification (robustlab.tasks):

* :class:`HFTagger` — ``AutoModelForTokenClassification`` for NER: ``fit(token lists, tag
  lists)``, ``predict_tags(token lists)``. Words are split into pieces by the checkpoint's fast
  tokenizer (``is_split_into_words``); a word's tag is learnt and read at its first piece (the
  convention of the transformers token-classification examples).
* :class:`HFPairScorer` — ``AutoModelForSequenceClassification`` with one output and
  ``problem_type="regression"`` (MSE) for similarity: ``fit(pairs, scores)``,
  ``predict_scores(pairs)``.

Sentence-pair classification (SNLI) and answer selection (WikiQA as (question, sentence) pairs,
class 1 = answers) use :class:`robustlab.models.hf.HFClassifier`, which encodes pairs already.

Both follow the estimator rules of :mod:`robustlab.models.base` (parameters in the constructor,
learnt state with trailing underscores, a seed for every random choice) and the fine-tuning
defaults of :mod:`robustlab.models.hf` (AdamW, weight decay 0.01 off biases/LayerNorm, linear
warmup then decay, gradient clipping at 1.0). Prediction runs over length-sorted batches (less
padding) and returns results in input order. Checkpoints load from local folders or the cache
only as transformers resolves them offline, never with ``trust_remote_code``; :meth:`load`
refuses a checkpoint whose task head was not trained (transformers would draw it at random).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.errors import InputError
from robustlab.models.progress import TrainProgress

__all__ = ["HFPairScorer", "HFTagger"]

#: the same file name as every saved robustlab model; it names the family and the task
META_FILE = "robustlab_model.json"


def _decay_groups(model: Any, weight_decay: float) -> list[dict[str, Any]]:
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if p.requires_grad:
            (no_decay if name.endswith("bias") or "LayerNorm" in name or "layer_norm" in name
             else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


class _HFTaskModel:
    """The fine-tuning loop and the load/save shared by the two models."""

    family: ClassVar[str] = ""
    task: ClassVar[str] = ""
    auto_class: ClassVar[str] = ""
    #: steps, loss and ETA on stderr while fitting (``robustlab train`` sets it)
    show_progress: bool = False
    #: inputs tokenised per block when predicting; the next block is tokenised in a thread
    #: while the model runs on this one (:meth:`_encoded_blocks`)
    encode_block: int = 256

    def __init__(self, checkpoint: str, steps: int = 300, lr: float = 5e-5, batch_size: int = 16,
                 max_length: int = 128, weight_decay: float = 0.01, warmup: float = 0.1,
                 seed: int = 0, device: str | None = "auto") -> None:
        self.checkpoint = checkpoint
        self.steps = steps
        self.lr = lr
        self.batch_size = batch_size
        self.max_length = max_length
        self.weight_decay = weight_decay
        self.warmup = warmup
        self.seed = seed
        self.device = device

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in ("checkpoint", "steps", "lr", "batch_size",
                                              "max_length", "weight_decay", "warmup", "seed",
                                              "device")}

    def model_id(self) -> str:
        params = {k: v for k, v in self.get_params().items() if k != "device"}
        return f"{self.family}({','.join(f'{k}={v}' for k, v in sorted(params.items()))})"

    def _check(self) -> None:
        for name in ("steps", "batch_size", "max_length"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{self.family}: {name} must be a positive integer, got {v!r}")
        if not 0 <= self.warmup < 1:
            raise InputError(f"{self.family}: warmup must be in [0, 1), got {self.warmup!r}")

    def _tokenizer(self, path: str) -> Any:
        from transformers import AutoTokenizer

        try:
            tok = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise InputError(f"{self.family}: cannot load a tokenizer from {path!r} ({exc})"
                             ) from None
        if not getattr(tok, "is_fast", False):
            raise InputError(f"{self.family}: {path!r} has no fast tokenizer; word alignment "
                             "needs one (tokenizer.json)")
        return tok

    def _model(self, path: str, **config: Any) -> tuple[Any, dict[str, Any]]:
        import transformers
        from transformers.utils import logging as hf_logging

        cls = getattr(transformers, self.auto_class)
        old = hf_logging.get_verbosity()
        hf_logging.set_verbosity_error()  # the fresh-head notice: fit wants one, load refuses it
        try:
            return cls.from_pretrained(path, trust_remote_code=False, output_loading_info=True,
                                       **config)
        except (OSError, ValueError) as exc:
            raise InputError(f"{self.family}: cannot load {path!r} ({exc})") from None
        finally:
            hf_logging.set_verbosity(old)

    def _encode(self, inputs: Sequence[Any]) -> Any:
        raise NotImplementedError

    def _encodings(self, inputs: list[Any], pretokenized: bool) -> list[Any]:
        """The ``tokenizers.Encoding`` of each input, as ``tokenizer(inputs, truncation=True,
        max_length=...)`` makes them (``inputs``: word lists, or (first, second) pairs).

        Called on a copy of the checkpoint's Rust tokenizer set to truncate the same way: the
        ``transformers`` call around it turned every encoding into Python lists of each field
        and a dict per row, about 20 us per input that held the GIL (on an H200 robustlab added
        ~120 us per input to a ~50 us forward pass). The first call compares the copy's ids,
        type ids and word ids with the ``transformers`` call's on the first and the longest
        inputs, and keeps the ``transformers`` call if any differs (a tokenizer wrapper doing
        more than its Rust tokenizer)."""
        made = getattr(self, "_backend", None)
        if not self._backend_ready():
            longest = sorted(inputs, key=self._size, reverse=True)[:4]  # truncation shows
            made = (self.tokenizer_, self.max_length,
                    self._backend_copy([*inputs[:8], *longest], pretokenized))
            self._backend = made
        if made[2] is not None:
            return made[2].encode_batch(inputs, is_pretokenized=pretokenized)
        return self._wrapped(inputs, pretokenized).encodings

    def _backend_ready(self) -> bool:
        """Whether :meth:`_encodings` has checked its copy for this tokenizer and length."""
        made = getattr(self, "_backend", None)
        return made is not None and made[0] is self.tokenizer_ and made[1] == self.max_length

    def _wrapped(self, inputs: list[Any], pretokenized: bool) -> Any:
        if pretokenized:
            return self.tokenizer_(inputs, is_split_into_words=True, truncation=True,
                                   max_length=self.max_length)
        return self.tokenizer_([a for a, _ in inputs], [b for _, b in inputs], truncation=True,
                               max_length=self.max_length)

    def _backend_copy(self, sample: list[Any], pretokenized: bool) -> Any:
        """A truncating copy of the Rust tokenizer, or None where it would not reproduce the
        ``transformers`` call on ``sample`` (:meth:`_encodings`)."""
        try:
            from tokenizers import Tokenizer

            bt = Tokenizer.from_str(self.tokenizer_.backend_tokenizer.to_str())
            bt.no_padding()
            bt.enable_truncation(self.max_length, strategy="longest_first",
                                 direction=getattr(self.tokenizer_, "truncation_side", "right"))
            mine = bt.encode_batch(sample, is_pretokenized=pretokenized)
        except Exception:  # noqa: BLE001 - any failure: the transformers call is the reference
            return None
        ref = self._wrapped(sample, pretokenized).encodings
        same = ref is not None and all(
            (a.ids, a.type_ids, a.word_ids) == (b.ids, b.type_ids, b.word_ids)
            for a, b in zip(mine, ref, strict=True))
        return bt if same else None

    def _rows(self, encodings: list[Any]) -> list[dict[str, list[int]]]:
        """The model inputs of each encoding (the attention mask is made from the lengths by
        :meth:`_batch`: no padding inside a row)."""
        if "token_type_ids" in self.tokenizer_.model_input_names:
            return [{"input_ids": e.ids, "token_type_ids": e.type_ids} for e in encodings]
        return [{"input_ids": e.ids} for e in encodings]

    def _fit(self, rows: list[dict[str, list[int]]], targets: list[Any]) -> None:
        """Train ``self.model_`` on encoded rows for exactly ``steps`` optimiser steps."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        from robustlab.models.device import resolve_device

        self._check()
        dev = resolve_device(self.device)
        torch.manual_seed(self.seed)
        model = self.model_.to(dev).train()
        opt = torch.optim.AdamW(_decay_groups(model, self.weight_decay), lr=self.lr)
        sched = get_linear_schedule_with_warmup(opt, int(self.warmup * self.steps), self.steps)
        rng = np.random.default_rng(self.seed)
        order: list[int] = []
        losses = []
        bar = TrainProgress(self.steps, f"fine-tuning {self.family} ({self.task})",
                            enabled=self.show_progress)
        for step in range(1, self.steps + 1):
            if len(order) < self.batch_size:
                order += rng.permutation(len(rows)).tolist()
            idx, order = order[: self.batch_size], order[self.batch_size:]
            batch = self._batch([rows[i] for i in idx], [targets[i] for i in idx], dev)
            loss = model(**batch).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.detach())
            bar.update(step, losses[-1].item)  # read (a sync) only when a line is shown
        bar.close()
        self.losses_ = torch.stack(losses).float().cpu().tolist()
        self.steps_ = self.steps
        model.eval()
        self.device_ = dev

    def _batch(self, rows: list[dict[str, list[int]]], targets: list[Any] | None,
               dev: Any) -> dict[str, Any]:
        import torch

        lengths = np.fromiter((len(r["input_ids"]) for r in rows), dtype=np.int64,
                              count=len(rows))
        width = int(lengths.max())
        filled = np.arange(width) < lengths[:, None]
        pad = self.tokenizer_.pad_token_id or 0
        out: dict[str, Any] = {}
        for key in rows[0]:
            # every row's values in one flat array, scattered under the mask: a Python copy
            # per row was ~3 us per input, torch.tensor on padded lists three times that
            arr = np.full((len(rows), width), pad if key == "input_ids" else 0, dtype=np.int64)
            arr[filled] = np.fromiter(chain.from_iterable(r[key] for r in rows), dtype=np.int64,
                                      count=int(lengths.sum()))
            out[key] = torch.from_numpy(arr).to(dev)
        if "attention_mask" in self.tokenizer_.model_input_names:
            out["attention_mask"] = torch.from_numpy(filled.astype(np.int64)).to(dev)
        if targets is not None:
            out["labels"] = self._targets(targets, width, dev)
        return out

    def _targets(self, targets: list[Any], width: int, dev: Any) -> Any:
        raise NotImplementedError

    def _encoded_blocks(self, inputs: Sequence[Any], extra: list[Any]) -> Iterator[list[dict]]:
        """The encoded rows of ``inputs``, ``encode_block`` at a time, each next block tokenised
        in a producer thread while the caller runs the model on this one (a fast tokenizer
        releases the GIL in ``encode_batch``; on an H200 tokenising was about half of the
        predictor's own time, with the GPU idle meanwhile). ``extra`` receives what
        :meth:`_encode` gives beside the rows (a tagger's word ids), in input order."""
        from concurrent.futures import ThreadPoolExecutor

        def encode(a: int) -> tuple[list[dict], list[Any] | None]:
            enc = self._encode(inputs[a: a + self.encode_block])
            return enc if isinstance(enc, tuple) else (enc, None)

        starts = list(range(0, len(inputs), self.encode_block))
        if len(starts) == 1:  # one block: nothing to overlap
            rows, more = encode(0)
            extra.extend(more or [])
            yield rows
            return
        with ThreadPoolExecutor(1, thread_name_prefix="robustlab-tokenise") as pool:
            pending = pool.submit(encode, starts[0])
            for k in range(len(starts)):
                rows, more = pending.result()
                if k + 1 < len(starts):
                    pending = pool.submit(encode, starts[k + 1])
                extra.extend(more or [])
                yield rows

    def _size(self, x: Any) -> int:
        """A cheap stand-in for an input's token count (its characters): the order of
        :meth:`_predict` and the longest inputs of :meth:`_encodings`' check."""
        raise NotImplementedError

    def _predict(self, inputs: Sequence[Any], argmax: bool = False
                 ) -> tuple[list[np.ndarray], list[Any]]:
        """The model's outputs per input (:meth:`_forward`) and what :meth:`_encode` gives
        beside the rows (:meth:`_encoded_blocks`), both in input order.

        The inputs reach the tokeniser ordered by character count, so each block holds inputs
        of about one token count and its length-sorted batches are as tightly padded as a sort
        of all inputs: sorted only within blocks of 256 in input order, NER over 500 CoNLL test
        sentences x 15 calls took 1.29x the bare forward pass over batches sorted as a whole
        (CPU, MiniLM; docs/tasks.md "Speed of the task predictors")."""
        order = sorted(range(len(inputs)), key=lambda i: self._size(inputs[i]))
        ordered = [inputs[i] for i in order]
        if len(ordered) > self.encode_block and not self._backend_ready():
            # the copy's check sees the longest inputs (truncation), which now sit in the last
            # block, not in the first one that would make it
            self._encode([*ordered[:8], *ordered[-4:]])
        extra: list[Any] = []
        outs = self._forward(self._encoded_blocks(ordered, extra), argmax)
        out: list[Any] = [None] * len(inputs)
        more: list[Any] = [None] * len(inputs)
        for k, i in enumerate(order):
            out[i] = outs[k]
            if extra:
                more[i] = extra[k]
        return out, more

    def _forward(self, blocks: Iterable[list[dict[str, list[int]]]], argmax: bool = False
                 ) -> list[np.ndarray]:
        """Logits per row (unpadded; with ``argmax`` the class id per position), in the order
        of the rows given, over length-sorted batches of each block of rows
        (:meth:`_encoded_blocks`; :meth:`_predict` orders the inputs so a block's lengths agree).

        Outputs stay on the device until every batch is queued and are read back once: a read
        per batch made the host wait for each forward pass before building the next batch (on
        an H200, NER over CoNLL test x 15 calls took 3.1x the bare forward pass that way)."""
        import torch

        lengths: list[int] = []
        pending = []
        with torch.inference_mode():
            for rows in blocks:
                base = len(lengths)
                lengths += [len(r["input_ids"]) for r in rows]
                order = sorted(range(len(rows)), key=lambda i: len(rows[i]["input_ids"]))
                for a in range(0, len(order), 64):
                    idx = order[a: a + 64]
                    logits = self.model_(**self._batch([rows[i] for i in idx], None,
                                                       self.device_)).logits
                    pending.append(([base + i for i in idx],
                                    logits.argmax(-1) if argmax else logits.float()))
        out: list[np.ndarray | None] = [None] * len(lengths)
        for idx, t in pending:
            values = t.cpu().numpy()
            for k, i in enumerate(idx):
                out[i] = values[k, : lengths[i]] if values.ndim >= 2 and (
                    argmax or values.ndim == 3) else values[k]
        return out  # type: ignore[return-value]

    def save(self, directory: str | os.PathLike[str]) -> None:
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        from robustlab.models.folder import saving

        with saving(d):
            self.model_.save_pretrained(d, safe_serialization=True)
        self.tokenizer_.save_pretrained(d)
        # the folder is the checkpoint now (it may be written under a temporary name and
        # renamed): the params name only the checkpoint it was fine-tuned from
        params = {k: v for k, v in self.get_params().items() if k not in ("device", "checkpoint")}
        meta = {"family": self.family, "task": self.task, **self._meta(),
                "params": {**params, "base_checkpoint": self.checkpoint},
                "steps": getattr(self, "steps_", self.steps)}
        (d / META_FILE).write_text(json.dumps(meta, indent=1), encoding="utf-8")

    def _meta(self) -> dict[str, Any]:
        """What the saved metadata says beyond family and params (the tag list of a tagger)."""
        return {}

    @classmethod
    def load(cls, directory: str | os.PathLike[str], device: str | None = "auto") -> Any:
        """A model with a trained head: a folder this class saved, or any checkpoint whose
        head transformers finds in the weights (refused when it would be drawn at random)."""
        from robustlab.models.device import resolve_device

        self = cls(str(directory), device=device)
        meta = Path(directory) / META_FILE
        if meta.is_file():  # the saved numbers (max_length ...), read as data and checked
            saved = json.loads(meta.read_text(encoding="utf-8")).get("params", {})
            for key in ("steps", "batch_size", "max_length", "seed"):
                if isinstance(saved.get(key), int):
                    setattr(self, key, saved[key])
            self._check()
        self.tokenizer_ = self._tokenizer(str(directory))
        model, info = self._model(str(directory))
        fresh = [k for k in info.get("missing_keys", []) if "classifier" in k or "score" in k]
        if fresh:
            raise InputError(f"{directory}: its {self.auto_class} head is not in the weights "
                             f"({', '.join(fresh[:3])}); transformers would draw it at random. "
                             "Fine-tune it first")
        self.model_ = model.eval()
        self._from_config(model.config)
        self.device_ = resolve_device(device)
        self.model_.to(self.device_)
        return self

    def _from_config(self, config: Any) -> None:
        pass


class HFTagger(_HFTaskModel):
    """A token classifier for NER (module docstring)."""

    family = "hf-tagger"
    task = "ner"
    auto_class = "AutoModelForTokenClassification"

    def _encode(self, token_lists: Sequence[Sequence[str]]
                ) -> tuple[list[dict], list[list[tuple[int, int]]]]:
        """The rows, and per row the (position, word) of each word's first piece: where its
        tag is learnt and read (a word cut off by ``max_length`` has none)."""
        encodings = self._encodings([list(t) for t in token_lists], pretokenized=True)
        firsts = []
        for e in encodings:
            first, prev = [], None
            for pos, wid in enumerate(e.word_ids):
                if wid is not None and wid != prev:  # a word's pieces are contiguous
                    first.append((pos, wid))
                prev = wid
            firsts.append(first)
        return self._rows(encodings), firsts

    def _size(self, x: Any) -> int:
        return sum(map(len, x)) + len(x)

    def fit(self, token_lists: Sequence[Sequence[str]],
            tag_lists: Sequence[Sequence[str]]) -> HFTagger:
        """Fine-tune on sentences and their tags (the tag set is learnt from them, ``O`` first)."""
        if len(token_lists) != len(tag_lists) or not token_lists:
            raise InputError(f"{self.family}: {len(token_lists)} sentences for "
                             f"{len(tag_lists)} tag sequences (need as many, at least one)")
        tags = sorted({t for s in tag_lists for t in s} - {"O"})
        self.tags_ = ["O", *tags]
        index = {t: i for i, t in enumerate(self.tags_)}
        self.tokenizer_ = self._tokenizer(self.checkpoint)
        self.model_, _ = self._model(
            self.checkpoint, num_labels=len(self.tags_), ignore_mismatched_sizes=True,
            id2label=dict(enumerate(self.tags_)), label2id=index)
        rows, firsts = self._encode(token_lists)
        targets = []
        for r, first, s in zip(rows, firsts, tag_lists, strict=True):
            labels = [-100] * len(r["input_ids"])
            for pos, wid in first:
                labels[pos] = index[s[wid]]
            targets.append(labels)
        self._fit(rows, targets)
        return self

    def _targets(self, targets: list[Any], width: int, dev: Any) -> Any:
        import torch

        return torch.tensor([t + [-100] * (width - len(t)) for t in targets], device=dev)

    def _meta(self) -> dict[str, Any]:
        return {"labels": list(self.tags_)}

    def _from_config(self, config: Any) -> None:
        self.tags_ = [config.id2label[i] for i in range(config.num_labels)]

    def predict_tags(self, token_lists: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        """One tag per word; a word cut off by ``max_length`` gets ``O`` and is counted in
        ``truncated_words_``."""
        if not token_lists:
            return []
        ids, firsts = self._predict(token_lists, argmax=True)
        names = self.tags_
        out, cut = [], 0
        for toks, first, lg in zip(token_lists, firsts, ids, strict=True):
            tags = ["O"] * len(toks)
            row = lg.tolist()
            for pos, wid in first:
                tags[wid] = names[row[pos]]
            cut += len(toks) - len(first)
            out.append(tuple(tags))
        self.truncated_words_ = cut
        return out


class HFPairScorer(_HFTaskModel):
    """A regression head on text pairs for similarity (module docstring)."""

    family = "hf-pair-scorer"
    task = "similarity"
    auto_class = "AutoModelForSequenceClassification"

    def _encode(self, pairs: Sequence[tuple[str, str]]) -> list[dict]:
        return self._rows(self._encodings([(a, b) for a, b in pairs], pretokenized=False))

    def _size(self, x: Any) -> int:
        return len(x[0]) + len(x[1])

    def fit(self, pairs: Sequence[tuple[str, str]], scores: Sequence[float]) -> HFPairScorer:
        if len(pairs) != len(scores) or not pairs:
            raise InputError(f"{self.family}: {len(pairs)} pairs for {len(scores)} scores "
                             "(need as many, at least one)")
        self.tokenizer_ = self._tokenizer(self.checkpoint)
        self.model_, _ = self._model(self.checkpoint, num_labels=1, problem_type="regression",
                                     ignore_mismatched_sizes=True)
        self._fit(self._encode(pairs), [float(s) for s in scores])
        return self

    def _targets(self, targets: list[Any], width: int, dev: Any) -> Any:
        import torch

        return torch.tensor(targets, dtype=torch.float32, device=dev)

    def _from_config(self, config: Any) -> None:
        if config.num_labels != 1:
            raise InputError(f"{self.checkpoint}: a similarity model has one output, this one "
                             f"has {config.num_labels} (a classifier?)")

    def predict_scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0)
        return np.asarray([float(lg[0]) for lg in self._predict(pairs)[0]])
