"""CheckList adapter against the real checklist 0.0.11: perturb_fn, INV/DIR in a TestSuite, back."""

from __future__ import annotations

import random

import numpy as np
import pytest
from perturbation_checks import check_perturbation

pytest.importorskip("checklist.test_types", reason="CheckList is the optional robustlab[checklist]")

from checklist.expect import Expect  # noqa: E402
from checklist.pred_wrapper import PredictorWrapper  # noqa: E402
from checklist.test_suite import TestSuite as CheckListSuite  # noqa: E402
from checklist.test_types import DIR, INV, MFT  # noqa: E402

from robustlab.integrations.checklist import (  # noqa: E402
    checklist_fn,
    dir_test,
    expect_change,
    from_checklist,
    inv_test,
    perturb_data,
)
from robustlab.perturbations import make  # noqa: E402
from robustlab.perturbations.base import AppendToken, Identity, PerturbationError  # noqa: E402

DATA = ["the film is good", "a good cast", "it was bad", "nothing here", "", "!!!"]


def keyword_softmax(texts):
    """Positive iff the word 'good' appears and no negation does."""
    out = []
    for t in texts:
        words = t.lower().split()
        neg = any(w in ("not", "n't", "never") or w.endswith("n't") for w in words)
        pos = float("good" in words and not neg)
        out.append([1 - pos, pos])
    return np.array(out)


def constant_softmax(texts):
    return np.tile([0.3, 0.7], (len(texts), 1))


@pytest.fixture(scope="module")
def perturb_module():
    from robustlab.resources import checklist_perturb

    return checklist_perturb()  # real checklist.perturb (pattern), imported offline


def test_fn_matches_checklist_perturb_structure(perturb_module):
    Perturb = perturb_module.Perturb
    leet = make("leet_letters")
    ret = Perturb.perturb(DATA, checklist_fn(leet, seed=3))
    mine = perturb_data(DATA, leet, seed=3)
    assert ret.data == mine.data  # same rows, same order, unchanged examples skipped
    assert all(row[0] in DATA and row[1] != row[0] for row in ret.data)
    assert "" not in [row[0] for row in ret.data]
    many = Perturb.perturb(DATA[:2], checklist_fn(leet, seed=0, n=3), keep_original=False)
    assert all(len(set(r)) == len(r) and 1 <= len(r) <= 3 for r in many.data)
    with_meta = Perturb.perturb(DATA[:2], checklist_fn(leet), meta=True)
    assert with_meta.meta[0] == [None, leet.signature()]


def test_checklist_own_perturbations_as_robustlab(perturb_module):
    Perturb = perturb_module.Perturb
    typos = from_checklist(Perturb.add_typos, kwargs={"typos": 2}, level="character")
    state, np_state = random.getstate(), np.random.get_state()[1].copy()
    outs = typos.perturb_batch(["a reasonably long sentence here", "short"], seed=4)
    assert random.getstate() == state and (np.random.get_state()[1] == np_state).all()
    assert outs == typos.perturb_batch(["a reasonably long sentence here", "short"], seed=4)
    assert outs[0] != "a reasonably long sentence here"
    check_perturbation(typos)  # seeded, batch-independent, edge texts, RNG hygiene
    contr = from_checklist(Perturb.contractions)
    assert contr.perturb("He is not sure what it is.") in {"He isn't sure what it is.",
                                                           "He's not sure what it is.",
                                                           "He is not sure what it's."}
    assert contr.perturb_outcomes(["nothing to contract"])[0].changed is False


def test_perturb_data_without_pattern_is_seeded():
    p = make("butter_fingers_perturbation", prob=0.3)
    a = perturb_data(DATA, p, seed=1, nsamples=2)
    assert a.data == perturb_data(DATA, p, seed=1, nsamples=2).data and len(a.data) == 2
    assert "meta" not in a
    assert perturb_data(DATA, Identity()).data == []
    fn = checklist_fn(p)
    assert fn("") is None and isinstance(fn("good film"), str)
    with pytest.raises(PerturbationError, match="spaCy Doc"):
        fn({"not": "supported"})


def test_sentence_pairs_are_perturbed_element_wise():
    pairs = [("How do I learn Python?", "What is the best way to learn Python?"), ("", "")]
    app = AppendToken("zxqv")
    both = perturb_data(pairs, app)
    assert both.data == [[pairs[0], ("How do I learn Python? zxqv",
                                     "What is the best way to learn Python? zxqv")],
                         [pairs[1], ("zxqv", "zxqv")]]
    second = checklist_fn(app, fields=[1])(pairs[0])
    assert second == (pairs[0][0], "What is the best way to learn Python? zxqv")
    qqp = inv_test(make("char_swap"), pairs[:1], fields=[0])
    assert qqp.data[0][1][1] == pairs[0][1] and qqp.data[0][1][0] != pairs[0][0]


def test_inv_and_dir_tests_in_an_existing_suite():
    suite = CheckListSuite()
    suite.add(MFT(["good", "bad"], labels=[1, 0], name="existing MFT", capability="Vocabulary",
                  description="a test the user already had"))
    inv = inv_test(make("leet_letters"), DATA, seed=0)
    assert isinstance(inv, INV) and inv.name == "INV leet_letters"
    suite.add(inv)
    neg = make("negation")
    dtest = dir_test(neg, ["the film is good", "this movie works", "it is a good cast"])
    assert isinstance(dtest, DIR) and dtest.capability == "Negation"
    suite.add(dtest)
    suite.add(dir_test(AppendToken("zxqv"), DATA[:3], name="DIR append",
                       expect=Expect.monotonic(label=1, increasing=True, tolerance=0.1)))

    suite.run(PredictorWrapper.wrap_softmax(keyword_softmax), overwrite=True, verbose=False)
    stats = {n: t.get_stats() for n, t in suite.tests.items()}
    assert stats["existing MFT"].fails == 0
    # leet turns 'good' into e.g. 'g00d': the keyword model's prediction flips -> INV failures
    assert stats["INV leet_letters"].fails >= 1
    # negation flips the keyword model wherever 'good' was present; 'works' stays negative
    assert stats["DIR negation"].testcases == 3
    assert stats["DIR negation"].fails == 1

    suite.run(PredictorWrapper.wrap_softmax(constant_softmax), overwrite=True, verbose=False)
    assert suite.tests["INV leet_letters"].get_stats().fails == 0
    assert suite.tests["DIR negation"].get_stats().fails == 3  # never changes its mind


def test_builders_refuse_meaningless_tests():
    with pytest.raises(PerturbationError, match="label-preserving"):
        dir_test(make("leet_letters"), DATA)
    with pytest.raises(PerturbationError, match="changed none"):
        inv_test(Identity(), DATA)
    assert callable(expect_change())
