"""WMT22's own published scores (``automatic-scores.tsv`` shipped with the WMT22 general-task
data in ../shared/data): the source for every hard-coded corpus BLEU/chrF in the tests."""

from __future__ import annotations

import csv
from pathlib import Path


def official(root: Path, pair: str, system: str, metric: str) -> float:
    """The score WMT22 published for ``system`` on ``pair`` (``metric`` as in the file:
    ``bleu-A``, ``chrf-all``, …); ``root`` is the shared data directory."""
    with open(root / "wmt22_general" / "automatic-scores.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if (row["pair"], row["system"], row["metric"]) == (pair, system, metric):
                return float(row["score"])
    raise AssertionError(f"no official {metric} for {pair} {system}")
