"""Numbers drawn from a per-text byte stream (:func:`robustlab.perturbations.base.stream_for`).

Why not ``random.Random``: seeding one per text costs more than the cheap perturbations spend on
a whole sentence (see ``bench/bench_perturbations.py``). A SHAKE-128 stream is ready in about a
microsecond and its bytes are read in bulk (``array``, ``numpy.frombuffer``), so a perturbation
pays per *edit*, not per character. Values are read little-endian on every platform, so outputs
do not depend on the machine.
"""

from __future__ import annotations

import sys
from array import array
from typing import Any

__all__ = ["Draws", "u32s", "u64s"]

_BIG = sys.byteorder == "big"
_TO_UNIT = 2.0 ** -53


def u64s(data: bytes) -> array:
    """``data`` as unsigned 64-bit little-endian integers."""
    a = array("Q", data)
    if _BIG:  # pragma: no cover - no big-endian machine in CI
        a.byteswap()
    return a


def u32s(data: bytes) -> array:
    """``data`` as unsigned 32-bit little-endian integers."""
    a = array("I", data)
    if _BIG:  # pragma: no cover
        a.byteswap()
    return a


class Draws:
    """Sequential 64-bit values of a stream; grows by re-reading a longer prefix (the stream is
    an extendable-output function, so the values already handed out stay the same)."""

    __slots__ = ("_i", "_n", "_stream", "_vals")

    def __init__(self, stream: Any, expected: int = 8) -> None:
        self._stream = stream
        self._n = max(8, int(expected))
        self._vals = u64s(stream.digest(8 * self._n))
        self._i = 0

    def u64(self) -> int:
        i = self._i
        if i >= self._n:
            self._n *= 2
            self._vals = u64s(self._stream.digest(8 * self._n))
        self._i = i + 1
        return self._vals[i]

    def random(self) -> float:
        """Uniform in [0, 1) with 53 random bits (like ``random.random``)."""
        return (self.u64() >> 11) * _TO_UNIT

    def below(self, k: int) -> int:
        """Uniform in ``range(k)`` (multiply-shift; bias below k / 2**64)."""
        return (self.u64() * k) >> 64
