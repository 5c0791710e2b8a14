"""``robustlab resources check|prepare``: offline resources (NLTK data, WordNet, checkpoints)."""

from __future__ import annotations

import argparse

from robustlab.options import add_quiet_option


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("resources", help="check or prepare offline resources (NLTK, WordNet, ...)")
    p.add_argument("action", choices=["check", "prepare"])
    p.add_argument("names", nargs="*", help="resources to check (default: all)")
    add_quiet_option(p, help="accepted by every command; this one shows no progress")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robustlab import resources

    return resources.main([args.action, *args.names] if args.action == "check" else ["prepare"])
