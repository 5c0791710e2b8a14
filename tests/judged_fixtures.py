"""Hand-judged outputs of paper 001's rules (tests/fixtures/judgements/<rule>.tsv).

For each rule, dataset (SST-2, TREC) and half, the first ``PER_HALF`` held-out sentences
(in a fixed shuffled order) that the rule changes, with its output (seed 0) and a judgement by
hand. The *dev* half (SST-2 dev, the first half of TREC's test set) was looked at while the rules
were written; the *held-out* half (SST-2 test, TREC test's second half, then TREC's training
questions where a rule needs more) was judged only after the rules were final.
``python tests/judged_fixtures.py RULE`` writes the rows for RULE to ``RULE.new.tsv`` with an
empty judgement, to be filled in by hand and renamed; ``tests/test_verb_precision.py`` re-generates every
output and fails when one differs from the judged one.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

DIR = Path(__file__).parent / "fixtures" / "judgements"
RULES = ("negation", "verb_tense", "singular_plural_verb", "word_synonym", "word_synonym_mlm",
         "misspelling")
PER_HALF = 25
#: held-out sentences skipped per rule. word_synonym's rules were changed after a first judged
#: fixture had shown its held-out outputs (44 % correct there), so its held-out rows start past
#: every sentence that fixture drew from (< 100 in each order): sentences not seen before
HELDOUT_SKIP = {"word_synonym": 100, "word_synonym_mlm": 100}
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
        if half == "dev":
            return items[: len(items) // 2]
        # held out: the second half, then (for a rule that runs out of changed outputs there)
        # TREC's training questions, which no rule was written against either
        train = (shared / "trec" / "TREC.train.all").read_text(encoding="latin-1").splitlines()
        more = [(f"trec/TREC.train.all:{i + 1}", ln.split(" ", 1)[1].strip())
                for i, ln in enumerate(train) if ln.strip()]
        random.Random(24).shuffle(more)
        return items[len(items) // 2:] + more
    random.Random(24).shuffle(items)
    return items


def generate(rule: str, shared: Path) -> list[dict[str, str]]:
    """The rows of ``rule``'s fixture, judgement columns empty."""
    pert = make_rule(rule)
    rows = []
    for half in ("dev", "heldout"):
        for dataset in ("sst2", "trec"):
            items = sentences(shared, dataset, half)
            if half == "heldout":
                items = items[HELDOUT_SKIP.get(rule, 0):]
            rows += changed_rows(pert, items, half, dataset, PER_HALF)
    return rows


def changed_rows(pert, items: Sequence[tuple[str, str]], half: str, dataset: str,
                 per_half: int) -> list[dict[str, str]]:
    """The first ``per_half`` of ``items`` (source, text) that ``pert`` changes (seed 0), as
    fixture rows with the judgement columns empty."""
    rows = []
    for source, text in items:
        out = pert.perturb(text, seed=0)
        if out != text:
            rows.append(dict(half=half, dataset=dataset, source=source, original=text,
                             output=out, judgement="", reason=""))
            if len(rows) == per_half:
                break
    return rows


def make_rule(rule: str):
    """The perturbation a fixture judges: ``word_synonym_mlm`` is word_synonym filtered by the
    shared fill-mask model (../shared/models/minilm-mlm)."""
    from robustlab.perturbations import make
    from robustlab.resources import minilm_mlm_path

    if rule == "word_synonym_mlm":
        return make("word_synonym", mlm=str(minilm_mlm_path()))
    return make(rule)


def read(rule: str, folder: Path = DIR) -> list[dict[str, str]]:
    path = folder / f"{rule}.tsv"
    return [dict(zip(COLUMNS, ln.split("\t"), strict=True))
            for ln in path.read_text(encoding="utf-8").splitlines()
            if ln and not ln.startswith("#")]


def precision(rows: list[dict[str, str]]) -> float:
    c = Counter(r["judgement"] for r in rows)
    return c["correct"] / (c["correct"] + c["incorrect"])


def write_new(rules: Sequence[str], generate: Callable[[str, Path], list[dict[str, str]]],
              folder: Path) -> int:
    """Draw each rule's rows with ``generate`` and write them, unjudged, to ``RULE.new.tsv``
    in ``folder`` (the judge fills the judgement column by hand and renames the file)."""
    from robustlab.resources import shared_data_dir

    for rule in rules:
        rows = generate(rule, shared_data_dir())
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{rule}.new.tsv"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(HEADER.format(rule=rule))
            for r in rows:
                fh.write("\t".join(r[c] for c in COLUMNS) + "\n")
        print(f"{rule}: {len(rows)} rows -> {path}")
    return 0


def main(argv: list[str]) -> int:
    return write_new(argv or RULES, generate, DIR)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
