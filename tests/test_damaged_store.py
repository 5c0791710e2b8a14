"""Issue 21 item 9: damaged payloads inside a healthy SQLite file are found when read.

A byte changed inside a cell's result, a record, a stored prediction's text or the run's
configuration leaves a file that passes ``PRAGMA quick_check``. Every payload is verified on
read (its CRC-32, or UTF-8/JSON/type in a store written before checksums): resume recomputes a
damaged done cell and says so; ``failures``, ``correlate``, ``report`` and the TUI's loaders skip
it and name it; a damaged run row is one error line with the way to recover.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from learnability_toy import write_toy
from tui import fixtures as tui_fixtures  # run directories of every kind

from robustlab.cli import main
from robustlab.runs import Cell, CellOutput, RunStore, payloads, run_cells
from robustlab.runs.store import SCHEMA_VERSION, DamagedCell, StoreError

TIMING = {"seconds", "train_seconds", "model_seconds", "predict_seconds"}


def square(kind, params):
    x = params["x"]
    return CellOutput({"y": x * x, "text": f"ex {x}"}, records=[{"i": i, "t": f"r{i}"}
                                                                for i in range(3)],
                      predictions=[{"idx": 0, "original": f"good {x}", "perturbed": f"g00d {x}",
                                    "label": 1, "pred_before": 1, "prob_before": 0.9,
                                    "pred_after": 0, "prob_after": 0.2}])


def squares(path: Path, n: int = 4) -> RunStore:
    store = RunStore(path)
    store.init_run("squares", "sq", {"n": n})
    run_cells(store, [Cell(f"x={i}", "sq", {"x": i}) for i in range(n)], square, progress=False)
    return store


def raw(path: Path) -> sqlite3.Connection:
    """A plain connection that writes past the store's checksums (= damage on disk)."""
    return sqlite3.connect(path / "store.sqlite", isolation_level=None)


def flip_in_file(db: Path, text: str) -> None:
    """Change one byte in the middle of ``text`` where it lies in the file itself."""
    data = bytearray(db.read_bytes())
    at = data.find(text.encode())
    assert at >= 0 and data.find(text.encode(), at + 1) < 0, "needs exactly one occurrence"
    mid = at + len(text) // 2
    data[mid] = ord("#") if data[mid] != ord("#") else ord("%")
    db.write_bytes(bytes(data))


# ---- the store ------------------------------------------------------------------------------------


def test_a_byte_changed_in_the_file_passes_quick_check_but_not_the_read(tmp_path):
    store = squares(tmp_path)
    result = store.conn.execute("SELECT result FROM cells WHERE key='x=3'").fetchone()[0]
    store.close()
    flip_in_file(tmp_path / "store.sqlite", result)
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.quick_check(cache=False) is None  # SQLite sees a healthy file
        assert [c.key for c in ro.cells()] == ["x=0", "x=1", "x=2"]
        assert ro.damaged == {"x=3": "result fails its checksum"}
        line = ro.skipped_line()
    assert line.startswith(f"skipped 1 damaged cell of {tmp_path}: x=3 (result fails")


@pytest.mark.parametrize("what, sql, args, reason", [
    ("a result changed, still JSON", "UPDATE cells SET result=? WHERE key='x=1'",
     ('{"text": "ex 9", "y": 1}',), "result fails its checksum"),
    ("invalid JSON", "UPDATE cells SET result=? WHERE key='x=1'", ('{"text": "ex 1", "y": 1',),
     "result fails its checksum"),
    ("params", "UPDATE cells SET params=? WHERE key='x=1'", ('{"x": 7}',),
     "params fails its checksum"),
    ("a record", "UPDATE records SET payload=? WHERE cell='x=1' AND idx=2",
     ('{"i": 2, "t": "rX"}',), "record #2 fails its checksum"),
    ("a record's bytes", "UPDATE records SET payload=CAST(? AS TEXT) WHERE cell='x=1' AND idx=0",
     (b'{"i": 0, "t": "r\xff"}',), "record #0 fails its checksum"),
    ("an example text", "UPDATE predictions SET perturbed=? WHERE cell='x=1'", ("g00d 7",),
     "prediction #0 fails its checksum"),
    ("a label", "UPDATE predictions SET label=5 WHERE cell='x=1'", (),
     "prediction #0 fails its checksum"),
])
def test_each_damaged_payload_is_named_skipped_and_recomputed(tmp_path, what, sql, args, reason):
    store = squares(tmp_path)
    before = {c.key: c.result for c in store.cells()}
    store.close()
    raw(tmp_path).execute(sql, args)
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.quick_check(cache=False) is None
        assert ro.damaged_done() == {"x=1": reason}
        # readers of everything skip the cell, readers of the one cell refuse it by name
        shown = {k for k, _ in ro.done_results()} | {c.key for c in ro.cells()}
        shown_records = {r["i"] for r in ro.records()}  # other cells' records are still read
        if "params" in what or "result" in what or "JSON" in what:
            assert shown == {"x=0", "x=2", "x=3"}
        if "record" in what:
            assert len(ro.records()) == 9 and shown_records == {0, 1, 2}
            with pytest.raises(DamagedCell, match=r"cell x=1: record #\d fails its checksum"):
                ro.records("x=1")
        if "text" in what or "label" in what:
            assert {p["cell"] for p in ro.predictions()} == {"x=0", "x=2", "x=3"}
            with pytest.raises(DamagedCell, match="cell x=1: prediction #0"):
                ro.predictions("x=1")
    calls = []
    store = RunStore(tmp_path)
    store.init_run("squares", "sq", {"n": 4})
    rep = run_cells(store, [Cell(f"x={i}", "sq", {"x": i}) for i in range(4)],
                    lambda k, p: calls.append(p["x"]) or square(k, p), progress=False)
    assert rep.complete and calls == [1]  # only the damaged cell was computed again
    assert {c.key: c.result for c in store.cells()} == before
    assert store.damaged_done() == {} and store.predictions("x=1")[0]["perturbed"] == "g00d 1"
    assert store.cell("x=1").attempts == 2 and store.cell("x=0").attempts == 1
    events = [e["message"] for e in store.events() if e["cell"] == "x=1"]
    assert any("damaged stored data" in m for m in events)


def test_resume_says_which_cells_it_recomputes(tmp_path, capsys):
    squares(tmp_path, 8).close()
    raw(tmp_path).execute("UPDATE cells SET result='{' WHERE key IN ('x=1','x=2','x=3','x=4',"
                          "'x=5','x=6','x=7')")
    store = RunStore(tmp_path)
    store.init_run("squares", "sq", {"n": 8})
    run_cells(store, [Cell(f"x={i}", "sq", {"x": i}) for i in range(8)], square, progress=False)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[0] == ("robustlab: cell x=1: its stored data is damaged (result fails its "
                        "checksum); computing it again")
    assert len(lines) == 6 and lines[-1] == "robustlab: … and 2 more damaged cells computed again"


def test_a_damaged_run_row_is_one_error_with_the_way_to_recover(tmp_path):
    squares(tmp_path).close()
    raw(tmp_path).execute("UPDATE run SET config='{\"n\": 5}'")
    for readonly in (True, False):
        with RunStore(tmp_path, readonly=readonly) as s, pytest.raises(StoreError) as err:
            s.run_info() if readonly else s.init_run("squares", "sq", {"n": 4})
        msg = str(err.value)
        assert f"{tmp_path / 'store.sqlite'} is damaged (the run's configuration or versions " \
               "fail their checksum)" in msg and "To recover: move it aside" in msg
        assert "\n" not in msg
    raw(tmp_path).execute("UPDATE run SET config='[1, 2]', crc=NULL")  # a lost checksum is damage
    with RunStore(tmp_path, readonly=True) as s, pytest.raises(
            StoreError, match="the run's configuration has no checksum"):
        s.run_info()


def test_invalid_utf8_is_found_not_fatal(tmp_path):
    """Invalid UTF-8 made sqlite3 raise OperationalError for the whole query."""
    squares(tmp_path).close()
    con = raw(tmp_path)
    con.execute("UPDATE predictions SET original=CAST(? AS TEXT), crc=0 WHERE cell='x=2'",
                (b"caf\xe9",))
    con.execute("UPDATE cells SET result=CAST(? AS TEXT), result_crc=0 WHERE key='x=3'",
                (b'{"y": "\xff"}',))
    with RunStore(tmp_path, readonly=True) as ro:
        assert [c.key for c in ro.cells()] == ["x=0", "x=1", "x=2"]
        assert ro.predictions("x=0")[0]["original"] == "good 0"
        with pytest.raises(DamagedCell, match="the original text is not valid UTF-8"):
            ro.predictions("x=2")
        assert ro.damaged["x=3"] == "result is not valid UTF-8"


# ---- stores written before checksums (schema 2) ----------------------------------------------------


def make_schema_2(path: Path) -> None:
    """Turn a store into what robustlab wrote before schema 3: no checksum columns."""
    con = raw(path)
    for table, column in (("run", "crc"), ("cells", "params_crc"), ("cells", "result_crc"),
                          ("records", "crc"), ("predictions", "crc")):
        con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    con.execute("UPDATE meta SET value='2' WHERE key='schema_version'")
    con.close()


def test_a_schema_2_store_opens_is_verified_by_type_and_resumes(tmp_path):
    store = squares(tmp_path)
    want = {c.key: c.result for c in store.cells()}
    store.close()
    make_schema_2(tmp_path)
    con = raw(tmp_path)
    con.execute("UPDATE cells SET result='{\"y\": 1' WHERE key='x=1'")  # not JSON
    con.execute("UPDATE records SET payload='[]' WHERE cell='x=0' AND idx=1")  # still JSON: kept
    con.execute("UPDATE predictions SET prob_after=7.5 WHERE cell='x=2'")  # not a probability
    con.execute("UPDATE predictions SET perturbed=X'6700' WHERE cell='x=3'")  # a blob, not text
    con.close()
    with RunStore(tmp_path, readonly=True) as ro:
        assert not ro.sums and ro.quick_check(cache=False) is None
        assert ro.run_info().config == {"n": 4}
        assert ro.damaged_done() == {
            "x=1": "result is not valid JSON (Expecting ',' delimiter)",
            "x=2": "prediction #0: prob_after 7.5 is not a probability",
            "x=3": "prediction #0: the perturbed text is bytes, not text"}
        assert ro.records("x=0")[1] == []  # type-correct old damage cannot be told from data
    with RunStore(tmp_path) as writer:  # migrated: what did not verify has no checksum
        assert writer.damaged_done() == {"x=1": "result has no checksum",
                                         "x=2": "prediction #0 has no checksum",
                                         "x=3": "prediction #0 has no checksum"}
    store = RunStore(tmp_path)  # a writer adds the checksum columns and resumes
    store.init_run("squares", "sq", {"n": 4})
    assert store.sums and store.conn.execute(
        "SELECT value FROM meta WHERE key='schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
    calls = []
    run_cells(store, [Cell(f"x={i}", "sq", {"x": i}) for i in range(4)],
              lambda k, p: calls.append(p["x"]) or square(k, p), progress=False)
    assert sorted(calls) == [1, 2, 3] and {c.key: c.result for c in store.cells()} == want
    crcs = store.conn.execute("SELECT key, result_crc FROM cells ORDER BY seq").fetchall()
    # the old row that verified was given its checksum when the store was migrated
    assert [c is None for _, c in crcs] == [False, False, False, False]
    assert store.damaged_done() == {}


def test_prediction_checksum_is_stable_across_sqlite_types():
    row = {"original": "a", "perturbed": "b", "label": True, "pred_before": 1,
           "prob_before": 1, "pred_after": "neg", "prob_after": 0.25}
    back = {**row, "label": 1, "prob_before": 1.0}  # as SQLite returns them
    assert payloads.prediction_checksum(row) == payloads.prediction_checksum(back)
    assert payloads.prediction_checksum(row) != payloads.prediction_checksum(
        {**back, "perturbed": "c"})


# ---- the commands and the TUI ----------------------------------------------------------------------


ROBUSTNESS = ["robustness", "--model", "bow", "--dataset-format", "label-text",
              "--perturbations", "identity,leet_letters", "--seeds", "0", "--steps", "20",
              "--no-plots", "--quiet"]


@pytest.fixture(scope="module")
def robustness_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("damaged")
    train, test = write_toy(tmp / "data", n_train=80, n_test=40)
    argv = [*ROBUSTNESS, "--dataset", str(train), "--test-dataset", str(test),
            "--out", str(tmp / "run")]
    assert main(argv) == 0
    with RunStore(tmp / "run", readonly=True) as store:
        results = {k: {f: v for f, v in r.items() if f not in TIMING}
                   for k, r in store.done_results()}
        robust = [c.key for c in store.cells("done") if c.params["experiment"] == "robustness"]
    return tmp / "run", argv, results, robust


def test_commands_skip_damaged_cells_by_name_and_resume_recomputes_them(robustness_run, tmp_path,
                                                                         capsys):
    import shutil

    src, argv, want, robust = robustness_run
    run = tmp_path / "run"
    shutil.copytree(src, run)
    argv = [*argv[:-1], str(run)]
    leet = next(k for k in robust if "leet_letters" in k)
    other = next(k for k in want if k not in robust)
    con = raw(run)
    con.execute("UPDATE predictions SET perturbed='\x1b]0;pwned\x07' WHERE cell=? AND idx=3",
                (leet,))
    con.execute("UPDATE cells SET result='{\"accuracy\": 1.0' WHERE key=?", (other,))
    con.close()
    capsys.readouterr()

    assert main(["failures", str(run)]) == 0
    captured = capsys.readouterr()
    [warning] = captured.err.strip().splitlines()
    assert warning.startswith("robustlab failures: warning: skipped 2 damaged cells of ")
    assert f"{leet} (prediction #3 fails its checksum)" in warning and other in warning
    assert "pwned" not in captured.out and "leet_letters" not in captured.out.split("worst")[0]

    assert main(["correlate", str(run), "--no-write"]) == 0
    err = capsys.readouterr().err
    assert f"robustlab correlate: warning: skipped 1 damaged cell of {run}: {other}" in err

    report = tmp_path / "r.md"
    assert main(["report", str(run), "--out", str(report)]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"robustlab report: warning: skipped 1 damaged cell of {run}: {other} "
                   "(result fails its checksum). Rerunning the study's command recomputes them"]
    text = report.read_text()
    assert "INCOMPLETE" in text and "1 left out (damaged stored data: " in text
    assert other.replace("|", "\\|") in text  # Markdown escapes the key's |

    assert main(argv) == 0  # the same command resumes: both cells computed again, named
    err = capsys.readouterr().err
    assert f"robustlab: cell {other}: its stored data is damaged" in err
    assert f"robustlab: cell {leet}: its stored data is damaged (prediction #3" in err
    with RunStore(run, readonly=True) as store:
        got = {k: {f: v for f, v in r.items() if f not in TIMING}
               for k, r in store.done_results()}
        assert store.damaged_done() == {}
        assert {c.key: c.attempts for c in store.cells()}[other] == 2
    assert got == want  # equal to the undamaged run
    assert json.loads((run / "summary.json").read_text())["complete"] is True


def test_a_damaged_run_row_is_one_line_for_every_reader(robustness_run, tmp_path, capsys):
    import shutil

    src, argv, _, _ = robustness_run
    run = tmp_path / "run"
    shutil.copytree(src, run)
    raw(run).execute("UPDATE run SET config=substr(config, 2)")
    capsys.readouterr()
    for args in (["correlate", str(run)], ["report", str(run), "--out", str(tmp_path / "r.html")],
                 [*argv[:-1], str(run)]):
        assert main(args) == 2, args
        err = capsys.readouterr().err.strip().splitlines()  # warnings first, then one error
        assert [ln for ln in err if ": error: " in ln] == err[-1:], err
        assert "is damaged (the run's configuration or versions fail their checksum)" in err[-1]
        assert f"mv {run / 'store.sqlite'}" in err[-1]
    assert not (tmp_path / "r.html").exists()
    from robustlab.tui import data

    summary = data.read_run(run)
    assert summary.status == "corrupt" and "To recover" in summary.error


def test_tui_loaders_skip_damaged_cells_and_say_so(tmp_path):
    from robustlab.studies.cross_domain.view import load_cross_domain
    from robustlab.studies.second_order.attack_view import load_attack
    from robustlab.studies.second_order.bias_view import load_bias
    from robustlab.tui.failures import load_failures
    from robustlab.tui.results import load_example
    from robustlab.tui.screens.generic import load_generic

    runs = {kind: getattr(tui_fixtures, kind)(tmp_path / kind)
            for kind in ("attack", "bias", "cross_domain", "learnability")}
    systems = len(load_cross_domain(runs["cross_domain"]).systems.rows)
    cases = []
    for kind, table in (("attack", "cells"), ("bias", "records"), ("cross_domain", "cells"),
                        ("learnability", "predictions")):
        path = runs[kind]
        with RunStore(path, readonly=True) as store:
            key = store.done_results()[0][0]
            if table == "records":
                key = store.conn.execute("SELECT cell FROM records LIMIT 1").fetchone()[0]
            if table == "predictions":
                key = store.conn.execute("SELECT cell FROM predictions WHERE pred_before != "
                                         "pred_after LIMIT 1").fetchone()[0]
        con = raw(path)
        if table == "cells":
            con.execute("UPDATE cells SET result=substr(result, 1, 20) WHERE key=?", (key,))
        elif table == "records":
            con.execute("UPDATE records SET payload='{\"f_soft\": 9}' WHERE cell=?", (key,))
        else:
            con.execute("UPDATE predictions SET original='x' WHERE cell=?", (key,))
        con.close()
        cases.append((kind, path, key))
    (_, attack, akey), (_, bias, bkey), (_, cross, ckey), (_, learn, lkey) = cases

    view = load_attack(attack)
    assert akey not in view.table.keys and akey in view.skipped
    assert load_example(attack, akey) is None
    bview = load_bias(bias)
    pair, k = next(pk for pk, key in bview.cells.items() if key == bkey)
    plot = bview.histogram(bias, pair, k)
    assert plot.series[0].y == [] and bkey in plot.note and "fails its checksum" in plot.note
    cview = load_cross_domain(cross)
    assert ckey in cview.skipped and len(cview.systems.rows) == systems - 1
    table = load_generic(cross)
    assert ckey not in table.keys and ckey in table.skipped
    fview = load_failures(learn)
    assert lkey in fview.skipped
    with RunStore(learn, readonly=True) as store:
        params = store.cell(lkey).params
    assert not any((e["model"], e["perturbation"], e["seed"]) == (
        params["model"], params["perturbation"], params["seed"]) for e in fview.examples)
    assert all(row[:3] != [params["model"], params["perturbation"], params["seed"]]
               for row in fview.summary.rows)
