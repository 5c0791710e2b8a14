"""A study command's options come from its config's fields (robustlab.runs.fields), never
from an ``add_argument`` written by hand next to the command (issue 30)."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from robustlab import studies
from robustlab.cli import build_parser, main
from robustlab.endpoints import add_options as add_endpoint_options
from robustlab.runs import fields
from robustlab.runs.study import RunContext
from robustlab.studies.cross_domain.clf import ClfStudy
from robustlab.studies.cross_domain.study import MTStudy, ScoresStudy
from robustlab.studies.eval.config import EvalConfig
from robustlab.studies.learnability.config import LearnabilityStudy
from robustlab.studies.learnability.thresholds import add_threshold_options
from robustlab.studies.second_order.config import AttackConfig, BiasConfig

#: every study command, its config and the context its options depend on
STUDY_COMMANDS = [
    (("eval",), EvalConfig, {}),
    (("attack",), AttackConfig, {}),
    (("bias",), BiasConfig, {}),
    (("learnability",), LearnabilityStudy, {"kind": "learnability"}),
    (("robustness",), LearnabilityStudy, {"kind": "robustness"}),
    (("cross-domain", "mt"), MTStudy, {}),
    (("cross-domain", "clf"), ClfStudy, {}),
    (("cross-domain", "scores"), ScoresStudy, {}),
]


def _sub(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> argparse.ArgumentParser:
    for name in path:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _names(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string (and positional dest) of ``parser``, ``--help`` aside."""
    return {s for a in parser._actions for s in (a.option_strings or [a.dest])} - {"-h", "--help"}


def _scratch(add) -> set[str]:
    """The options ``add(parser)`` makes on a parser of its own."""
    p = argparse.ArgumentParser(add_help=False)
    add(p)
    return _names(p)


@pytest.mark.parametrize(("path", "config", "context"), STUDY_COMMANDS,
                         ids=[" ".join(c[0]) for c in STUDY_COMMANDS])
def test_a_study_command_has_only_field_and_run_options(path, config, context):
    """Each option of a study command is one its config's fields make, a run-context option
    (RunContext), for learnability a CI gate (add_threshold_options) or, for eval, attack and
    bias, how an endpoint is asked (robustlab.endpoints.add_options: runtime limits, and the kind
    folded into the model field): an option added by hand in commands/ fails here."""
    command = _sub(build_parser(), path)
    own = _scratch(lambda p: fields.add_arguments(config, p, **context))
    run = _scratch(lambda p: RunContext.add_arguments(p, threads=True))
    gates = _scratch(add_threshold_options) if config is LearnabilityStudy else set()
    endpoint = _scratch(add_endpoint_options) if config is EvalConfig else \
        _scratch(lambda p: add_endpoint_options(p, budget=False, max_queries=True)) \
        if config in (AttackConfig, BiasConfig) else set()
    names = _names(command)
    assert names - own - run - gates - endpoint == set()
    assert own <= names  # and every field option is there


@pytest.mark.parametrize("kind", ["eval", "attack", "bias", "cross-domain"])
def test_study_command_modules_add_no_option_by_hand(kind):
    """The grep of issue 30: the command modules (found through the registry) whose every
    command is a study call no ``add_argument`` (learnability's also holds ``correlate``,
    checked above)."""
    path = Path(studies.find(kind).part("command").__file__)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"]
    assert calls == [], f"{path.name} of {kind} adds options by hand at lines {calls}"


WMT = "/nonexistent/wmt22"


@pytest.mark.parametrize("line", [
    ["mt", "--wmt22-dir", WMT, "--pair", "de-en", "--wmt22-refs", "A", "B", "--score", "chrf",
     "--eps", "2", "5", "--bags", "7", "--seed", "3"],
    ["mt", "--systems", "A=/x/a.txt", "/x/b.txt", "--refs", "/x/r.txt", "--domains", "/x/d.txt",
     "--human", "/x/h.tsv", "--score", "ter", "--tokenize", "intl", "--allow-empty",
     "--eps-grid", "sigma", "--eps-max", "50", "--bag-fraction", "0.5"],
    ["clf", "--model", "bow", "cnn", "--data-dir", "/x/amz", "--domains", "books", "dvd",
     "kitchen", "--train-domains", "dvd", "--steps", "20", "--max-train", "100", "--seed", "4"],
    ["scores", "/x/s.tsv", "--wmt-da", "--domains", "/x/d.txt", "--da-column", "Z.SCR",
     "--human", "/x/h.tsv", "--score-column", "v"],
])
def test_cross_domain_argv_gives_back_the_same_config(line):
    """The command line shown with a run (fields.argv) makes the same config again: every
    field's ``show`` agrees with its parser, whatever order --help and argv use."""
    parser = build_parser()
    out = ["--out", "/x/o"] if line[0] != "scores" else []
    cls = {"mt": MTStudy, "clf": ClfStudy, "scores": ScoresStudy}[line[0]]
    config = cls.from_args(parser.parse_args(["cross-domain", *line, *out]))
    again = cls.from_args(build_parser().parse_args([*config.argv(), *out]))
    assert again == config
    assert again.signature() == config.signature()


def test_mt_refuses_wmt22_dir_with_files(tmp_path, capsys):
    """--wmt22-dir names the files itself: with --systems it is refused before --out exists."""
    out = tmp_path / "run"
    code = main(["cross-domain", "mt", "--wmt22-dir", str(tmp_path), "--systems", "a.txt",
                 "--out", str(out)])
    assert code == 2
    assert "--wmt22-dir reads systems, refs and domains itself" in capsys.readouterr().err
    assert not out.exists()


# ---- cell signatures from fields -----------------------------------------------------------------


def test_cell_signatures_keep_the_form_stored_runs_have():
    """Cells' signatures come from the fields' ``in_cell`` metadata; their text is what runs of
    earlier versions stored (a change would make every stored cell recompute)."""
    from robustlab import __version__
    from robustlab.signature import make_signature
    from robustlab.studies.cross_domain.consistency import ConsistencyConfig
    from robustlab.studies.cross_domain.study import consistency_signature

    v = f"v:{__version__}"
    cfg = ConsistencyConfig(eps=(1.0, 2.5), n_bags=3, fraction=0.6, seed=7, grid_max=20,
                            eps_grid="sigma")  # grid_max and eps_grid never entered a cell's
    assert consistency_signature(cfg) == f"cross-domain|eps:1,2.5|bags:3x0.6|rs:7|{v}"
    clf = fields.cell_parts(ClfStudy, {"models": "bow", "train_domains": None, "steps": 5})
    assert consistency_signature(cfg, score="accuracy", **clf) == \
        f"cross-domain|score:accuracy|model:bow|steps:5|eps:1,2.5|bags:3x0.6|rs:7|{v}"
    mt = fields.cell_parts(MTStudy, {"score": "chrf"})
    assert consistency_signature(cfg, **mt, sacrebleu="S") == \
        f"cross-domain|score:chrf|sacrebleu:S|eps:1,2.5|bags:3x0.6|rs:7|{v}"
    learn = fields.cell_parts(LearnabilityStudy, {
        "dataset": "demo#ab", "steps": 5, "seeds": 1, "p_grid": 0.25, "perturbations": "x(a=1)",
        "models": "bow", "experiments": "learnability"})
    assert make_signature("learnability", **learn) == ("learnability|exp:learnability|model:bow|"
                                                       f"pert:x(a=1)|p:0.25|seed:1|steps:5|"
                                                       f"data:demo#ab|{v}")
    assert fields.cell_parts(LearnabilityStudy, {**dict.fromkeys(
        ("dataset", "steps", "seeds", "perturbations", "models", "experiments"), "-"),
        "p_grid": None})["p"] == "-"
