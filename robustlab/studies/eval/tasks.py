"""The eval study on a task beyond single-text classification (robustlab.tasks): NER, sentence
pairs, similarity, answer selection. Same cells (``p<i>|seed=<s>``), same store, same
lifecycle as :class:`~robustlab.studies.eval.study.Eval`; what differs is asked of the task:

* the examples come from :meth:`Task.read` (CoNLL, STS, SNLI, WikiQA files; a bad file is one
  line, exit 2, before anything is written);
* the model is loaded by :func:`load_task_model` (a baseline folder of
  :mod:`robustlab.models.task_baselines`, a Hugging Face checkpoint with a trained
  token-classification, pair-classification or one-output regression head, or from Python any
  object with the task's batch method or a matching ``transformers`` pipeline); a model folder
  declaring another task, or a tagger whose tag set lacks the data's entity types, is refused;
* a perturbation applies through :meth:`Task.perturb` (``--perturb-field``; tags follow their
  tokens; a perturbation that cannot keep the alignment is refused for NER before the run);
* per cell: the task's headline metric clean (``a0``) and perturbed (``a1``, the mean over
  samples), their difference (``delta``), the full metrics of both (``metrics_clean``,
  ``metrics_after``: per entity type for NER; MAP/MRR for answer selection), and the failure
  rate in the task's terms (:meth:`Task.failed`) among the examples the perturbation changed;
* every example's predictions go to the store (:mod:`robustlab.tasks.stored`), so ``failures``,
  the report and the TUI read them back, and a resumed run keeps its finished cells.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.errors import InputError
from robustlab.models.task_loading import check_model_task, load_task_model, model_tags
from robustlab.runs import inputs as run_inputs
from robustlab.runs.cells import CellOutput
from robustlab.runs.executor import RunReport
from robustlab.runs.inputs import OBJECT
from robustlab.runs.store import Cell, RunStore
from robustlab.runs.study import Plan, RunContext, summary_base
from robustlab.signature import fingerprint
from robustlab.studies.eval.config import KIND, EvalConfig

__all__ = ["TaskEval", "TaskPredictor", "check_task_run", "evaluate_task",
           "evaluate_task_cell", "from_stored", "input_key", "metric_label", "print_task_summary",
           "study_for"]

#: how the headline metric of each task is named in tables
METRIC_LABELS = {"f1": "F1", "pearson": "Pearson", "accuracy": "accuracy"}


def metric_label(task_name: str | None) -> str:
    """The name of a task's headline metric in tables ("entity F1", "Pearson", ...)."""
    from robustlab.tasks import get_task

    task = get_task(task_name or "classification")
    label = METRIC_LABELS.get(task.primary_metric, task.primary_metric)
    return {"ner": "entity F1", "answer-selection": "F1"}.get(task.name, label)


# ---- models -----------------------------------------------------------------------------------


class TaskPredictor:
    """A model's predictions for a task's examples, each distinct input predicted once per
    process (a no-op perturbation and a repeated seed cost nothing)."""

    def __init__(self, task: Any, model: Any, batch_size: int = 128) -> None:
        self.task = task
        self.model = model
        self.batch_size = batch_size
        self.cache: dict[Any, Any] = {}  # model input (made hashable) -> prediction
        self.predicted = 0
        #: words a tagger tagged O without reading them, past its max_length (``HFTagger``'s
        #: ``truncated_words_`` after each call): entity F1 counts them as its predictions
        self.truncated_words = 0

    def __call__(self, examples: Sequence[Any]) -> list[Any]:
        from robustlab.tasks.predict import predict

        # an input's key is its model input made hashable (lists -> tuples); a json.dumps per
        # input was ~10 us of the ~120 us per input robustlab added to an H200's forward pass
        keys = [input_key(x) for x in self.task.model_inputs(examples)]
        todo: dict[Any, Any] = {}
        for k, ex in zip(keys, examples, strict=True):
            if k not in self.cache and k not in todo:
                todo[k] = ex
        items = list(todo.items())
        step = self.batch_size * 32
        for a in range(0, len(items), step):
            part = items[a: a + step]
            preds = predict(self.task, self.model, [ex for _, ex in part])
            cut = getattr(self.model, "truncated_words_", None)
            if isinstance(cut, int) and not isinstance(cut, bool):
                self.truncated_words += cut
            for (k, _), p in zip(part, preds, strict=True):
                self.cache[k] = p
            self.predicted += len(part)
        return [self.cache[k] for k in keys]


def truncation_warning(predictor: TaskPredictor, model: Any, n: int) -> str | None:
    """One line when the clean examples had words past the model's max_length: the tagger
    tags them O unread, so the entity F1 of long sentences measures the cut, not the model
    (one CoNLL test sentence in 3,453 is over MiniLM's 128 pieces)."""
    cut = predictor.truncated_words
    if not cut:
        return None
    limit = getattr(model, "max_length", None)
    return (f"{cut} word(s) of the {n} clean examples lay past the model's max_length "
            f"({limit} pieces) and were tagged O without being read; entity F1 counts them as "
            "its predictions (train with --param max_length=N to read longer sentences)")


def input_key(value: Any) -> Any:
    """A model input as a dict key: ``value`` with every list made a tuple (two inputs are
    predicted once when their keys are equal; the speed bench counts distinct inputs by it)."""
    if isinstance(value, list):
        value = tuple(value)
    try:
        hash(value)  # words, a pair of texts: hashable already
        return value
    except TypeError:  # a tuple holding a list (a question and its candidates)
        return tuple(map(input_key, value))


# ---- cells ------------------------------------------------------------------------------------


def _numbers(metrics: dict[str, Any]) -> dict[str, Any]:
    """The metrics kept in a result: numbers, and NER's per-type F1."""
    out: dict[str, Any] = {k: (None if isinstance(v, float) and v != v else v)
                           for k, v in metrics.items() if isinstance(v, (int, float))}
    if "per_type" in metrics:
        out["per_type"] = {t: round(v["f1"], 6) for t, v in metrics["per_type"].items()}
    return out


def _mean_metrics(ms: Sequence[dict[str, Any]]) -> dict[str, Any]:
    if len(ms) == 1:
        return ms[0]
    out: dict[str, Any] = {}
    for k, v in ms[0].items():
        if k == "per_type":
            out[k] = {t: float(np.mean([m[k].get(t, 0.0) for m in ms])) for t in v}
        elif isinstance(v, (int, float)) or v is None:
            vals = [m.get(k) for m in ms if m.get(k) is not None]
            out[k] = float(np.mean(vals)) if vals else None
    return out


def evaluate_task_cell(task: Any, predictor: TaskPredictor, examples: Sequence[Any],
                       clean: Sequence[Any], spec: str, seed: int, samples: int,
                       field: str | None) -> CellOutput:
    """One perturbation and seed over every example of a task (module docstring).

    The perturbed metric ``a1`` is computed per sample (each sample is one perturbed copy of
    the test set, the unit paper 001 scores) and averaged over the samples; the summary then
    averages the seeds with their spread, as classification's A1 (whose per-sample accuracies
    average to its pooled accuracy; a correlation or an F1 does not pool). A label-changing
    perturbation (:meth:`Task.test_type`: DIR or changed) gets no ``a1``: its gold labels no
    longer hold."""
    from robustlab.metrics import robustness
    from robustlab.metrics.checklist_tests import CHANGED, INV
    from robustlab.perturbations.registry import parse_spec
    from robustlab.studies.eval.study import sample_seed
    from robustlab.tasks.stored import moved, row, row_verdict, task_test

    t0 = time.perf_counter()
    pert = parse_spec(spec)
    kind, expectation = task.test_type(pert, field, examples)
    test = task_test(task.name, kind, expectation)
    n = len(examples)
    m0 = _numbers(task.metrics(examples, clean))
    after_metrics, predictions, records = [], [], []
    changed = failed = tested = moves = errors = 0
    for s in range(samples):
        outs = task.perturb(examples, pert, seed=sample_seed(seed, s), field=field)
        new = predictor([o.example for o in outs if o.changed])
        it = iter(new)
        after = [next(it) if o.changed else clean[i] for i, o in enumerate(outs)]
        if kind == INV:  # scored against gold labels that still hold
            after_metrics.append(_numbers(task.metrics([o.example for o in outs], after)))
        for i, o in enumerate(outs):
            idx = i * samples + s
            r = row(task, idx, o, clean[i], after[i])
            errors += o.error is not None
            if o.changed:
                changed += 1
                moves += moved(test, r)
                verdict = row_verdict(test, r)
                tested += verdict is not None
                failed += bool(verdict)
            predictions.append(r)
            records.append({"idx": idx, "example": i, "sample": s, "changed": bool(o.changed),
                            "error": o.error})
    rows = n * samples
    if rows and errors == rows:
        first = next(r["error"] for r in records if r["error"])
        raise RuntimeError(f"{spec}: the perturbation failed on every example (first error: "
                           f"{first})")
    m1 = _mean_metrics(after_metrics) if after_metrics else None
    key = task.primary_metric
    a0 = m0.get(key)
    a1 = m1.get(key) if m1 is not None else None
    result = {"perturbation": spec, "label": getattr(pert, "_label", None) or spec,
              "seed": int(seed), "samples": int(samples), "n": n, "rows": rows,
              "task": task.name, "metric": key, "field": field,
              "tolerance": getattr(task, "tolerance", None),
              "a0": a0, "a1": a1,
              "delta": None if a0 is None or a1 is None else float(robustness(a1, a0)),
              "metrics_clean": m0, "metrics_after": m1,
              "test": test, "expectation": None, "test_type": kind,
              "test_expectation": expectation, "n_classes": None,
              "changed": changed, "tested": tested,
              "failed": None if kind == CHANGED else failed, "flipped": moves,
              "failure_rate": failed / tested if tested and kind != CHANGED else None,
              "change_rate": moves / changed if changed else None,
              "noop_rate": (rows - changed) / rows if rows else None, "errors": errors,
              "perturb_wait_seconds": 0.0, "seconds": time.perf_counter() - t0}
    return CellOutput(result=result, records=records, predictions=predictions)


#: per worker process: (key, predictor, clean predictions)
_LOADED: dict[str, tuple[TaskPredictor, list[Any]]] = {}


class TaskEvalCells:
    """The cell function of a task eval (picklable: workers load the model once each)."""

    def __init__(self, task_name: str, examples: Sequence[Any], model: Any, *, device: str,
                 batch_size: int, signature: str, field: str | None,
                 predictor: TaskPredictor | None = None, clean: list[Any] | None = None) -> None:
        import uuid

        self.task_name = task_name
        self.examples = list(examples)
        self.model = model
        self.device = device
        self.batch_size = batch_size
        self.signature = signature
        self.field = field
        self.predictor = predictor
        self.clean = clean
        self.key = uuid.uuid4().hex

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "predictor": None, "clean": None}

    def _loaded(self) -> tuple[TaskPredictor, list[Any]]:
        from robustlab.tasks import get_task

        if self.predictor is not None and self.clean is not None:
            return self.predictor, self.clean
        hit = _LOADED.get(self.key)
        if hit is None:
            task = get_task(self.task_name)
            model = load_task_model(self.model, task.name, self.device) \
                if isinstance(self.model, str) else self.model
            predictor = TaskPredictor(task, model, self.batch_size)
            hit = (predictor, predictor(self.examples))
            _LOADED.clear()
            _LOADED[self.key] = hit
        return hit

    def __call__(self, _kind: str, params: dict[str, Any]) -> CellOutput:
        predictor, clean = self._loaded()
        out = evaluate_task_cell(predictor.task, predictor, self.examples, clean,
                                 params["perturbation"], int(params["seed"]),
                                 int(params["samples"]), self.field)
        out.result["signature"] = self.signature
        out.signature = self.signature
        return out


# ---- the study --------------------------------------------------------------------------------


@dataclass
class TaskEval:
    """The eval study of a task (module docstring); ``model`` and ``examples`` may be Python
    objects (the config's model is then ``object:NAME``)."""

    config: EvalConfig
    model: Any = None
    examples: Sequence[Any] | None = None
    kind: ClassVar[str] = KIND

    @property
    def task(self) -> Any:
        from robustlab.tasks import get_task

        return get_task(self.config.task or "classification")

    def inputs(self) -> list[tuple[str, str | None, str]]:
        return run_inputs.data_and_model(self.config.dataset, self.config.model,
                                         data_given=self.examples is not None,
                                         model_given=self.model is not None)

    def refuse_perturbations(self) -> None:
        """One line naming a perturbation the task cannot apply (NER: tags could not follow)."""
        from robustlab.perturbations.registry import parse_spec

        for spec in self.config.perturbations:
            why = self.task.refusal(parse_spec(spec))
            if why:
                raise InputError(f"--perturbations {spec}: {why}")

    def read(self) -> list[Any]:
        cfg = self.config
        if self.examples is not None:
            examples = list(self.examples)
        else:
            where = cfg.dataset.get("path")
            if not where:
                raise InputError(f"--dataset {cfg.dataset.get('name')}: a {self.task.name} "
                                 "eval reads a data file (CoNLL, STS, SNLI or WikiQA)")
            options = {"encoding": cfg.dataset["encoding"]} if cfg.dataset.get("encoding") \
                else {}
            examples = self.task.read(where, **options).examples
        if cfg.num_examples is not None:
            examples = examples[: cfg.num_examples]
        if not examples:
            raise InputError(f"--dataset {cfg.dataset.get('path') or 'python'}: no examples")
        return examples

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        from robustlab.models.device import check_device

        cfg, task = self.config, self.task
        if cfg.model.startswith(OBJECT) and self.model is None:
            raise InputError(f"this eval run was made from Python with a model object "
                             f"({cfg.model[len(OBJECT):][:60]!r}); resume it from Python with "
                             "the same object")
        self.refuse_perturbations()
        where = cfg.dataset.get("path") or cfg.dataset.get("name")
        ctx.say(f"reading --dataset {where} as {task.name} data")
        examples = self.read()
        device = check_device(ctx.device)
        name = cfg.model.removeprefix(OBJECT)
        ctx.say(f"loading the {task.name} model {name} on {device} (evaluated as it is)")
        model = self.model if self.model is not None else \
            load_task_model(cfg.model, task.name, device)
        tags = model_tags(model) if task.name == "ner" else None
        if tags is not None:
            task.check_tag_set(tags, examples, where=f"--model {name}")
        predictor = TaskPredictor(task, model, cfg.batch_size)
        clean = predictor(examples)  # the interface is checked here: a bad model stops now
        warnings = [w for w in [truncation_warning(predictor, model, len(examples))] if w]
        for w in warnings:
            ctx.say(f"warning: {w}")
        sig = cfg.signature()
        cells = [Cell(key, KIND, params) for key, params in cfg.cells()]
        fn = TaskEvalCells(task.name, examples, self.model if self.model is not None
                           else cfg.model, device=device, batch_size=cfg.batch_size,
                           signature=sig, field=cfg.perturb_field,
                           predictor=predictor if ctx.executor == "sequential" else None,
                           clean=clean if ctx.executor == "sequential" else None)
        ctx.say(f"{len(examples)} {task.name} examples x {len(cfg.perturbations)} perturbations "
                f"({len(cells)} cells) -> {out}")
        return Plan(cells=cells, cell_fn=fn, name=cfg.describe(),
                    pins={"data": (fingerprint([repr(e) for e in examples]),
                                   f"--dataset {where}")},
                    state={"examples": examples, "predictor": predictor, "clean": clean,
                           "warnings": warnings})

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]:
        from robustlab.outputs import save_figure, write_json, write_jsonl
        from robustlab.runs.predictions import write_failure_report
        from robustlab.studies.eval.study import by_harm, summarise

        cfg, task = self.config, self.task
        order = {key: i for i, (key, _) in enumerate(cfg.cells())}
        done = sorted(((c.key, c.result) for c in store.cells("done") if c.result),
                      key=lambda kv: order.get(kv[0], len(order)))
        results = [r for _, r in done]
        rows = by_harm(summarise(results, cfg.perturbations))
        clean_metrics = _numbers(task.metrics(plan.state["examples"], plan.state["clean"]))
        clean = clean_metrics.get(task.primary_metric)
        files = ["summary.json", "results.jsonl", "eval.csv"]
        write_jsonl(out / "results.jsonl", results)
        write_task_csv(out / "eval.csv", rows, task.name)
        if ctx.plots and rows:
            save_figure(metric_figure(rows, clean, task.name), out / "eval.png")
            files.append("eval.png")
        files += write_failure_report(store, out)
        predictor = plan.state.get("predictor")
        summary = {**summary_base(self, store, report), "model": cfg.model,
                   "dataset": cfg.dataset, "task": task.name, "metric": task.primary_metric,
                   "perturb_field": cfg.perturb_field,
                   "n_examples": len(plan.state["examples"]),
                   "clean_metric": clean, "clean_metrics": clean_metrics,
                   "clean_accuracy": clean if task.primary_metric == "accuracy" else None,
                   "headline": task_headline(rows, task.name),
                   "warnings": list(plan.state.get("warnings", ())),
                   "perturbations": rows, "files": files,
                   "texts_predicted": getattr(predictor, "predicted", None)}
        write_json(out / "summary.json", summary)
        return summary


def study_for(config: EvalConfig, model: Any = None, examples: Any = None, **kw: Any) -> Any:
    """The eval study of ``config``: :class:`TaskEval` for a task, else classification's
    :class:`~robustlab.studies.eval.study.Eval` as it always was."""
    if config.task not in (None, "classification"):
        return TaskEval(config, model=model, examples=examples)
    from robustlab.studies.eval.study import Eval

    return Eval(config, model=model, examples=examples, **kw)


# ---- tables, figure ---------------------------------------------------------------------------


#: the column of a task's metric change: perturbed minus clean, the sign of classification's
#: A1-A0 (negative: the perturbation cost that much)
DELTA_HEAD = "pert-clean"


def task_table(rows: Sequence[dict[str, Any]], task_name: str) -> tuple[list[str], list[list[str]]]:
    """(header, rows) of a task's eval table, worst first: the metric clean and perturbed,
    perturbed minus clean, the failure rate among the examples tested, the share of changed
    examples whose prediction moved, the no-op rate."""
    from robustlab.studies.eval.study import fmt, test_header

    m = metric_label(task_name)
    head = ["perturbation", "fails if", f"{m} clean", f"{m} perturbed", DELTA_HEAD,
            "fail rate", "moved", "no-op", "seeds"]
    body = [[r["label"], test_header(r), fmt({**r["a0"], "n": 1}), fmt(r["a1"]), fmt(r["delta"]),
             fmt(r["failure_rate"]), fmt(r.get("change_rate")), fmt(r["noop_rate"]),
             str(len(r["seeds"]))] for r in rows]
    return head, body


def task_headline(rows: Sequence[dict[str, Any]], task_name: str, top: int = 3) -> str:
    from robustlab.studies.eval.study import fmt

    def given(v: Any) -> bool:  # a summary row's value: {mean, std, ...} over seeds
        return (v.get("mean") if isinstance(v, dict) else v) is not None

    if not rows:
        return "no perturbation finished yet"
    m = metric_label(task_name)
    parts = []
    for r in rows[:top]:
        bits = [f"{m} {DELTA_HEAD} {fmt(r['delta'])}"] if given(r.get("delta")) else []
        if given(r.get("failure_rate")):
            bits.append(f"fail {fmt(r['failure_rate'])}")
        elif given(r.get("change_rate")):
            bits.append(f"moved {fmt(r['change_rate'])}")
        parts.append(f"{r['label']} ({', '.join(bits) or 'no result'})")
    return "worst: " + "; ".join(parts)


def write_task_csv(path: Path, rows: Sequence[dict[str, Any]], task_name: str) -> None:
    """eval.csv of a task: the metric's own column names (``f1_clean`` ...), worst first."""
    from robustlab.data.files import write_rows
    from robustlab.studies.eval.study import fmt, test_header
    from robustlab.tasks import get_task

    metric = get_task(task_name).primary_metric
    names = {"a0": f"{metric}_clean", "a1": f"{metric}_perturbed",
             "delta": f"{metric}_perturbed_minus_clean", "failure_rate": "failure_rate",
             "change_rate": "moved_rate", "noop_rate": "noop_rate"}
    flat = []
    for r in rows:
        d = {"perturbation": r["perturbation"], "fails_if": test_header(r),
             "seeds": ",".join(map(str, r["seeds"])), "samples": r["samples"], "n": r["n"],
             "changed": r["changed"], "failed": "-" if r["failed"] is None else r["failed"],
             "errors": r["errors"]}
        for k, col in names.items():
            d[col] = fmt((r.get(k) or {}).get("mean"))
            d[f"{col}_sd"] = fmt((r.get(k) or {}).get("std"))
        flat.append(d)
    write_rows(path, flat, columns=["perturbation", "fails_if", "seeds", "samples", "n",
                                    *[c for col in names.values() for c in (col, f"{col}_sd")],
                                    "changed", "failed", "errors"])


def metric_figure(rows: Sequence[dict[str, Any]], clean: float | None, task_name: str) -> Any:
    """The task's metric per perturbation, clean beside perturbed (sd over seeds)."""
    from robustlab.plots import SMALL, new_figure, short_name
    from robustlab.studies.eval.study import fmt

    rows = [r for r in rows if r["a1"].get("mean") is not None]
    m = metric_label(task_name)
    fig = new_figure(max(5.0, 0.42 * len(rows) + 2.0), 3.6)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(rows))
    a0 = [r["a0"]["mean"] or 0 for r in rows]
    a1 = [r["a1"]["mean"] or 0 for r in rows]
    sd = [r["a1"]["std"] or 0 for r in rows]
    ax.bar(x - 0.2, a0, 0.4, label=f"clean {m}", color="#9aa5b1")
    ax.bar(x + 0.2, a1, 0.4, yerr=sd, capsize=2, label=f"perturbed {m}", color="#d9534f")
    ax.set_xticks(x)
    ax.set_xticklabels([short_name(r["label"], 24) for r in rows], rotation=60, ha="right")
    ax.set_ylabel(m)
    ax.set_title(f"{m}, worst first" + (f" (clean {fmt(clean)})" if clean is not None else ""))
    # below the tick labels, in one row: beside the title (legend_outside's upper right) it
    # ran into a long title on a narrow figure (few perturbations)
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=2, fontsize=SMALL,
               frameon=False)
    return fig


#: --perturb-field in words, per task
FIELD_WORDS = {("answer-selection", "first"): "the question",
                ("answer-selection", "second"): "the candidate sentences",
                ("answer-selection", "both"): "the question and its candidates"}
FIELD_WORDS.update({(t, f): w for t in ("pair", "similarity") for f, w in
                     (("first", "the first text"), ("second", "the second text"),
                      ("both", "both texts"))})


def print_task_summary(summary: dict[str, Any]) -> None:
    """What ``robustlab eval`` prints for a task: the clean metric (per entity type for NER;
    MAP/MRR for answer selection), the headline, the table worst first."""
    from robustlab.studies.eval.study import fmt
    from robustlab.textfmt import align, echo

    task = summary.get("task")
    m = metric_label(task)
    cm = summary.get("clean_metrics") or {}
    extra = ", ".join(f"{k} {fmt(cm[k])}" for k in ("spearman", "precision", "recall", "map",
                                                   "mrr") if k in cm)
    field = summary.get("perturb_field")
    for w in summary.get("warnings") or []:
        echo(f"robustlab eval: warning: {w}", file=sys.stderr)
    echo(f"{task}: clean {m} {fmt(summary.get('clean_metric'))}" + (f" ({extra})" if extra
                                                                    else "")
         + f" on {summary.get('n_examples')} examples"
         + (f"; perturbing {FIELD_WORDS.get((task, field), field)}" if field else ""))
    if cm.get("per_type"):
        echo("  per type: " + ", ".join(f"{t} {fmt(v)}" for t, v in cm["per_type"].items()))
    rows = summary.get("perturbations") or []
    if rows:
        echo(summary.get("headline") or "")
        head, body = task_table(rows, task)
        echo(align(head, body, rule=True))
        echo(f"{DELTA_HEAD} = perturbed - clean {m} (negative: a loss; mean over samples, "
             "then mean±sd over seeds); fail rate: among the examples the perturbation "
             "changed, those whose prediction failed (entities: the entity set changed; "
             "|d|>t: the score moved more than t; ranking: the top candidate or the answers "
             "changed; INV: the class changed; DIR not entailment: a pair whose hypothesis "
             "alone was negated, gold entailment, still predicted entailment); moved: changed "
             "examples whose prediction moved by the task's rule. A label-changing "
             "perturbation (DIR, changed) has no perturbed metric: its gold labels no longer "
             "hold; 'changed' has no pass/fail")


def check_task_run(config: EvalConfig) -> None:
    """``robustlab eval``'s pre-run check of a task: perturbations the task can apply, the
    data file readable as the task's format, the model for this task (one line, exit 2;
    nothing is created)."""
    study = TaskEval(config)
    study.refuse_perturbations()
    study.read()
    if not config.model.startswith(OBJECT):
        check_model_task(config.model, study.task.name)


def tui_labels(task_name: str) -> dict[str, str]:
    """The TUI eval table's column labels for a task: as short as A0/A1 so the table fits 80
    columns (the status line above names the metric)."""
    return {"a0": "clean", "a1": "pert", "delta": "p-c", "change_rate": "moved"}  # as stdout


def from_stored(config: Any, trusted: bool) -> Any:
    """The study of a stored eval run (its :class:`~robustlab.studies.kind.StudyKind`): a
    task's run is a :class:`TaskEval`, a classifier's the :class:`Eval` it always was."""
    from robustlab.runs.study import study_of

    return study_of(lambda c: study_for(c), EvalConfig, config, trusted, python_objects=True)


def evaluate_task(model: Any, out: str | Path, *, task: str | None = None,
                  examples: Sequence[Any] | None = None, dataset: str | None = None,
                  perturbations: Sequence[str] | None = None, seeds: Sequence[int] = (0, 1, 2),
                  samples: int = 1, perturb_field: str | None = None,
                  num_examples: int | None = None, batch_size: int = 128,
                  name: str | None = None, device: str = "auto", progress: bool = True,
                  plots: bool = True, log: Any = None) -> dict[str, Any]:
    """``robustlab eval`` on a task from Python: ``model`` a spec (a folder, ``hf:ID``) or an
    object with the task's batch method (:mod:`robustlab.tasks.predict`) or a matching
    ``transformers`` pipeline; ``examples`` the task's examples (``task`` then required) or a
    ``dataset`` file (its task read from it). Returns the summary."""
    from robustlab.models.registry import canonical_model_spec
    from robustlab.runs.study import run_with
    from robustlab.studies.eval.config import default_perturbations
    from robustlab.tasks import get_task

    if (examples is None) == (dataset is None):
        raise InputError("evaluate_task: give examples=[...] (with task=) or dataset=FILE")
    if examples is not None and task is None:
        raise InputError("evaluate_task: examples need task= (ner, pair, similarity, "
                         "answer-selection)")
    obj = None if isinstance(model, str) else model
    spec = canonical_model_spec(model) if isinstance(model, str) else \
        OBJECT + (name or type(model).__name__)
    ds = {"path": str(Path(dataset).resolve())} if dataset is not None else \
        {"name": name and f"{name} examples" or "python"}
    config = EvalConfig(model=spec, dataset=ds,
                        perturbations=tuple(perturbations or default_perturbations()),
                        seeds=tuple(int(s) for s in seeds), samples=samples,
                        num_examples=num_examples, batch_size=batch_size,
                        task=None if task is None else get_task(task).name,
                        perturb_field=perturb_field).resolved()
    if config.task is None:
        raise InputError("evaluate_task: single texts are classification; use "
                         "robustlab.studies.eval.study.evaluate")
    study = TaskEval(config, model=obj, examples=None if examples is None else list(examples))
    return run_with(study, out, device=device, progress=progress, plots=plots, log=log).summary
