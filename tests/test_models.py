"""The from-scratch torch families and the model registry."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from robustlab.errors import InputError
from robustlab.models.registry import available_models, load_model, make_model, parse_model_spec

torch = pytest.importorskip("torch")

FAMILIES = ["textrnn", "bow", "cnn", "lstm", "transformer"]
FAST = {"steps": 200, "batch_size": 32, "embed_dim": 32, "hidden": 32}


def planted_task(n: int, seed: int, pairs: bool = False):
    """Random filler words; label 1 iff the token 'zqx' was planted at a random position.

    With pairs, the planted token is in the second sentence only.
    """
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(300)]
    texts, labels = [], []
    for i in range(n):
        toks = list(rng.choice(words, rng.integers(4, 12)))
        y = i % 2
        if y:
            toks.insert(int(rng.integers(0, len(toks) + 1)), "zqx")
        text = " ".join(toks)
        texts.append((" ".join(rng.choice(words, 5)), text) if pairs else text)
        labels.append(y)
    return texts, labels


@pytest.fixture(scope="module")
def task():
    return planted_task(600, 0), planted_task(200, 1)


@pytest.fixture(scope="module")
def trained(task):
    (xtr, ytr), _ = task
    return {f: make_model(f, **FAST).fit(xtr, ytr) for f in FAMILIES}


@pytest.mark.parametrize("family", FAMILIES)
def test_family_learns_planted_token(trained, task, family):
    _, (xte, yte) = task
    model = trained[family]
    acc = float(np.mean(model.predict(xte) == np.asarray(yte)))
    assert acc >= 0.95, f"{family} held-out accuracy {acc}"
    proba = model.predict_proba(xte)
    assert proba.shape == (len(xte), 2) and proba.dtype == np.float64
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_save_load_round_trip(trained, task, family, tmp_path):
    _, (xte, _) = task
    model = trained[family]
    model.save(tmp_path / "m")
    assert (tmp_path / "m" / "robustlab_model.json").is_file()
    assert (tmp_path / "m" / "model.safetensors").is_file()
    again = load_model(tmp_path / "m")
    assert type(again) is type(model) and again.get_params() == model.get_params()
    np.testing.assert_allclose(again.predict_proba(xte), model.predict_proba(xte), atol=1e-6)


@pytest.mark.parametrize("family", ["bow", "textrnn"])
def test_seeded_determinism_and_global_rng_untouched(task, family):
    (xtr, ytr), (xte, _) = task
    state = torch.get_rng_state()
    a = make_model(family, seed=3, **{**FAST, "steps": 30}).fit(xtr, ytr).predict_proba(xte)
    assert torch.equal(state, torch.get_rng_state()), "fit changed the global torch RNG"
    b = make_model(family, seed=3, **{**FAST, "steps": 30}).fit(xtr, ytr).predict_proba(xte)
    c = make_model(family, seed=4, **{**FAST, "steps": 30}).fit(xtr, ytr).predict_proba(xte)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_refit_forgets_previous_fit(task):
    (xtr, ytr), (xte, _) = task
    m = make_model("bow", seed=1, **{**FAST, "steps": 30})
    first = m.fit(xtr, ytr).predict_proba(xte)
    m.fit(xtr, [1 - y for y in ytr])
    m.fit(xtr, ytr)
    np.testing.assert_array_equal(first, m.predict_proba(xte))


def test_sentence_pairs_use_both_sides():
    xtr, ytr = planted_task(400, 2, pairs=True)
    xte, yte = planted_task(200, 3, pairs=True)
    m = make_model("textrnn", **FAST).fit(xtr, ytr)
    assert float(np.mean(m.predict(xte) == np.asarray(yte))) >= 0.95
    # the same tokens placed on the first side are a different input (<sep> marks the sides)
    swapped = [(b, a) for a, b in xte[:20]]
    assert m.predict_proba(swapped).shape == (20, 2)


def test_multiclass_and_fixed_steps():
    rng = np.random.default_rng(0)
    texts = [f"{['red', 'green', 'blue'][i % 3]} " + " ".join(rng.choice(list("abcdefg"), 5))
             for i in range(300)]
    labels = [i % 3 for i in range(300)]
    m = make_model("bow", **{**FAST, "steps": 80}).fit(texts, labels)
    assert m.n_classes_ == 3 and len(m.losses_) == 80 and m.steps_ == 80
    assert float(np.mean(m.predict(texts) == np.asarray(labels))) > 0.95


@pytest.mark.parametrize(
    ("texts", "labels", "match"),
    [
        ([], [], "empty"),
        (["a b", "c d"], [0, 0], "only 1 class"),
        (["a b", "c d"], [1, 2], "0..C-1"),
        (["a b", "c d"], [0, 1, 1], "must match"),
        (["a b", "   "], [0, 1], "no tokens"),
        (["a b", "c d"], [0, 0.5], "integers"),
    ],
)
def test_bad_training_input(texts, labels, match):
    with pytest.raises(InputError, match=match):
        make_model("bow", steps=2).fit(texts, labels)


def test_unknown_names_and_params():
    with pytest.raises(InputError, match="textrnn, bow, cnn, lstm, transformer"):
        make_model("textrnnn")
    with pytest.raises(InputError, match="unknown parameter"):
        make_model("bow", hiden=3)
    with pytest.raises(InputError, match="not trained"):
        make_model("bow").predict_proba(["a"])
    with pytest.raises(InputError, match="without robustlab_model.json"):
        load_model(".")


def test_parse_spec_and_listing():
    assert parse_model_spec("textrnn:hidden=32,steps=5") == ("textrnn", {"hidden": 32,
                                                                         "steps": 5})
    m = make_model("cnn:hidden=16", steps=3)
    assert m.hidden == 16 and m.steps == 3 and m.family == "cnn"
    assert set(FAMILIES) | {"minilm"} == set(available_models())
    assert "cnn(" in m.model_id() and "hidden=16" in m.model_id()


def test_predict_handles_empty_and_unknown_tokens(trained):
    m = trained["textrnn"]
    p = m.predict_proba(["", "never seen tokens ΩΩ", "zqx"])
    assert p.shape == (3, 2) and np.isfinite(p).all()
    assert m.predict_proba([]).shape == (0, 2)


def test_listing_models_does_not_import_torch():
    code = ("import sys; from robustlab.models.registry import available_models; "
            "available_models(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_tokenizer_keeps_case_and_punctuation():
    from robustlab.models.vocab import tokenize

    assert tokenize("Great movie!!  don't, re-make") == (
        "Great", "movie", "!", "!", "don't", ",", "re-make")
    assert tokenize("Great", lowercase=True) == ("great",)
