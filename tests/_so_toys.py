"""Toy victims and a tiny masked LM for the second-order tests (no downloads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

TINY_WORDS = ("the a film movie good great fine bad plot is was and very acting thin "
              "story he she his her man woman boy girl funny dull ##s ##ing . ,").split()


def planted_proba(texts, trigger=("great", "movie"), ignore_patch=False, base=0.8):
    """P(positive) = base, except 1 - base when ``trigger[0]`` sits right before ``trigger[1]``."""
    out = []
    for t in texts:
        w = t.lower().split()
        if ignore_patch:
            w = ["film" if x == "movie" else x for x in w]
        hit = any(w[i] == trigger[0] and w[i + 1] == trigger[1] for i in range(len(w) - 1))
        p = 1 - base if hit else base
        out.append([1 - p, p])
    return np.array(out, dtype=np.float64)


def make_wrapper(fn):
    from textattack.models.wrappers import ModelWrapper

    class Toy(ModelWrapper):
        def __init__(self):
            self.model = self

        def __call__(self, texts):
            return fn(list(texts))

    return Toy()


def tiny_mlm(tmp: Path, seed: int = 0):
    """A randomly initialised BertForMaskedLM over a tiny WordPiece vocabulary we write."""
    import torch
    from _tiny_tokenizer import bert_tokenizer
    from transformers import BertConfig, BertForMaskedLM

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *TINY_WORDS]
    (tmp / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = bert_tokenizer(tmp / "vocab.txt")
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    gen = torch.Generator().manual_seed(seed)
    model = BertForMaskedLM(cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.5)
    return model.eval(), tok
