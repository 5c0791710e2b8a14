"""The run store contract: atomic cells, resume, claims, stale workers, schema."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from robustlab.runs import Cell, CellOutput, RunStore, StoreError, run_cells
from robustlab.runs.store import SCHEMA_VERSION


def square(kind, params):
    if params["x"] == 3 and params.get("boom"):
        raise RuntimeError("planted failure")
    return CellOutput({"y": params["x"] ** 2}, records=[{"i": i} for i in range(params["x"])])


def cells(n, **extra):
    return [Cell(key=f"x={i}", kind="sq", params={"x": i, **extra}) for i in range(n)]


def test_run_and_resume(tmp_path):
    store = RunStore(tmp_path)
    store.init_run("test", "t", {"n": 5})
    rep = run_cells(store, cells(5), square, progress=False)
    assert rep.done == 5 and rep.complete
    assert [c.result["y"] for c in store.cells()] == [0, 1, 4, 9, 16]
    assert len(store.records("x=4")) == 4
    calls = []
    rep2 = run_cells(store, cells(5), lambda k, p: calls.append(p) or square(k, p), progress=False)
    assert calls == [] and rep2.skipped == 5
    assert store.check() == []


def test_done_results_in_study_order(tmp_path):
    store = RunStore(tmp_path)
    run_cells(store, cells(5, boom=True), square, progress=False)
    assert store.done_results() == [("x=0", {"y": 0}), ("x=1", {"y": 1}), ("x=2", {"y": 4}),
                                    ("x=4", {"y": 16})]
    assert store.done_results(limit=2) == [("x=0", {"y": 0}), ("x=1", {"y": 1})]


def test_failures_are_results_and_rerun(tmp_path):
    store = RunStore(tmp_path)
    store.init_run("test", "t", {})
    rep = run_cells(store, cells(5, boom=True), square, progress=False)
    assert rep.failed == 1 and rep.done == 4 and not rep.complete
    failed = store.cells("failed")
    assert failed[0].key == "x=3" and "planted failure" in failed[0].error
    assert store.records("x=3") == []  # nothing of a failed cell is stored
    rep = run_cells(store, [Cell(c.key, c.kind, {"x": c.params["x"]}) for c in cells(5, boom=True)],
                    square, progress=False)
    assert rep.complete and store.cell("x=3").attempts == 2


def test_claim_is_exclusive(tmp_path):
    a, b = RunStore(tmp_path), RunStore(tmp_path)
    a.add_cells(cells(1))
    assert a.claim("x=0", "A") is True
    assert b.claim("x=0", "B") is False


def test_concurrent_writers(tmp_path):
    RunStore(tmp_path).add_cells(cells(200))
    wins = []

    def worker(name):
        s = RunStore(tmp_path)
        for c in cells(200):
            if s.claim(c.key, name):
                s.finish(c.key, {"by": name})
                wins.append(c.key)
        s.close()

    ts = [threading.Thread(target=worker, args=(f"w{i}",)) for i in range(4)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert sorted(wins) == sorted(c.key for c in cells(200))  # each exactly once
    assert RunStore(tmp_path).counts()["done"] == 200


def test_stale_cells_fail(tmp_path):
    s = RunStore(tmp_path)
    s.add_cells(cells(2))
    s.claim("x=0", "elsewhere:1")
    assert s.fail_stale(timeout=-1) == ["x=0"]
    assert "stalled" in s.cell("x=0").error


def test_finish_is_idempotent_for_done(tmp_path):
    s = RunStore(tmp_path)
    s.add_cells(cells(1))
    s.claim("x=0")
    s.finish("x=0", {"v": 1})
    s.finish("x=0", {"v": 2})
    assert s.cell("x=0").result == {"v": 1}


def test_other_config_refused(tmp_path):
    RunStore(tmp_path).init_run("test", "t", {"a": 1})
    with pytest.raises(StoreError, match="different"):
        RunStore(tmp_path).init_run("test", "t", {"a": 2})


def test_corrupt_and_missing_store(tmp_path):
    with pytest.raises(StoreError, match="no run store"):
        RunStore(tmp_path / "nope", readonly=True)
    (tmp_path / "store.sqlite").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a readable"):
        RunStore(tmp_path).cells()


def test_newer_schema_refused(tmp_path):
    RunStore(tmp_path).add_cells(cells(1))
    con = sqlite3.connect(tmp_path / "store.sqlite")
    con.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="newer robustlab"):
        RunStore(tmp_path).cells()
    assert len(RunStore(tmp_path, readonly=True).cells()) == 1  # still readable


@pytest.mark.parametrize("executor", ["process", "ray"])
def test_parallel_backends_store_like_sequential(tmp_path, executor):
    if executor == "ray":
        ray = pytest.importorskip("ray")
        from robustlab.runs.ray_backend import start_local

        # lean, and retried once when Ray's fixed startup waits run out on a busy machine; the
        # cell function lives in this test module: Ray's workers need its folder on the path
        start_local(2, {"env_vars": {"PYTHONPATH": str(Path(__file__).parent)}})
    try:
        store = RunStore(tmp_path)
        rep = run_cells(store, cells(5, boom=True), square, executor=executor, workers=2,
                        progress=False)
        assert rep.done == 4 and rep.failed == 1
        assert {c.key: c.result["y"] for c in store.cells("done")} == {
            "x=0": 0, "x=1": 1, "x=2": 4, "x=4": 16}
        assert len(store.records("x=4")) == 4 and "planted failure" in store.cell("x=3").error
    finally:
        if executor == "ray":
            ray.shutdown()
