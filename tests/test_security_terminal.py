"""No escape sequence from data reaches the terminal; Stop escalates (issue 21 items 5, 12).

Crafted run directories (tests/tui/hostile.py) hold OSC 0/2 (terminal title), OSC 52 (clipboard),
``ESC[2J``, an 8-bit CSI (U+009B), bidi overrides, U+2028 and Rich markup in every text. The
commands that print those texts are run for real and their output is read back as bytes: it must
hold no control character but newlines, and show each one escaped (``\\x1b``). The TUI side is in
tests/tui/test_hostile_texts.py. A worker that ignores SIGINT (started with ``&`` from a script)
is stopped with SIGTERM, one that ignores SIGTERM too is killed, and the result says so.
"""

from __future__ import annotations

import ast
import io
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from report_helpers import markdown_html, parse
from tui import hostile
from tui.hostile import PAYLOAD, SHOWN, SHOWN_ALL, raw_controls

from robustlab.cli import main
from robustlab.errors import InputError
from robustlab.procs import group_alive, pid_alive
from robustlab.textfmt import align, echo, printable
from robustlab.tui import launch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    return hostile.make_all(tmp_path_factory.mktemp("hostile"))


def robustlab(*args: str) -> subprocess.CompletedProcess:
    """The real command in a child process: its stdout/stderr as the terminal would get them."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run([sys.executable, "-m", "robustlab", *args], capture_output=True,
                          env=env, timeout=300)


def assert_terminal_safe(out: bytes | str) -> str:
    text = out.decode("utf-8") if isinstance(out, bytes) else out
    assert raw_controls(text) == [], f"raw control characters reached the terminal: {text!r}"
    return text


# ---- the sanitiser --------------------------------------------------------------------------------


def test_printable_escapes_every_character_a_terminal_would_interpret():
    assert printable(PAYLOAD) == SHOWN_ALL
    for raw, shown in (("\x1b", "\\x1b"), ("\x07", "\\x07"), ("\x9b", "\\x9b"), ("\x7f", "\\x7f"),
                       ("\x85", "\\x85"), ("\r", "\\r"), ("\u202e", "\\u202e"),
                       ("\u2066", "\\u2066"), ("\u200b", "\\u200b"), ("\u2028", "\\u2028"),
                       ("\u2029", "\\u2029"), ("\ufeff", "\\ufeff"), ("\udc80", "\\udc80"),
                       ("\n", "\\n"), ("\t", "\\t")):
        assert printable(f"a{raw}b") == f"a{shown}b"
    assert printable("a\nb\tc\x1b", lines=True) == "a\nb\tc\\x1b"  # a log tail keeps its lines
    text = "déjà vu, 日本語, ρ=0.5 ± 0.1 – ok [b]"
    assert printable(text) is text  # printable text is returned as it is (no copy)
    assert printable(3) == "3"


def test_align_and_echo_escape_what_they_print(capsys):
    table = align(["model", "perturbation"], [[f"bow{PAYLOAD}", "x"]], rule=True)
    assert_terminal_safe(table)
    assert SHOWN_ALL in table and table.splitlines()[1].startswith("-----")
    echo(f"line one {PAYLOAD}\nline two", file=sys.stderr)
    err = capsys.readouterr().err
    assert err == f"line one {SHOWN_ALL}\nline two\n"


def test_the_cli_prints_only_through_echo():
    """Every ``print`` in robustlab is :func:`echo` (textfmt itself excepted), so no command can
    print a stored or dataset text raw; no module writes to sys.stdout/sys.stderr directly."""
    offenders = []
    for path in sorted((ROOT / "robustlab").rglob("*.py")):
        if path.name == "textfmt.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            if isinstance(f, ast.Name) and f.id == "print":
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} print(")
            if (isinstance(f, ast.Attribute) and f.attr == "write" and isinstance(f.value,
                    ast.Attribute) and f.value.attr in ("stdout", "stderr")
                    and isinstance(f.value.value, ast.Name) and f.value.value.id == "sys"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} sys.{f.value.attr}")
    assert offenders == []


# ---- commands that print stored and dataset texts ---------------------------------------------------


def test_failures_shows_hostile_example_texts_escaped(runs):
    done = robustlab("failures", str(runs["learn"]), "--limit", "20")
    assert done.returncode == 0, done.stderr
    out = assert_terminal_safe(done.stdout)
    assert_terminal_safe(done.stderr)
    for shown in SHOWN:
        assert shown in out
    assert f"  - the film {SHOWN_ALL} is a charming story" in out  # the example, one line
    assert f"typo{SHOWN_ALL}" in out and f"cnn{SHOWN_ALL}" in out  # names in the table


def test_failures_filter_by_a_hostile_name_and_its_error(runs, capsys):
    assert main(["failures", str(runs["learn"]), "--perturbation", f"typo{PAYLOAD}",
                 "--limit", "1"]) == 0
    assert f"typo{SHOWN_ALL}" in assert_terminal_safe(capsys.readouterr().out)
    # an error message that echoes a value (here a path) prints it escaped, on one line
    done = robustlab("failures", f"/nonexistent/{PAYLOAD}")
    assert done.returncode == 2
    err = assert_terminal_safe(done.stderr)
    assert err.count("\n") == 1 and f"/nonexistent/{SHOWN_ALL}" in err


def test_usage_errors_quote_arguments_escaped(capsys):
    """argparse's messages quote the arguments (a stored command's, a plan's): escaped too."""
    with pytest.raises(SystemExit) as exc:
        main(["failures", "run", f"--x{PAYLOAD}"])
    assert exc.value.code == 2
    err = assert_terminal_safe(capsys.readouterr().err)
    assert f"unrecognized arguments: --x{SHOWN_ALL}" in err


def test_correlate_prints_hostile_model_and_perturbation_names_escaped(runs):
    done = robustlab("correlate", str(runs["learn"]), "--no-write")
    assert done.returncode == 0, done.stderr
    out = assert_terminal_safe(done.stdout)
    assert f"cnn{SHOWN_ALL}" in out and f"typo{SHOWN_ALL}" in out
    assert_terminal_safe(done.stderr)


def test_failed_cell_lines_and_status_lines_are_escaped(runs, capsys):
    import argparse

    from robustlab.runs.store import print_failed_cells
    from robustlab.studies.second_order.attack_command import status_printer, summary_line

    print_failed_cells(runs["died"], ["ex=000004"], f"header {PAYLOAD}")
    err = assert_terminal_safe(capsys.readouterr().err)
    # the error's last line (str.splitlines also breaks at U+2028), escaped
    assert f"header {SHOWN_ALL}\n  ex=000004: [/b][link=https://evil.example]click[/link]" in err
    status_printer(argparse.Namespace(no_progress=False, quiet=False))(
        f"reading --dataset {PAYLOAD}")
    assert f"reading --dataset {SHOWN_ALL}" in assert_terminal_safe(capsys.readouterr().err)
    echo(summary_line("so-beam", {"counts": {"successful": 1, "failed": 0, "skipped": 0},
                                  "success_rate": 1.0, "mean_l0": 1.0,
                                  "seconds_per_example": 0.1, "queries_per_example": 3},
                      f"runs/{PAYLOAD}"))
    assert f"-> runs/{SHOWN_ALL}" in assert_terminal_safe(capsys.readouterr().out)


def test_textattack_stdout_log_keeps_its_colours_and_escapes_the_texts(capsys):
    pytest.importorskip("textattack")
    from textattack.loggers import AttackLogManager
    from textattack.shared.utils import color_text

    from robustlab.studies.second_order.textattack_cli import escape_stdout_loggers

    manager = AttackLogManager(None)
    manager.enable_stdout()
    escape_stdout_loggers(manager)
    escape_stdout_loggers(manager)  # idempotent: wrapped once
    logger = manager.loggers[0]
    logger.fout.write(color_text(f"word{PAYLOAD}", "red", "ansi") + " "
                      + color_text("ok", "green", "ansi") + "\n")
    out = capsys.readouterr().out
    assert out == f"\x1b[91mword{SHOWN_ALL}\x1b[0m \x1b[92mok\x1b[0m\n"


# ---- the report -------------------------------------------------------------------------------------


def test_markdown_report_copies_no_control_bytes_and_keeps_its_tables(runs, tmp_path):
    out = tmp_path / "r.md"
    assert main(["report", str(runs["learn"]), str(runs["attack"]), "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert raw_controls(md) == []  # newlines only
    page = parse(markdown_html(md))
    firsts = {r[0] for t in page.tables for r in t["rows"]}
    # each hostile name is one cell, shown escaped, its markup not interpreted
    assert any(SHOWN_ALL in c for c in firsts)
    assert all(len(r) == len(t["head"]) for t in page.tables for r in t["rows"])
    rendered = markdown_html(md)
    assert "<a href" not in rendered and 'href="https://evil' not in rendered


def test_html_report_escapes_hostile_texts(runs, tmp_path):
    out = tmp_path / "r.html"
    evil = tmp_path / "evil"
    from tui import fixtures

    fixtures.learnability(evil, perts=("<img src=x onerror=alert(1)>", f"p{PAYLOAD}"))
    assert main(["report", str(evil), "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert raw_controls(text) == []
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert re.search(f'<td(?: class="[^"]*")?>p{re.escape(SHOWN[0])}', text)  # the name (shortened in tables), shown escaped


def test_markdown_figure_links_stay_links_whatever_the_file_name():
    from robustlab.report.doc import Document, Figure, to_markdown

    doc = Document("t")
    doc.add(Figure(b"", "alt", "", f"bias_k_x) [y](http://evil.example {PAYLOAD}.png"))
    md = to_markdown(doc, "r_figures")
    assert raw_controls(md) == [] and "(http://evil" not in md
    images = parse(markdown_html(md)).images
    assert len(images) == 1 and unquote(images[0]) == f"r_figures/{doc.blocks[0].name}"


# ---- Stop: SIGINT, then SIGTERM, then SIGKILL --------------------------------------------------------


GRACE = (1.0, 1.0)
#: the wait for the signal expected to stop the worker: a ceiling, not a clock (stop() returns
#: as soon as the worker is gone), generous so a loaded machine cannot turn SIGINT into SIGTERM;
#: the signals the worker ignores keep the short grace (that wait is always spent in full)
CEILING = 60.0


def _stop(run_dir: Path, grace: tuple[float, float] = GRACE
          ) -> tuple[launch.StopResult, list[str]]:
    steps: list[str] = []
    return launch.stop(run_dir, grace=grace, report=steps.append), steps


def _ignore_sigint() -> None:
    """preexec_fn: the child starts with SIGINT ignored, as a job started with ``&`` from a
    script or ``nohup … &`` does."""
    import signal as signals

    signals.signal(signals.SIGINT, signals.SIG_IGN)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
@pytest.mark.parametrize("ignore, signal, says", [
    ("", "SIGINT", "stopped with SIGINT"),
    ("INT", "SIGTERM", "did not stop after SIGINT; sent SIGTERM: it stopped"),
    ("INT,TERM", "SIGKILL", "did not stop after SIGINT nor SIGTERM: killed"),
])
def test_stop_escalates_until_the_worker_is_gone(tmp_path, ignore, signal, says, inherited):
    """A worker started from the command line (no worker.json): its pid alone is signalled;
    the same whether it inherited SIGINT as usual or ignored (a background job)."""
    run = tmp_path / "r"
    argv, ready = hostile.stubborn_argv(tmp_path, run, ignore)
    grace = {"SIGINT": (CEILING, GRACE[1]), "SIGTERM": (GRACE[0], CEILING),
             "SIGKILL": GRACE}[signal]
    proc = subprocess.Popen(argv, cwd=tmp_path,
                            preexec_fn=_ignore_sigint if inherited == "ignored" else None)
    try:
        hostile.wait_file(ready)
        hostile.record_worker(run, proc.pid)
        result, steps = _stop(run, grace)
        assert (result.pid, result.signal, result.stopped) == (proc.pid, signal, True)
        assert says in result.message
        assert steps[0] == (f"sent SIGINT (Ctrl-C) to worker {proc.pid}; waiting up to "
                            f"{grace[0]:g} s for it to stop")
        escalations = {"SIGINT": 0, "SIGTERM": 1, "SIGKILL": 2}[signal]
        assert len(steps) == 1 + escalations
        if escalations:
            assert steps[1] == f"worker {proc.pid} did not stop 1 s after SIGINT; sent SIGTERM"
        if escalations == 2:
            assert steps[2] == f"worker {proc.pid} did not stop 1 s after SIGTERM; sent SIGKILL"
        # the exit status stays with the worker's parent (here this test's Popen)
        assert proc.wait(timeout=60) == {"SIGINT": -2, "SIGTERM": -15, "SIGKILL": -9}[signal]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_study_started_as_a_background_job_stops_on_sigint(tmp_path):
    """``nohup robustlab learnability … &``: the study inherits SIGINT ignored; robustlab
    installs its Ctrl-C handling at start, so Stop's first signal (SIGINT) stops it: in-flight
    cells back to pending, the run marked interrupted, exit 130 (no escalation to SIGTERM)."""
    from robustlab.runs.store import RunStore, StoreError

    run = tmp_path / "run"
    argv = [sys.executable, "-m", "robustlab", "learnability", "--model", "bow", "--dataset",
            "demo", "--perturbations", "leet_letters,char_swap", "--p-grid", "0.25,0.5,0.75,1",
            "--seeds", "0,1,2,3,4", "--steps", "400", "--max-train", "400", "--max-test", "100",
            "--quiet", "--no-plots", "--out", str(run)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_ignore_sigint)
    try:
        running = hostile.wait_until(lambda: _running(run, RunStore, StoreError), 240,
                                     lambda: proc.poll() is None)
        assert running, "the study never started a cell"
        result, steps = _stop(run, (CEILING, GRACE[1]))
        assert (result.signal, result.stopped) == ("SIGINT", True), (result, steps)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err[-2000:]
        assert "interrupted; finished results are kept" in err
        with RunStore(run, readonly=True) as store:
            assert store.run_info().status == "interrupted"
            counts = store.counts()
        assert counts["running"] == 0 and counts["pending"] > 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _running(run: Path, store_cls, store_error) -> bool:
    if not (run / "store.sqlite").exists():
        return False
    try:
        with store_cls(run, readonly=True) as store:
            return store.counts()["running"] > 0
    except store_error:  # between the file's creation and its schema
        return False


def test_stop_escalates_for_the_whole_process_group_of_a_launched_worker(tmp_path):
    """Launched by the TUI (worker.json, own session): the group is signalled, and a member that
    ignores SIGINT and SIGTERM keeps the run "not stopped" until SIGKILL, even after the leader
    exited on SIGTERM."""
    run = tmp_path / "r"
    argv, ready = hostile.stubborn_argv(tmp_path, run, "INT", child=True)
    pid = launch.spawn_detached(argv, run, cwd=tmp_path)
    child_ready = Path(f"{ready}.child")
    try:
        hostile.wait_file(ready)
        hostile.wait_file(child_ready)
        result, steps = _stop(run)
        assert (result.pid, result.signal) == (pid, "SIGKILL")
        assert result.message.startswith(f"worker {pid} and its process group did not stop "
                                         "after SIGINT nor SIGTERM: killed")
        assert len(steps) == 3 and "sent SIGKILL" in steps[2]
        assert not pid_alive(pid) and not group_alive(pid)  # no live member left
    finally:
        if group_alive(pid):
            os.killpg(pid, 9)


def test_stop_never_reports_success_for_a_worker_still_alive(tmp_path, monkeypatch):
    """If even SIGKILL does not end it (a process stuck in the kernel), the result says so."""
    run = tmp_path / "r"
    argv, ready = hostile.stubborn_argv(tmp_path, run, "INT,TERM")
    proc = subprocess.Popen(argv, cwd=tmp_path)
    try:
        hostile.wait_file(ready)
        hostile.record_worker(run, proc.pid)
        sent: list[int] = []
        # signals that do nothing (kill(pid, 0), the liveness probe, still answers "alive")
        monkeypatch.setattr(launch.os, "kill", lambda pid, sig: sig and sent.append(sig))
        result, _ = _stop(run)
        assert sent == [2, 15, 9] and proc.poll() is None
        assert not result.stopped and result.signal is None
        assert "still alive after SIGINT, SIGTERM and SIGKILL" in result.message
    finally:
        monkeypatch.undo()  # the real os.kill again, to end the worker
        proc.kill()
        proc.wait()


def test_stop_refuses_a_worker_that_no_longer_verifies(tmp_path, monkeypatch):
    """Each escalation re-verifies the pid (verify_worker): one that no longer passes is not
    signalled again, and the result is not a success."""
    run = tmp_path / "r"
    argv, ready = hostile.stubborn_argv(tmp_path, run, "INT")
    proc = subprocess.Popen(argv, cwd=tmp_path)
    try:
        hostile.wait_file(ready)
        hostile.record_worker(run, proc.pid)
        calls: list[int] = []

        def verify(pid, run_dir, start, program=None):  # passes once, then the pid "changed"
            calls.append(pid)
            return None if len(calls) == 1 else f"pid {pid} started at another time"

        monkeypatch.setattr(launch, "verify_worker", verify)
        result, steps = _stop(run)
        assert not result.stopped and "no longer verifies" in result.message
        assert len(steps) == 1  # SIGINT only: no SIGTERM for a process that failed the check
        assert proc.poll() is None  # it ignored SIGINT and was not signalled again
    finally:
        proc.kill()
        proc.wait()


def test_stop_of_a_gone_worker_is_an_error(tmp_path):
    run = tmp_path / "r"
    argv, ready = hostile.stubborn_argv(tmp_path, run)
    proc = subprocess.Popen(argv, cwd=tmp_path)
    hostile.wait_file(ready)
    hostile.record_worker(run, proc.pid)
    proc.kill()
    proc.wait()
    with pytest.raises(InputError, match="no live worker"):
        launch.stop(run, grace=GRACE)


def test_escaping_stream_passes_attributes_through():
    from robustlab.studies.second_order.textattack_cli import EscapingStream

    buf = io.StringIO()
    s = EscapingStream(buf, [])
    s.write(PAYLOAD)
    s.flush()
    assert buf.getvalue() == SHOWN_ALL and s.getvalue() == SHOWN_ALL
