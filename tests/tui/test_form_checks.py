"""The new-study form checks every field with the command's own parser and pre-run checks."""

from __future__ import annotations

import pytest

from robustlab.cli import build_parser
from robustlab.tui import forms
from robustlab.tui.app import RobustlabApp, Settings
from robustlab.tui.data import _launched_kind
from robustlab.tui.screens.new_study import NewStudyScreen

from .test_app import text_of, wait_for


@pytest.fixture(scope="module")
def learnability():
    parser = build_parser()
    return {r.name: r for r in forms.recipes(parser)}["learnability"], parser


@pytest.mark.parametrize("extra, message, dest", [
    (["--seeds", "0,x"], "--seeds: expected comma-separated integers, got '0,x'", "seeds"),
    (["--seeds", "1,1"], "--seeds: duplicate seeds", "seeds"),
    (["--steps", "x"], "argument --steps: invalid int value", "steps"),
    (["--perturbations", "leet_leters"], "Did you mean: leet_letters", "perturbations"),
    (["--p-grid", "0.5,0.1"], "--p-grid: probabilities must be increasing", "p_grid"),
    (["--data", "/no/such/file.tsv"], "--dataset /no/such/file.tsv: no such file", "dataset"),
    (["--dataset-from-huggingface", "demo", "--data", "x.tsv"], "given twice", "dataset"),
    (["--model", "bow$(x)"], "--model bow$(x): unknown model", "model"),
    (["--dataset", "demo", "--test-data", "t.tsv"], "--test-dataset needs --dataset FILE",
     "test_dataset"),
])
def test_check_names_the_error_and_its_field(learnability, extra, message, dest):
    recipe, parser = learnability
    error, field = forms.check(recipe, ["learnability", "--model", "bow", "--out", "r", *extra],
                               parser)
    assert error is not None and message in error
    assert field == dest


def test_a_valid_form_passes(learnability):
    recipe, parser = learnability
    assert forms.check(recipe, ["learnability", "--model", "bow", "--seeds", "0,1", "--out", "r"],
                       parser) == (None, None)


def test_launched_kind_is_the_command_not_the_interpreter():
    assert _launched_kind(["/usr/bin/python3", "-m", "robustlab", "learnability", "--out",
                           "x"]) == "learnability"
    assert _launched_kind(["/opt/study.py", "--out", "x"]) == "study.py"


async def test_a_rejected_form_stays_filled_with_the_error_beside_the_field(tmp_path):
    app = RobustlabApp([tmp_path / "runs"], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.recipes) > 0,)
        screen.query_one("#recipes").highlighted = [r.name for r in screen.recipes].index(
            "learnability")
        await wait_for(pilot, lambda: screen.recipe is not None
                       and screen.recipe.name == "learnability")
        # the form of that recipe is built (its fields mounted)
        await wait_for(pilot, lambda: bool(screen.query(f"#f{screen._gen}-out")))
        screen.field("model").value = "bow"
        screen.field("seeds").value = "0,x"
        screen.field("out").value = "runs/bad"
        await wait_for(pilot, lambda: screen.error is not None and "--seeds" in screen.error,)
        await pilot.press("ctrl+l")
        # its answer: "cannot launch" (the event); refused, nothing launched
        await wait_for(pilot, lambda: any("cannot launch" in n.message
                                          for n in app._notifications))
        assert isinstance(app.screen, NewStudyScreen)
        assert not (tmp_path / "runs" / "bad").exists()
        assert screen.field("model").value == "bow" and screen.field("seeds").value == "0,x"
        beside = screen.query_one(f"#e{screen._gen}-seeds")
        assert "expected comma-separated integers" in text_of(beside)
        assert screen.field("seeds").has_class("-invalid")
        await wait_for(pilot, lambda: app.focused is screen.field("seeds"))  # focus is deferred
        screen.field("seeds").value = "0"
        await wait_for(pilot, lambda: screen.error is None,)
        assert text_of(beside) == "" and not screen.field("seeds").has_class("-invalid")
        assert not screen.query_one("#launch").disabled
