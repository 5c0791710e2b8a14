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

A cell of a task stores its test as ``task:<name>``; whether a row failed is
:meth:`~robustlab.tasks.base.Task.failed` on the decoded values, so the cell's failure count,
``failures``, the report and the TUI apply one rule.
"""

from __future__ import annotations

from typing import Any

from robustlab.tasks.align import carry_tags
from robustlab.tasks.perturb import Perturbed

__all__ = ["PAIR_JOIN", "TEST_PREFIX", "describe", "drop", "is_task_test", "row", "row_failed",
           "rule"]

#: the test of a task's cell: ``task:ner``
TEST_PREFIX = "task:"
#: how the texts of a pair (or a question and its candidates) are joined in one column
PAIR_JOIN = " ||| "
#: decimals a score is stored with
DECIMALS = 6


def is_task_test(test: Any) -> bool:
    return isinstance(test, str) and test.startswith(TEST_PREFIX)


def _task(test: str) -> Any:
    from robustlab.tasks import get_task

    return get_task(test[len(TEST_PREFIX):])


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
    """Whether a stored row of a ``task:<name>`` cell failed (the task's own rule)."""
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
    """The failure rule of a task's cell as a table shows it."""
    task = _task(test)
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
