"""The endpoint client and card reader one part at a time, with no server: httpx's own
``MockTransport`` answers, ``asyncio.sleep`` and the jitter are replaced by recorders, so the
retry, backoff, Retry-After, budget and concurrency rules are checked by what they asked for, not
by waiting (issue 35: the test map of ``bench/mutation.py endpoints``; the uvicorn tests of
tests/test_endpoints.py cover the same code end to end but start a server each run)."""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import ssl
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from robustlab.endpoints import card as C
from robustlab.endpoints import client as K
from robustlab.errors import InputError

URL = "http://h.test/predict"


class Cache:
    """A response cache in a dict (the store's responses table's two calls)."""

    def __init__(self) -> None:
        self.rows: dict[str, Any] = {}
        self.puts: list[int] = []
        self.closed = False

    def get(self, keys):
        return {k: self.rows[k] for k in keys if k in self.rows}

    def put(self, rows):
        self.puts.append(len(rows))
        self.rows.update({r["key"]: r["answer"] for r in rows})

    def close(self):
        self.closed = True


@pytest.fixture
def server(monkeypatch):
    """Every AsyncClient the client opens answers through ``server.reply(request)``; sleeps
    are recorded (and not slept); the jitter draws its upper bound."""

    class Server:
        def __init__(self) -> None:
            self.requests: list[httpx.Request] = []
            self.sleeps: list[float] = []
            self.replies: list[Any] = []  # consumed in order; the last one repeats
            self.clients: list[dict[str, Any]] = []

        async def handle(self, request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
            if isinstance(reply, BaseException):
                raise reply
            if callable(reply):
                return await reply(request)
            return reply

    s = Server()
    real_client, real_sleep = httpx.AsyncClient, asyncio.sleep

    def client(**kw):
        s.clients.append(kw)
        return real_client(transport=httpx.MockTransport(s.handle), **kw)

    async def sleep(seconds, *a):
        s.sleeps.append(seconds)
        await real_sleep(0)

    monkeypatch.setattr(httpx, "AsyncClient", client)
    monkeypatch.setattr(K.asyncio, "sleep", sleep)
    monkeypatch.setattr(K._JITTER, "uniform", lambda lo, hi: hi)
    return s


def ok(probs: Any = (0.25, 0.75), **extra) -> httpx.Response:
    return httpx.Response(200, json={"probs": list(probs), **extra})


def model(cache: Any = None, key: str | None = None, limits: K.Limits | None = None,
          **card) -> K.EndpointModel:
    card.setdefault("response_field", "probs")
    return K.EndpointModel(C.Card(url=URL, **card), cache, key=key, limits=limits)


# ---- asking ----------------------------------------------------------------------------------


def test_each_text_is_asked_once_in_batches_and_stored_as_it_arrives(server):
    server.replies = [httpx.Response(200, json={"probs": [[0.1, 0.9], [0.8, 0.2]]}),
                      httpx.Response(200, json={"probs": [[0.3, 0.7]]})]
    cache = Cache()
    m = model(cache, batch_size=2, request_field="in.texts")
    proba = m.predict_proba(["a", "b", "a", "c"])
    assert [r.read() for r in server.requests] == [b'{"in":{"texts":["a","b"]}}',
                                                   b'{"in":{"texts":["c"]}}']
    np.testing.assert_array_equal(proba, [[0.1, 0.9], [0.8, 0.2], [0.1, 0.9], [0.3, 0.7]])
    assert m.sent == 2 and m.attempts == 2 and m.reused == 0 and sum(cache.puts) == 3
    assert cache.closed and server.sleeps == []
    assert server.clients[0]["follow_redirects"] is False
    assert server.clients[0]["trust_env"] is False and server.clients[0]["timeout"] == 30.0
    # a second model on the same store asks nothing
    again = model(cache, batch_size=2, request_field="in.texts")
    np.testing.assert_array_equal(again.predict_proba(["c", "a"]), [[0.3, 0.7], [0.1, 0.9]])
    assert again.reused == 2 and again.sent == 0 and len(server.requests) == 2
    assert again.raw_answer("c") == [0.3, 0.7] and again.raw_answer("zzz") is None


def test_the_key_goes_in_the_authorization_header_only_when_there_is_one(server):
    server.replies = [ok()]
    model(key="s3cret").predict_proba(["a"])
    model().predict_proba(["b"])
    first, second = server.requests
    assert first.headers["authorization"] == "Bearer s3cret"
    assert "authorization" not in second.headers
    assert first.headers["content-type"] == "application/json"
    assert "s3cret" not in repr(model(key="s3cret"))


def test_a_503_is_retried_after_an_exponential_backoff(server):
    server.replies = [httpx.Response(503), httpx.Response(502), httpx.Response(500), ok()]
    m = model()
    np.testing.assert_array_equal(m.predict_proba(["a"]), [[0.25, 0.75]])
    # random.uniform(0, min(30, 0.25 * 2**attempt)) drew its upper bound
    assert server.sleeps == [0.25, 0.5, 1.0]
    assert m.attempts == 4 and m.sent == 1


def test_the_backoff_is_capped_at_thirty_seconds(server):
    server.replies = [httpx.Response(429)] * 9 + [ok()]
    m = model(retries=9)
    m.predict_proba(["a"])
    assert server.sleeps == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_the_jitter_is_drawn_between_zero_and_the_backoff(server, monkeypatch):
    drawn = []
    monkeypatch.setattr(K._JITTER, "uniform", lambda lo, hi: drawn.append((lo, hi)) or lo)
    server.replies = [httpx.Response(503), httpx.Response(503), ok()]
    model().predict_proba(["a"])
    assert drawn == [(0, 0.25), (0, 0.5)] and server.sleeps == [0, 0]


def test_retry_after_is_honoured_up_to_its_cap(server):
    server.replies = [httpx.Response(429, headers={"Retry-After": "7"}),
                      httpx.Response(503, headers={"Retry-After": "300"}), ok()]
    model().predict_proba(["a"])
    assert server.sleeps == [7.0, 300.0]
    server.replies = [httpx.Response(429, headers={"Retry-After": "301"})]
    with pytest.raises(K.EndpointError) as e:
        model().predict_proba(["b"])
    assert str(e.value) == (f"{URL}: HTTP 429 asks to retry after 301 s, more than 300; rerun "
                            "later (every answer so far is stored)")


def test_retries_spent_say_the_last_error_and_the_number_of_tries(server):
    server.replies = [httpx.Response(504)]
    m = model(retries=2)
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a"])
    assert str(e.value) == (f"{URL}: HTTP 504 after 3 tries; every answer so far is stored: "
                            "rerun the same command to continue")
    assert m.attempts == 3 and server.sleeps == [0.25, 0.5]  # no wait after the last try
    server.replies = [httpx.Response(504)]
    m = model(retries=0)
    with pytest.raises(K.EndpointError, match="after 1 tries"):
        m.predict_proba(["b"])
    assert m.attempts == 1


def test_a_refused_request_is_not_retried(server):
    server.replies = [httpx.Response(400, text="  bad input \n")]
    m = model()
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a"])
    assert str(e.value) == f"{URL}: HTTP 400 ('bad input'); not retried"
    assert m.attempts == 1 and server.sleeps == []


@pytest.mark.parametrize("status", sorted(K.RETRY_STATUS))
def test_every_retried_status_is_retried(server, status):
    server.replies = [httpx.Response(status), ok()]
    m = model()
    m.predict_proba(["a"])
    assert m.attempts == 2


def test_timeouts_and_dropped_connections_are_retried(server):
    req = httpx.Request("POST", URL)
    server.replies = [httpx.ReadTimeout("slow", request=req),
                      httpx.RemoteProtocolError("dropped\nmore", request=req), ok()]
    m = model()
    m.predict_proba(["a"])
    assert m.attempts == 3 and server.sleeps == [0.25, 0.5]
    server.replies = [httpx.ReadTimeout("slow", request=req)]
    with pytest.raises(K.EndpointError) as e:
        model(retries=1, timeout=2.5).predict_proba(["b"])
    assert str(e.value).startswith(f"{URL}: no reply within 2.5 s after 2 tries")
    server.replies = [httpx.RemoteProtocolError("dropped\nmore", request=req)]
    with pytest.raises(K.EndpointError) as e:
        model(retries=1).predict_proba(["c"])
    assert str(e.value).startswith(f"{URL}: connection failed (dropped) after 2 tries")


def test_cannot_connect_gives_up_after_three_tries(server):
    req = httpx.Request("POST", URL)
    server.replies = [httpx.ConnectError("refused", request=req)]
    m = model(retries=5)
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a"])
    assert str(e.value) == (f"{URL}: cannot connect (refused); is the server running and the "
                            "URL right?")
    assert m.attempts == 3 and server.sleeps == [0.25, 0.5]
    m = model(retries=1)
    with pytest.raises(K.EndpointError, match="cannot connect"):
        m.predict_proba(["b"])
    assert m.attempts == 2


def test_a_tls_failure_is_said_at_once(server):
    req = httpx.Request("POST", URL)
    err = httpx.ConnectError("[SSL: CERTIFICATE_VERIFY_FAILED] bad", request=req)
    server.replies = [err]
    m = model()
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a"])
    assert str(e.value) == (f"{URL}: TLS error ([SSL: CERTIFICATE_VERIFY_FAILED] bad); check the "
                            "certificate or the URL's scheme")
    assert m.attempts == 1


def test_tls_is_recognised_through_the_exception_chain():
    assert K._is_tls(ssl.SSLError("x"))
    assert K._is_tls(OSError("certificate verify failed"))
    assert K._is_tls(OSError("ssl handshake"))
    outer = OSError("wrapped")
    outer.__cause__ = ssl.SSLError("inner")
    assert K._is_tls(outer)
    ctx = OSError("wrapped")
    ctx.__context__ = OSError("bad CERTIFICATE")
    assert K._is_tls(ctx)
    assert not K._is_tls(OSError("connection refused"))


def test_a_reply_that_is_not_json_is_one_line(server):
    server.replies = [httpx.Response(200, text="<html>oops</html>")]
    with pytest.raises(K.kinds.ReplyError) as e:
        model().predict_proba(["a"])
    assert str(e.value) == f"{URL}: the reply is not JSON (HTTP 200, starts '<html>oops</html>')"


def test_usage_and_the_server_model_are_counted_once_per_request(server):
    server.replies = [httpx.Response(200, json={
        "probs": [[0.5, 0.5], [0.4, 0.6]], "model": "m-1",
        "usage": {"prompt_tokens": 7, "completion_tokens": 2}})]
    cache = Cache()
    seen: list[dict] = []
    cache.put = lambda rows: seen.extend(rows)  # type: ignore[method-assign]
    m = model(cache, batch_size=2)
    m.predict_proba(["a", "b"])
    assert m.tokens == 9 and m.server_model == "m-1"
    assert [(r["text"], r["prompt_tokens"], r["completion_tokens"]) for r in seen] == [
        ("a", 7, 2), ("b", 0, 0)]
    assert seen[0]["request"] == seen[1]["request"] and len(seen[0]["request"]) == 32
    assert seen[0]["key"] == m.request_key("a") and seen[1]["answer"] == [0.4, 0.6]


# ---- budget and concurrency ----------------------------------------------------------------------


def test_the_request_budget_stops_cleanly_and_keeps_what_arrived(server):
    server.replies = [ok()]
    cache = Cache()
    m = model(cache, limits=K.Limits(max_concurrency=1, budget=2))
    with pytest.raises(K.BudgetSpent) as e:
        m.predict_proba(["a", "b", "c", "d"])
    assert str(e.value) == ("--budget 2 requests spent (2 requests, 0 tokens this run); every "
                            "answer so far is stored: rerun the same command to continue")
    assert len(server.requests) == 2 and m.sent == 2 and len(cache.rows) == 2
    # a retried request counts once
    server.replies = [httpx.Response(503), ok()]
    m = model(limits=K.Limits(budget=1))
    m.predict_proba(["x"])
    assert m.sent == 1 and m.attempts == 2


def test_the_token_budget_counts_tokens(server):
    server.replies = [ok(usage={"prompt_tokens": 3, "completion_tokens": 2})]
    m = model(limits=K.Limits(max_concurrency=1, budget=10, budget_unit="tokens"))
    with pytest.raises(K.BudgetSpent, match=r"^--budget 10 tokens spent \(2 requests, 10 "):
        m.predict_proba(["a", "b", "c"])
    assert m.sent == 2 and m.tokens == 10


def test_a_budget_error_comes_after_any_other_error(server):
    async def fail(request):
        return httpx.Response(400, text="no")

    server.replies = [fail]
    m = model(limits=K.Limits(max_concurrency=1, budget=1))
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a", "b"])
    assert not isinstance(e.value, K.BudgetSpent) and "HTTP 400" in str(e.value)


@pytest.mark.parametrize("card_limit,cli_limit,peak", [(2, None, 2), (5, 3, 3), (1, None, 1)])
def test_no_more_requests_in_flight_than_allowed(server, card_limit, cli_limit, peak):
    state = {"now": 0, "peak": 0}
    full = asyncio.Event()

    async def slow(request):
        state["now"] += 1
        state["peak"] = max(state["peak"], state["now"])
        if state["now"] >= peak:
            full.set()
        # the others are let in while this one waits (ceiling: a mutant that lets in fewer)
        try:
            await asyncio.wait_for(full.wait(), 5.0)
        except TimeoutError:
            pass
        state["now"] -= 1
        return ok()

    server.replies = [slow]
    m = model(max_concurrency=card_limit, limits=K.Limits(max_concurrency=cli_limit))
    assert m.concurrency == peak
    m.predict_proba([f"t{i}" for i in range(8)])
    assert state["peak"] == peak and len(server.requests) == 8
    assert server.clients[0]["limits"].max_connections == peak
    assert server.clients[0]["limits"].max_keepalive_connections == peak


def test_asked_from_a_running_event_loop_it_asks_from_a_thread(server):
    server.replies = [ok()]

    async def notebook():
        return model().predict_proba(["a"])

    np.testing.assert_array_equal(asyncio.run(notebook()), [[0.25, 0.75]])


# ---- the rate limit, the writer ------------------------------------------------------------------


def test_the_rate_limit_spaces_request_starts_evenly(monkeypatch):
    sleeps: list[float] = []
    clock = {"t": 100.0}

    async def sleep(s):
        sleeps.append(s)

    monkeypatch.setattr(K.asyncio, "sleep", sleep)
    monkeypatch.setattr(K.time, "monotonic", lambda: clock["t"])

    async def three(rate):
        for _ in range(3):
            await rate.wait()

    rate = K._RateLimit(2.0)
    assert rate.gap == 0.5
    asyncio.run(three(rate))
    assert sleeps == [0.5, 1.0] and rate.next == 101.5
    clock["t"] = 200.0  # long after: no wait, the next start one gap on
    asyncio.run(three(K._RateLimit(4.0)))
    assert sleeps == [0.5, 1.0, 0.25, 0.5]
    unlimited = K._RateLimit(0)
    asyncio.run(three(unlimited))
    assert unlimited.gap == 0.0 and len(sleeps) == 4


def test_the_writer_stores_everything_before_close_returns_and_raises_its_error():
    cache = Cache()
    w = K._Writer(cache)
    w.put([{"key": "a", "answer": 1}])
    w.put([{"key": "b", "answer": 2}, {"key": "c", "answer": 3}])
    w.close()
    assert cache.rows == {"a": 1, "b": 2, "c": 3} and cache.closed
    assert not w.thread.is_alive()

    class Broken(Cache):
        def put(self, rows):
            raise OSError("disk full")

    w = K._Writer(Broken())
    w.put([{"key": "a", "answer": 1}])
    with pytest.raises(OSError, match="disk full"):
        w.close()
    with pytest.raises(OSError, match="disk full"):
        w.put([{"key": "b", "answer": 2}])


def test_the_writer_commits_what_arrived_meanwhile_in_one_batch():
    import threading

    gate, entered = threading.Event(), threading.Event()

    class Slow(Cache):
        def put(self, rows):
            entered.set()
            assert gate.wait(60)
            super().put(rows)

    cache = Slow()
    w = K._Writer(cache)
    w.put([{"key": "a", "answer": 1}])
    assert entered.wait(60)  # the first commit is running: the next three wait for it
    for k in "bcd":
        w.put([{"key": k, "answer": k}])
    gate.set()
    w.close()
    assert cache.puts == [1, 3]


# ---- parsing -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    (None, (None, "requests")), ("500", (500, "requests")), (" 2k ", (2000, "requests")),
    ("1request", (1, "requests")), ("3 requests", (3, "requests")),
    ("20000tokens", (20000, "tokens")), ("20k tokens", (20000, "tokens")),
    ("7token", (7, "tokens")), ("5K TOKENS", (5000, "tokens")),
])
def test_budget_values(text, expected):
    assert K.parse_budget(text) == expected


@pytest.mark.parametrize("text", ["0", "0k", "lots", "1.5", "-3", "k", "tokens", ""])
def test_bad_budgets_are_one_line(text):
    with pytest.raises(InputError) as e:
        K.parse_budget(text)
    assert str(e.value) == (f"--budget {text}: give a number of requests (500) or tokens "
                            "(20000tokens, 20ktokens)")


def test_retry_after_values():
    assert K.retry_after(" 3.5 ") == 3.5 and K.retry_after("0") == 0.0
    assert K.retry_after("-4") == 0.0 and K.retry_after("") is None
    assert K.retry_after(None) is None and K.retry_after("soon") is None
    later = email.utils.format_datetime(
        email.utils.localtime().fromtimestamp(time.time() + 120), usegmt=False)
    assert 100 < K.retry_after(later) <= 120
    assert K.retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_first_line_of_an_error():
    assert K._first_line(OSError("  one\ntwo ")) == "one"
    assert K._first_line(OSError("")) == "OSError"
    assert K._first_line(OSError("x" * 200)) == "x" * 160


def test_an_endpoint_model_takes_its_limits_and_classes():
    m = model(labels=("neg", "pos", "mixed"), max_concurrency=6)
    assert m.concurrency == 6 and m.n_classes_ == 3 and m.limits == K.Limits()
    assert model().n_classes_ is None
    assert model(limits=K.Limits(max_concurrency=2)).concurrency == 2
    assert K.Limits() == K.Limits(None, None, "requests")
    assert repr(m) == f"EndpointModel(json {URL})"


def test_an_invalid_answer_is_a_uniform_row_and_counted(server):
    card = dict(kind="openai-chat", verbalizers={"neg": ("bad",), "pos": ("good",)},
                template="{text} / {text_pair}")
    server.replies = [httpx.Response(200, json={"choices": [{"message": {"content": "Good!"}}]}),
                      httpx.Response(200, json={"choices": [{"message": {"content": "meh"}}]})]
    m = model(**card, max_concurrency=1)
    proba = m.predict_proba(["x", ("y", "z")])
    np.testing.assert_array_equal(proba, [[0.0, 1.0], [0.5, 0.5]])
    assert not m.is_invalid("x") and m.is_invalid(("y", "z")) and m.is_invalid(["y", "z"])


def test_open_endpoint_reads_the_key_only_from_a_trusted_command_line(tmp_path, monkeypatch):
    p = tmp_path / "c.toml"
    p.write_text(f'url = "{URL}"\napi_key_env = "RL_TEST_KEY"\n', encoding="utf-8")
    monkeypatch.delenv("RL_TEST_KEY", raising=False)
    with pytest.raises(InputError) as e:
        K.open_endpoint(str(p), trusted=False)
    assert str(e.value) == (f"--model {p}: the card sends the key in $RL_TEST_KEY to h.test, and "
                            "this run's model comes from a stored run, not this command line; "
                            f"rerun the eval command with --model {p} to send it")
    with pytest.raises(InputError) as e:
        K.open_endpoint(str(p), trusted=True)
    assert str(e.value) == (f"--model {p}: the environment variable RL_TEST_KEY (the card's "
                            "api_key_env) is not set")
    monkeypatch.setenv("RL_TEST_KEY", "k1")
    lim = K.Limits(budget=3)
    m = K.open_endpoint(str(p), trusted=True, limits=lim, cache=Cache())
    assert m._key == "k1" and m.limits is lim and isinstance(m.cache, Cache)
    m = K.open_endpoint(f"endpoint:json:{URL}", trusted=False)
    assert m._key is None and m.card == C.Card(url=URL)


# ---- the card ----------------------------------------------------------------------------------


def _card(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "card.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_full_card_is_read_with_each_value_typed(tmp_path):
    p = _card(tmp_path, f"""
url = "{URL}"
kind = "openai-chat"
request_field = "q"
response_field = "a.b"
model = "m"
template = "Review: {{text}}"
verbalizers = {{ neg = " bad ", pos = ["good", "great "] }}
labels = ["neg", "pos"]
use_logprobs = true
max_tokens = 3
temperature = 1
seed = 5
api_key_env = "K"
max_concurrency = 2
rps = 4
timeout = 9
retries = 0
""")
    c = C.load_card(p)
    assert c == C.Card(url=URL, kind="openai-chat", request_field="q", response_field="a.b",
                       model="m", template="Review: {text}",
                       verbalizers={"neg": ("bad",), "pos": ("good", "great")},
                       labels=("neg", "pos"), use_logprobs=True, max_tokens=3, temperature=1.0,
                       seed=5, api_key_env="K", max_concurrency=2, rps=4.0, timeout=9.0,
                       retries=0, source=str(p.resolve()))
    assert isinstance(c.temperature, float) and isinstance(c.rps, float)
    assert isinstance(c.timeout, float) and c.host == "h.test"
    assert C.load_card(_card(tmp_path, f'url = "{URL}"\nlabels = [0, 1]\n')).labels == ("0", "1")
    assert C.load_card(_card(tmp_path, f'url = "{URL}"\n')) == C.Card(url=URL, source=c.source)


@pytest.mark.parametrize("line", [
    "batch_size = -1", "batch_size = true", "batch_size = 1.5", "timeout = -2",
    "timeout = false", 'timeout = "5"', "use_logprobs = 1", 'model = ""', "model = 3",
    "api_key_env = 1", "seed = true", "seed = 1.5", "labels = \"pos\"", "labels = [1.5]",
    "verbalizers = 3", "request_field = 1", "kind = 1",
])
def test_a_value_of_the_wrong_type_is_named(tmp_path, line):
    p = _card(tmp_path, f'url = "{URL}"\n{line}\n')
    with pytest.raises(InputError) as e:
        C.load_card(p)
    name, value = line.split(" = ", 1)
    import tomllib

    shown = repr(tomllib.loads(line)[name])
    assert str(e.value) == f"--model {p}: {name} = {shown} is not a valid value", value


@pytest.mark.parametrize("body,message", [
    ('verbalizers = { pos = [] }', "verbalizers.pos must be a word or a list of words"),
    ('verbalizers = { pos = [" "] }', "verbalizers.pos must be a word or a list of words"),
    ('verbalizers = { pos = [1] }', "verbalizers.pos must be a word or a list of words"),
    ('response_type = "score"', 'response_type must be "proba" or "label"'),
    ("batch_size = 0", "batch_size and max_concurrency must be >= 1"),
    ("max_concurrency = 0", "batch_size and max_concurrency must be >= 1"),
    ("timeout = 0", "timeout must be > 0 seconds"),
    ('kind = "openai-chat"', "an LLM endpoint needs verbalizers (label = [\"word\", …] for each "
     "label) to map its answers to labels"),
    ('kind = "openai-completions"\nverbalizers = { p = "y" }\ntemplate = "x"',
     "the template must contain {text}"),
    ('kind = "openai-chat"\nverbalizers = { p = "y" }\nbatch_size = 2',
     "batch_size applies to the json and hf-inference kinds"),
    ('kind = "openai-chat"\nverbalizers = { p = "y" }\nlabels = ["q"]',
     "labels and the verbalizers' labels differ"),
    ('response_type = "label"', 'response_type = "label" needs labels = [...] (class names in '
     "class order)"),
    ('kind = "grpc"', "kind: unknown endpoint kind 'grpc' (one of json, openai-chat, "
     "openai-completions, hf-inference)"),
    ("colour = 1", "unknown key 'colour' in the model card (keys: "
     + ", ".join(sorted(f.name for f in dataclasses.fields(C.Card) if f.name != "source"))
     + ")"),
    ("stream = true", "stream applies to the openai-chat and openai-completions kinds"),
])
def test_card_rules_are_one_line_each(tmp_path, body, message):
    p = _card(tmp_path, f'url = "{URL}"\n{body}\n')
    with pytest.raises(InputError) as e:
        C.load_card(p)
    assert str(e.value) in (f"--model {p}: {message}", f"--model {p}: kind: {message}"), str(e.value)


def test_card_files_that_cannot_be_read(tmp_path):
    missing = tmp_path / "none.toml"
    with pytest.raises(InputError) as e:
        C.load_card(missing)
    assert str(e.value) == f"--model {missing}: no such model card"
    bad = _card(tmp_path, "url = \n")
    with pytest.raises(InputError, match=r"not a valid TOML model card \("):
        C.load_card(bad)
    no_url = _card(tmp_path, "kind = 'json'\n")
    with pytest.raises(InputError) as e:
        C.load_card(no_url)
    assert str(e.value) == f"--model {no_url}: the model card has no url"
    binary = tmp_path / "b.toml"
    binary.write_bytes(b"\xff\xfe")
    with pytest.raises(InputError, match=r"cannot read the model card \("):
        C.load_card(binary)


@pytest.mark.parametrize("url,words", [
    ("ftp://h/x", "'ftp://h/x' is not an http(s) URL"), ("http:///x", "is not an http(s) URL"),
    ("http://u:p@h/x", "the URL carries a user name or password; put the key in an "
     "environment variable named by the card's api_key_env"),
    ("http://u@h/x", "the URL carries a user name"),
])
def test_bad_urls(url, words):
    with pytest.raises(InputError) as e:
        C.parse_spec(f"endpoint:json:{url}")
    assert str(e.value).startswith("--model: ") and words in str(e.value)


def test_specs_and_their_stored_forms(tmp_path):
    assert C.is_endpoint(" http://h/x") and C.is_endpoint("https://h") and \
        C.is_endpoint("endpoint:json:http://h") and C.is_endpoint("card.toml ")
    assert not C.is_endpoint("models/bow") and not C.is_endpoint("toml")
    assert C.canonical_spec(" http://h/x ") == "endpoint:json:http://h/x"
    assert C.canonical_spec("https://h/x", "hf-inference") == "endpoint:hf-inference:https://h/x"
    assert C.canonical_spec("endpoint:json:http://h/x") == "endpoint:json:http://h/x"
    with pytest.raises(InputError) as e:
        C.canonical_spec("endpoint:json:http://h/x", "json")
    assert str(e.value) == ("--endpoint-kind json: --model endpoint:json:http://h/x names its "
                            "kind already")
    with pytest.raises(InputError) as e:
        C.canonical_spec("c.toml", "json")
    assert str(e.value) == ("--endpoint-kind json: a model card names its kind itself (kind = "
                            "…); --endpoint-kind goes with --model http(s)://…")
    with pytest.raises(InputError, match=r"^--endpoint-kind: unknown endpoint kind 'grpc'"):
        C.canonical_spec("http://h/x", "grpc")
    with pytest.raises(InputError, match=r"^--model: 'http://' is not an http"):
        C.canonical_spec("http://", "json")
    assert C.canonical_spec("~/c.toml") == str(Path("~/c.toml").expanduser().resolve())
    assert C.parse_spec("http://h/x") == C.Card(url="http://h/x")
    assert C.parse_spec("endpoint:hf-inference:http://h/x") == C.Card(url="http://h/x",
                                                                      kind="hf-inference")
    with pytest.raises(InputError) as e:
        C.parse_spec("endpoint:openai-chat:http://h/x")
    assert str(e.value) == ("--endpoint-kind openai-chat: an LLM endpoint needs a model card "
                            "(the prompt template and the label words): --model card.toml "
                            "(docs/endpoints.md)")
    with pytest.raises(InputError, match=r"^--model endpoint:KIND:URL: unknown endpoint kind "):
        C.parse_spec("endpoint:grpc:http://h/x")
    p = _card(tmp_path, f'url = "{URL}"\n')
    assert C.parse_spec(f" {p} ").source == str(p.resolve())


def test_identity_is_how_a_text_is_asked_not_how_fast():
    c = C.Card(url=URL, model="m", seed=3)
    assert c.identity() == {"url": URL, "kind": "json", "request_field": "text",
                            "response_field": "", "model": "m", "template": "{text}",
                            "max_tokens": 8, "temperature": 0.0, "seed": 3,
                            "use_logprobs": False}
    assert C.Card(url=URL, labels=("a", "b"), verbalizers={"x": ("y",)}).label_names() == \
        ["a", "b"]
    assert C.Card(url=URL, verbalizers={"x": ("y",), "z": ("w",)}).label_names() == ["x", "z"]
    assert C.Card(url=URL).label_names() == []
    defaults = C.Card(url=URL)
    assert (defaults.batch_size, defaults.max_concurrency, defaults.rps, defaults.timeout,
            defaults.retries, defaults.response_type, defaults.max_tokens) == (
        1, 4, 0.0, 30.0, 5, "proba", 8)



def test_edge_values_a_card_accepts(tmp_path):
    c = C.load_card(_card(tmp_path, f'url = "{URL}"\nmax_concurrency = 1\nseed = -3\n'
                                    'batch_size = 1\nrps = 0\nretries = 0\n'))
    assert (c.max_concurrency, c.seed, c.batch_size, c.rps, c.retries) == (1, -3, 1, 0.0, 0)
    with pytest.raises(InputError, match=r"api_key_env = '' is not a valid value$"):
        C.load_card(_card(tmp_path, f'url = "{URL}"\napi_key_env = ""\n'))


def test_a_pair_is_stored_as_json_text(server):
    server.replies = [ok()]
    cache = Cache()
    seen: list[dict] = []
    cache.put = lambda rows: seen.extend(rows)  # type: ignore[method-assign]
    m = model(cache)
    m.predict_proba([("a", "b")])
    assert server.requests[0].read() == b'{"text":["a","b"]}'
    assert seen[0]["text"] == '["a", "b"]' and seen[0]["key"] == m.request_key(("a", "b"))


def test_a_redirect_is_not_followed_nor_taken_for_an_answer(server):
    server.replies = [httpx.Response(300, text="elsewhere")]
    m = model()
    with pytest.raises(K.EndpointError) as e:
        m.predict_proba(["a"])
    assert str(e.value) == f"{URL}: HTTP 300 ('elsewhere'); not retried" and m.attempts == 1


def test_a_streamed_llm_reply_is_read_as_one(server):
    stream = ('data: {"model": "m", "choices": [{"delta": {"content": "Go"}}]}\n\n'
              'data: {"choices": [{"delta": {"content": "od"}}]}\n\ndata: [DONE]\n\n')
    server.replies = [httpx.Response(200, text=stream,
                                     headers={"content-type": "text/event-stream"})]
    m = model(kind="openai-chat", verbalizers={"neg": ("bad",), "pos": ("good",)})
    np.testing.assert_array_equal(m.predict_proba(["x"]), [[0.0, 1.0]])
    assert m.raw_answer("x") == {"text": "Good", "logprobs": None, "model": "m"}
    assert m.server_model == "m"


def test_the_writer_thread_is_a_named_daemon():
    w = K._Writer(Cache())
    assert w.thread.daemon and w.thread.name == "robustlab-endpoint-store"
    w.close()


def test_an_endpoint_model_is_never_pickled():
    import pickle

    with pytest.raises(TypeError) as e:
        pickle.dumps(model(key="k"))
    assert str(e.value) == ("an endpoint model is not pickled (it holds a key); each worker "
                            "opens its own")


def test_an_llm_reply_without_a_content_type_is_read_as_json(server):
    body = b'{"choices": [{"message": {"content": "bad"}}]}'
    server.replies = [httpx.Response(200, content=body)]
    m = model(kind="openai-chat", verbalizers={"neg": ("bad",), "pos": ("good",)})
    assert "content-type" not in httpx.Response(200, content=body).headers
    np.testing.assert_array_equal(m.predict_proba(["x"]), [[1.0, 0.0]])


def test_an_invalid_plain_text_answer_is_remembered_by_its_text(server):
    server.replies = [httpx.Response(200, json={"choices": [{"message": {"content": "meh"}}]})]
    m = model(kind="openai-chat", verbalizers={"neg": ("bad",), "pos": ("good",)})
    m.predict_proba(["so so"])
    assert m.invalid_texts == {"so so"} and m.is_invalid("so so")


def test_a_card_url_that_is_not_http_names_the_key(tmp_path):
    p = _card(tmp_path, 'url = "ftp://h/x"\n')
    with pytest.raises(InputError) as e:
        C.load_card(p)
    assert str(e.value) == f"--model {p}: url: 'ftp://h/x' is not an http(s) URL"


def test_the_query_budget_stops_before_a_request_would_pass_it(server):
    server.replies = [ok()]
    cache = Cache()
    m = model(cache, limits=K.Limits(max_concurrency=1, max_queries=3))
    with pytest.raises(K.QueryBudgetSpent) as e:
        m.predict_proba(["a", "b", "c", "d", "e"])
    assert str(e.value) == ("stopped at the query budget: --max-queries 3 reached (3 queries in "
                            "3 requests this run); every answer so far is stored: rerun the "
                            "same command to continue")
    assert m.stopped == "stopped at the query budget (--max-queries 3)"
    assert m.queries == 3 and len(server.requests) == 3 and len(cache.rows) == 3
    m = model(limits=K.Limits(max_concurrency=1, budget=1))
    with pytest.raises(K.BudgetSpent):
        m.predict_proba(["x", "y"])
    assert m.stopped == "stopped at the budget (--budget 1 requests)"


def test_answers_that_arrive_after_another_request_failed_are_still_stored(server):
    done = asyncio.Event()

    async def reply(request):
        if b"bad" in request.read():
            done.set()
            return httpx.Response(400, text="no")
        # answered only after the failure came back (ceiling: a request never sent)
        try:
            await asyncio.wait_for(done.wait(), 10.0)
        except TimeoutError:
            pass
        return ok()

    server.replies = [reply]
    cache = Cache()
    m = model(cache, max_concurrency=3)
    with pytest.raises(K.EndpointError, match="HTTP 400"):
        m.predict_proba(["good 1", "bad", "good 2"])
    assert sorted(cache.rows) == sorted([m.request_key("good 1"), m.request_key("good 2")])


def test_a_reply_without_usage_is_stored_as_not_reported(server):
    server.replies = [ok()]
    cache = Cache()
    seen: list[dict] = []
    cache.put = lambda rows: seen.extend(rows)  # type: ignore[method-assign]
    m = model(cache)
    m.predict_proba(["a"])
    assert (seen[0]["prompt_tokens"], seen[0]["completion_tokens"]) == (-1, -1)
    assert m.no_usage == 1 and m.tokens == 0


def test_a_response_key_is_the_sha256_of_the_sorted_identity_and_the_text():
    import hashlib
    import json

    m = model()
    ident = json.dumps(m.card.identity(), sort_keys=True)
    assert m.request_key("é") == hashlib.sha256(
        json.dumps([ident, "é"], ensure_ascii=False).encode("utf-8")).hexdigest()
    assert m.request_key("x") != model(response_field="other").request_key("x")


def test_an_invalid_answer_among_three_labels_is_a_uniform_row_of_three(server):
    server.replies = [httpx.Response(200, json={"choices": [{"message": {"content": "b"}}]}),
                      httpx.Response(200, json={"choices": [{"message": {"content": "??"}}]})]
    m = model(kind="openai-chat", verbalizers={"x": ("a",), "y": ("b",), "z": ("c",)},
              max_concurrency=1)
    np.testing.assert_allclose(m.predict_proba(["t1", "t2"]),
                               [[0, 1, 0], [1 / 3, 1 / 3, 1 / 3]])


# ---- in-flight requests: ids, groups, the write-ahead record (issue 34's sent table) -----------


class AheadCache(Cache):
    """A response cache with the write-ahead calls (``exists``, ``put_sent``, ``unanswered``),
    in dicts: ``sent`` holds every recorded request, ``unanswered`` those with no answer."""

    def __init__(self, run_dir: Any = "/runs/r1", in_flight: list[dict] | None = None,
                 exists: bool = True) -> None:
        super().__init__()
        self.run_dir = run_dir
        self.sent: dict[str, list[Any]] = {r["request"]: r["texts"] for r in in_flight or []}
        self.answered: set[str] = set()
        self.reads = 0
        self._exists = exists

    def exists(self):
        return self._exists

    def put_sent(self, rows):
        self.sent.update({r["request"]: list(r["texts"]) for r in rows})

    def put(self, rows):
        super().put(rows)
        self.answered.update(r["request"] for r in rows)

    def unanswered(self):
        self.reads += 1
        return [{"request": r, "texts": t} for r, t in self.sent.items()
                if r not in self.answered]


#: the ceiling of one ask with write-ahead (milliseconds here; a lost record would hang it)
CEILING = 30.0


def ask(m: K.EndpointModel, texts: list[Any]) -> np.ndarray:
    """``m.predict_proba(texts)`` with a ceiling: a write-ahead record that is never committed
    leaves the request waiting for ever (no CPU spent, so mutmut's CPU limit never fires)."""
    import threading

    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(_result(m, texts)), daemon=True)
    t.start()
    t.join(CEILING)
    assert not t.is_alive(), f"predict_proba still waiting after {CEILING:g} s"
    if isinstance(out[0], BaseException):
        raise out[0]
    return out[0]


def _result(m: K.EndpointModel, texts: list[Any]) -> Any:
    try:
        return m.predict_proba(texts)
    except BaseException as exc:  # raised again in the test's thread
        return exc


def _rid(identity: str, scope: str, group: list[Any]) -> str:
    import hashlib
    import json

    payload = json.dumps([identity, scope, group], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def test_a_request_id_is_a_hash_of_the_endpoint_the_run_folder_and_the_texts():
    import json

    m = model(AheadCache("/runs/r1"))
    ident = json.dumps(m.card.identity(), sort_keys=True)
    group = ["é", "b"]
    assert m.request_id(group) == _rid(ident, "/runs/r1", group)
    assert len(m.request_id(group)) == 32
    # the same inputs in another process (a new model on the same folder): the same id
    assert model(AheadCache("/runs/r1")).request_id(["é", "b"]) == m.request_id(group)
    # any change: another id
    others = {
        "run folder": model(AheadCache("/runs/r2")).request_id(group),
        "endpoint": model(AheadCache("/runs/r1"), response_field="other").request_id(group),
        "text": m.request_id(["é", "c"]),
        "order": m.request_id(["b", "é"]),
        "one text fewer": m.request_id(["é"]),
    }
    assert len(set(others.values()) | {m.request_id(group)}) == 6, others
    # a run folder given as a Path is the same folder as its string
    assert model(AheadCache(Path("/runs/r1"))).request_id(group) == m.request_id(group)
    # no store (or one without a folder): the scope is empty, never the text "None"
    assert model().request_id(group) == _rid(ident, "", group)
    assert model(Cache()).request_id(group) == _rid(ident, "", group)


def test_texts_are_grouped_in_batches_in_order_with_their_ids():
    cache = AheadCache()
    m = model(cache, batch_size=2)
    assert m._groups(["a", "b", "c", "d", "e"]) == [
        (m.request_id(["a", "b"]), ["a", "b"]), (m.request_id(["c", "d"]), ["c", "d"]),
        (m.request_id(["e"]), ["e"])]
    assert m._groups([]) == []
    # a cache without write-ahead calls: the same groups, nothing in flight
    plain = model(Cache(), batch_size=3)
    assert plain._groups(["a", "b", "c", "d"]) == [
        (plain.request_id(["a", "b", "c"]), ["a", "b", "c"]), (plain.request_id(["d"]), ["d"])]
    assert plain._in_flight == {}


def test_in_flight_requests_go_first_exactly_as_they_were_then_the_rest_in_batches():
    """Two requests an interrupted run left in flight hold some of the texts asked now: each
    goes again whole (texts not asked now included, its recorded order and id), before the rest
    is grouped anew; one holding none of the texts is not sent; the store is read once."""
    in_flight = [{"request": "r-one", "texts": ["b", "x", "a"]},
                 {"request": "r-two", "texts": ["d"]},
                 {"request": "r-other", "texts": ["zz"]}]
    cache = AheadCache(in_flight=in_flight)
    m = model(cache, batch_size=2)
    groups = m._groups(["a", "b", "c", "d", "e", "f", "g"])
    assert groups == [("r-one", ["b", "x", "a"]), ("r-two", ["d"]),
                      (m.request_id(["c", "e"]), ["c", "e"]),
                      (m.request_id(["f", "g"]), ["f", "g"])]
    assert m._in_flight == {"r-one": ["b", "x", "a"], "r-two": ["d"], "r-other": ["zz"]}
    # read once: a second call uses what was read
    assert m._groups(["zz"]) == [("r-other", ["zz"])] and cache.reads == 1
    # texts of no in-flight request: only batches
    assert m._groups(["q"]) == [(m.request_id(["q"]), ["q"])]


def test_a_request_is_recorded_before_it_goes_out_and_carries_its_id_as_idempotency_key(server):
    cache = AheadCache()
    seen: list[tuple[str, bool]] = []

    async def reply(request):
        rid = request.headers["Idempotency-Key"]
        # the write-ahead row is committed before the request reaches the server
        seen.append((rid, rid in cache.sent))
        n = len(request.read().split(b","))
        return httpx.Response(200, json={"probs": [[0.5, 0.5]] * n})

    server.replies = [reply]
    m = model(cache, batch_size=2, request_field="texts", max_concurrency=1)
    ask(m, ["a", "b", "c"])
    ids = [m.request_id(["a", "b"]), m.request_id(["c"])]
    assert seen == [(ids[0], True), (ids[1], True)]
    assert cache.sent == {ids[0]: ["a", "b"], ids[1]: ["c"]}
    # a stored answer clears it: nothing is in flight, nothing was re-sent
    assert cache.unanswered() == [] and m.resent == 0


def test_the_first_request_of_a_run_with_no_store_goes_alone_and_unrecorded(server):
    cache = AheadCache(exists=False)
    order: list[tuple[str, list[str]]] = []

    async def reply(request):
        order.append((request.headers["Idempotency-Key"], sorted(cache.sent)))
        return ok()

    server.replies = [reply]
    m = model(cache, max_concurrency=4)
    ask(m, ["a", "b"])
    first, second = m.request_id(["a"]), m.request_id(["b"])
    assert order == [(first, []), (second, [second])]
    assert cache.sent == {second: ["b"]}


def test_a_rerun_resends_an_in_flight_request_under_its_recorded_key(server):
    # r-later holds no text asked now: it stays in flight (its texts are asked another time)
    cache = AheadCache(in_flight=[{"request": "r-old", "texts": ["b", "a"]},
                                  {"request": "r-later", "texts": ["z"]}])
    server.replies = [httpx.Response(200, json={"probs": [[0.1, 0.9], [0.8, 0.2]]}),
                      httpx.Response(200, json={"probs": [[0.3, 0.7]]})]
    m = model(cache, batch_size=2, request_field="texts", max_concurrency=1)
    proba = ask(m, ["a", "c"])
    assert [(r.headers["Idempotency-Key"], r.read()) for r in server.requests] == [
        ("r-old", b'{"texts":["b","a"]}'), (m.request_id(["c"]), b'{"texts":["c"]}')]
    np.testing.assert_array_equal(proba, [[0.8, 0.2], [0.3, 0.7]])
    assert m.resent == 1 and m._in_flight == {"r-later": ["z"]}
    assert cache.unanswered() == [{"request": "r-later", "texts": ["z"]}]
    assert cache.rows[m.request_key("b")] == [0.1, 0.9]  # the re-sent request's other text


def test_the_writer_records_sent_requests_first_and_sets_the_future_once_committed():
    import threading

    gate = threading.Event()
    calls: list[tuple[str, Any]] = []

    class Slow(AheadCache):
        def put_sent(self, rows):
            assert gate.wait(60)
            calls.append(("sent", [dict(r) for r in rows]))
            super().put_sent(rows)

        def put(self, rows):
            calls.append(("answers", [r["key"] for r in rows]))
            super().put(rows)

    cache = Slow()
    w = K._Writer(cache)
    w.put([{"key": "k0", "answer": 0, "request": "r0"}])
    done = w.sent([{"request": "r1", "texts": ["a", "b"]}])
    assert not done.done()  # not committed yet: the sender still waits
    gate.set()
    w.close()  # everything handed in is handled: the record committed, its sender let go
    assert done.done() and done.result(timeout=0) is None
    assert ("sent", [{"request": "r1", "texts": ["a", "b"]}]) in calls
    assert ("answers", ["k0"]) in calls and cache.sent == {"r1": ["a", "b"]}


def test_the_writer_fails_a_sent_record_that_could_not_be_committed():
    class Broken(AheadCache):
        def put_sent(self, rows):
            raise OSError("disk full")

    cache = Broken()
    w = K._Writer(cache)
    done = w.sent([{"request": "r1", "texts": ["a"]}])
    w.put([{"key": "k", "answer": 1, "request": "r1"}])
    with pytest.raises(OSError, match="disk full"):
        w.close()
    assert done.done() and isinstance(done.exception(timeout=0), OSError)
    assert cache.rows == {}  # the answer after a failed record is not stored
    # once broken, a later record fails at once
    later = w.sent([{"request": "r2", "texts": ["b"]}])
    assert later.done() and str(later.exception(timeout=0)) == "disk full"


def test_the_store_keeps_a_sent_request_until_its_answer_is_stored(tmp_path):
    from robustlab.runs.store import StoreCache

    cache = StoreCache(tmp_path / "run")
    assert not cache.exists() and cache.unanswered() == []
    cache.put_sent([{"request": "r1", "texts": ["é", "b"]}, {"request": "r2", "texts": ["c"]}])
    assert cache.exists()
    assert cache.unanswered() == [{"request": "r1", "texts": ["é", "b"]},
                                  {"request": "r2", "texts": ["c"]}]
    cache.put([{"key": "kc", "text": "c", "answer": [0.5, 0.5], "request": "r2"}])
    assert cache.unanswered() == [{"request": "r1", "texts": ["é", "b"]}]
    cache.close()


def test_a_card_is_read_as_utf8_whatever_the_locale(tmp_path, monkeypatch):
    """A machine whose locale is Latin-1 (``LANG=de_DE.ISO-8859-1``) reads a file opened with
    no encoding as Latin-1: simulated by the hook pathlib asks for the default encoding."""
    import io

    p = _card(tmp_path, f'url = "{URL}"\nkind = "openai-chat"\n'
                        '[verbalizers]\n"négatif" = ["non"]\n"positif" = ["oui"]\n')
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "latin-1")
    assert Path(p).read_text() != p.read_text(encoding="utf-8")  # the simulation takes effect
    assert C.load_card(p).label_names() == ["négatif", "positif"]


def test_a_rate_below_one_per_second_still_spaces_the_starts(monkeypatch):
    sleeps: list[float] = []
    real = asyncio.sleep
    monkeypatch.setattr(K.asyncio, "sleep", lambda s: sleeps.append(s) or real(0))
    monkeypatch.setattr(K.time, "monotonic", lambda: 50.0)
    rate = K._RateLimit(0.5)
    assert rate.gap == 2.0

    async def two():
        await rate.wait()
        await rate.wait()

    asyncio.run(two())
    assert sleeps == [2.0] and rate.next == 54.0


def test_the_server_model_is_none_until_a_reply_names_one(server):
    server.replies = [ok(), ok(model="m-7b")]
    m = model(max_concurrency=1)
    assert m.server_model is None
    m.predict_proba(["a"])
    assert m.server_model is None  # a reply without "model" names none (the report shows none)
    m.predict_proba(["b"])
    assert m.server_model == "m-7b"
