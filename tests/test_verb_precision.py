"""Precision of paper 001's rules on hand-judged held-out sentences (SST-2 and TREC).

tests/fixtures/judgements/<rule>.tsv holds, per rule, 50 SST-2 and 50 TREC outputs (seed 0)
with a judgement by hand (``word_synonym_mlm``: word_synonym with the shared fill-mask model) (see tests/judged_fixtures.py for how the rows are drawn and which
half was looked at while the rules were written). The test re-generates every output: one that
differs from the judged one means a rule changed and its rows must be judged again.
"""

from __future__ import annotations

from collections import Counter

import pytest
from judged_fixtures import COLUMNS, RULES, generate, precision, read

#: the precision the stored judgements give (docs/perturbations.md reports them); a test fails
#: when the fixture's figures move, so the docs never go stale either
JUDGED = {"negation": 92, "verb_tense": 93, "singular_plural_verb": 98, "word_synonym": 69,
          "word_synonym_mlm": 73, "misspelling": 97}


@pytest.mark.parametrize("rule", RULES)
def test_fixture_is_complete_and_well_formed(rule: str) -> None:
    rows = read(rule)
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        (h, d): 25 for h in ("dev", "heldout") for d in ("sst2", "trec")}
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["judgement"] in ("correct", "incorrect") and r["reason"].strip()
        assert r["output"] != r["original"]
    assert round(100 * precision(rows)) == JUDGED[rule]


#: rules whose outputs take minutes to regenerate (they load the counter-fitted neighbours or
#: the fill-mask model): slow suite; the others (seconds) are checked in the fast suite, so a
#: changed rule fails there against its judged outputs
SLOW_RULES = {"word_synonym", "word_synonym_mlm"}


@pytest.mark.parametrize("rule", [pytest.param(r, marks=pytest.mark.slow) if r in SLOW_RULES
                                  else r for r in RULES])
def test_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    from robustlab.resources import minilm_mlm_path, misspellings_file, synonyms_dir

    if rule == "misspelling" and misspellings_file()[1] != "wikipedia":
        pytest.skip("the Wikipedia misspellings list is not available")
    if rule.startswith("word_synonym") and synonyms_dir()[0] is None:
        pytest.skip("the counter-fitted neighbours are not available")
    if rule == "word_synonym_mlm" and not (minilm_mlm_path() / "config.json").exists():
        pytest.skip(f"needs the shared fill-mask model at {minilm_mlm_path()}")
    judged = read(rule)
    fresh = generate(rule, shared_data)
    key = ("half", "dataset", "source", "original", "output")
    stale = [(j["source"], j["output"], f["output"]) for j, f in zip(judged, fresh, strict=False)
             if tuple(j[k] for k in key) != tuple(f[k] for k in key)]
    assert len(fresh) == len(judged) and not stale, \
        f"{rule}: outputs changed since they were judged; judge them again: {stale[:3]}"
