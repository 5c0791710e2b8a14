"""The eval study (:class:`robustlab.runs.study.Study`): cells, cell function, summary, outputs.

One cell per (perturbation, seed) — a deterministic perturbation has one cell — keyed
``p<i>|seed=<s>`` and holding ``model``, ``perturbation`` and ``seed`` (what ``robustlab
failures`` and the TUI's failing-examples screen filter on). A cell perturbs every example
``samples`` times (sample 0 with the seed itself, sample j with a seed derived from it),
predicts the perturbed texts and stores, per example and sample, the original and perturbed text,
the label, and the prediction and probability of the label before and after (the run store's
``predictions`` table) plus the full probability rows (its ``records``).

Per cell: A0 (clean accuracy), A1 (accuracy over every perturbed sample), A1 − A0
(:func:`robustlab.metrics.robustness`), the failure rate in CheckList's INV sense (the
prediction changed, among the texts the perturbation changed) and the no-op rate (texts it left
unchanged). The summary gives their mean ± sd over seeds per perturbation.

Speed: the model predicts each distinct text once per process (:class:`~robustlab.studies.eval.
predict.Predictor`). ``prefetch=True`` (Python API) runs the perturbation in a thread a chunk ahead
of the model; it is off by default because bench/bench_eval.py measured no gain on CPU: SST-2
test, 22 perturbations, end to end, a saved BoW took 2.52 s with the thread and 2.01 s without
(the GIL is shared with the Python side of prediction), MiniLM 28.5 s and 26.6 s (2 shared
cores; earlier runs: BoW 6.44/3.62 s, MiniLM 20.84/20.77 s). It may pay where the model runs on a GPU and the CPU idles; that was not measured.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.data.labels import check_model_classes
from robustlab.errors import InputError
from robustlab.runs import inputs as run_inputs
from robustlab.runs.cells import CellOutput
from robustlab.runs.executor import RunReport
from robustlab.runs.inputs import OBJECT, load_options
from robustlab.runs.store import Cell, RunStore
from robustlab.runs.study import Plan, RunContext, summary_base
from robustlab.signature import fingerprint
from robustlab.studies.eval.config import KIND, EvalConfig
from robustlab.studies.eval.predict import Predictor, as_predictor

#: texts perturbed per step of the producer thread (the model predicts the previous step's)
CHUNK = 512
#: the summary's metrics, in table order
METRICS = ("a0", "a1", "delta", "failure_rate", "change_rate", "noop_rate")
FILES = ("summary.json", "results.jsonl", "eval.csv", "eval.png")


def sample_seed(seed: int, sample: int) -> int:
    """The perturbation seed of sample ``sample`` (sample 0: ``seed`` itself)."""
    return seed if sample == 0 else (seed + sample * 0x9E3779B1) % (1 << 32)


def _perturbed_chunks(pert: Any, texts: Sequence[str], seed: int, samples: int
                      ) -> Iterator[tuple[int, int, list[Any]]]:
    """(sample, start index, outcomes) for every chunk of texts and sample."""
    for s in range(samples):
        sd = sample_seed(seed, s)
        for a in range(0, len(texts), CHUNK):
            yield s, a, pert.perturb_outcomes(list(texts[a: a + CHUNK]), sd)


def perturb_cell(spec: str, texts: Sequence[str], seed: int, samples: int
                 ) -> tuple[Any, list[list[Any]]]:
    """A cell's perturbation object and its outcomes ``[sample][example]``, as
    :func:`evaluate_cell` perturbs them (for :mod:`robustlab.studies.eval.ahead`)."""
    from robustlab.perturbations.registry import parse_spec

    pert = parse_spec(spec)
    outcomes: list[list[Any]] = [[None] * len(texts) for _ in range(samples)]
    for s, a, outs in _perturbed_chunks(pert, texts, seed, samples):
        outcomes[s][a: a + len(outs)] = outs
    return pert, outcomes


def _ahead(gen: Iterator[Any], depth: int = 2) -> Iterator[Any]:
    """``gen`` produced by a thread up to ``depth`` items ahead of the consumer (the CPU
    perturbs the next chunk while the model predicts this one: torch releases the GIL)."""
    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    done = object()
    stop = threading.Event()

    def produce() -> None:
        try:
            for item in gen:
                if stop.is_set():
                    return
                q.put(("ok", item))
            q.put(("ok", done))
        except BaseException as exc:  # handed to the consumer, raised there
            q.put(("err", exc))

    t = threading.Thread(target=produce, name="robustlab-eval-perturb", daemon=True)
    t.start()
    try:
        while True:
            tag, item = q.get()
            if tag == "err":
                raise item
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while t.is_alive():  # unblock a producer waiting on a full queue
            try:
                q.get_nowait()
            except queue.Empty:
                t.join(0.05)


def evaluate_cell(predictor: Predictor, examples: Sequence[tuple[str, int]], spec: str,
                  seed: int, samples: int, *, prefetch: bool = False,
                  ahead: Any = None) -> CellOutput:
    """One perturbation and seed over every example (module docstring). ``ahead``: a
    :class:`~robustlab.studies.eval.ahead.Pipeline` that perturbed and asked this cell's texts
    while earlier cells were scored (an endpoint's eval)."""
    from robustlab.metrics import robustness
    from robustlab.metrics.checklist_tests import CHANGED, INV, checklist_type, example_fails
    from robustlab.perturbations.registry import parse_spec

    t0 = time.perf_counter()
    texts = [t for t, _ in examples]
    labels = np.asarray([y for _, y in examples], dtype=np.int64)
    n = len(texts)
    perturb_wait = 0.0
    if ahead is not None:
        tw = time.perf_counter()
        pert, outcomes = ahead.take(spec, seed, samples)
        perturb_wait = time.perf_counter() - tw
        clean = np.stack([predictor.cache[t] for t in texts]) if n else np.zeros((0, 0))
    else:
        clean = predictor(texts)
    pred0 = clean.argmax(axis=1)
    # an endpoint's answer that names no label (an LLM's): invalid, never a class
    is_invalid = getattr(predictor.model, "is_invalid", None)
    if is_invalid is not None:
        pred0 = np.asarray([-1 if is_invalid(t) else int(p) for t, p in zip(texts, pred0,
                                                                            strict=True)])
    if ahead is None:
        pert = parse_spec(spec)
        outcomes = [[None] * n for _ in range(samples)]
        chunks = _perturbed_chunks(pert, texts, seed, samples)
        it = _ahead(chunks) if prefetch else chunks
    else:
        it = iter(())
    while True:
        tw = time.perf_counter()
        item = next(it, None)
        perturb_wait += time.perf_counter() - tw
        if item is None:
            break
        s, a, outs = item
        outcomes[s][a: a + len(outs)] = outs
        predictor.fill([o.text for o in outs if o.changed])  # no-ops reuse the clean row
    test, expectation = checklist_type(pert, clean.shape[1] if n else 2)
    predictions, records = [], []
    correct = changed = failed = flipped = errors = invalid = 0
    for i in range(n):
        y = int(labels[i])
        for s in range(samples):
            o = outcomes[s][i]
            p_after = predictor.cache[o.text] if o.changed else clean[i]
            pa = int(p_after.argmax())
            if is_invalid is not None and is_invalid(o.text):
                pa = -1
                invalid += 1
            correct += pa == y
            errors += o.error is not None
            if o.changed:
                changed += 1
                flipped += pa != int(pred0[i])
                failed += bool(example_fails(test, int(pred0[i]), pa, float(clean[i][y]),
                                             float(p_after[y])))
            idx = i * samples + s
            predictions.append({"idx": idx, "original": texts[i], "perturbed": o.text,
                                "label": y, "pred_before": int(pred0[i]),
                                "prob_before": round(float(clean[i][y]), 6),
                                "pred_after": pa, "prob_after": round(float(p_after[y]), 6)})
            records.append({"idx": idx, "example": i, "sample": s, "changed": bool(o.changed),
                            "error": o.error,
                            "proba_before": [round(float(v), 6) for v in clean[i]],
                            "proba_after": [round(float(v), 6) for v in p_after]})
    rows = n * samples
    if rows and errors == rows:
        raise RuntimeError(f"{spec}: the perturbation failed on every text (first error: "
                           f"{next(o.error for o in outcomes[0] if o.error)})")
    a0 = float(np.mean(pred0 == labels)) if n else float("nan")
    # A1 only where the original label still holds (INV): never against a label the
    # perturbation invalidated (a DIR or "changed" test reports its rates instead)
    a1 = (correct / rows if rows else float("nan")) if test == INV else None
    # the row's name: a label the user gave (spec@label), else the full spec (char_swap and
    # char_swap:pps=3 are two rows, never two "char_swap")
    label = getattr(pert, "_label", None) or spec
    result = {"perturbation": spec, "label": label, "seed": int(seed),
              "samples": int(samples), "n": n, "rows": rows, "a0": a0, "a1": a1,
              "delta": None if a1 is None else float(robustness(a1, a0)),
              "test": test, "expectation": expectation, "n_classes": int(clean.shape[1]) if n
              else None, "changed": changed, "failed": failed if test != CHANGED else None,
              "flipped": flipped,
              "failure_rate": failed / changed if changed and test != CHANGED else None,
              "change_rate": flipped / changed if changed else None,
              "noop_rate": (rows - changed) / rows if rows else None, "errors": errors,
              **({"invalid": invalid, "invalid_clean": int(np.sum(pred0 < 0))}
                 if is_invalid is not None else {}),
              "perturb_wait_seconds": perturb_wait, "seconds": time.perf_counter() - t0}
    return CellOutput(result=result, records=records, predictions=predictions)


#: per worker process: the predictor of a study's cell function (key -> Predictor)
_PREDICTORS: dict[str, Predictor] = {}


class EvalCells:
    """The cell function, picklable for the process and Ray executors: it carries the examples
    and the model (a spec each worker loads once, or a Python object shipped as it is); the
    sequential executor uses the driver's own predictor, so its cache spans every cell."""

    def __init__(self, examples: Sequence[tuple[str, int]], model: Any, *, device: str,
                 batch_size: int, signature: str, predictor: Predictor | None = None,
                 prefetch: bool = False, run_dir: Any = None, trusted: bool = False,
                 ahead_cells: Sequence[tuple[str, int, int]] | None = None) -> None:
        import uuid

        self.examples = list(examples)
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.signature = signature
        self.predictor = predictor
        self.prefetch = prefetch
        #: an endpoint's answers go to this run's store; its key is read only when trusted
        self.run_dir, self.trusted = run_dir, trusted
        self.key = uuid.uuid4().hex
        #: the pending cells an endpoint's eval perturbs and asks ahead (robustlab.studies.
        #: eval.ahead), in the order the sequential executor runs them; started by the first cell
        self.ahead_cells = list(ahead_cells) if ahead_cells is not None else None
        self.pipeline: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # each worker loads its own predictor; the pipeline's threads are this process's
        return {**self.__dict__, "predictor": None, "pipeline": None, "ahead_cells": None}

    def close(self) -> None:
        """Stop the pipeline's threads (after the executor ran every cell)."""
        if self.pipeline is not None:
            self.pipeline.close()
            self.pipeline = None

    def _predictor(self) -> Predictor:
        if self.predictor is not None:
            return self.predictor
        hit = _PREDICTORS.get(self.key)
        if hit is None:
            hit = as_predictor(self.model, device=self.device, batch_size=self.batch_size,
                               run_dir=self.run_dir, trusted=self.trusted)
            _PREDICTORS.clear()  # one study per process at a time
            _PREDICTORS[self.key] = hit
        return hit

    def __call__(self, _kind: str, params: dict[str, Any]) -> CellOutput:
        if self.ahead_cells and self.pipeline is None:
            from robustlab.studies.eval.ahead import Pipeline

            self.pipeline = Pipeline(self._predictor(), [t for t, _ in self.examples],
                                     self.ahead_cells, perturb_cell)
        out = evaluate_cell(self._predictor(), self.examples, params["perturbation"],
                            int(params["seed"]), int(params["samples"]), prefetch=self.prefetch,
                            ahead=self.pipeline)
        out.result["signature"] = self.signature
        out.signature = self.signature
        return out


# ---- the summary ------------------------------------------------------------------------------------


def summarise(results: Sequence[dict[str, Any]], perturbations: Sequence[str]
              ) -> list[dict[str, Any]]:
    """One row per perturbation, worst first (:func:`by_harm`): each metric's mean ± sd over
    its seeds, and its CheckList test type (INV, DIR or changed)."""
    from robustlab.metrics import seed_spread

    by: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by.setdefault(r["perturbation"], []).append(r)
    rows = []
    for spec in perturbations:
        rs = sorted(by.get(spec, []), key=lambda r: r["seed"])
        if not rs:
            continue
        fails = [r.get("failed") for r in rs]
        row: dict[str, Any] = {"perturbation": spec, "label": rs[0].get("label") or spec,
                               "test": rs[0].get("test", "INV"),
                               "expectation": rs[0].get("expectation"),
                               "seeds": [r["seed"] for r in rs], "samples": rs[0]["samples"],
                               "n": rs[0]["n"], "changed": sum(r["changed"] for r in rs),
                               "failed": None if None in fails else sum(fails),
                               "errors": sum(r["errors"] for r in rs)}
        if any("invalid" in r for r in rs):  # an LLM endpoint's answers that named no label
            row["invalid"] = sum(int(r.get("invalid") or 0) for r in rs)
        for m in METRICS:
            row[m] = seed_spread([np.nan if r.get(m) is None else r[m] for r in rs])
        rows.append(row)
    return by_harm(rows)


def _mean(v: Any) -> float | None:
    m = v.get("mean") if isinstance(v, dict) else v
    return None if m is None or m != m else float(m)


def by_harm(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows worst first: the largest accuracy loss (A1 − A0, most negative first; a test without
    A1 counts as no loss), then the highest failure rate; ties keep their order."""
    def key(r: dict[str, Any]) -> tuple[float, float]:
        d = _mean(r.get("delta"))
        f = _mean(r.get("failure_rate"))
        return (0.0 if d is None else d, -(f or 0.0))

    return sorted(rows, key=key)


#: a clean accuracy within this of the majority-class rate is at chance level
CHANCE_MARGIN = 0.05


def headline(rows: Sequence[dict[str, Any]], top: int = 3) -> str:
    """One line naming the worst perturbations (``rows`` worst first, see :func:`by_harm`)."""
    if not rows:
        return "no perturbation finished yet"
    parts = []
    for r in rows[:top]:
        d, f = r.get("delta"), r.get("failure_rate")
        bits = [f"A1-A0 {fmt(d)}"] if _mean(d) is not None else []
        if _mean(f) is not None:
            bits.append(f"fail {fmt(f)}")
        elif _mean(r.get("change_rate")) is not None:
            bits.append(f"changed {fmt(r['change_rate'])}")
        parts.append(f"{r['label']} ({', '.join(bits) or 'no result'})")
    return "worst: " + "; ".join(parts)


def chance_warning(clean: float | None, labels: Sequence[int]) -> str | None:
    """A warning when A0 is within :data:`CHANCE_MARGIN` of the majority-class rate: small
    drops then say nothing about robustness (a model at chance cannot get much worse)."""
    if clean is None or not labels:
        return None
    counts = np.bincount(np.asarray(labels, dtype=np.int64))
    majority = float(counts.max() / counts.sum())
    if clean > majority + CHANCE_MARGIN:
        return None
    return (f"clean accuracy A0 {fmt(clean)} is within {fmt(CHANCE_MARGIN)} of the "
            f"majority-class rate {fmt(majority)}: the model is at chance level, so small "
            "drops under perturbation say nothing about its robustness")


def fmt(v: Any) -> str:
    """The one number format of eval results (stdout, CSV, HTML, TUI, JUnit): a fraction with
    3 decimals; mean±sd over seeds where more than one seed ran; '-' when missing."""
    from robustlab.textfmt import spread_text

    if not isinstance(v, dict):
        v = None if v is None or v != v else {"mean": float(v), "n": 1}
    return spread_text(v, DIGITS)


#: decimals of every eval number (:func:`fmt`)
DIGITS = 3


def test_header(r: dict[str, Any]) -> str:
    """The test column: INV / DIR flip / changed, with ``judged n=K`` where the row is scored
    on judged samples (:mod:`robustlab.studies.eval.judge`) or ``judging k/n`` while partly
    judged."""
    from robustlab.metrics.checklist_tests import header
    from robustlab.studies.eval.judge import judged_marker
    from robustlab.tasks.stored import is_task_test, rule

    if is_task_test(r.get("test")):  # a task's failure rule (robustlab.tasks.stored)
        return rule(r["test"])
    return header(r.get("test", "INV"), r.get("expectation")) + judged_marker(r)


def table_rows(rows: Sequence[dict[str, Any]]) -> list[list[str]]:
    """The summary as printed rows (fractions; mean±sd over seeds)."""
    return [[r["label"], test_header(r), fmt({**r["a0"], "n": 1}), fmt(r["a1"]),
             fmt(r["delta"]), fmt(r["failure_rate"]), fmt(r.get("change_rate")),
             fmt(r["noop_rate"]), str(len(r["seeds"]))] for r in rows]


TABLE_HEAD = ["perturbation", "test", "A0", "A1", "A1-A0", "fail rate", "changed",
              "no-op", "seeds"]


def accuracy_figure(rows: Sequence[dict[str, Any]], clean: float | None) -> Any:
    """Accuracy per perturbation, clean (A0) beside perturbed (A1, with its sd over seeds), as
    fractions; INV tests only (a label-changing perturbation has no A1)."""
    from robustlab.plots import legend_outside, new_figure, short_name

    rows = [r for r in rows if _mean(r.get("a1")) is not None]
    n = len(rows)
    fig = new_figure(max(5.0, 0.42 * n + 2.0), 3.6)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(n)
    a0 = [r["a0"]["mean"] or 0 for r in rows]
    a1 = [r["a1"]["mean"] or 0 for r in rows]
    sd = [r["a1"]["std"] or 0 for r in rows]
    ax.bar(x - 0.2, a0, 0.4, label="clean (A0)", color="#9aa5b1")
    ax.bar(x + 0.2, a1, 0.4, yerr=sd, capsize=2, label="perturbed (A1)", color="#d9534f")
    ax.set_xticks(x)
    ax.set_xticklabels([short_name(r["label"], 24) for r in rows], rotation=60, ha="right")
    ax.set_ylabel("accuracy")
    low = min([*a0, *(a - d for a, d in zip(a1, sd, strict=True))], default=0.0)
    ax.set_ylim(max(0.0, np.floor(low * 10) / 10 - 0.1), 1.0)  # differences stay visible
    ax.set_title("accuracy, worst first" +
                 (f" (clean A0 {fmt(clean)})" if clean is not None else ""))
    legend_outside(fig, ax)
    return fig


def write_csv(path: Path, rows: Sequence[dict[str, Any]]) -> None:
    """The per-perturbation table, worst first, numbers as :func:`fmt` writes them."""
    from robustlab.data.files import write_rows

    flat = []
    for r in rows:
        d = {"perturbation": r["perturbation"], "test": test_header(r),
             "seeds": ",".join(map(str, r["seeds"])), "samples": r["samples"], "n": r["n"],
             "changed": r["changed"], "failed": "" if r["failed"] is None else r["failed"],
             "errors": r["errors"]}
        for m in METRICS:
            d[m] = fmt(r[m].get("mean"))
            d[f"{m}_sd"] = fmt(r[m].get("std"))
        flat.append(d)
    write_rows(path, flat, columns=["perturbation", "test", "seeds", "samples", "n",
                                    *[c for m in METRICS for c in (m, f"{m}_sd")],
                                    "changed", "failed", "errors"])


# ---- the study ------------------------------------------------------------------------------------


def _check_labels(examples: Sequence[Any], predictor: Any, where: Any, name: str) -> None:
    """The data's labels are classes of the model (one model call on the first text)."""
    import numpy as np

    n = int(np.asarray(predictor.proba([examples[0][0]])).shape[-1])
    check_model_classes([e[1] for e in examples], n, where, name)


@dataclass
class Eval:
    """The eval study. From the command line (and ``robustlab resume``) everything comes from
    :attr:`config`; from Python, ``model`` (an object: see :mod:`robustlab.studies.eval.predict`)
    and ``examples`` ([(text, label)]) may stand in for what the config names (its ``model`` is
    then ``object:NAME``). ``prefetch``: perturb ahead of the model in a thread (speed only; off:
    see the module docstring)."""

    config: EvalConfig
    model: Any = None
    examples: Sequence[tuple[str, int]] | None = None
    prefetch: bool = False
    kind: ClassVar[str] = KIND

    def inputs(self) -> list[tuple[str, str | None, str]]:
        return run_inputs.data_and_model(self.config.dataset, self.config.model,
                                         data_given=self.examples is not None,
                                         model_given=self.model is not None)

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        """Read the examples and load the model (nothing written yet: a checkpoint without a
        trained head, or data that cannot be read, stops here)."""
        from robustlab.data.datasets import load_examples
        from robustlab.models.device import check_device

        cfg = self.config
        if cfg.model.startswith(OBJECT) and self.model is None:
            raise InputError(f"this eval run was made from Python with a model object "
                             f"({cfg.model[len(OBJECT):][:60]!r}); resume it from Python with "
                             "the same object")
        examples = self.examples
        where = cfg.dataset.get("path") or cfg.dataset.get("name")
        if examples is None:
            ctx.say(f"reading --dataset {where}")
            examples = load_examples(str(where), n=cfg.num_examples,
                                     **load_options(cfg.dataset))
        elif cfg.num_examples is not None:
            examples = list(examples)[: cfg.num_examples]
        if not examples:
            raise InputError(f"--dataset {where}: no examples")
        warnings = [w for w in [self._overlap(examples, str(where))] if w]
        for w in warnings:
            ctx.say(f"warning: {w}")
        device = check_device(ctx.device)
        name = cfg.model.removeprefix(OBJECT)
        ctx.say(f"loading model {name} on {device} (evaluated as it is: nothing is trained)")
        predictor = as_predictor(self.model if self.model is not None else cfg.model,
                                 device=device, batch_size=cfg.batch_size, name=name,
                                 run_dir=out, trusted=ctx.may_send_key())
        # the model's interface is checked on the first batch, here, so a wrong shape or
        # scores that are not probabilities raise (exit 2) instead of failing every cell
        predictor.fill([t for t, _ in examples[: cfg.batch_size]])
        _check_labels(examples, predictor, where, name)
        sig = cfg.signature()
        cells = [Cell(key, KIND, params) for key, params in cfg.cells()]
        fn = EvalCells(examples, self.model if self.model is not None else cfg.model,
                       device=device, batch_size=cfg.batch_size, signature=sig,
                       predictor=predictor if ctx.executor == "sequential" else None,
                       prefetch=self.prefetch, run_dir=out, trusted=ctx.may_send_key(),
                       ahead_cells=ahead_cells(cfg, out, len(examples), predictor)
                       if ctx.executor == "sequential" else None)
        ctx.say(f"{len(examples)} examples x {len(cfg.perturbations)} perturbations "
                f"({len(cells)} cells) -> {out}")
        return Plan(cells=cells, cell_fn=fn, name=cfg.describe(),
                    pins={"data": (fingerprint([list(e) for e in examples]),
                                   f"--dataset {where}")},
                    state={"examples": examples, "predictor": predictor,
                           "warnings": warnings})

    def _overlap(self, examples: Sequence[tuple[str, int]], where: str) -> str | None:
        """A warning when the data holds texts the model trained on (their hashes are in the
        model folder, written by ``robustlab train``); InputError with ``strict``."""
        from robustlab.data.heldout import HELDOUT_FILE, overlap, read_training_rows

        model = self.config.model
        if model.startswith(OBJECT) or not Path(model).is_dir():
            return None
        trained = read_training_rows(model)
        if not trained:
            return None
        n = overlap([t for t, _ in examples], trained)
        if not n:
            return None
        msg = (f"{n} of {len(examples)} examples of --dataset {where} are in the model's "
               "training data, so A0 and A1 overstate held-out accuracy; evaluate the split "
               f"train held out: --dataset {Path(model) / HELDOUT_FILE}")
        if self.config.strict:
            raise InputError(f"{msg} (refused: --strict)")
        return msg

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]:
        from robustlab.outputs import save_figure, write_json, write_jsonl
        from robustlab.runs.predictions import write_failure_report

        cfg = self.config
        order = {key: i for i, (key, _) in enumerate(cfg.cells())}
        done = sorted(((c.key, c.result) for c in store.cells("done") if c.result),
                      key=lambda kv: order.get(kv[0], len(order)))
        results = [r for _, r in done]
        from robustlab.studies.eval.judge import apply_judgements

        # paper 001's human check: judged perturbations scored on their judged samples
        rows = by_harm(apply_judgements(store, summarise(results, cfg.perturbations)))
        clean = results[0]["a0"] if results else None
        files = ["summary.json", "results.jsonl", "eval.csv"]
        write_jsonl(out / "results.jsonl", results)
        write_csv(out / "eval.csv", rows)
        if ctx.plots and rows:
            save_figure(accuracy_figure(rows, clean), out / "eval.png")
            files.append("eval.png")
        files += write_failure_report(store, out)
        close = getattr(plan.cell_fn, "close", None)
        if close is not None:  # the endpoint pipeline's threads (every cell has run)
            close()
        # texts this process predicted (worker processes keep their own count)
        predictor = plan.state.get("predictor") if ctx.executor == "sequential" else None
        labels = [int(y) for _, y in plan.state["examples"]]
        warnings = [w for w in (*plan.state.get("warnings", ()),
                                chance_warning(clean, labels)) if w]
        summary = {**summary_base(self, store, report), "model": cfg.model,
                   "dataset": cfg.dataset, "n_examples": len(plan.state["examples"]),
                   "clean_accuracy": clean,
                   "majority_rate": float(np.bincount(labels).max() / len(labels))
                   if labels else None,
                   "headline": headline(rows), "warnings": warnings,
                   "perturbations": rows, "files": files,
                   "texts_predicted": getattr(predictor, "predicted", None),
                   **endpoint_summary(store, plan.state.get("predictor"), results)}
        write_json(out / "summary.json", summary)
        return summary


def ahead_cells(cfg: EvalConfig, out: Path, n: int, predictor: Predictor
                ) -> list[tuple[str, int, int]] | None:
    """The cells an endpoint's eval pipelines (:mod:`robustlab.studies.eval.ahead`): those not
    done yet, in the executor's order; None for a local model (its predictions are CPU too,
    nothing to overlap) or past :data:`~robustlab.studies.eval.ahead.MAX_TEXTS`."""
    from robustlab.runs.store import is_run_dir
    from robustlab.studies.eval.ahead import MAX_TEXTS

    if getattr(predictor.model, "card", None) is None:
        return None
    done: set[str] = set()
    if is_run_dir(out):
        with RunStore(out, readonly=True) as store:
            done = {c.key for c in store.cells("done")}
    cells = [(p["perturbation"], int(p["seed"]), int(p["samples"])) for key, p in cfg.cells()
             if key not in done]
    if not cells or n * sum(c[2] for c in cells) > MAX_TEXTS:
        return None
    return cells


def endpoint_summary(store: RunStore, predictor: Any, results: Sequence[dict[str, Any]]
                     ) -> dict[str, Any]:
    """``{"endpoint": …}`` for a model behind HTTP: the requests and tokens the run's store
    holds, this process's share, retries (:func:`robustlab.endpoints.costs.costs`), and the
    invalid answers; nothing for a local model."""
    from robustlab.endpoints.costs import costs

    model = getattr(predictor, "model", None)
    if getattr(model, "card", None) is None:
        return {}
    return {"endpoint": {
        **costs(store, model),
        "invalid": sum(int(r.get("invalid") or 0) for r in results),
        "invalid_clean": max((int(r.get("invalid_clean") or 0) for r in results), default=0)}}


def evaluate(model: Any, out: str | Path, *, examples: Sequence[tuple[str, int]] | None = None,
             dataset: str | None = None, perturbations: Sequence[str] | None = None,
             seeds: Sequence[int] = (0, 1, 2), samples: int = 1,
             num_examples: int | None = None, batch_size: int = 128,
             name: str | None = None, device: str = "auto", executor: str = "sequential",
             workers: int = 1, progress: bool = True, plots: bool = True,
             prefetch: bool = False, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Evaluate ``model`` as it is (the Python API of ``robustlab eval``): a model spec (str)
    or an object (a batch ``predict_proba``, a TextAttack ``ModelWrapper``, a transformers
    pipeline), on ``examples`` [(text, label)] or a ``dataset`` file/name. Returns the summary
    (also ``out/summary.json``). A model of another task (NER, pairs, similarity, answer
    selection): :func:`robustlab.studies.eval.tasks.evaluate_task`."""
    from robustlab.models.registry import canonical_model_spec
    from robustlab.runs.study import run_with
    from robustlab.studies.eval.config import default_perturbations

    if (examples is None) == (dataset is None):
        raise InputError("evaluate: give examples=[(text, label), …] or dataset=FILE|NAME")
    obj = None if isinstance(model, str) else model
    spec = canonical_model_spec(model) if isinstance(model, str) else \
        OBJECT + (name or type(model).__name__)
    if dataset is not None:
        from robustlab.data.datasets import resolve_dataset

        ds = resolve_dataset(dataset)
    else:
        ds = {"name": name and f"{name} examples" or "python"}
    config = EvalConfig(model=spec, dataset=ds,
                        perturbations=tuple(perturbations or default_perturbations()),
                        seeds=tuple(int(s) for s in seeds), samples=samples,
                        num_examples=num_examples, batch_size=batch_size)
    study = Eval(config, model=obj, examples=None if examples is None else list(examples),
                 prefetch=prefetch)
    return run_with(study, out, executor=executor, workers=workers, device=device,
                    progress=progress, plots=plots, log=log).summary


__all__ = ["CHUNK", "Eval", "EvalCells", "TABLE_HEAD", "accuracy_figure", "evaluate", "refresh_outputs",
           "evaluate_cell", "sample_seed", "summarise", "table_rows"]


def from_stored(config: Any, trusted: bool) -> Eval:
    """The study of a configuration object from Python, or of a stored one (its
    :class:`~robustlab.studies.kind.StudyKind`)."""
    from robustlab.runs.study import study_of

    return study_of(Eval, EvalConfig, config, trusted, python_objects=True)


def refresh_outputs(store: Any) -> list[str]:
    """Rescore a finished eval run's outputs on the judgements now stored -- summary.json's
    table, eval.csv and (when the run drew it) eval.png -- as eval writes them on a resume, so
    they never lag the judgements (robustlab judge, the TUI's judge screen). Returns the files
    rewritten; none when the run has no summary yet (eval writes them when it finishes)."""
    import json

    from robustlab.outputs import save_figure, write_json
    from robustlab.studies.eval.judge import apply_judgements

    out = Path(store.run_dir)
    try:
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        rows = summary["perturbations"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    rows = by_harm(apply_judgements(store, rows))
    summary["perturbations"] = rows
    write_json(out / "summary.json", summary)
    write_csv(out / "eval.csv", rows)
    files = ["summary.json", "eval.csv"]
    if (out / "eval.png").exists() and rows:
        save_figure(accuracy_figure(rows, summary.get("clean_accuracy")), out / "eval.png")
        files.append("eval.png")
    return files
