"""The runs list's detail shows what the highlighted run read (config["inputs"]), one line per
input, from the stored records only; stored text is shown literally (never Rich markup); a run
made before inputs were recorded shows what it always showed."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from robustlab.runs.store import Cell, RunStore
from robustlab.tui import data
from robustlab.tui.app import RobustlabApp
from robustlab.tui.screens.runs import MAX_DETAIL
from tui.test_app import text_of, wait_for

SHA = "9f2c41ab07de" + "0" * 52
MARKUP = "/abs/[bold red]x[/bold red]/[link=http://evil.example]dev[/link].tsv"
INPUTS = {
    "dataset": {"path": MARKUP, "origin": "--dataset", "size": 81234, "sha256": SHA},
    "model:bow": {"path": "/abs/models/sst-bow", "origin": "--model", "size": 12345,
                  "sha256": "a1b2c3d4e5f6" + "1" * 52, "files": 3},
    "neighbourhood": {"name": "wordnet", "origin": "default"},
}


def make_run(run_dir: Path, config: dict) -> Path:
    """A finished one-cell run written through the real store."""
    store = RunStore(run_dir)
    store.init_run("bias", run_dir.name, config, command=f"robustlab bias --out {run_dir}")
    store.add_cells([Cell(key="k=0", kind="bias", params={"k": 0})])
    store.claim("k=0", "test:1")
    store.finish("k=0", {"k": 0, "B": 0.0})
    store.set_run_status("done")
    store.close()
    return run_dir


def test_input_lines_read_the_records_as_stored():
    assert data.input_lines({"k": 1}) == []  # an old run: nothing
    assert data.input_lines({"inputs": "garbage"}) == []
    lines = data.input_lines({"inputs": {**INPUTS, "odd": "text\x1b[31m", "bad": {"size": "x",
                                                                              "sha256": "s",
                                                                              "path": "/p"}}})
    assert lines[0] == f"dataset: {MARKUP} (--dataset; 79.3 KiB, sha256 9f2c41ab07de)"
    assert lines[1] == ("model:bow: /abs/models/sst-bow (--model; 12.1 KiB, 3 files, "
                        "sha256 a1b2c3d4e5f6)")
    assert lines[2] == "neighbourhood: wordnet (default)"
    assert "odd" in lines[3] and "\x1b" not in lines[3]  # control characters are escaped
    assert lines[4].startswith("bad: ")  # a malformed record is text, not a crash


async def test_run_detail_lists_the_inputs_literally(settings, tmp_path):
    new = make_run(tmp_path / "a-new", {"inputs": INPUTS})
    old = make_run(tmp_path / "b-old", {"k": [0]})
    app = RobustlabApp([tmp_path], settings)
    async with app.run_test(size=(120, 30)) as pilot:
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.runs) == 2)
        detail = screen.query_one("#run-detail", Static)
        await wait_for(pilot, lambda: "input " in text_of(detail))
        shown = text_of(detail).splitlines()
        assert shown[:2] == [str(new), f"robustlab bias --out {new}"]
        assert shown[2:] == [f"input {line}" for line in data.input_lines({"inputs": INPUTS})]
        assert MARKUP in text_of(detail)  # brackets shown as typed, not read as markup
        await pilot.pause()
        # taller than the stylesheet's 4 lines (a long one wraps), within the cap
        assert len(shown) <= detail.region.height <= MAX_DETAIL
        # the old run: path and command only, at the stylesheet's height
        screen.query_one("#runs", DataTable).move_cursor(row=[r.path for r in screen.runs]
                                                         .index(old))
        await wait_for(pilot, lambda: str(old) in text_of(detail))
        assert text_of(detail).splitlines() == [str(old), f"robustlab bias --out {old}"]
        assert detail.styles.max_height is not None and detail.styles.max_height.value == 4
