"""A batch of texts as one numpy array of code points, for table-driven character edits.

Why: a per-character Python loop costs ~50-100 ns a character whatever it does, which is as much
as NL-Augmenter's own loop; looking characters up in small numpy tables for a whole batch at once
costs a few ns a character. Each text still draws its randomness from its own stream, so outputs
stay a pure function of (seed, text) and do not depend on the batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["decode", "encode"]


def encode(texts: Sequence[str]) -> Any:
    """All code points of ``texts`` concatenated (uint32; lone surrogates kept)."""
    import numpy as np

    return np.frombuffer("".join(texts).encode("utf-32-le", "surrogatepass"), dtype="<u4")


def decode(cps: Any, lengths: Sequence[int]) -> list[str]:
    """Split the code points back into texts of the given lengths."""
    import numpy as np

    whole = np.asarray(cps, dtype="<u4").tobytes().decode("utf-32-le", "surrogatepass")
    out, a = [], 0
    for n in lengths:
        b = a + n
        out.append(whole[a:b])
        a = b
    return out
