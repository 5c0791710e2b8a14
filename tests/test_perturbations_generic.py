"""Every registered built-in perturbation passes the generic suite (one test id per check)."""

from __future__ import annotations

import pytest
from perturbation_checks import iter_checks

from robustlab.perturbations import available, make

BUILTIN_SOURCES = {"000", "001"}
NAMES = [n for n, c in available().items() if c.source in BUILTIN_SOURCES]
CASES = [(n, check) for n in NAMES for check, _ in iter_checks(make(n))]


@pytest.mark.parametrize(("name", "check"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_generic_check(name: str, check: str) -> None:
    dict(iter_checks(make(name)))[check]()


# fraction of SST-2 train sentences each changes (measured on all 6,920: verb ones 0.63-0.72,
# insert_abbreviation 0.63, the rest >= 0.93; word_synonym 0.82 on the first 500 since its
# context filter, issue 24); floors a little below, on the first 500
_FLOOR = {"negation": 0.6, "verb_tense": 0.55, "singular_plural_verb": 0.5,
          # word_synonym trades coverage for precision on real text (issue 33: quoted titles,
          # compounds, quantifiers, rare synset members and, without a masked LM, verbs are
          # left alone): about 53 % of SST-2 train sentences changed, was about 80 %
          "insert_abbreviation": 0.5, "word_synonym": 0.5}


@pytest.mark.shared_data
def test_real_sst_sentences(shared_data) -> None:
    lines = (shared_data / "sst" / "stsa.binary.train").read_text(encoding="utf-8").splitlines()
    texts = [line.partition(" ")[2] for line in lines[:500]]
    for name in NAMES:
        outcomes = make(name).perturb_outcomes(texts, seed=0)
        assert len(outcomes) == len(texts)
        assert not [o.error for o in outcomes if o.error], name
        changed = sum(o.changed for o in outcomes) / len(texts)
        assert changed >= _FLOOR.get(name, 0.85), (name, changed)
