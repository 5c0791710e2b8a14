"""The executor's loop and process backend observed in this process (issue 35: the survivors of
``bench/mutation.py executor``): waiting for a cell another process holds (the wait's clock is
injected, so the test sees the wait instead of sleeping), the progress lines, Ctrl-C, the
heartbeat, the pool's parent watch and its close. Waits are on events with generous ceilings."""

from __future__ import annotations

import concurrent.futures as cf
import os
import sys
import threading
import time
import types
from pathlib import Path

import pytest

from robustlab.runs import Cell, RunStore
from robustlab.runs import executor as E
from robustlab.runs.store import worker_id


def _store(tmp_path: Path, n: int) -> tuple[RunStore, list[Cell]]:
    store = RunStore(tmp_path)
    store.init_run("test", "t", {})
    cells = [Cell(f"x={i}", "c", {"x": i}) for i in range(n)]
    return store, cells


def _square(kind: str, params: dict) -> dict:
    return {"y": params["x"] ** 2}


def test_a_cell_another_process_holds_is_waited_for_once_then_counted(tmp_path, monkeypatch,
                                                                       capsys):
    store, cells = _store(tmp_path, 3)
    store.add_cells(cells)
    assert store.claim("x=1", "otherhost:123")  # another host: never reclaimed as dead
    slept: list[float] = []

    def sleep(seconds):  # the other process finishes its cell while this one waits
        slept.append(seconds)
        other = RunStore(tmp_path)
        other.finish("x=1", {"y": 1})
        other.close()

    monkeypatch.setattr(E, "time", types.SimpleNamespace(perf_counter=time.perf_counter,
                                                         sleep=sleep))
    ran: list[str] = []

    def fn(kind, params):
        ran.append(f"x={params['x']}")
        return _square(kind, params)

    report = E.run_cells(store, cells, fn, progress=False)
    assert ran == ["x=0", "x=2"] and slept == [E.WAIT_SECONDS]
    assert report.complete and (report.done, report.failed, report.skipped) == (3, 0, 0)
    out = capsys.readouterr()
    assert out.out == "" and out.err.splitlines() == [
        "robustlab: 1 cell(s) are being computed by another process (otherhost:123) on this run "
        "directory; waiting for them"]
    store.close()


def test_the_wait_is_announced_once_however_many_times_it_looks(tmp_path, monkeypatch, capsys):
    store, cells = _store(tmp_path, 2)
    store.add_cells(cells)
    assert store.claim("x=0", "otherhost:1") and store.claim("x=1", "otherhost:2")
    slept: list[float] = []

    def sleep(seconds):
        slept.append(seconds)
        if len(slept) == 3:  # the third look finds both done
            other = RunStore(tmp_path)
            other.finish("x=0", {"y": 0})
            other.finish("x=1", {"y": 1})
            other.close()

    monkeypatch.setattr(E, "time", types.SimpleNamespace(perf_counter=time.perf_counter,
                                                         sleep=sleep))
    report = E.run_cells(store, cells, _square, progress=False)
    assert slept == [E.WAIT_SECONDS] * 3 and report.complete and report.skipped == 0
    assert capsys.readouterr().err.splitlines() == [
        "robustlab: 2 cell(s) are being computed by another process (otherhost:1, otherhost:2) "
        "on this run directory; waiting for them"]
    store.close()


def test_cells_are_claimed_in_this_process_name_and_reported_to_on_result(tmp_path):
    store, cells = _store(tmp_path, 3)
    seen_worker: list[str | None] = []
    got: list[tuple[str, bool]] = []

    def fn(kind, params):
        other = RunStore(tmp_path)
        [running] = other.cells("running")
        seen_worker.append(running.worker)
        other.close()
        if params["x"] == 1:
            raise ValueError("boom")
        return _square(kind, params)

    report = E.run_cells(store, cells, fn, progress=False,
                         on_result=lambda cell, ok, payload: got.append((cell.key, ok)))
    assert seen_worker == [worker_id()] * 3
    assert got == [("x=0", True), ("x=1", False), ("x=2", True)]
    assert (report.total, report.done, report.failed, report.complete) == (3, 2, 1, False)
    store.close()


def test_progress_lines_count_cells_and_failures_only_when_asked(tmp_path, capsys):
    store, cells = _store(tmp_path, 4)

    def fn(kind, params):
        if params["x"] in (1, 2):
            raise ValueError(f"boom {params['x']}")
        return _square(kind, params)

    E.run_cells(store, cells, fn, desc="demo")
    err = capsys.readouterr().err.splitlines()
    assert err == ["cell x=1 failed: ValueError: boom 1", "cell x=2 failed: ValueError: boom 2",
                   "demo: 4/4 cells (100%), failed=2"]
    store.close()
    store, cells = _store(tmp_path / "quiet", 2)
    E.run_cells(store, cells, fn, progress=False)
    assert capsys.readouterr().err == ""
    store.close()


def test_a_resumed_run_starts_its_progress_at_the_cells_done(tmp_path, capsys):
    store, cells = _store(tmp_path, 3)
    E.run_cells(store, cells[:2], _square, progress=False)
    report = E.run_cells(store, cells, _square, desc="demo")
    assert report.skipped == 2 and report.done == 3
    assert capsys.readouterr().err.splitlines() == ["demo: 3/3 cells (100%)"]
    store.close()


def test_one_worker_by_default_and_the_report_times_the_call(tmp_path, monkeypatch):
    store, cells = _store(tmp_path, 2)
    asked: list[tuple] = []
    real = E.make_backend

    def backend(name, fn, workers=1, **options):
        asked.append((name, workers, options))
        return real(name, fn, workers, **options)

    monkeypatch.setattr(E, "make_backend", backend)
    t0 = time.perf_counter()
    report = E.run_cells(store, cells, _square, progress=False)
    elapsed = time.perf_counter() - t0
    assert asked == [("sequential", 1, {})]
    assert 0 <= report.seconds <= elapsed
    store.close()


def test_ctrl_c_puts_the_cell_back_and_marks_the_run_interrupted(tmp_path):
    store, cells = _store(tmp_path, 3)

    def fn(kind, params):
        if params["x"] == 1:
            raise KeyboardInterrupt
        return _square(kind, params)

    with pytest.raises(KeyboardInterrupt):
        E.run_cells(store, cells, fn, progress=False)
    info = store.run_info()
    assert info.status == "interrupted"
    assert info.error == "interrupted by the user (Ctrl-C); rerun to resume"
    assert [c.key for c in store.cells("done")] == ["x=0"]
    assert [c.key for c in store.cells("pending")] == ["x=1", "x=2"]
    store.close()


def test_the_heartbeat_touches_the_cells_in_flight_until_stopped(tmp_path, monkeypatch):
    beats: list[list[str]] = []
    beat, closed = threading.Event(), threading.Event()

    class Store:
        def __init__(self, path):
            assert Path(path) == tmp_path

        def heartbeat(self, keys):
            beats.append(keys)
            beat.set()

        def close(self):
            closed.set()

    monkeypatch.setattr(E, "RunStore", Store)
    monkeypatch.setattr(E, "HEARTBEAT_SECONDS", 0.01)
    inflight = {"x=3"}
    hb = E._Heartbeat(tmp_path, inflight)
    assert hb.daemon
    hb.start()
    assert beat.wait(60), "no heartbeat"
    hb.stop.set()
    hb.join(60)
    assert not hb.is_alive() and closed.is_set()
    assert beats and all(b == ["x=3"] for b in beats)


class _Stop(Exception):
    """Ends a watch thread in place of the process exit it would make."""


def _watch(monkeypatch, parent: int) -> threading.Thread:
    """Start the pool workers' parent watch here, its thread's end (``_Stop``) not reported."""
    monkeypatch.setattr(threading, "excepthook",
                        lambda args: None if args.exc_type is _Stop else print(args))
    started: list[threading.Thread] = []

    class Thread(threading.Thread):
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(E, "threading", types.SimpleNamespace(Thread=Thread))
    E._watch_parent(parent)
    [thread] = started
    assert thread.daemon and thread.name == "robustlab-parent-watch"
    return thread


def test_a_pool_worker_exits_with_70_when_its_parent_is_gone(monkeypatch):
    codes: list[object] = []

    def fake_exit(code):
        codes.append(code)
        raise _Stop

    monkeypatch.setattr(os, "_exit", fake_exit)
    thread = _watch(monkeypatch, os.getppid() + 1_000_000)  # a parent pid that is not ours
    thread.join(60)
    assert not thread.is_alive() and codes == [70]


def test_a_pool_worker_whose_parent_lives_keeps_watching(monkeypatch):
    looks: list[float] = []
    exits: list[object] = []

    def sleep(seconds):
        looks.append(seconds)
        if len(looks) == 3:
            raise _Stop

    monkeypatch.setattr(E, "time", types.SimpleNamespace(sleep=sleep))
    monkeypatch.setattr(os, "_exit", exits.append)
    thread = _watch(monkeypatch, os.getppid())
    thread.join(60)
    assert not thread.is_alive() and looks == [0.5, 0.5, 0.5] and exits == []


# ---- the process backend (a real spawn pool of one worker) -----------------------------------


def _worker_threads(kind: str, params: dict) -> dict:
    return {"threads": sorted(t.name for t in threading.enumerate())}


def _held(kind: str, params: dict) -> dict:
    """Waits for the test's hold file (ceiling: a cell never released ends on its own)."""
    hold = Path(params["hold"])
    deadline = time.monotonic() + 30
    while not hold.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return {"released": hold.exists()}


def test_the_process_backend_watches_its_parent_waits_for_the_first_and_cancels_on_close(
        tmp_path):
    hold = tmp_path / "hold"
    backend = E._Processes(_worker_threads, 1)
    try:
        ok, out, _ = backend._submit(Cell("t", "c", {})).result(timeout=300)
        assert ok and "robustlab-parent-watch" in out.result["threads"]
        backend.fn = _held
        quick = backend.pool.submit(E.call_cell, _worker_threads, "c", {})
        blocked = backend._submit(Cell("h", "c", {"hold": str(hold)}))
        # the first finished comes back while the other still waits for its hold file
        assert backend._wait([quick, blocked]) == [quick]
        assert not blocked.done() and not hold.exists()
        queued = [backend._submit(Cell(f"q{i}", "c", {"hold": str(hold)})) for i in range(4)]
    finally:
        backend.close()  # returns at once; the pool's own thread cancels what is queued
    # ceiling 20 s: without the cancel, the last cell waits behind the held one (30 s)
    cf.wait([queued[-1]], timeout=20)
    assert queued[-1].cancelled()
    hold.touch()
    assert blocked.result(timeout=300)[1].result == {"released": True}


# ---- the main-guard check, run in this process (a script's top level run under a stand-in
# ``__main__``: the subprocess tests of test_executor_units.py check the real thing) ----------


def _as_main(monkeypatch, tmp_path: Path, src: str, *, on_disk: str | bytes | None = None,
             spec: str | None = None, file: bool = True) -> str:
    """Run ``src`` as the main script ``study.py`` (``on_disk``: what the file holds instead)
    and return what its ``refuse_unguarded_main()`` calls said."""
    path = tmp_path / "study.py"
    text = src if on_disk is None else on_disk
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    main = types.ModuleType("__main__")
    if file:
        main.__file__ = str(path)
    main.__spec__ = types.SimpleNamespace(name=spec) if spec else None
    said: list[str] = []
    main.check = lambda: E.refuse_unguarded_main()
    main.said = said
    monkeypatch.setitem(sys.modules, "__main__", main)
    try:
        exec(compile(src, str(path), "exec"), vars(main))  # noqa: S102 (the test's own text)
    except E.InputError as e:
        said.append(str(e))
    return "; ".join(said) or "passed"


def _refused(line: int) -> str:
    return ("--executor process: worker processes re-import study.py, whose line "
            f"{line} starts the study outside `if __name__ == \"__main__\":`; put that call "
            "under the guard (or use --executor sequential)")


UNGUARDED = "x = 1\n\ncheck()\n"


def test_an_unguarded_main_script_is_refused_in_process(monkeypatch, tmp_path):
    assert _as_main(monkeypatch, tmp_path, UNGUARDED) == _refused(3)
    # a call inside a function: the top-level statement that runs it is named
    src = "def study():\n    check()\n\n\nstudy()\n"
    assert _as_main(monkeypatch, tmp_path, src) == _refused(5)
    # a statement over several lines: the line running now, within it
    src = "y = [\n    0,\n    check(),\n]\n"
    assert _as_main(monkeypatch, tmp_path, src) == _refused(3)
    # a package that is not robustlab run with -m is checked like a script
    assert _as_main(monkeypatch, tmp_path, UNGUARDED, spec="tool.__main__") == _refused(3)


def test_what_the_main_guard_check_lets_pass_in_process(monkeypatch, tmp_path):
    guarded = "def study():\n    check()\n\nif __name__ == '__main__':\n    study()\n"
    assert _as_main(monkeypatch, tmp_path, guarded) == "passed"
    assert _as_main(monkeypatch, tmp_path, UNGUARDED, spec="robustlab.__main__") == "passed"
    assert _as_main(monkeypatch, tmp_path, UNGUARDED, file=False) == "passed"  # python -c
    # the script's file cannot be parsed (or decoded): nothing to say
    assert _as_main(monkeypatch, tmp_path, UNGUARDED, on_disk="x = (\n") == "passed"
    assert _as_main(monkeypatch, tmp_path, UNGUARDED, on_disk=b"\xff\xfe") == "passed"
    # called from code that is not the main script's top level (an imported module): passes
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    sys.modules["__main__"].__file__ = str(tmp_path / "study.py")
    E.refuse_unguarded_main()


def test_backends_take_one_worker_by_default_and_ray_is_imported_on_use(monkeypatch):
    backend = E.make_backend("process", _square)
    try:
        assert type(backend).__name__ == "_Processes" and backend.workers == 1
    finally:
        backend.close()
    assert E.make_backend("process", _square, 0).workers == 1  # at least one
    made: list[tuple] = []

    class RayBackend:
        def __init__(self, fn, workers, **options):
            made.append((fn, workers, options))

    monkeypatch.setitem(sys.modules, "robustlab.runs.ray_backend",
                        types.SimpleNamespace(RayBackend=RayBackend))
    assert isinstance(E.make_backend("ray", _square, address="auto"), RayBackend)
    assert made == [(_square, 1, {"address": "auto"})]


def test_the_default_progress_names_cells(tmp_path, capsys):
    store, cells = _store(tmp_path, 2)
    E.run_cells(store, cells, _square)
    assert capsys.readouterr().err.splitlines() == ["cells: 2/2 cells (100%)"]
    store.close()
