"""One home for label validation, shared by datasets and every model's ``fit``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustlab.errors import InputError

#: the most classes a label may name (a label of 10**30 is a mistake, not a class index)
MAX_CLASSES = 1_000_000


def check_labels(labels: Sequence[int], n_texts: int, where: str = "labels",
                 min_classes: int = 2) -> np.ndarray:
    """Labels as an int64 array, or :class:`InputError` naming the problem.

    Rules: as many labels as texts, at least one example, integers 0..C-1 with every class
    0..C-1 present (so C is well defined) and at least ``min_classes`` classes.
    """
    if n_texts == 0:
        raise InputError(f"{where}: the dataset is empty (no examples)")
    if len(labels) != n_texts:
        raise InputError(f"{where}: {len(labels)} labels for {n_texts} texts; they must match")
    try:
        ints = [int(v) for v in labels]
        big = next((v for v, i in zip(labels, ints, strict=True) if i >= MAX_CLASSES), None)
        if big is not None:
            raise InputError(f"{where}: labels must be integers 0..C-1, got {big!r} (more than "
                             f"{MAX_CLASSES:,} classes is not a classification task)")
        arr = np.asarray(ints, dtype=np.int64)
        bad = [v for v, a in zip(labels, arr, strict=True) if float(v) != float(a)]
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, InputError):
            raise
        raise InputError(f"{where}: labels must be integers 0..C-1 ({exc})") from exc
    if bad:
        raise InputError(f"{where}: labels must be integers 0..C-1, got {bad[0]!r}")
    present = sorted(set(arr.tolist()))
    if present[0] < 0 or present != list(range(present[-1] + 1)):
        raise InputError(f"{where}: labels must be 0..C-1 with every class present, got "
                         f"{present[:10]}{'…' if len(present) > 10 else ''}; remap them "
                         "(e.g. 1/2 -> 0/1)")
    if len(present) < min_classes:
        raise InputError(f"{where}: only {len(present)} class present ({present}); training "
                         f"needs at least {min_classes} classes")
    return arr


def check_model_classes(labels: Sequence[object], n_classes: int, where: object,
                        name: str) -> None:
    """Every label of the data is a class the model predicts (0..n_classes-1), else one
    :class:`InputError`: a label the model does not have fails every cell of an eval (an
    IndexError) and makes an attack report nonsense (issue 29), so it is refused up front."""
    bad = sorted({y for y in labels if not (isinstance(y, int) and 0 <= y < n_classes)}, key=str)
    if bad:
        raise InputError(f"--dataset {where}: label(s) {', '.join(map(str, bad[:5]))} are not "
                         f"classes of the model {name} (it predicts {n_classes} classes, "
                         f"0..{n_classes - 1}); use data labelled like its training data")
