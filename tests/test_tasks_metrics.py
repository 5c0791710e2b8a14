"""The task metrics (robustlab.metrics.tasks) against hand-computed cases and the libraries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from robustlab.metrics.tasks import (
    answer_selection_metrics,
    classification_metrics,
    entity_metrics,
    similarity_metrics,
)
from robustlab.tasks import get_task
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample, TextExample


def test_classification_hand_computed():
    gold = ["a", "a", "b", "c"]
    pred = ["a", "b", "b", "b"]
    m = classification_metrics(gold, pred)
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["micro_f1"] == pytest.approx(0.5)
    # per class F1: a: p=1 r=.5 -> 2/3; b: p=1/3 r=1 -> .5; c: 0  => macro 7/18
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.5 + 0) / 3)


def test_classification_numbers_and_strings_are_one_class():
    assert classification_metrics([1, 0], ["1", "0"])["accuracy"] == 1.0


def test_entity_f1_hand_computed():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O"]]
    # gold entities: PER(0,2), LOC(3,4), ORG(0,1); predicted: PER(0,2), ORG(3,4), ORG(0,1)
    # correct 2 of 3 predicted and of 3 gold -> P = R = F1 = 2/3
    m = entity_metrics(gold, pred)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)
    assert m["per_type"]["PER"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "support": 1}
    assert m["per_type"]["LOC"]["recall"] == 0.0
    assert m["per_type"]["ORG"]["precision"] == pytest.approx(0.5)
    assert m["per_type"]["ORG"]["f1"] == pytest.approx(2 / 3)


def test_entity_f1_is_entity_level_not_token_level():
    # one token of a two-token entity wrong: token accuracy 3/4, entity F1 0
    m = entity_metrics([["B-PER", "I-PER", "O", "O"]], [["B-PER", "O", "O", "O"]])
    assert m["f1"] == 0.0


def test_entity_f1_equals_seqeval():
    from seqeval.metrics import f1_score

    rng = np.random.default_rng(0)
    tags = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    gold = [[tags[i] for i in rng.integers(0, 5, 12)] for _ in range(40)]
    pred = [[t if rng.random() < 0.7 else tags[rng.integers(0, 5)] for t in s] for s in gold]
    assert entity_metrics(gold, pred)["f1"] == pytest.approx(f1_score(gold, pred))


def test_similarity_hand_computed_and_scipy():
    from scipy.stats import pearsonr, spearmanr

    m = similarity_metrics([0, 1, 2, 3], [0, 2, 4, 6])
    assert m["pearson"] == pytest.approx(1.0) and m["spearman"] == pytest.approx(1.0)
    # x = 1,2,3 ; y = 1,3,2: r = 0.5, rho = 0.5 by hand
    m = similarity_metrics([1, 2, 3], [1, 3, 2])
    assert m["pearson"] == pytest.approx(0.5) and m["spearman"] == pytest.approx(0.5)
    rng = np.random.default_rng(1)
    g, p = rng.uniform(0, 5, 50), rng.uniform(0, 5, 50)
    m = similarity_metrics(g, p)
    assert m["pearson"] == pytest.approx(pearsonr(g, p)[0])
    assert m["spearman"] == pytest.approx(spearmanr(g, p)[0])


def test_similarity_constant_predictions_are_nan():
    assert math.isnan(similarity_metrics([1, 2, 3], [2, 2, 2])["pearson"])
    with pytest.raises(ValueError, match="finite"):
        similarity_metrics([1, 2], [1, float("nan")])


def test_answer_selection_hand_computed():
    qids = ["q1", "q1", "q1", "q2", "q2", "q3", "q3"]
    gold = [0, 1, 0, 1, 1, 0, 0]
    scores = [0.9, 0.6, 0.1, 0.2, 0.7, 0.8, 0.1]
    m = answer_selection_metrics(qids, gold, scores)
    # predicted positive (>= .5): rows 0, 1, 4, 5 -> TP 2 (rows 1, 4), FP 2, FN 1 (row 3)
    assert m["precision"] == pytest.approx(0.5)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))
    # q1: ranking 0,1,2 -> relevant at rank 2: AP 1/2, RR 1/2; q2: ranks 4,3 both relevant:
    # AP 1, RR 1; q3 has no correct sentence and is left out
    assert m["map"] == pytest.approx(0.75)
    assert m["mrr"] == pytest.approx(0.75)
    assert m["questions"] == 3 and m["questions_with_answer"] == 2


def test_answer_selection_ties_rank_pessimistically():
    m = answer_selection_metrics(["q"] * 3, [0, 1, 0], [0.5, 0.5, 0.1])
    assert m["mrr"] == pytest.approx(0.5)  # tied with a wrong sentence: rank 2
    assert m["map"] == pytest.approx(0.5)


def test_metric_inputs_checked():
    with pytest.raises(ValueError, match="2 gold values but 1"):
        classification_metrics([1, 2], [1])
    with pytest.raises(ValueError, match="3 predicted tags"):
        entity_metrics([["O", "O"]], [["O", "O", "O"]])
    with pytest.raises(ValueError, match="0 or 1"):
        answer_selection_metrics(["q"], [2], [0.1])


# ---- the tasks compute the same as the library on the same predictions ---------------------------


def test_task_metrics_equal_library_metrics():
    from seqeval.metrics import f1_score as seq_f1
    from sklearn.metrics import accuracy_score, f1_score

    cls = get_task("classification")
    ex = [TextExample("a", "pos"), TextExample("b", "neg"), TextExample("c", "pos")]
    # probability rows over the sorted names ("neg", "pos"), an index and a name
    preds = [[0.2, 0.8], 0, "neg"]
    m = cls.metrics(ex, preds)
    assert m["accuracy"] == pytest.approx(accuracy_score(["pos", "neg", "pos"],
                                                         ["pos", "neg", "neg"]))
    assert m["macro_f1"] == pytest.approx(f1_score(["pos", "neg", "pos"], ["pos", "neg", "neg"],
                                                   average="macro"))
    ner = get_task("ner")
    tex = [TaggedExample(("A", "B", "C"), ("B-PER", "I-PER", "O"))]
    assert ner.metrics(tex, [["B-PER", "O", "O"]])["f1"] == seq_f1([["B-PER", "I-PER", "O"]],
                                                                    [["B-PER", "O", "O"]])
    sim = get_task("similarity")
    pairs = [PairExample("a", "b", 1.0), PairExample("c", "d", 4.0), PairExample("e", "f", 2.0)]
    assert sim.metrics(pairs, [1.5, 3.0, 3.5])["pearson"] == pytest.approx(
        similarity_metrics([1.0, 4.0, 2.0], [1.5, 3.0, 3.5])["pearson"])
    qa = get_task("wikiqa")
    q = [CandidatesExample("q1", "why?", ("x", "y"), (0, 1)), CandidatesExample("q2", "who?",
                                                                            ("z",), (1,))]
    m = qa.metrics(q, [[0.9, 0.1], [0.8]])
    assert m["f1"] == pytest.approx(f1_score([0, 1, 1], [1, 0, 1]))
    assert m["map"] == pytest.approx((0.5 + 1) / 2)


def test_task_predictions_checked():
    from robustlab.tasks import TaskError

    with pytest.raises(TaskError, match="3 probabilities for 2 classes"):
        get_task("classification").check_predictions([TextExample("a", "0"), TextExample("b", "1")],
                                                     [[0.1, 0.2, 0.7], 1])
    with pytest.raises(TaskError, match="2 tags for 3 tokens"):
        get_task("ner").check_predictions([TaggedExample(("a", "b", "c"), ("O", "O", "O"))],
                                          [["O", "O"]])
    with pytest.raises(TaskError, match="'PER' is not O"):
        get_task("ner").check_predictions([TaggedExample(("a",), ("O",))], [["PER"]])
    with pytest.raises(TaskError, match="not a finite number"):
        get_task("sts").check_predictions([PairExample("a", "b", 1.0)], [float("inf")])
    with pytest.raises(TaskError, match="1 scores for 2 candidates"):
        get_task("wikiqa").check_predictions([CandidatesExample("q", "?", ("a", "b"), (0, 1))],
                                             [[0.3]])


# ---- messages and edges the mutation run found unchecked (bench/mutation.py) --------------------


@pytest.mark.parametrize("fn,args,msg", [
    (classification_metrics, ([1, 2], [1]), r"^classification: 2 gold values but 1 predictions$"),
    (classification_metrics, ([], []), r"^classification: no examples$"),
    (entity_metrics, ([["O"]], []), r"^entity F1: 1 gold values but 0 predictions$"),
    (entity_metrics, ([["O"], ["O", "O"]], [["O"], ["O"]]),
     r"^entity F1: sentence 1 has 2 gold tags but 1 predicted tags$"),
    (similarity_metrics, ([1.0], [1.0, 2.0]), r"^similarity: 1 gold values but 2 predictions$"),
    (similarity_metrics, ([], []), r"^similarity: no examples$"),
    (similarity_metrics, ([1.0, math.nan], [1.0, 2.0]),
     r"^similarity: scores must be finite numbers$"),
    (answer_selection_metrics, (["q"], [1, 0], [0.1, 0.2]),
     r"^answer selection: 1 question ids for 2 rows$"),
    (answer_selection_metrics, (["q"], [1], [0.1, 0.2]),
     r"^answer selection: 1 gold values but 2 predictions$"),
    (answer_selection_metrics, (["q"], [1], [math.inf]),
     r"^answer selection: scores must be finite numbers$"),
])
def test_each_refusal_names_the_metric(fn, args, msg):
    with pytest.raises(ValueError, match=msg):
        fn(*args)


def test_no_question_with_an_answer_is_nan_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = answer_selection_metrics(["q1", "q1", "q2"], [0, 0, 0], [0.9, 0.1, 0.4])
    assert math.isnan(out["map"]) and math.isnan(out["mrr"])
    assert (out["questions"], out["questions_with_answer"]) == (2, 0)
    assert (out["precision"], out["recall"], out["f1"]) == (0.0, 0.0, 0.0)


def test_entity_scores_with_no_entities_on_one_side_are_zero():
    out = entity_metrics([["O", "O"]], [["B-PER", "O"]])  # nothing to recall, one false positive
    assert (out["precision"], out["recall"], out["f1"]) == (0.0, 0.0, 0.0)
    out = entity_metrics([["B-PER", "O"]], [["O", "O"]])  # nothing predicted
    assert (out["precision"], out["recall"], out["f1"]) == (0.0, 0.0, 0.0)


def test_macro_f1_over_a_class_only_predicted_is_computed_without_a_warning():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = classification_metrics(["a", "a"], ["a", "b"])
    # F1(a) = 2·1·0.5/1.5 = 2/3; F1(b) = 0 (never gold): macro 1/3
    assert out == {"accuracy": 0.5, "micro_f1": 0.5, "macro_f1": pytest.approx(1 / 3)}
