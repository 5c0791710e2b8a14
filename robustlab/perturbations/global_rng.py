"""Guarding the global ``random`` / ``numpy.random`` state around other libraries' code.

NL-Augmenter, TextAttack and CheckList draw from, and often reseed, these module-level
generators. robustlab promises never to change anyone's global RNG state, so every adapter runs
foreign code inside :func:`isolated_global_rng` (restore on exit) or, when that code's randomness
must follow robustlab's per-text stream, :func:`seeded_global_rng` (seed inside, restore on exit).
torch's global generator is not covered: saving/restoring it is costly and rarely needed.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def isolated_global_rng() -> Iterator[None]:
    """Restore the global ``random`` (and, if loaded, ``numpy.random``) state on exit."""
    state = random.getstate()
    np = sys.modules.get("numpy")
    np_state = np.random.get_state() if np is not None else None
    try:
        yield
    finally:
        random.setstate(state)
        if np is not None and np_state is not None:
            np.random.set_state(np_state)


@contextmanager
def seeded_global_rng(seed: int) -> Iterator[None]:
    """Global ``random``/``numpy.random`` seeded from ``seed`` inside, restored on exit."""
    import numpy as np

    with isolated_global_rng():
        random.seed(seed)
        np.random.seed(seed % 2**32)
        yield
