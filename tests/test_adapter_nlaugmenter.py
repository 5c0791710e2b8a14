"""NL-Augmenter adapter, both ways, against classes written to NL-Augmenter's interface.

NL-Augmenter is not installable here, so ``fake_nlaugmenter`` writes a tiny package with the same
layout (``nlaugmenter.interfaces.SentenceOperation``, ``nlaugmenter.tasks.TaskTypes``) and a
transformation in NL-Augmenter's style: seeded once in the constructor and reseeding the *global*
``random`` inside ``generate`` (as its butter_fingers_perturbation does).
"""

from __future__ import annotations

import random
import sys
import textwrap

import pytest
from perturbation_checks import check_perturbation

from robustlab.integrations.nlaugmenter import (
    NLAugmenterPerturbation,
    SentenceOperation,
    TaskType,
    from_nlaugmenter,
    isolated_global_rng,
    nlaugmenter_class,
    to_nlaugmenter,
)
from robustlab.perturbations import make, parse_spec
from robustlab.perturbations.base import AppendToken, Identity, PerturbationError

FAKE_FILES = {
    "nlaugmenter/__init__.py": "",
    "nlaugmenter/interfaces/__init__.py": "",
    "nlaugmenter/interfaces/Operation.py": """
        class Operation(object):
            languages = None
            tasks = None
            seed = 0
            heavy = False
            max_outputs = 1
            keywords = None

            def __init__(self, seed=0, verbose=False, max_outputs=1):
                self.seed = seed
                self.verbose = verbose
                self.max_outputs = max_outputs

            @classmethod
            def name(cls):
                return cls.__name__

            @classmethod
            def domain(cls):
                return cls.tasks, cls.languages
    """,
    "nlaugmenter/interfaces/SentenceOperation.py": """
        from nlaugmenter.interfaces.Operation import Operation

        class SentenceOperation(Operation):
            def generate(self, sentence):
                raise NotImplementedError
    """,
    "nlaugmenter/tasks/__init__.py": "",
    "nlaugmenter/tasks/TaskTypes.py": """
        import enum

        class TaskType(enum.Enum):
            TEXT_CLASSIFICATION = (1,)
            TEXT_TO_TEXT_GENERATION = (2,)
    """,
    "nlaugmenter/transformations/__init__.py": "",
    "nlaugmenter/transformations/vowel_drop/__init__.py": "",
    "nlaugmenter/transformations/vowel_drop/transformation.py": """
        import random

        from nlaugmenter.interfaces.SentenceOperation import SentenceOperation
        from nlaugmenter.tasks.TaskTypes import TaskType

        class VowelDrop(SentenceOperation):
            tasks = [TaskType.TEXT_CLASSIFICATION]
            languages = ["en"]
            keywords = ["morphological", "noise", "rule-based"]

            def __init__(self, seed=0, max_outputs=1, prob=0.5):
                super().__init__(seed, max_outputs=max_outputs)
                self.prob = prob

            def generate(self, sentence):
                random.seed(self.seed)  # NL-Augmenter style: reseeds the global generator
                outs = []
                for _ in range(self.max_outputs):
                    outs.append("".join(c for c in sentence
                                        if not (c in "aeiou" and random.random() < self.prob)))
                return outs
    """,
}


@pytest.fixture
def fake_nlaugmenter(tmp_path, monkeypatch):
    for rel, body in FAKE_FILES.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(body), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m == "nlaugmenter" or m.startswith("nlaugmenter.")]:
        del sys.modules[name]


class Upper(SentenceOperation):
    """Written to NL-Augmenter's interface with the stand-in base: deterministic."""

    tasks = [TaskType.TEXT_CLASSIFICATION]
    languages = ["en"]
    keywords = ["lexical"]

    def __init__(self, seed=0, max_outputs=1):
        super().__init__(seed, max_outputs=max_outputs)

    def generate(self, sentence):
        return [sentence.upper()]


class ManyOutputs(SentenceOperation):
    """Returns several outputs, including the input itself, which must never be picked."""

    def __init__(self, seed=0, max_outputs=3):
        super().__init__(seed, max_outputs=max_outputs)

    def generate(self, sentence):
        return [sentence] + [f"{sentence} #{k}" for k in range(self.max_outputs)]


class Nothing(SentenceOperation):
    def generate(self, sentence):
        return []


class Echo(SentenceOperation):
    def generate(self, sentence):
        return [sentence, sentence]


def test_wraps_an_nlaugmenter_operation(fake_nlaugmenter):
    from nlaugmenter.transformations.vowel_drop.transformation import VowelDrop

    p = from_nlaugmenter(VowelDrop(max_outputs=2))
    assert isinstance(p, NLAugmenterPerturbation)
    assert p.name == "nlaugmenter:vowel_drop" and p.level == "character"
    text = "the quick brown fox jumps over the lazy dog"
    out = p.perturb(text, seed=1)
    assert out != text and set(out) <= set(text)
    assert p.perturb(text, seed=1) == out  # same seed, same output
    outs = {p.perturb(text, seed=s) for s in range(10)}
    assert len(outs) > 1  # the robustlab seed reaches the operation's own seed
    check_perturbation(p)


def test_global_random_state_is_untouched(fake_nlaugmenter):
    from nlaugmenter.transformations.vowel_drop.transformation import VowelDrop

    p = from_nlaugmenter(VowelDrop())
    state = random.getstate()
    p.perturb_batch(["aaa eee", "ooo uuu iii"], seed=5)
    assert random.getstate() == state
    # without the adapter the same call clobbers it (the reason the isolation exists)
    VowelDrop(seed=3).generate("aaa")
    assert random.getstate() != state


def test_isolated_global_rng_restores_numpy_too():
    import numpy as np

    before = np.random.get_state()[1].copy()
    with isolated_global_rng():
        np.random.seed(123)
        random.seed(123)
    assert (np.random.get_state()[1] == before).all()


def test_spec_resolves_by_class_path(fake_nlaugmenter):
    spec = ("nlaugmenter:nlaugmenter.transformations.vowel_drop.transformation.VowelDrop"
            ":prob=1.0,max_outputs=1,level=word")
    p = parse_spec(spec)  # the class of an NL-Augmenter folder: registered, from data too
    assert p.level == "word" and p.operation.prob == 1.0
    assert p.perturb("banana split") == "bnn splt"
    own = f"nlaugmenter:{__name__}.Upper"  # any other import path: only as typed by the user
    assert parse_spec(own, trusted=True).perturb("ab") == "AB"
    with pytest.raises(PerturbationError, match="accepted only when typed on the command line"):
        parse_spec(own)  # from a stored run, a plan or a TUI form
    with pytest.raises(PerturbationError, match="cannot import"):
        parse_spec("nlaugmenter:no_such_pkg.mod.Cls", trusted=True)
    with pytest.raises(PerturbationError, match="cannot import NL-Augmenter's transformation"):
        parse_spec("nlaugmenter:VowelDrop")  # a folder name that does not exist
    with pytest.raises(PerturbationError, match="has no class"):
        parse_spec("nlaugmenter:nlaugmenter.transformations.vowel_drop.transformation.Nope",
                   trusted=True)


def test_only_sentence_operations_are_called(fake_nlaugmenter, tmp_path):
    """A class path, even typed by the user, must name an NL-Augmenter SentenceOperation (or a
    subclass of robustlab's stand-in); a stdlib class or NL-Augmenter's base is never called."""
    from robustlab.integrations.nlaugmenter import is_operation_class

    marker = tmp_path / "pwned"
    for spec in (f"nlaugmenter:subprocess.Popen:args=touch {marker},shell=true",
                 "nlaugmenter:nlaugmenter.interfaces.SentenceOperation.SentenceOperation",
                 "nlaugmenter:collections.OrderedDict"):
        with pytest.raises(PerturbationError, match="not an NL-Augmenter SentenceOperation"):
            parse_spec(spec, trusted=True)
    assert not marker.exists()
    from nlaugmenter.transformations.vowel_drop.transformation import VowelDrop

    assert is_operation_class(VowelDrop) and is_operation_class(Upper)
    assert not is_operation_class(SentenceOperation) and not is_operation_class(dict)


def test_spec_resolves_by_transformation_folder_name(fake_nlaugmenter):
    from robustlab.perturbations.registry import display_label

    long = "nlaugmenter:nlaugmenter.transformations.vowel_drop.transformation.VowelDrop"
    short = parse_spec("nlaugmenter:vowel_drop:prob=1.0")  # a folder: registered, untrusted ok
    assert type(short.operation).__name__ == "VowelDrop" and short.operation.prob == 1.0
    assert short.perturb("banana split") == "bnn splt"
    assert short.name == parse_spec(long, trusted=True).name == "nlaugmenter:vowel_drop"
    assert short.display_name == "nlaugmenter:vowel_drop"
    assert display_label(long + ":prob=0.5") == "nlaugmenter:vowel_drop:prob=0.5"
    with pytest.raises(PerturbationError, match="not a transformation folder"):
        parse_spec("nlaugmenter:vowel-drop")


def test_any_spec_takes_a_display_label(fake_nlaugmenter):
    from robustlab.perturbations.registry import display_label, split_label

    p = parse_spec("leet_letters:max_leet=0.3@leet 30%")
    assert p.display_name == "leet 30%" and p.max_leet == 0.3
    assert p.signature() == parse_spec("leet_letters:max_leet=0.3").signature()  # not a param
    assert p.clone(max_leet=0.2).display_name == "leet 30%"
    assert parse_spec("leet_letters").display_name == "leet_letters"
    q = parse_spec("nlaugmenter:vowel_drop@typos")
    assert q.display_name == "typos" and q.name == "nlaugmenter:vowel_drop"
    assert display_label("leet_letters:max_leet=0.3@leet 30%") == "leet 30%"
    assert split_label("shuffle_word") == ("shuffle_word", None)
    with pytest.raises(PerturbationError, match="empty display label"):
        parse_spec("leet_letters@ ")
    from robustlab import plots

    assert plots.short_name("leet_letters:max_leet=0.3@leet 30%") == "leet 30%"  # tables, plots


def test_outputs_picked_with_the_stream_and_noops():
    p = from_nlaugmenter(ManyOutputs(max_outputs=3))
    picks = {p.perturb("x", seed=s) for s in range(30)}
    assert picks == {"x #0", "x #1", "x #2"}  # never the input itself
    for op in (Nothing(), Echo()):
        outcome = from_nlaugmenter(op).perturb_outcomes(["same text"])[0]
        assert outcome.text == "same text" and not outcome.changed and outcome.error is None
    q = from_nlaugmenter(Upper)  # a class is built with seed=0 the NL-Augmenter way
    assert q.level == "word" and q.perturb("abc") == "ABC"


def test_bad_operation_is_a_clear_error():
    with pytest.raises(PerturbationError, match="no generate"):
        from_nlaugmenter(object())


def test_robustlab_as_nlaugmenter_standin():
    leet = make("leet_letters")
    T = nlaugmenter_class(leet)
    assert issubclass(T, SentenceOperation) and T.__name__ == "LeetLetters"
    assert T.name() == "LeetLetters" and T.is_heavy() is False
    assert T.domain() == ([TaskType.TEXT_CLASSIFICATION, TaskType.TEXT_TO_TEXT_GENERATION], ["en"])
    assert "morphological" in T.keywords
    t = T(seed=4, max_outputs=3)
    outs = t.generate("hello there, old friend")
    assert len(outs) == 3 and all(isinstance(o, str) for o in outs)
    assert outs == T(seed=4, max_outputs=3).generate("hello there, old friend")
    assert outs[0] == leet.perturb("hello there, old friend", seed=4)
    assert T.compare("hello", outs) == (3, 0)
    # a deterministic perturbation gives one output (more would be equal copies)
    assert to_nlaugmenter(AppendToken("zz"), max_outputs=5).generate("a") == ["a zz"]
    assert to_nlaugmenter(Identity()).generate("a") == ["a"]


def test_robustlab_as_real_nlaugmenter_subclass(fake_nlaugmenter):
    from nlaugmenter.interfaces.SentenceOperation import SentenceOperation as Real
    from nlaugmenter.tasks.TaskTypes import TaskType as RealTask

    t = to_nlaugmenter(make("duplicate_punctuations"), seed=0, max_outputs=1)
    assert isinstance(t, Real) and not isinstance(t, SentenceOperation)
    assert t.tasks[0] is RealTask.TEXT_CLASSIFICATION
    assert t.generate("Hi, you!") == ["Hi,, you!!"]
    assert t.seed == 0 and t.max_outputs == 1 and t.verbose is False


def test_round_trip_through_both_directions():
    leet = make("leet_letters")
    back = from_nlaugmenter(to_nlaugmenter(leet), reseed=True)
    # the wrapper's per-text seed drives generate, so the result is a leet encoding of the text
    out = back.perturb("hello there, old friend", seed=2)
    assert out != "hello there, old friend" and len(out) == len("hello there, old friend")
    check_perturbation(back)
