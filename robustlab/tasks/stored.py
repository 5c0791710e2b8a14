"""A task's per-example predictions as rows of the run store's ``predictions`` table, and what
``failures``, the reports and the TUI read back from them.

The table's columns are text (``original``, ``perturbed``, ``label``, ``pred_before``,
``pred_after``); probabilities are left empty (a tag sequence or a score has no P(label)). Per
task:

==================  ==============================  ===========================================
task                original / perturbed            label, pred_before -> pred_after
==================  ==============================  ===========================================
ner                 tokens joined by spaces         tags joined by spaces; ``pred_before`` is
                                                    the clean prediction carried to the
                                                    perturbed tokens (:func:`~robustlab.tasks.
                                                    align.carry_tags`), so both sides line up
similarity, pair    ``first ||| second``            the score (6 decimals) or the class
answer-selection    ``question ||| c1 ||| c2 …``    one score per candidate, space-separated
==================  ==============================  ===========================================

A cell of a task stores its test as ``task:<name>`` (a label-preserving perturbation: the
task's own rule, :meth:`~robustlab.tasks.base.Task.failed`), ``task:<name>:DIR <expectation>``
(a label-changing one with a sound expectation, :meth:`~robustlab.tasks.base.Task.
expectation_failed`) or ``task:<name>:changed`` (a label-changing one without: no failures);
whether a row failed is decided on the decoded values, so the cell's failure count,
``failures``, the report, ``check`` and the TUI apply one rule.
"""

from __future__ import annotations

from typing import Any

from robustlab.tasks.align import carry_tags
from robustlab.tasks.perturb import Perturbed

__all__ = ["PAIR_JOIN", "TEST_PREFIX", "describe", "drop", "is_task_test", "moved", "row",
           "row_failed", "row_verdict", "rule", "task_name", "task_test"]

#: the test of a task's cell: ``task:ner``
TEST_PREFIX = "task:"
#: how the texts of a pair (or a question and its candidates) are joined in one column
PAIR_JOIN = " ||| "
#: decimals a score is stored with
DECIMALS = 6


def is_task_test(test: Any) -> bool:
    return isinstance(test, str) and test.startswith(TEST_PREFIX)


def task_test(task_name: str, test: str, expectation: str | None) -> str:
    """The stored test of a task's cell (module docstring) from its CheckList type."""
    from robustlab.metrics.checklist_tests import INV, header

    return TEST_PREFIX + task_name + ("" if test == INV else ":" + header(test, expectation))


def task_name(test: str) -> str:
    """The task of a stored task test (``task:pair:DIR not entailment`` -> ``pair``)."""
    return _parts(test)[0]


def _parts(test: str) -> tuple[str, str]:
    """(task name, "" | "changed" | "DIR <expectation>") of a stored task test."""
    name, _, kind = test[len(TEST_PREFIX):].partition(":")
    return name, kind


def _task(test: str) -> Any:
    from robustlab.tasks import get_task

    return get_task(_parts(test)[0])


def _example(task: Any, text: str, label: str) -> Any:
    """A stored pair back as an example (what a DIR expectation is decided on); None when the
    texts cannot be split unambiguously (a text holding the join itself)."""
    from robustlab.tasks.examples import PairExample

    parts = text.split(PAIR_JOIN)
    return PairExample(parts[0], parts[1], label) if len(parts) == 2 else None


def _show(example: Any) -> str:
    if hasattr(example, "tokens"):
        return " ".join(example.tokens)
    if hasattr(example, "candidates"):
        return PAIR_JOIN.join([example.question, *example.candidates])
    if hasattr(example, "first"):
        return f"{example.first}{PAIR_JOIN}{example.second}"
    return str(example.text)


def _value(name: str, v: Any) -> str:
    if name == "ner":
        return " ".join(v)
    if name == "similarity":
        return repr(round(float(v), DECIMALS))
    if name == "answer-selection":
        return " ".join(repr(round(float(s), DECIMALS)) for s in v)
    return str(v)


def _decode(name: str, text: str) -> Any:
    if name == "ner":
        return tuple(text.split())
    if name == "similarity":
        return float(text)
    if name == "answer-selection":
        return tuple(float(s) for s in text.split())
    return text


def row(task: Any, idx: int, perturbed: Perturbed, before: Any, after: Any) -> dict[str, Any]:
    """The stored row of one example and sample (module docstring)."""
    name = task.name
    if name == "ner":
        before = carry_tags(before, perturbed.alignment) if perturbed.alignment is not None \
            else before
        label = " ".join(perturbed.example.tags)
    elif name == "answer-selection":
        label = " ".join(map(str, perturbed.example.labels))
    elif name == "similarity":
        label = repr(float(perturbed.example.label))
    else:
        label = str(perturbed.example.label)
    return {"idx": idx, "original": _show(perturbed.original), "perturbed": _show(perturbed.example),
            "label": label, "pred_before": _value(name, before), "prob_before": None,
            "pred_after": _value(name, after), "prob_after": None}


def row_failed(test: str, r: dict[str, Any]) -> bool:
    """Whether a stored row of a task's cell failed its test (module docstring)."""
    return bool(row_verdict(test, r))


def row_verdict(test: str, r: dict[str, Any]) -> bool | None:
    """A stored row against its cell's test: True failed, False passed, None not tested (an
    unchanged example; a ``changed`` test; an example a DIR expectation says nothing of)."""
    task = _task(test)
    kind = _parts(test)[1]
    if r["original"] == r["perturbed"] or kind == "changed":
        return None
    before = _decode(task.name, str(r["pred_before"]))
    after = _decode(task.name, str(r["pred_after"]))
    if kind.startswith("DIR "):
        label = str(r["label"])
        original = _example(task, str(r["original"]), label)
        perturbed = _example(task, str(r["perturbed"]), label)
        if original is None or perturbed is None:
            return None
        return task.expectation_failed(kind[4:], original, perturbed, before, after)
    return bool(task.failed(before, after))


def moved(test: str, r: dict[str, Any]) -> bool:
    """Whether the prediction of a changed row moved by the task's rule (a changed class or
    entity set, a score past the tolerance, a new ranking): a ``changed`` test's count."""
    task = _task(test)
    if r["original"] == r["perturbed"]:
        return False
    return bool(task.failed(_decode(task.name, str(r["pred_before"])),
                            _decode(task.name, str(r["pred_after"]))))


def drop(test: str, r: dict[str, Any]) -> float:
    """How much a failing row moved, to rank the worst first: the score's change
    (similarity), the tags that changed (NER), the largest change of a candidate's score
    (answer selection), 1 for a changed class."""
    task = _task(test)
    b, a = _decode(task.name, str(r["pred_before"])), _decode(task.name, str(r["pred_after"]))
    if task.name == "similarity":
        return round(abs(a - b), DECIMALS)
    if task.name == "ner":
        return float(sum(x != y for x, y in zip(b, a, strict=False)))
    if task.name == "answer-selection":
        return round(max((abs(x - y) for x, y in zip(b, a, strict=False)), default=0.0),
                     DECIMALS)
    return float(a != b)


def rule(test: str) -> str:
    """The failure rule of a task's cell as a table shows it: its own rule (``entities``,
    ``|d|>0.5``, ``ranking``, ``INV``), ``DIR <expectation>`` or ``changed``."""
    task = _task(test)
    kind = _parts(test)[1]
    if kind:
        return kind
    return {"ner": "entities", "answer-selection": "ranking",
            "similarity": f"|d|>{getattr(task, 'tolerance', 0)}"}.get(task.name, "INV")


def _ranking(scores: tuple[float, ...]) -> str:
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return ">".join(str(i) for i in order[:5]) + (">…" if len(order) > 5 else "")


def describe(test: str, r: dict[str, Any]) -> list[str]:
    """A failing row in the task's words, a few short lines (``failures``, the TUI): NER the
    perturbed sentence with each token whose tag changed marked ``[word TAG->TAG]``; similarity
    the score before -> after against the tolerance; answer selection the question and the
    candidate ranking before -> after; a pair its class before -> after."""
    task = _task(test)
    b, a = _decode(task.name, str(r["pred_before"])), _decode(task.name, str(r["pred_after"]))
    if task.name == "ner":
        words = str(r["perturbed"]).split()
        marked = [f"[{w} {x}->{y}]" if x != y else w
                  for w, x, y in zip(words, b, a, strict=False)]
        return [f"  - {r['original']}", f"  + {' '.join(marked)}"]
    if task.name == "similarity":
        return [f"  score {b:.3f} -> {a:.3f} (moved {abs(a - b):.3f} > tolerance "
                f"{task.tolerance}; gold {float(r['label']):.3f})",
                *[f"  - {t}" for t in str(r["original"]).split(PAIR_JOIN)],
                *[f"  + {t}" for t in str(r["perturbed"]).split(PAIR_JOIN)]]
    if task.name == "answer-selection":
        q0, q1 = str(r["original"]).split(PAIR_JOIN)[0], str(r["perturbed"]).split(PAIR_JOIN)[0]
        gold = [i for i, y in enumerate(str(r["label"]).split()) if y == "1"]
        return [f"  - {q0}", f"  + {q1}",
                f"  ranking {_ranking(b)} -> {_ranking(a)} (candidates by score; answers: "
                f"{', '.join(map(str, gold)) or 'none'})"]
    return [f"  class {b} -> {a} (gold {r['label']})",
            *[f"  - {t}" for t in str(r["original"]).split(PAIR_JOIN)],
            *[f"  + {t}" for t in str(r["perturbed"]).split(PAIR_JOIN)]]
