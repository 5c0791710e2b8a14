"""Every registered built-in perturbation passes the generic suite (one test id per check)."""

from __future__ import annotations

import pytest
from perturbation_checks import SAMPLE_CORPUS, iter_checks

from robustlab.perturbations import available, make

BUILTIN_SOURCES = {"000", "001"}
NAMES = [n for n, c in available().items() if c.source in BUILTIN_SOURCES]
CASES = [(n, check) for n in NAMES for check, _ in iter_checks(make(n))]


@pytest.mark.parametrize(("name", "check"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_generic_check(name: str, check: str) -> None:
    dict(iter_checks(make(name), CORPUS.get(name)))[check]()


#: verb_tense (v4) shifts a whole sentence, so its seed only picks among a text's sentences:
#: its corpus holds texts of several sentences too
CORPUS = {"verb_tense": (*SAMPLE_CORPUS, "The film drags. The actors try hard. It ends well.",
                         "She smiled. He laughed. They left early."),
          # word_synonym (v5) leaves most words of the sample alone: texts with several
          # replaceable words, so that the seed picks among them
          "word_synonym": (*SAMPLE_CORPUS, "we watched the movie , and i liked the story very much .",
                           "the film tells a story that is absolutely wonderful .")}


# fraction of SST-2 train sentences each changes (measured on all 6,920: verb ones 0.63-0.72,
# insert_abbreviation 0.63, the rest >= 0.93; word_synonym 0.82 on the first 500 since its
# context filter, issue 24); floors a little below, on the first 500
_FLOOR = {"negation": 0.6, "singular_plural_verb": 0.5,
          # verb_tense v4 shifts whole sentences or none (issue 33): 0.456 on the first 500
          "verb_tense": 0.4,
          # word_synonym trades coverage for precision on real text (issue 33: quoted titles,
          # compounds, quantifiers, rare synset members, verbs; v5 the masked LM by default):
          # 0.37 on the first 100 with the shared minilm-mlm (0.48 of 500 without one)
          "insert_abbreviation": 0.5, "word_synonym": 0.3}
#: the masked LM costs about 0.6 s a sentence on a loaded 2-core machine: fewer sentences
_FIRST = {"word_synonym": 100}


@pytest.mark.shared_data
def test_real_sst_sentences(shared_data) -> None:
    lines = (shared_data / "sst" / "stsa.binary.train").read_text(encoding="utf-8").splitlines()
    texts = [line.partition(" ")[2] for line in lines[:500]]
    for name in NAMES:
        some = texts[: _FIRST.get(name, len(texts))]
        outcomes = make(name).perturb_outcomes(some, seed=0)
        assert len(outcomes) == len(some)
        assert not [o.error for o in outcomes if o.error], name
        changed = sum(o.changed for o in outcomes) / len(some)
        assert changed >= _FLOOR.get(name, 0.85), (name, changed)
