"""Paper 001's scoring on hand-judged perturbed samples (Moradi & Samwald 2021, section 6,
Table 4's note): dropped samples removed, relabels applied, the rest scored as a CheckList INV
test against the corrected labels. Pure functions: the eval summary, ``robustlab report``,
``robustlab check`` and the TUI all score with these, so they agree
(:mod:`robustlab.studies.eval.judge` draws and exchanges the samples)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

VERDICTS = ("consistent", "drop")
RELABEL = "relabel:"


def corrected_label(label: int, verdict: str | None) -> int | None:
    """The label a judged row is scored against; None: dropped or not judged."""
    if verdict == "consistent":
        return int(label)
    if verdict and verdict.startswith(RELABEL):
        return int(verdict[len(RELABEL):])
    return None


def judged_scores(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Scores of one perturbation on its judged rows (module docstring). ``rows``: each with
    ``label``, ``verdict``, ``pred_before``, ``pred_after``. Pure."""
    kept = [(r, corrected_label(r["label"], r["verdict"])) for r in rows]
    kept = [(r, y) for r, y in kept if y is not None]
    n = len(kept)
    a0 = sum(int(r["pred_before"]) == int(r["label"]) for r, _ in kept) / n if n else None
    a1 = sum(int(r["pred_after"]) == y for r, y in kept) / n if n else None
    right = [(r, y) for r, y in kept if int(r["pred_before"]) == int(r["label"])]
    fails = sum(int(r["pred_after"]) != y for r, y in right)
    return {"sampled": len(rows), "n": n,
            "dropped": sum(r["verdict"] == "drop" for r in rows),
            "relabelled": sum(bool(r["verdict"]) and r["verdict"].startswith(RELABEL)
                              for r in rows),
            "a0": a0, "a1": a1, "delta": None if n == 0 else a1 - a0,
            "failure_rate": fails / len(right) if right else None}


def judged_marker(row: Mapping[str, Any]) -> str:
    """`` judged n=K`` / `` judging k/n`` for a row's test column ('' when neither)."""
    j = row.get("judged")
    if j:
        return f" judged n={j['n']}"
    g = row.get("judging")
    if not g:
        return ""
    return f" judging {g['judged']}/{g['sampled']}" + (f", {g['stale']} stale" if g.get("stale")
                                                        else "")


__all__ = ["RELABEL", "VERDICTS", "corrected_label", "judged_marker", "judged_scores"]
