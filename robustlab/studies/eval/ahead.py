"""An eval over an endpoint, pipelined across cells: perturbing, asking and scoring overlap.

A model behind HTTP spends its time waiting for replies (a remote model's latency), a local
perturbation spends CPU (word_synonym's masked LM most of all): done one cell after the other,
the two add up. :class:`Pipeline` runs them side by side, for the sequential executor's cells in
the order it runs them:

* one **perturber** thread perturbs the pending cells in that order, exactly as
  :func:`~robustlab.studies.eval.study.evaluate_cell` would (the same perturbation object built
  from the spec, the same seeds, the same chunks). One thread, never two: adapters of
  NL-Augmenter, TextAttack and CheckList seed and restore the global ``random``/``numpy``
  generators around each text (:mod:`robustlab.perturbations.global_rng`), which two
  perturbing threads would interleave; nothing else in this process draws from them while a
  cell is perturbed (the endpoint client's jitter has a generator of its own);
* one **asker** thread asks the predictor for the clean texts first, then for each perturbed
  cell's changed texts as soon as they exist (whatever was perturbed while the previous
  requests were in flight goes together, ``--max-concurrency`` at a time): the endpoint client
  is only ever called from this thread, so its store writer, counters and caches are used as
  before, and each text is asked once;
* the executor's thread (:meth:`Pipeline.take`) waits until its cell is perturbed and answered,
  then scores it from the predictor's cache and stores it as before.

The result of every cell is what the sequential path computes (tested:
``tests/test_endpoint_ahead.py``). The outcomes of cells perturbed but not yet scored are held in
memory, so the pipeline is used only up to :data:`MAX_TEXTS` perturbed texts per run.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: the most perturbed texts (examples × samples × pending cells) a run pipelines
MAX_TEXTS = 500_000

CellId = tuple[str, int, int]  # (perturbation spec, seed, samples)
#: (spec, texts, seed, samples) -> (the perturbation object, outcomes [sample][example]):
#: :func:`robustlab.studies.eval.study.perturb_cell`
PerturbFn = Callable[[str, Sequence[str], int, int], tuple[Any, list[list[Any]]]]


class Pipeline:
    """Perturbs and asks the pending cells ``cells`` ahead of the executor (module docstring)."""

    def __init__(self, predictor: Any, texts: Sequence[str], cells: Sequence[CellId],
                 perturb: PerturbFn) -> None:
        self.predictor, self.texts, self.perturb = predictor, list(texts), perturb
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.perturbed: dict[CellId, concurrent.futures.Future[Any]] = {}
        self.answered: dict[CellId, concurrent.futures.Future[None]] = {}
        self.clean: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.jobs: queue.Queue[CellId | None] = queue.Queue()
        self.asks: queue.Queue[tuple[CellId | None, list[str]] | None] = queue.Queue()
        self.asks.put((None, self.texts))  # the clean texts first: every cell needs them
        for cell in cells:
            self._schedule(cell)
        self.threads = [threading.Thread(target=self._perturb_loop, daemon=True,
                                         name="robustlab-eval-perturb-ahead"),
                        threading.Thread(target=self._ask_loop, daemon=True,
                                         name="robustlab-eval-ask-ahead")]
        for t in self.threads:
            t.start()

    def _schedule(self, cell: CellId) -> None:
        with self.lock:
            if cell in self.perturbed:
                return
            self.perturbed[cell] = concurrent.futures.Future()
            self.answered[cell] = concurrent.futures.Future()
        self.jobs.put(cell)

    def take(self, spec: str, seed: int, samples: int) -> tuple[Any, list[list[Any]]]:
        """The cell's perturbation object and outcomes ``[sample][example]``, once its changed
        texts and the clean ones are in the predictor's cache (raises what perturbing or
        asking raised)."""
        cell = (spec, int(seed), int(samples))
        self._schedule(cell)  # a cell the plan did not expect: perturbed after the others
        pert, outcomes = self.perturbed[cell].result()
        self.clean.result()
        self.answered[cell].result()
        with self.lock:  # scored once: its outcomes are not kept
            self.perturbed.pop(cell, None)
            self.answered.pop(cell, None)
        return pert, outcomes

    def close(self) -> None:
        """Stop both threads (what they are doing is finished first: a request in flight is
        answered and stored)."""
        self.stop.set()
        self.jobs.put(None)
        self.asks.put(None)
        for t in self.threads:
            t.join()

    # ---- the threads ---------------------------------------------------------------------------
    def _perturb_loop(self) -> None:
        while not self.stop.is_set():
            cell = self.jobs.get()
            if cell is None:
                return
            with self.lock:
                fut, answered = self.perturbed.get(cell), self.answered.get(cell)
            if fut is None or answered is None:
                continue
            spec, seed, samples = cell
            try:
                pert, outcomes = self.perturb(spec, self.texts, seed, samples)
            except BaseException as exc:  # the cell fails with it, as when scored inline
                fut.set_exception(exc)
                answered.set_exception(exc)
                continue
            fut.set_result((pert, outcomes))
            self.asks.put((cell, [o.text for outs in outcomes for o in outs if o.changed]))

    def _ask_loop(self) -> None:
        while True:
            item = self.asks.get()
            if item is None:
                return
            batch = [item]
            last = False
            while True:  # whatever was perturbed meanwhile is asked together
                try:
                    more = self.asks.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    last = True
                    break
                batch.append(more)
            error: BaseException | None = None
            if not self.stop.is_set():
                try:
                    self.predictor.fill([t for _, texts in batch for t in texts])
                except BaseException as exc:  # the batch's cells fail with it, as inline
                    error = exc
            else:
                error = RuntimeError("the eval stopped before this cell was asked")
            for cell, _ in batch:
                fut = self.clean if cell is None else self.answered.get(cell)
                if fut is None or fut.done():
                    continue
                if error is None:
                    fut.set_result(None)
                else:
                    fut.set_exception(error)
            if last:
                return
