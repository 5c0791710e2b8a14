"""Issue 10, sections 2–4: resume checks what it resumes, workers that die (and parents that die),
two processes on one run directory, and every bad input a clean error with nothing left behind.

The studies are tiny (bow on a 100-example demo subsample, a few cells) or toy cells
(tests/reliability_cells.py), so the whole file stays in the fast suite.
"""

from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.errors import InputError, RobustlabError
from robustlab.procs import pid_alive
from robustlab.runs import Cell, RunStore, run_cells
from robustlab.runs.store import StoreError
from robustlab.studies.learnability.study import LearnabilityStudy, clear_caches, run_study

HERE = Path(__file__).parent
CELLS = HERE / "reliability_cells.py"
TIMING = {"seconds", "train_seconds", "model_seconds", "predict_seconds"}
TINY = dict(models=("bow",), perturbations=("leet_letters",), dataset={"name": "demo"},
            p_grid=(0.5, 1.0), seeds=(0,), steps=20, max_train=100, max_test=50)
TINY_ARGS = ["learnability", "--model", "bow", "--dataset", "demo", "--perturbations",
             "leet_letters", "--p-grid", "0.5,1", "--seeds", "0", "--steps", "20",
             "--max-train", "100", "--max-test", "50", "--quiet", "--no-plots"]


def results(out: Path) -> tuple[dict, dict]:
    """Done results without timings, and records, by cell key."""
    with RunStore(out, readonly=True) as store:
        res = {k: {f: v for f, v in r.items() if f not in TIMING} for k, r in store.done_results()}
        recs = {k: store.records(k) for k in res}
    return res, recs


def env() -> dict[str, str]:
    root = str(HERE.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([root, str(HERE)])}


# ---- workers that die -----------------------------------------------------------------------------


def _squares(out: Path, n: int, executor: str, **extra) -> tuple[object, dict]:
    from reliability_cells import square_cell

    store = RunStore(out)
    store.init_run("squares", "squares", {"n": n})
    cells = [Cell(f"i={i:03d}", "squares", {"i": i, **extra}) for i in range(n)]
    report = run_cells(store, cells, square_cell, executor=executor, workers=2, progress=False)
    done = {c.key: (c.status, c.result) for c in store.cells()}
    errors = {c.key: c.error for c in store.cells("failed")}
    store.close()
    return report, {"done": done, "errors": errors}


def test_a_killed_pool_worker_is_replaced_and_the_study_completes(tmp_path, capfd):
    """kill -9 of one worker mid-study: the pool is rebuilt, its cells are retried, and the
    results equal a sequential run."""
    report, got = _squares(tmp_path / "p", 8, "process", delay=0.05,
                           kill_once=str(tmp_path / "killed"), kill_at=3)
    assert (tmp_path / "killed").exists()  # a worker really died (SIGKILL) on cell 3
    assert report.complete and report.failed == 0
    _, want = _squares(tmp_path / "s", 8, "sequential")
    assert got["done"] == want["done"]
    assert "a worker process died; restarting the pool" in capfd.readouterr().err


def test_a_cell_that_always_kills_its_worker_fails_with_the_reason(tmp_path):
    report, got = _squares(tmp_path / "p", 4, "process", always_kill=True, kill_at=1)
    assert not report.complete and set(got["errors"]) == {"i=001"}
    assert "died each time it ran this cell alone (2 times" in got["errors"]["i=001"]
    assert [k for k, (s, _) in got["done"].items() if s == "done"] == ["i=000", "i=002", "i=003"]


def _children(pid: int) -> list[int]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def test_pool_workers_exit_when_their_parent_is_killed(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, str(CELLS), str(out), "6", "30", "process", "2"],
                            env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 120
        workers: list[int] = []
        while time.time() < end:  # both workers started and running a (30 s) cell
            if (out / "store.sqlite").exists():
                try:
                    with RunStore(out, readonly=True) as store:
                        running = store.counts()["running"]
                except StoreError:  # caught between the file's creation and its schema
                    time.sleep(0.2)
                    continue
                workers = _children(proc.pid)
                if running >= 2 and len(workers) >= 2:
                    break
            time.sleep(0.2)
        assert len(workers) >= 2, "the pool never started"
        proc.kill()  # kill -9 of the parent
        proc.wait()
        end = time.time() + 30
        while any(pid_alive(w) for w in workers) and time.time() < end:
            time.sleep(0.2)
        assert not any(pid_alive(w) for w in workers)  # workers and the resource tracker gone
    finally:
        if proc.poll() is None:
            proc.kill()


def test_two_identical_commands_on_one_out_both_finish_complete(tmp_path):
    out = tmp_path / "run"
    args = [sys.executable, str(CELLS), str(out), "8", "0.3", "sequential", "1"]
    first = subprocess.Popen(args, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    end = time.time() + 60
    while not (out / "store.sqlite").exists() and time.time() < end:
        time.sleep(0.05)
    second = subprocess.Popen(args, env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    outs = [p.communicate(timeout=120) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], outs
    assert all("finished 8/8 cells" in o for o, _ in outs)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and len(summary["results"]) == 8
    with RunStore(out, readonly=True) as store:  # every cell computed exactly once
        assert {c.attempts for c in store.cells()} == {1}


SQUARES_KILLER = textwrap.dedent("""
    import sys
    from reliability_cells import square_cell
    from robustlab.runs import Cell, RunStore, run_cells
    out, n, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    store = RunStore(out)
    store.init_run("squares", "squares", {"n": n})
    cells = [Cell(f"i={i:03d}", "squares", {"i": i, "kill_once": out + ".killed", "kill_at": k})
             for i in range(n)]
    run_cells(store, cells, square_cell, executor="sequential", progress=False)
""")


@pytest.mark.parametrize("k", range(6))
def test_a_study_killed_in_cell_k_kept_every_cell_finished_before_it(k, tmp_path):
    """kill -9 of the study process inside cell k (sequential: the cell runs in the study's own
    process), at every k: the k cells that finished before it are stored done, and the resume
    runs each of them zero more times (attempts == 1); only cell k runs again. An executor that
    stored finished cells late (in batches, at the end) loses some and fails here."""
    out = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", SQUARES_KILLER, str(out), "6", str(k)],
                            env=env(), capture_output=True, text=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert (tmp_path / "run.killed").exists()  # it really died in cell k
    with RunStore(out, readonly=True) as store:
        assert [c.key for c in store.cells("done")] == [f"i={i:03d}" for i in range(k)]
        assert [c.key for c in store.cells("running")] == [f"i={k:03d}"]
    resumed = subprocess.run([sys.executable, "-c", SQUARES_KILLER, str(out), "6", str(k)],
                             env=env(), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    with RunStore(out, readonly=True) as store:
        attempts = {c.key: c.attempts for c in store.cells()}
        assert {c.key: c.result["square"] for c in store.cells("done")} == \
            {f"i={i:03d}": i * i for i in range(6)}
    assert attempts == {f"i={i:03d}": 2 if i == k else 1 for i in range(6)}


# ---- resume verifies what it resumes --------------------------------------------------------------


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> tuple[dict, dict]:
    out = tmp_path_factory.mktemp("full") / "run"
    clear_caches()
    run_study(LearnabilityStudy(**TINY), out, progress=False, plots=False)
    return results(out)


KILLER = textwrap.dedent("""
    import json, os, signal, sys
    import robustlab.studies.learnability.study as L
    out, k, study = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    real, seen = L.run_cell, []
    def killing(kind, params):
        if len(seen) == k:
            os.kill(os.getpid(), signal.SIGKILL)  # kill -9 in the middle of cell k
        seen.append(1)
        return real(kind, params)
    L.run_cell = killing
    study = L.LearnabilityStudy(**{f: tuple(v) if isinstance(v, list) else v
                                   for f, v in study.items()})
    L.run_study(study, out, progress=False, plots=False)
""")


@pytest.mark.parametrize("k", [1, 4])
def test_resume_after_a_kill_at_cell_k_equals_an_uninterrupted_run(k, uninterrupted, tmp_path):
    out = tmp_path / f"run-{k}-{time.time_ns()}"
    killed = subprocess.run([sys.executable, "-c", KILLER, str(out), str(k),
                             json.dumps(asdict(LearnabilityStudy(**TINY)))],
                            env=env(), capture_output=True, timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    with RunStore(out, readonly=True) as store:
        before = {c.key for c in store.cells("done")}
        (running,) = [c.key for c in store.cells("running")]  # cell k died in flight
        assert len(before) == k
    clear_caches()
    summary = run_study(LearnabilityStudy(**TINY), out, progress=False, plots=False)
    assert summary["complete"] is True
    assert results(out) == uninterrupted
    with RunStore(out, readonly=True) as store:  # cells done before the kill were not redone
        attempts = {c.key: c.attempts for c in store.cells()}
    assert {key for key, n in attempts.items() if n == 1} == set(attempts) - {running}
    assert before <= set(attempts) and attempts[running] == 2


def _label_text(path: Path, n: int, seed: int) -> Path:
    from robustlab.data.demo import make_demo

    texts, labels = make_demo(n, seed=seed)
    path.write_text("".join(f"{y} {t}\n" for t, y in zip(texts, labels, strict=True)))
    return path


def test_resume_refuses_changed_data_naming_the_file_and_both_fingerprints(tmp_path):
    train = _label_text(tmp_path / "t.txt", 120, 0)
    test = _label_text(tmp_path / "test.txt", 40, 1)
    study = LearnabilityStudy(models=("bow",), perturbations=("leet_letters",),
                              dataset={"path": str(train), "test_path": str(test)},
                              experiments=("standard",), seeds=(0,), steps=5)
    out = tmp_path / "run"
    first = run_study(study, out, progress=False, plots=False)
    with RunStore(out, readonly=True) as store:
        stored = store.conn.execute("SELECT value FROM meta WHERE key='input:data'").fetchone()[0]
    lines = train.read_text().splitlines()
    train.write_text("\n".join(lines[:60] + [ln.upper() for ln in lines[60:]]) + "\n")
    clear_caches()
    with pytest.raises(RobustlabError) as err:  # exit code 2 from the command line
        run_study(study, out, progress=False, plots=False)
    msg = str(err.value)
    assert f"--data {train}" in msg and "changed since this run started" in msg
    fingerprints = re.findall(r"\b[0-9a-f]{12}\b", msg)
    assert fingerprints[0] == stored and len(set(fingerprints)) == 2  # stored one, then today's
    with RunStore(out, readonly=True) as store:  # refused before anything changed
        assert store.run_info().status == "done" and len(store.done_results()) == 1
    assert json.loads((out / "summary.json").read_text())["complete"] is first["complete"]


def test_a_damaged_store_is_refused_with_how_to_recover(tmp_path):
    from robustlab.tui import data, launch

    out = tmp_path / "run"
    store = RunStore(out)
    store.init_run("squares", "squares", {}, command="robustlab learnability --out run")
    cells = [Cell(f"i={i:04d}", "squares", {"i": i}) for i in range(400)]
    run_cells(store, cells, lambda k, p: {"i": p["i"], "pad": "x" * 200}, progress=False)
    store.set_run_status("done")
    store.close()
    db = out / "store.sqlite"
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    size = db.stat().st_size
    with open(db, "r+b") as f:  # 4 KiB of random bytes in the middle, page-aligned
        f.seek((size // 2) // 4096 * 4096)
        f.write(random.Random(0).randbytes(4096))
    with pytest.raises(StoreError, match=r"damaged .*quick_check.*To recover: move it aside"):
        RunStore(out).init_run("squares", "squares", {})
    run = data.read_run(out)
    assert run.status == "corrupt" and "To recover" in run.error
    with pytest.raises(InputError, match="refusing to resume .*damaged"):
        launch.resume_plan(out)


def test_seconds_accumulate_over_invocations(tmp_path):
    store = RunStore(tmp_path)
    store.init_run("t", "t", {})
    store.conn.execute("UPDATE meta SET value=? WHERE key='invocation_start'",
                       (repr(time.time() - 100),))
    store.set_run_status("interrupted")  # Ctrl-C: the invocation is closed with its 100 s
    store.init_run("t", "t", {})  # resume
    assert 100 <= store.elapsed() < 200
    # a killed invocation (never closed) counts up to its last heartbeat
    now = time.time()
    store.conn.execute("UPDATE meta SET value=? WHERE key='invocation_start'", (repr(now - 50),))
    store.conn.execute("UPDATE run SET heartbeat=?", (now,))
    store.close()
    store = RunStore(tmp_path)
    store.init_run("t", "t", {})
    assert 150 <= store.elapsed() < 250


# ---- bad inputs: one clean line, nothing left behind ---------------------------------------------


def run_cli(args: list[str], capsys) -> tuple[int, str]:
    rc = main(args)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


def test_invalid_utf8_names_the_line_and_asks_for_encoding(tmp_path, capsys):
    f = tmp_path / "d.txt"
    f.write_bytes("1 caf\u00e9 is good\n0 bad\n".encode() + "1 na\u00efve\n".encode("cp1252"))
    rc, err = run_cli([*TINY_ARGS[:3], "--data", str(f), *TINY_ARGS[5:], "--out",
                       str(tmp_path / "r")], capsys)
    assert rc == 2 and "line 3" in err and "--encoding cp1252" in err
    assert not (tmp_path / "r").exists()
    from robustlab.data.datasets import load_dataset

    ds = load_dataset(str(f), encoding="cp1252")  # the explicit encoding still works
    assert ds.texts[2] == "na\u00efve"


def test_tsv_header_with_string_labels_is_detected(tmp_path):
    from robustlab.data.datasets import load_dataset

    f = tmp_path / "d.tsv"
    f.write_text("sentence\tlabel\ngood film\tpositive\nbad film\tnegative\nfine\tpositive\n")
    for kw in ({}, {"text_column": 0, "label_column": 1}):
        ds = load_dataset(str(f), validate=False, **kw)
        assert ds.texts == ["good film", "bad film", "fine"] and ds.labels == [1, 0, 1]
        assert ds.label_names == ["negative", "positive"]  # no third class "label"
    g = tmp_path / "noheader.tsv"
    g.write_text("great\tpositive\nawful\tnegative\n")
    kw = {"label_column": 1, "validate": False}
    assert load_dataset(str(g), **kw).texts == ["great", "awful"]  # no usual name: data
    assert load_dataset(str(g), header=True, **kw).texts == ["awful"]  # --header forces it


def test_learnability_header_flag_is_stored_in_the_command(tmp_path):
    from robustlab.cli import build_parser
    from robustlab.options import dataset_spec
    from robustlab.runs.study import command_line
    from robustlab.studies.learnability.command import study_from_args

    args = build_parser().parse_args([*TINY_ARGS[:3], "--data", "x.tsv", "--no-header",
                                      *TINY_ARGS[5:], "--out", str(tmp_path / "r")])
    assert dataset_spec(args)["header"] is False
    line = command_line(study_from_args(args), tmp_path / "r")
    assert "--no-header" in line.split()


@pytest.mark.parametrize("grid,seeds,message", [
    ("0.1,0.1000001", "0", "same probability to the 6 significant digits"),
    ("0.5,1", "-1", "seeds: -1 is out of range"),
    ("0.5,1", "0,123456789012345678901", "out of range; seeds are integers 0 <= seed < 2\\*\\*32"),
])
def test_bad_grid_and_seeds_are_refused_before_anything_is_created(tmp_path, capsys, grid, seeds,
                                                                    message):
    out = tmp_path / "r"
    args = list(TINY_ARGS)
    args[args.index("--p-grid") + 1], args[args.index("--seeds") + 1] = grid, seeds
    rc, err = run_cli([*args, "--out", str(out)], capsys)
    assert rc == 2 and re.search(message, err) and not out.exists()


def test_single_seed_options_are_range_checked_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train", "--model", "bow", "--data", "demo", "--seed", "-1", "--out", "m"])
    assert exc.value.code == 2 and "out of range" in capsys.readouterr().err


def test_missing_or_invalid_patch_table_leaves_no_store(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    for table, message in ((tmp_path / "nope.json", "no such file"),
                           (bad, "must be a JSON object")):
        out = tmp_path / "r"
        rc, err = run_cli(["attack", "--recipe", "so-beam", "--model", "hf:stand-in", "--dataset",
                           "demo", "--patch-table", str(table), "--out", str(out)], capsys)
        assert rc == 2 and message in err and "{{" not in err
        assert not out.exists()


def test_unusable_out_dirs_are_one_line_errors(tmp_path, capsys):
    a_file = tmp_path / "file"
    a_file.write_text("keep me")
    for out, message in ((a_file, "exists and is not a directory"),
                         (a_file / "sub" / "r", "is a file, not a directory")):
        rc, err = run_cli([*TINY_ARGS, "--out", str(out)], capsys)
        assert rc == 2 and message in err and len(err.strip().splitlines()) == 1
        rc, err = run_cli(["train", "--model", "bow", "--data", "demo", "--out", str(out)],
                          capsys)
        assert rc == 2 and message in err
    assert a_file.read_text() == "keep me"


def test_a_read_only_file_system_is_a_one_line_error(tmp_path):
    if not shutil.which("unshare"):
        pytest.skip("needs unshare(1) to mount a read-only file system without root")
    ro = tmp_path / "ro"
    ro.mkdir()
    script = (f"mount --bind {ro} {ro} && mount -o remount,bind,ro {ro} && "
              f"{sys.executable} -m robustlab {' '.join(TINY_ARGS)} --out {ro}/r; echo rc=$?; "
              f"{sys.executable} -m robustlab train --model bow --data demo --out {ro}/m; "
              "echo rc=$?")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env(), capture_output=True,
                          text=True, timeout=300)
    if "rc=" not in proc.stdout:
        pytest.skip(f"cannot make a read-only mount here: {proc.stderr.strip()[:200]}")
    assert proc.stdout.split() == ["rc=2", "rc=2"], proc.stderr[-2000:]
    assert proc.stderr.count("read-only file system") == 2 and "Traceback" not in proc.stderr


def test_a_full_disk_mid_run_is_one_line_and_loses_nothing(tmp_path):
    """RLIMIT_FSIZE makes writes past 96 KiB fail (EFBIG, as ENOSPC would): the run stops with
    one line; a rerun without the limit resumes and completes."""
    out = tmp_path / "r"

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (96 * 1024, 96 * 1024))

    cmd = [sys.executable, "-m", "robustlab", *TINY_ARGS, "--out", str(out)]
    full = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300,
                          preexec_fn=limit)
    assert full.returncode == 1 and "Traceback" not in full.stderr, full.stderr[-3000:]
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith("robustlab learnability: error: ") and "finished results are kept" in last
    with RunStore(out, readonly=True) as store:
        kept = {c.key for c in store.cells("done")}
    again = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads((out / "summary.json").read_text())["complete"] is True
    with RunStore(out, readonly=True) as store:  # what was finished before the disk filled stays
        assert all(store.cell(k).attempts == 1 for k in kept)


def test_perturb_refuses_a_negative_column(tmp_path, capsys):
    src = tmp_path / "d.tsv"
    src.write_text("text\tlabel\ngood film\t1\n")
    out = tmp_path / "o.tsv"
    rc, err = run_cli(["perturb", "-p", "leet_letters", "-i", str(src), "-o", str(out),
                       "--column", "-1"], capsys)
    assert rc == 2 and "negative" in err and "0-based" in err and not out.exists()


def test_symmetric_perturbations_warn(capsys):
    from robustlab.studies.learnability.study import _warn_symmetric

    assert _warn_symmetric(["negation", "leet_letters"]) == ["negation"]
    err = capsys.readouterr().err
    assert "warning: perturbation 'negation' is symmetric" in err and "leet" not in err


def test_saved_models_get_ordinary_file_permissions(tmp_path):
    from robustlab.models.registry import make_model
    from robustlab.outputs import atomic_dir

    old = os.umask(0o022)
    try:
        model = make_model("bow", seed=0)
        model.fit(["good film", "bad film", "great", "awful"], [1, 0, 1, 0], steps=1)
        with atomic_dir(tmp_path / "m") as d:
            model.save(d)
    finally:
        os.umask(old)
    modes = {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "m").iterdir()}
    assert modes["model.safetensors"] == 0o644 and set(modes.values()) == {0o644}
    assert (tmp_path / "m").stat().st_mode & 0o777 == 0o755
