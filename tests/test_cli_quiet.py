"""Every command takes ``--quiet``, and ``robustlab train`` shows its progress unless given it."""

from __future__ import annotations

import argparse
import io

from robustlab.cli import build_parser, main
from robustlab.models.progress import TrainProgress


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every runnable (sub)command's parser, found by walking the parser (a new command is
    covered without editing this test)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    seen: set[int] = set()
    for name, sub in subs[0].choices.items():
        if id(sub) in seen:  # an alias (cent = learnability) is the same parser
            continue
        seen.add(id(sub))
        yield from _leaves(sub, (*path, name))


def test_every_command_accepts_quiet() -> None:
    leaves = list(_leaves(build_parser()))
    assert len(leaves) >= 20  # the walk reached the subcommands (cross-domain's included)
    missing = []
    for path, parser in leaves:
        action = parser._option_string_actions.get("--quiet")
        if action is None:
            missing.append(" ".join(path))
            continue
        # a flag without a value (store_true), the same everywhere
        assert action.nargs == 0 and action.const is True and not action.default, path
    assert not missing, f"commands without --quiet: {missing}"


def test_train_progress_on_stderr_unless_quiet(tmp_path, capsys) -> None:
    base = ["train", "--model", "bow", "--dataset", "demo", "--steps", "30",
            "--max-examples", "200"]
    assert main([*base, "--out", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    # stderr is not a terminal under pytest: plain lines, no carriage returns
    assert "training bow: 30/30 steps done, final loss" in err
    assert "\r" not in err
    assert main([*base, "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert "steps done" not in capsys.readouterr().err


def test_progress_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    bar = TrainProgress(4, "training x", stream=out, log_every=0.0)
    reads = []
    for step in range(1, 5):
        bar.update(step, lambda s=step: reads.append(s) or 1.0 / s)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("training x: step 1/4 (25%)  loss 1.0000")
    assert "ETA" in lines[0] and "\r" not in out.getvalue()
    assert lines[-1].startswith("training x: 4/4 steps done, final loss 0.2500")
    assert reads == [1, 2, 3, 4]


def test_progress_reads_loss_only_when_shown() -> None:
    """A GPU loop passes the loss lazily: with a long interval only the last step is read."""
    out = io.StringIO()
    bar = TrainProgress(50, "t", stream=out, log_every=3600.0)
    reads = []
    for step in range(1, 51):
        bar.update(step, lambda s=step: reads.append(s) or 0.5)
    bar.close()
    assert reads == [50]
    assert out.getvalue().count("\n") == 1  # only the closing line


def test_disabled_progress_prints_nothing() -> None:
    out = io.StringIO()
    bar = TrainProgress(3, "t", stream=out, enabled=False)
    bar.update(3, 0.1)
    bar.close()
    assert out.getvalue() == ""
