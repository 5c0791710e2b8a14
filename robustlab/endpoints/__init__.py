"""Models behind HTTP endpoints (docs/endpoints.md): a model card (:mod:`.card`), what each kind
sends and reads (:mod:`.kinds`) and the client that asks (:mod:`.client`). ``robustlab eval
--model card.toml`` (or ``--model http://… --endpoint-kind json``) tests such a model like a
local one; :func:`robustlab.studies.eval.predict.as_predictor` opens it with the run's store as
its response cache.

:data:`LIMITS` holds this process's command-line limits (``--max-concurrency``, ``--budget``):
how hard an endpoint may be asked is no part of a run's identity, so it is not stored with it.
"""

from __future__ import annotations

from typing import Any

from robustlab.endpoints.card import KINDS, Card, canonical_spec, is_endpoint, load_card, parse_spec
from robustlab.endpoints.client import (
    BudgetSpent,
    EndpointError,
    EndpointModel,
    Limits,
    QueryBudgetSpent,
    open_endpoint,
    parse_budget,
)

#: this process's limits (set from the command line by :func:`set_limits`)
LIMITS = Limits()


def set_limits(args: Any, *, budget: bool = True) -> None:
    """``--max-concurrency``, ``--budget`` and ``--max-queries`` of a parsed command line, for
    every endpoint this process opens. ``budget=False``: the command's ``--budget`` is its own
    (bias samples its neighbourhoods to it), not the endpoint's."""
    from robustlab.errors import InputError

    budget, unit = parse_budget(getattr(args, "budget", None) if budget else None)
    conc = getattr(args, "max_concurrency", None)
    if conc is not None and int(conc) < 1:
        raise InputError(f"--max-concurrency must be >= 1, got {conc}")
    queries = getattr(args, "max_queries", None)
    if queries is not None and int(queries) < 1:
        raise InputError(f"--max-queries must be >= 1, got {queries}")
    LIMITS.max_concurrency, LIMITS.budget, LIMITS.budget_unit = conc, budget, unit
    if getattr(args, "stop_at_budget", False) and queries is None:
        raise InputError("--stop-at-budget goes with --max-queries N")
    LIMITS.max_queries = queries
    LIMITS.stop_at_budget = bool(getattr(args, "stop_at_budget", False))


def refuse_over_budget(study: str, queries: int, lower: str) -> None:
    """Refuse a run whose upper bound of ``queries`` exceeds ``--max-queries`` (unless
    ``--stop-at-budget``): one line naming the bound and what to change (``lower``: the study's
    own options that shrink it), before anything is asked or written. Shared by attack and bias."""
    from robustlab.errors import InputError

    if LIMITS.max_queries is not None and queries > LIMITS.max_queries and \
            not LIMITS.stop_at_budget:
        raise InputError(f"--max-queries {LIMITS.max_queries}: this {study} may ask up to "
                         f"{queries:,} queries (an upper bound); raise it to --max-queries "
                         f"{queries}, lower {lower}, or add --stop-at-budget to stop after it "
                         "and continue later")


def add_options(g: Any, *, budget: bool = True, max_queries: bool = False) -> None:
    """``--endpoint-kind``, ``--max-concurrency`` and ``--budget`` (with ``--model``);
    ``max_queries``: ``--max-queries`` instead of ``--budget`` (the attack, whose own
    ``--budget``-like option counts candidates)."""
    g.add_argument("--endpoint-kind", choices=KINDS, default=None,
                   help="with --model http(s)://URL: what the endpoint speaks (default json; "
                   "the LLM kinds need a model card: docs/endpoints.md)")
    g.add_argument("--max-concurrency", type=int, default=None, metavar="N",
                   help="endpoint requests in flight at once (default: the card's, else 4)")
    if budget:
        g.add_argument("--budget", default=None, metavar="N[tokens]",
                       help="stop cleanly after N endpoint requests (or N tokens: "
                       "20000tokens) this run; a rerun continues from the stored answers")
    if max_queries:
        g.add_argument("--max-queries", type=int, default=None, metavar="N",
                       help="endpoint queries (texts asked) this run may send: an attack whose "
                       "estimate is larger is refused before it starts, and a run stops "
                       "cleanly after N (a rerun continues from the stored answers)")
        g.add_argument("--stop-at-budget", action="store_true",
                       help="with --max-queries: start even when the estimate (an upper bound) "
                       "is larger, and stop cleanly once N queries were sent")


__all__ = ["KINDS", "LIMITS", "BudgetSpent", "Card", "EndpointError", "EndpointModel", "Limits",
           "QueryBudgetSpent", "add_options", "canonical_spec", "is_endpoint", "load_card",
           "open_endpoint", "parse_budget", "parse_spec", "set_limits"]
