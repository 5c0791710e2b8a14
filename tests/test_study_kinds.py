"""A study kind is one package: adding one (tests/fixtures/toykind) to the registry's package list
is all it takes for ``robustlab --help``, the command, ``report``, ``resume`` and the TUI
(tests/tui/test_toy_kind.py opens it in the TUI)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from robustlab import studies
from robustlab.cli import main
from robustlab.errors import InputError

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setattr(studies, "PACKAGES", [*studies.PACKAGES, "toykind"])
    return studies.find("toy")


def test_every_builtin_kind_is_declared_once():
    kinds = studies.kinds()
    assert list(kinds) == ["learnability", "attack", "bias", "cross-domain", "eval"]
    assert studies.find("robustness").name == studies.find("cent").name == "learnability"
    assert studies.find("nope") is None and studies.find(None) is None
    for kind in kinds.values():  # every declared part exists (a typo fails here, not in a UI)
        assert kind.part("study") and kind.part("section") and kind.part("screen")
        assert kind.part("command")
    with pytest.raises(InputError, match="unknown study kind 'nope'; robustlab runs attack"):
        studies.study_from_config("nope", {})


def test_builtin_kinds_commands_sections_and_screens_come_from_their_packages():
    """Every part of a built-in kind lives in its own package and is found only through the
    registry: robustlab.commands holds no study command, and ``robustlab <kind>`` registers just
    the command its package declares."""
    import argparse
    import pkgutil

    import robustlab.commands
    from robustlab.cli import _command_module, build_parser

    tools = {m.name for m in pkgutil.iter_modules(robustlab.commands.__path__)}
    for kind in studies.kinds().values():
        key = kind.name.replace("-", "_")
        assert key not in tools, f"robustlab/commands/{key}.py: {kind.name}'s command"
        for part in ("study", "section", "screen", "command"):
            obj = kind.part(part)
            assert getattr(obj, "__module__", getattr(obj, "__name__", "")).startswith(
                kind.package + "."), (kind.name, part)
        assert _command_module([kind.name]) == key
        for alias in kind.aliases:
            assert _command_module([alias]) == key
        sub = next(a for a in build_parser(key)._actions
                   if isinstance(a, argparse._SubParsersAction))
        assert kind.name in sub.choices
    full = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert list(full.choices)[:3] == ["attack", "augment", "bias"]  # one order: by name


def test_a_new_kind_from_one_package_is_everywhere(toy, tmp_path, capsys):
    assert toy is not None and toy.package == "toykind"
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "toy" in capsys.readouterr().out.split("COMMAND")[-1]

    run = tmp_path / "toy-run"
    assert main(["toy", "--n", "4", "--out", str(run), "--quiet"]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["kind"] == "toy" and summary["total"] == 0 + 1 + 4 + 9

    report = tmp_path / "r.md"
    assert main(["report", str(run), "--out", str(report)]) == 0
    text = report.read_text()
    assert "Toy squares (a study from one package)" in text and "toy total 14" in text

    assert main(["resume", str(run), "--quiet"]) == 0  # rebuilt from the store by the registry
    capsys.readouterr()

    from robustlab.tui import data

    assert data.read_run(run).kind == "toy" and data.read_run(run).status == "done"



def test_robustlab_run_is_the_one_python_entry_point(toy, tmp_path):
    from toykind.study import ToyConfig

    import robustlab
    from robustlab.runs.store import RunStore
    from robustlab.runs.study import RUN_CONTEXT_KEY

    with pytest.raises(TypeError, match="unknown option.*executor"):
        robustlab.run(ToyConfig(n=2), tmp_path / "x", exectuor="process")
    assert not (tmp_path / "x").exists()
    outcome = robustlab.run(ToyConfig(n=3), tmp_path / "run", workers=3, threads=2,
                            progress=False)
    assert outcome.complete and outcome.summary["total"] == 0 + 1 + 4
    with RunStore(tmp_path / "run", readonly=True) as store:  # how it ran, outside the config
        stored = json.loads(store.meta(RUN_CONTEXT_KEY))
        assert stored["workers"] == 3 and stored["threads"] == 2
        assert "workers" not in json.dumps(store.run_info().config)
    with pytest.raises(InputError, match="not a study configuration"):
        robustlab.run({"n": 3}, tmp_path / "y")


def test_resume_continues_as_the_run_last_ran_unless_told(toy, tmp_path, capsys):
    from robustlab.runs.store import RunStore
    from robustlab.runs.study import RUN_CONTEXT_KEY

    run = tmp_path / "run"
    assert main(["toy", "--n", "2", "--out", str(run), "--workers", "3", "--cpus-per-task", "2"]) == 0
    capsys.readouterr()
    assert main(["resume", str(run)]) == 0
    err = capsys.readouterr().err
    assert "--workers 3 --cpus-per-task 2.0; as it last ran" in err
    assert main(["resume", str(run), "--workers", "2"]) == 0  # told otherwise: this command's
    assert "--workers 2 --cpus-per-task 2.0; as it last ran" in capsys.readouterr().err
    with RunStore(run, readonly=True) as store:
        assert json.loads(store.meta(RUN_CONTEXT_KEY))["workers"] == 2
    with RunStore(run) as store:  # a damaged stored context is data: ignored, never run
        store.set_meta(RUN_CONTEXT_KEY, '{"executor": "rm -rf", "workers": -1, "device": 7}')
    assert main(["resume", str(run)]) == 0
    assert "as it last ran" not in capsys.readouterr().err


def _kind_dispatches(tree):
    """(line, kinds) of each dict literal keyed by, and each function comparing a run's kind
    with, names of two or more registered kinds (aliases and ``cross_domain`` spellings count
    as their kind): a dispatch table or an if/elif chain over kinds."""
    import ast

    def kind_of(value):
        kind = studies.find(value.replace("_", "-")) if isinstance(value, str) else None
        return kind.name if kind is not None else None

    def kindish(e):
        return (isinstance(e, ast.Name) and "kind" in e.id) or \
            (isinstance(e, ast.Attribute) and "kind" in e.attr) or \
            (isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Constant)
             and e.slice.value == "kind")

    def constants(e):
        items = e.elts if isinstance(e, (ast.Tuple, ast.Set, ast.List)) else [e]
        return [i.value for i in items if isinstance(i, ast.Constant)]

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            named = {kind_of(k.value) for k in node.keys if isinstance(k, ast.Constant)} - {None}
            if len(named) >= 2:
                found.append((node.lineno, sorted(named)))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            named = set()
            for sub in ast.walk(node):
                if isinstance(sub, ast.Compare) and any(
                        kindish(e) for e in (sub.left, *sub.comparators)):
                    named |= {kind_of(v) for e in (sub.left, *sub.comparators)
                              for v in constants(e)}
                if isinstance(sub, ast.Match) and kindish(sub.subject):
                    named |= {kind_of(v) for c in sub.cases
                              for v in constants(getattr(c.pattern, "value", c.pattern))}
            named -= {None}
            if len(named) >= 2 and not isinstance(node, ast.Module):
                found.append((node.lineno, sorted(named)))
    return found


def test_nothing_outside_the_registry_dispatches_on_kind():
    """Issue 30: no table keyed by kind (or if/elif chain over kinds) outside the registry:
    every place that depends on a run's kind reads :func:`robustlab.studies.kinds`."""
    import ast

    root = Path(studies.__file__).resolve().parents[1]
    hits = []
    for path in sorted(root.rglob("*.py")):
        found = _kind_dispatches(ast.parse(path.read_text(encoding="utf-8")))
        hits += [f"{path.relative_to(root)}:{line}: {kinds}" for line, kinds in found]
    assert hits == [], "dispatch on kind outside the registry:\n" + "\n".join(hits)
    planted = ast.parse("SECTIONS = {'eval': 1, 'bias': 2}\n"
                        "def screen(run):\n"
                        "    if run.kind == 'attack':\n        return 1\n"
                        "    elif run.kind in ('cross_domain', 'robustness'):\n        return 2\n")
    assert sorted(k for _, k in _kind_dispatches(planted)) == [
        ["attack", "cross-domain", "learnability"], ["bias", "eval"]]


def test_python_wrappers_build_no_run_context_by_hand():
    """Every Python route into a study (``robustlab.run`` and the kinds' wrappers such as
    learnability's ``run_study``, ``evaluate``, ``run_clf``) builds its context in one place,
    :func:`robustlab.runs.study.context`: no ``RunContext(...)`` in a study package or the API
    (``studies/stored.py``, resume's reader, rebuilds a stored context only to show it)."""
    import ast

    root = Path(studies.__file__).resolve().parents[1]
    calls = []
    for path in [*sorted((root / "studies").glob("*/**/*.py")), root / "api.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                    node.func, "attr", None)) == "RunContext":
                calls.append(f"{path.relative_to(root)}:{node.lineno}")
    assert calls == [], f"a run context built by hand: {calls}"


def test_kind_wrappers_run_through_the_one_entry_point(monkeypatch, tmp_path):
    """The old per-kind functions keep their signatures and go through ``run_with``: how they
    run becomes the same context ``robustlab.run`` would build (trusted, the given options)."""
    from robustlab.runs import study as driver
    from robustlab.studies.cross_domain.clf import ClfStudy, run_clf
    from robustlab.studies.learnability.config import LearnabilityStudy
    from robustlab.studies.learnability.study import run_study

    seen = []

    def fake(study, out, ctx=None):
        seen.append((type(study).__name__, ctx))
        return driver.Outcome({"ok": 1}, True, [], Path(out), None)

    monkeypatch.setattr(driver, "run_study", fake)
    learn = LearnabilityStudy(models=("bow",), perturbations=("leet_letters",))
    assert run_study(learn, tmp_path / "a", workers=3, trusted=False, progress=False) == {"ok": 1}
    assert run_clf(ClfStudy(root=str(tmp_path), domains=("a", "b")), tmp_path / "b",
                   executor="process", workers=2) == {"ok": 1}
    (name_a, ctx_a), (name_b, ctx_b) = seen
    assert (name_a, ctx_a.workers, ctx_a.trusted, ctx_a.progress) == \
        ("Learnability", 3, False, False)
    assert (name_b, ctx_b.executor, ctx_b.workers, ctx_b.trusted) == ("Clf", "process", 2, True)


def test_an_existing_kind_moves_as_one_package(monkeypatch, tmp_path, capsys):
    """Issue 30's "move an existing kind with no other file changed", shown on cross-domain:
    its package copied under another name (its own imports rewritten: they are inside it) and
    the copy's line in :data:`~robustlab.studies.PACKAGES` instead of the original's is all it
    takes: ``robustlab cross-domain``, ``report``, ``resume`` and the TUI run the copy's code.
    Nothing in robustlab/ outside the package names it but that line (and a docstring)."""
    import argparse
    import re
    import shutil

    from robustlab.cli import build_parser

    old = "robustlab.studies.cross_domain"
    src = Path(studies.__file__).parent / "cross_domain"
    root = src.parents[2]
    outside = sorted(
        f"{path.relative_to(root)}:{n}" for path in (root / "robustlab").rglob("*.py")
        if src not in path.parents
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"studies[./]cross_domain\b", line)
        and not (path.name == "__init__.py" and path.parent.name == "studies"))
    assert outside == [], f"robustlab modules reaching into the cross-domain package: {outside}"

    pkgs = tmp_path / "pkgs"
    shutil.copytree(src, pkgs / "moved_kind", ignore=shutil.ignore_patterns("__pycache__"))
    for f in (pkgs / "moved_kind").rglob("*.py"):
        f.write_text(f.read_text(encoding="utf-8").replace(old, "moved_kind"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(pkgs))
    monkeypatch.setattr(studies, "PACKAGES",
                        ["moved_kind" if p == old else p for p in studies.PACKAGES])
    assert studies.find("cross-domain").package == "moved_kind"
    cd = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    scores = next(a for a in cd.choices["cross-domain"]._actions
                  if isinstance(a, argparse._SubParsersAction)).choices["scores"]
    assert scores.get_default("func").__module__ == "moved_kind.command"

    rows = ["system,domain,score"] + [f"{s},{d},{v}" for s, vs in
                                      {"bow": [80.2, 81.5, 79.1], "cnn": [84.0, 78.5, 81.0],
                                       "lstm": [77.9, 78.2, 77.7]}.items()
                                      for d, v in zip("abc", vs, strict=True)]
    (tmp_path / "scores.csv").write_text("\n".join(rows) + "\n")
    run = tmp_path / "run"
    assert main(["cross-domain", "scores", str(tmp_path / "scores.csv"), "--out", str(run),
                 "--bags", "5", "--bag-fraction", "0.5", "--no-plots"]) == 0
    assert json.loads((run / "summary.json").read_text())["kind"] == "cross-domain"
    assert main(["report", str(run), "--out", str(tmp_path / "r.md")]) == 0
    assert "Cross-domain consistency (paper 004)" in (tmp_path / "r.md").read_text()
    assert main(["resume", str(run), "--quiet"]) == 0
    capsys.readouterr()
    from robustlab.tui import data

    assert data.read_run(run).kind == "cross-domain"
    assert studies.find("cross-domain").part("screen").__module__ == "moved_kind.screen"
