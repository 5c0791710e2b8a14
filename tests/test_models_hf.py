"""Hugging Face fine-tuning with the real pretrained MiniLM (tiny runs; offline)."""

from __future__ import annotations

import numpy as np
import pytest

from robustlab.errors import InputError
from robustlab.models.registry import load_model, make_model
from robustlab.resources import ResourceMissing, minilm_path

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def minilm_dir():
    try:
        return minilm_path()
    except ResourceMissing as exc:
        pytest.skip(str(exc))


def _data(n: int = 24):
    pos = ["a wonderful , moving film .", "truly great acting .", "i loved every minute ."]
    neg = ["a dull , tedious film .", "truly awful acting .", "i hated every minute ."]
    texts = [(pos if i % 2 else neg)[i % 3] for i in range(n)]
    return texts, [i % 2 for i in range(n)]


def test_minilm_fit_predict_save_load(minilm_dir, tmp_path):
    texts, labels = _data(12)
    m = make_model("minilm", steps=3, batch_size=4, lr=1e-4, num_threads=2)
    assert m.checkpoint == str(minilm_dir) and "minilm" in m.model_id()
    m.fit(texts, labels)
    assert len(m.losses_) == 3 and m.n_classes_ == 2
    p = m.predict_proba(texts[:6])
    assert p.shape == (6, 2) and np.allclose(p.sum(1), 1.0)
    m.save(tmp_path / "m")
    assert (tmp_path / "m" / "model.safetensors").is_file()
    again = load_model(tmp_path / "m")
    np.testing.assert_allclose(again.predict_proba(texts[:6]), p, atol=1e-5)
    assert again.checkpoint == str(tmp_path / "m") and again.base_checkpoint_ == str(minilm_dir)
    # sentence pairs go through the tokenizer's own pair encoding
    pairs = [(t, "the film") for t in texts[:4]]
    assert again.predict_proba(pairs).shape == (4, 2)


def test_checkpoint_dir_and_bad_hub_id(minilm_dir):
    m = make_model(str(minilm_dir), steps=1)
    assert m.family == "hf" and m.checkpoint == str(minilm_dir)
    with pytest.raises(InputError, match="cannot load Hugging Face checkpoint"):
        make_model("hf:robustlab-test/no-such-model", steps=1).fit(["a", "b"], [0, 1])
    with pytest.raises(InputError, match="mixing"):
        m.fit(["a good film", ("b", "c")], [0, 1])


@pytest.mark.slow
def test_minilm_fine_tuning_learns(minilm_dir):
    texts, labels = _data(48)
    m = make_model("minilm", steps=30, batch_size=16, lr=1e-4, seed=1).fit(texts, labels)
    held_out = ["a wonderful film .", "an awful film .", "great acting .", "dull acting ."]
    assert list(m.predict(held_out)) == [1, 0, 1, 0]


@pytest.mark.slow
def test_minilm_learns_sst2_well_above_chance(minilm_dir, shared_data):
    """The real pretrained MiniLM with robustlab's defaults (AdamW 3e-5, batch 32, warmup +
    linear decay, auto max length) on an SST-2 subset: far above the 0.5 of chance."""
    from robustlab.data.datasets import load_dataset

    sst = shared_data / "sst"
    if not (sst / "stsa.binary.train").exists():
        pytest.skip(f"needs SST-2 at {sst}")
    train = load_dataset(str(sst / "stsa.binary.train")).subsample(2000, seed=0)
    dev = load_dataset(str(sst / "stsa.binary.dev"))
    m = make_model("minilm", steps=150, seed=0).fit(train.texts, train.labels)
    acc = float(np.mean(m.predict(dev.texts) == np.asarray(dev.labels)))
    assert acc >= 0.78, acc
    assert np.mean(m.losses_[-20:]) < np.mean(m.losses_[:20])
