"""TextAttack ModelWrapper and CheckList prediction function over a robustlab model.

One module, because ``import textattack`` takes ~15 s: the attack and wrapper checks share it.
"""

from __future__ import annotations

import numpy as np
import pytest

from robustlab.integrations.victims import checklist_predict_fn, textattack_wrapper
from robustlab.models.registry import make_model

POS = "wonderful moving brilliant superb charming delightful".split()
NEG = "dull tedious awful boring clumsy bland".split()


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    texts, labels = [], []
    for i in range(400):
        y = i % 2
        words = list(rng.choice(["the", "movie", "plot", "was", "and", "a", "film"], 5))
        words.insert(2, str(rng.choice(POS if y else NEG)))
        texts.append(" ".join(words))
        labels.append(y)
    return make_model("bow", steps=150, seed=0).fit(texts, labels)


def test_textattack_wrapper_and_real_attack(model):
    pytest.importorskip("textattack")
    from textattack.models.wrappers import ModelWrapper

    w = textattack_wrapper(model)
    assert isinstance(w, ModelWrapper)
    out = w(["the movie was wonderful", "the movie was dull"])
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    np.testing.assert_allclose(out.sum(1), 1.0)
    assert out[0].argmax() == 1 and out[1].argmax() == 0
    assert w.queries == 2
    # sentence pairs arrive as tuples when a dataset has several input columns
    assert w([("the movie", "was wonderful")]).shape == (1, 2)

    # a real TextAttack attack runs against the wrapper (DeepWordBug works offline)
    from textattack.attack_recipes import DeepWordBugGao2018
    from textattack.attack_results import SkippedAttackResult

    attack = DeepWordBugGao2018.build(w)
    result = attack.attack("the movie was wonderful and brilliant", 1)
    assert not isinstance(result, SkippedAttackResult)
    assert w.queries > 3  # every model call went through the counting choke point


def test_checklist_predict_fn(model):
    pytest.importorskip("checklist")
    from checklist.test_types import MFT

    fn = checklist_predict_fn(model)
    preds, confs = fn(["the plot was superb", "the plot was boring"])
    assert list(preds) == [1, 0] and confs.shape == (2, 2)
    test = MFT(["the film was charming", "a delightful movie"], labels=1, name="pos")
    test.run(fn, overwrite=True)
    assert fn.predictor.queries == 4
    assert list(test.results.preds) == [1, 1]
