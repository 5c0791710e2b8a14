"""From-scratch torch text classifiers: TextRNN, bag-of-words, CNN, LSTM, small Transformer.

TextRNN is the papers' non-pretrained model (000: NeuralClassifier's TextRNN, a bi-GRU); BoW,
CNN, LSTM and the 3-layer/4-head/64-d Transformer are seed 002's base models (trained from random
embeddings here: GloVe is not available offline).

All share one training loop (:class:`TorchClassifier`): a fixed number of Adam steps (the papers'
control: the same steps across all experiments of a study), mini-batches drawn from seeded
permutations, dropout and initialisation seeded inside ``torch.random.fork_rng`` so the global
torch RNG is left untouched, and batched no-grad prediction. Defaults are chosen for speed on a
2-core CPU (the learnability grid trains hundreds of models): see docs/models-and-data.md for the
measured time per training and SST-2 dev accuracy.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from robustlab.data.labels import check_labels
from robustlab.errors import InputError
from robustlab.models.base import TextClassifier
from robustlab.models.device import resolve_device  # re-exported: hf.py and older callers
from robustlab.models.params import TORCH_COMMON, TORCH_DEFAULTS, check_params
from robustlab.models.progress import TrainProgress
from robustlab.models.vocab import (
    PAD_ID,
    Vocab,
    check_nonempty,
    encode,
    flat_tokens,
    tokenize_example,
)

META_FILE = "robustlab_model.json"
WEIGHTS_FILE = "model.safetensors"

#: parameters every torch family accepts (their defaults and allowed values live in
#: :mod:`robustlab.models.params`, torch-free, so specs are checked before anything runs)
COMMON: dict[str, Any] = TORCH_COMMON


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op thread count (restored afterwards)."""
    if not n:
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(old)



def _masked_max(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return h.masked_fill(~mask.unsqueeze(-1), float("-inf")).max(dim=1).values


def _masked_mean(h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(h.dtype)
    return (h * m).sum(1) / m.sum(1).clamp(min=1.0)


# ---- networks ------------------------------------------------------------------------------


class BowNet(nn.Module):
    """Mean of word embeddings -> one hidden layer (seed 002's BoW)."""

    def __init__(self, vocab: int, n_classes: int, p: dict[str, Any]) -> None:
        super().__init__()
        self.emb = nn.EmbeddingBag(vocab, p["embed_dim"], mode="mean", padding_idx=PAD_ID)
        self.mlp = nn.Sequential(nn.Linear(p["embed_dim"], p["hidden"]), nn.ReLU(),
                                 nn.Dropout(p["dropout"]), nn.Linear(p["hidden"], n_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.emb(x))


class RNNNet(nn.Module):
    """Embedding -> (bi)GRU/LSTM/RNN -> masked max pooling over time -> linear."""

    def __init__(self, vocab: int, n_classes: int, p: dict[str, Any]) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, p["embed_dim"], padding_idx=PAD_ID)
        rnn = {"gru": nn.GRU, "lstm": nn.LSTM, "rnn": nn.RNN}[p["cell"]]
        self.rnn = rnn(p["embed_dim"], p["hidden"], num_layers=p["layers"], batch_first=True,
                       bidirectional=bool(p["bidirectional"]))
        self.drop = nn.Dropout(p["dropout"])
        self.out = nn.Linear(p["hidden"] * (2 if bool(p["bidirectional"]) else 1), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = x != PAD_ID
        h, _ = self.rnn(self.drop(self.emb(x)))
        return self.out(self.drop(_masked_max(h, mask)))


class CNNNet(nn.Module):
    """Kim (2014): parallel 1-d convolutions, max-over-time pooling, dropout, linear."""

    def __init__(self, vocab: int, n_classes: int, p: dict[str, Any]) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, p["embed_dim"], padding_idx=PAD_ID)
        self.kernels = tuple(int(k) for k in p["kernel_sizes"])
        self.convs = nn.ModuleList(nn.Conv1d(p["embed_dim"], p["hidden"], k, padding=k - 1)
                                   for k in self.kernels)
        self.drop = nn.Dropout(p["dropout"])
        self.out = nn.Linear(p["hidden"] * len(self.kernels), n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.drop(self.emb(x)).transpose(1, 2)  # (B, E, L)
        pooled = [F.relu(conv(e)).max(dim=2).values for conv in self.convs]
        return self.out(self.drop(torch.cat(pooled, dim=1)))


class TransformerNet(nn.Module):
    """Small Transformer encoder (seed 002: 3 layers, 4 heads, 64 hidden), mean pooling."""

    def __init__(self, vocab: int, n_classes: int, p: dict[str, Any]) -> None:
        super().__init__()
        d = p["embed_dim"]
        self.emb = nn.Embedding(vocab, d, padding_idx=PAD_ID)
        self.pos = nn.Embedding(p["max_len"] + 1, d)
        layer = nn.TransformerEncoderLayer(d, p["heads"], dim_feedforward=p["hidden"] * 2,
                                           dropout=p["dropout"], batch_first=True)
        self.enc = nn.TransformerEncoder(layer, p["layers"], enable_nested_tensor=False)
        self.out = nn.Linear(d, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = x != PAD_ID
        pos = torch.arange(x.shape[1], device=x.device).unsqueeze(0)
        h = self.enc(self.emb(x) + self.pos(pos), src_key_padding_mask=~mask)
        return self.out(_masked_mean(h, mask))


# ---- the estimator ---------------------------------------------------------------------------


class TorchClassifier(TextClassifier):
    """Shared estimator logic; subclasses set ``family``, ``defaults`` and ``net``."""

    defaults: ClassVar[dict[str, Any]] = {}
    net: ClassVar[type[nn.Module]]

    def __init__(self, **params: Any) -> None:
        allowed = {**COMMON, **self.defaults}
        # unknown names and values out of range: one InputError here, not a torch traceback
        for k, v in {**allowed, **check_params(self.family, params)}.items():
            setattr(self, k, v)

    @classmethod
    def param_defaults(cls) -> dict[str, Any]:
        return {**COMMON, **cls.defaults}

    def get_params(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.param_defaults()}

    def _p(self) -> dict[str, Any]:
        return self.get_params()

    #: parameters that change speed, not results: left out of :meth:`model_id`
    RUNTIME_ONLY: ClassVar[tuple[str, ...]] = ("num_threads", "predict_batch_size", "device")

    def model_id(self) -> str:
        """Stable identifier for signatures: family + every parameter that affects results."""
        params = ",".join(f"{k}={v}" for k, v in sorted(self.get_params().items())
                          if k not in self.RUNTIME_ONLY)
        return f"{self.family}({params})"

    # -- training --

    def fit(self, texts: Sequence[Any], labels: Sequence[int], *,
            steps: int | None = None) -> TorchClassifier:
        texts = list(texts)
        y = check_labels(labels, len(texts), where=f"{self.family}.fit")
        steps = check_params(self.family, {"steps": self.steps if steps is None else steps}
                             )["steps"]
        check_nonempty(texts, self.lowercase)
        toks = (flat_tokens(tokenize_example(t, self.lowercase), self.max_len) for t in texts)
        self.vocab_ = Vocab.build(toks, self.max_vocab, self.min_freq)
        self.n_classes_ = int(y.max()) + 1
        X, _ = self._encode(texts)
        dev = resolve_device(self.device)
        self.device_ = str(dev)
        with torch_threads(self.num_threads), seeded_rngs(self.seed, dev):
            self.model_ = self.net(len(self.vocab_), self.n_classes_, self._p()).to(dev)
            self._train(torch.from_numpy(X), torch.from_numpy(y), steps, dev)
        self.model_.eval()
        self.steps_ = steps
        return self

    def _encode(self, texts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
        X, lengths = encode(texts, self.vocab_, self.max_len, self.lowercase)
        if X.shape[1] < self._min_width():
            X = np.pad(X, ((0, 0), (0, self._min_width() - X.shape[1])))
        return X, lengths

    def _min_width(self) -> int:
        return 1

    def _train(self, X: torch.Tensor, y: torch.Tensor, steps: int, dev: torch.device) -> None:
        model = self.model_
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        rng = np.random.default_rng(self.seed)
        lengths = (X != PAD_ID).sum(1).numpy()
        batches = length_batches(rng, lengths, min(int(self.batch_size), len(y)))
        self.losses_: list[float] = []
        bar = TrainProgress(steps, f"training {self.family}", enabled=self.show_progress)
        for step in range(1, steps + 1):
            idx = torch.from_numpy(next(batches))
            width = max(int(lengths[idx].max()), self._min_width())
            xb, yb = X[idx, :width].to(dev), y[idx].to(dev)
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            self.losses_.append(float(loss.detach()))
            bar.update(step, self.losses_[-1])
        bar.close()

    # -- prediction --

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        if not hasattr(self, "model_"):
            raise InputError(f"{self.family}: the model is not trained; call fit() or load()")
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.n_classes_), dtype=np.float64)
        X, lengths = self._encode(texts)
        order = np.argsort(lengths, kind="stable")
        out = np.empty((len(texts), self.n_classes_), dtype=np.float64)
        dev = torch.device(self.device_)
        bs = int(self.predict_batch_size)
        self.model_.eval()
        with torch_threads(self.num_threads), torch.inference_mode():
            for s in range(0, len(texts), bs):
                idx = order[s: s + bs]
                width = max(int(lengths[idx].max()), self._min_width())
                xb = torch.from_numpy(X[idx, :width]).to(dev)
                out[idx] = torch.softmax(self.model_(xb).double(), dim=-1).cpu().numpy()
        return out

    # -- persistence --

    def save(self, directory: str | os.PathLike[str]) -> None:
        from safetensors.torch import save_file

        from robustlab.models.folder import saving
        from robustlab.outputs import write_json

        if not hasattr(self, "model_"):
            raise InputError(f"{self.family}: nothing to save, the model is not trained")
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        state = {k: v.detach().cpu().contiguous() for k, v in self.model_.state_dict().items()}
        with saving(d / WEIGHTS_FILE):
            save_file(state, str(d / WEIGHTS_FILE))
        write_json(d / META_FILE, {"family": self.family, "params": self.get_params(),
                                   "n_classes": self.n_classes_, "steps": self.steps_,
                                   "vocab": self.vocab_.to_json()})

    @classmethod
    def load(cls, directory: str | os.PathLike[str], device: str | None = None,
             meta: dict[str, Any] | None = None) -> TorchClassifier:
        """A saved model. ``meta`` is its metadata as :func:`robustlab.models.registry.
        load_saved` read and checked it (read here when None); the weights' shapes are
        compared with the network it describes before anything is allocated."""
        from safetensors.torch import load_file

        d = Path(directory)
        if meta is None:
            from robustlab.models.folder import read_meta
            meta = read_meta(d)
        where = d / META_FILE
        if meta.get("family") != cls.family:
            raise InputError(f"{d}: holds a {meta.get('family')!r} model, not {cls.family!r}")
        params = {k: tuple(v) if isinstance(v, list) else v for k, v in meta["params"].items()}
        try:
            obj = cls(**params)  # JSON turned tuples (kernel_sizes) into lists
        except (TypeError, ValueError, InputError) as exc:
            raise InputError(f"{where}: its params do not make a {cls.family} model "
                             f"({str(exc).splitlines()[0][:200]})") from None
        if device is not None:
            obj.device = device  # runtime choice: where to run, not what was trained
        obj.vocab_ = Vocab(meta["vocab"])
        obj.n_classes_ = int(meta["n_classes"])
        obj.steps_ = int(meta.get("steps", obj.steps))
        weights = d / WEIGHTS_FILE
        with torch.device("meta"):  # shapes only: nothing allocated from the metadata yet
            shapes = {k: tuple(v.shape) for k, v in cls.net(
                len(obj.vocab_), obj.n_classes_, obj._p()).state_dict().items()}
        stored = weight_shapes(weights)
        if stored != shapes:
            diff = sorted(k for k in set(stored) | set(shapes) if stored.get(k) != shapes.get(k))
            k = diff[0]
            raise InputError(f"{weights}: the weights do not match {where} ({k}: "
                             f"{shapes.get(k)} from the metadata, {stored.get(k)} stored"
                             f"{f'; {len(diff) - 1} more' if len(diff) > 1 else ''})")
        dev = resolve_device(obj.device)
        obj.device_ = str(dev)
        obj.model_ = cls.net(len(obj.vocab_), obj.n_classes_, obj._p())
        obj.model_.load_state_dict(load_file(str(weights)))
        obj.model_.to(dev).eval()
        return obj


def weight_shapes(path: Path) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor of a safetensors file, read from its header only
    (nothing allocated); a file that is not valid safetensors is one InputError naming it."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), framework="pt") as f:
            return {k: tuple(f.get_slice(k).get_shape()) for k in f.keys()}  # noqa: SIM118
    except (SafetensorError, OSError, ValueError) as exc:
        raise InputError(f"{path}: not valid safetensors weights "
                         f"({str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__})"
                         "; the model folder is damaged: train the model again") from None


def length_batches(rng: np.random.Generator, lengths: np.ndarray, bs: int,
             pool: int = 50) -> Iterator[np.ndarray]:
    """Endless seeded mini-batches of indices, bucketed by length.

    Each epoch is a random permutation cut into pools of ``pool`` batches; inside a pool the
    examples are sorted by length before being cut into batches, and the batch order is
    shuffled. Batches then hold similar lengths, so little time goes into padding (the RNNs'
    cost grows with the longest example of a batch), while every example is still seen once
    per epoch in a random context.
    """
    n = len(lengths)
    while True:
        perm = rng.permutation(n)
        epoch: list[np.ndarray] = []
        for s in range(0, n, bs * pool):
            chunk = perm[s: s + bs * pool]
            chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
            epoch.extend(chunk[i: i + bs] for i in range(0, len(chunk), bs))
        full = [b for b in epoch if len(b) == bs] or epoch
        for j in rng.permutation(len(full)):
            yield full[j]


@contextmanager
def seeded_rngs(seed: int, dev: torch.device) -> Iterator[None]:
    """Seed torch's RNG for init and dropout without leaking the change to the caller."""
    devices = [dev.index or 0] if dev.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(int(seed))
        yield


class TextRNN(TorchClassifier):
    """The papers' non-pretrained model: embedding + bidirectional RNN + max pooling.

    NeuralClassifier's TextRNN is a bi-GRU; here the default cell is an LSTM because torch's
    CPU GRU is ~10x slower to train than its fused LSTM (measured: 79 s vs 6 s for 300 steps on
    SST-2), and the learnability grid trains hundreds of these. ``cell=gru`` restores the GRU.
    """

    family = "textrnn"
    defaults: ClassVar[dict[str, Any]] = TORCH_DEFAULTS["textrnn"]
    net = RNNNet


class BoW(TorchClassifier):
    family = "bow"
    defaults: ClassVar[dict[str, Any]] = TORCH_DEFAULTS["bow"]
    net = BowNet


class CNN(TorchClassifier):
    family = "cnn"
    defaults: ClassVar[dict[str, Any]] = TORCH_DEFAULTS["cnn"]
    net = CNNNet

    def _min_width(self) -> int:
        return max(int(k) for k in self.kernel_sizes)


class LSTM(TorchClassifier):
    """Seed 002's LSTM: one unidirectional LSTM layer, 100 hidden, max pooling."""

    family = "lstm"
    defaults: ClassVar[dict[str, Any]] = TORCH_DEFAULTS["lstm"]
    net = RNNNet


class Transformer(TorchClassifier):
    """Seed 002's small Transformer: 3 layers, 4 heads, 64 hidden."""

    family = "transformer"
    defaults: ClassVar[dict[str, Any]] = TORCH_DEFAULTS["transformer"]
    net = TransformerNet


FAMILIES: dict[str, type[TorchClassifier]] = {
    c.family: c for c in (TextRNN, BoW, CNN, LSTM, Transformer)
}
