"""README's tour runs as written, from an empty directory.

The commands are parsed out of README.md's tour block (the first ``bash`` block under
"## A tour"), so a changed tour is tested as changed. Nothing is substituted: each test runs in
a scratch directory ``tmp/tour`` whose sibling ``tmp/shared`` is the team's shared folder (the
tour's ``../shared/data`` path) when it exists. The quick commands (export, list, perturb,
augment) run in the fast suite; the whole tour, in order, is a slow test.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.resources import shared_data_dir

README = Path(__file__).resolve().parents[1] / "README.md"
#: commands that take seconds: run in the fast suite
FAST = {"demo", "list", "perturb", "augment"}
#: the documented exit status of a tour command, where it is not 0: both checks of the tour
#: exit 1, as the README says ("exit 1 on a failure") and the exported plans' comments say
#: (gate.toml and plan.toml each have a leet_letters test that fails on the bag-of-words model)
EXIT = {"check": 1}


def tour_commands() -> list[list[str]]:
    """The tour block's command lines as argv lists (comments dropped)."""
    text = README.read_text(encoding="utf-8")
    start = text.index("## A tour")
    block = text[text.index("```bash\n", start) + len("```bash\n"):]
    block = block[: block.index("```")]
    lines = [ln for ln in block.splitlines() if ln.strip()]
    return [shlex.split(ln, comments=True) for ln in lines]


def _scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    tour = tmp_path / "tour"
    tour.mkdir()
    shared = shared_data_dir().parent
    if shared.is_dir():
        os.symlink(shared, tmp_path / "shared")
    monkeypatch.chdir(tour)
    return tour


def _run(argv: list[str]) -> int:
    assert argv[0] == "robustlab", f"tour line is not a robustlab command: {argv}"
    return main(argv[1:])


def test_tour_is_parsed() -> None:
    cmds = tour_commands()
    assert cmds[0][:3] == ["robustlab", "demo", "--export"], "the tour starts with the export"
    names = [c[1] for c in cmds]
    for expected in ("perturb", "train", "learnability", "check", "augment", "tui"):
        assert expected in names


def test_quick_tour_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    tour = _scratch(tmp_path, monkeypatch)
    ran = []
    for argv in tour_commands():
        if argv[1] not in FAST:
            continue
        assert _run(argv) == 0, argv
        ran.append(argv[1])
    out = capsys.readouterr().out
    assert ran[0] == "demo" and {"perturb", "augment", "list"} <= set(ran)
    # the files the later lines read exist and have the README's column
    assert (tour / "dev.tsv").read_text().splitlines()[0] == "sentence\tlabel"
    typos = (tour / "dev.typos.tsv").read_text().splitlines()
    assert typos[0].startswith("sentence\tlabel") and len(typos) == 401
    assert typos != (tour / "dev.tsv").read_text().splitlines()
    aug = (tour / "train.aug.tsv").read_text().splitlines()
    assert len(aug) > 1600  # originals plus their perturbed copies
    assert "butter_fingers_perturbation" in out


@pytest.mark.slow
@pytest.mark.timeout(5400)  # every study of the tour, in order: tens of minutes on 2 cores
def test_whole_tour_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _scratch(tmp_path, monkeypatch)
    has_shared = (tmp_path / "shared" / "data").is_dir()
    for argv in tour_commands():
        if argv[1] == "tui":  # interactive: tests/tui drive it (tmux, snapshots)
            continue
        if argv[1] == "cross-domain" and not has_shared:
            continue  # the shared data folder is absent on this machine
        rc = _run(argv)
        assert rc == EXIT.get(argv[1], 0), f"{shlex.join(argv)} exited {rc}"
    for xml in ("ci.xml", "robustness.xml"):  # each check's failing test is the l33t one
        text = Path(xml).read_text(encoding="utf-8")
        assert "<failure" in text and "leet_letters" in text, xml
    assert "<html" in Path("learn.html").read_text(encoding="utf-8").lower()


def test_the_exported_gate_tests_the_tours_model_as_it_is(tmp_path: Path, monkeypatch, capsys) -> None:
    """gate.toml (written by the export) gates the model the tour trains, without training it:
    the doubled-punctuation test passes, the l33t one fails, so check exits 1."""
    tour = _scratch(tmp_path, monkeypatch)
    assert _run(["robustlab", "demo", "--export", "."]) == 0
    assert _run(["robustlab", "train", "--model", "bow", "--dataset", "train.tsv",
                 "--test-dataset", "dev.tsv", "--out", "models/sst-bow", "--quiet"]) == 0
    weights = {p.name: p.read_bytes() for p in (tour / "models/sst-bow").iterdir() if p.is_file()}
    capsys.readouterr()
    assert _run(["robustlab", "check", "gate.toml", "--junit-xml", "ci.xml", "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "duplicate_punctuations" in out and "PASS" in out and "FAIL" in out
    xml = (tour / "ci.xml").read_text()
    assert xml.count("<testcase") == 3 and xml.count("<failure") >= 1 and "leet_letters" in xml
    assert {p.name: p.read_bytes() for p in (tour / "models/sst-bow").iterdir()
            if p.is_file()} == weights  # tested as it is
