"""What a learnability run prints: headings in words, and an under-trained seed named."""

from __future__ import annotations

from robustlab.studies.learnability.advice import UNDERTRAINED_MARGIN, undertrained_seeds
from robustlab.studies.learnability.report import results_table, undertrained_text


def _pair(model: str, pert: str, a0: list[float | None], seeds=(0, 1, 2)) -> dict:
    vals = [v for v in a0 if v is not None]
    return {"model": model, "perturbation": pert, "seeds": list(seeds),
            "accuracy_standard": {"mean": sum(vals) / len(vals), "std": 0.1, "n": len(vals),
                                  "values": a0},
            "avg_learnability": {"mean": 1.2, "std": 0.1, "n": 3, "values": [1.1, 1.2, 1.3]},
            "robustness": {"mean": -0.1, "std": 0.02, "n": 3, "values": [0, 0, 0]},
            "delta": {"mean": 0.05, "std": 0.01, "n": 3, "values": [0, 0, 0]},
            "noop_rate": 0.0}


def test_headings_say_what_the_numbers_are() -> None:
    text = results_table([_pair("textrnn", "leet_letters", [0.99, 0.98, 0.99])])
    head = text.splitlines()[0]
    assert "clean acc. A0" in head and "acc std" not in head
    assert "robustness A1-A0" in head and "gain Δ A2-A1" in head
    assert "standard deviation over seeds" in text  # the legend says what ± is


def test_undertrained_seed_is_named_once() -> None:
    pairs = [_pair("textrnn", p, [0.99, 0.67, 0.985]) for p in ("leet_letters", "shuffle_word")]
    pairs.append(_pair("bow", "leet_letters", [0.90, 0.88, 0.91]))
    assert undertrained_seeds(pairs) == {("textrnn", 1): (0.67, 0.9875)}
    lines = undertrained_text(pairs).splitlines()
    assert len(lines) == 1  # one line for the seed, not one per pair
    assert lines[0].startswith("WARNING textrnn seed 1: clean accuracy A0 0.670")
    assert "0.988" in lines[0]


def test_rule_boundary_and_single_seed() -> None:
    # exactly at the margin: not flagged; just past it: flagged
    at = 0.95 - UNDERTRAINED_MARGIN
    assert undertrained_seeds([_pair("m", "p", [0.95, at, 0.95])]) == {}
    assert ("m", 1) in undertrained_seeds([_pair("m", "p", [0.95, at - 0.01, 0.95])])
    # two seeds: the other seed is the reference; one seed: nothing to compare with
    assert ("m", 1) in undertrained_seeds([_pair("m", "p", [0.99, 0.67], seeds=(0, 1))])
    assert undertrained_seeds([_pair("m", "p", [0.67], seeds=(0,))]) == {}
    assert undertrained_seeds([_pair("m", "p", [0.99, None, 0.98])]) == {}
