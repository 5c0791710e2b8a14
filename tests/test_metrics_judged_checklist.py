"""CheckList test types and paper 001's judged scoring as pure functions, against hand-computed
tables (the eval summary, report, check and TUI all decide with these)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from robustlab.metrics import checklist_tests as ct
from robustlab.metrics import judged as j


@pytest.mark.parametrize("n,task", [(2, "binary"), ("2", "binary"), (3, "3-class"),
                                    (5.0, "5-class")])
def test_task_of(n: object, task: str) -> None:
    assert ct.task_of(n) == task


def _p(**kw: object) -> SimpleNamespace:
    return SimpleNamespace(name="neg", **kw)


@pytest.mark.parametrize("pert,n,expected", [
    (_p(), 2, ("INV", None)),                                   # label_preserving by default
    (_p(label_preserving=True, expectations={"binary": "flip"}), 2, ("INV", None)),
    (_p(label_preserving=False, expectations={"binary": "flip"}), 2, ("DIR", "flip")),
    (_p(label_preserving=False, expectations={"binary": "flip"}), 3, ("changed", None)),
    (_p(label_preserving=False, expectations={"3-class": "flip"}), 3, ("DIR", "flip")),
    (_p(label_preserving=False), 2, ("changed", None)),
    (_p(label_preserving=False, expectations=None), 2, ("changed", None)),
])
def test_checklist_type_table(pert: object, n: int, expected: tuple) -> None:
    assert ct.checklist_type(pert, n) == expected


def test_an_unknown_expectation_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^neg: unknown expectation 'up'; known: flip, not entailment$"):
        ct.checklist_type(_p(label_preserving=False, expectations={"binary": "up"}), 2)


@pytest.mark.parametrize("test,before,after,pb,pa,fails", [
    ("INV", 1, 1, 0.9, 0.1, False), ("INV", 1, 0, 0.9, 0.9, True), ("INV", "0", 0, 0, 0, False),
    ("DIR", 1, 0, 0.9, 0.95, False),   # prediction changed
    ("DIR", 1, 1, 0.9, 0.8, False),    # P(original) fell
    ("DIR", 1, 1, 0.8, 0.8, True),     # neither: equal probability is not a fall
    ("DIR", 1, 1, 0.8, 0.85, True),
    ("DIR", "1", 1.0, "0.8", 0.85, True),
    ("changed", 1, 0, 0.9, 0.1, None), ("changed", 1, 1, 0.9, 0.1, None),
])
def test_example_fails_table(test: str, before: int, after: int, pb: float, pa: float,
                             fails: bool | None) -> None:
    assert ct.example_fails(test, before, after, pb, pa) is fails


@pytest.mark.parametrize("test,exp,out", [("INV", None, "INV"), ("DIR", "flip", "DIR flip"),
                                          ("DIR", None, "DIR"), ("changed", None, "changed"),
                                          ("changed", "flip", "changed"), ("INV", "flip", "INV")])
def test_header(test: str, exp: str | None, out: str) -> None:
    assert ct.header(test, exp) == out


def test_header_default_expectation() -> None:
    assert ct.header("DIR") == "DIR"


@pytest.mark.parametrize("label,verdict,out", [(1, "consistent", 1), ("0", "consistent", 0),
                                               (1, "relabel:0", 0), (0, "relabel:2", 2),
                                               (1, "drop", None), (1, None, None), (1, "", None),
                                               (1, "Consistent", None)])
def test_corrected_label(label: object, verdict: str | None, out: int | None) -> None:
    assert j.corrected_label(label, verdict) == out


def _row(label: int, verdict: str | None, before: int, after: int) -> dict:
    return {"label": label, "verdict": verdict, "pred_before": before, "pred_after": after}


def test_judged_scores_hand_computed() -> None:
    rows = [_row(1, "consistent", 1, 1),   # right before, right after
            _row(1, "consistent", 1, 0),   # right before, fails
            _row(0, "consistent", 1, 1),   # wrong before and after: not in the failure rate
            _row(1, "relabel:0", 1, 0),    # scored against 0: right after, right before
            _row(0, "relabel:1", 1, 0),    # wrong before (label 0), wrong after (1)
            _row(1, "drop", 0, 0),         # dropped
            _row(0, None, 0, 1)]           # not judged
    out = j.judged_scores(rows)
    # kept: 5 rows; a0 = before == original label: rows 1, 2, 4 → 3/5; a1 = after == corrected:
    # rows 1, 4 → 2/5; right-before rows 1, 2, 4: row 2 fails → 1/3
    assert out == {"sampled": 7, "n": 5, "dropped": 1, "relabelled": 2, "a0": 3 / 5,
                   "a1": 2 / 5, "delta": pytest.approx(-1 / 5), "failure_rate": 1 / 3}
    first = j.judged_scores(rows[:3])
    assert first == {"sampled": 3, "n": 3, "dropped": 0, "relabelled": 0, "a0": 2 / 3,
                     "a1": 1 / 3, "delta": pytest.approx(-1 / 3), "failure_rate": 1 / 2}
    one = j.judged_scores([_row(1, "consistent", 1, 0), _row(0, "consistent", 0, 0)])
    assert one["a0"] == 1.0 and one["a1"] == 0.5 and one["delta"] == -0.5
    assert one["failure_rate"] == 0.5


def test_judged_scores_with_nothing_kept() -> None:
    out = j.judged_scores([_row(1, "drop", 1, 1), _row(1, None, 1, 1)])
    assert out == {"sampled": 2, "n": 0, "dropped": 1, "relabelled": 0, "a0": None,
                   "a1": None, "delta": None, "failure_rate": None}
    wrong = j.judged_scores([_row(1, "consistent", 0, 0)])
    assert wrong["failure_rate"] is None and wrong["a0"] == 0.0 and wrong["a1"] == 0.0


@pytest.mark.parametrize("row,out", [
    ({}, ""), ({"judged": None, "judging": None}, ""),
    ({"judged": {"n": 40}}, " judged n=40"),
    ({"judged": {"n": 40}, "judging": {"judged": 1, "sampled": 2}}, " judged n=40"),
    ({"judging": {"judged": 3, "sampled": 50}}, " judging 3/50"),
    ({"judging": {"judged": 3, "sampled": 50, "stale": 0}}, " judging 3/50"),
    ({"judging": {"judged": 3, "sampled": 50, "stale": 2}}, " judging 3/50, 2 stale"),
])
def test_judged_marker(row: dict, out: str) -> None:
    assert j.judged_marker(row) == out
