"""An endpoint as a batch ``predict_proba``: concurrent, rate-limited, retried, every answer
stored as it arrives.

:class:`EndpointModel` asks only texts with no stored answer (the cache is the run's store:
:mod:`robustlab.runs.store.responses`), one request per text or per ``batch_size`` texts where
the API takes lists, at most ``max_concurrency`` in flight (an ``asyncio.Semaphore``), no more
than ``rps`` per second, each with ``timeout``. A 429, a 5xx, a timeout or a dropped connection is
retried up to ``retries`` times after ``Retry-After`` when the server sends one, else an
exponential backoff with full jitter (0.25 s × 2^attempt, at most 30 s). Each reply's answers go
to the store the moment it is read (a writer thread commits whatever arrived during its previous
commit in one transaction, so SQLite never holds up the requests), so a crash, Ctrl-C or ``kill
-9`` loses at most the requests in flight and the replies of one commit, and a rerun asks only
what no stored answer covers.

**In-flight requests** (write-ahead, idempotency keys). A request whose answer never arrived
cannot be proven unsent, so before a request goes out its id and texts are committed to the
store's ``sent`` table, and it carries the id as its ``Idempotency-Key`` header (the same on
every retry). The id is a hash of the endpoint, the run folder and the texts. A rerun finds the
requests recorded as sent and never answered (in flight at a crash or ``kill -9``) and sends each
again exactly as it was, under the same key: a server that honours ``Idempotency-Key`` answers
it from what it kept and charges nothing twice; one that ignores the header answers (and may
charge) those few again, at most ``max_concurrency`` of them, and the rerun says how many it
re-sent (``resent``). The first request of a run that has no store yet goes alone and unrecorded
(nothing is written before an answer arrives, so an unreachable host leaves no run folder); its
id depends only on the run folder and its texts, so a rerun sends it under the same key.

httpx does the HTTP (pooling, timeouts, TLS); what is here is what it does not do: the retry
policy, the rate limit, the budget and the store.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import json
import os
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from robustlab.endpoints import kinds
from robustlab.endpoints.card import Card
from robustlab.errors import InputError

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
BACKOFF_BASE = 0.25
BACKOFF_CAP = 30.0
#: the longest Retry-After honoured (a longer one is an error, not a silent hour's wait)
RETRY_AFTER_CAP = 300.0
#: the backoff's jitter: a generator of its own, so asking never draws from (or moves) the
#: global ``random`` state a perturbation seeds around each text while an eval perturbs the
#: next cells in another thread (robustlab.studies.eval.ahead)
_JITTER = random.Random()


class EndpointError(InputError):
    """The endpoint could not answer (unreachable, TLS, a refused request, retries spent)."""


class BudgetSpent(EndpointError):
    """``--budget`` reached: what was asked is stored; a rerun continues."""


class QueryBudgetSpent(BudgetSpent):
    """``--max-queries`` reached (the attack's budget of texts asked): a rerun continues."""


class ResponseCache(Protocol):
    """Where answers are kept (a run's store: :class:`robustlab.runs.store.StoreCache`). A cache
    that also has ``exists()``, ``put_sent(rows)`` and ``unanswered()`` gets the write-ahead
    record of requests in flight (module docstring)."""

    def get(self, keys: Sequence[str]) -> dict[str, Any]: ...
    def put(self, rows: Sequence[dict[str, Any]]) -> None: ...


@dataclass
class Limits:
    """How hard an endpoint may be asked, from the command line (not the card's identity):
    ``max_concurrency`` overrides the card's; ``budget`` caps the requests (or, with
    ``budget_unit="tokens"``, the tokens) this process may spend; ``max_queries`` caps the
    texts it may ask (``robustlab attack --max-queries``: a query is one text, however the
    card batches them into requests)."""

    max_concurrency: int | None = None
    budget: int | None = None
    budget_unit: str = "requests"
    max_queries: int | None = None
    #: start although the query estimate is larger than ``max_queries`` (stop when spent)
    stop_at_budget: bool = False


def parse_budget(text: str | None) -> tuple[int | None, str]:
    """``--budget 500`` (requests), ``--budget 20000tokens`` / ``20k tokens``."""
    if text is None:
        return None, "requests"
    t = str(text).strip().lower().replace(" ", "")
    unit = "requests"
    for suffix, name in (("tokens", "tokens"), ("token", "tokens"), ("requests", "requests"),
                         ("request", "requests")):
        if t.endswith(suffix):
            t, unit = t[: -len(suffix)], name
            break
    mult = 1
    if t.endswith("k"):
        t, mult = t[:-1], 1000
    if not t.isdigit() or int(t) * mult < 1:
        raise InputError(f"--budget {text}: give a number of requests (500) or tokens "
                         "(20000tokens, 20ktokens)")
    return int(t) * mult, unit


class _Writer:
    """Stores answers from a thread of its own, so the event loop keeps asking while SQLite
    commits (on a loaded machine a commit took longer than a request): each batch of replies
    that arrived during the previous commit goes in one transaction, at once. :meth:`sent`
    records requests before they go out and returns a future set once that is committed.
    :meth:`close` waits until everything handed in is stored (and raises what storing
    raised)."""

    def __init__(self, cache: ResponseCache) -> None:
        import queue
        import threading

        self.cache = cache
        self.queue: queue.Queue[Any] = queue.Queue()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="robustlab-endpoint-store",
                                       daemon=True)
        self.thread.start()

    def put(self, rows: list[dict[str, Any]]) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(("answers", rows, None))

    def sent(self, rows: list[dict[str, Any]]) -> Any:
        """Record requests about to go out; the returned future is set once committed."""
        import concurrent.futures

        done: concurrent.futures.Future[None] = concurrent.futures.Future()
        if self.error is not None:
            done.set_exception(self.error)
        else:
            self.queue.put(("sent", rows, done))
        return done

    def _run(self) -> None:
        import queue

        done = False
        while not done:
            batch = [self.queue.get()]
            while True:
                try:
                    batch.append(self.queue.get_nowait())
                except queue.Empty:
                    break
            done = batch[-1] is None
            parts = [part for part in batch if part is not None]
            # requests about to go out first (their senders wait), then the answers
            sent = [r for kind, rows, _ in parts if kind == "sent" for r in rows]
            waiting = [f for kind, _, f in parts if kind == "sent"]
            rows = [r for kind, part, _ in parts if kind == "answers" for r in part]
            if sent and self.error is None:
                try:
                    self.cache.put_sent(sent)  # type: ignore[attr-defined]
                except BaseException as exc:  # raised to the asking thread
                    self.error = exc
            for f in waiting:
                if self.error is None:
                    f.set_result(None)
                else:
                    f.set_exception(self.error)
            if rows and self.error is None:
                try:
                    self.cache.put(rows)
                except BaseException as exc:  # raised to the asking thread
                    self.error = exc
        close = getattr(self.cache, "close", None)
        if close is not None:
            close()  # this thread's connection

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        if self.error is not None:
            raise self.error


class _RateLimit:
    """At most ``rps`` request starts per second (evenly spaced); 0: no limit."""

    def __init__(self, rps: float) -> None:
        self.gap = 1.0 / rps if rps > 0 else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.gap:
            return
        async with self.lock:
            now = time.monotonic()
            if self.next > now:
                await asyncio.sleep(self.next - now)
            self.next = max(now, self.next) + self.gap


def retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` header asks for (a number or an HTTP date), or None."""
    if not value:
        return None
    v = value.strip()
    try:
        return max(0.0, float(v))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _is_tls(exc: BaseException) -> bool:
    import ssl

    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "CERTIFICATE" in str(seen).upper() or \
                "SSL" in str(seen).upper():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class EndpointModel:
    """A model card as a robustlab model: ``predict_proba(texts)`` (module docstring).

    ``key``: the API key (read by :func:`open_endpoint` from the card's environment variable,
    held only here, sent only to the card's URL). Counters: ``sent`` (requests this process),
    ``tokens`` (prompt + completion tokens this process), ``attempts`` (tries, retries
    included), ``reused`` (texts answered from the store), ``queries`` (texts asked this
    process), ``no_usage`` (replies that reported no token usage), ``resent`` (requests an
    earlier, interrupted run had sent with no answer back, sent again under their
    ``Idempotency-Key``), ``invalid`` (texts whose answer named no label), ``server_model``
    (the model name the server reported)."""

    def __init__(self, card: Card, cache: ResponseCache | None = None, *, key: str | None = None,
                 limits: Limits | None = None) -> None:
        self.card = card
        self.cache = cache
        self._key = key
        self.limits = limits or Limits()
        self.concurrency = int(self.limits.max_concurrency or card.max_concurrency)
        self.sent = self.tokens = self.attempts = self.reused = self.queries = 0
        self.no_usage = self.resent = 0
        #: why this process stopped asking (a spent --budget or --max-queries), else None
        self.stopped: str | None = None
        #: requests recorded as sent and never answered (read from the store once): id -> texts
        self._in_flight: dict[str, list[Any]] | None = None
        self.invalid_texts: set[str] = set()
        self.answers: dict[str, Any] = {}
        self.server_model: str | None = None
        self._identity = json.dumps(card.identity(), sort_keys=True)
        self.n_classes_ = len(card.label_names()) or None

    def __repr__(self) -> str:  # never the key
        return f"EndpointModel({self.card.kind} {self.card.url})"

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("an endpoint model is not pickled (it holds a key); each worker opens "
                        "its own")

    # ---- what is asked ------------------------------------------------------------------------
    def request_key(self, text: Any) -> str:
        """The store's key of one text's answer: the endpoint's identity and the text."""
        payload = json.dumps([self._identity, text], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    def predict_proba(self, texts: Sequence[Any]) -> np.ndarray:
        texts = list(texts)
        keys = [self.request_key(t) for t in texts]
        known = {k: self.answers[k] for k in keys if k in self.answers}
        missing = [k for k in dict.fromkeys(keys) if k not in known]
        if missing and self.cache is not None:
            stored = self.cache.get(missing)
            self.reused += len(stored)
            known.update(stored)
        todo = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True)
                                  if k not in known))
        if todo:
            known.update(self._ask(todo))
        self.answers.update(known)
        rows = []
        width = self.n_classes_
        for t, k in zip(texts, keys, strict=True):
            row = kinds.probabilities(self.card, known[k])
            if row is None:
                self.invalid_texts.add(t if isinstance(t, str) else json.dumps(t))
            rows.append(row)
            if row is not None:
                width = width or len(row)
        width = width or 2
        # an invalid answer gets a uniform row (its argmax is recorded as invalid by eval)
        return np.stack([np.full(width, 1.0 / width) if r is None else r for r in rows])

    def is_invalid(self, text: Any) -> bool:
        return (text if isinstance(text, str) else json.dumps(text)) in self.invalid_texts

    def raw_answer(self, text: Any) -> Any:
        return self.answers.get(self.request_key(text))

    # ---- asking ---------------------------------------------------------------------------------
    def _ask(self, texts: list[Any]) -> dict[str, Any]:
        try:
            return asyncio.run(self._ask_all(texts))
        except RuntimeError as exc:
            if "asyncio.run() cannot be called" not in str(exc):
                raise
        # called from a running loop (a notebook): ask from a thread of its own
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            return pool.submit(asyncio.run, self._ask_all(texts)).result()

    def request_id(self, group: Sequence[Any]) -> str:
        """A request's id and ``Idempotency-Key``: the endpoint, the run folder and the texts
        (the same request of the same run has the same key, in this process or a rerun)."""
        scope = str(getattr(self.cache, "run_dir", "") or "")
        payload = json.dumps([self._identity, scope, list(group)], ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    def _groups(self, texts: list[Any]) -> list[tuple[str, list[Any]]]:
        """``(request id, texts)`` to send: first each request an interrupted run left in
        flight that holds one of ``texts``, again as it was (so its key is the same), then the
        rest in ``batch_size`` groups."""
        if self._in_flight is None:
            unanswered = getattr(self.cache, "unanswered", None)
            self._in_flight = {r["request"]: list(r["texts"]) for r in unanswered()} \
                if unanswered is not None else {}
        groups: list[tuple[str, list[Any]]] = []
        covered: set[str] = set()
        if self._in_flight:
            wanted = {self.request_key(t) for t in texts}
            for rid, group in self._in_flight.items():
                keys = {self.request_key(t) for t in group}
                if keys & wanted:
                    groups.append((rid, group))
                    covered |= keys
        rest = [t for t in texts if not covered or self.request_key(t) not in covered]
        bs = self.card.batch_size
        for i in range(0, len(rest), bs):
            group = rest[i: i + bs]
            groups.append((self.request_id(group), group))
        return groups

    async def _ask_all(self, texts: list[Any]) -> dict[str, Any]:
        import httpx

        groups = self._groups(texts)
        sem = asyncio.Semaphore(self.concurrency)
        rate = _RateLimit(self.card.rps)
        got: dict[str, Any] = {}
        writer = _Writer(self.cache) if self.cache is not None else None
        ahead = writer is not None and hasattr(self.cache, "put_sent")
        # no store yet: the first request goes alone, unrecorded (module docstring)
        first = groups[:1] if ahead and not self.cache.exists() else []  # type: ignore[union-attr]
        groups = groups[len(first):]
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        limits = httpx.Limits(max_connections=self.concurrency,
                              max_keepalive_connections=self.concurrency)
        async with httpx.AsyncClient(timeout=self.card.timeout, limits=limits,
                                     headers=headers, follow_redirects=False,
                                     trust_env=False) as client:
            async def one(rid: str, group: list[Any], record: bool = ahead) -> None:
                async with sem:
                    self._check_budget(len(group))
                    if record:  # write-ahead: committed before the request goes out
                        await asyncio.wrap_future(writer.sent(  # type: ignore[union-attr]
                            [{"request": rid, "texts": group}]))
                    reply = await self._post(client, rate, kinds.request_body(self.card, group),
                                             rid)
                    got.update(self._keep(group, reply, writer, rid))
                    if self._in_flight and self._in_flight.pop(rid, None) is not None:
                        self.resent += 1

            tasks: list[asyncio.Future[None]] = []
            try:
                for rid, group in first:
                    await one(rid, group, record=False)
                tasks = [asyncio.ensure_future(one(rid, g)) for rid, g in groups]
                results = await asyncio.gather(*tasks, return_exceptions=True)
            except BaseException:
                for t in tasks:
                    t.cancel()
                raise
            finally:
                if writer is not None:
                    writer.close()  # every answer that arrived is stored before we go on
        errors = [r for r in results if isinstance(r, BaseException)]
        if errors:
            # what arrived is stored; the first error says why the rest was not
            raise next((e for e in errors if not isinstance(e, BudgetSpent)), errors[0])
        return got

    def _check_budget(self, texts: int = 1) -> None:
        lim = self.limits
        if lim.max_queries is not None and self.queries + texts > lim.max_queries:
            self.stopped = f"stopped at the query budget (--max-queries {lim.max_queries})"
            raise QueryBudgetSpent(f"stopped at the query budget: --max-queries "
                                   f"{lim.max_queries} reached ({self.queries} queries in "
                                   f"{self.sent} requests this run); every answer so far is "
                                   "stored: rerun the same command to continue")
        if lim.budget is not None:
            spent = self.tokens if lim.budget_unit == "tokens" else self.sent
            if spent >= lim.budget:
                self.stopped = f"stopped at the budget (--budget {lim.budget} {lim.budget_unit})"
                raise BudgetSpent(f"--budget {lim.budget} {lim.budget_unit} spent ({self.sent} "
                                  f"requests, {self.tokens} tokens this run); every answer so "
                                  "far is stored: rerun the same command to continue")
        self.sent += 1  # counted when it is let go (once however many tries it takes)
        self.queries += texts

    async def _post(self, client: Any, rate: _RateLimit, body: dict[str, Any],
                    rid: str) -> Any:
        import httpx

        url = self.card.url
        headers = {"Idempotency-Key": rid}  # the same on every try (module docstring)
        last = ""
        for attempt in range(self.card.retries + 1):
            await rate.wait()
            self.attempts += 1
            wait: float | None = None
            try:
                resp = await client.post(url, json=body, headers=headers)
            except httpx.TimeoutException:
                last = f"no reply within {self.card.timeout:g} s"
            except httpx.TransportError as exc:
                if _is_tls(exc):
                    raise EndpointError(f"{url}: TLS error ({_first_line(exc)}); check the "
                                        "certificate or the URL's scheme") from None
                if isinstance(exc, httpx.ConnectError) and attempt >= min(2, self.card.retries):
                    raise EndpointError(f"{url}: cannot connect ({_first_line(exc)}); is the "
                                        "server running and the URL right?") from None
                last = f"connection failed ({_first_line(exc) or type(exc).__name__})"
            else:
                if resp.status_code < 300:
                    if self.card.kind.startswith("openai") and resp.headers.get(
                            "content-type", "").startswith("text/event-stream"):
                        return kinds.from_stream(self.card, resp.text)
                    try:
                        return resp.json()
                    except ValueError:
                        raise kinds.ReplyError(f"{url}: the reply is not JSON (HTTP "
                                               f"{resp.status_code}, starts "
                                               f"{resp.text[:60]!r})") from None
                if resp.status_code not in RETRY_STATUS:
                    raise EndpointError(f"{url}: HTTP {resp.status_code} "
                                        f"({resp.text.strip()[:120]!r}); not retried")
                last = f"HTTP {resp.status_code}"
                wait = retry_after(resp.headers.get("Retry-After"))
                if wait is not None and wait > RETRY_AFTER_CAP:
                    raise EndpointError(f"{url}: HTTP {resp.status_code} asks to retry after "
                                        f"{wait:.0f} s, more than {RETRY_AFTER_CAP:.0f}; rerun "
                                        "later (every answer so far is stored)")
            if attempt == self.card.retries:
                break
            if wait is None:
                wait = _JITTER.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2 ** attempt))
            await asyncio.sleep(wait)
        raise EndpointError(f"{url}: {last} after {self.card.retries + 1} tries; every answer "
                            "so far is stored: rerun the same command to continue")

    def _keep(self, group: list[Any], reply: Any, writer: _Writer | None,
              request: str) -> dict[str, Any]:
        """Split one reply into answers and hand them to the store's writer at once (tied to
        the request's id, so the request is no longer in flight)."""
        items = kinds.answers(self.card, reply, len(group))
        used = kinds.usage(reply)
        if used is None:  # stored as -1: "not reported", never a count of 0
            self.no_usage += 1
            p = c = -1
        else:
            p, c = used
            self.tokens += p + c
        if isinstance(reply, dict) and isinstance(reply.get("model"), str):
            self.server_model = reply["model"]
        rows = [{"key": self.request_key(t), "text": t if isinstance(t, str) else json.dumps(t),
                 "answer": item, "request": request, "prompt_tokens": p if i == 0 else 0,
                 "completion_tokens": c if i == 0 else 0}
                for i, (t, item) in enumerate(zip(group, items, strict=True))]
        if writer is not None:
            writer.put(rows)
        return {r["key"]: r["answer"] for r in rows}


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:160] if text else type(exc).__name__


def open_endpoint(spec: str, *, cache: ResponseCache | None = None, trusted: bool,
                  limits: Limits | None = None) -> EndpointModel:
    """The endpoint a ``--model`` spec names. ``trusted``: the spec (and so the card and its
    URL) was given on this command line; only then is the card's ``api_key_env`` read, so a
    stored run, plan or form cannot send the user's key to a host of its choosing."""
    from robustlab.endpoints.card import parse_spec

    card = parse_spec(spec)
    key = None
    if card.api_key_env:
        if not trusted:
            raise InputError(f"--model {spec}: the card sends the key in ${card.api_key_env} "
                             f"to {card.host}, and this run's model comes from a stored run, "
                             "not this command line; rerun the eval command with --model "
                             f"{spec} to send it")
        key = os.environ.get(card.api_key_env)
        if not key:
            raise InputError(f"--model {spec}: the environment variable {card.api_key_env} "
                             "(the card's api_key_env) is not set")
    return EndpointModel(card, cache, key=key, limits=limits)
