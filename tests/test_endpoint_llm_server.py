"""An LLM behind a real OpenAI-compatible server (issue 34): ``transformers serve`` (the
``serving`` extra of transformers) serving a tiny random-config causal LM saved to a temporary
folder (``tests/_tiny_chat_lm.py``; nothing downloaded), asked with the ``openai-chat`` kind.

A random LM mostly answers words that name no label: each must be counted invalid, never as a
class. The test recomputes that count from the raw answers the run stored, with its own reading
of the verbalizers, and checks the model name the server reported.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_endpoints import card, free_port, get, run_eval, wait_for
from test_eval import _write

from robustlab.cli import main

pytest.importorskip("openai", reason="transformers serve needs transformers[serving]")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(url, model folder, log file): the tiny LM under ``transformers serve`` on CPU, offline."""
    from _tiny_chat_lm import tiny_chat_lm

    lm = tiny_chat_lm(tmp_path_factory.mktemp("tiny-chat-lm"))
    exe = Path(sys.executable).with_name("transformers")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "transformers.commands."
                                                         "transformers_cli"]
    port = free_port()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1",
           "CUDA_VISIBLE_DEVICES": ""}
    log = tmp_path_factory.mktemp("serve-log") / "serve.log"
    with open(log, "wb") as fh:
        proc = subprocess.Popen([*cmd, "serve", "--host", "127.0.0.1", "--port", str(port),
                                 "--device", "cpu", "--dtype", "float32",
                                 "--force_model", str(lm)],
                                env=env, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"

    def ready():
        if proc.poll() is not None:
            raise AssertionError(f"transformers serve exited: {log.read_text()[-2000:]}")
        return get(f"{url}/v1/models") is not None

    try:
        wait_for(ready, 240, "transformers serve to answer")
        # transformers serve 4.57 loads the model on its first request, and two first requests
        # at once race (seen: lm_head left uninitialised, then HTTP 500 on every request): one
        # request alone first, as a deployment's health check would
        import httpx

        httpx.post(f"{url}/v1/chat/completions", timeout=240, json={
            "model": str(lm), "max_tokens": 1, "messages": [{"role": "user", "content": "a"}]})
        yield url, lm, log
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(30)


LABEL_WORDS = {"negative": 0, "positive": 1}


def names_label(answer: str) -> bool:
    """This test's own reading of the card: the answer's first word is a label word."""
    words = re.findall(r"\w+", answer.lower())
    return bool(words) and words[0] in LABEL_WORDS


def test_transformers_serve_chat_answers_invalid_ones_counted(served, tmp_path, capsys):
    url, lm, log = served
    _write(tmp_path / "dev.tsv", 16, 1)
    c = card(tmp_path / "card.toml", f"{url}/v1/chat/completions", kind="openai-chat",
             batch_size=1, max_concurrency=2, timeout=60, model=str(lm), max_tokens=3,
             template="Is this review positive or negative ? Answer : {text}",
             verbalizers={"0": ["negative"], "1": ["positive"]})
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", tmp_path / "dev.tsv",
                                "--perturbations", "char_swap", "--seeds", "0",
                                "--out", out], capsys)
    assert rc == 0, err + log.read_text()[-3000:]
    summary = json.loads((out / "summary.json").read_text())
    ep = summary["endpoint"]
    with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as conn:
        stored = {t: json.loads(a) for t, a in conn.execute("SELECT text, answer FROM responses")}
        rows = conn.execute("SELECT original, perturbed, pred_before, pred_after "
                            "FROM predictions").fetchall()
    assert rows and all(t in stored for r in rows for t in r[:2])
    # the model name is the one the server reported (transformers serve adds "@main")
    reported = {a["model"] for a in stored.values()}
    assert len(reported) == 1 and ep["server_model"] == reported.pop()
    assert ep["server_model"].startswith(str(lm))
    # invalid answers, counted from the raw answers with this test's own reading
    bad_after = sum(not names_label(stored[p]["text"]) for _, p, _, _ in rows)
    bad_clean = sum(not names_label(stored[o]["text"]) for o, _, _, _ in rows)
    result = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert (result["invalid"], result["invalid_clean"]) == (bad_after, bad_clean)
    assert ep["invalid"] == bad_after and f"{bad_after} invalid answers" in stdout
    assert bad_after > 0  # a random LM: garbage is the rule
    # a prediction is -1 exactly where its answer named no label, else the label it named
    for o, p, before, after in rows:
        for text, pred in ((o, before), (p, after)):
            answer = stored[text]["text"]
            want = LABEL_WORDS[re.findall(r"\w+", answer.lower())[0]] if names_label(answer) \
                else -1
            assert pred == want, (answer, pred)
    # every distinct text asked once (the server's log has one line per request)
    assert ep["requests"] == len(stored) == len({t for r in rows for t in r[:2]})
    # transformers serve 4.57 streams with no usage chunk: said so, never "0 tokens"
    assert ep["requests_without_usage"] == ep["requests"] and ep["tokens"] == 0
    assert "tokens: not reported by the server" in stdout and " 0 tokens" not in stdout
    # failures shows an invalid prediction's raw answer
    assert main(["failures", str(out), "--limit", "100"]) == 0
    shown = capsys.readouterr().out
    if any(a == -1 and b != -1 for _, _, b, a in rows):
        assert "(names no label)" in shown


def test_a_streamed_reply_reads_as_the_reply_it_stands_for():
    """``transformers serve`` 4.57 streams chat completions even when asked not to: the
    chunks' words join into one answer, the model and usage are kept, and a stream with no
    chunks or a chunk that is not JSON is one line naming the URL."""
    from robustlab.endpoints.card import Card
    from robustlab.endpoints.kinds import ReplyError, answers, from_stream, usage

    chat = Card(url="http://h/v1/chat/completions", kind="openai-chat", template="{text}",
                verbalizers={"0": ["negative"], "1": ["positive"]})
    chunks = [{"model": "m@main", "choices": [{"delta": {"role": "assistant"}, "index": 0}]},
              {"model": "m@main", "choices": [{"delta": {"content": "Posi"}, "index": 0}]},
              {"model": "m@main", "choices": [{"delta": {"content": "tive."}, "index": 0}]},
              {"model": "m@main", "choices": [{"delta": {}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 7, "completion_tokens": 2}}]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    reply = from_stream(chat, body)
    assert answers(chat, reply, 1) == [{"text": "Positive.", "logprobs": None, "model": "m@main"}]
    assert usage(reply) == (7, 2)
    completions = Card(url="http://h/v1/completions", kind="openai-completions",
                       template="{text}", verbalizers={"0": ["no"], "1": ["yes"]})
    body = 'data: {"model": "m", "choices": [{"text": " ye"}]}\ndata: {"choices": [{"text": "s"}]}\n'
    assert answers(completions, from_stream(completions, body), 1)[0]["text"] == " yes"
    for bad in ("", "data: {not json\n"):
        with pytest.raises(ReplyError, match="http://h/v1/chat/completions"):
            from_stream(chat, bad)


def test_transformers_serve_reports_no_usage_even_when_asked(served, tmp_path, capsys):
    """``stream = true`` asks for ``stream_options.include_usage``: transformers serve 4.57
    lists that field as unused and ignores it (no usage chunk), so the tokens stay "not
    reported by the server"."""
    url, lm, log = served
    _write(tmp_path / "dev.tsv", 3, 2)
    c = card(tmp_path / "card.toml", f"{url}/v1/chat/completions", kind="openai-chat",
             batch_size=1, max_concurrency=1, timeout=60, model=str(lm), max_tokens=2,
             stream=True, template="Positive or negative ? {text}",
             verbalizers={"0": ["negative"], "1": ["positive"]})
    out = tmp_path / "run"
    rc, stdout, err = run_eval(["--model", c, "--dataset", tmp_path / "dev.tsv",
                                "--perturbations", "char_swap", "--seeds", "0", "--out", out],
                               capsys)
    assert rc == 0, err + log.read_text()[-3000:]
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert ep["requests"] > 0 and ep["requests_without_usage"] == ep["requests"]
    assert "tokens: not reported by the server" in stdout
