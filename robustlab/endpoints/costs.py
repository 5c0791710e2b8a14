"""What asking an endpoint cost, as every study records and shows it (docs/endpoints.md).

:func:`costs` is the ``endpoint`` entry of a run's ``summary.json`` (eval, attack): the run
store's totals (its ``responses`` table, handed in) and this process's share. Token counts come
from the servers' replies; a reply without usage (a classifier's JSON, a stream with no usage
chunk: ``transformers serve`` 4.57) is counted in ``requests_without_usage`` and shown by
:func:`tokens_shown` as "tokens: not reported by the server", never as 0 tokens.
"""

from __future__ import annotations

from typing import Any

NOT_REPORTED = "tokens: not reported by the server"


def costs(store: Any, model: Any) -> dict[str, Any]:
    """The ``endpoint`` summary entry of ``model`` (an :class:`EndpointModel`) over ``store``
    (a run store with ``response_totals``), without the study's invalid-answer counts."""
    card = model.card
    totals = store.response_totals()
    return {"url": card.url, "kind": card.kind, "server_model": model.server_model,
            "template": card.template if card.kind.startswith("openai") else None,
            **totals, "tokens": totals["prompt_tokens"] + totals["completion_tokens"],
            "requests_without_usage": store.requests_without_usage(),
            "sent_this_run": model.sent, "queries_this_run": model.queries,
            "tokens_this_run": model.tokens, "tries_this_run": model.attempts,
            "reused_this_run": model.reused, "resent_this_run": model.resent}


def count_shown(value: Any) -> str | None:
    """A count read from a summary (data): formatted, or None when it is not a number."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value == value \
            and abs(value) < 1e15:
        return f"{int(value):,}"
    return None


def tokens_shown(ep: dict[str, Any]) -> str:
    """"T tokens", "tokens: not reported by the server" when no stored reply reported usage,
    or "T tokens (N requests reported none)" when some did not."""
    requests, missing = ep.get("requests"), ep.get("requests_without_usage")
    tokens = count_shown(ep.get("tokens")) or "?"
    if isinstance(missing, int) and missing > 0 and isinstance(requests, int):
        if missing >= requests:
            return NOT_REPORTED
        return f"{tokens} tokens ({missing:,} requests reported none)"
    return f"{tokens} tokens"


def resent_note(ep: dict[str, Any]) -> str:
    """The requests an interrupted run had in flight that this run sent again, under their
    ``Idempotency-Key`` (a server that honours it charges them once); "" when none."""
    n = ep.get("resent_this_run")
    if not isinstance(n, int) or isinstance(n, bool) or n <= 0:
        return ""
    return (f"; {count_shown(n)} request{'s' * (n != 1)} in flight when an earlier run "
            "stopped sent again with the same Idempotency-Key")


__all__ = ["NOT_REPORTED", "costs", "count_shown", "resent_note", "tokens_shown"]
