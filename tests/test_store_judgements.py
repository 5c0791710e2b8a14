"""The store's judgements table (robustlab/runs/store/judgements.py) directly: samples kept or
replaced, verdicts, checksums, and the judged scores joined with the stored predictions (fast:
part of the test selection of ``bench/mutation.py store``)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from robustlab.runs import Cell, CellOutput, RunStore, StoreError, run_cells
from robustlab.runs.store import judgements as J


def _pred(idx: int, before: int, after: int, label: int = 1) -> dict:
    return {"idx": idx, "original": f"o{idx}", "perturbed": f"p{idx}", "label": label,
            "pred_before": before, "prob_before": 0.9, "pred_after": after, "prob_after": 0.2}


def _sample(idx: int, pert: str = "g", cell: str = "c1", label: int = 1, **kw) -> dict:
    return {"sample": f"{pert}/{cell}/{idx}", "cell": cell, "idx": idx, "perturbation": pert,
            "original": f"o{idx}", "perturbed": f"p{idx}", "label": label, **kw}


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    s = RunStore(tmp_path)
    s.init_run("test", "t", {})
    s.add_cells([Cell("c1", "eval", {}), Cell("c2", "eval", {})])
    s.claim("c1", "me")
    s.finish("c1", {}, predictions=[_pred(0, 1, 1), _pred(1, 1, 0), _pred(2, 0, 0, label=0)])
    yield s
    s.close()


def test_no_table_no_judgements(store: RunStore) -> None:
    assert store.has_judgements_table() is False
    assert store.judgements() == [] and store.judged_results() == {}


def test_samples_are_added_once_and_replaced_only_when_their_texts_change(store) -> None:
    assert store.add_samples([_sample(1), _sample(0), _sample(0, pert="a")]) == 3
    assert store.has_judgements_table() is True
    got = store.judgements()
    assert [j["sample"] for j in got] == ["a/c1/0", "g/c1/0", "g/c1/1"]  # perturbation, cell, idx
    assert got[1] == {"sample": "g/c1/0", "cell": "c1", "idx": 0, "perturbation": "g",
                      "original": "o0", "perturbed": "p0", "label": 1, "verdict": None,
                      "who": None, "at": None}
    store.set_verdicts([("g/c1/0", "consistent", "ann")])
    assert store.add_samples([_sample(0)]) == 0  # same texts: the verdict stays
    assert store.judgements()[1]["verdict"] == "consistent"
    assert store.add_samples([_sample(0, perturbed="changed")]) == 1  # stale: replaced
    row = store.judgements()[1]
    assert (row["perturbed"], row["verdict"], row["who"]) == ("changed", None, None)
    assert store.add_samples([_sample(0, original="new", perturbed="changed")]) == 1


def test_verdicts_record_who_and_when_all_or_nothing(store: RunStore) -> None:
    store.add_samples([_sample(0), _sample(1)])
    store.set_verdicts([("g/c1/0", "relabel:0", "ann"), ("g/c1/1", "drop", None)])
    a, b = store.judgements()
    assert (a["verdict"], a["who"], b["verdict"], b["who"]) == ("relabel:0", "ann", "drop", None)
    assert isinstance(a["at"], float) and a["at"] > 1.7e9
    store.set_verdicts([("g/c1/0", None, None)])  # undone: no time
    assert store.judgements()[0]["at"] is None
    with pytest.raises(StoreError, match=r": no sample 'g/c1/9' to judge$"):
        store.set_verdicts([("g/c1/1", "consistent", "x"), ("g/c1/9", "drop", "x")])
    assert store.judgements()[1]["verdict"] == "drop"  # the first change rolled back


def test_a_damaged_judgement_is_named(store: RunStore, tmp_path: Path) -> None:
    store.add_samples([_sample(0), _sample(1)])
    conn = sqlite3.connect(store.path)
    conn.execute("UPDATE judgements SET label=0 WHERE sample='g/c1/1'")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match=r"judgement 'g/c1/1' fails its checksum \(the stored "
                                         r"data is damaged\); export the other judgements and "
                                         r"judge it again$"):
        store.judgements()


def test_checksum_reads_values_as_sqlite_returns_them() -> None:
    row = _sample(3, verdict="drop", who="a", at=5)
    assert J.judgement_checksum(row) == J.judgement_checksum({**row, "idx": "3", "label": "1",
                                                              "at": 5.0})
    assert J.judgement_checksum(row) != J.judgement_checksum({**row, "label": 0})
    assert J.judgement_checksum({**row, "at": None}) != J.judgement_checksum(row)


def test_read_only_stores_refuse_writes(store: RunStore, tmp_path: Path) -> None:
    ro = RunStore(tmp_path, readonly=True)
    with pytest.raises(StoreError, match="is open read-only$"):
        ro.add_samples([_sample(0)])
    with pytest.raises(StoreError, match="is open read-only$"):
        ro.set_verdicts([])
    ro.close()


def test_judged_results_score_fully_judged_perturbations_only(store: RunStore) -> None:
    store.add_samples([_sample(0), _sample(1), _sample(2, label=0),
                       _sample(0, pert="h"), _sample(1, pert="h")])
    store.set_verdicts([("g/c1/0", "consistent", "a"), ("g/c1/1", "consistent", "a"),
                        ("g/c1/2", "drop", "a"), ("h/c1/0", "consistent", "a")])
    out = store.judged_results()
    assert out["h"] == {"judging": {"judged": 1, "sampled": 2}}
    # g: kept rows 0 (1→1) and 1 (1→0), both right before: a0 1, a1 1/2, one failure of two
    assert out["g"] == {"sampled": 3, "n": 2, "dropped": 1, "relabelled": 0, "a0": 1.0,
                        "a1": 0.5, "delta": -0.5, "failure_rate": 0.5}


def test_judged_rows_whose_texts_changed_are_stale_not_scored(store: RunStore) -> None:
    store.add_samples([_sample(0), _sample(1, perturbed="other"), _sample(5)])
    store.set_verdicts([(f"g/c1/{i}", "consistent", "a") for i in (0, 1, 5)])
    # row 1's perturbed text differs from the prediction's; row 5 has no prediction
    assert store.judged_results() == {"g": {"judging": {"judged": 1, "sampled": 3,
                                                        "stale": 2}}}
    store.add_samples([_sample(1, pert="k", original="x")])
    store.set_verdicts([("k/c1/1", "consistent", "a")])
    assert store.judged_results()["k"] == {"judging": {"judged": 0, "sampled": 1, "stale": 1}}


# ---- store parts no selected test reached in the mutation run (bench/mutation.py store) --------


def test_heartbeat_touches_running_cells_and_the_run_only(store: RunStore) -> None:
    store.claim("c2", "me")
    store.heartbeat([])  # nothing to touch: no write
    before = {r[0]: r[1] for r in store.conn.execute("SELECT key, heartbeat FROM cells")}
    store.heartbeat(["c1", "c2"])
    after = {r[0]: r[1] for r in store.conn.execute("SELECT key, heartbeat FROM cells")}
    assert after["c1"] == before["c1"]  # done: left alone
    assert after["c2"] > (before["c2"] or 0)
    run_hb = store.conn.execute("SELECT heartbeat FROM run WHERE id=1").fetchone()[0]
    assert run_hb == after["c2"]


def test_replace_config_keeps_the_run_readable(store: RunStore, tmp_path: Path) -> None:
    store.replace_config({"n": 2, "old": "spelling"})
    assert store.check() == []
    again = RunStore(tmp_path, readonly=True)
    assert again.run_info().config == {"n": 2, "old": "spelling"}
    again.close()


def test_failed_cells_are_listed_with_their_last_error_line(store: RunStore, tmp_path: Path,
                                                            capsys) -> None:
    from robustlab.runs.store import print_failed_cells

    store.claim("c2", "me")
    store.fail("c2", "Traceback\n  ...\nValueError: bad x\n")
    store.close()
    print_failed_cells(tmp_path, ["c2", "nope"], "2 cells failed:")
    assert capsys.readouterr().err.splitlines() == ["2 cells failed:", "  c2: ValueError: bad x",
                                                    "  nope: ?"]
    print_failed_cells(tmp_path, ["c2"] * 3, "h", more=" (see the store)", shown=1)
    assert capsys.readouterr().err.splitlines() == ["h", "  c2: ValueError: bad x",
                                                    "  … and 2 more (see the store)"]
    print_failed_cells(tmp_path, ["c1"], "h")
    assert capsys.readouterr().err.splitlines() == ["h", "  c1: done"]


def test_a_resumed_run_adds_the_last_invocations_wall_time(tmp_path: Path) -> None:
    s = RunStore(tmp_path)
    s.init_run("test", "t", {})
    heartbeat = s.conn.execute("SELECT heartbeat FROM run WHERE id=1").fetchone()[0]
    s.set_meta("invocation_start", repr(heartbeat - 100.0))  # it ran 100 s up to its heartbeat
    s.close()
    again = RunStore(tmp_path)
    again.init_run("test", "t", {})
    assert float(again.meta("seconds")) == pytest.approx(100.0)
    assert 100.0 <= again.elapsed() < 160.0
    again.close()


def test_an_unknown_status_is_named_in_twenty_characters(store: RunStore) -> None:
    store.conn.execute("UPDATE cells SET status=? WHERE key='c2'", ("s" * 30,))
    store.conn.commit()
    assert [c.key for c in store.cells()] == ["c1"]  # the damaged cell is skipped ...
    assert store.damaged["c2"] == f"status {'s' * 20!r} is not a cell state"  # ... and named


# ---- damage found in done cells only, named by its first fault (issue 35: store survivors) ----


def _cell_out(kind: str, params: dict) -> CellOutput:
    x = params["x"]
    return CellOutput({"y": x * x}, records=[{"i": i} for i in range(3)])


def _run_cells(path: Path, n: int = 3) -> None:
    with RunStore(path) as store:
        store.init_run("t", "t", {})
        run_cells(store, [Cell(f"x={i}", "c", {"x": i}) for i in range(n)], _cell_out,
                  progress=False)


def _raw_db(path: Path) -> sqlite3.Connection:
    """A connection that writes past the store's checksums (damage on disk)."""
    return sqlite3.connect(path / "store.sqlite", isolation_level=None)


def test_a_damaged_cell_is_named_by_its_first_damage_only(tmp_path):
    _run_cells(tmp_path)
    con = _raw_db(tmp_path)
    con.execute("UPDATE records SET payload='{\"i\": 7}' WHERE cell='x=1' AND idx IN (0, 2)")
    con.execute("UPDATE cells SET params='{\"x\": 9}' WHERE key='x=2'")
    con.execute("UPDATE records SET payload='{\"i\": 8}' WHERE cell='x=2' AND idx=1")
    con.close()
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.damaged_done() == {"x=1": "record #0 fails its checksum",
                                     "x=2": "params fails its checksum"}


def test_only_done_cells_are_checked_for_damage(tmp_path):
    _run_cells(tmp_path)
    con = _raw_db(tmp_path)
    con.execute("UPDATE records SET payload='{\"i\": 7}' WHERE cell='x=0' AND idx=0")
    con.execute("UPDATE cells SET status='failed' WHERE key='x=0'")  # records left behind
    con.close()
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.damaged_done() == {}


# ---- endpoint responses, wall time, run files (issue 35: store survivors) -------------------------


def _responses(n: int, request: str = "r1", tokens: tuple[int, int] = (0, 0)) -> list[dict]:
    return [{"key": f"k{i}", "text": f"t{i}", "answer": {"p": [0.5, i], "b": "é"},
             "request": request, "prompt_tokens": tokens[0] if i == 0 else 0,
             "completion_tokens": tokens[1] if i == 0 else 0} for i in range(n)]


def test_responses_are_read_back_by_key_and_by_text_in_batches(tmp_path: Path) -> None:
    with RunStore(tmp_path) as s:
        assert s.response_totals() == {"requests": 0, "answers": 0, "prompt_tokens": 0,
                                       "completion_tokens": 0}
        s.add_responses(_responses(600, "r1", (11, 4)))  # more than one 500-key query
        s.add_responses(_responses(2, "r2", (3, 2)))      # keys already stored keep their row
        got = s.responses([f"k{i}" for i in range(601)])
        assert len(got) == 600 and got["k599"] == {"b": "é", "p": [0.5, 599]}
        assert s.answers_by_text(["t3", "t3", "nope"]) == {"t3": {"b": "é", "p": [0.5, 3]}}
        assert s.response_totals() == {"requests": 1, "answers": 600, "prompt_tokens": 11,
                                       "completion_tokens": 4}
        assert s.responses([]) == {} and s.answers_by_text([]) == {}


def test_an_answer_over_the_limit_is_refused_and_one_at_it_is_kept(tmp_path: Path) -> None:
    from robustlab.errors import InputError
    from robustlab.runs.store.responses import MAX_ANSWER

    at_limit = "a" * (MAX_ANSWER - 2)  # its JSON adds the two quotes
    row = {"key": "k", "text": "t", "answer": at_limit, "request": "r"}
    with RunStore(tmp_path) as s:
        s.add_responses([row])
        assert s.responses(["k"]) == {"k": at_limit}
        with pytest.raises(InputError) as e:
            s.add_responses([{**row, "key": "k2", "answer": at_limit + "a"}])
        assert str(e.value) == (f"an endpoint answer of {MAX_ANSWER + 1} characters, more than "
                                f"the {MAX_ANSWER} a run stores")


def test_elapsed_adds_the_running_invocation(tmp_path: Path) -> None:
    import time

    with RunStore(tmp_path) as s:
        s.init_run("test", "t", {})
        s.set_meta("seconds", "10")
        s.set_meta("invocation_start", repr(time.time() - 50.0))
        assert 60.0 <= s.elapsed() < 120.0


def test_run_files_are_the_files_readers_rely_on(tmp_path: Path) -> None:
    from robustlab.runs.store import run_files

    for name in ("store.sqlite", "store.sqlite-wal", "summary.json", "results.jsonl",
                 "worker.json", "worker.log", "report.html", "RESULTS.JSONL"):
        (tmp_path / name).write_text("x", encoding="utf-8")
    assert [p.name for p in run_files(tmp_path)] == [
        "store.sqlite", "store.sqlite-wal", "summary.json", "results.jsonl", "worker.json",
        "worker.log"]


def test_a_judgements_checksum_is_of_its_utf8_json_text() -> None:
    """Stores written before keep verifying: the CRC is of the row's JSON with non-ASCII text
    as itself (not \\u escapes), as written here by hand."""
    from robustlab.runs import payloads

    row = {"sample": "s1", "cell": "c1", "idx": 3, "perturbation": "p", "original": "café",
           "perturbed": "cafe", "label": 1, "verdict": "ok", "who": "me", "at": 2.5}
    text = '["s1", "c1", 3, "p", "café", "cafe", 1, "ok", "me", 2.5]'
    assert J.judgement_checksum(row) == payloads.checksum(text)


def test_a_cell_whose_key_is_damaged_is_named_by_its_sequence_number(tmp_path: Path) -> None:
    _run_cells(tmp_path)
    con = _raw_db(tmp_path)
    seq = con.execute("SELECT seq FROM cells WHERE key='x=1'").fetchone()[0]
    con.execute("UPDATE cells SET key=X'00FF' WHERE key='x=1'")  # not text any more
    con.close()
    with RunStore(tmp_path, readonly=True) as ro:
        assert [c.key for c in ro.cells()] == ["x=0", "x=2"]
        assert list(ro.damaged) == [f"#{seq!r}"] and list(ro.damaged_done()) == [f"#{seq!r}"]


def test_a_damaged_event_is_shown_as_damaged_in_its_place(tmp_path: Path) -> None:
    with RunStore(tmp_path) as s:
        s.init_run("test", "t", {})
        for i in range(3):
            s.log(f"event {i}")
    con = _raw_db(tmp_path)
    con.execute("UPDATE events SET level=X'00' WHERE message='event 1'")  # not text any more
    con.close()
    with RunStore(tmp_path, readonly=True) as ro:
        events = [(e["level"], e["message"]) for e in ro.events()][-3:]
    assert events[0] == ("info", "event 0") and events[2] == ("info", "event 2")
    assert events[1][0] == "error" and events[1][1].startswith("damaged in the store (event #")


def test_a_closed_invocation_adds_no_negative_time_and_stops_counting(tmp_path: Path) -> None:
    import time

    with RunStore(tmp_path) as s:
        s.init_run("test", "t", {})
        s.set_meta("seconds", "10")
        s.set_meta("invocation_start", repr(time.time() + 1000.0))  # the clock went back
        s.set_run_status("done")
        assert float(s.meta("seconds")) == 10.0 and s.meta("invocation_start") is None
        assert s.elapsed() == 10.0


def _inputs(**roles: tuple[str, str]) -> dict:
    return {"x": 1, "inputs": {role: {"sha256": sha, "origin": origin}
                               for role, (sha, origin) in roles.items()}}


def test_a_resume_keeps_the_stored_inputs_and_refuses_changed_ones(tmp_path: Path) -> None:
    import time

    with RunStore(tmp_path) as s:
        before = time.time()
        s.init_run("test", "t", _inputs(dataset=("aa", "old.tsv")))
        assert before <= float(s.meta("invocation_start")) <= time.time()
    with RunStore(tmp_path) as s:  # a path moved, the content is the same; a role is new
        s.init_run("test", "t", _inputs(dataset=("aa", "new.tsv"), model=("mm", "m")))
        assert s.run_info().config["inputs"] == {"dataset": {"sha256": "aa", "origin": "old.tsv"},
                                                 "model": {"sha256": "mm", "origin": "m"}}
    with RunStore(tmp_path) as s, pytest.raises(StoreError) as e:
        s.init_run("test", "t", _inputs(dataset=("bb", "old.tsv")))
    assert str(e.value).startswith("input changed since this run started: dataset (old.tsv): ")
    assert str(e.value).endswith(". The finished cells were computed on the old input: restore "
                                 "it, or start a new run with another --out")


def test_quick_check_passes_a_healthy_store_and_remembers_it(tmp_path: Path) -> None:
    _run_cells(tmp_path)
    with RunStore(tmp_path, readonly=True) as ro:
        assert ro.quick_check() is None and ro.quick_check() is None


def test_a_damaged_done_cell_put_back_says_why_in_its_event(tmp_path: Path) -> None:
    _run_cells(tmp_path)
    con = _raw_db(tmp_path)
    con.execute("UPDATE records SET payload='{\"i\": 7}' WHERE cell='x=1' AND idx=0")
    con.close()
    with RunStore(tmp_path) as s:
        assert s.reset_damaged() == {"x=1": "record #0 fails its checksum"}
        assert [(e["level"], e["message"], e["cell"]) for e in s.events()][-1] == (
            "warning", "damaged stored data (record #0 fails its checksum): computing the cell "
            "again", "x=1")
        assert s.cell("x=1").status == "pending"


def test_a_claim_records_the_worker_named(tmp_path: Path) -> None:
    with RunStore(tmp_path) as s:
        s.init_run("test", "t", {})
        s.add_cells([Cell("a", "c", {}), Cell("b", "c", {})])
        assert s.claim("a", "elsewhere:7") and s.claim("b")
        from robustlab.runs.store import worker_id

        assert {c.key: c.worker for c in s.cells("running")} == {"a": "elsewhere:7",
                                                                 "b": worker_id()}


def test_a_writer_resolves_a_linked_run_directory_once_a_reader_does_not(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with RunStore(link) as s:
        assert s.run_dir == real.resolve() and s.path == real.resolve() / "store.sqlite"
        s.init_run("test", "t", {})
    ro = RunStore(link, readonly=True)
    assert ro.run_dir == link
    ro.close()


def test_a_store_swapped_for_a_link_after_the_check_is_refused_before_writing(
        tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other"
    with RunStore(other) as s:
        s.init_run("test", "t", {})
    run = tmp_path / "run"
    run.mkdir()
    (run / "store.sqlite").symlink_to(other / "store.sqlite")
    monkeypatch.setattr(RunStore, "_check_files", lambda self: None)  # the swap came after it
    s = RunStore(run)
    with pytest.raises(StoreError) as e:
        s.init_run("test", "t", {})
    assert str(e.value) == (f"{run / 'store.sqlite'} opened as {other.resolve() / 'store.sqlite'}"
                            ": a symbolic link; robustlab does not open a run store through a "
                            "link; remove it and rerun")
