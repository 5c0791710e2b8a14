"""What an endpoint answered and what it cost, as the user reads it (issue 34): the raw answers
in ``failures --csv`` of an endpoint run (and no such columns for a local model), token usage
read from a streamed reply's last chunk, and "tokens: not reported by the server" (stdout,
report, TUI line) where no reply reported usage — never 0 tokens. Against the real uvicorn
server of ``tests/endpoint_server.py``.
"""

from __future__ import annotations

import csv
import json
import sqlite3

from test_endpoints import bow, card, data, fresh, run_eval, server, stored  # noqa: F401

from robustlab.cli import main

CHAT = dict(kind="openai-chat", batch_size=1, model="bow",
            template="Is this review positive or negative? Text: {text}",
            verbalizers={"0": ["negative"], "1": ["positive"]})


def test_failures_csv_has_the_raw_answers_of_an_endpoint_run(data, bow, fresh,  # noqa: F811
                                                             tmp_path, capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/v1/chat/completions", **CHAT)
    out = tmp_path / "run"
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err
    answers = {t: json.loads(a)["text"] for t, a in stored(out).items()}
    # one stored answer made hard to quote: a comma, quotes and a line break
    from robustlab.runs.store import RunStore

    with sqlite3.connect(out / "store.sqlite") as conn:
        text = conn.execute("SELECT perturbed FROM predictions WHERE pred_after = -1 "
                            "LIMIT 1").fetchone()[0]
        conn.execute("DELETE FROM responses WHERE text = ?", (text,))
    tricky = 'Not sure, "maybe"\nnegative?'
    with RunStore(out) as store:
        store.add_responses([{"key": "k-tricky", "text": text, "request": "r",
                              "answer": {"text": tricky, "logprobs": None, "model": "m"}}])
    answers[text] = tricky
    for name in ("f.csv", "f.jsonl", "f.tsv"):
        assert main(["failures", str(out), "--csv", str(tmp_path / name), "--quiet"]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader((tmp_path / "f.csv").open(encoding="utf-8", newline="")))
    assert rows and list(rows[0])[-2:] == ["answer_before", "answer_after"]
    for r in rows:
        assert r["answer_before"] == answers[r["original"]]
        assert r["answer_after"] == answers[r["perturbed"]]
    assert any(r["answer_after"] == tricky for r in rows)  # CSV-escaped, read back whole
    jsonl = [json.loads(x) for x in (tmp_path / "f.jsonl").read_text().splitlines()]
    assert [(j["answer_before"], j["answer_after"]) for j in jsonl] == \
        [(r["answer_before"], r["answer_after"]) for r in rows]
    tsv = (tmp_path / "f.tsv").read_text(encoding="utf-8").splitlines()
    assert len(tsv) == len(rows) + 1 and tsv[0].endswith("answer_before\tanswer_after")
    assert any(line.endswith('Not sure, "maybe"\\nnegative?') for line in tsv)
    # a local model's run has no answer columns
    local = tmp_path / "local"
    rc, _, err = run_eval(["--model", bow, "--dataset", data / "dev.tsv", "--perturbations",
                           "leet_letters", "--seeds", "0", "--out", local], capsys)
    assert rc == 0, err
    assert main(["failures", str(local), "--csv", str(tmp_path / "l.csv"), "--quiet"]) == 0
    head = (tmp_path / "l.csv").read_text().splitlines()[0]
    assert "answer_" not in head and head.endswith("original,perturbed")


def test_streamed_usage_is_counted_and_no_usage_is_not_reported(data, fresh, tmp_path,  # noqa: F811
                                                                capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/v1/chat/completions", stream=True, **CHAT)
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                                "char_swap", "--seeds", "0", "--out", out], capsys)
    assert rc == 0, err
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    texts = list(stored(out))
    # the server's usage (words of the text, 2 completion tokens), from the streams' last chunks
    assert ep["prompt_tokens"] == sum(len(t.split()) for t in texts) > 0
    assert ep["completion_tokens"] == 2 * len(texts) == 2 * ep["requests"]
    assert ep["requests_without_usage"] == 0
    assert f"{ep['tokens']} tokens," in stdout and "not reported" not in stdout
    # a classifier's JSON reports no usage: said so, never "0 tokens"
    plain = card(tmp_path / "plain.toml", f"{fresh.url}/predict", batch_size=2)
    out2 = tmp_path / "plain"
    rc, stdout, err = run_eval(["--model", plain, "--dataset", data / "dev.tsv",
                                "--perturbations", "char_swap", "--seeds", "0", "--out", out2],
                               capsys)
    assert rc == 0, err
    ep = json.loads((out2 / "summary.json").read_text())["endpoint"]
    assert ep["requests_without_usage"] == ep["requests"] > 0
    assert "tokens: not reported by the server" in stdout and " 0 tokens" not in stdout
    assert main(["report", str(out2), "--out", str(tmp_path / "r.html"), "--quiet"]) == 0
    capsys.readouterr()
    assert "tokens: not reported by the server" in (tmp_path / "r.html").read_text()
    from robustlab.studies.eval.view import load_eval

    view = load_eval(out2)
    assert "tokens: not reported by the server" in view.endpoint
    assert all(len(line) <= 78 for line in view.endpoint.splitlines())
    (out2 / "summary.json").unlink()  # during a run: from the store
    assert "tokens: not reported by the server" in load_eval(out2).endpoint


def test_stream_usage_is_asked_for_and_read_from_the_last_chunk():
    from robustlab.endpoints.card import Card
    from robustlab.endpoints.kinds import from_stream, raw_text, request_body, usage

    chat = Card(url="http://h/v1/chat/completions", kind="openai-chat", template="{text}",
                verbalizers={"0": ["negative"], "1": ["positive"]}, stream=True)
    body = request_body(chat, ["x"])
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert "stream" not in request_body(Card(url="http://h/v1/chat/completions",
                                             kind="openai-chat", template="{text}",
                                             verbalizers={"0": ["n"]}), ["x"])
    no_usage = 'data: {"model": "m", "choices": [{"delta": {"content": "Yes"}}]}\ndata: [DONE]\n'
    assert usage(from_stream(chat, no_usage)) is None
    last = no_usage.replace("data: [DONE]", 'data: {"choices": [], "usage": '
                            '{"prompt_tokens": 5, "completion_tokens": 1}}\ndata: [DONE]')
    assert usage(from_stream(chat, last)) == (5, 1)
    assert raw_text({"text": "a\tb\nc"}, tsv=True) == "a\\tb\\nc"
    assert raw_text([0.25, 0.75]) == "[0.25, 0.75]" and raw_text(None) == ""


def test_a_card_with_stream_for_a_classifier_is_refused(tmp_path):
    import pytest

    from robustlab.endpoints.card import load_card
    from robustlab.errors import InputError

    c = card(tmp_path / "card.toml", "http://127.0.0.1:1/predict", stream=True)
    with pytest.raises(InputError, match="stream applies to the openai"):
        load_card(c)

