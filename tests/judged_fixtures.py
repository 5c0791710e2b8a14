"""Hand-judged outputs of paper 001's rules (tests/fixtures/judgements/<rule>.tsv).

For each rule, dataset (SST-2, TREC) and half, the first ``PER_HALF`` held-out sentences
(in a fixed shuffled order) that the rule changes, with its output (seed 0) and a judgement by
hand. The *dev* half (SST-2 dev, the first half of TREC's test set) was looked at while the rules
were written; the *held-out* half (SST-2 test, TREC test's second half) was judged only after
the rules were final. ``python tests/judged_fixtures.py RULE`` writes the rows for RULE with an
empty judgement, to be filled in by hand; ``tests/test_verb_precision.py`` re-generates every
output and fails when one differs from the judged one.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from pathlib import Path

DIR = Path(__file__).parent / "fixtures" / "judgements"
RULES = ("negation", "verb_tense", "singular_plural_verb", "word_synonym", "misspelling")
PER_HALF = 25
COLUMNS = ("half", "dataset", "source", "original", "output", "judgement", "reason")
HEADER = ("# Hand judgements of {rule} (seed 0, default parameters). judgement: correct = the\n"
          "# rule's intended edit, grammatical (for word_synonym: a synonym in this context; for\n"
          "# misspelling: a plausible misspelling of that word); incorrect otherwise. Columns:\n"
          "# " + "\t".join(COLUMNS) + "\n")


def sentences(shared: Path, dataset: str, half: str) -> list[tuple[str, str]]:
    """(source, sentence) of one dataset half, in the fixed order rows are drawn from."""
    if dataset == "sst2":
        name = "stsa.binary.dev" if half == "dev" else "stsa.binary.test"
        lines = (shared / "sst" / name).read_text(encoding="utf-8").splitlines()
        items = [(f"sst/{name}:{i + 1}", ln[2:].strip()) for i, ln in enumerate(lines) if ln.strip()]
    else:
        lines = (shared / "trec" / "TREC.test.all").read_text(encoding="latin-1").splitlines()
        items = [(f"trec/TREC.test.all:{i + 1}", ln.split(" ", 1)[1].strip())
                 for i, ln in enumerate(lines) if ln.strip()]
        random.Random(24).shuffle(items)  # the two halves of TREC's test set
        items = items[: len(items) // 2] if half == "dev" else items[len(items) // 2:]
        return items
    random.Random(24).shuffle(items)
    return items


def generate(rule: str, shared: Path) -> list[dict[str, str]]:
    """The rows of ``rule``'s fixture, judgement columns empty."""
    from robustlab.perturbations import make

    pert = make(rule)
    rows = []
    for half in ("dev", "heldout"):
        for dataset in ("sst2", "trec"):
            n = 0
            for source, text in sentences(shared, dataset, half):
                out = pert.perturb(text, seed=0)
                if out != text:
                    rows.append(dict(half=half, dataset=dataset, source=source, original=text,
                                     output=out, judgement="", reason=""))
                    n += 1
                    if n == PER_HALF:
                        break
    return rows


def read(rule: str) -> list[dict[str, str]]:
    path = DIR / f"{rule}.tsv"
    return [dict(zip(COLUMNS, ln.split("\t"), strict=True))
            for ln in path.read_text(encoding="utf-8").splitlines()
            if ln and not ln.startswith("#")]


def precision(rows: list[dict[str, str]]) -> float:
    c = Counter(r["judgement"] for r in rows)
    return c["correct"] / (c["correct"] + c["incorrect"])


def main(argv: list[str]) -> int:
    from robustlab.resources import shared_data_dir

    for rule in argv or RULES:
        rows = generate(rule, shared_data_dir())
        DIR.mkdir(parents=True, exist_ok=True)
        path = DIR / f"{rule}.new.tsv"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(HEADER.format(rule=rule))
            for r in rows:
                fh.write("\t".join(r[c] for c in COLUMNS) + "\n")
        print(f"{rule}: {len(rows)} rows -> {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
