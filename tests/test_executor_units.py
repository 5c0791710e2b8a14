"""The executor's small parts (robustlab/runs/executor.py) one by one: the main-guard check, the
backend names, the report, dead workers' cells, cells held elsewhere and the damaged-cell lines
(fast: part of the test selection of ``bench/mutation.py executor``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from robustlab.errors import InputError
from robustlab.runs import Cell, RunStore
from robustlab.runs import executor as E
from robustlab.runs.store import worker_id


@pytest.mark.parametrize("src,guard", [
    ('if __name__ == "__main__":\n    pass', True),
    ('if "__main__" == __name__:\n    pass', True),
    ('if __name__ != "__main__":\n    pass', False),
    ('if name == "__main__":\n    pass', False),
    ('if __name__ == "main":\n    pass', False),
    ('if __name__ == "__main__" == __name__:\n    pass', False),
    ('if __name__:\n    pass', False),
    ("x = 1", False),
    ('while __name__ == "__main__":\n    break', False),
])
def test_main_guard_table(src: str, guard: bool) -> None:
    assert E._is_main_guard(ast.parse(src).body[0]) is guard


def _script(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    path = tmp_path / "study.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_an_unguarded_script_is_refused_naming_its_line(tmp_path: Path) -> None:
    res = _script(tmp_path, """\
        from robustlab.errors import InputError
        from robustlab.runs.executor import refuse_unguarded_main

        try:
            refuse_unguarded_main()
        except InputError as e:
            print(e)
        else:
            print("passed")
        """)
    assert res.stdout.strip() == (
        "--executor process: worker processes re-import study.py, whose line 5 starts the "
        "study outside `if __name__ == \"__main__\":`; put that call under the guard (or use "
        "--executor sequential)"), res.stderr


def test_a_guarded_script_and_python_c_pass(tmp_path: Path) -> None:
    res = _script(tmp_path, """\
        from robustlab.runs.executor import refuse_unguarded_main

        def main():
            refuse_unguarded_main()
            print("passed")

        if __name__ == "__main__":
            main()
        """)
    assert res.stdout.strip() == "passed", res.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    res = subprocess.run([sys.executable, "-c", "from robustlab.runs.executor import "
                          "refuse_unguarded_main as r; r(); print('passed')"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert res.stdout.strip() == "passed", res.stderr


def test_backends_by_name() -> None:
    fn = lambda kind, params: {}  # noqa: E731
    assert type(E.make_backend("sequential", fn)).__name__ == "_Sequential"
    with pytest.raises(InputError, match=r"^unknown executor 'threads'; choose one of "
                                         r"sequential, process, ray$"):
        E.make_backend("threads", fn)


def test_report_is_complete_only_when_every_cell_is_done() -> None:
    assert E.RunReport(total=3, done=3, failed=0, skipped=1, seconds=0.1).complete is True
    assert E.RunReport(total=3, done=2, failed=1, skipped=0, seconds=0.1).complete is False


def _store(tmp_path: Path, n: int) -> RunStore:
    store = RunStore(tmp_path)
    store.init_run("test", "t", {})
    store.add_cells([Cell(f"x={i}", "c", {"x": i}) for i in range(n)])
    return store


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_cells_of_dead_processes_on_this_host_go_back_to_pending(tmp_path: Path) -> None:
    store = _store(tmp_path, 5)
    host = worker_id().split(":")[0]
    owners = {"x=0": f"{host}:{_dead_pid()}",      # dead: released
              "x=1": f"{host}:{os.getpid()}",       # ourselves: not in flight, released
              "x=2": f"{host}:{os.getppid()}",      # alive: kept
              "x=3": f"elsewhere:{_dead_pid()}",    # another host: cannot tell, kept
              "x=4": f"{host}:notapid"}             # not a pid: kept
    for key, who in owners.items():
        assert store.claim(key, who)
    E._reclaim_dead(store)
    assert [c.key for c in store.cells("pending")] == ["x=0", "x=1"]
    assert [c.key for c in store.cells("running")] == ["x=2", "x=3", "x=4"]
    store.close()


def test_held_elsewhere_lists_this_studys_cells_other_workers_run(tmp_path: Path) -> None:
    store = _store(tmp_path, 4)
    store.claim("x=0", "me:1")
    store.claim("x=1", "other:2")
    store.claim("x=2", "other:3")
    assert E._held_elsewhere(store, {"x=0", "x=1", "x=3"}, "me:1") == {"x=1": "other:2"}
    assert E._held_elsewhere(store, {"x=0"}, "me:1") == {}
    store.close()


def test_damaged_cells_are_announced_one_line_each_then_counted(capsys) -> None:
    E._announce_damaged({f"k{i}": f"why {i}" for i in range(7)})
    err = capsys.readouterr().err.splitlines()
    assert err == [f"robustlab: cell k{i}: its stored data is damaged (why {i}); computing it "
                   "again" for i in range(5)] + [
        "robustlab: … and 2 more damaged cells computed again"]
    E._announce_damaged({"a": "x", "b": "y"}, shown=2)
    assert len(capsys.readouterr().err.splitlines()) == 2
    E._announce_damaged({})
    assert capsys.readouterr().err == ""


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.init_run("test", "t", {})
    with pytest.raises(ValueError, match="^duplicate cell keys in a study$"):
        E.run_cells(store, [Cell("k", "c", {"x": 1}), Cell("k", "c", {"x": 2})],
                    lambda k, p: {}, progress=False)
    store.close()
