"""Hugging Face fine-tuning through the real code path with a tiny randomly initialised BERT.

The checkpoint is built from a ``BertConfig`` (2 layers, 32 hidden) and a WordPiece vocabulary
written to a temporary directory, so the fast suite runs the loader, the per-process initial-state
and tokenization caches, the training loop (fp32 and CPU bf16 autocast), save/load and the
bad-input paths without the real MiniLM.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from _tiny_tokenizer import bert_tokenizer

from robustlab.errors import InputError

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")

from robustlab.models import hf  # noqa: E402
from robustlab.models.registry import load_model, make_model  # noqa: E402

POS = ["good", "great", "fine", "nice"]
NEG = ["bad", "awful", "poor", "dull"]
FILL = ["the", "a", "film", "movie", "was", "plot", "acting", "really", "very", "quite"]


def _texts(n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n):
        y = i % 2
        words = list(rng.choice(FILL, size=int(rng.integers(3, 9))))
        words.insert(int(rng.integers(0, len(words))), str(rng.choice(POS if y else NEG)))
        texts.append(" ".join(words))
        labels.append(y)
    return texts, labels


def _write_vocab(d, extra=()):
    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *POS, *NEG, *FILL, *extra]
    (d / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    return len(words)


def _tiny_bert(d, *, vocab_size=None, head=False, extra=()):
    """A randomly initialised 2-layer BERT (+ tokenizer) saved with save_pretrained."""
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertModel,
    )

    d.mkdir(parents=True, exist_ok=True)
    n = _write_vocab(d, extra)
    bert_tokenizer(d / "vocab.txt").save_pretrained(d)
    cfg = BertConfig(vocab_size=vocab_size or n, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    torch.manual_seed(0)
    model = (BertForSequenceClassification if head else BertModel)(cfg)
    model.save_pretrained(d, safe_serialization=True)
    return d


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return _tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(autouse=True)
def _fresh_caches():
    hf.clear_caches()
    yield
    hf.clear_caches()


def test_defaults_follow_fine_tuning_practice_and_are_recorded(tiny):
    m = make_model(str(tiny))
    assert (m.lr, m.batch_size, m.warmup_ratio, m.weight_decay, m.max_length) == \
        (3e-5, 32, 0.1, 0.01, "auto")
    mid = m.model_id()
    for part in ("lr=3e-05", "batch_size=32", "max_length=auto", "warmup_ratio=0.1",
                 "precision=auto", "steps=300"):
        assert part in mid
    # overridable per model spec, and the override is what the id records
    o = make_model(f"hf:{tiny}", lr=5e-5, batch_size=8)
    assert "lr=5e-05" in o.model_id() and "batch_size=8" in o.model_id()
    # the device is where it runs, not what it is: never in the id
    assert make_model(str(tiny), device="cpu").model_id() == mid
    assert "device" not in mid and "num_threads" not in mid


def test_tiny_bert_learns_and_reuses_the_cached_initial_state(tiny, tmp_path, capsys):
    texts, labels = _texts(64)
    m = make_model(str(tiny), steps=60, batch_size=16, lr=1e-3, seed=0)
    m.fit(texts, labels)
    err = capsys.readouterr().err
    assert "no trained classification head" in err and "classifier" in err
    assert len(m.losses_) == 60 and m.n_classes_ == 2
    assert np.mean(m.losses_[-10:]) < np.mean(m.losses_[:10])
    test, test_y = _texts(40, seed=1)
    assert np.mean(m.predict(test) == np.asarray(test_y)) >= 0.9
    # auto max length: longest toy text is 9 words + [CLS]/[SEP] -> ceil to a multiple of 8
    assert m.max_length_ == 16
    assert len(hf._PRETRAINED) == 1 and hf._TOKENS

    # a second fit (another cell) starts from the in-memory copy: nothing is re-read
    init = next(iter(hf._PRETRAINED.values()))
    before = {k: v.clone() for k, v in init.model.state_dict().items()}
    calls = []
    real = transformers.AutoModelForSequenceClassification.from_pretrained
    transformers.AutoModelForSequenceClassification.from_pretrained = \
        lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        again = make_model(str(tiny), steps=60, batch_size=16, lr=1e-3, seed=0).fit(texts,
                                                                                   labels)
    finally:
        transformers.AutoModelForSequenceClassification.from_pretrained = real
    assert calls == []
    # ... the cached initial state was not trained in place ...
    for k, v in init.model.state_dict().items():
        assert torch.equal(v, before[k]), k
    # ... and the same seed gives the same model (fixed steps, seeded head and batches)
    np.testing.assert_allclose(again.losses_, m.losses_, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(again.predict_proba(test), m.predict_proba(test), atol=1e-6)
    other = make_model(str(tiny), steps=2, batch_size=16, seed=1).fit(texts, labels)
    assert not np.allclose(other.model_.classifier.weight.detach().numpy(),
                           m.model_.classifier.weight.detach().numpy())

    # save/load round trip (the saved dir has a head now: no fresh-head notice)
    m.save(tmp_path / "saved")
    meta = json.loads((tmp_path / "saved" / "robustlab_model.json").read_text())
    assert meta["max_length"] == 16 and meta["params"]["lr"] == 1e-3
    loaded = load_model(tmp_path / "saved", device="cpu")
    np.testing.assert_allclose(loaded.predict_proba(test), m.predict_proba(test), atol=1e-5)
    # a study cell "like" the saved model reads its metadata only (no weights per cell) and
    # refits from the saved weights
    from robustlab.studies.learnability.data import build_model

    real = transformers.AutoModelForSequenceClassification.from_pretrained
    transformers.AutoModelForSequenceClassification.from_pretrained = \
        lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        like = build_model(str(tmp_path / "saved"), seed=2, steps=5)
    finally:
        transformers.AutoModelForSequenceClassification.from_pretrained = real
    assert calls == [] and isinstance(like, hf.HFClassifier)
    assert like.checkpoint == str(tmp_path / "saved") and (like.seed, like.steps) == (2, 5)
    assert like.lr == 1e-3 and like.model_id() != m.model_id()


def test_tokenization_is_cached_per_text_and_shared(tiny):
    texts, labels = _texts(32)
    make_model(str(tiny), steps=1, batch_size=8).fit(texts, labels)
    n = len(hf._TOKENS)
    assert n == len(set(texts))
    calls = []
    tk = hf._tokenizer(str(tiny))
    real = tk.tok.__class__.__call__
    tk.tok.__class__.__call__ = lambda self, *a, **k: calls.append(a) or real(self, *a, **k)
    try:
        make_model(str(tiny), steps=1, batch_size=8, seed=3).fit(texts, labels)
    finally:
        tk.tok.__class__.__call__ = real
    assert calls == [] and len(hf._TOKENS) == n  # second model: every text was cached


def test_pairs_are_tokenized_as_pairs_and_long_texts_truncated_by_the_tokenizer(tiny):
    texts, labels = _texts(16)
    pairs = [(t, "the film") for t in texts]
    m = make_model(str(tiny), steps=2, batch_size=8, max_length=8).fit(pairs, labels)
    enc = m._encode(pairs)
    sep = hf._tokenizer(str(tiny)).tok.sep_token_id
    assert enc.ids.shape[1] <= 8 and (enc.ids == sep).sum(1).eq(2).all()
    assert enc.types is not None and enc.types.max() == 1  # second segment marked
    assert m.predict_proba(pairs[:3]).shape == (3, 2)


def test_cpu_bf16_autocast_path_trains(tiny):
    texts, labels = _texts(32)
    m = make_model(str(tiny), steps=4, batch_size=8, lr=1e-3, precision="bf16")
    m.fit(texts, labels)
    assert len(m.losses_) == 4 and all(np.isfinite(m.losses_))
    seen = []
    handle = m.model_.classifier.register_forward_hook(lambda mod, i, o: seen.append(o.dtype))
    p = m.predict_proba(texts[:4])
    handle.remove()
    assert seen == [torch.bfloat16]  # the autocast region really ran in bf16
    assert p.dtype == np.float64 and np.allclose(p.sum(1), 1.0)
    with pytest.raises(InputError, match="fp16 needs a GPU"):
        make_model(str(tiny), steps=1, precision="fp16").fit(texts, labels)


def test_checkpoint_with_a_trained_head_says_nothing(tmp_path, capsys):
    d = _tiny_bert(tmp_path / "with-head", head=True)
    texts, labels = _texts(16)
    make_model(str(d), steps=1, batch_size=8).fit(texts, labels)
    assert "classification head" not in capsys.readouterr().err


def test_tokenizer_model_mismatch_is_a_clear_error(tmp_path):
    d = _tiny_bert(tmp_path / "small-emb", vocab_size=10)  # vocab.txt has 23 entries
    texts, labels = _texts(8)
    with pytest.raises(InputError, match="tokenizer has 23 tokens but the model's embedding "
                                         "table has 10"):
        make_model(str(d), steps=1).fit(texts, labels)


def test_missing_checkpoint_offline_names_the_fix(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match=r"HF_HUB_OFFLINE=1\)\. Fix: .*huggingface-cli "
                                         r"download robustlab-test/no-such-model"):
        make_model("hf:robustlab-test/no-such-model", steps=1).fit(["a b", "c d"], [0, 1])


def test_directory_without_weights_names_what_is_missing(tmp_path):
    d = tmp_path / "config-only"
    d.mkdir()
    _write_vocab(d)
    transformers.BertConfig(vocab_size=30, hidden_size=32, num_hidden_layers=1,
                            num_attention_heads=2, intermediate_size=64).save_pretrained(d)
    with pytest.raises(InputError, match="must hold config.json and the weights"):
        make_model(str(d), steps=1).fit(["good film", "bad film"], [1, 0])


def test_study_cells_share_the_loaded_checkpoint(tiny, tmp_path):
    """A learnability study with the tiny BERT: one load per process, every cell reuses it."""
    from robustlab.studies.learnability.study import LearnabilityStudy, clear_caches, run_study

    texts, labels = _texts(80)
    (tmp_path / "train.txt").write_text("".join(f"{y} {t}\n" for t, y in zip(texts, labels, strict=True)))
    test, ty = _texts(40, seed=1)
    (tmp_path / "test.txt").write_text("".join(f"{y} {t}\n" for t, y in zip(test, ty, strict=True)))
    spec = {"path": str(tmp_path / "train.txt"), "test_path": str(tmp_path / "test.txt"),
            "format": "label-text"}
    study = LearnabilityStudy(models=(f"{tiny}",), perturbations=("identity",),
                              dataset=spec, p_grid=(0.5, 1.0), seeds=(0,), steps=3,
                              experiments=("learnability",))
    loads, per_fit = [], []
    real_load = transformers.AutoModelForSequenceClassification.from_pretrained
    real_fit = hf.HFClassifier.fit

    def fit(self, *a, **k):
        out = real_fit(self, *a, **k)
        per_fit.append(self.load_seconds_)
        return out

    clear_caches()
    try:
        transformers.AutoModelForSequenceClassification.from_pretrained = \
            lambda *a, **k: loads.append(a) or real_load(*a, **k)
        hf.HFClassifier.fit = fit
        summary = run_study(study, tmp_path / "run", progress=False, plots=False,
                            device="cpu")
        # resume with another device value: same configuration, nothing recomputed
        again = run_study(study, tmp_path / "run", progress=False, plots=False,
                          device="auto")
    finally:
        transformers.AutoModelForSequenceClassification.from_pretrained = real_load
        hf.HFClassifier.fit = real_fit
        clear_caches()
    assert summary["complete"] and again["pairs"] == summary["pairs"]
    assert len(loads) == 1 and len(per_fit) == 2  # two cells, one load
    cfg = json.dumps(summary["config"])
    assert '"device"' not in cfg and "device=" not in cfg
