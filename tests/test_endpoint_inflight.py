"""A ``kill -9`` mid-run and a rerun charge no text twice (issue 34), against the real server.

A request whose answer never arrived cannot be proven unsent, so the client records each request
in the store before sending it (write-ahead) and sends its id as ``Idempotency-Key``; a rerun
sends the requests left in flight again as they were, under the same key. The server
(``tests/endpoint_server.py``) counts the texts it charged and the requests it replayed from a
key it had answered; with the header ignored (as most servers do) the texts charged twice are
exactly those of the in-flight requests it had received, and the rerun says how many it re-sent.
Three texts a request, so a rerun that regrouped the in-flight texts would send other bodies
under other keys. Everything waits on the store's and the server's counts, never a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

from test_endpoints import (  # noqa: F401
    PERTS,
    ROOT,
    bow,
    card,
    data,
    distinct_texts,
    fresh,
    server,
    stored_requests,
    wait_for,
)


def in_flight(run: Path) -> dict[str, list[str]]:
    """Requests the store records as sent with no answer stored: id -> texts."""
    with sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True) as c:
        return {r: json.loads(t) for r, t in c.execute(
            "SELECT request, texts FROM sent WHERE request NOT IN "
            "(SELECT request FROM responses)")}


def answered(run: Path) -> int:
    if not (run / "store.sqlite").exists():
        return 0
    try:
        return stored_requests(run)
    except sqlite3.OperationalError:  # no responses table yet
        return 0


def kill_mid_run(data: Path, server, tmp_path: Path,  # noqa: F811
                 idempotency: bool = True) -> tuple[list[str], Path]:
    """Start ``robustlab eval`` as a process, ``kill -9`` it while the server holds requests it
    has not answered, and return (the command, the run folder)."""
    c = card(tmp_path / "card.toml", f"{server.url}/predict", batch_size=3,
             max_concurrency=4)
    server.control(delay=1.0, idempotency=idempotency)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "robustlab", "eval", "--model", str(c), "--dataset",
           str(data / "dev.tsv"), "--perturbations", PERTS, "--seeds", "0,1", "--out",
           str(out), "--quiet", "--no-plots"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def mid_run() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"eval ended before the kill: {proc.stderr.read()[-800:]!r}")
        done = answered(out)
        # some answers stored, and requests the server holds that are not answered yet
        return done >= 6 and server.stats()["requests"] > done

    try:
        wait_for(mid_run, 300, "requests in flight after 6 answers")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return cmd, out


def rerun(cmd: list[str], server, idempotency: bool = True) -> dict:  # noqa: F811
    """Run ``cmd`` again to the end (printing its costs) with the server answering at once."""
    server.control(delay=0.0, idempotency=idempotency)
    done = subprocess.run([a for a in cmd if a != "--quiet"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    out = Path(cmd[cmd.index("--out") + 1])
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    return {"stdout": done.stdout, "endpoint": ep}


def test_kill_9_and_rerun_charge_no_text_twice(data, fresh, tmp_path):  # noqa: F811
    cmd, out = kill_mid_run(data, fresh, tmp_path)
    pending = in_flight(out)
    assert pending  # the kill caught requests recorded as sent, their answers not stored
    assert len(pending) <= 4  # at most max_concurrency
    received = fresh.stats()["requests"]
    result = rerun(cmd, fresh)
    stats = fresh.stats()
    # the in-flight requests went again as they were, under their keys: the server answered
    # those it had received from what it kept and charged no text twice
    assert max(stats["texts"].values()) == 1
    assert 1 <= stats["replayed"] <= len(pending)
    assert result["endpoint"]["resent_this_run"] == len(pending)
    assert f"{len(pending)} request" in result["stdout"] and "Idempotency-Key" in result["stdout"]
    assert not in_flight(out)
    assert set(stats["texts"]) == distinct_texts(out)
    # every request the server received after the kill is one the rerun sent
    assert stats["requests"] - received == result["endpoint"]["tries_this_run"]


def test_a_server_ignoring_the_key_is_charged_only_the_in_flight_texts_again(
        data, fresh, tmp_path):  # noqa: F811
    cmd, out = kill_mid_run(data, fresh, tmp_path, idempotency=False)
    pending = in_flight(out)
    assert pending and len(pending) <= 4
    charged = set(fresh.stats()["texts"])
    result = rerun(cmd, fresh, idempotency=False)
    counts = fresh.stats()["texts"]
    twice = {t for t, n in counts.items() if n > 1}
    # exactly the texts of the in-flight requests the server had already charged, and the
    # rerun says how many requests it sent again
    assert twice == charged & {t for texts in pending.values() for t in texts}
    assert max(counts.values()) <= 2
    assert result["endpoint"]["resent_this_run"] == len(pending)


def test_a_rerun_sends_an_in_flight_request_as_it_was_under_its_key(tmp_path):
    """Its texts partly answered since (by another request), the in-flight request still goes
    again whole, under its recorded id, before the rest is grouped anew."""
    from robustlab.endpoints import open_endpoint
    from robustlab.runs.store import StoreCache

    c = card(tmp_path / "card.toml", "http://127.0.0.1:9/predict", batch_size=3)
    run = tmp_path / "run"
    cache = StoreCache(run)
    model = open_endpoint(str(c), cache=cache, trusted=True)
    a, b, c_, d, e = "a", "b", "c", "d", "e"
    cache.put_sent([{"request": "r-in-flight", "texts": [a, b, c_]},
                    {"request": "r-answered", "texts": [b]}])
    cache.put([{"key": model.request_key(b), "text": b, "answer": [0.5, 0.5],
                "request": "r-answered"}])
    assert [r["request"] for r in cache.unanswered()] == ["r-in-flight"]
    groups = model._groups([a, c_, d, e])
    assert groups == [("r-in-flight", [a, b, c_]), (model.request_id([d, e]), [d, e])]
    # a text of no in-flight request is grouped as usual, its id stable across processes
    other = open_endpoint(str(c), cache=StoreCache(run), trusted=True)
    assert other._groups([e, d]) == [(model.request_id([e, d]), [e, d])]
    assert model.request_id([d, e]) != model.request_id([e, d])
    cache.close()
