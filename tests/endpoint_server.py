"""A real model server for the endpoint tests and bench: a robustlab-trained classifier over
HTTP (FastAPI), served by uvicorn or through Ray Serve (``--ray``), with fault injection and a
request count.

Run as a process (``python tests/endpoint_server.py --model DIR --port P [--ray]``); the caller
waits until ``GET /stats`` answers. With ``--ray`` it starts a private Ray (as lean as it goes:
:func:`lean_ray_env`) and Serve on 127.0.0.1:P, and the deployment serves the same app.
Routes:

* ``POST /predict`` — the JSON kind: ``{"text": str}`` -> ``{"probs": [...]}``, or
  ``{"texts": [...]}`` -> ``{"probs": [[...], ...]}``; ``POST /label`` answers label names.
* ``POST /proba`` — ``{"text": str}`` -> the row itself (a bare ``--model URL``'s defaults).
* ``POST /v1/chat/completions`` and ``/v1/completions`` — OpenAI-compatible: the classifier's
  label as a word (``negative``/``positive``), ``not sure`` below 60 % confidence or for a text with digits, with usage
  (chat with ``"stream": true``: server-sent events, the usage in a last chunk only with
  ``stream_options.include_usage``).
* ``POST /control`` ``{"faults": ["429", "500", "slow", "nonjson", "nofield", "badlabel", …],
  "delay": s}`` — the next requests fail in that order; every request waits ``delay`` s;
  ``GET /stats`` — requests received, how often each text was asked (charged) and how many
  requests were ``replayed``; ``POST /reset``.
* ``Idempotency-Key`` (``/predict``, ``/proba``, ``/label``): a request whose key was answered
  before gets that answer again, not charged (its texts are not counted), as a paid API that
  honours the header does; one that arrives while the first is still being answered waits for
  it. A refused try (an injected fault) keeps nothing, so its retry is answered afresh.
  ``/control`` ``{"idempotency": false}``: the header is ignored, as most servers do.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter
from typing import Any

WORDS = ["negative", "positive"]
#: injected faults that refuse a request (an HTTP error): nothing answered, nothing charged
REFUSED = frozenset({"429", "500", "503", "400"})


class Model:
    """The served classifier and the server's counts and faults (one per server process)."""

    def __init__(self, model_dir: str) -> None:
        from robustlab.models.registry import load_saved

        self.model = load_saved(model_dir)
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> dict[str, Any]:
        self.requests = self.replayed = 0
        self.keyed: dict[str, Slot] = {}
        self.texts: Counter[str] = Counter()
        self.faults: list[str] = []
        self.delay = 0.0
        self.idempotency = True
        return {"ok": True}

    def enter(self, texts: list[str]) -> str | None:
        """Count a request and its texts (not those of a refused one: it is not charged)."""
        with self.lock:
            self.requests += 1
            fault = self.faults.pop(0) if self.faults else None
            if fault not in REFUSED:
                self.texts.update(texts)
        if self.delay:
            time.sleep(self.delay)
        return fault


class Slot:
    """One ``Idempotency-Key``'s answer: set once its first try is answered."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.reply: Any = None


def once(model: Model, key: str | None, answer: Any) -> Any:
    """``answer()`` once per ``Idempotency-Key`` (module docstring); without a key, every time."""
    if not key or not model.idempotency:
        return answer()
    with model.lock:
        slot = model.keyed.get(key)
        if slot is not None:
            model.requests += 1
            model.replayed += 1
        else:
            mine = model.keyed[key] = Slot()
    if slot is not None:
        slot.done.wait(120)
        if slot.reply is None:
            from fastapi.responses import JSONResponse

            return JSONResponse({"error": "the first try of this key was refused"}, 409)
        return slot.reply
    reply = None
    try:
        reply = answer()
        return reply
    finally:
        if isinstance(reply, (dict, list)):
            mine.reply = reply
        else:  # refused or failed: nothing kept, a retry is answered afresh
            with model.lock:
                model.keyed.pop(key, None)
        mine.done.set()


def fault_reply(fault: str | None) -> Any:
    from fastapi.responses import JSONResponse, PlainTextResponse

    if fault in REFUSED:
        headers = {"Retry-After": "1"} if fault == "429" else {}
        return JSONResponse({"error": fault}, status_code=int(fault), headers=headers)
    if fault == "slow":
        time.sleep(4.0)
    if fault == "nonjson":
        return PlainTextResponse("<html>gateway</html>")
    if fault == "nofield":
        return JSONResponse({"scores": []})
    return None


def sse_reply(content: str, usage: dict[str, int] | None) -> Any:
    """A chat answer as OpenAI streams it: a chunk per piece, a last chunk with the usage
    (``stream_options.include_usage``) and no choices, then ``[DONE]``."""
    import json

    from fastapi.responses import StreamingResponse

    def chunk(**kw: Any) -> str:
        return f"data: {json.dumps({'model': 'bow-chat', 'object': 'chat.completion.chunk', **kw})}\n\n"

    half = len(content) // 2
    parts = [chunk(choices=[{"index": 0, "delta": {"role": "assistant", "content": piece}}])
             for piece in (content[:half], content[half:])]
    parts.append(chunk(choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    if usage is not None:
        parts.append(chunk(choices=[], usage=usage))
    parts.append("data: [DONE]\n\n")
    return StreamingResponse(iter(parts), media_type="text/event-stream")


def make_app(model_dir: str) -> Any:
    """The FastAPI app (served by uvicorn, or through Ray Serve: :func:`ray_app`)."""
    from fastapi import FastAPI, Header

    app = FastAPI()
    state: dict[str, Model] = {}

    def m() -> Model:
        if "m" not in state:
            state["m"] = Model(model_dir)
        return state["m"]

    @app.post("/control")
    def control(body: dict) -> dict:
        with m().lock:
            m().faults = list(body.get("faults", []))
            m().delay = float(body.get("delay", 0.0))
            m().idempotency = bool(body.get("idempotency", True))
        return {"ok": True}

    @app.post("/reset")
    def do_reset() -> dict:
        with m().lock:
            return m().reset()

    @app.get("/stats")
    def stats() -> dict:
        with m().lock:
            return {"requests": m().requests, "replayed": m().replayed,
                    "texts": dict(m().texts)}

    @app.post("/predict")
    def predict(body: dict, idempotency_key: str | None = Header(None)) -> Any:
        def answer() -> Any:
            many = "texts" in body
            texts = list(body["texts"]) if many else [body["text"]]
            bad = fault_reply(m().enter(texts))
            if bad is not None:
                return bad
            probs = m().model.predict_proba(texts).round(6).tolist()
            return {"probs": probs if many else probs[0]}

        return once(m(), idempotency_key, answer)

    @app.post("/proba")
    def proba(body: dict, idempotency_key: str | None = Header(None)) -> Any:
        """A bare URL's default: ``{"text": …}`` -> the probability row itself."""
        def answer() -> Any:
            bad = fault_reply(m().enter([body["text"]]))
            if bad is not None:
                return bad
            return m().model.predict_proba([body["text"]]).round(6).tolist()[0]

        return once(m(), idempotency_key, answer)

    @app.post("/label")
    def label(body: dict, idempotency_key: str | None = Header(None)) -> Any:
        def answer() -> Any:
            many = "texts" in body
            texts = list(body["texts"]) if many else [body["text"]]
            fault = m().enter(texts)
            bad = fault_reply(fault)
            if bad is not None:
                return bad
            labels = [WORDS[int(i)] for i in m().model.predict(texts)]
            if fault == "badlabel":
                labels = ["neutral" for _ in labels]
            return {"label": labels if many else labels[0]}

        return once(m(), idempotency_key, answer)

    def llm(text: str) -> tuple[str, int]:
        p = m().model.predict_proba([text])[0]
        # a text with digits (leetspeak) gets an answer that names no label
        unsure = p.max() < 0.6 or any(ch.isdigit() for ch in text)
        word = "not sure" if unsure else WORDS[int(p.argmax())]
        return word, len(text.split())

    @app.post("/v1/chat/completions")
    def chat(body: dict) -> Any:
        text = body["messages"][-1]["content"].rsplit("Text:", 1)[-1].strip()
        bad = fault_reply(m().enter([text]))
        if bad is not None:
            return bad
        word, n = llm(text)
        usage = {"prompt_tokens": n, "completion_tokens": 2}
        if body.get("stream"):  # server-sent events; the usage only when asked for, as OpenAI
            return sse_reply(word.capitalize() + ".", usage if (
                body.get("stream_options") or {}).get("include_usage") else None)
        return {"model": "bow-chat", "choices": [{"index": 0, "message": {
            "role": "assistant", "content": word.capitalize() + "."}}], "usage": usage}

    @app.post("/v1/completions")
    def completions(body: dict) -> Any:
        text = body["prompt"].rsplit("Text:", 1)[-1].strip()
        bad = fault_reply(m().enter([text]))
        if bad is not None:
            return bad
        word, n = llm(text)
        return {"model": "bow-completions", "choices": [{"index": 0, "text": " " + word}],
                "usage": {"prompt_tokens": n, "completion_tokens": 1}}

    return app


def ray_app(model_dir: str) -> Any:
    """The same app as a Ray Serve deployment (one replica, so its counts are the server's; no
    CPU reserved, so it starts on a one-CPU Ray)."""
    from ray import serve

    app = make_app(model_dir)

    @serve.deployment(num_replicas=1, max_ongoing_requests=64,
                      ray_actor_options={"num_cpus": 0},
                      # a loaded machine: the replica's health check waits, as the proxy's does
                      health_check_period_s=30, health_check_timeout_s=120)
    @serve.ingress(app)
    class Classifier:
        pass

    return Classifier.bind()


def lean_ray_env() -> dict[str, str]:
    """Environment for a fast local Ray start besides robustlab's
    :func:`robustlab.runs.ray_backend.lean_imports` (which hides the slow optional import every
    Ray process paid: 5.0 of 5.9 s of ``import ray.dashboard.agent`` here): no usage-stats
    thread, no worker started ahead of need; and Serve's fixed health clocks made generous.

    Serve's controller gives its HTTP proxy actor 5 s to answer a readiness check and kills it
    after three misses (``RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S``, ray/serve/_private/
    constants.py): in a loaded suite run (two busy loops, load ~9 on 2 cores, 10:01 UTC
    2026-11-28) the proxy, still importing, missed them and Serve never came up. A test server
    on a busy CI machine should wait for its proxy, not kill it."""
    return {"RAY_USAGE_STATS_ENABLED": "0", "RAY_enable_worker_prestart": "0",
            "RAY_prestart_worker_first_driver": "0",
            "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "120",
            "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S": "120",
            "RAY_SERVE_PROXY_HEALTH_CHECK_PERIOD_S": "30"}


def serve_with_ray(model_dir: str, port: int, tmp: str | None) -> None:
    """Start Ray and Serve in this process and serve :func:`ray_app` on 127.0.0.1:``port`` until
    terminated. Ray's processes inherit :func:`lean_ray_env`; no dashboard; one CPU."""
    import os
    import sys
    import tempfile

    tmp = tmp or tempfile.mkdtemp(prefix="robustlab-ray-")
    os.environ.update(lean_ray_env())
    t0 = time.monotonic()
    import ray
    from ray import serve

    from robustlab.runs.ray_backend import start_local

    # robustlab's own local start: lean, and on Ray's fixed startup timeout (a busy machine) the
    # attempt's processes are ended and the start tried once more
    start_local(1, runtime_env={"env_vars": {"PYTHONPATH": os.environ["PYTHONPATH"]}},
                _temp_dir=tmp)
    t_ray = time.monotonic() - t0
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    serve.run(ray_app(model_dir), name="robustlab-test", route_prefix="/")
    print(f"RAY-STARTED ray.init {t_ray:.1f} s, serve {time.monotonic() - t0 - t_ray:.1f} s",
          file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(3600)
    finally:
        serve.shutdown()
        ray.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tmp", default=None)
    ap.add_argument("--ray", action="store_true", help="serve through Ray Serve")
    args = ap.parse_args()
    if not args.ray:
        import uvicorn

        print("READY", flush=True)  # uvicorn binds before it serves; the caller polls /stats
        uvicorn.run(make_app(args.model), host="127.0.0.1", port=args.port, log_level="error")
        return
    serve_with_ray(args.model, args.port, args.tmp)


if __name__ == "__main__":
    main()
