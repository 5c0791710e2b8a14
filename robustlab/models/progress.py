"""Training progress on stderr (steps, loss, ETA) for ``robustlab train``.

A pretrained model fine-tuned on a loaded 2-core machine trains for minutes; over SSH a silent
terminal looks hung. On a terminal this is a tqdm bar (updated in place); when stderr is not a
terminal (a log file, CI, ``2>train.log``) it is one plain line every :data:`LOG_EVERY_S`
seconds and one at the end, never carriage-return redraws. Studies train many cells and keep
their per-cell bar: a model reports progress only when the caller sets its ``show_progress``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from robustlab.textfmt import echo, printable

#: seconds between two plain progress lines when stderr is not a terminal
LOG_EVERY_S = 10.0
#: seconds between two loss reads on a terminal (reading a CUDA loss syncs the device)
BAR_EVERY_S = 0.5


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    m, s = divmod(seconds, 60)
    h, m = divmod(m, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class TrainProgress:
    """``update(step, loss)`` after each optimiser step; ``close()`` once. ``loss`` may be a
    callable returning the loss (read only when a line is shown, so a GPU loop does not sync at
    every step)."""

    def __init__(self, total: int, desc: str, *, enabled: bool = True,
                 stream: TextIO | None = None, log_every: float = LOG_EVERY_S) -> None:
        self.total, self.desc, self.enabled = int(total), desc, enabled
        self.stream = sys.stderr if stream is None else stream
        self.log_every = log_every
        self.t0 = self.last = time.monotonic()
        self.step, self.loss = 0, float("nan")
        self.bar: Any = None
        if enabled and _isatty(self.stream):
            from tqdm import tqdm  # imported only when a bar is shown

            self.bar = tqdm(total=self.total, desc=printable(desc), unit="step",
                            file=self.stream, dynamic_ncols=True, leave=True)

    def update(self, step: int, loss: Any = None) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        every = BAR_EVERY_S if self.bar is not None else self.log_every
        due = now - self.last >= every or step >= self.total
        if due and loss is not None:
            self.loss = float(loss() if callable(loss) else loss)
        if self.bar is not None:
            self.bar.update(step - self.step)
            if due:
                self.bar.set_postfix(loss=f"{self.loss:.4f}", refresh=False)
        elif due and step < self.total:
            self._line(step, now)
        self.step = step
        if due:
            self.last = now

    def _line(self, step: int, now: float) -> None:
        spent = now - self.t0
        eta = spent / step * (self.total - step) if step else float("nan")
        pct = 100.0 * step / self.total if self.total else 100.0
        echo(f"{self.desc}: step {step}/{self.total} ({pct:.0f}%)  loss {self.loss:.4f}  "
             f"elapsed {_clock(spent)}  ETA {_clock(eta) if eta == eta else '?'}",
             file=self.stream, flush=True)

    def close(self) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.set_postfix(loss=f"{self.loss:.4f}", refresh=False)
            self.bar.close()
        else:
            echo(f"{self.desc}: {self.step}/{self.total} steps done, final loss "
                 f"{self.loss:.4f}, {_clock(time.monotonic() - self.t0)}",
                 file=self.stream, flush=True)
        self.enabled = False


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
