"""Fast word tokenizer and vocabulary for the from-scratch torch models.

Why a regex and not a library tokenizer: the from-scratch models (TextRNN, BoW, CNN, LSTM,
Transformer) are word-level models in the papers (NeuralClassifier's TextRNN splits on
whitespace; seed 002's models use word embeddings). A regex split that keeps case and
punctuation runs is what lets character-, case- and punctuation-level perturbations reach the
model as distinct tokens. Pretrained models use their own Hugging Face tokenizer (``hf.py``).

Tokenization results are cached per text (bounded), because the learnability grid trains the
same model family hundreds of times on mostly the same sentences.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from robustlab.errors import InputError

PAD, UNK, SEP = "<pad>", "<unk>", "<sep>"
SPECIALS = (PAD, UNK, SEP)
PAD_ID, UNK_ID, SEP_ID = 0, 1, 2

# words (letters/digits/underscore, with inner apostrophes or hyphens) or single other symbols
_TOKEN_RE = re.compile(r"\w+(?:['\-]\w+)*|[^\w\s]")

_CACHE: dict[tuple[str, bool], tuple[str, ...]] = {}
_CACHE_MAX = 400_000


def tokenize(text: str, lowercase: bool = False) -> tuple[str, ...]:
    """Split ``text`` into word and symbol tokens (cached)."""
    key = (text, lowercase)
    toks = _CACHE.get(key)
    if toks is None:
        toks = tuple(_TOKEN_RE.findall(text.lower() if lowercase else text))
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()  # simple bound; refilling is cheap
        _CACHE[key] = toks
    return toks


def tokenize_example(example: str | tuple[str, str] | Sequence[str],
                     lowercase: bool = False) -> tuple[str, ...] | tuple[tuple[str, ...], ...]:
    """A single text -> tokens; a sentence pair (a, b) -> (tokens_a, tokens_b)."""
    if isinstance(example, str):
        return tokenize(example, lowercase)
    if isinstance(example, (tuple, list)) and all(isinstance(t, str) for t in example):
        return tuple(tokenize(t, lowercase) for t in example)
    raise InputError(f"expected a text or a tuple of texts, got {type(example).__name__}: "
                     f"{example!r:.80}")


class Vocab:
    """Token <-> id map with ``<pad>`` = 0, ``<unk>`` = 1, ``<sep>`` = 2 (pair separator)."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.itos: list[str] = list(tokens)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    @classmethod
    def build(cls, token_lists: Iterable[Sequence[str]], max_size: int = 30000,
              min_freq: int = 1) -> Vocab:
        """Most frequent tokens first; ties broken alphabetically so the vocab is deterministic."""
        counts: Counter[str] = Counter()
        for toks in token_lists:
            counts.update(toks)
        for s in SPECIALS:
            counts.pop(s, None)
        ranked = sorted((t for t, c in counts.items() if c >= min_freq),
                        key=lambda t: (-counts[t], t))
        return cls([*SPECIALS, *ranked[: max(0, max_size - len(SPECIALS))]])

    def ids(self, tokens: Sequence[str]) -> list[int]:
        get = self.stoi.get
        return [get(t, UNK_ID) for t in tokens]

    def to_json(self) -> list[str]:
        return list(self.itos)


def flat_tokens(tok: Any, max_len: int) -> list[str]:
    """Tokens of one example as a flat list truncated to ``max_len``; the sides of a pair are
    joined with ``<sep>`` and each truncated to an equal share, so both sides reach the model."""
    if tok and isinstance(tok[0], tuple):  # a pair / tuple of token tuples
        n = len(tok)
        per = max(1, (max_len - (n - 1)) // n)
        out: list[str] = []
        for i, side in enumerate(tok):
            if i:
                out.append(SEP)
            out.extend(side[:per])
        return out[:max_len]
    return list(tok[:max_len])


def encode(examples: Sequence[Any], vocab: Vocab, max_len: int,
           lowercase: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Examples -> (ids matrix [n, L] right-padded with 0, lengths [n]); L = longest (<= max_len).

    An example that tokenizes to nothing becomes a single ``<unk>`` so prediction never fails;
    :func:`check_nonempty` rejects such examples at training time.
    """
    rows = []
    for ex in examples:
        toks = flat_tokens(tokenize_example(ex, lowercase), max_len)
        ids = vocab.ids(toks) if toks else [UNK_ID]
        rows.append(ids)
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    width = int(lengths.max()) if len(rows) else 1
    mat = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        mat[i, : len(r)] = r
    return mat, lengths


def check_nonempty(examples: Sequence[Any], lowercase: bool = False) -> None:
    """Training texts must contain at least one token (an empty one teaches nothing)."""
    for i, ex in enumerate(examples):
        tok = tokenize_example(ex, lowercase)
        empty = (not tok) if isinstance(ex, str) else all(len(t) == 0 for t in tok)
        if empty:
            raise InputError(f"training example {i} has no tokens after tokenization "
                             f"({ex!r:.60}); remove empty or whitespace-only texts")
