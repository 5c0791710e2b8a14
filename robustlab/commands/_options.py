"""Argument types shared by the study commands (checked by argparse, before anything runs)."""

from __future__ import annotations

import argparse

#: numpy (RandomState, SeedSequence entropy per word), torch and random all accept 0 <= seed < 2**32
SEED_LIMIT = 2**32


def seed(text: str) -> int:
    """``--seed``: an integer 0 <= seed < 2**32 (numpy's limit), refused up front otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid seed {text!r}: expected an integer") from None
    if not 0 <= value < SEED_LIMIT:
        raise argparse.ArgumentTypeError(
            f"seed {value} is out of range: seeds are integers 0 <= seed < 2**32")
    return value
