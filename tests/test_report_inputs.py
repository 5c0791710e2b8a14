"""``robustlab report`` shows the inputs a run recorded (config["inputs"]) in its provenance, in
HTML and Markdown, escaped like every other run-directory string; a run made before inputs were
recorded says so instead of showing an empty table."""

from __future__ import annotations

import json
from pathlib import Path

from report_helpers import markdown_html, parse, table

from robustlab.cli import main
from robustlab.outputs import write_json
from robustlab.runs.store import Cell, RunStore

SHA = "9f2c41ab07de" + "0" * 52
MODEL_SHA = "a1b2c3d4e5f6" + "1" * 52
INPUTS = {
    "dataset": {"path": "/abs/data/dev.tsv", "origin": "--dataset", "size": 81234,
                "sha256": SHA},
    "model:bow": {"path": "/abs/models/sst-bow", "origin": "--model", "size": 12345,
                  "sha256": MODEL_SHA, "files": 3},
    "neighbourhood": {"name": "wordnet", "origin": "default"},
}


def make_run(run_dir: Path, config: dict) -> Path:
    """A finished one-cell bias run written through the real store, with its summary.json."""
    store = RunStore(run_dir)
    store.init_run("bias", run_dir.name, config, command=f"robustlab bias --out {run_dir}",
                   versions={"robustlab": "0.1.0"})
    store.add_cells([Cell(key="pair=he/she|k=0", kind="bias", params={"k": 0})])
    store.claim("pair=he/she|k=0", "test:1")
    result = {"pair": ["he", "she"], "k": 0, "B": 0.01, "std": 0.02, "n": 2}
    store.finish("pair=he/she|k=0", result, records=[{"text": "he is", "f_soft": 0.01}])
    store.set_run_status("done")
    store.close()
    write_json(run_dir / "summary.json", {
        "kind": "bias", "complete": True, "failed_cells": [], "config": config,
        "table": [result], "seconds": 1.0})
    return run_dir


def _report(run: Path, out: Path) -> str:
    assert main(["report", str(run), "--out", str(out)]) == 0
    return out.read_text(encoding="utf-8")


HEAD = ["input", "path or name", "origin", "size", "sha256", "files"]


def _inputs_table(page) -> dict:
    """By caption in HTML; by its columns once Markdown is rendered (captions become <p>)."""
    found = [t for t in page.tables if t["head"] == HEAD]
    return found[0] if len(found) == 1 else table(page, "Inputs the run read")


def test_inputs_table_in_html_and_markdown(tmp_path):
    run = make_run(tmp_path / "with-inputs", {"k": [0], "inputs": INPUTS})
    text = _report(run, tmp_path / "r.html")
    t = _inputs_table(parse(text))
    assert "Inputs the run read" in t["caption"]
    assert t["rows"] == [
        ["dataset", "/abs/data/dev.tsv", "--dataset", "79.3 KiB (81234 B)", SHA[:12], "–"],
        ["model:bow", "/abs/models/sst-bow", "--model", "12.1 KiB (12345 B)", MODEL_SHA[:12],
         "3"],
        ["neighbourhood", "wordnet", "default", "–", "–", "–"],
    ]
    assert SHA in text  # the configuration JSON is still shown in full
    md = _report(run, tmp_path / "r.md")
    for want in ("/abs/data/dev.tsv", "--dataset", SHA[:12], "wordnet"):
        assert want in md
    mt = _inputs_table(parse(markdown_html(md)))
    assert mt["rows"] == t["rows"]  # the same table once rendered by a CommonMark parser


def test_hostile_input_path_is_escaped(tmp_path):
    evil = "/tmp/<script>alert(1)</script>/dev|tsv *x*"
    inputs = {"dataset": {"path": evil, "origin": "<b>--dataset</b>", "size": 10,
                          "sha256": SHA}}
    run = make_run(tmp_path / "evil", {"inputs": inputs})
    text = _report(run, tmp_path / "e.html")
    assert "<script" not in text.lower() and "<b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    row = _inputs_table(parse(text))["rows"][0]
    assert row[1:4] == [evil, "<b>--dataset</b>", "10 B"]  # shown literally, as text
    rendered = markdown_html(_report(run, tmp_path / "e.md"))
    assert "<script" not in rendered and "<b>" not in rendered and "<em>x</em>" not in rendered
    assert _inputs_table(parse(rendered))["rows"][0][1] == evil


def test_run_without_inputs_says_not_recorded(tmp_path):
    run = make_run(tmp_path / "old", {"k": [0]})
    note = "not recorded (run made before robustlab recorded its inputs)"
    text = _report(run, tmp_path / "o.html")
    assert note in text
    assert not any("Inputs the run read" in t["caption"] for t in parse(text).tables)
    assert note in _report(run, tmp_path / "o.md")
    assert json.loads((run / "summary.json").read_text())["config"] == {"k": [0]}


def test_malformed_records_do_not_break_the_report(tmp_path):
    """A damaged or hand-edited record is shown as it is, never a crash."""
    inputs = {"dataset": "just a string", "model": {"path": "/m", "size": "big",
                                                   "sha256": 12345, "files": None}}
    run = make_run(tmp_path / "odd", {"inputs": inputs})
    rows = _inputs_table(parse(_report(run, tmp_path / "d.html")))["rows"]
    assert rows == [["dataset", "just a string", "–", "–", "–", "–"],
                    ["model", "/m", "–", "big", "12345", "–"]]
    empty = make_run(tmp_path / "none", {"inputs": {}})
    assert "Inputs: none recorded" in _report(empty, tmp_path / "n.html")
