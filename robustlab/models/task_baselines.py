"""Fast, non-pretrained CPU baselines for the tasks beyond single texts (robustlab.tasks), for
tests and for a first look at a dataset in seconds; scikit-learn does the learning.

* :class:`FeatureTagger` (NER): a per-token logistic regression over the word, its shape,
  prefix/suffix and its neighbours (``DictVectorizer``), the classic maximum-entropy tagger;
  a stray ``I-X`` is read as ``B-X`` so the output is valid IOB2.
* :class:`BowPairClassifier` (pairs, SNLI) and :class:`BowPairScorer` (similarity, STS-B):
  hashed bags of words of both texts combined as ``u*v`` and ``|u-v|`` plus word-overlap
  features, into a logistic regression or a ridge regression.
* :class:`OverlapRanker` (answer selection, WikiQA): the word-count baseline of Yang et al.
  2015 — how many of the question's non-stopwords a sentence has, plain and IDF-weighted — into a
  logistic regression with balanced class weights (5 % of WikiQA's sentences answer).

Single-text classification has its baselines already (``--model bow``, ``textrnn``, ...).
``save``/``load`` write JSON and ``.npy`` arrays read with ``allow_pickle=False`` (data never
becomes code).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.errors import InputError

__all__ = ["BASELINE_TASKS", "BowPairClassifier", "BowPairScorer", "FeatureTagger",
           "OverlapRanker", "baseline_class"]

#: the same file name as every saved robustlab model; it names the family and the task
META_FILE = "robustlab_model.json"
#: each baseline family and the task it does (``robustlab train --task T --model FAMILY``)
BASELINE_TASKS = {"feature-tagger": "ner", "bow-pair-classifier": "pair",
                  "bow-pair-scorer": "similarity", "overlap-ranker": "answer-selection"}
_WORD = re.compile(r"\w+")


def _shape(word: str) -> str:
    s = re.sub(r"[A-Z]", "X", word)
    s = re.sub(r"[a-z]", "x", s)
    s = re.sub(r"\d", "d", s)
    return re.sub(r"(.)\1+", r"\1\1", s)  # "Xxxxx" -> "Xxx"


def _token_features(tokens: Sequence[str], i: int) -> dict[str, Any]:
    w = tokens[i]
    f = {"w=" + w.lower(): 1, "shape=" + _shape(w): 1, "suf3=" + w[-3:].lower(): 1,
         "pre3=" + w[:3].lower(): 1, "title": w.istitle(), "upper": w.isupper(),
         "digit": any(c.isdigit() for c in w), "bias": 1}
    for k, name in ((-1, "prev"), (1, "next")):
        j = i + k
        if 0 <= j < len(tokens):
            f[f"{name}=" + tokens[j].lower()] = 1
            f[f"{name}shape=" + _shape(tokens[j])] = 1
        else:
            f[f"{name}=<edge>"] = 1
    return f


def _save(directory: str | os.PathLike[str], family: str, params: dict[str, Any],
          arrays: dict[str, np.ndarray], extra: dict[str, Any]) -> None:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    for name, arr in arrays.items():
        np.save(d / f"{name}.npy", np.asarray(arr), allow_pickle=False)
    task = BASELINE_TASKS[family]
    (d / META_FILE).write_text(json.dumps({"family": family, "task": task, "params": params,
                                           **extra},
                                          indent=1), encoding="utf-8")


def _load(directory: str | os.PathLike[str], family: str,
          names: Sequence[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    d = Path(directory)
    try:
        meta = json.loads((d / META_FILE).read_text(encoding="utf-8"))
        arrays = {n: np.load(d / f"{n}.npy", allow_pickle=False) for n in names}
    except (OSError, ValueError) as exc:
        raise InputError(f"{d}: not a saved {family} model ({exc})") from None
    if meta.get("family") != family:
        raise InputError(f"{d}: holds a {meta.get('family')!r} model, not {family}")
    return meta, arrays


def _linear(kind: str, coef: np.ndarray, intercept: np.ndarray, classes: Any = None) -> Any:
    """A fitted scikit-learn linear model rebuilt from its arrays."""
    from sklearn.linear_model import LogisticRegression, Ridge

    model = LogisticRegression() if kind == "logistic" else Ridge()
    model.coef_, model.intercept_ = coef, intercept
    model.n_features_in_ = coef.shape[-1]
    if classes is not None:
        model.classes_ = np.asarray(classes)
    return model


class FeatureTagger:
    """A maximum-entropy NER tagger (module docstring)."""

    family: ClassVar[str] = "feature-tagger"

    def __init__(self, C: float = 1.0, max_iter: int = 300, seed: int = 0) -> None:
        self.C = C
        self.max_iter = max_iter
        self.seed = seed

    def fit(self, token_lists: Sequence[Sequence[str]],
            tag_lists: Sequence[Sequence[str]]) -> FeatureTagger:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression

        feats = [_token_features(t, i) for t in token_lists for i in range(len(t))]
        y = [tag for s in tag_lists for tag in s]
        if len(feats) != len(y) or not y:
            raise InputError(f"{self.family}: {len(feats)} tokens for {len(y)} tags")
        self.vectorizer_ = DictVectorizer()
        x = self.vectorizer_.fit_transform(feats)
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter,
                                         random_state=self.seed).fit(x, y)
        return self

    def predict_tags(self, token_lists: Sequence[Sequence[str]]) -> list[tuple[str, ...]]:
        from robustlab.tasks.align import entities

        feats = [_token_features(t, i) for t in token_lists for i in range(len(t))]
        if not feats:
            return [() for _ in token_lists]
        flat = list(self.model_.predict(self.vectorizer_.transform(feats)))
        out, k = [], 0
        for toks in token_lists:
            raw = flat[k: k + len(toks)]
            k += len(toks)
            tags = ["O"] * len(raw)
            for kind, a, b in entities(raw):  # conlleval reading: a stray I-X starts an entity
                tags[a:b] = ["B-" + kind] + ["I-" + kind] * (b - a - 1)
            out.append(tuple(tags))
        return out

    def save(self, directory: str | os.PathLike[str]) -> None:
        _save(directory, self.family, {"C": self.C, "max_iter": self.max_iter, "seed": self.seed},
              {"coef": self.model_.coef_, "intercept": self.model_.intercept_},
              {"classes": [str(c) for c in self.model_.classes_],
               "labels": [str(c) for c in self.model_.classes_],
               "features": self.vectorizer_.feature_names_})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> FeatureTagger:
        from sklearn.feature_extraction import DictVectorizer

        meta, arr = _load(directory, cls.family, ("coef", "intercept"))
        self = cls()
        self.vectorizer_ = DictVectorizer()
        self.vectorizer_.feature_names_ = list(meta["features"])
        self.vectorizer_.vocabulary_ = {f: i for i, f in enumerate(meta["features"])}
        self.model_ = _linear("logistic", arr["coef"], arr["intercept"], meta["classes"])
        return self


def _pair_matrix(pairs: Sequence[tuple[str, str]], n_features: int) -> Any:
    from scipy.sparse import csr_matrix, hstack
    from sklearn.feature_extraction.text import HashingVectorizer

    vec = HashingVectorizer(n_features=n_features, binary=True, norm=None, alternate_sign=False)
    u = vec.transform([a for a, _ in pairs])
    v = vec.transform([b for _, b in pairs])
    dense = []
    for a, b in pairs:
        wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
        inter, union = len(wa & wb), len(wa | wb) or 1
        dense.append([inter / union, inter / (len(wa) or 1), inter / (len(wb) or 1),
                      abs(len(wa) - len(wb)) / union])
    return hstack([u.multiply(v), abs(u - v), csr_matrix(np.asarray(dense))]).tocsr()


class BowPairClassifier:
    """Pair classification from hashed bags of words (module docstring)."""

    family: ClassVar[str] = "bow-pair-classifier"

    def __init__(self, n_features: int = 2 ** 16, C: float = 1.0, max_iter: int = 500,
                 seed: int = 0) -> None:
        self.n_features = n_features
        self.C = C
        self.max_iter = max_iter
        self.seed = seed

    def fit(self, pairs: Sequence[tuple[str, str]], labels: Sequence[Any]) -> BowPairClassifier:
        from sklearn.linear_model import LogisticRegression

        if len(pairs) != len(labels) or not pairs:
            raise InputError(f"{self.family}: {len(pairs)} pairs for {len(labels)} labels")
        self.model_ = LogisticRegression(C=self.C, max_iter=self.max_iter, random_state=self.seed)
        self.model_.fit(_pair_matrix(pairs, self.n_features), [str(y) for y in labels])
        self.classes_ = [str(c) for c in self.model_.classes_]
        return self

    def predict_proba(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.model_.predict_proba(_pair_matrix(pairs, self.n_features))

    def save(self, directory: str | os.PathLike[str]) -> None:
        _save(directory, self.family, {"n_features": self.n_features, "C": self.C,
                                       "max_iter": self.max_iter, "seed": self.seed},
              {"coef": self.model_.coef_, "intercept": self.model_.intercept_},
              {"classes": self.classes_, "labels": self.classes_})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> BowPairClassifier:
        meta, arr = _load(directory, cls.family, ("coef", "intercept"))
        self = cls(n_features=int(meta["params"]["n_features"]))
        self.model_ = _linear("logistic", arr["coef"], arr["intercept"], meta["classes"])
        self.classes_ = list(meta["classes"])
        return self


class BowPairScorer:
    """Similarity scores from hashed bags of words (module docstring)."""

    family: ClassVar[str] = "bow-pair-scorer"

    def __init__(self, n_features: int = 2 ** 16, alpha: float = 1.0) -> None:
        self.n_features = n_features
        self.alpha = alpha

    def fit(self, pairs: Sequence[tuple[str, str]], scores: Sequence[float]) -> BowPairScorer:
        from sklearn.linear_model import Ridge

        if len(pairs) != len(scores) or not pairs:
            raise InputError(f"{self.family}: {len(pairs)} pairs for {len(scores)} scores")
        self.model_ = Ridge(alpha=self.alpha).fit(_pair_matrix(pairs, self.n_features),
                                                  np.asarray(scores, dtype=float))
        return self

    def predict_scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.model_.predict(_pair_matrix(pairs, self.n_features))

    def save(self, directory: str | os.PathLike[str]) -> None:
        _save(directory, self.family, {"n_features": self.n_features, "alpha": self.alpha},
              {"coef": self.model_.coef_, "intercept": np.asarray(self.model_.intercept_)}, {})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> BowPairScorer:
        meta, arr = _load(directory, cls.family, ("coef", "intercept"))
        self = cls(n_features=int(meta["params"]["n_features"]))
        self.model_ = _linear("ridge", arr["coef"], arr["intercept"].item())
        return self


class OverlapRanker:
    """Yang et al. 2015's word-count answer selector (module docstring)."""

    family: ClassVar[str] = "overlap-ranker"

    def __init__(self, C: float = 1.0, seed: int = 0) -> None:
        self.C = C
        self.seed = seed

    def _features(self, question: str, sentence: str) -> list[float]:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        q = {w for w in _WORD.findall(question.lower()) if w not in ENGLISH_STOP_WORDS}
        s = set(_WORD.findall(sentence.lower()))
        shared = q & s
        idf = self.idf_
        default = self.default_idf_
        return [len(shared), sum(idf.get(w, default) for w in shared),
                len(shared) / (len(q) or 1)]

    def fit(self, questions: Sequence[tuple[str, Sequence[str]]],
            labels: Sequence[Sequence[int]]) -> OverlapRanker:
        from sklearn.linear_model import LogisticRegression

        sentences = [c for _, cands in questions for c in cands]
        if not sentences or len(questions) != len(labels):
            raise InputError(f"{self.family}: {len(questions)} questions for {len(labels)} "
                             "label lists (need as many, with candidates)")
        df: dict[str, int] = {}
        for s in sentences:
            for w in set(_WORD.findall(s.lower())):
                df[w] = df.get(w, 0) + 1
        n = len(sentences)
        self.idf_ = {w: float(np.log((1 + n) / (1 + c)) + 1) for w, c in df.items()}
        self.default_idf_ = float(np.log(1 + n) + 1)
        x = [self._features(q, c) for q, cands in questions for c in cands]
        y = [int(v) for ls in labels for v in ls]
        self.model_ = LogisticRegression(C=self.C, class_weight="balanced",
                                         random_state=self.seed).fit(np.asarray(x), y)
        return self

    def predict_candidate_scores(self, questions: Sequence[tuple[str, Sequence[str]]]
                                 ) -> list[list[float]]:
        x = [self._features(q, c) for q, cands in questions for c in cands]
        p = self.model_.predict_proba(np.asarray(x))[:, 1] if x else np.zeros(0)
        out, k = [], 0
        for _, cands in questions:
            out.append([float(v) for v in p[k: k + len(cands)]])
            k += len(cands)
        return out

    def save(self, directory: str | os.PathLike[str]) -> None:
        _save(directory, self.family, {"C": self.C, "seed": self.seed},
              {"coef": self.model_.coef_, "intercept": self.model_.intercept_},
              {"idf": self.idf_, "default_idf": self.default_idf_})

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> OverlapRanker:
        meta, arr = _load(directory, cls.family, ("coef", "intercept"))
        self = cls()
        self.idf_ = {str(k): float(v) for k, v in meta["idf"].items()}
        self.default_idf_ = float(meta["default_idf"])
        self.model_ = _linear("logistic", arr["coef"], arr["intercept"], [0, 1])
        return self


def baseline_class(family: str) -> type:
    """The baseline class of a family name in :data:`BASELINE_TASKS`."""
    return {c.family: c for c in (FeatureTagger, BowPairClassifier, BowPairScorer,
                                  OverlapRanker)}[family]
