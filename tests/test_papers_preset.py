"""The ``papers`` preset and the papers' realisation of the learnability perturbations (issue 24).

Against NL-Augmenter's own code (``../shared/reference/nl-augmenter``: the six transformations of
paper 000 at a pinned commit, with their ``test.json`` cases): through robustlab's adapter in
``reseed=False`` mode — what ``--perturbations papers`` runs — the outputs are NL-Augmenter's,
character for character: paper 000's Figure 3, every ``test.json`` case, and all 6,920 SST-2 train
sentences. Tests needing the reference (or the SST-2 file) skip with the reason when it is absent.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path

import pytest

from robustlab.integrations.nlaugmenter import from_nlaugmenter
from robustlab.perturbations import PerturbationError, parse_spec, presets
from robustlab.perturbations.presets import PAPER_PERTURBATIONS, expand
from robustlab.resources import shared_dir

REFERENCE = shared_dir() / "reference" / "nl-augmenter"
FIGURE_3 = "His quiet and straightforward demeanor was rare then and would be today."
#: paper 000, Figure 3 (the rows NL-Augmenter's transformations produced)
FIGURE_3_ROWS = {
    "butter_fingers_perturbation":
        "His quiet and straightforward demeanor was rarw then and would be today.",
    "random_upper_transformation":
        "His quiEt and straightForwARd Demeanor was rare TheN and would be today.",
    "insert_abbreviation":
        "His quiet and straightforward demeanor wuz rare then and would b today.",
    "whitespace_perturbation":
        "His quiet and straightforward demean or was rare thenand would be today.",
    "leet_letters":
        "His qui3t and strai9htfor3ard d3m3an0r 3as rar3 t43n and 30uld 63 t0da4.",
}
#: NL-Augmenter folder -> classes whose test.json cases are checked
FOLDERS = ("butter_fingers_perturbation", "random_upper_transformation", "insert_abbreviation",
           "whitespace_perturbation", "visual_attack_letters", "leet_letters")


def _forget_nlaugmenter() -> None:
    for name in [m for m in sys.modules if m == "nlaugmenter" or m.startswith("nlaugmenter.")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def reference():
    """NL-Augmenter's reference code on sys.path for this module's tests (then removed again,
    so the fake package of test_adapter_nlaugmenter.py is not shadowed)."""
    if not (REFERENCE / "nlaugmenter" / "transformations").is_dir():
        pytest.skip(f"needs NL-Augmenter's reference code at {REFERENCE} (absent on this machine)")
    _forget_nlaugmenter()
    sys.path.insert(0, str(REFERENCE))
    importlib.invalidate_caches()
    yield REFERENCE
    sys.path.remove(str(REFERENCE))
    _forget_nlaugmenter()


@pytest.fixture(scope="module")
def papers(reference):
    """name -> the preset's perturbation (NL-Augmenter's where it has one)."""
    specs = expand(["papers"], say=None)
    return {name: parse_spec(spec) for name, spec in zip(PAPER_PERTURBATIONS, specs, strict=True)}


@pytest.fixture(scope="module")
def sst2_train() -> list[str]:
    path = shared_dir() / "data" / "sst" / "stsa.binary.train"
    if not path.exists():
        pytest.skip(f"needs SST-2 at {path} (absent on this machine)")
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n").partition(" ")[2] for line in fh if line.strip()]


def _reference_class(folder: str, name: str) -> type:
    module = importlib.import_module(f"nlaugmenter.transformations.{folder}.transformation")
    return getattr(module, name)


# ---- the preset ------------------------------------------------------------------------------


def test_preset_uses_nlaugmenter_in_reseed_false_mode(papers):
    specs = expand(["papers"], say=None)
    assert len(specs) == 8 and specs[0] == "duplicate_punctuations" and specs[2] == "shuffle_word"
    for name, spec in zip(PAPER_PERTURBATIONS, specs, strict=True):
        if name in ("duplicate_punctuations", "shuffle_word"):  # the papers' own design
            assert spec == name
        else:
            assert spec.startswith("nlaugmenter:nlaugmenter.transformations.") and \
                ":reseed=False" in spec
            assert papers[name].reseed is False and papers[name].deterministic
            assert papers[name].reads == (f"nlaugmenter:{papers[name].name.split(':')[1]}",)
            assert "reseed=False,seed=0" in papers[name].signature()
    # in place, other specs kept; a preset is never a single perturbation
    assert expand(["leet_letters", "papers"], say=None)[1:] == specs
    with pytest.raises(PerturbationError, match="preset"):
        parse_spec("papers")


def test_without_nlaugmenter_the_builtins_run_with_one_line(monkeypatch, capsys):
    _forget_nlaugmenter()
    monkeypatch.setitem(sys.modules, "nlaugmenter", None)  # not importable
    monkeypatch.setattr(presets, "_SAID", set())
    assert expand(["papers"]) == list(PAPER_PERTURBATIONS)
    assert expand("papers") == list(PAPER_PERTURBATIONS)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "NL-Augmenter is not importable" in err[0] and \
        "realisation differs from the papers'" in err[0]
    assert expand(["papers"], say=None) == list(PAPER_PERTURBATIONS)


def test_study_and_commands_expand_the_preset(papers):
    from robustlab.cli import build_parser
    from robustlab.commands.augment import split_specs as augment_specs
    from robustlab.studies.learnability.command import study_from_args
    from robustlab.studies.learnability.study import LearnabilityStudy, perturbation_inputs

    specs = expand(["papers"], say=None)
    study = LearnabilityStudy(models=("bow",), perturbations=("papers",))
    assert study.perturbations == tuple(specs) and study.config()["perturbations"] == specs
    args = build_parser().parse_args(["learnability", "--model", "bow", "--perturbations",
                                      "papers,append_token", "--out", "x"])
    assert study_from_args(args).perturbations == (*specs, "append_token")
    assert augment_specs(["papers"]) == specs
    # the run records where NL-Augmenter's code was found
    inputs = dict((role, (value, origin)) for role, value, origin in perturbation_inputs(specs))
    value, origin = inputs["resource:nlaugmenter:insert_abbreviation"]
    assert Path(value) == (REFERENCE / "nlaugmenter" / "transformations" /
                           "insert_abbreviation").resolve()
    assert str(REFERENCE.resolve()) in origin and len(inputs) == 6


# ---- against NL-Augmenter's own code -------------------------------------------------------------


def test_figure_3_character_for_character(papers):
    for name, row in FIGURE_3_ROWS.items():
        out = papers[name].perturb(FIGURE_3, seed=0)
        if name == "whitespace_perturbation":
            # NL-Augmenter (and so the adapter) gives "wa s rare": the PDF's text layer has no
            # space inside "was"; everything else of the row matches
            assert out == row.replace(" was ", " wa s ")
        else:
            assert out == row, name
        # reseed=False: robustlab's seed plays no part, as in the papers
        assert papers[name].perturb(FIGURE_3, seed=7) == out
    # the adapter's default mode re-seeds per text: not the papers' sentence
    default = parse_spec("nlaugmenter:butter_fingers_perturbation").perturb(FIGURE_3, seed=0)
    assert default.startswith("Hix quitj and scraightforward demeanor")


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_test_json_case(reference, folder):
    cases = json.loads((reference / "nlaugmenter" / "transformations" / folder /
                        "test.json").read_text(encoding="utf-8"))["test_cases"]
    assert cases
    for case in cases:
        op = _reference_class(folder, case["class"])()
        pert = from_nlaugmenter(op, reseed=False)
        sentence = case["inputs"]["sentence"]
        expected = [o["sentence"] for o in case["outputs"]]
        assert len(expected) == 1  # max_outputs=1 everywhere
        assert pert.perturb(sentence, seed=123) == expected[0], (folder, sentence)


def test_all_of_sst2_train_equals_nlaugmenter(papers, sst2_train):
    state = random.getstate()
    for name, pert in papers.items():
        if name in ("duplicate_punctuations", "shuffle_word"):
            continue
        op = type(pert.operation)()  # a fresh object, as a user of NL-Augmenter would build it
        expected, failed = [], []
        for text in sst2_train:
            try:
                expected.append(op.generate(text)[0])
            except IndexError:  # LeetLetters: random.choices of no candidates
                expected.append(text)
                failed.append(text)
        random.setstate(state)
        got = pert.perturb_batch(sst2_train, seed=0)
        assert got == expected, name
        assert random.getstate() == state  # the adapter leaves the global generator alone
        if name == "leet_letters":  # the one SST-2 sentence without an encodable character
            assert failed == ["and it is ."]
        else:
            assert failed == []


# ---- the built-ins against the reference (the fast path's fidelity) ------------------------------


def _replaced(text: str, out: str) -> set[tuple[int, int, str]]:
    """(start, end, new words) of the replaced whitespace-token spans (difflib blocks; blocks of
    equal length split token by token)."""
    import difflib

    a, b = text.split(), out.split()
    reps = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 - i1 == j2 - j1:
            reps |= {(i, i + 1, b[j1 + k]) for k, i in enumerate(range(i1, i2)) if a[i] != b[j1 + k]}
        else:
            reps.add((i1, i2, " ".join(b[j1:j2])))
    return reps


def test_builtin_abbreviations_close_to_nlaugmenter_on_sst2(papers, sst2_train):
    from robustlab.perturbations import make

    ref = papers["insert_abbreviation"].perturb_batch(sst2_train)
    mine = make("insert_abbreviation").perturb_batch(sst2_train)
    changed_ref = sum(r != t for r, t in zip(ref, sst2_train, strict=True)) / len(sst2_train)
    changed = sum(m != t for m, t in zip(mine, sst2_train, strict=True)) / len(sst2_train)
    assert abs(changed - changed_ref) < 0.03  # 80.9 % vs 82.7 %
    r_sets = [_replaced(t, r) for t, r in zip(sst2_train, ref, strict=True)]
    m_sets = [_replaced(t, m) for t, m in zip(sst2_train, mine, strict=True)]
    both = sum(len(r & m) for r, m in zip(r_sets, m_sets, strict=True))
    assert both / sum(map(len, r_sets)) > 0.85  # 88.8 % of NL-Augmenter's replacements
    assert both / sum(map(len, m_sets)) > 0.9  # 94.0 % of its own are NL-Augmenter's too


def test_builtin_visual_letters_survive_normalisation_like_nlaugmenter(papers, sst2_train):
    from robustlab.perturbations import make

    normalizers = pytest.importorskip("tokenizers.normalizers")
    xlnet = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()])
    cache: dict[str, str] = {}

    def still_differing(outs: list[str]) -> float:
        letters = diff = 0
        for t, o in zip(sst2_train, outs, strict=True):
            for a, b in zip(t, o, strict=True):
                if a.isascii() and a.isalpha():
                    letters += 1
                    for c in (a, b):
                        if c not in cache:
                            cache[c] = xlnet.normalize_str(c)
                    diff += cache[a] != cache[b]
        return diff / letters

    mine = still_differing(make("visual_attack_letters").perturb_batch(sst2_train, seed=0))
    theirs = still_differing(from_nlaugmenter(type(papers["visual_attack_letters"].operation)())
                             .perturb_batch(sst2_train, seed=0))  # its table, a seed per text
    assert mine >= 0.27 and mine >= theirs - 0.01  # 28.5 % vs 27.0 % (before issue 24: 13.1 %)
