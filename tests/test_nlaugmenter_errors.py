"""NL-Augmenter adapter errors name the real cause, in one line, and docs/adapters.md's examples
run against NL-Augmenter's own code (``../shared/reference/nl-augmenter``; skipped with a reason
when absent).

The failing transformations are robustlab's fixtures (tests/fixtures/nla_fake), in NL-Augmenter's
older top-level layout: one imports NL-Augmenter's ``utils.initialize`` (torchtext), one imports
torchtext itself, one calls ``nltk.download`` when built.
"""

from __future__ import annotations

import importlib
import re
import shlex
import sys
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.perturbations import PerturbationError, parse_spec
from robustlab.resources import shared_dir

REFERENCE = shared_dir() / "reference" / "nl-augmenter"
FAKE = Path(__file__).parent / "fixtures" / "nla_fake"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "adapters.md"
FIGURE_3 = "His quiet and straightforward demeanor was rare then and would be today."


def _forget(*prefixes: str) -> None:
    for name in [m for m in sys.modules if any(m == p or m.startswith(p + ".")
                                                 for p in prefixes)]:
        del sys.modules[name]


@pytest.fixture
def fake_path():
    """The fixture transformations importable as ``transformations.<folder>``."""
    _forget("transformations")
    sys.path.insert(0, str(FAKE))
    importlib.invalidate_caches()
    yield
    sys.path.remove(str(FAKE))
    _forget("transformations")


@pytest.fixture
def reference(fake_path):
    if not (REFERENCE / "nlaugmenter" / "transformations").is_dir():
        pytest.skip(f"needs NL-Augmenter's reference code at {REFERENCE} (absent on this machine)")
    _forget("nlaugmenter")
    sys.path.insert(0, str(REFERENCE))
    importlib.invalidate_caches()
    yield REFERENCE
    sys.path.remove(str(REFERENCE))
    _forget("nlaugmenter")


def _error(spec: str) -> str:
    with pytest.raises(PerturbationError) as info:
        parse_spec(spec)
    msg = str(info.value)
    assert "\n" not in msg
    return msg


def test_unknown_parameter_lists_the_constructor(reference) -> None:
    msg = _error("nlaugmenter:butter_fingers_perturbation:prob=0.1")
    assert "'prob'" in msg and "seed=0, max_outputs=1" in msg
    assert "reseed" in msg  # the adapter's own parameters are named too
    assert "PYTHONPATH" not in msg


def test_missing_dependency_is_named(reference) -> None:
    """NL-Augmenter's utils.initialize imports torchtext: the message names torchtext."""
    try:
        import torchtext  # noqa: F401
        pytest.skip("torchtext is installed here: nothing is missing")
    except ImportError:
        pass
    msg = _error("nlaugmenter:needs_glove_fixture")
    assert "'torchtext" in msg and "not installed" in msg
    assert "PYTHONPATH" not in msg


def test_missing_dependency_without_the_checkout(fake_path) -> None:
    try:
        import torchtext  # noqa: F401
        pytest.skip("torchtext is installed here: nothing is missing")
    except ImportError:
        pass
    msg = _error("nlaugmenter:needs_torchtext_fixture")
    assert "'torchtext" in msg and "PYTHONPATH" not in msg
    msg = _error("nlaugmenter:transformations.needs_torchtext_fixture.transformation."
                 "NeedsTorchtext")
    assert "'torchtext" in msg and "PYTHONPATH" not in msg


def test_nltk_download_is_refused_in_one_line(fake_path, tmp_path, capsys) -> None:
    import nltk

    before = nltk.download
    msg = _error("nlaugmenter:downloads_nltk_fixture")
    assert "averaged_perceptron_tagger" in msg and "does not download" in msg
    assert nltk.download is before  # restored
    src = tmp_path / "s.txt"
    src.write_text("the movie is wonderful\n", encoding="utf-8")
    rc = main(["perturb", "-p", "nlaugmenter:downloads_nltk_fixture", "-i", str(src), "-o",
               str(tmp_path / "o.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "o.jsonl").exists()


def test_absent_folder_lists_what_the_checkout_has(reference) -> None:
    msg = _error("nlaugmenter:change_person_named_entities")
    assert "no transformation folder 'change_person_named_entities'" in msg
    assert "butter_fingers_perturbation" in msg


def test_no_checkout_says_so(monkeypatch) -> None:
    _forget("nlaugmenter")
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "nl-augmenter" not in p])
    try:
        importlib.import_module("nlaugmenter.transformations")
        pytest.skip("an nlaugmenter package is importable from site-packages")
    except ImportError:
        pass
    msg = _error("nlaugmenter:butter_fingers_perturbation")
    assert "NL-Augmenter is not importable" in msg and "PYTHONPATH" in msg


def _doc_commands() -> list[list[str]]:
    """The `robustlab … nlaugmenter:…` lines of docs/adapters.md's bash blocks."""
    text = DOCS.read_text(encoding="utf-8")
    cmds = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            argv = shlex.split(line, comments=True)
            if argv and argv[0] == "robustlab" and any("nlaugmenter:" in a for a in argv):
                cmds.append(argv)
    return cmds


def test_docs_cli_examples_run(reference, tmp_path, monkeypatch, capsys) -> None:
    cmds = _doc_commands()
    assert len(cmds) >= 2
    monkeypatch.chdir(tmp_path)
    Path("sents.txt").write_text(FIGURE_3 + "\n", encoding="utf-8")
    for argv in cmds:
        assert main(argv[1:]) == 0, shlex.join(argv)
        out = Path(argv[argv.index("-o") + 1]).read_text(encoding="utf-8")
        # reseed=False: NL-Augmenter's own output, paper 000's Figure 3
        assert "rarw then" in out, out
    capsys.readouterr()


def test_docs_python_example_and_table(reference) -> None:
    text = DOCS.read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S)
                 if "from_nlaugmenter(ButterFingersPerturbation" in b)
    scope: dict = {}
    exec(compile(block, str(DOCS), "exec"), scope)  # the docs' own example, as written
    assert scope["p"].perturb("Andrew finally returned the French book", seed=1) != ""
    # the table of outputs on Figure 3's sentence
    rows = re.findall(r"\| `(nlaugmenter:butter_fingers_perturbation[^`]*)`[^|]*\| `([^`]+)`",
                      text)
    assert len(rows) == 2
    for spec, expected in rows:
        assert parse_spec(spec).perturb(FIGURE_3, seed=0) == expected, spec
