"""A model behind an HTTP endpoint, tested like a local one (issue 34).

One real server per module (``tests/endpoint_server.py``: a robustlab-trained BoW classifier
over HTTP, with fault injection and a count of every request and text it received), started as
a process and waited on (``GET /stats``) with a generous ceiling. The server's counts prove
that no text is asked twice, across perturbations, reruns and a ``--budget`` (a ``kill -9``:
``tests/test_endpoint_inflight.py``).
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_eval import _write

from robustlab.cli import main

ROOT = Path(__file__).resolve().parents[1]
PERTS = "leet_letters,char_swap"
KEY = "sk-test-4f1c9e0b7a2d"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(cond, ceiling: float = 180.0, what: str = "condition"):
    end = time.monotonic() + ceiling
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out after {ceiling:.0f} s waiting for {what}")


def get(url: str) -> dict | None:
    import httpx

    try:
        return httpx.get(url, timeout=5).json()
    except (httpx.HTTPError, ValueError):
        return None


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("endpoint-data")
    _write(d / "train.tsv", 240, 0)
    _write(d / "dev.tsv", 40, 1)
    return d


@pytest.fixture(scope="module")
def bow(data) -> Path:
    import contextlib
    import io

    out = data / "bow"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["train", "--model", "bow", "--dataset", str(data / "train.tsv"),
                     "--steps", "40", "--out", str(out)]) == 0
    return out


class Server:
    def __init__(self, url: str, proc: subprocess.Popen) -> None:
        self.url, self.proc = url, proc

    def control(self, faults=(), delay: float = 0.0, idempotency: bool = True) -> None:
        import httpx

        httpx.post(f"{self.url}/control", json={"faults": list(faults), "delay": delay,
                                                "idempotency": idempotency})

    def reset(self) -> None:
        import httpx

        httpx.post(f"{self.url}/reset")

    def stats(self) -> dict:
        return get(f"{self.url}/stats")


def start_server(model: Path, *extra: str, ceiling: float = 180.0) -> Server:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "endpoint_server.py"),
                             "--model", str(model), "--port", str(port), *extra],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"

    def ready():
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        return get(f"{url}/stats") is not None

    wait_for(ready, ceiling, "the server to answer")
    return Server(url, proc)


@pytest.fixture(scope="module")
def server(bow):
    s = start_server(bow)
    yield s
    s.proc.terminate()
    s.proc.wait(30)


@pytest.fixture
def fresh(server):
    server.reset()
    return server


def card(path: Path, url: str, **keys) -> Path:
    values = {"url": url, "kind": "json", "request_field": "texts", "response_field": "probs",
              "batch_size": 4, "max_concurrency": 8, "timeout": 10, **keys}
    lines = [f"{k} = {json.dumps(v)}" for k, v in values.items() if not isinstance(v, dict)]
    for k, v in values.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{kk} = {json.dumps(vv)}" for kk, vv in v.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_eval(args, capsys) -> tuple[int, str, str]:
    rc = main(["eval", *map(str, args), "--quiet", "--no-plots"])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def stored(run: Path) -> dict[str, str]:
    """text -> answer of every response the run's store holds."""
    if not (run / "store.sqlite").exists():
        return {}
    with sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True) as c:
        try:
            return dict(c.execute("SELECT text, answer FROM responses"))
        except sqlite3.OperationalError:
            return {}


def distinct_texts(run: Path) -> set[str]:
    with sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT original, perturbed FROM predictions").fetchall()
    return {t for row in rows for t in row}


# ---- the JSON kind against the real server --------------------------------------------------


def test_eval_asks_each_text_once_and_a_rerun_asks_nothing(data, fresh, tmp_path, capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict")
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                                PERTS, "--seeds", "0,1", "--out", out], capsys)
    assert rc == 0, err
    stats = fresh.stats()
    texts = distinct_texts(out)
    # every distinct text (clean and perturbed, over both seeds) asked exactly once
    assert set(stats["texts"]) == texts
    assert max(stats["texts"].values()) == 1
    summary = json.loads((out / "summary.json").read_text())
    ep = summary["endpoint"]
    assert ep["requests"] == stats["requests"] == ep["sent_this_run"]
    assert ep["answers"] == len(texts)
    assert f"{ep['requests']} requests stored" in stdout
    # the local model's own predictions agree with what the endpoint answered
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           PERTS, "--seeds", "0,1", "--out", out], capsys)
    assert rc == 0, err
    assert fresh.stats()["requests"] == stats["requests"]  # the rerun sent nothing


def test_predictions_equal_the_local_model(data, bow, fresh, tmp_path, capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=1,
             request_field="text")
    for name, model in (("remote", c), ("local", bow)):
        rc, _, err = run_eval(["--model", model, "--dataset", data / "dev.tsv",
                               "--perturbations", PERTS, "--seeds", "0", "--out",
                               tmp_path / name], capsys)
        assert rc == 0, err
    remote = (tmp_path / "remote" / "eval.csv").read_text()
    assert remote == (tmp_path / "local" / "eval.csv").read_text()


def test_url_and_endpoint_kind_on_the_command_line(data, fresh, tmp_path, capsys):
    out = tmp_path / "run"
    url = f"{fresh.url}/proba"  # a bare URL: {"text": …} -> the probability row
    rc, _, err = run_eval(["--model", url, "--endpoint-kind", "json", "--dataset",
                           data / "dev.tsv", "--perturbations", "leet_letters", "--seeds", "0",
                           "--out", out], capsys)
    assert rc == 0, err
    assert json.loads((out / "summary.json").read_text())["model"] == f"endpoint:json:{url}"
    # a reply without the declared field: one line, exit 2, nothing that looks like a run
    rc, _, err = run_eval(["--model", f"{fresh.url}/predict", "--dataset", data / "dev.tsv",
                           "--perturbations", "leet_letters", "--seeds", "0", "--out",
                           tmp_path / "run2"], capsys)
    assert rc == 2 and "expected a list of class probabilities" in err, err
    assert len(err.strip().splitlines()) == 1


def test_faults_are_retried_and_each_text_still_asked_once(data, fresh, tmp_path, capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", timeout=2, retries=4)
    faults = ["429", "500", "503", "slow", "429"]
    fresh.control(faults=faults)
    out = tmp_path / "run"
    t0 = time.monotonic()
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err
    assert time.monotonic() - t0 >= 1.0  # Retry-After: 1 was honoured
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    stats = fresh.stats()
    # every fault cost one extra try, never an extra stored request
    assert stats["requests"] == ep["requests"] + len(faults)
    assert ep["tries_this_run"] == stats["requests"]


def test_budget_stops_cleanly_and_reruns_finish_with_no_request_twice(data, fresh, tmp_path,
                                                                       capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=2)
    out = tmp_path / "run"
    args = ["--model", c, "--dataset", data / "dev.tsv", "--perturbations", PERTS, "--seeds",
            "0", "--out", out, "--budget", "12"]
    rcs = []
    for _ in range(12):
        rc, _, err = run_eval(args, capsys)
        rcs.append(rc)
        if rc == 0:
            break
        assert "--budget 12 requests spent" in err
        assert fresh.stats()["requests"] <= 12 * len(rcs)
    assert rcs[-1] == 0 and len(rcs) > 2
    stats = fresh.stats()
    assert max(stats["texts"].values()) == 1
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert ep["requests"] == stats["requests"]


# ---- bad inputs: one line, exit 2, nothing lost ----------------------------------------------


@pytest.mark.parametrize("fault,words", [("nonjson", "not JSON"), ("nofield", "no field"),
                                         ("400", "HTTP 400")])
def test_bad_replies_are_one_line_and_exit_2(data, fresh, tmp_path, capsys, fault, words):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", retries=1)
    fresh.control(faults=[fault])
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", tmp_path / "run"], capsys)
    assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, err


def test_a_label_outside_the_card_is_refused(data, fresh, tmp_path, capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/label", response_field="label",
             response_type="label", labels=["negative", "positive"])
    out = tmp_path / "run"
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err  # the label kind works
    fresh.control(faults=["badlabel"])
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", tmp_path / "run2"], capsys)
    assert rc == 2 and "'neutral' is not one of the card's labels" in err, err


def test_unreachable_host_and_tls_error(data, fresh, tmp_path, capsys):
    port = free_port()
    out = tmp_path / "run"
    rc, _, err = run_eval(["--model", f"http://127.0.0.1:{port}/predict", "--dataset",
                           data / "dev.tsv", "--seeds", "0", "--out", out], capsys)
    assert rc == 2 and "cannot connect" in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists() or not any(out.iterdir())  # nothing that looks like a run
    tls = fresh.url.replace("http://", "https://") + "/predict"
    rc, _, err = run_eval(["--model", tls, "--dataset", data / "dev.tsv", "--seeds", "0",
                           "--out", out], capsys)
    assert rc == 2 and "TLS error" in err and len(err.strip().splitlines()) == 1, err


def test_bad_cards(data, tmp_path, capsys):
    cases = {"kind = \"grpc\"": "unknown endpoint kind", "colour = 1": "unknown key 'colour'",
             "url = \"ftp://x\"": "not an http(s) URL",
             "url = \"http://u:p@h/x\"": "user name or password",
             "kind = \"openai-chat\"": "needs verbalizers",
             "labels = " + "[" * 3000 + "1" + "]" * 3000: "nests arrays or tables too deep"}
    for line, words in cases.items():
        text = line if line.startswith("url") else f"url = \"http://h/x\"\n{line}"
        p = tmp_path / "c.toml"
        p.write_text(text + "\n")
        rc, _, err = run_eval(["--model", p, "--dataset", data / "dev.tsv", "--out",
                               tmp_path / "r"], capsys)
        assert rc == 2 and words in err and len(err.strip().splitlines()) == 1, (line, err)
        assert not (tmp_path / "r").exists()


# ---- the key ------------------------------------------------------------------------------------


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        _Recorder.seen.append(dict(self.headers))
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        n = len(body.get("texts", [0]))
        reply = json.dumps({"probs": [[0.5, 0.5]] * n}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *a):
        pass


@pytest.fixture
def evil():
    _Recorder.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_the_key_is_sent_and_never_stored_printed_or_on_the_command_line(
        data, evil, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RL_TEST_KEY", KEY)
    c = card(tmp_path / "card.toml", f"{evil}/predict", api_key_env="RL_TEST_KEY")
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                                "leet_letters", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err
    assert _Recorder.seen and all(h.get("Authorization") == f"Bearer {KEY}"
                                  for h in _Recorder.seen)
    assert KEY not in stdout + err
    for f in out.rglob("*"):
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f
    # the stored command line names the card, never the key
    with sqlite3.connect(out / "store.sqlite") as conn:
        assert KEY not in str(conn.execute("SELECT command, config FROM run").fetchall())


def test_a_crafted_run_folder_cannot_send_the_key_elsewhere(data, evil, tmp_path, capsys,
                                                              monkeypatch):
    """Someone hands over a run folder whose stored model is a card naming their host and the
    victim's key variable; resuming it must not send the key there (nor anything)."""
    attacker = card(tmp_path / "attacker.toml", f"{evil}/predict",
                    api_key_env="RL_TEST_KEY")
    monkeypatch.setenv("RL_TEST_KEY", "attacker-own-key")
    out = tmp_path / "crafted"
    rc, _, err = run_eval(["--model", attacker, "--dataset", data / "dev.tsv",
                           "--perturbations", "leet_letters,char_swap", "--seeds", "0",
                           "--out", out], capsys)
    assert rc == 0, err
    with sqlite3.connect(out / "store.sqlite") as conn:  # left to resume: a cell pending
        conn.execute("UPDATE cells SET status='pending', result=NULL WHERE seq=1")
        conn.execute("DELETE FROM responses")
    _Recorder.seen = []
    monkeypatch.setenv("RL_TEST_KEY", KEY)  # the victim's key
    rc = main(["resume", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "rerun the eval command with --model" in err, err
    assert all(KEY not in str(h) for h in _Recorder.seen) and not _Recorder.seen


# ---- LLM kinds --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,route", [("openai-chat", "/v1/chat/completions"),
                                        ("openai-completions", "/v1/completions")])
def test_llm_kinds_map_answers_and_count_invalid_ones(data, fresh, tmp_path, capsys, kind, route):
    c = card(tmp_path / "card.toml", f"{fresh.url}{route}", kind=kind, batch_size=1,
             model="bow", template="Is this review positive or negative? Text: {text}",
             verbalizers={"0": ["negative"], "1": ["positive"]})
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                                "leet_letters", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err
    summary = json.loads((out / "summary.json").read_text())
    ep = summary["endpoint"]
    assert ep["server_model"] in ("bow-chat", "bow-completions")
    assert ep["tokens"] > 0 and ep["requests"] == fresh.stats()["requests"]
    answers = [json.loads(a)["text"] for a in stored(out).values()]
    unsure = sum("not sure" in a.lower() for a in answers)
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert unsure > 0 and result["invalid"] + result["invalid_clean"] > 0
    with sqlite3.connect(out / "store.sqlite") as conn:
        preds = conn.execute("SELECT pred_after FROM predictions").fetchall()
    # an invalid answer is recorded as -1, never as a class
    assert sum(p == -1 for (p,) in preds) == result["invalid"]
    assert f"{ep['invalid']} invalid answers" in stdout
    # the eval table has the invalid count of the perturbation
    line = next(ln for ln in stdout.splitlines() if ln.startswith("leet_letters"))
    assert "invalid" in stdout and line.split()[-1] == str(result["invalid"])
    # failures: the invalid count per cell, and the raw answer of each invalid prediction
    assert main(["failures", str(out), "--limit", "1000"]) == 0
    shown = capsys.readouterr().out
    head, rule, row = shown.splitlines()[1:4]
    assert head.split()[-1] == "invalid" and row.split()[-1] == str(result["invalid"])
    answers = {t: " ".join(json.loads(a)["text"].split()) for t, a in stored(out).items()}
    blocks = shown.split("\n[")[1:]
    bad = [b for b in blocks if "-> invalid" in b.splitlines()[0]]
    assert bad and len(bad) == sum(p == -1 for (p,) in preds)  # INV: each one fails
    for b in bad:
        perturbed = next(ln[4:] for ln in b.splitlines() if ln.startswith("  + "))
        assert f"  answer after: {answers[perturbed]!r} (names no label)" in b


# ---- units ---------------------------------------------------------------------------------------


def test_retry_after_and_budget_parsing():
    from robustlab.endpoints.client import parse_budget, retry_after
    from robustlab.errors import InputError

    assert retry_after("2") == 2.0 and retry_after(None) is None and retry_after("x") is None
    assert 0 <= retry_after("Wed, 21 Oct 2015 07:28:00 GMT") < 1
    assert parse_budget("500") == (500, "requests")
    assert parse_budget("20k tokens") == (20000, "tokens")
    with pytest.raises(InputError):
        parse_budget("lots")


def test_a_response_key_depends_on_the_text_and_the_endpoint_not_the_limits():
    from robustlab.endpoints import Card, EndpointModel

    a = EndpointModel(Card(url="http://h/p", max_concurrency=1))
    b = EndpointModel(Card(url="http://h/p", max_concurrency=9, retries=1))
    assert a.request_key("x") == b.request_key("x") != a.request_key("y")
    assert a.request_key("x") != EndpointModel(Card(url="http://h/q")).request_key("x")
    with pytest.raises(TypeError):  # an endpoint model (it may hold a key) is never pickled
        import pickle

        pickle.dumps(a)


def test_an_old_store_opens_and_takes_responses(tmp_path):
    from robustlab.runs.store import RunStore

    with RunStore(tmp_path) as s:
        assert not s.has_responses_table() and s.response_totals()["requests"] == 0
        s.add_responses([{"key": "k", "text": "t", "answer": [0.2, 0.8], "request": "r",
                          "prompt_tokens": 3, "completion_tokens": 1}])
        assert s.responses(["k", "nope"]) == {"k": [0.2, 0.8]}
        assert s.response_totals() == {"requests": 1, "answers": 1, "prompt_tokens": 3,
                                       "completion_tokens": 1}
        s.conn.execute("UPDATE responses SET answer='[0.9, 0.1]'")  # damage: asked again
        assert s.responses(["k"]) == {}


def test_check_gates_an_endpoint_with_junit_and_report_shows_its_costs(data, fresh, tmp_path,
                                                                        capsys):
    card(tmp_path / "card.toml", f"{fresh.url}/predict")
    plan = tmp_path / "gate.toml"
    plan.write_text(f'model = "card.toml"\ndata = "{data / "dev.tsv"}"\nseeds = [0]\n'
                    'out = "runs/gate"\n[[test]]\nperturbation = "leet_letters"\n'
                    "min_accuracy = 0.0\n", encoding="utf-8")
    rc = main(["check", str(plan), "--junit-xml", str(tmp_path / "ci.xml"), "--quiet"])
    assert rc == 0, capsys.readouterr().err
    xml = (tmp_path / "ci.xml").read_text()
    assert 'tests="1"' in xml and 'failures="0"' in xml
    run = tmp_path / "runs" / "gate"
    assert fresh.stats()["requests"] == stored_requests(run)
    capsys.readouterr()
    assert main(["report", str(run), "--out", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert f"Endpoint {fresh.url}/predict (json): {stored_requests(run)} requests" in html
    assert main(["failures", str(run)]) == 0


def stored_requests(run: Path) -> int:
    with sqlite3.connect(f"file:{run / 'store.sqlite'}?mode=ro", uri=True) as c:
        return c.execute("SELECT COUNT(DISTINCT request) FROM responses").fetchone()[0]
