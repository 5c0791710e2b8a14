"""The ``responses`` table of a run store: every answer an HTTP endpoint gave, as it arrived.

A model behind an endpoint (:mod:`robustlab.endpoints`) is slow and may be paid for, so each
reply is written here the moment it is read, one row per text, keyed by the request (a hash of
the endpoint's identity and the text: :meth:`robustlab.endpoints.EndpointModel.request_key`). A
rerun after a crash, Ctrl-C or ``kill -9`` reads the answers back instead of asking again, and
the same text under two perturbations is one row. ``request`` ties the texts one request asked
together (a batch), so the requests a run sent are ``COUNT(DISTINCT request)``; the tokens a
reply reports are on its first row, -1 there when the reply reported none (shown as "not
reported by the server", never summed as 0; stores written before that hold 0).

Before a request is sent, its id and texts go to the ``sent`` table (write-ahead, committed
first): a request in ``sent`` with no answer in ``responses`` was in flight when the run stopped.
A rerun sends such a request again as it was, under the same id as its ``Idempotency-Key``
(:mod:`robustlab.endpoints.client`), so a server that honours the header answers it without
charging twice.

The tables are created on demand by the first writer (like ``judgements``): an older store opens
and resumes unchanged, and a reader of a store without it sees no responses. Each row carries a
CRC-32 of its values, verified when read; a damaged row is not used (the text is asked again),
and an answer larger than :data:`MAX_ANSWER` characters is refused, never stored.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from robustlab.runs import payloads
from robustlab.runs.store.base import StoreBase

#: the most characters one stored answer may hold (a class-probability row or an LLM's few
#: words are far smaller; anything larger is not an answer robustlab can read)
MAX_ANSWER = 1 << 20

_TABLE = """CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    answer TEXT NOT NULL,
    request TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    at REAL NOT NULL,
    crc INTEGER NOT NULL
)"""

_SENT = """CREATE TABLE IF NOT EXISTS sent (
    request TEXT PRIMARY KEY,
    texts TEXT NOT NULL,
    at REAL NOT NULL,
    crc INTEGER NOT NULL
)"""

_FIELDS = ("key", "text", "answer", "request", "prompt_tokens", "completion_tokens")


def _crc(row: dict[str, Any]) -> int:
    return payloads.checksum(row["key"], row["text"], row["answer"], row["request"],
                             str(int(row["prompt_tokens"])), str(int(row["completion_tokens"])))


class ResponseOps(StoreBase):
    """Endpoint answers (module docstring)."""

    def has_responses_table(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                                 "name='responses'").fetchone() is not None

    def add_responses(self, rows: Sequence[dict[str, Any]]) -> None:
        """Store one reply's answers (one transaction; a key already stored keeps its row)."""
        values = []
        for r in rows:
            answer = json.dumps(r["answer"], ensure_ascii=False, sort_keys=True)
            if len(answer) > MAX_ANSWER:
                from robustlab.errors import InputError

                raise InputError(f"an endpoint answer of {len(answer)} characters, more than "
                                 f"the {MAX_ANSWER} a run stores")
            row = {**r, "answer": answer, "prompt_tokens": int(r.get("prompt_tokens") or 0),
                   "completion_tokens": int(r.get("completion_tokens") or 0)}
            values.append((*(row[f] for f in _FIELDS), time.time(), _crc(row)))
        if not getattr(self, "_responses_ready", False):  # the table once per connection
            self.conn.execute(_TABLE)
            self._responses_ready = True
        with self.transaction() as c:
            c.executemany("INSERT OR IGNORE INTO responses (key, text, answer, request, "
                          "prompt_tokens, completion_tokens, at, crc) VALUES (?,?,?,?,?,?,?,?)",
                          values)

    def _verified(self, column: str, values: Sequence[str]) -> Iterator[dict[str, Any]]:
        """The rows whose ``column`` is one of ``values`` and whose CRC verifies, with their
        answer decoded (a damaged row is never yielded: it is asked again, never read)."""
        if not values or not self.has_responses_table():
            return
        values = list(values)
        for s in range(0, len(values), 500):
            part = values[s: s + 500]
            marks = ",".join("?" * len(part))
            for r in self.conn.execute(f"SELECT {', '.join(_FIELDS)}, crc FROM responses "
                                       f"WHERE {column} IN ({marks})", part):
                row = dict(r)
                try:
                    if _crc(row) != row["crc"]:
                        continue
                    row["answer"] = json.loads(row["answer"])
                except (TypeError, ValueError, AttributeError):
                    continue
                yield row

    def responses(self, keys: Sequence[str]) -> dict[str, Any]:
        """The stored answers of ``keys`` (those stored and verified)."""
        return {row["key"]: row["answer"] for row in self._verified("key", keys)}

    def answers_by_text(self, texts: Sequence[str]) -> dict[str, Any]:
        """The stored, verified answers of ``texts`` (text -> answer): what ``failures`` shows
        for an answer that named no label. A run asks one endpoint, so a text has one answer."""
        out: dict[str, Any] = {}
        for row in self._verified("text", list(dict.fromkeys(texts))):
            out.setdefault(row["text"], row["answer"])
        return out

    def response_totals(self) -> dict[str, int]:
        """Requests, answers and tokens stored (zeros without the table)."""
        if not self.has_responses_table():
            return {"requests": 0, "answers": 0, "prompt_tokens": 0, "completion_tokens": 0}
        r = self.conn.execute("SELECT COUNT(DISTINCT request), COUNT(*), "
                              "COALESCE(SUM(MAX(prompt_tokens, 0)), 0), "
                              "COALESCE(SUM(MAX(completion_tokens, 0)), 0) FROM responses"
                              ).fetchone()
        return {"requests": int(r[0]), "answers": int(r[1]), "prompt_tokens": int(r[2]),
                "completion_tokens": int(r[3])}

    def add_sent(self, rows: Sequence[dict[str, Any]]) -> None:
        """Record requests about to be sent (``request`` id, ``texts``), in one transaction
        that is committed before any of them goes out."""
        values = []
        for r in rows:
            texts = json.dumps(list(r["texts"]), ensure_ascii=False)
            values.append((r["request"], texts, time.time(),
                           payloads.checksum(r["request"], texts)))
        if not getattr(self, "_sent_ready", False):
            self.conn.execute(_SENT)
            self._sent_ready = True
        with self.transaction() as c:
            c.executemany("INSERT OR IGNORE INTO sent (request, texts, at, crc) VALUES "
                          "(?,?,?,?)", values)

    def unanswered_sent(self) -> list[dict[str, Any]]:
        """The requests recorded as sent whose answer never arrived (in flight when the run
        stopped), oldest first: ``{"request", "texts"}`` (a damaged row is left out)."""
        if self.conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND "
                             "name='sent'").fetchone() is None:
            return []
        answered = "AND request NOT IN (SELECT request FROM responses)" \
            if self.has_responses_table() else ""
        out = []
        for request, texts, crc in self.conn.execute(
                f"SELECT request, texts, crc FROM sent WHERE 1 {answered} ORDER BY at"):
            try:
                if payloads.checksum(request, texts) != crc:
                    continue
                out.append({"request": request, "texts": json.loads(texts)})
            except (TypeError, ValueError):
                continue
        return out

    def requests_without_usage(self) -> int:
        """Stored requests whose reply reported no token usage (0 without the table)."""
        if not self.has_responses_table():
            return 0
        return int(self.conn.execute("SELECT COUNT(DISTINCT request) FROM responses WHERE "
                                     "prompt_tokens < 0").fetchone()[0])
