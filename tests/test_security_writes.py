"""Issue 21 items 4, 7, 8, 10 and two of item 12: where robustlab writes, and what it reads.

Each case plants something harmless (a link to a victim file, another run's store, a FIFO, a
device, stale temporary files) and asserts that the side effect did not happen: the victim's
bytes are unchanged, the FIFO is still a FIFO, the input is intact. Exit codes are checked on
real subprocesses of the console script.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from robustlab import outputs
from robustlab.data import stream
from robustlab.data.files import FileFormatError, read_rows
from robustlab.errors import InputError
from robustlab.outputs import atomic_dir, atomic_write, remove_stale, write_json
from robustlab.runs.store import RunStore, StoreError

ROBUSTLAB = Path(sys.executable).parent / "robustlab"
ROWS = "sentence\tlabel\nthe cat sat on the mat\t0\ndogs run fast today\t1\n"


def cli(*args, timeout=120, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROBUSTLAB), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def one_line_error(proc: subprocess.CompletedProcess, code: int = 2) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ": error: " in ln]
    assert len(errors) == 1, proc.stderr
    return errors[0]


@pytest.fixture
def src(tmp_path) -> Path:
    p = tmp_path / "in.tsv"
    p.write_text(ROWS, encoding="utf-8")
    return p


@pytest.fixture
def scores(tmp_path) -> Path:
    """A precomputed score table: `robustlab cross-domain scores` is a study in a second."""
    rows = ["system,domain,score"]
    for sys_, accs in {"m1": [60, 62, 61, 59], "m2": [40, 80, 70, 50]}.items():
        rows += [f"{sys_},{d},{v}" for d, v in zip("abcd", accs, strict=True)]
    p = tmp_path / "scores.csv"
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return p


SMALL = ["--bags", "5", "--bag-fraction", "0.5", "--eps", "5", "10", "--no-plots"]


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


# ---- item 4: no write follows a link inside a run directory -----------------------------------


def test_worker_log_link_is_not_appended_to(tmp_path):
    """A resume launches the worker through spawn_detached: a planted worker.log link must not
    make it append the study's output to the file the link names."""
    from robustlab.tui import launch

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run_dir / "worker.log").symlink_to(victim)
    before = digest(victim)
    with pytest.raises(InputError, match="symbolic link"):
        launch.spawn_detached([sys.executable, "-c", "print('study output')"], run_dir)
    assert digest(victim) == before
    assert not (run_dir / "worker.json").exists()  # nothing was started
    (run_dir / "worker.log").unlink()
    os.mkfifo(run_dir / "worker.log")  # a FIFO there is refused at once, never blocks
    with pytest.raises(InputError, match="FIFO"):
        launch.spawn_detached([sys.executable, "-c", "pass"], run_dir)
    assert stat.S_ISFIFO(os.lstat(run_dir / "worker.log").st_mode)


def test_a_real_worker_log_is_still_appended(tmp_path):
    from robustlab.tui import launch

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "worker.log").write_text("earlier\n")
    pid = launch.spawn_detached([sys.executable, "-c", "print('hello from the worker')"], run_dir)
    deadline = time.time() + 60
    while "hello from the worker" not in (run_dir / "worker.log").read_text():
        assert time.time() < deadline
        time.sleep(0.05)
    assert (run_dir / "worker.log").read_text().startswith("earlier\n")
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def test_store_link_to_another_runs_store_is_refused(tmp_path, scores):
    other = tmp_path / "other"
    with RunStore(other) as s:
        s.init_run("cross-domain", "someone else's run", {"x": 1})
    before = digest(other / "store.sqlite")
    run = tmp_path / "run"
    run.mkdir()
    (run / "store.sqlite").symlink_to(other / "store.sqlite")
    with pytest.raises(StoreError, match="symbolic link"):
        RunStore(run).init_run("cross-domain", "mine", {"x": 2})
    with pytest.raises(StoreError, match="symbolic link"):
        RunStore(run, readonly=True).run_info()
    err = one_line_error(cli("cross-domain", "scores", scores, "--out", run, *SMALL))
    assert "store.sqlite is a symbolic link" in err
    assert digest(other / "store.sqlite") == before
    assert sorted(p.name for p in other.iterdir()) == ["store.sqlite"]  # no WAL written there


def test_store_link_to_any_sqlite_file_is_refused(tmp_path):
    import sqlite3

    victim = tmp_path / "app.db"
    with sqlite3.connect(victim) as c:
        c.execute("CREATE TABLE t (x)")
    before = digest(victim)
    run = tmp_path / "run"
    run.mkdir()
    (run / "store.sqlite").symlink_to(victim)
    with pytest.raises(StoreError):
        RunStore(run).init_run("attack", "x", {})
    assert digest(victim) == before


def test_store_sidecar_link_is_refused(tmp_path):
    run = tmp_path / "run"
    with RunStore(run) as s:
        s.init_run("attack", "x", {"a": 1})
    victim = tmp_path / "victim.bin"
    victim.write_bytes(b"keep me")
    (run / "store.sqlite-wal").unlink(missing_ok=True)
    (run / "store.sqlite-wal").symlink_to(victim)
    with pytest.raises(StoreError, match="store.sqlite-wal is a symbolic link"):
        RunStore(run).init_run("attack", "x", {"a": 1})
    assert victim.read_bytes() == b"keep me"


def test_run_directory_link_is_resolved_once_and_reported(tmp_path, scores):
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    proc = cli("cross-domain", "scores", scores, "--out", link, *SMALL)
    assert proc.returncode == 0, proc.stderr
    assert f"run directory {link} is a symbolic link; using {os.path.realpath(real)}" in proc.stderr
    assert proc.stderr.count("is a symbolic link") == 1
    assert (real / "store.sqlite").is_file() and (real / "summary.json").is_file()
    assert link.is_symlink()


def test_final_files_of_a_run_are_not_written_through_links(tmp_path, scores):
    run = tmp_path / "run"
    run.mkdir()
    victim = tmp_path / "victim.json"
    victim.write_text('{"mine": true}\n')
    (run / "summary.json").symlink_to(victim)
    err = one_line_error(cli("cross-domain", "scores", scores, "--out", run, *SMALL))
    assert "summary.json: is a symbolic link" in err
    assert victim.read_text() == '{"mine": true}\n'
    assert (run / "summary.json").is_symlink()
    with RunStore(run, readonly=True) as s:  # what was computed is kept in the store
        assert s.counts()["done"] == 2


@pytest.mark.parametrize("name", ["summary.json", "results.jsonl", "table.csv", "plot.png"])
def test_every_run_file_writer_refuses_a_link(tmp_path, name):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / name).symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"):
        if name.endswith(".json"):
            write_json(tmp_path / name, {"a": 1})
        elif name.endswith(".jsonl"):
            outputs.write_jsonl(tmp_path / name, [{"a": 1}])
        else:
            atomic_write(tmp_path / name, lambda f: f.write("x"))
    assert victim.read_text() == "keep"


def test_model_cache_link_is_refused(tmp_path):
    from robustlab.studies.learnability.data import shared_fit

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "mine.txt").write_text("keep")
    cache = tmp_path / "run" / ".model-cache"
    cache.parent.mkdir()
    cache.symlink_to(elsewhere)
    with pytest.raises(InputError, match="symbolic link"):
        shared_fit(str(cache), "key", lambda: object(), lambda m: 0.0)
    assert sorted(p.name for p in elsewhere.iterdir()) == ["mine.txt"]


def test_saved_directory_link_refused_in_run_dir_and_resolved_for_user(tmp_path):
    target = tmp_path / "models" / "m1"
    target.mkdir(parents=True)
    (target / "old.txt").write_text("old")
    link = tmp_path / "m"
    link.symlink_to(target)
    with pytest.raises(InputError, match="symbolic link"), atomic_dir(link) as tmp:
        (tmp / "new.txt").write_text("new")
    assert (target / "old.txt").exists()
    with atomic_dir(link, user=True) as tmp:  # `train --out LINK`: the user chose the link
        (tmp / "new.txt").write_text("new")
    assert link.is_symlink() and sorted(p.name for p in target.iterdir()) == ["new.txt"]
    assert not [p for p in target.parent.iterdir() if outputs.TMP_TAG in p.name]


def test_attack_csv_name_cannot_leave_the_run_directory(tmp_path):
    outside = tmp_path / "outside.csv"
    err = one_line_error(cli("attack", "--recipe", "so-random", "--model", "bow", "--dataset",
                             "demo", "--log-to-csv", outside, "--out", tmp_path / "run"))
    assert "--log-to-csv" in err and "file name" in err
    assert not outside.exists() and not (tmp_path / "run").exists()


# ---- item 10: outputs that are not regular files -----------------------------------------------


def test_dev_null_output_stays_a_device(src):
    before = os.stat("/dev/null")
    proc = cli("perturb", "-p", "char_swap", "-i", src, "-o", "/dev/null")
    assert proc.returncode == 0, proc.stderr
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_ino == before.st_ino
    assert after.st_rdev == before.st_rdev


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_dev_full_is_one_line_and_nonzero(src, scores, tmp_path):
    for args in (["perturb", "-p", "char_swap", "-i", src, "-o", "/dev/full"],
                 ["augment", "-p", "char_swap", "-i", src, "-o", "/dev/full"]):
        err = one_line_error(cli(*args))
        assert "/dev/full: cannot write (No space left on device)" in err
    run = tmp_path / "run"
    assert cli("cross-domain", "scores", scores, "--out", run, *SMALL).returncode == 0
    proc = cli("report", run, "--out", "/dev/full")
    assert proc.returncode != 0 and "No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_dash_and_dev_stdout_write_standard_output(src, tmp_path):
    proc = cli("perturb", "-p", "char_swap", "-i", src, "-o", "-")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split("\t") == ["sentence", "label", "changed", "error"] and len(lines) == 3
    assert "2 rows" in proc.stderr and not (tmp_path / "-").exists()
    proc = cli("perturb", "-p", "char_swap", "-i", src, "-o", "/dev/stdout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1:] == lines[1:]
    # stdout redirected to a file: /dev/stdout is written where it stands, not replaced
    with open(tmp_path / "redirected.tsv", "w") as fh:
        proc = subprocess.run([str(ROBUSTLAB), "augment", "-p", "char_swap", "-i", str(src), "-o",
                               "/dev/stdout"], stdout=fh, stderr=subprocess.PIPE, text=True,
                              timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(read_rows(tmp_path / "redirected.tsv")) == 4


def test_fifo_output_is_streamed_and_stays_a_fifo(src, tmp_path):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    proc = cli("augment", "-p", "char_swap", "-n", "2", "-i", src, "-o", fifo,
               "--output-format", "tsv")
    reader.join(30)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(got[0].decode().splitlines()) == 1 + 2 * 3
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_report_to_stdout_keeps_messages_off_it(tmp_path, scores):
    run = tmp_path / "run"
    assert cli("cross-domain", "scores", scores, "--out", run, *SMALL).returncode == 0
    proc = cli("report", run, "--out", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().lower().startswith("<!doctype html") and "report: -" in proc.stderr
    assert "report: -" not in proc.stdout and proc.stdout.rstrip().endswith("</html>")


def test_markdown_report_with_figures_needs_a_file(tmp_path, monkeypatch):
    from robustlab import report

    monkeypatch.setattr(report, "build_document", lambda dirs, warn=None: object())
    monkeypatch.setattr(report, "figures", lambda doc: [object()])
    with pytest.raises(InputError, match="figures are PNG files"):
        report.write_report([tmp_path], "/dev/null", "md")


def test_user_output_through_a_link_writes_the_target(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_json(link, {"a": 1}, user=True)
    assert link.is_symlink() and real.read_text().startswith('{\n  "a": 1')


# ---- item 7: an output that is an input -----------------------------------------------------------


@pytest.mark.parametrize("spelling", ["dot", "hardlink", "symlink", "absolute"])
def test_output_equal_to_input_is_refused(tmp_path, src, spelling):
    before = digest(src)
    if spelling == "dot":
        out = "./in.tsv"
    elif spelling == "hardlink":
        os.link(src, tmp_path / "hard.tsv")
        out = "hard.tsv"
    elif spelling == "symlink":
        (tmp_path / "soft.tsv").symlink_to(src)
        out = "soft.tsv"
    else:
        out = str(src)
    listing = sorted(p.name for p in tmp_path.iterdir())
    for args in (["perturb", "-p", "char_swap", "-i", "in.tsv", "-o", out],
                 ["augment", "-p", "char_swap", "-i", "in.tsv", "-o", out],
                 ["augment", "-p", "char_swap", "-i", "in.tsv", "-o", "aug.tsv",
                  "--train-file", out]):
        err = one_line_error(cli(*args, cwd=tmp_path))
        assert "is the same file as -i/--input" in err
        assert digest(src) == before
        assert sorted(p.name for p in tmp_path.iterdir()) == listing  # nothing written


def test_two_outputs_that_are_one_file_are_refused(tmp_path, src):
    err = one_line_error(cli("augment", "-p", "char_swap", "-i", src, "-o", "a.tsv",
                             "--train-file", "./a.tsv", cwd=tmp_path))
    assert "--train-file ./a.tsv: is the same file as -o/--output a.tsv" in err
    assert not (tmp_path / "a.tsv").exists()


def test_report_failures_correlate_outputs_cannot_be_the_run_files(tmp_path, scores):
    run = tmp_path / "run"
    assert cli("cross-domain", "scores", scores, "--out", run, *SMALL).returncode == 0
    store, summary = digest(run / "store.sqlite"), digest(run / "summary.json")
    err = one_line_error(cli("report", run, "--out", run / "store.sqlite"))
    assert "store.sqlite: is the same file as" in err
    err = one_line_error(cli("report", run, "--out", run / "." / "summary.json"))
    assert "summary.json: is the same file as" in err
    err = one_line_error(cli("failures", run, "--csv", run / "summary.json"))
    assert "--csv" in err and "is the same file as" in err
    err = one_line_error(cli("correlate", run, "--json", run / "summary.json"))
    assert "--json" in err and "is the same file as" in err
    assert digest(run / "store.sqlite") == store and digest(run / "summary.json") == summary


def test_every_user_named_output_creates_its_missing_parent_directories(tmp_path, src, scores):
    """One rule for every file the user names (perturb/augment -o, --train-file, report --out,
    failures --csv, correlate --json, --junit-xml): missing parent directories are created, as
    TextAttack's CSV and summary loggers do and as every study's --out run directory is; so
    `-o out/new/x.tsv` is not bad input (a parent that is a file is, see test_bad_inputs).
    All of them write through robustlab.outputs.open_output, which makes the parents."""
    run = tmp_path / "run"
    assert cli("cross-domain", "scores", scores, "--out", run, *SMALL).returncode == 0
    written = {
        "perturb": ("perturb", "-p", "char_swap", "-i", src, "-o", tmp_path / "a/b/p.tsv"),
        "augment": ("augment", "-p", "char_swap", "-i", src, "-o", tmp_path / "c/d/a.tsv",
                    "--label-column", "label", "--train-file", tmp_path / "e/f/t.tsv"),
        "report": ("report", run, "--out", tmp_path / "g/h/r.html"),
    }
    for name, argv in written.items():
        proc = cli(*argv)
        assert proc.returncode == 0, (name, proc.stderr)
    for rel in ("a/b/p.tsv", "c/d/a.tsv", "e/f/t.tsv", "g/h/r.html"):
        assert (tmp_path / rel).is_file() and (tmp_path / rel).stat().st_size > 0, rel


def test_junit_xml_cannot_be_the_plan(tmp_path):
    plan = tmp_path / "plan.toml"
    plan.write_text('name = "x"\ndataset = "demo"\nmodels = ["bow"]\n[defaults]\n'
                    'max_drop = 0.5\n[[test]]\nperturbation = "char_swap"\n')
    before = digest(plan)
    err = one_line_error(cli("check", plan, "--junit-xml", tmp_path / "." / "plan.toml",
                             "--out", tmp_path / "run"))
    assert "is the same file as PLAN" in err
    assert digest(plan) == before and not (tmp_path / "run").exists()


def test_train_refuses_an_out_that_holds_its_data(tmp_path, src):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    data = model_dir / "train.tsv"
    data.write_bytes(src.read_bytes() * 4)
    before = digest(data)
    err = one_line_error(cli("train", "--model", "bow", "--dataset", data, "--out", model_dir,
                             "--force"))
    assert "inside --out" in err
    assert digest(data) == before


# ---- item 8: augment -n bounded and streamed ----------------------------------------------------


class Counting:
    """A perturbation stand-in that records every ``perturb_outcomes`` call."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def perturb_outcomes(self, texts, seed=0):
        from robustlab.perturbations.base import Outcome

        self.calls.append(len(texts))
        return [Outcome(t, f"{t}#{seed}", True) for t in texts]


def test_augment_jobs_are_generated_not_listed():
    p = Counting()
    jobs = stream.CopyJobs([p, p], 7, 10**12)  # a list of 10^12 would never fit in memory
    assert len(jobs) == 10**12
    assert jobs[0] == (p, 7) and jobs[3] == (p, stream.derived_seed(7, 1))
    assert jobs[10**12 - 1][1] == stream.derived_seed(7, 10**12 // 2 - 1)


def test_many_copies_of_one_row_are_made_as_they_are_read():
    p = Counting()
    jobs = stream.CopyJobs([p], 0, 10**9)
    (line, row, results), = itertools.islice(
        stream.apply_batched(iter([(1, {"text": "abc"})]), jobs, "text"), 1)
    first = list(itertools.islice(results, 5))
    assert [r.text for r in first] == ["abc#0"] + [f"abc#{stream.derived_seed(0, k)}"
                                                  for k in range(1, 5)]
    assert sum(p.calls) == 5  # nothing computed ahead of what was consumed


def test_results_held_stay_under_the_budget_whatever_n():
    for n, n_rows in ((1, 3000), (4, 3000), (300, 1000), (5000, 60)):
        p = Counting()
        rows = ((i + 1, {"text": "word " * 10}) for i in range(n_rows))
        out = stream.apply_batched(rows, stream.CopyJobs([p], 0, n), "text")
        for _, _, results in out:
            for _ in results:
                pass
        per_text = n * (stream._RESULT_BYTES + len("word " * 10))
        assert max(p.calls) * per_text <= stream.HOLD_BYTES + per_text, n
        assert sum(p.calls) == n_rows * n
        if n <= 4:
            assert max(p.calls) == stream.BATCH  # small n: the same batches as before


def test_augment_many_copies_writes_every_row(tmp_path, src):
    """Past the batch budget (one row's copies made lazily) every copy is still written, in
    order, to both outputs."""
    out = tmp_path / "a.tsv"
    proc = cli("augment", "-p", "char_swap", "-n", "3000", "-i", src, "-o", out,
               "--train-file", tmp_path / "t.tsv")
    assert proc.returncode == 0, proc.stderr
    t = read_rows(out)
    assert len(t) == 2 * 3001 and len(read_rows(tmp_path / "t.tsv")) == 2 * 3001
    assert [r["changed"] for r in t.rows[:2]] == ["false", "true"]


def test_augment_n_bound_is_checked_before_any_work(tmp_path):
    err = one_line_error(cli("augment", "-p", "char_swap", "-n", "1000000000000", "-i",
                             tmp_path / "missing.tsv", "-o", tmp_path / "o.tsv"))
    assert "at most 10000 copies per row" in err
    assert list(tmp_path.iterdir()) == []


def test_augment_refuses_an_output_that_cannot_fit(tmp_path, src, monkeypatch):
    from types import SimpleNamespace

    from robustlab.commands import augment

    monkeypatch.setattr("shutil.disk_usage", lambda p: SimpleNamespace(free=1000))
    args = SimpleNamespace(n=100, exclude_original=False, input=str(src),
                           output=str(tmp_path / "o.tsv"), train_file=None)
    with pytest.raises(InputError, match="augment would write at least"):
        augment._check_space(args)


# ---- item 12: inputs that are not regular files ---------------------------------------------------


def test_fifo_and_dev_zero_inputs_are_refused_without_blocking(tmp_path):
    """A FIFO with no writer blocks a reader forever and /dev/zero never ends: each command
    refuses them (one line, nothing written) instead of reading. The ceiling is generous (a
    command that read would never end; one that refuses ends in seconds even under load)."""
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)  # no writer: reading it would block forever
    for cmd in (["perturb", "-p", "char_swap", "-i", fifo, "-o", tmp_path / "o.tsv"],
                ["augment", "-p", "char_swap", "-i", "/dev/zero", "-o", tmp_path / "o.tsv"],
                ["train", "--model", "bow", "--dataset", fifo, "--out", tmp_path / "m"],
                ["cross-domain", "scores", "/dev/zero"]):
        err = one_line_error(cli(*cmd, timeout=300))
        assert "not a regular file" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fifo"]


def test_input_record_refuses_a_device(tmp_path):
    from robustlab.runs import inputs

    with pytest.raises(FileFormatError, match="character device"):
        inputs.describe("/dev/zero", "--dataset")


def test_a_line_without_end_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(stream, "MAX_LINE", 1000)
    monkeypatch.setattr(stream, "_BLOCK", 256)
    p = tmp_path / "one-line.txt"
    p.write_text("x" * 5000)
    with pytest.raises(FileFormatError, match="longer than"):
        list(stream.RowReader(p))
    c = tmp_path / "one-line.csv"
    c.write_text("a,b\n" + "y" * 5000)
    with pytest.raises(FileFormatError, match="longer than"):
        list(stream.RowReader(c))


# ---- item 12: temporary files of killed writers ---------------------------------------------------


def _tmp_name(name: str, pid: int, host: str | None = None, rand: str = "abcd1234") -> str:
    return f".{name}.{outputs.TMP_TAG}.{host or outputs._host_tag()}.{pid}.{rand}"


def test_stale_temporary_files_are_removed_and_foreign_ones_kept(tmp_path, src):
    dead = dead_pid()
    out = tmp_path / "out.tsv"
    stale_file = tmp_path / _tmp_name("out.tsv", dead)
    stale_file.write_text("half")
    stale_dir = tmp_path / _tmp_name("out.tsv", dead, rand="dir_0001")
    stale_dir.mkdir()
    (stale_dir / "x").write_text("half")
    keep = {
        "live writer": tmp_path / _tmp_name("out.tsv", os.getppid()),
        "other host": tmp_path / _tmp_name("out.tsv", dead, host="00000000"),
        "other output": tmp_path / _tmp_name("other.tsv", dead),
        "old style": tmp_path / ".out.tsv.k2j3h4g5",
        "look-alike": tmp_path / f".out.tsv.{outputs.TMP_TAG}.x.{dead}.abcd1234",
        "user file": tmp_path / "notes.txt",
    }
    for p in keep.values():
        p.write_text("keep")
    victim = tmp_path / "victim"
    victim.write_text("keep")
    link = tmp_path / _tmp_name("out.tsv", dead, rand="link0001")
    link.symlink_to(victim)
    proc = cli("perturb", "-p", "char_swap", "-i", src, "-o", out)
    assert proc.returncode == 0, proc.stderr
    assert not stale_file.exists() and not stale_dir.exists()
    for why, p in keep.items():
        assert p.read_text() == "keep", why
    assert link.is_symlink() and victim.read_text() == "keep"


def test_kill_9_during_augment_leaves_a_marked_file_the_next_run_removes(tmp_path, src):
    big = tmp_path / "big.tsv"
    big.write_text("sentence\tlabel\n" + "the cat sat on the mat\t0\n" * 2000)
    out = tmp_path / "aug.tsv"
    proc = subprocess.Popen([str(ROBUSTLAB), "augment", "-p", "char_swap", "-n", "1000", "-i",
                             str(big), "-o", str(out), "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    marked = f".aug.tsv.{outputs.TMP_TAG}.{outputs._host_tag()}.{proc.pid}."
    while not [p for p in tmp_path.iterdir() if p.name.startswith(marked)]:
        assert proc.poll() is None and time.time() < deadline, "no temporary file appeared"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    left = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert len(left) == 1 and left[0].name.startswith(marked) and not out.exists()
    rerun = cli("perturb", "-p", "char_swap", "-i", src, "-o", out)  # the next write of aug.tsv
    assert rerun.returncode == 0, rerun.stderr
    assert not left[0].exists() and out.exists()
    assert remove_stale(out) == []


def test_tui_reads_of_run_files_never_block(tmp_path):
    """The TUI tails worker.log and reads summary.json: a FIFO planted there (no writer) is
    refused at once instead of blocking the app, and a link is not followed."""
    from robustlab.tui import data

    os.mkfifo(tmp_path / "worker.log")
    os.mkfifo(tmp_path / "summary.json")
    t0 = time.monotonic()
    assert data.tail(tmp_path / "worker.log") == []
    assert data.read_summary(tmp_path) is None
    assert time.monotonic() - t0 < 5
    other = tmp_path / "other"
    other.mkdir()
    (other / "secret.log").write_text("not this run's\n")
    (other / "worker.log").symlink_to(other / "secret.log")
    assert data.tail(other / "worker.log") == []
