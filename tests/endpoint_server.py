"""A real model server for the endpoint tests and bench: a robustlab-trained classifier over
HTTP (FastAPI), served by uvicorn or through Ray Serve (``--ray``), with fault injection and a
request count.

Run as a process (``python tests/endpoint_server.py --model DIR --port P [--ray]``); the caller
waits until ``GET /stats`` answers. With ``--ray`` it starts Ray and Serve on 127.0.0.1:P. Ray's
start on a loaded 2-core machine timed out repeatedly here (its raylet waits ~40 s for the
dashboard agent; plain ray.init failed the same way at load 15-19, with or without
ray[default]'s extras), so the fast suite serves the same app with uvicorn and the Ray Serve test is
marked slow. Routes:

* ``POST /predict`` — the JSON kind: ``{"text": str}`` -> ``{"probs": [...]}``, or
  ``{"texts": [...]}`` -> ``{"probs": [[...], ...]}``; ``POST /label`` answers label names.
* ``POST /proba`` — ``{"text": str}`` -> the row itself (a bare ``--model URL``'s defaults).
* ``POST /v1/chat/completions`` and ``/v1/completions`` — OpenAI-compatible: the classifier's
  label as a word (``negative``/``positive``), ``not sure`` below 60 % confidence or for a text with digits, with usage
  (chat with ``"stream": true``: server-sent events, the usage in a last chunk only with
  ``stream_options.include_usage``).
* ``POST /control`` ``{"faults": ["429", "500", "slow", "nonjson", "nofield", "badlabel", …],
  "delay": s}`` — the next requests fail in that order; every request waits ``delay`` s;
  ``GET /stats`` — requests received and how often each text was asked; ``POST /reset``.
"""

from __future__ import annotations

import argparse
import threading
import time
from collections import Counter
from typing import Any

WORDS = ["negative", "positive"]


class Model:
    """The served classifier and the server's counts and faults (one per server process)."""

    def __init__(self, model_dir: str) -> None:
        from robustlab.models.registry import load_saved

        self.model = load_saved(model_dir)
        self.lock = threading.Lock()
        self.reset()

    def reset(self) -> dict[str, Any]:
        self.requests = 0
        self.texts: Counter[str] = Counter()
        self.faults: list[str] = []
        self.delay = 0.0
        return {"ok": True}

    def enter(self, texts: list[str]) -> str | None:
        with self.lock:
            self.requests += 1
            self.texts.update(texts)
            fault = self.faults.pop(0) if self.faults else None
        if self.delay:
            time.sleep(self.delay)
        return fault


def fault_reply(fault: str | None) -> Any:
    from fastapi.responses import JSONResponse, PlainTextResponse

    if fault in ("429", "500", "503", "400"):
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
    from fastapi import FastAPI

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
        return {"ok": True}

    @app.post("/reset")
    def do_reset() -> dict:
        with m().lock:
            return m().reset()

    @app.get("/stats")
    def stats() -> dict:
        with m().lock:
            return {"requests": m().requests, "texts": dict(m().texts)}

    @app.post("/predict")
    def predict(body: dict) -> Any:
        many = "texts" in body
        texts = list(body["texts"]) if many else [body["text"]]
        bad = fault_reply(m().enter(texts))
        if bad is not None:
            return bad
        probs = m().model.predict_proba(texts).round(6).tolist()
        return {"probs": probs if many else probs[0]}

    @app.post("/proba")
    def proba(body: dict) -> Any:
        """A bare URL's default: ``{"text": …}`` -> the probability row itself."""
        bad = fault_reply(m().enter([body["text"]]))
        if bad is not None:
            return bad
        return m().model.predict_proba([body["text"]]).round(6).tolist()[0]

    @app.post("/label")
    def label(body: dict) -> Any:
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
    """The same app as a Ray Serve deployment (one replica, so its counts are the server's)."""
    from ray import serve

    app = make_app(model_dir)

    @serve.deployment(num_replicas=1, max_ongoing_requests=64)
    @serve.ingress(app)
    class Classifier:
        pass

    return Classifier.bind()


def main() -> None:
    import os
    import sys
    import urllib.request

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
    import ray
    from ray import serve

    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False,
             _temp_dir=args.tmp, runtime_env={"env_vars": {
                 "PYTHONPATH": os.environ.get("PYTHONPATH", "")}})
    serve.start(http_options={"host": "127.0.0.1", "port": args.port})
    serve.run(ray_app(args.model), name="robustlab-test", route_prefix="/")
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{args.port}/stats", timeout=5).read()
            break
        except OSError:
            time.sleep(0.5)
    print("READY", flush=True)
    sys.stdout.flush()
    try:
        while True:
            time.sleep(3600)
    finally:
        serve.shutdown()
        ray.shutdown()


if __name__ == "__main__":
    main()
