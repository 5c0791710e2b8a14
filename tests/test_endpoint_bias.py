"""Counterfactual bias B(p, k) over a model behind an HTTP endpoint (issue 34), against the real
uvicorn server of ``tests/endpoint_server.py`` (a robustlab-trained BoW, counting every request
and every text it received): the same table as the local model, each text asked once, a rerun
that asks nothing, ``--max-queries`` refusing and stopping cleanly, and an LLM's answers that
name no label counted and left out of B, never scored as a class.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from test_endpoints import KEY, _Recorder, bow, card, data, evil, fresh, server  # noqa: F401

from robustlab.cli import main

PAIRS = "film movie\nplot story\n"
TABLE = {"good": ["great", "nice"], "bad": ["poor", "weak"], "really": ["very", "quite"],
         "great": ["good"], "awful": ["poor"], "dull": ["boring"], "the": ["a"],
         "was": ["is"], "acting": ["cast"]}


@pytest.fixture(scope="module")
def files(data) -> Path:  # noqa: F811
    (data / "bias_pairs.txt").write_text(PAIRS)
    (data / "bias_table.json").write_text(json.dumps(TABLE))
    # a number in every third sentence: the test server's LLM routes answer "not sure" to a
    # text with digits
    lines = (data / "dev.tsv").read_text().splitlines()
    (data / "digits.tsv").write_text("".join(f"{ln} {i}\n" if i % 3 == 0 else f"{ln}\n"
                                             for i, ln in enumerate(lines)))
    return data


def bias(files: Path, model, out: Path, *extra, dataset: str = "dev.tsv") -> list[str]:
    return ["bias", "--model", str(model), "--dataset", str(files / dataset), "--pairs",
            str(files / "bias_pairs.txt"), "--source", f"table:{files / 'bias_table.json'}",
            "--lm-check", "none", "--k", "0,1,2", "--budget", "60", "--parents", "20",
            "--out", str(out), "--no-progress", "--quiet", "--no-plots", *map(str, extra)]


def run(args, capsys) -> tuple[int, str, str]:
    rc = main(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def estimate_of(stdout: str) -> int:
    m = re.search(r"at most ([\d,]+) endpoint queries for the cells not done yet", stdout)
    assert m, stdout
    return int(m.group(1).replace(",", ""))


def asked(stdout: str) -> tuple[int, int]:
    m = re.search(r": (\d+) queries in (\d+) requests sent this run", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


def results(out: Path) -> dict[tuple[str, int], dict]:
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return {("/".join(r["pair"]), r["k"]): r for r in rows}


def f_softs(out: Path) -> dict[str, list[tuple[str, float]]]:
    with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as c:
        rows = c.execute("SELECT cell, payload FROM records ORDER BY cell, idx")
        got: dict[str, list[tuple[str, float]]] = {}
        for key, payload in rows:
            r = json.loads(payload)
            got.setdefault(key, []).append((r["text"], r["f_soft"]))
    return got


def test_bias_over_an_endpoint_equals_the_local_model_and_a_rerun_asks_nothing(
        files, bow, fresh, tmp_path, capsys):  # noqa: F811
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=4, max_concurrency=4)
    out = tmp_path / "remote"
    rc, stdout, err = run(bias(files, c, out), capsys)
    assert rc == 0, err
    estimate = estimate_of(stdout)
    queries, requests = asked(stdout)
    stats = fresh.stats()
    # what bias printed is what the server received; no text was asked twice
    assert requests == stats["requests"] > 0 and queries == sum(stats["texts"].values())
    assert max(stats["texts"].values()) == 1 and queries <= estimate
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert ep["requests"] == requests and ep["queries_this_run"] == queries
    assert ep["estimate"] == estimate and ep["stopped"] is None and ep["invalid"] == 0
    assert "tokens: not reported by the server" in stdout
    # the same study of the same model run locally: the same cells, sentences and B
    local = tmp_path / "local"
    rc, _, err = run(bias(files, bow, local), capsys)
    assert rc == 0, err
    remote_rows, local_rows = results(out), results(local)
    assert remote_rows.keys() == local_rows.keys() and len(remote_rows) == 6
    assert sum(r["n"] for r in remote_rows.values()) > 20  # neighbourhoods were measured
    for key, r in remote_rows.items():
        lr = local_rows[key]
        for field in ("n", "n_test", "n_filter", "sampled"):
            assert r[field] == lr[field], (key, field)
        if lr["B"] is None:
            assert r["B"] is None
        else:  # the server rounds its probabilities to 6 decimals
            assert r["B"] == pytest.approx(lr["B"], abs=2e-6), key
        assert r["invalid"] == 0 and "invalid" not in lr  # a local model has no invalid answers
    remote_f, local_f = f_softs(out), f_softs(local)
    assert remote_f.keys() == local_f.keys()
    for key in remote_f:
        assert [t for t, _ in remote_f[key]] == [t for t, _ in local_f[key]]
        assert [f for _, f in remote_f[key]] == pytest.approx([f for _, f in local_f[key]],
                                                              abs=2e-6)
    # a rerun of the finished run asks nothing (its estimate: no cell left)
    rc, stdout, err = run(bias(files, c, out), capsys)
    assert rc == 0, err
    assert estimate_of(stdout) == 0 and asked(stdout) == (0, 0)
    assert fresh.stats()["requests"] == requests
    # a resumed cell asks the store, not the server
    with sqlite3.connect(out / "store.sqlite") as conn:
        conn.execute("UPDATE cells SET status='pending', result=NULL WHERE key LIKE '%k=2'")
    rc, stdout, err = run(bias(files, c, out), capsys)
    assert rc == 0, err
    assert estimate_of(stdout) > 0 and asked(stdout) == (0, 0)
    assert fresh.stats()["requests"] == requests and results(out) == remote_rows


def test_max_queries_refuses_then_stops_and_resumes(files, fresh, tmp_path, capsys):  # noqa: F811
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=1,
             request_field="text", max_concurrency=2)
    out = tmp_path / "run"
    rc, stdout, err = run(bias(files, c, out, "--max-queries", 40), capsys)
    estimate = estimate_of(stdout)
    assert rc == 2 and estimate > 40
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and f"may ask up to {estimate:,} queries" in lines[0]
    assert fresh.stats()["requests"] == 0 and not out.exists()  # nothing asked or written
    sent, rounds = 0, 0
    while True:
        rounds += 1
        assert rounds < 40
        rc, stdout, err = run(bias(files, c, out, "--max-queries", 40, "--stop-at-budget"),
                              capsys)
        queries, requests = asked(stdout)
        assert queries == requests <= 40
        sent += requests
        stats = fresh.stats()
        assert stats["requests"] == sent and max(stats["texts"].values()) == 1
        summary = json.loads((out / "summary.json").read_text())
        if rc == 0:
            assert summary["complete"] and summary["endpoint"]["stopped"] is None
            break
        assert rc == 1 and not summary["complete"]
        assert "stopped at the query budget (--max-queries 40)" in stdout
    assert rounds > 2
    # the same study uninterrupted asks the same texts and gives the same table
    fresh.reset()
    whole = tmp_path / "whole"
    rc, _, err = run(bias(files, c, whole), capsys)
    assert rc == 0, err
    assert fresh.stats()["requests"] == sent and results(out) == results(whole)


def test_invalid_llm_answers_are_counted_and_left_out_of_b(files, fresh, tmp_path,  # noqa: F811
                                                          capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/v1/chat/completions", kind="openai-chat",
             batch_size=1, model="bow", template="Positive or negative? Text: {text}",
             verbalizers={"0": ["negative"], "1": ["positive"]})
    out = tmp_path / "run"
    rc, stdout, err = run(bias(files, c, out, dataset="digits.tsv"), capsys)
    assert rc == 0, err
    with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as conn:
        answers = {t: json.loads(a)["text"].strip(" .").lower()
                   for t, a in conn.execute("SELECT text, answer FROM responses")}
    unsure = {t for t, a in answers.items() if a == "not sure"}
    assert unsure and max(fresh.stats()["texts"].values()) == 1
    rows = results(out)
    assert sum(r["invalid"] + r["invalid_test"] for r in rows.values()) > 0
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert ep["invalid"] == len(unsure) and f"{len(unsure)} invalid answers" in stdout
    # every measured sentence and its patched twin got an answer naming a label: F_soft is a
    # difference of one-hot rows, never of an invalid answer's uniform row
    for key, recs in f_softs(out).items():
        pair = key.split("|")[0].removeprefix("pair=").split("/")
        for text, f in recs:
            twin = " ".join(pair[1] if w == pair[0] else w for w in text.split())
            assert text not in unsure and twin not in unsure, (text, twin)
            assert f in (-1.0, 0.0, 1.0)
        r = rows[("/".join(pair), int(key.rsplit("=", 1)[1]))]
        assert r["n"] == len(recs)
        if recs:
            assert r["B"] == pytest.approx(sum(f for _, f in recs) / len(recs))


def test_the_key_is_sent_never_stored_and_a_stored_run_never_sends_it(
        files, evil, tmp_path, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setenv("RL_TEST_KEY", KEY)
    c = card(tmp_path / "card.toml", f"{evil}/predict", api_key_env="RL_TEST_KEY")
    out = tmp_path / "run"
    rc, stdout, err = run(bias(files, c, out), capsys)
    assert rc == 0, err
    assert _Recorder.seen and all(h.get("Authorization") == f"Bearer {KEY}"
                                  for h in _Recorder.seen)
    assert KEY not in stdout + err
    assert not [f for f in out.rglob("*") if f.is_file() and KEY.encode() in f.read_bytes()]
    with sqlite3.connect(out / "store.sqlite") as conn:  # left to resume: a cell pending
        conn.execute("UPDATE cells SET status='pending', result=NULL WHERE seq=1")
        conn.execute("DELETE FROM responses")
    _Recorder.seen = []
    rc = main(["resume", str(out), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "rerun the eval command with --model" in err and not _Recorder.seen
