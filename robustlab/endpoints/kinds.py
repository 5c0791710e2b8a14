"""What each endpoint kind sends and what robustlab reads back.

``request_body(card, texts)`` is one request's JSON body; ``answers(card, reply, n)`` splits a
reply into one *answer* per text (what the store keeps: the raw item, never a derived label), and
``probabilities(card, answer)`` turns a stored answer into a row of class probabilities, or None
for an LLM answer that names no label (counted as invalid, never as a class).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from robustlab.endpoints.card import Card
from robustlab.errors import InputError


class ReplyError(InputError):
    """A reply that does not hold what the card declares (one line, naming the URL)."""


def split_text(text: Any) -> tuple[str, str | None]:
    if isinstance(text, tuple | list):
        return str(text[0]), str(text[1])
    return str(text), None


def _set_path(body: dict[str, Any], path: str, value: Any) -> None:
    parts = path.split(".")
    for p in parts[:-1]:
        body = body.setdefault(p, {})
    body[parts[-1]] = value


def get_path(obj: Any, path: str, url: str) -> Any:
    """The value at a dotted path (list items by number): a missing one is a ReplyError."""
    if not path:
        return obj
    for p in path.split("."):
        if isinstance(obj, dict) and p in obj:
            obj = obj[p]
        elif isinstance(obj, list) and p.isdigit() and int(p) < len(obj):
            obj = obj[int(p)]
        else:
            raise ReplyError(f"{url}: the reply has no field {path!r} (the card's "
                             f"response_field); it starts {str(obj)[:120]!r}")
    return obj


def prompt(card: Card, text: Any) -> str:
    first, pair = split_text(text)
    if pair is not None and "{text_pair}" not in card.template:
        raise InputError("the model card's template has no {text_pair} for the second text of "
                         "a pair")
    return card.template.replace("{text_pair}", pair or "").replace("{text}", first)


def request_body(card: Card, texts: list[Any]) -> dict[str, Any]:
    """One request's JSON body for ``texts`` (one text, or a list where the API takes lists)."""
    if card.kind in ("json", "hf-inference"):
        plain = [t if isinstance(t, str) else list(split_text(t)) for t in texts]
        value = plain if card.batch_size > 1 else plain[0]
        body: dict[str, Any] = {}
        _set_path(body, card.request_field if card.kind == "json" else "inputs", value)
        return body
    body = {"temperature": card.temperature, "max_tokens": card.max_tokens}
    if card.model:
        body["model"] = card.model
    if card.seed is not None:
        body["seed"] = card.seed
    if card.stream:  # the usage then comes in the stream's last chunk (OpenAI's stream_options)
        body.update(stream=True, stream_options={"include_usage": True})
    if card.kind == "openai-chat":
        body["messages"] = [{"role": "user", "content": prompt(card, texts[0])}]
        if card.use_logprobs:
            body.update(logprobs=True, top_logprobs=5)
    else:
        body["prompt"] = prompt(card, texts[0])
        if card.use_logprobs:
            body["logprobs"] = 5
    return body


def answers(card: Card, reply: Any, n: int) -> list[Any]:
    """One stored answer per text of a request of ``n`` texts."""
    url = card.url
    if card.kind == "json":
        value = get_path(reply, card.response_field, url)
        if card.batch_size > 1:
            if not isinstance(value, list) or len(value) != n:
                raise ReplyError(f"{url}: expected a list of {n} answers at "
                                 f"{card.response_field or 'the top'}, got {str(value)[:80]!r}")
            return list(value)
        return [value]
    if card.kind == "hf-inference":
        value = reply
        if n == 1 and isinstance(value, list) and value and isinstance(value[0], dict):
            value = [value]
        if not isinstance(value, list) or len(value) != n:
            raise ReplyError(f"{url}: expected {n} lists of {{label, score}}, got "
                             f"{str(value)[:80]!r}")
        return list(value)
    choice = get_path(reply, "choices.0", url)
    if card.kind == "openai-chat":
        text = get_path(choice, "message.content", url)
        lp = (choice.get("logprobs") or {}).get("content") if isinstance(choice, dict) else None
        top = (lp[0].get("top_logprobs") or []) if lp else []
        logprobs = {str(t.get("token")): t.get("logprob") for t in top if isinstance(t, dict)}
    else:
        text = get_path(choice, "text", url)
        lp = choice.get("logprobs") if isinstance(choice, dict) else None
        tops = (lp or {}).get("top_logprobs") or []
        logprobs = dict(tops[0]) if tops and isinstance(tops[0], dict) else {}
    return [{"text": text if isinstance(text, str) else str(text),
             "logprobs": logprobs or None,
             "model": reply.get("model") if isinstance(reply, dict) else None}]


def from_stream(card: Card, body: str) -> dict[str, Any]:
    """An OpenAI-style server-sent event stream (``data: {chunk}`` lines) as the one reply it
    stands for. Some servers answer only as a stream: ``transformers serve`` 4.57 streams
    ``/v1/chat/completions`` whatever ``stream`` says (its non-streaming mode is a TODO)."""
    import json

    parts: list[str] = []
    reply: dict[str, Any] = {}
    logprobs: Any = None
    for line in body.splitlines():
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        try:
            chunk = json.loads(line[5:])
        except ValueError:
            raise ReplyError(f"{card.url}: a streamed chunk is not JSON "
                             f"({line[5:65].strip()!r})") from None
        if not isinstance(chunk, dict):
            continue
        for k in ("model", "usage"):
            if chunk.get(k):
                reply[k] = chunk[k]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") if card.kind == "openai-chat" else choice
            piece = (delta or {}).get("content" if card.kind == "openai-chat" else "text")
            if isinstance(piece, str):
                parts.append(piece)
            if logprobs is None and choice.get("logprobs"):
                logprobs = choice["logprobs"]
    if not reply and not parts:
        raise ReplyError(f"{card.url}: a streamed reply with no chunks (starts "
                         f"{body[:60]!r})")
    text = "".join(parts)
    item: dict[str, Any] = ({"message": {"role": "assistant", "content": text}}
                            if card.kind == "openai-chat" else {"text": text})
    if logprobs is not None:
        item["logprobs"] = logprobs
    return {**reply, "choices": [item]}


def usage(reply: Any) -> tuple[int, int] | None:
    """(prompt, completion) tokens a reply reports; None when it reports none (a classifier's
    JSON, or a stream without a usage chunk: ``transformers serve`` 4.57 sends none), which is
    shown as "not reported by the server", never as 0 tokens."""
    u = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(u, dict):
        return None

    def num(v: Any) -> int:
        return int(v) if isinstance(v, int | float) and not isinstance(v, bool) else 0

    return num(u.get("prompt_tokens")), num(u.get("completion_tokens"))


def shown(answer: Any, width: int = 120) -> str:
    """A stored answer as ``failures`` prints it: an LLM's words (quoted, one line), else the
    raw item; cut to ``width`` characters."""
    text = answer.get("text") if isinstance(answer, dict) and "text" in answer else answer
    if not isinstance(text, str):
        import json

        text = json.dumps(text, ensure_ascii=False)
    text = " ".join(text.split())
    return repr(text if len(text) <= width else text[: width - 1] + "…")


def raw_text(answer: Any, *, tsv: bool = False) -> str:
    """A stored answer as an exported column holds it (``failures --csv``): an LLM's words as
    it answered them, else the raw item as JSON; "" for none. ``tsv``: tabs and line breaks
    written as ``\\t``/``\\n`` (a TSV field cannot hold them; CSV and JSONL quote them)."""
    import json

    if answer is None:
        return ""
    text = answer.get("text") if isinstance(answer, dict) and isinstance(
        answer.get("text"), str) else json.dumps(answer, ensure_ascii=False)
    if tsv:
        text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r") \
            .replace("\n", "\\n")
    return text


def _word(s: str) -> str:
    return re.sub(r"[^\w]+", " ", s.lower()).strip()


def probabilities(card: Card, answer: Any) -> np.ndarray | None:
    """A stored answer as class probabilities (class order: :meth:`Card.label_names`); None
    for an LLM answer that maps to no label."""
    url = card.url
    names = card.label_names()
    if card.kind == "json":
        if card.response_type == "proba":
            if not isinstance(answer, list) or len(answer) < 2 or not all(
                    isinstance(v, int | float) and not isinstance(v, bool) for v in answer):
                raise ReplyError(f"{url}: expected a list of class probabilities, got "
                                 f"{str(answer)[:80]!r}")
            if names and len(answer) != len(names):
                raise ReplyError(f"{url}: {len(answer)} probabilities for the card's "
                                 f"{len(names)} labels")
            return np.asarray(answer, dtype=np.float64)
        return _one_hot(_label_index(card, answer), len(names))
    if card.kind == "hf-inference":
        if not isinstance(answer, list):
            raise ReplyError(f"{url}: expected a list of {{label, score}}, got "
                             f"{str(answer)[:80]!r}")
        size = len(names) or len(answer)
        row = np.zeros(size)
        for item in answer:
            if not isinstance(item, dict) or "label" not in item or "score" not in item:
                raise ReplyError(f"{url}: expected {{label, score}}, got {str(item)[:80]!r}")
            row[_label_index(card, item["label"], size)] = float(item["score"])
        return row
    text = _word(str(answer.get("text", "")))
    words = {label: [_word(w) for w in ws] for label, ws in card.verbalizers.items()}
    order = card.label_names()
    if card.use_logprobs and answer.get("logprobs"):
        scores = []
        for label in order:
            lps = [lp for tok, lp in answer["logprobs"].items()
                   if isinstance(lp, int | float) and _word(tok) and
                   any(w.startswith(_word(tok)) for w in words[label])]
            scores.append(max(lps) if lps else -math.inf)
        if any(s > -math.inf for s in scores):
            z = np.asarray(scores) - max(scores)
            e = np.exp(z)
            return e / e.sum()
    hits = [i for i, label in enumerate(order)
            if any(text == w or text.startswith(w + " ") for w in words[label])]
    if len(hits) != 1:
        return None  # no label word, or words of two labels: invalid, never a guess
    return _one_hot(hits[0], len(order))


def _label_index(card: Card, value: Any, size: int | None = None) -> int:
    names = card.label_names()
    if str(value) in names:
        return names.index(str(value))
    m = re.fullmatch(r"(?:LABEL_)?(\d+)", str(value))
    if m and int(m.group(1)) < (size or len(names)) and not names:
        return int(m.group(1))
    raise ReplyError(f"{card.url}: the reply's label {str(value)[:40]!r} is not one of the "
                     f"card's labels {names}")


def _one_hot(i: int, n: int) -> np.ndarray:
    row = np.zeros(max(n, 2))
    row[i] = 1.0
    return row
