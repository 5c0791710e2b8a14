"""The five tasks of paper 001 (Moradi & Samwald 2021, Table 1), plus SNLI's pairs:

============================  ===========================  ==============================
task (aliases)                example / file format        prediction / metrics
============================  ===========================  ==============================
classification (sentiment)    one text / label-text, TSV…  class or probability row;
                                                           accuracy, micro-F1, macro-F1
pair (nli, snli)              two texts / snli             the same
similarity (sts)              two texts / sts, score 0-5   a score; Pearson, Spearman
ner (conll)                   tokens + IOB2 tags / conll   a tag sequence; entity F1
answer-selection (wikiqa)     question + candidates /      a score per candidate; F1 of
                              wikiqa                       the positive class, MAP, MRR
============================  ===========================  ==============================
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from robustlab.tasks.align import IOB2_TAG, carry_tags, entities
from robustlab.tasks.base import FIELDS, Task, finite
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample
from robustlab.tasks.formats import (
    Corpus,
    read_conll,
    read_labelled_texts,
    read_snli,
    read_sts,
    read_wikiqa,
)
from robustlab.tasks.perturb import (
    Perturbed,
    TaskError,
    alignment_kind,
    perturb_tagged,
    perturb_texts,
)

__all__ = ["AnswerSelection", "Classification", "Ner", "PairClassification", "Similarity"]



def _check_format(task: Task, fmt: str | None) -> str:
    if fmt is None:
        return task.formats[0]
    if fmt not in task.formats:
        raise TaskError(f"{task.name}: format {fmt!r} is not one of {', '.join(task.formats)}")
    return fmt


class Classification(Task):
    """Single texts with a class (TREC, SST)."""

    name = "classification"
    aliases = ("sentiment", "text-classification")
    summary = "one text, one class (TREC question types, SST sentiment)"
    formats = ("label-text", "tsv", "csv", "jsonl")
    prediction = "a class (name or index) or a row of class probabilities"
    metric_names = ("accuracy", "micro_f1", "macro_f1")
    paper_metric = "micro_f1 (TREC) / accuracy (SST)"
    predict_method = "predict_proba"

    def model_inputs(self, examples: Sequence[Any]) -> list[Any]:
        return [ex.text for ex in examples]

    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        return read_labelled_texts(path, fmt, **options)

    def gold(self, examples: Sequence[Any]) -> list[str]:
        return [str(ex.label) for ex in examples]

    @staticmethod
    def classes(examples: Sequence[Any]) -> list[str]:
        """The class names in index order: integers by value, names sorted (as
        :mod:`robustlab.data.datasets` maps string labels to indexes)."""
        names = {str(ex.label) for ex in examples}
        if all(re.fullmatch(r"-?\d+", n) for n in names):
            return [str(i) for i in sorted(int(n) for n in names)]
        return sorted(names)

    def check_predictions(self, examples: Sequence[Any], predictions: Sequence[Any],
                          classes: Sequence[str] | None = None) -> list[str]:
        """Each prediction as a class name; ``classes`` (default: the examples' classes) gives
        the names of a probability row's or an index's positions."""
        if len(predictions) != len(examples):
            raise TaskError(f"{self.name}: {len(predictions)} predictions for {len(examples)} "
                            "examples")
        names = list(classes) if classes is not None else self.classes(examples)
        return [self._class(p, names, i) for i, p in enumerate(predictions)]

    def _class(self, p: Any, names: list[str], i: int) -> str:
        if isinstance(p, str):
            return p
        if isinstance(p, bool):
            raise TaskError(f"{self.name}: prediction {i} is {p!r}, not a class")
        if isinstance(p, Sequence) or hasattr(p, "__len__"):
            row = [finite(v, f"{self.name}: prediction {i}") for v in p]
            if len(row) != len(names):
                raise TaskError(f"{self.name}: prediction {i} has {len(row)} probabilities for "
                                f"{len(names)} classes ({', '.join(names)}); give the model's "
                                "class names")
            return names[max(range(len(row)), key=row.__getitem__)]
        try:
            k = int(p)
        except (TypeError, ValueError):
            raise TaskError(f"{self.name}: prediction {i} ({p!r}) is not a class") from None
        if k != p or not 0 <= k < len(names):
            raise TaskError(f"{self.name}: prediction {i} ({p!r}) is not a class index "
                            f"0..{len(names) - 1}")
        return names[k]

    def metrics(self, examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, Any]:
        from robustlab.metrics.tasks import classification_metrics

        return classification_metrics(self.gold(examples),
                                      self.check_predictions(examples, predictions))

    def failed(self, before: Any, after: Any, perturbed: Perturbed | None = None,
               tolerance: float | None = None) -> bool:
        """A changed class."""
        return str(before) != str(after)

    def perturb(self, examples: Sequence[Any], perturbation: Any, seed: int = 0,
                field: str | None = None) -> list[Perturbed]:
        return self._perturb_fields(examples, perturbation, seed, ["text"], field)


class _TextPairs:
    """What pair classification and similarity share: a model reads (first, second) and a
    perturbation changes the fields ``--perturb-field`` names (default both)."""

    fields = FIELDS
    default_field = "both"

    def model_inputs(self, examples: Sequence[Any]) -> list[Any]:
        return [(ex.first, ex.second) for ex in examples]

    def perturb(self, examples: Sequence[Any], perturbation: Any, seed: int = 0,
                field: str | None = None) -> list[Perturbed]:
        return self._perturb_fields(examples, perturbation, seed, ["first", "second"], field)


class PairClassification(_TextPairs, Classification):
    """Two texts with a class (SNLI premise/hypothesis)."""

    name = "pair"
    aliases = ("nli", "snli", "pair-classification")
    summary = "two texts, one class (SNLI entailment/neutral/contradiction)"
    formats = ("snli",)
    paper_metric = "accuracy (SNLI is not in paper 001)"

    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        _check_format(self, fmt)
        return read_snli(path, **options)

    #: the class an NLI expectation speaks of (SNLI's label names)
    ENTAILMENT = "entailment"

    def test_type(self, perturbation: Any, field: str | None = None,
                  examples: Sequence[Any] = ()) -> tuple[str, str | None]:
        """A label-changing perturbation (negation) of an NLI pair's hypothesis: ``DIR not
        entailment`` where the perturbation declares it for ``nli`` and the data names the
        class ``entailment`` (premise P entails hypothesis H, so P does not entail not-H; a
        neutral or contradiction pair's new label is not determined, so only entailment pairs
        are tested). Negating the premise alone has no sound expectation (not-P may still
        entail H): ``changed``."""
        from robustlab.metrics.checklist_tests import declared_type

        nli = self.field(field) != "first" and (
            not examples or self.ENTAILMENT in {str(ex.label) for ex in examples})
        return declared_type(perturbation, "nli" if nli else None)

    def expectation_failed(self, expectation: str, original: Any, perturbed: Any, before: Any,
                           after: Any) -> bool | None:
        """``not entailment``: tested on a gold-entailment pair whose hypothesis alone changed
        (a changed premise has no expectation); fails when entailment is still predicted."""
        if expectation != "not entailment":
            return super().expectation_failed(expectation, original, perturbed, before, after)
        if str(original.label) != self.ENTAILMENT or perturbed.first != original.first or \
                perturbed.second == original.second:
            return None
        return str(after) == self.ENTAILMENT


class Similarity(_TextPairs, Task):
    """Two texts with a similarity score in a declared range (STS-B: 0-5)."""

    name = "similarity"
    aliases = ("sts", "stsb", "sts-b")
    summary = "two texts, a similarity score 0-5 (STS benchmark)"
    formats = ("sts",)
    prediction = "a score"
    metric_names = ("pearson", "spearman")
    paper_metric = "pearson"
    #: a perturbed pair fails when its score moves by more than this (a tenth of STS's 0-5)
    tolerance = 0.5
    score_range = (0.0, 5.0)
    predict_method = "predict_scores"

    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        _check_format(self, fmt)
        options.setdefault("score_range", self.score_range)
        return read_sts(path, **options)

    def gold(self, examples: Sequence[PairExample]) -> list[float]:
        return [float(ex.label) for ex in examples]

    def normal_prediction(self, example: Any, prediction: Any, index: int) -> float:
        return finite(prediction, f"{self.name}: prediction {index}")

    def metrics(self, examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, Any]:
        from robustlab.metrics.tasks import similarity_metrics

        return similarity_metrics(self.gold(examples), self.check_predictions(examples, predictions))

    def failed(self, before: Any, after: Any, perturbed: Perturbed | None = None,
               tolerance: float | None = None) -> bool:
        """The score moved by more than ``tolerance`` (default :attr:`tolerance`)."""
        tol = self.tolerance if tolerance is None else tolerance
        return abs(float(after) - float(before)) > tol


class Ner(Task):
    """Token sequences with IOB2 entity tags (CoNLL-2003)."""

    name = "ner"
    aliases = ("conll", "tagging", "token-classification")
    summary = "tokens with IOB2 entity tags (CoNLL-2003 NER)"
    formats = ("conll",)
    prediction = "one tag per token"
    metric_names = ("f1", "precision", "recall")
    paper_metric = "f1"
    predict_method = "predict_tags"

    def model_inputs(self, examples: Sequence[Any]) -> list[Any]:
        return [list(ex.tokens) for ex in examples]

    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        _check_format(self, fmt)
        return read_conll(path, **options)

    def gold(self, examples: Sequence[TaggedExample]) -> list[tuple[str, ...]]:
        return [ex.tags for ex in examples]

    def normal_prediction(self, example: Any, prediction: Any, index: int) -> tuple[str, ...]:
        if isinstance(prediction, str) or not isinstance(prediction, Sequence):
            raise TaskError(f"{self.name}: prediction {index} is not a tag sequence")
        tags = tuple(prediction)
        if len(tags) != len(example.tokens):
            raise TaskError(f"{self.name}: prediction {index} has {len(tags)} tags for "
                            f"{len(example.tokens)} tokens")
        try:  # each distinct tag checked once (a regex per token was ~40 % of this method)
            distinct: Any = set(tags)
        except TypeError:  # an unhashable "tag": found by the scan in order below
            distinct = tags
        if any(not isinstance(t, str) or not IOB2_TAG.fullmatch(t) for t in distinct):
            bad = next(t for t in tags if not isinstance(t, str) or not IOB2_TAG.fullmatch(t))
            raise TaskError(f"{self.name}: prediction {index}: tag {bad!r} is not O, B-TYPE or "
                            "I-TYPE")
        return tags

    @staticmethod
    def entity_types(tags: Sequence[str]) -> set[str]:
        """The entity types a tag set names (``B-PER``, ``I-PER`` -> ``PER``)."""
        return {t[2:] for t in tags if t != "O"}

    def check_tag_set(self, model_tags: Sequence[str], examples: Sequence[TaggedExample],
                      where: str = "the model") -> None:
        """:class:`TaskError` when the data has entity types the model does not know (its
        entities could never be found) or the model's tags are not IOB2 (``PER`` instead of
        ``B-PER``/``I-PER``); a model knowing more types than a slice uses is fine."""
        bad = sorted(t for t in model_tags if not IOB2_TAG.fullmatch(str(t)))
        if bad:
            raise TaskError(f"{where}'s tags {bad[:4]} are not O, B-TYPE or I-TYPE; robustlab "
                            "compares IOB2 tags")
        missing = self.entity_types([t for ex in examples for t in ex.tags]) - \
            self.entity_types(model_tags)
        if missing:
            raise TaskError(f"{where} has no tag for entity type(s) {', '.join(sorted(missing))} "
                            f"of the data (it knows {', '.join(sorted(self.entity_types(model_tags))) or 'none'}); "
                            "use a model trained on this tag set")

    def metrics(self, examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, Any]:
        from robustlab.metrics.tasks import entity_metrics

        return entity_metrics(self.gold(examples), self.check_predictions(examples, predictions))

    def failed(self, before: Any, after: Any, perturbed: Perturbed | None = None,
               tolerance: float | None = None) -> bool:
        """A changed entity set: the entities predicted on the perturbed tokens differ from the
        clean prediction carried to them through the alignment (a deleted word's entity is
        gone from both sides, a repeated word's copy joins its entity on both)."""
        alignment = perturbed.alignment if perturbed is not None else None
        expected = carry_tags(before, alignment) if alignment is not None else tuple(before)
        return entities(expected) != entities(after)

    def test_type(self, perturbation: Any, field: str | None = None,
                  examples: Sequence[Any] = ()) -> tuple[str, str | None]:
        """INV for every perturbation NER accepts, label-changing ones included: the gold
        tags follow the tokens (:mod:`robustlab.tasks.align`), so the label is remade for the
        perturbed sentence rather than invalidated. Negation inserts or removes "not"/"do"
        (tag O) and inflects the verb in place: the entity set is unchanged, so the old
        entities are still the gold ones."""
        from robustlab.metrics.checklist_tests import INV

        return INV, None

    def refusal(self, perturbation: Any) -> str | None:
        try:
            alignment_kind(perturbation)
        except TaskError as exc:
            return str(exc)
        return None

    def perturb(self, examples: Sequence[Any], perturbation: Any, seed: int = 0,
                field: str | None = None) -> list[Perturbed]:
        self.field(field)
        return perturb_tagged(examples, perturbation, seed)


class AnswerSelection(Task):
    """A question with candidate sentences, each 1 (answers it) or 0 (WikiQA)."""

    name = "answer-selection"
    aliases = ("wikiqa", "qa", "answer_selection")
    summary = "a question and candidate sentences, each answering it or not (WikiQA)"
    formats = ("wikiqa",)
    prediction = "a score per candidate (>= threshold: predicted to answer)"
    metric_names = ("f1", "precision", "recall", "map", "mrr")
    paper_metric = "f1"
    fields = FIELDS
    default_field = "first"
    threshold = 0.5
    predict_method = "predict_candidate_scores"

    def model_inputs(self, examples: Sequence[Any]) -> list[Any]:
        return [(ex.question, list(ex.candidates)) for ex in examples]

    def read(self, path: str | os.PathLike[str], fmt: str | None = None, **options: Any) -> Corpus:
        _check_format(self, fmt)
        return read_wikiqa(path, **options)

    def gold(self, examples: Sequence[CandidatesExample]) -> list[tuple[int, ...]]:
        return [ex.labels for ex in examples]

    def normal_prediction(self, example: Any, prediction: Any, index: int) -> tuple[float, ...]:
        if isinstance(prediction, str) or not hasattr(prediction, "__len__"):
            raise TaskError(f"{self.name}: prediction {index} is not one score per candidate")
        scores = tuple(finite(v, f"{self.name}: prediction {index}") for v in prediction)
        if len(scores) != len(example.candidates):
            raise TaskError(f"{self.name}: prediction {index} has {len(scores)} scores for "
                            f"{len(example.candidates)} candidates")
        return scores

    def metrics(self, examples: Sequence[Any], predictions: Sequence[Any]) -> dict[str, Any]:
        from robustlab.metrics.tasks import answer_selection_metrics

        preds = self.check_predictions(examples, predictions)
        qids = [ex.qid for ex in examples for _ in ex.candidates]
        gold = [y for ex in examples for y in ex.labels]
        return answer_selection_metrics(qids, gold, [s for p in preds for s in p], self.threshold)

    def failed(self, before: Any, after: Any, perturbed: Perturbed | None = None,
               tolerance: float | None = None) -> bool:
        """The top-ranked candidate changed, or the set of candidates predicted to answer."""
        def picked(scores: Sequence[float]) -> tuple[int, frozenset[int]]:
            top = max(range(len(scores)), key=scores.__getitem__)
            return top, frozenset(i for i, s in enumerate(scores) if s >= self.threshold)

        return picked(before) != picked(after)

    def perturb(self, examples: Sequence[Any], perturbation: Any, seed: int = 0,
                field: str | None = None) -> list[Perturbed]:
        field = self.field(field)
        questions = (perturb_texts(perturbation, [ex.question for ex in examples], seed)
                     if field in ("first", "both") else None)
        sentences = (perturb_texts(perturbation, [c for ex in examples for c in ex.candidates],
                                   seed) if field in ("second", "both") else None)
        result, k = [], 0
        for i, ex in enumerate(examples):
            q = questions[i] if questions else (ex.question, None)
            cands = sentences[k: k + len(ex.candidates)] if sentences else [
                (c, None) for c in ex.candidates]
            k += len(ex.candidates)
            error = next((e for _, e in [q, *cands] if e), None)
            if error:
                result.append(Perturbed(ex, ex, False, error))
                continue
            new = replace(ex, question=q[0], candidates=tuple(c for c, _ in cands))
            result.append(Perturbed(ex, new, new != ex))
        return result
