"""A tiny template sentiment dataset for the learnability tests (written by the tests)."""

from __future__ import annotations

import random
from pathlib import Path

POS = ("good", "great", "lovely", "fine", "superb", "wonderful")
NEG = ("bad", "awful", "poor", "dull", "terrible", "boring")
NOUNS = ("movie", "film", "plot", "story", "cast", "ending", "script")


def sentences(n: int, seed: int) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    rows = []
    for _ in range(n):
        y = rng.randint(0, 1)
        word = rng.choice(POS if y else NEG)
        rows.append((y, f"the {rng.choice(NOUNS)} was really {word} , and the "
                        f"{rng.choice(NOUNS)} felt {rng.choice(['long', 'short', 'new', 'old'])} ."))
    return rows


def write_toy(d: Path, n_train: int = 160, n_test: int = 80) -> tuple[Path, Path]:
    """Write train/test files in the label-text format; return their paths."""
    d.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, n, seed in (("train.txt", n_train, 1), ("test.txt", n_test, 2)):
        p = d / name
        p.write_text("".join(f"{y} {t}\n" for y, t in sentences(n, seed)), encoding="utf-8")
        paths.append(p)
    return paths[0], paths[1]


def toy_spec(d: Path, **kw) -> dict:
    train, test = write_toy(d, **kw)
    return {"path": str(train), "test_path": str(test), "format": "label-text"}
