"""The metrics of paper 001's five tasks (Moradi & Samwald 2021, Table 1), computed by the
libraries that define them; pure functions of gold values and predictions.

* classification (TREC, SST, SNLI pairs): accuracy, micro- and macro-F1 (scikit-learn);
* NER (CoNLL-2003): entity-level precision/recall/F1 overall and per type (``seqeval``, its
  default conlleval-compatible mode: an ``I-X`` after ``O`` starts an entity, as conlleval does);
* similarity (STS-B): Pearson and Spearman correlation (``scipy.stats``);
* answer selection (WikiQA): precision/recall/F1 of the positive class over all
  (question, sentence) rows (scikit-learn; the "F1-score" paper 001 reports for WikiQA), and the
  ranking metrics MAP and MRR over the questions that have at least one correct sentence (the
  usual WikiQA convention; paper 001 does not report them).

Why MAP/MRR are a few lines here: scikit-learn's ``average_precision_score`` gives one question's
average precision (used below); no well-kept library has MRR on ragged per-question candidate
lists. Ties are resolved the way ``average_precision_score`` resolves them (all candidates
scoring at least a threshold count together), for MRR too: the rank of the first correct
sentence is the number of candidates scoring at least as high as it (the pessimistic rank).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any

__all__ = [
    "answer_selection_metrics",
    "classification_metrics",
    "entity_metrics",
    "similarity_metrics",
]


def _same_length(what: str, a: Sequence[Any], b: Sequence[Any]) -> None:
    if len(a) != len(b):
        raise ValueError(f"{what}: {len(a)} gold values but {len(b)} predictions")
    if len(a) == 0:
        raise ValueError(f"{what}: no examples")


def classification_metrics(gold: Sequence[Hashable], pred: Sequence[Hashable]) -> dict[str, float]:
    """Accuracy, micro-F1 and macro-F1 (macro over the classes present in gold or predictions).

    For single-label classification micro-F1 equals accuracy; both are given because paper 001
    names TREC's measure micro-F1 and SST's accuracy."""
    from sklearn.metrics import accuracy_score, f1_score

    _same_length("classification", gold, pred)
    g, p = [str(x) for x in gold], [str(x) for x in pred]  # 1 and "1" are one class
    return {"accuracy": float(accuracy_score(g, p)),
            "micro_f1": float(f1_score(g, p, average="micro")),
            "macro_f1": float(f1_score(g, p, average="macro", zero_division=0))}


def entity_metrics(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> dict[str, Any]:
    """Entity-level precision, recall and F1 (micro over entities) and per entity type
    ``{"per_type": {"PER": {"precision", "recall", "f1", "support"}, ...}}``, by seqeval."""
    from seqeval.metrics import classification_report, f1_score, precision_score, recall_score

    _same_length("entity F1", gold, pred)
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"entity F1: sentence {i} has {len(g)} gold tags but {len(p)} "
                             "predicted tags")
    g = [list(s) for s in gold]
    p = [list(s) for s in pred]
    report = classification_report(g, p, output_dict=True, zero_division=0)
    per_type = {k: {"precision": float(v["precision"]), "recall": float(v["recall"]),
                    "f1": float(v["f1-score"]), "support": int(v["support"])}
                for k, v in report.items() if not k.endswith(" avg")}
    return {"precision": float(precision_score(g, p, zero_division=0)),
            "recall": float(recall_score(g, p, zero_division=0)),
            "f1": float(f1_score(g, p, zero_division=0)),
            "per_type": dict(sorted(per_type.items()))}


def similarity_metrics(gold: Sequence[float], pred: Sequence[float]) -> dict[str, float]:
    """Pearson's r and Spearman's rho of predicted against gold scores (scipy). NaN when either
    side is constant (a correlation is undefined there; scipy says so with a warning)."""
    import warnings

    import numpy as np
    from scipy.stats import pearsonr, spearmanr

    _same_length("similarity", gold, pred)
    g, p = np.asarray(gold, dtype=float), np.asarray(pred, dtype=float)
    if not (np.isfinite(g).all() and np.isfinite(p).all()):
        raise ValueError("similarity: scores must be finite numbers")
    if len(g) < 2 or np.ptp(g) == 0 or np.ptp(p) == 0:
        return {"pearson": math.nan, "spearman": math.nan}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"pearson": float(pearsonr(g, p)[0]), "spearman": float(spearmanr(g, p)[0])}


def answer_selection_metrics(question_ids: Sequence[Hashable], gold: Sequence[int],
                             scores: Sequence[float], threshold: float = 0.5) -> dict[str, Any]:
    """F1 (precision, recall) of the positive class over rows, a row predicted positive when
    its score is ``>= threshold``; MAP and MRR over the questions with a correct sentence.

    ``question_ids[i]``, ``gold[i]`` (0/1) and ``scores[i]`` describe row i; a question's rows
    need not be contiguous."""
    import numpy as np
    from sklearn.metrics import average_precision_score, precision_recall_fscore_support

    _same_length("answer selection", gold, scores)
    if len(question_ids) != len(gold):
        raise ValueError(f"answer selection: {len(question_ids)} question ids for "
                         f"{len(gold)} rows")
    y = np.asarray([int(v) for v in gold])
    if not set(np.unique(y).tolist()) <= {0, 1}:
        raise ValueError("answer selection: gold labels must be 0 or 1")
    s = np.asarray(scores, dtype=float)
    if not np.isfinite(s).all():
        raise ValueError("answer selection: scores must be finite numbers")
    p, r, f, _ = precision_recall_fscore_support(y, (s >= threshold).astype(int), average="binary",
                                                 pos_label=1, zero_division=0)
    groups: dict[Hashable, list[int]] = {}
    for i, q in enumerate(question_ids):
        groups.setdefault(q, []).append(i)
    aps, rrs = [], []
    for rows in groups.values():
        yq, sq = y[rows], s[rows]
        if not yq.any():
            continue
        aps.append(float(average_precision_score(yq, sq)))
        best = sq[yq == 1].max()
        rrs.append(1.0 / int((sq >= best).sum()))
    return {"precision": float(p), "recall": float(r), "f1": float(f),
            "map": float(np.mean(aps)) if aps else math.nan,
            "mrr": float(np.mean(rrs)) if rrs else math.nan,
            "questions": len(groups), "questions_with_answer": len(aps)}
