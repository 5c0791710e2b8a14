"""eval's prediction path (robustlab/studies/eval/predict.py), unit by unit and fast: what the
model is asked, in which batches, what comes back, and what is refused. References are written
out here or computed with numpy/scipy, not with the code under test. This file is also the
test selection of ``bench/mutation.py eval-predict`` (mutation testing), so it must stay fast.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.special import softmax

from robustlab.errors import InputError
from robustlab.studies.eval import predict as P


class Recorder:
    """A model that records each batch it is asked and answers a row per text that depends on
    the text ([len % 2 == 0, len % 2 == 1] as probabilities, a fixed pattern)."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return np.array([[0.25, 0.75] if len(t) % 2 else [0.9, 0.1] for t in texts])


def _row(text: str) -> list[float]:
    return [0.25, 0.75] if len(text) % 2 else [0.9, 0.1]


def test_each_distinct_text_goes_to_the_model_once_shortest_first_in_chunks():
    model = Recorder()
    pred = P.Predictor(model, batch_size=2, name="m")
    texts = ["ccc", "a", "bb", "a", "dddd", "ccc", "eeeee"]
    out = pred(texts)
    assert model.batches == [["a", "bb"], ["ccc", "dddd"], ["eeeee"]]
    np.testing.assert_array_equal(out, [_row(t) for t in texts])  # the caller's order
    assert pred.predicted == 5 and len(pred.cache) == 5 and pred.model_seconds >= 0
    again = pred(["bb", "ffffff", "a"])
    assert model.batches[3:] == [["ffffff"]]  # only the new text
    np.testing.assert_array_equal(again, [_row(t) for t in ["bb", "ffffff", "a"]])
    assert pred.predicted == 6
    assert pred.missing(["zz", "a", "zz", "y"]) == ["y", "zz"]


def test_chunk_sets_the_texts_per_model_call_and_defaults_to_the_batch():
    model = Recorder()
    P.Predictor(model, batch_size=2, chunk=3)(["a", "bb", "ccc", "dddd", "eeeee"])
    assert [len(b) for b in model.batches] == [3, 2]
    assert P.Predictor(model, batch_size=4).chunk == 4
    assert P.Predictor(model, batch_size="5").batch_size == 5  # type: ignore[arg-type]


def test_no_texts_is_an_empty_array_and_no_call():
    model = Recorder()
    out = P.Predictor(model)([])
    assert out.shape == (0, 0) and model.batches == []


def test_model_calls_run_under_torch_inference_mode():
    import torch

    seen = []

    def model(texts):
        seen.append(torch.is_inference_mode_enabled())
        return np.tile([0.5, 0.5], (len(texts), 1))

    P.Predictor(model)(["a", "b"])
    assert seen == [True] and not torch.is_inference_mode_enabled()


def test_probabilities_are_kept_and_logits_go_through_softmax():
    probs = np.array([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_array_equal(P._checked(probs, 2, "m"), probs)
    near = np.array([[0.29995, 0.7]])  # sums to 1 within 1e-4: kept as it is
    np.testing.assert_array_equal(P._checked(near, 1, "m"), near)
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3]])
    np.testing.assert_allclose(P._checked(logits, 2, "m"), softmax(logits, axis=1), atol=1e-12)
    negative = np.array([[-0.5, 1.5]])  # sums to 1 but is not a probability row
    np.testing.assert_allclose(P._checked(negative, 1, "m"), softmax(negative, axis=1))
    big = np.array([[1000.0, 999.0]])  # no overflow
    np.testing.assert_allclose(P._checked(big, 1, "m"), softmax(big, axis=1))


def test_a_torch_tensor_is_converted():
    import torch

    t = torch.tensor([[0.25, 0.75]], dtype=torch.float16)  # exact in float16
    out = P._checked(t, 1, "m")
    assert isinstance(out, np.ndarray) and out.dtype == np.float64
    np.testing.assert_array_equal(out, [[0.25, 0.75]])


@pytest.mark.parametrize("bad, n", [
    (np.array([0.2, 0.8]), 1),            # (n,): no class axis
    (np.zeros((3, 2)) + 0.5, 2),          # wrong number of rows
    (np.ones((2, 1)), 2),                 # one class
    (np.zeros((2, 2, 2)), 2),             # three axes
])
def test_a_wrong_shape_is_refused_naming_the_model_and_shapes(bad, n):
    with pytest.raises(InputError) as e:
        P._checked(bad, n, "my-model")
    msg = str(e.value)  # its wording is eval's (issue 32); what it must name is checked here
    assert msg.startswith("my-model: expected") and msg.endswith(f"shape {bad.shape}"), msg
    assert f"({n}, k)" in msg or f"{n} rows" in msg, msg


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_scores_are_refused(value):
    with pytest.raises(InputError, match="^m: returned non-finite scores$"):
        P._checked(np.array([[0.5, 0.5], [value, 0.0]]), 2, "m")


def test_the_shape_error_reaches_the_caller_of_a_predictor():
    pred = P.Predictor(lambda texts: np.ones(len(texts)), name="flat")
    with pytest.raises(InputError, match="^flat: expected .*2"):
        pred(["a", "b"])


class _Config:
    def __init__(self, label2id: dict[str, int]) -> None:
        self.label2id = label2id
        self.num_labels = len(label2id)


class FakePipeline:
    """A text-classification pipeline's interface: ``pipe(texts, top_k=None, …)`` returns one
    list of {label, score} per text, in score order (not label order)."""

    def __init__(self, label2id: dict[str, int], scores: dict[str, dict[str, float]]) -> None:
        self.model = type("M", (), {"config": _Config(label2id)})()
        self.scores = scores
        self.calls: list[dict] = []

    def __call__(self, texts, **kw):
        self.calls.append(kw)
        return [sorted(({"label": lab, "score": s} for lab, s in self.scores[t].items()),
                       key=lambda d: -d["score"]) for t in texts]


def test_pipeline_scores_land_in_the_models_label_order(monkeypatch):
    pipe = FakePipeline({"NEG": 0, "NEU": 1, "POS": 2},
                        {"a": {"POS": 0.7, "NEG": 0.1, "NEU": 0.2},
                         "b": {"NEU": 0.5, "POS": 0.3, "NEG": 0.2}})
    out = P.pipeline_proba(pipe, batch_size=7)(["a", "b"])
    np.testing.assert_array_equal(out, [[0.1, 0.2, 0.7], [0.2, 0.5, 0.3]])
    assert pipe.calls == [{"top_k": None, "batch_size": 7, "truncation": True}]
    swapped = FakePipeline({"POS": 0, "NEG": 1}, {"a": {"POS": 0.9, "NEG": 0.1}})
    np.testing.assert_array_equal(P.pipeline_proba(swapped)(["a"]), [[0.9, 0.1]])
    assert swapped.calls == [{"top_k": None, "batch_size": 128, "truncation": True}]  # default
    pipe = FakePipeline({"NEG": 0, "POS": 1}, {"a": {"POS": 0.6, "NEG": 0.4}})
    monkeypatch.setattr(P, "_is_pipeline", lambda obj: obj is pipe)  # (checked by class)
    np.testing.assert_array_equal(P.object_proba(pipe, batch_size=5)(["a"]), [[0.4, 0.6]])
    assert pipe.calls == [{"top_k": None, "batch_size": 5, "truncation": True}]
    int_keys = FakePipeline({0: 0, 1: 1}, {"a": {"0": 0.4, "1": 0.6}})  # ids as label names
    np.testing.assert_array_equal(P.pipeline_proba(int_keys)(["a"]), [[0.4, 0.6]])


def test_object_proba_uses_predict_proba_then_a_callable():
    class WithProba:
        predict_batch_size = 1

        def predict_proba(self, texts):
            return np.array([[1.0, 0.0]] * len(texts))

        def __call__(self, texts):  # not used when predict_proba exists
            raise AssertionError

    m = WithProba()
    fn = P.object_proba(m, batch_size=64)
    np.testing.assert_array_equal(fn(["x", "y"]), [[1.0, 0.0], [1.0, 0.0]])
    assert m.predict_batch_size == 64  # a robustlab classifier batches by this
    rec = Recorder()
    np.testing.assert_array_equal(P.object_proba(rec)(["ab"]), [_row("ab")])
    assert rec.batches == [["ab"]]


def test_object_proba_refuses_what_is_not_a_model():
    with pytest.raises(InputError) as e:
        P.object_proba(object())
    msg = str(e.value)
    assert msg.startswith("object: not a model robustlab can evaluate")
    assert "predict_proba(list[str])" in msg and "TextAttack ModelWrapper" in msg


def test_object_proba_keeps_a_read_only_batch_size():
    class Fixed:
        @property
        def predict_batch_size(self):
            return 3

        def predict_proba(self, texts):
            return np.array([[0.5, 0.5]] * len(texts))

    np.testing.assert_array_equal(P.object_proba(Fixed(), 9)(["a"]), [[0.5, 0.5]])


def test_as_predictor_gives_robustlab_classifiers_many_batches_per_call():
    class Classifier:
        predict_batch_size = 8

        def predict_proba(self, texts):
            return np.array([[0.5, 0.5]] * len(texts))

    p = P.as_predictor(Classifier(), batch_size=4, name="clf")
    assert (p.batch_size, p.chunk, p.name) == (4, 4 * P.CHUNK_BATCHES, "clf")
    q = P.as_predictor(Recorder(), batch_size=4)
    assert (q.batch_size, q.chunk, q.name) == (4, 4, "model")


def _fake_module(monkeypatch, name: str, attr: str, base: type | None) -> None:
    """``sys.modules[name]`` replaced by a module whose ``attr`` is ``base`` (None: no attr)."""
    import sys
    import types

    mod = types.ModuleType(name)
    if base is not None:
        setattr(mod, attr, base)
    monkeypatch.setitem(sys.modules, name, mod)


@pytest.mark.parametrize("module,attr,check", [
    ("transformers.pipelines", "Pipeline", "_is_pipeline"),
    ("textattack.models.wrappers", "ModelWrapper", "_is_textattack_wrapper")])
def test_pipelines_and_textattack_wrappers_are_recognised_by_their_class(monkeypatch, module,
                                                                        attr, check):
    import sys

    is_it = getattr(P, check)

    class Base:
        pass

    class Sub(Base):
        pass

    monkeypatch.delitem(sys.modules, module, raising=False)
    assert is_it(Sub()) is False  # the library not imported: nothing is one
    _fake_module(monkeypatch, module, attr, None)
    assert is_it(Sub()) is False  # imported without the class
    _fake_module(monkeypatch, module, attr, Base)
    assert is_it(Sub()) is True and is_it(Base()) is True
    assert is_it(object()) is False and is_it(Recorder()) is False


def test_a_pipeline_is_read_in_label_order_and_must_return_probabilities(monkeypatch):
    _fake_module(monkeypatch, "transformers.pipelines", "Pipeline", FakePipeline)
    pipe = FakePipeline({"NEG": 0, "POS": 1}, {"a": {"POS": 0.6, "NEG": 0.4},
                                               "b": {"POS": 0.1, "NEG": 0.2}})
    p = P.as_predictor(pipe, batch_size=3)
    assert (p.batch_size, p.chunk, p.logits) == (3, 3, False)
    np.testing.assert_array_equal(p(["a"]), [[0.4, 0.6]])
    assert pipe.calls == [{"top_k": None, "batch_size": 3, "truncation": True}]
    with pytest.raises(InputError, match="predict_proba must return probabilities"):
        p(["b"])  # rows of a pipeline are probabilities: never softmaxed


def test_as_predictor_softmaxes_only_what_may_be_logits():
    class Proba:
        def predict_proba(self, texts):
            return np.array([[2.0, -1.0]] * len(texts))

    class Logits:
        def __call__(self, texts):
            return np.array([[2.0, -1.0]] * len(texts))

    p = P.as_predictor(Proba())
    assert (p.logits, p.batch_size, p.chunk, p.name) == (False, 128, 128, "model")
    with pytest.raises(InputError, match="predict_proba must return probabilities"):
        p(["x"])
    q = P.as_predictor(Logits(), name="wrapped")
    assert q.logits is True
    with pytest.raises(InputError, match="^wrapped: expected an array"):
        P.as_predictor(lambda texts: np.ones(len(texts)), name="wrapped")(["x"])
    np.testing.assert_allclose(q(["x"]), softmax([[2.0, -1.0]], axis=1))


def test_as_predictor_passes_the_device_and_batch_size_on(monkeypatch):
    seen = []

    class Classifier:
        predict_batch_size = 1

        def predict_proba(self, texts):
            return np.array([[0.5, 0.5]] * len(texts))

    def fake_load(spec, device=None):
        seen.append((spec, device))
        return Classifier()

    monkeypatch.setattr(P, "load_trained", fake_load)
    p = P.as_predictor("some/model", device="cuda:1", batch_size=6)
    assert seen == [("some/model", "cuda:1")]
    assert (p.batch_size, p.chunk) == (6, 6 * P.CHUNK_BATCHES)
    clf = Classifier()
    P.as_predictor(clf, batch_size=6)
    assert clf.predict_batch_size == 6  # the classifier batches by the batch size asked


def test_load_trained_passes_the_device_to_either_loader(monkeypatch):
    import robustlab.models.registry as registry
    import robustlab.runs.inputs as inputs

    seen = []
    monkeypatch.setattr(inputs, "check_trained_model", lambda spec, trusted: seen.append(
        ("check", spec, trusted)))
    monkeypatch.setattr(registry, "is_saved_model", lambda spec: spec == "saved")
    monkeypatch.setattr(registry, "load_saved", lambda spec, device=None: ("saved", device))
    monkeypatch.setattr(P, "load_checkpoint", lambda spec, device=None: ("ckpt", spec, device))
    assert P.load_trained("saved", device="cpu:0") == ("saved", "cpu:0")
    assert P.load_trained("hf:x", device="cuda") == ("ckpt", "hf:x", "cuda")
    assert seen == [("check", "saved", False), ("check", "hf:x", False)]


def test_predictor_defaults():
    p = P.Predictor(Recorder())
    assert (p.batch_size, p.chunk, p.name, p.logits) == (128, 128, "model", True)
    assert (p.predicted, p.model_seconds, p.cache) == (0, 0.0, {})


def test_probabilities_with_an_exact_zero_are_kept_and_the_refusal_says_what_to_do():
    class Proba:
        def __init__(self, rows):
            self.rows = rows

        def predict_proba(self, texts):
            return np.array(self.rows * len(texts))

    np.testing.assert_array_equal(P.as_predictor(Proba([[1.0, 0.0]]))(["x"]), [[1.0, 0.0]])
    with pytest.raises(InputError, match=r"^clf: predict_proba must return probabilities \(each "
                                         r"row >= 0, summing to 1 within 0.001\); row 0 sums to "
                                         r"0.5 \(min 0.2\): logits\? apply softmax, or pass a "
                                         r"callable returning logits$"):
        P.as_predictor(Proba([[0.3, 0.2]]), name="clf")(["x"])


def test_a_batch_size_setter_that_refuses_is_left_alone():
    class Picky:
        @property
        def predict_batch_size(self):
            return 3

        @predict_batch_size.setter
        def predict_batch_size(self, value):
            raise TypeError("fixed")

        def predict_proba(self, texts):
            return np.array([[0.5, 0.5]] * len(texts))

    np.testing.assert_array_equal(P.object_proba(Picky(), 9)(["a"]), [[0.5, 0.5]])


# ---- checkpoints -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory) -> dict[str, Path]:
    from test_eval_models import _tiny

    root = tmp_path_factory.mktemp("predict-ckpt")
    return {"head": _tiny(root / "head", head=True), "bare": _tiny(root / "bare", head=False)}


def test_a_checkpoint_with_a_head_loads_ready_to_predict(ckpts):
    from test_eval_models import _reference

    clf = P.load_checkpoint(str(ckpts["head"]), device="cpu")
    texts = ["the film was good", "bad plot"]
    np.testing.assert_allclose(clf.predict_proba(texts), _reference(ckpts["head"], texts),
                               atol=1e-5)
    assert clf.name == "head"
    pred = P.as_predictor(str(ckpts["head"]), device="cpu", batch_size=2)
    np.testing.assert_allclose(pred(texts), _reference(ckpts["head"], texts), atol=1e-5)


def test_a_checkpoint_without_a_trained_head_is_refused(ckpts):
    with pytest.raises(InputError) as e:
        P.check_checkpoint(str(ckpts["bare"]))
    msg = str(e.value)
    assert msg.startswith(f"--model {ckpts['bare']}: the checkpoint has no trained "
                          "classification head (transformers initialised classifier.")
    assert "fine-tune it first" in msg


def test_what_is_not_a_checkpoint_is_refused_in_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as e:
        P.check_checkpoint(str(tmp_path / "empty"))
    msg = str(e.value)
    assert msg.startswith(f"--model {tmp_path / 'empty'}: cannot load a sequence-classification "
                          "checkpoint from local files (")
    assert "\n" not in msg and msg.endswith("must be in the local cache")


def test_objects_and_saved_models_are_not_loaded_as_checkpoints(tmp_path):
    assert P.check_checkpoint("object:mine") is None
    from robustlab.models.registry import make_model

    m = make_model("bow", steps=2)
    m.fit(["good", "bad"], [1, 0])
    m.save(tmp_path / "saved")
    assert P.check_checkpoint(str(tmp_path / "saved")) is None
    loaded = P.load_trained(str(tmp_path / "saved"), device="cpu")
    np.testing.assert_allclose(loaded.predict_proba(["good", "bad"]),
                               m.predict_proba(["good", "bad"]), atol=1e-6)


def test_a_family_name_is_refused_as_untrained():
    with pytest.raises(InputError, match="an untrained bow model predicts at random"):
        P.load_trained("bow")


def test_a_checkpoint_is_found_by_hf_prefix_and_by_home_relative_path(ckpts, tmp_path,
                                                                     monkeypatch):
    """``hf:DIR`` and ``~/DIR`` name the same local checkpoint as DIR: the prefix is taken off
    and ``~`` expanded before transformers sees the path (it would not expand ``~``)."""
    import shutil

    home = tmp_path / "home"
    shutil.copytree(ckpts["head"], home / "ckpt")
    monkeypatch.setenv("HOME", str(home))
    for spec in (f"hf:{ckpts['head']}", "~/ckpt", "hf:~/ckpt"):
        P.check_checkpoint(spec)
        clf = P.load_checkpoint(spec, device="cpu")
        assert clf.predict_proba(["good"]).shape == (1, 2), spec


def test_loading_a_headless_checkpoint_names_the_spec_given(ckpts):
    with pytest.raises(InputError, match=f"^--model hf:{ckpts['bare']}: the checkpoint has no "):
        P.load_checkpoint(f"hf:{ckpts['bare']}")
