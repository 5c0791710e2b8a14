"""Every command that takes ``--model`` either works with a model behind an endpoint or refuses
it in one line, exit 2, before anything is asked or written (issue 34); ``check`` sends the key
of a card its own plan names (the plan is the user's file on this command line) and never lets
it reach the run folder, JUnit or output, while a stored run still never sends it.

The endpoint is a plain recording HTTP server (``test_endpoints._Recorder``: it answers
``{"probs": [[0.5, 0.5], …]}`` and keeps every request's headers), so a request that should not
happen is seen.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_endpoints import KEY, _Recorder, card, data, evil, run_eval  # noqa: F401

from robustlab.cli import main

PLAN = """{model_line}
data = "{data}"
seeds = [0]
out = "runs/gate"
[[test]]
perturbation = "leet_letters"
min_accuracy = 0.0
"""


def files_hold(folder: Path, secret: str) -> list[Path]:
    return [f for f in folder.rglob("*") if f.is_file() and secret.encode() in f.read_bytes()]


@pytest.mark.parametrize("model_line", ['model = "card.toml"', 'models = ["card.toml"]'])
def test_check_sends_the_key_of_its_plans_card_and_keeps_it_out_of_everything(
        data, evil, tmp_path, capsys, monkeypatch, model_line):  # noqa: F811
    monkeypatch.setenv("RL_TEST_KEY", KEY)
    card(tmp_path / "card.toml", f"{evil}/predict", api_key_env="RL_TEST_KEY")
    plan = tmp_path / "gate.toml"
    plan.write_text(PLAN.format(model_line=model_line, data=data / "dev.tsv"), encoding="utf-8")
    junit = tmp_path / "ci.xml"
    rc = main(["check", str(plan), "--junit-xml", str(junit)])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    assert _Recorder.seen and all(h.get("Authorization") == f"Bearer {KEY}"
                                  for h in _Recorder.seen)
    assert KEY not in cap.out + cap.err and KEY not in junit.read_text()
    run = tmp_path / "runs" / "gate"
    assert not files_hold(run, KEY) and 'failures="0"' in junit.read_text()
    # the run folder is data: resuming it is refused, and nothing is sent
    with sqlite3.connect(run / "store.sqlite") as conn:
        conn.execute("UPDATE cells SET status='pending', result=NULL WHERE seq=1")
        conn.execute("DELETE FROM responses")
    _Recorder.seen = []
    rc = main(["resume", str(run), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "rerun the eval command with --model" in err and not _Recorder.seen
    # rerunning the plan itself (the user's file, on this command line) finishes it
    assert main(["check", str(plan), "--quiet"]) == 0
    capsys.readouterr()
    assert _Recorder.seen and not files_hold(run, KEY)


def test_a_plan_mixing_an_endpoint_with_families_is_one_line(data, tmp_path, capsys):  # noqa: F811
    card(tmp_path / "card.toml", "http://127.0.0.1:9/predict")
    plan = tmp_path / "gate.toml"
    plan.write_text(PLAN.format(model_line='models = ["card.toml", "bow"]',
                                data=data / "dev.tsv"), encoding="utf-8")
    rc = main(["check", str(plan), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "evaluated as it is" in err


#: commands that train their models, or run over worker processes: one line, exit 2, nothing
#: asked
REFUSED = {
    "train": ["train", "--model", "{card}", "--dataset", "{data}", "--out", "{out}"],
    "robustness": ["robustness", "--model", "{card}", "--dataset", "{data}", "--out", "{out}"],
    "learnability": ["learnability", "--model", "{card}", "--dataset", "{data}", "--out",
                     "{out}"],
    "cross-domain clf": ["cross-domain", "clf", "--model", "{card}", "--data-dir", "{dir}",
                         "--out", "{out}"],
    "bias --executor process": ["bias", "--model", "{card}", "--dataset", "{data}",
                                "--lm-check", "none", "--source", "wordnet", "--executor",
                                "process", "--out", "{out}"],
    "textattack": ["textattack", "attack", "--model", "{card}", "--recipe", "textfooler",
                   "--dataset-from-huggingface", "{data}", "--num-examples", "1"],
    "attack --executor process": ["attack", "--recipe", "so-enum", "--model", "{card}",
                                  "--dataset", "{data}", "--source", "wordnet", "--lm-check",
                                  "none", "--executor", "process", "--out", "{out}"],
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_commands_that_cannot_take_an_endpoint_refuse_in_one_line(name, data, evil, tmp_path,  # noqa: F811
                                                                   capsys):
    c = card(tmp_path / "card.toml", f"{evil}/predict")
    out = tmp_path / "out"
    argv = [a.format(card=c, data=data / "dev.tsv", out=out, dir=data)
            for a in REFUSED[name]]
    rc = main(argv)
    err = capsys.readouterr().err
    errors = [ln for ln in err.splitlines() if "error" in ln.lower() or "Traceback" in ln]
    assert rc == 2, err
    assert len(errors) == 1 and "endpoint" in errors[0], err
    assert not _Recorder.seen and not out.exists()


def test_commands_that_take_an_endpoint_work(data, evil, tmp_path, capsys):  # noqa: F811
    """eval, failures and report of its run, attack, bias, and the TUI's launch form (which never
    sends a key: a card naming one is refused beside the field)."""
    c = card(tmp_path / "card.toml", f"{evil}/predict")
    out = tmp_path / "eval"
    rc, stdout, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                                "leet_letters", "--seeds", "0", "-n", "6", "--out", out], capsys)
    assert rc == 0, err
    assert "tokens: not reported by the server" in stdout
    assert main(["failures", str(out), "--csv", str(tmp_path / "f.csv"), "--quiet"]) == 0
    assert main(["report", str(out), "--out", str(tmp_path / "r.html"), "--quiet"]) == 0
    capsys.readouterr()
    (tmp_path / "pairs.json").write_text(json.dumps({"film": ["movie"], "plot": ["story"]}))
    (tmp_path / "table.json").write_text(json.dumps({"good": ["nice"], "the": ["a"]}))
    rc = main(["attack", "--recipe", "so-enum", "--model", str(c), "--dataset",
               str(data / "dev.tsv"), "-n", "2", "--source", f"table:{tmp_path / 'table.json'}",
               "--patch-table",
               str(tmp_path / "pairs.json"), "--lm-check", "none", "--max-distance", "1",
               "--out", str(tmp_path / "attack"), "--no-progress", "--quiet"])
    stdout = capsys.readouterr().out
    assert rc == 0 and "endpoint queries for 2 example(s)" in stdout
    assert "queries in" in stdout and "requests sent this run" in stdout
    # bias: B(p, k) asked of the endpoint, its costs printed
    (tmp_path / "bias_pairs.txt").write_text("film movie\n")
    rc = main(["bias", "--model", str(c), "--dataset", str(data / "dev.tsv"), "--pairs",
               str(tmp_path / "bias_pairs.txt"), "--source", f"table:{tmp_path / 'table.json'}",
               "--lm-check", "none", "--k", "0,1", "--out", str(tmp_path / "bias"),
               "--no-progress", "--quiet", "--no-plots"])
    stdout = capsys.readouterr().out
    assert rc == 0 and "endpoint queries for the cells not done yet" in stdout
    assert "film/movie" in stdout and "requests sent this run" in stdout
    # the TUI's launch form: the command's own checks, then no key from a form
    from robustlab.cli import build_parser
    from robustlab.tui import forms

    parser = build_parser()
    recipe = {r.name: r for r in forms.recipes(parser)}["eval"]
    argv = ["eval", "--model", str(c), "--dataset", str(data / "dev.tsv"), "--out", "r"]
    assert forms.check(recipe, argv, parser) == (None, None)
    keyed = card(tmp_path / "keyed.toml", f"{evil}/predict", api_key_env="RL_TEST_KEY")
    error, field = forms.check(recipe, [*argv[:2], str(keyed), *argv[3:]], parser)
    assert "a form never sends a key" in error and field == "model"
