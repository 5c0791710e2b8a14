"""Segment-level and corpus MT scores through sacreBLEU itself (BLEU, chrF, TER).

robustlab never re-implements a metric: every number comes from sacreBLEU's own metric objects.
What this module adds is speed for the cross-domain use case (many systems × thousands of
segments, all against the *same* references):

* **One metric object per metric, references cached once.** ``sacrebleu.sentence_bleu`` builds a
  new ``BLEU`` object and re-tokenizes and re-counts the reference n-grams for every call. Here
  the references are preprocessed once with sacreBLEU's ``Metric._cache_references`` and reused
  for every system (the references are shared), which is the same ``references=`` caching
  sacreBLEU's constructors offer, shared between the sentence-level and corpus objects.
* **One statistics pass gives both levels.** Per segment, the two calls that
  ``_extract_corpus_statistics`` makes (``_preprocess_segment`` then
  ``_compute_segment_statistics`` with the cached reference info) give the sufficient statistics
  that ``sentence_score`` and ``corpus_score`` compute internally. A sentence score is
  ``_aggregate_and_compute([stats_i])`` on an object built with the sentence-level options
  (``effective_order=True`` for BLEU, as ``sentence_bleu`` does), and the corpus score (and any
  per-domain corpus score) is ``_aggregate_and_compute`` over the selected rows on an object with
  the corpus defaults, exactly what ``corpus_score`` does.
* **Shared hypotheses are scored once** (:meth:`MTScorer.score_many`): same segment, same
  hypothesis, same references → same statistics.
* ``force=True`` on the sentence-level BLEU object only silences sacreBLEU's "tokenized period"
  warning (``sentence_bleu`` uses ``force=False``); it does not change any score.

Both shortcuts call the same sacreBLEU code on the same inputs as the plain loop, so the numbers
are identical; ``tests/test_metrics_mt.py`` asserts equality (``==``, not approximately) against
``sacrebleu.sentence_bleu/sentence_chrf/sentence_ter`` and ``corpus_bleu``. They use sacreBLEU's
private hooks (``_cache_references``, ``_preprocess_segment``, ``_compute_segment_statistics``,
``_aggregate_and_compute``), stable across sacreBLEU 2.x; the parity tests catch any change.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MT_METRICS = ("bleu", "chrf", "ter")
DEFAULT_MT_METRICS = ("bleu", "chrf")


@dataclass
class SystemScores:
    """Per-segment scores of one system (arrays aligned with the segments) and the raw sacreBLEU
    statistics, kept so per-domain / per-subset corpus scores need no re-scoring."""

    system: str
    segment: dict[str, np.ndarray]
    stats: dict[str, list[list[Any]]] = field(repr=False)

    def corpus(self, scorer: MTScorer, idx: Sequence[int] | np.ndarray | None = None
               ) -> dict[str, float]:
        """Corpus score of every metric over all segments or the subset ``idx``."""
        return scorer.corpus_from_stats(self.stats, idx)


class MTScorer:
    """Scores many systems against one shared set of references (see the module docstring).

    ``refs`` is a list of reference streams (``refs[k][i]`` = reference k of segment i), as in
    ``sacrebleu.corpus_bleu``. ``metrics`` ⊆ ``("bleu", "chrf", "ter")``; ``tokenize`` and
    ``lowercase`` are sacreBLEU's BLEU options (default 13a, cased).
    """

    def __init__(self, refs: Sequence[Sequence[str]], metrics: Sequence[str] = DEFAULT_MT_METRICS,
                 tokenize: str | None = None, lowercase: bool = False) -> None:
        unknown = [m for m in metrics if m not in MT_METRICS]
        if unknown:
            raise ValueError(f"unknown MT metric(s) {unknown}; choose from {MT_METRICS}")
        if not refs or not refs[0]:
            raise ValueError("at least one non-empty reference stream is needed")
        self.refs = [list(r) for r in refs]
        self.metrics = tuple(metrics)
        self.tokenize = tokenize
        self.lowercase = lowercase
        self.n_segments = len(self.refs[0])
        self._sentence: dict[str, Any] = {}
        self._corpus: dict[str, Any] = {}
        self._build()

    def _build(self) -> None:
        from sacrebleu.metrics import BLEU, CHRF, TER

        for m in self.metrics:
            if m == "bleu":
                # sentence level: sentence_bleu's options; corpus level: corpus_bleu's defaults
                sent = BLEU(lowercase=self.lowercase, tokenize=self.tokenize, force=True,
                            effective_order=True)
                corp = BLEU(lowercase=self.lowercase, tokenize=self.tokenize, force=True)
            elif m == "chrf":
                sent, corp = CHRF(), CHRF()
            else:
                sent, corp = TER(), TER()
            # Cache the (shared) references once: tokenization + n-gram counting of the refs is
            # then done once for all systems and both levels instead of once per call.
            sent._ref_cache = sent._cache_references(self.refs)
            corp._ref_cache = sent._ref_cache
            corp.num_refs = sent.num_refs
            self._sentence[m], self._corpus[m] = sent, corp

    def score(self, system: str, hyps: Sequence[str]) -> SystemScores:
        """Per-segment scores (and statistics) of one system's hypotheses."""
        return self.score_many({system: hyps})[system]

    def score_many(self, systems: Mapping[str, Sequence[str]]) -> dict[str, SystemScores]:
        """Score several systems; a (segment, hypothesis) pair shared by systems is scored once.

        WMT systems often agree verbatim (ru-en 2022: 13,658 distinct of 20,160 outputs), and
        identical hypothesis + identical references give identical statistics, so deduplicating
        is exact. Each distinct pair goes through the same two sacreBLEU calls that
        ``_extract_corpus_statistics`` makes per segment (``_preprocess_segment`` then
        ``_compute_segment_statistics`` with the cached reference info)."""
        for name, hyps in systems.items():
            if len(hyps) != self.n_segments:
                raise ValueError(f"system {name!r} has {len(hyps)} segments, the references "
                                 f"have {self.n_segments}")
        uniq: dict[tuple[int, str], int] = {}
        where: dict[str, np.ndarray] = {}
        for name, hyps in systems.items():
            where[name] = np.fromiter((uniq.setdefault((i, h), len(uniq))
                                       for i, h in enumerate(hyps)), dtype=np.int64,
                                      count=self.n_segments)
        pairs = list(uniq)
        u_stats: dict[str, list[list[Any]]] = {}
        u_score: dict[str, np.ndarray] = {}
        for m in self.metrics:
            sent = self._sentence[m]
            cache = sent._ref_cache
            st = [sent._compute_segment_statistics(sent._preprocess_segment(h), cache[i])
                  for i, h in pairs]
            u_stats[m] = st
            # exactly Metric.sentence_score's last step, minus re-extracting the statistics
            u_score[m] = np.fromiter((sent._aggregate_and_compute([s]).score for s in st),
                                     dtype=float, count=len(st))
        out = {}
        for name, w in where.items():
            seg = {m: u_score[m][w] for m in self.metrics}
            stats = {m: [u_stats[m][j] for j in w] for m in self.metrics}
            out[name] = SystemScores(system=name, segment=seg, stats=stats)
        return out

    def corpus_from_stats(self, stats: dict[str, list[list[Any]]],
                          idx: Sequence[int] | np.ndarray | None = None) -> dict[str, float]:
        out = {}
        for m in self.metrics:
            st = stats[m] if idx is None else [stats[m][int(i)] for i in idx]
            out[m] = float(self._corpus[m]._aggregate_and_compute(st).score) if st else float("nan")
        return out

    def signatures(self) -> dict[str, str]:
        """sacreBLEU signatures (short form) of the corpus scores, e.g. ``nrefs:1|case:mixed|…``."""
        return {m: self._corpus[m].get_signature().format(short=True) for m in self.metrics}

    def signature_long(self) -> dict[str, str]:
        return {m: self._corpus[m].get_signature().format(short=False) for m in self.metrics}


def corpus_bleu(hyps: Sequence[str], refs: Sequence[Sequence[str]], **kwargs: Any) -> float:
    """Corpus BLEU through sacreBLEU (a convenience for parity checks)."""
    import sacrebleu

    return float(sacrebleu.corpus_bleu(list(hyps), [list(r) for r in refs], **kwargs).score)


def plain_sentence_bleu(hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> np.ndarray:
    """The reference loop: ``sacrebleu.sentence_bleu`` per segment (slow; for tests/bench)."""
    import sacrebleu

    return np.array([sacrebleu.sentence_bleu(h, [r[i] for r in refs]).score
                     for i, h in enumerate(hyps)], dtype=float)
