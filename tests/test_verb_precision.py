"""Precision of paper 001's rules on hand-judged held-out sentences (SST-2 and TREC).

tests/fixtures/judgements/<rule>.tsv holds, per rule, 50 SST-2 and 50 TREC outputs (seed 0)
with a judgement by hand (``word_synonym_mlm``: word_synonym with the shared fill-mask model) (see tests/judged_fixtures.py for how the rows are drawn and which
half was looked at while the rules were written). The test re-generates every output: one that
differs from the judged one means a rule changed and its rows must be judged again.
"""

from __future__ import annotations

from collections import Counter

import judged_realtext
import pytest
from judged_fixtures import COLUMNS, RULES, generate, precision, read

#: the precision the stored judgements give (docs/perturbations.md reports them); a test fails
#: when the fixture's figures move, so the docs never go stale either
JUDGED = {"negation": 95, "verb_tense": 93, "singular_plural_verb": 98, "word_synonym": 75,
          "word_synonym_mlm": 80, "misspelling": 97}
#: halves where a rule changes fewer than 25 sentences: word_synonym leaves most of TREC's short
#: questions alone since issue 33 (names, compounds, verbs without a masked LM), so TREC's dev
#: half (250 questions) runs out
SHORT = {"word_synonym": {("dev", "trec"): 13}, "word_synonym_mlm": {("dev", "trec"): 10}}
#: the same on real text (tests/judged_realtext.py): (dev %, held-out %) per rule
JUDGED_REAL = {"negation": (96, 92), "verb_tense": (74, 74), "singular_plural_verb": (92, 96),
               "word_synonym": (82, 76)}
#: the version each of these first fixtures judged; a rule changed since (verb_tense v4,
#: word_synonym v5) is judged again in the second draw (RULE.draw2.tsv), and its first fixtures
#: stay as the record of the old version's precision (docs/perturbations.md reports both)
JUDGED_VERSION = {"verb_tense": 3, "word_synonym": 4}
#: the second draw: (dev2 %, heldout2 %) per rule
JUDGED_DRAW2 = {"verb_tense": (96, 82), "word_synonym": (92, 94)}
#: the version each second-draw fixture judged; verb_tense changed again (v5) and is judged in
#: the third draw (RULE.draw3.tsv), its second draw staying as v4's record
DRAW2_VERSION = {"verb_tense": 4, "word_synonym": 5}
#: the third draw: (dev3 %, heldout3 %) per rule
JUDGED_DRAW3 = {"verb_tense": (96, 90)}
#: the version each third-draw fixture judged; verb_tense changed again (v6) and is judged in
#: the fourth draw (RULE.draw4.tsv), its third draw staying as v5's record
DRAW3_VERSION = {"verb_tense": 5}
#: the fourth draw: (dev4 %, heldout4 %) per rule
JUDGED_DRAW4 = {"verb_tense": (100, 90)}
#: the version each fourth-draw fixture judged; verb_tense changed again (v7) and is judged in
#: the fifth draw (RULE.draw5.tsv), its fourth draw staying as v6's record
DRAW4_VERSION = {"verb_tense": 6}
#: the fifth draw (held-out rows only): heldout5 % per rule
JUDGED_DRAW5 = {"verb_tense": 98}


def _superseded(rule: str) -> bool:
    """Whether ``rule``'s first fixtures judged an older version than the current one; then the
    second draw must exist and be complete (checked here), and regenerate (checked below)."""
    from robustlab.perturbations import make

    base = rule.removesuffix("_mlm")
    if base not in JUDGED_VERSION or make(base).version == JUDGED_VERSION[base]:
        return False
    assert make(base).version > JUDGED_VERSION[base]
    assert len(judged_realtext.read2(base)) == 100, f"{base}: changed, but not judged again"
    return True


def assert_still_judged(rule: str, judged: list[dict], fresh: list[dict]) -> None:
    """The regenerated outputs are the judged ones, row for row (every draw's stale-row check)."""
    key = ("half", "dataset", "source", "original", "output")
    stale = [(j["source"], j["output"], f["output"]) for j, f in zip(judged, fresh, strict=False)
             if tuple(j[k] for k in key) != tuple(f[k] for k in key)]
    assert len(fresh) == len(judged) and not stale, \
        f"{rule}: outputs changed since they were judged; judge them again: {stale[:3]}"


@pytest.mark.parametrize("rule", RULES)
def test_fixture_is_complete_and_well_formed(rule: str) -> None:
    rows = read(rule)
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        (h, d): SHORT.get(rule, {}).get((h, d), 25) for h in ("dev", "heldout") for d in ("sst2", "trec")}
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
    if _superseded(rule):
        return  # judged again on fresh text: test_draw2_outputs_are_the_judged_ones
    judged = read(rule)
    fresh = generate(rule, shared_data)
    assert_still_judged(rule, judged, fresh)


@pytest.mark.parametrize("rule", judged_realtext.RULES)
def test_realtext_fixture_is_complete_and_well_formed(rule: str) -> None:
    """100 hand-judged outputs per rule on MR and SUBJ (issue 33), half judged after the rules
    were frozen; the figures docs/perturbations.md reports."""
    rows = judged_realtext.read(rule)
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        (h, d): 25 for h in ("dev", "heldout") for d in ("mr", "subj")}
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["judgement"] in ("correct", "incorrect") and r["reason"].strip()
        assert r["output"] != r["original"]
    halves = tuple(round(100 * precision([r for r in rows if r["half"] == h]))
                   for h in ("dev", "heldout"))
    assert halves == JUDGED_REAL[rule]


@pytest.mark.slow
@pytest.mark.parametrize("rule", judged_realtext.RULES)
def test_realtext_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    from robustlab.resources import synonyms_dir

    if rule == "word_synonym" and synonyms_dir()[0] is None:
        pytest.skip("the counter-fitted neighbours are not available")
    if _superseded(rule):
        return  # judged again on fresh text: test_draw2_outputs_are_the_judged_ones
    judged = judged_realtext.read(rule)
    fresh = judged_realtext.generate(rule, shared_data)
    assert_still_judged(rule, judged, fresh)


@pytest.mark.parametrize("rule", judged_realtext.DRAW2_RULES)
def test_draw2_fixture_is_complete_and_well_formed(rule: str) -> None:
    """100 more hand-judged outputs per changed rule on MR/SUBJ sentences no earlier draw used;
    the heldout2 half drawn and judged after the rules were frozen (the commit is in the file)."""
    rows = judged_realtext.read2(rule)
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        (h, d): 25 for h in judged_realtext.DRAW2_HALVES for d in ("mr", "subj")}
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["judgement"] in ("correct", "incorrect") and r["reason"].strip()
        assert r["output"] != r["original"]
    earlier = {r["source"] for name in judged_realtext.RULES for r in judged_realtext.read(name)}
    assert not earlier & {r["source"] for r in rows}  # never judged before
    halves = tuple(round(100 * precision([r for r in rows if r["half"] == h]))
                   for h in judged_realtext.DRAW2_HALVES)
    assert halves == JUDGED_DRAW2[rule]


@pytest.mark.parametrize("rule", [pytest.param(r, marks=pytest.mark.slow) if r in SLOW_RULES
                                  else r for r in judged_realtext.DRAW2_RULES])
def test_draw2_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    from robustlab.resources import minilm_mlm_path, synonyms_dir

    if rule == "word_synonym" and (synonyms_dir()[0] is None
                                   or not (minilm_mlm_path() / "config.json").exists()):
        pytest.skip("needs the counter-fitted neighbours and the shared fill-mask model")
    from robustlab.perturbations import make

    if make(rule).version != DRAW2_VERSION[rule]:  # judged again: test_draw3_outputs_...
        assert make(rule).version > DRAW2_VERSION[rule]
        assert len(judged_realtext.read3(rule)) == 100, f"{rule}: changed, but not judged again"
        return
    judged = judged_realtext.read2(rule)
    fresh = judged_realtext.generate2(rule, shared_data)
    assert_still_judged(rule, judged, fresh)


def assert_draw_well_formed(rows: list[dict], halves: tuple[str, ...], earlier: set[str],
                            expected: tuple[int, ...]) -> None:
    """A later draw's fixture: 25 MR + 25 SUBJ rows per half, every row judged with a reason and
    changed, no source judged in an earlier draw, and its precision per half as documented."""
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        (h, d): 25 for h in halves for d in ("mr", "subj")}
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["judgement"] in ("correct", "incorrect") and r["reason"].strip()
        assert r["output"] != r["original"]
    assert not earlier & {r["source"] for r in rows}  # never judged before
    assert tuple(round(100 * precision([r for r in rows if r["half"] == h]))
                 for h in halves) == expected


@pytest.mark.parametrize("rule", judged_realtext.DRAW3_RULES)
def test_draw3_fixture_is_complete_and_well_formed(rule: str) -> None:
    """100 more hand-judged outputs of verb_tense v5 on MR/SUBJ sentences no earlier draw used;
    the heldout3 half drawn and judged after the rule was frozen (the commit is in the file)."""
    earlier = {r["source"] for name in judged_realtext.RULES for r in judged_realtext.read(name)}
    earlier |= {r["source"] for name in judged_realtext.DRAW2_RULES
                for r in judged_realtext.read2(name)}
    assert_draw_well_formed(judged_realtext.read3(rule), judged_realtext.DRAW3_HALVES, earlier,
                            JUDGED_DRAW3[rule])


@pytest.mark.parametrize("rule", judged_realtext.DRAW3_RULES)
def test_draw3_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    """The current rule gives exactly the judged outputs (0 stale rows): a change to verb_tense
    or to find_verbs(wide=True) fails here until its outputs are judged again (a new version
    is judged in the fourth draw, and this draw stays as the old version's record)."""
    from robustlab.perturbations import make

    if make(rule).version != DRAW3_VERSION[rule]:  # judged again: test_draw4_outputs_...
        assert make(rule).version > DRAW3_VERSION[rule]
        assert len(judged_realtext.read4(rule)) == 100, f"{rule}: changed, but not judged again"
        return
    judged = judged_realtext.read3(rule)
    fresh = judged_realtext.generate3(rule, shared_data)
    assert_still_judged(rule, judged, fresh)


@pytest.mark.parametrize("rule", judged_realtext.DRAW4_RULES)
def test_draw4_fixture_is_complete_and_well_formed(rule: str) -> None:
    """100 more hand-judged outputs of verb_tense v6 on MR/SUBJ sentences no earlier draw used;
    the heldout4 half drawn and judged after the rule was frozen (the commit is in the file)."""
    earlier = {r["source"] for name in judged_realtext.RULES for r in judged_realtext.read(name)}
    earlier |= {r["source"] for name in judged_realtext.DRAW2_RULES
                for r in judged_realtext.read2(name)}
    earlier |= {r["source"] for name in judged_realtext.DRAW3_RULES
                for r in judged_realtext.read3(name)}
    assert_draw_well_formed(judged_realtext.read4(rule), judged_realtext.DRAW4_HALVES, earlier,
                            JUDGED_DRAW4[rule])


@pytest.mark.parametrize("rule", judged_realtext.DRAW4_RULES)
def test_draw4_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    """The current rule gives exactly the judged outputs of the fourth draw (0 stale rows): a
    change to verb_tense or to find_verbs(wide=True) fails here until they are judged again (a
    new version is judged in the fifth draw, and this draw stays as the old version's record)."""
    from robustlab.perturbations import make

    if make(rule).version != DRAW4_VERSION[rule]:  # judged again: test_draw5_outputs_...
        assert make(rule).version > DRAW4_VERSION[rule]
        assert len(judged_realtext.read5(rule)) == 50, f"{rule}: changed, but not judged again"
        return
    judged = judged_realtext.read4(rule)
    fresh = judged_realtext.generate4(rule, shared_data)
    assert_still_judged(rule, judged, fresh)


@pytest.mark.parametrize("rule", judged_realtext.DRAW5_RULES)
def test_draw5_fixture_is_complete_and_well_formed(rule: str) -> None:
    """50 hand-judged outputs of verb_tense v7 on MR/SUBJ sentences no earlier draw used and
    whose text no earlier fixture judged, all drawn and judged after the rule was frozen (the
    commit is in the file)."""
    rows = judged_realtext.read5(rule)
    assert Counter((r["half"], r["dataset"]) for r in rows) == {
        ("heldout5", d): 25 for d in ("mr", "subj")}
    for r in rows:
        assert set(r) == set(COLUMNS)
        assert r["judgement"] in ("correct", "incorrect") and r["reason"].strip()
        assert r["output"] != r["original"]
    earlier = {r["source"] for name in judged_realtext.RULES for r in judged_realtext.read(name)}
    for reader, rules in ((judged_realtext.read2, judged_realtext.DRAW2_RULES),
                          (judged_realtext.read3, judged_realtext.DRAW3_RULES),
                          (judged_realtext.read4, judged_realtext.DRAW4_RULES)):
        earlier |= {r["source"] for name in rules for r in reader(name)}
    assert not earlier & {r["source"] for r in rows}  # never judged before
    assert not judged_realtext.judged_texts() & {judged_realtext.text_key(r["original"])
                                                 for r in rows}  # nor the same text elsewhere
    assert round(100 * precision(rows)) == JUDGED_DRAW5[rule]


@pytest.mark.parametrize("rule", judged_realtext.DRAW5_RULES)
def test_draw5_outputs_are_the_judged_ones(rule: str, shared_data) -> None:
    """The current rule gives exactly the judged outputs of the fifth draw (0 stale rows): a
    change to verb_tense or to find_verbs(wide=True) fails here until they are judged again."""
    judged = judged_realtext.read5(rule)
    fresh = judged_realtext.generate5(rule, shared_data)
    assert_still_judged(rule, judged, fresh)
