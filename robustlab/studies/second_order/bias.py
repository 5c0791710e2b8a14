"""Counterfactual token bias (paper 002, Sec. 4, Eq. 5–6) into a run directory (kind ``bias``).

B(p, k) = mean of F_soft(x; p) = f_soft(x ⊕ p) − f_soft(x) over x ∈ Neighbor_k(X_test), k = 0..3
(k = 0 is the test set). X_test = the sentences with p1 exactly once and p2 absent, or the
other way round (taken in their p1 form, as the authors' code does); f_soft =
P(class 1). Neighbourhoods are built one substitution at a time by a neighbourhood source with
the protected words of every pair blacklisted and the patch word frozen; Neighbor_k is the
deduplicated union of Neighbor_1 over Neighbor_{k−1} (so it holds sentences within ℓ0 ≤ k).

**As the paper ran it** (runs stored before these options keep their behaviour): the
neighbourhood is a masked LM when one is found offline (WordNet otherwise, said on stderr and
recorded among the run's inputs); when a pair is gendered, robustlab's gendered word list
(:mod:`~robustlab.studies.second_order.gendered`) is blacklisted too, so a neighbour never
gains another gendered word (footnote 7); and X_test keeps only sentences whose pair-swapped
form passes the authors' language-model check (:class:`~robustlab.studies.second_order.
neighbourhood.LanguageModelCheck`; ``lm_rejected`` counts the others).

**Sampling (stated budget).** Neighbor_k grows exponentially. When a level holds more than
``budget`` sentences, ``budget`` of them are drawn (seeded, uniformly) and the next level is
built from at most ``parents`` of those: a two-stage sample of Neighbor_k, flagged ``sampled``.

X_filter = {x ∈ X_test : |F_soft(x; p)| < ε} (ε = 0.005); its share is ``filtered_fraction`` and
``start="filter"`` builds the neighbourhoods from X_filter instead (the paper's Fig. 6).
Outputs: ``bias_table.csv`` (pairs × k), ``bias_vs_k.png`` (Fig. 5/6) and
``bias_hist_<p1>_<p2>.png`` (F_soft histograms per k).
"""

from __future__ import annotations

import csv
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.endpoints.card import is_endpoint
from robustlab.errors import InputError
from robustlab.runs import inputs as run_inputs
from robustlab.runs import payloads
from robustlab.runs.executor import RunReport
from robustlab.runs.store import Cell, RunStore
from robustlab.runs.study import Plan, RunContext, summary_base
from robustlab.studies.second_order.config import OBJECT, BiasConfig
from robustlab.studies.second_order.inputs import source_input
from robustlab.studies.second_order.neighbourhood import (
    LanguageModelCheck,
    NeighbourhoodSource,
    lm_check_for,
    match_case,
)

EPSILON = 0.005
#: what the summary table indexes in every bias cell's result (docs/run-directory.md)
payloads.register_result("bias", {"pair": [str], "k": int, "B": (payloads.NUMBER, None),
                                  "std": (payloads.NUMBER, None), "n": int})
class BiasEvaluator:
    """B(p, k) with cached model outputs and neighbourhoods (cells recompute levels cheaply).

    ``lm_check`` (the authors' language-model check) keeps in X_test only the sentences whose
    pair-swapped form passes it (:meth:`checked_test_set`)."""

    def __init__(self, predict: Callable[[list[str]], np.ndarray], source: NeighbourhoodSource,
                 *, budget: int = 2000, parents: int = 200, seed: int = 0,
                 batch_size: int = 256, lm_check: LanguageModelCheck | None = None,
                 is_invalid: Callable[[str], bool] | None = None) -> None:
        self.predict, self.source, self.lm_check = predict, source, lm_check
        self.budget, self.parents, self.seed, self.batch_size = budget, parents, seed, batch_size
        #: an endpoint's answer that names no label (an LLM's): its f_soft is NaN, and a pair
        #: (x, x ⊕ p) with one is left out of B and counted (``invalid``), never scored
        self.is_invalid = is_invalid
        self._proba: dict[str, float] = {}
        self.model_queries, self.model_seconds = 0, 0.0

    def f_soft(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self._proba]
        for i in range(0, len(todo), self.batch_size):
            chunk = todo[i: i + self.batch_size]
            t0 = time.perf_counter()
            p = np.asarray(self.predict(chunk), dtype=np.float64)
            self.model_seconds += time.perf_counter() - t0
            self.model_queries += len(chunk)
            if p.ndim != 2 or p.shape[0] != len(chunk) or not np.isfinite(p).all():
                raise InputError("the model returned NaN/inf or malformed probabilities for "
                                 f"{len(chunk)} sentences (first: {chunk[0]!r})")
            for t, row in zip(chunk, p, strict=False):
                bad = self.is_invalid is not None and self.is_invalid(t)
                self._proba[t] = float("nan") if bad else float(row[1])
        return np.array([self._proba[t] for t in texts])

    @staticmethod
    def test_set(texts: Sequence[str], pair: tuple[str, str]) -> list[tuple[list[str], int]]:
        """(words, index of p1) for sentences with one of the pair exactly once and the other
        absent. Both directions, as the authors' ``is_good_biaswords``: a sentence holding p2 is
        taken in its p1 form, so F_soft = f_soft(x with p2) − f_soft(x with p1) either way."""
        return [(w, i) for w, i, _ in BiasEvaluator._test_items(texts, pair)]

    @staticmethod
    def _test_items(texts: Sequence[str], pair: tuple[str, str]
                    ) -> list[tuple[list[str], int, tuple[str, str]]]:
        """:meth:`test_set` with each sentence's (original, pair-swapped) texts."""
        p1, p2 = pair
        out = []
        for t in texts:
            words = t.split()
            low = [w.lower() for w in words]
            if low.count(p1) == 1 and p2 not in low:
                i = low.index(p1)
                swap = BiasEvaluator.patched(words, i, p2)
                out.append((words, i, (" ".join(words), swap)))
            elif low.count(p2) == 1 and p1 not in low:
                i = low.index(p2)
                orig = " ".join(words)
                words[i] = match_case(words[i], p1)
                out.append((words, i, (orig, " ".join(words))))
        return out

    def checked_test_set(self, texts: Sequence[str], pair: tuple[str, str]
                         ) -> tuple[list[tuple[list[str], int]], int]:
        """X_test after the language-model check (when there is one) and how many sentences it
        took out: a sentence stays when its pair-swapped form scores at least the original's
        PLL − 1.5, or has more than 20 words (the authors' ``is_good_biaswords``)."""
        items = self._test_items(texts, pair)
        if self.lm_check is None or not items:
            return [(w, i) for w, i, _ in items], 0
        ok = self.lm_check.passes_many([sw for _, _, sw in items])
        kept = [(w, i) for (w, i, _), good in zip(items, ok, strict=True) if good]
        return kept, len(items) - len(kept)

    @staticmethod
    def patched(words: Sequence[str], idx: int, p2: str) -> str:
        w = list(words)
        w[idx] = match_case(w[idx], p2)
        return " ".join(w)

    def f_soft_change(self, items: Sequence[tuple[list[str], int]], p2: str) -> np.ndarray:
        xs = [" ".join(w) for w, _ in items]
        xps = [self.patched(w, i, p2) for w, i in items]
        both = self.f_soft(xs + xps)
        return both[len(xs):] - both[: len(xs)]

    def _expand(self, items: list[tuple[list[str], int]], pair: tuple[str, str]) -> list:
        reqs = [(" ".join(w), w, [j for j in range(len(w)) if j != i and w[j].isalpha()])
                for w, i in items]
        cands = self.source.candidates_many(reqs, exclude=pair)
        out, seen = [], set()
        for (w, i), cand in zip(items, cands, strict=False):
            for j, ws in cand.items():
                for c in ws:
                    nw = list(w)
                    nw[j] = c
                    key = " ".join(nw)
                    if key not in seen:
                        seen.add(key)
                        out.append((nw, i))
        return out

    def levels(self, base: list[tuple[list[str], int]], pair: tuple[str, str], k: int):
        """Level k (sampled to the budget) and whether sampling happened at any level <= k."""
        rng = random.Random(f"{self.seed}|{pair[0]}/{pair[1]}")
        level, sampled = base, False
        for _ in range(k):
            parents = level
            if len(parents) > self.parents:
                parents, sampled = rng.sample(parents, self.parents), True
            level = self._expand(parents, pair)
            if len(level) > self.budget:
                level, sampled = rng.sample(level, self.budget), True
        return level, sampled

    def cell(self, texts: Sequence[str], pair: tuple[str, str], k: int,
             start: str = "test") -> tuple[dict[str, Any], list[dict[str, Any]]]:
        base, lm_rejected = self.checked_test_set(texts, pair)
        fs0 = self.f_soft_change(base, pair[1]) if base else np.zeros(0)
        # an invalid answer (NaN) leaves its sentence out of what is measured, never scored
        ok0 = np.isfinite(fs0)
        filtered = [b for b, f, ok in zip(base, fs0, ok0, strict=True) if ok and abs(f) < EPSILON]
        invalid_test = int(len(fs0) - ok0.sum())
        fs0 = fs0[ok0]
        if start == "filter":
            base = filtered
        items, sampled = self.levels(base, pair, k) if base else ([], False)
        fs = self.f_soft_change(items, pair[1]) if items else np.zeros(0)
        ok = np.isfinite(fs)
        invalid = int(len(fs) - ok.sum())
        items, fs = [it for it, good in zip(items, ok, strict=True) if good], fs[ok]
        result = {
            "pair": list(pair), "k": k, "B": float(fs.mean()) if len(fs) else None,
            "std": float(fs.std()) if len(fs) else None, "n": len(fs), "sampled": sampled,
            "filtered_fraction": len(filtered) / len(fs0) if len(fs0) else None,
            "n_test": len(fs0), "n_filter": len(filtered), "start": start,
            "source": self.source.name,
        }
        if self.lm_check is not None:
            result["lm_rejected"] = lm_rejected
        if self.is_invalid is not None:  # an endpoint: the pairs left out for an invalid answer
            result["invalid"], result["invalid_test"] = invalid, invalid_test
        records = [{"text": " ".join(w), "f_soft": float(f)}
                   for (w, _), f in zip(items, fs, strict=False)]
        return result, records


def write_table(path: Path, table: list[dict[str, Any]]) -> Path:
    from robustlab.outputs import atomic_write

    cols = ["pair", "k", "B", "std", "n", "sampled", "filtered_fraction"]

    def w(f):
        wr = csv.DictWriter(f, cols, extrasaction="ignore")
        wr.writeheader()
        for r in table:
            wr.writerow({**r, "pair": "/".join(r["pair"])})

    return atomic_write(path, w)


def plot_bias(out: Path, table: list[dict[str, Any]], hist: dict[str, dict[int, list[float]]],
              ks: Sequence[int]) -> list[str]:
    """bias_vs_k.png (B against k, one line per pair) and one F_soft histogram per pair, drawn
    by :mod:`robustlab.plots` (the one plotting module)."""
    from robustlab import plots

    plots.save_png(plots.bias_vs_k_figure(table, ks), out / "bias_vs_k.png")
    files = ["bias_vs_k.png"]
    for name, by_k in hist.items():
        if not any(by_k.values()):
            continue
        fname = f"bias_hist_{name.replace('/', '_')}.png"
        plots.save_png(plots.bias_hist_figure(name, {k: by_k.get(k) or [] for k in ks}),
                       out / fname)
        files.append(fname)
    return files


#: per worker process: evaluators built by BiasCells (key -> BiasEvaluator)
_EVALUATORS: dict[str, BiasEvaluator] = {}


class BiasCells:
    """The cell function of a bias study, picklable for the process and Ray executors.

    It carries the test texts and what a worker needs to build its own evaluator once per
    process: the model (a spec for ``load_trained_model``, or a ``predict`` callable shipped as it is)
    and the neighbourhood source (a ``make_source`` spec dict, or a source object). Every
    random choice of a (pair, k) cell is seeded by the pair, so a cell gives the same result in
    any worker and in any order; a worker's caches only save recomputation.
    """

    def __init__(self, texts: Sequence[str], model: Any, source: Any, *, budget: int,
                 parents: int, seed: int, start: str, sig: str,
                 evaluator: BiasEvaluator | None = None, lm_check: str | None = None) -> None:
        import uuid

        self.texts, self.model, self.source = list(texts), model, source
        self.lm_check = lm_check  # the check's masked LM (a make_source spec) or None
        self.budget, self.parents, self.seed, self.start, self.sig = (budget, parents, seed,
                                                                      start, sig)
        self.key = uuid.uuid4().hex
        self.evaluator = evaluator

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "evaluator": None}

    def _evaluator(self) -> BiasEvaluator:
        if self.evaluator is not None:
            return self.evaluator
        ev = _EVALUATORS.get(self.key)
        if ev is None:
            from robustlab.studies.second_order.neighbourhood import make_source

            predict = self.model
            if isinstance(predict, str):
                from robustlab.models.checkpoint import load_trained_model

                predict = load_trained_model(predict).predict_proba
            src = self.source
            if isinstance(src, dict):
                src = make_source(src["spec"], blacklist=src.get("blacklist", ()),
                                  kappa=src.get("kappa", 20), delta=src.get("delta", 3.0))
            ev = BiasEvaluator(predict, src, budget=self.budget, parents=self.parents,
                               seed=self.seed, lm_check=lm_check_for(self.lm_check, src))
            _EVALUATORS.clear()  # one study per process at a time
            _EVALUATORS[self.key] = ev
        return ev

    def __call__(self, _kind: str, params: dict[str, Any]) -> Any:
        from robustlab.runs.cells import CellOutput

        result, records = self._evaluator().cell(self.texts, tuple(params["pair"]),
                                                 int(params["k"]), self.start)
        return CellOutput(result={**result, "signature": self.sig}, records=records,
                          signature=self.sig)


@dataclass
class Bias:
    """The bias study (:class:`robustlab.runs.study.Study`): one cell per (pair, k).

    From the command line (and ``robustlab resume``) everything comes from :attr:`config`; from
    Python, ``predict`` (texts -> class probabilities), ``texts`` and ``source`` (a
    neighbourhood source object) may stand in for what the config names.
    """

    config: BiasConfig
    predict: Callable[[list[str]], np.ndarray] | None = None
    texts: Sequence[str] | None = None
    source: NeighbourhoodSource | None = None
    #: from Python: a language-model check object standing in for ``config.lm_check``
    lm_check: LanguageModelCheck | None = None
    kind: ClassVar[str] = "bias"

    def protected(self) -> list[str]:
        """The pairs' words and the blacklist (module gendered: footnote 7)."""
        return sorted({w for p in self.config.pairs for w in p} | set(self.config.blacklist or ()))

    def source_spec(self) -> dict[str, Any]:
        cfg = self.config
        return {"spec": cfg.source or os.environ.get("ROBUSTLAB_NEIGHBOURHOOD") or "wordnet",
                "blacklist": self.protected(), "kappa": cfg.kappa, "delta": cfg.delta}

    def inputs(self) -> list[tuple[str, str | None, str]]:
        cfg = self.config
        items = run_inputs.data_and_model(cfg.dataset, cfg.model,
                                          data_given=self.texts is not None,
                                          model_given=self.predict is not None)
        named = cfg.pairs_from in ("builtin", "checklist", "all")
        items.append(("pairs", None if named else cfg.pairs_from, "--pairs"))
        if self.source is None:
            value, origin = source_input(cfg.source)
            items.append(("neighbourhood", value, cfg.source_from or origin))
        if cfg.blacklist_from not in (None, "gendered", "pairs"):
            items.append(("blacklist", cfg.blacklist_from, "--blacklist"))
        if cfg.lm_check and not cfg.model.startswith(OBJECT):
            items.append(("lm_check", cfg.lm_check.removeprefix("mlm:"),
                          "default: the neighbourhood's masked LM" if cfg.lm_check == cfg.source
                          else "--lm-check"))
        return items

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        """Load the examples, the model and the neighbourhood source (nothing written yet)."""
        from robustlab.data.datasets import load_examples
        from robustlab.models.checkpoint import load_trained_model
        from robustlab.models.device import resolve_device
        from robustlab.signature import fingerprint
        from robustlab.studies.second_order.config import load_options
        from robustlab.studies.second_order.neighbourhood import make_source

        cfg = self.config
        device = str(resolve_device(ctx.device))
        source = self.source or make_source(cfg.source, blacklist=self.protected(),
                                            kappa=cfg.kappa, delta=cfg.delta, device=device)
        lm_check = self.lm_check or lm_check_for(cfg.lm_check, source, device)
        texts = self.texts
        where = cfg.dataset.get("path") or cfg.dataset.get("name")
        if texts is None:
            examples = load_examples(str(where), n=cfg.num_examples,
                                     **load_options(cfg.dataset))
            texts = [t for t, _ in examples]
        predict, name = self.predict, cfg.model.removeprefix(OBJECT)
        endpoint, estimated = None, None
        if predict is None and is_endpoint(cfg.model):
            # a model behind HTTP: f_soft asked through the endpoint client, every answer stored
            # in this run's store as it arrives (docs/endpoints.md)
            if ctx.executor != "sequential":
                raise InputError(f"--executor {ctx.executor}: bias over an endpoint runs with "
                                 "--executor sequential (its requests run --max-concurrency "
                                 "at a time)")
            endpoint, estimated = open_bias_endpoint(cfg, texts, ctx, out)
            predict, name = endpoint.predict_proba, endpoint.card.url
        elif predict is None:
            model = load_trained_model(cfg.model, device=device)
            predict, name = model.predict_proba, getattr(model, "model_id", lambda: cfg.model)()
        sig = cfg.signature()
        cells = [Cell(f"pair={p1}/{p2}|k={k}", "bias", {"pair": [p1, p2], "k": k})
                 for p1, p2 in cfg.pairs for k in cfg.ks]
        common = {"budget": cfg.budget, "parents": cfg.parents, "seed": cfg.seed,
                  "start": cfg.start, "sig": sig}
        if ctx.executor == "sequential":
            ev = BiasEvaluator(predict, source, budget=cfg.budget, parents=cfg.parents,
                               seed=cfg.seed, lm_check=lm_check, **({} if endpoint is None else {
                                   # every text a cell needs in one call: its requests run
                                   # --max-concurrency at a time
                                   "batch_size": 1 << 20, "is_invalid": endpoint.is_invalid}))
            fn = BiasCells(texts, None, None, evaluator=ev, **common)
        else:
            spec_model = None if self.predict is not None else cfg.model
            model_for: Any = spec_model or predict
            src: Any = self.source or self.source_spec()
            if ctx.executor == "ray":  # nodes may share no files with this machine
                if spec_model and Path(spec_model).exists():
                    model_for = predict
                if isinstance(src, dict) and str(src.get("spec") or "").startswith("table:"):
                    src = source
            fn = BiasCells(texts, model_for, src, lm_check=cfg.lm_check, **common)
        return Plan(cells=cells, cell_fn=fn, name=f"bias {name}",
                    pins={"data": (fingerprint(list(texts)), f"--dataset {where}")},
                    state={"source": source.name, "model_name": name, "endpoint": endpoint,
                           "estimate": estimated})

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]:
        from robustlab.outputs import write_json, write_jsonl

        cfg = self.config
        cells = plan.cells
        done = {c.key: c for c in store.cells("done")}
        table, hist = [], {}
        for c in cells:
            if c.key in done:
                r = done[c.key].result
                table.append({k: r[k] for k in ("pair", "k", "B", "std", "n", "sampled",
                                                 "filtered_fraction")})
                name = "/".join(r["pair"])
                hist.setdefault(name, {})[r["k"]] = [x["f_soft"] for x in store.records(c.key)]
        files = [write_table(out / "bias_table.csv", table).name]
        if ctx.plots:
            files += plot_bias(out, table, hist, list(cfg.ks))
        bs = [r["B"] for r in table if r["B"] is not None]
        summary = {**summary_base(self, store, report), "files": files, "table": table,
                   "source": plan.state["source"], "model": plan.state["model_name"],
                   "epsilon": EPSILON,
                   "mean_abs_B": statistics.fmean(abs(b) for b in bs) if bs else None}
        endpoint = plan.state.get("endpoint")
        if endpoint is not None:  # what asking cost, and why it stopped (docs/endpoints.md)
            from robustlab.endpoints.costs import costs

            summary["endpoint"] = {**costs(store, endpoint),
                                   "invalid": len(endpoint.invalid_texts),
                                   "estimate": plan.state.get("estimate"),
                                   "stopped": endpoint.stopped}
        write_jsonl(out / "results.jsonl", [done[c.key].result for c in cells if c.key in done])
        write_json(out / "summary.json", summary)
        return summary


def query_bound(cfg: BiasConfig, texts: Sequence[str], done: set[str] = frozenset()
                ) -> tuple[int, str | None]:
    """An upper bound on the texts a bias run asks its model for the cells not in ``done``,
    and the first text it asks (None: it asks nothing). A cell (p, k) asks f_soft of x and
    x ⊕ p for X_test (which every cell of the pair shares) and for Neighbor_k, sampled to at
    most ``budget`` sentences: 2·|X_test| + 2·budget per distance k >= 1, per pair, before the
    language-model check, stored answers and duplicates, which only lower it."""
    total, first = 0, None
    for pair in cfg.pairs:
        todo = [k for k in cfg.ks if f"pair={pair[0]}/{pair[1]}|k={k}" not in done]
        items = BiasEvaluator._test_items(texts, tuple(pair))
        if not todo or not items:
            continue
        first = first or items[0][2][0]
        total += 2 * len(items) + 2 * cfg.budget * sum(k >= 1 for k in todo)
    return total, first


def open_bias_endpoint(cfg: BiasConfig, texts: Sequence[str], ctx: RunContext, out: Path
                       ) -> tuple[Any, int]:
    """The endpoint ``cfg.model`` names (an :class:`~robustlab.endpoints.EndpointModel` whose
    cache is this run's store) and its query bound, printed first and checked against
    ``--max-queries`` (refused in one line when larger: nothing asked or written). The first
    text the study needs is asked here, so an unreachable host or a bad reply is one line,
    exit 2, before the run is created."""
    from robustlab.endpoints import LIMITS, open_endpoint, refuse_over_budget
    from robustlab.runs.store import StoreCache, is_run_dir
    from robustlab.textfmt import echo

    done: set[str] = set()
    if is_run_dir(out):  # a resume: finished cells ask nothing
        with RunStore(out, readonly=True) as store:
            done = {c.key for c in store.cells("done")}
    queries, first = query_bound(cfg, texts, done)
    echo(f"robustlab bias: {cfg.model}: at most {queries:,} endpoint queries for the cells not "
         f"done yet — an upper bound: x and x ⊕ p for X_test and for each Neighbor_k (k >= 1, "
         f"at most --budget {cfg.budget} sentences)")
    refuse_over_budget("bias run", queries, "--budget, --k or --num-examples")
    model = open_endpoint(cfg.model, cache=StoreCache(out), trusted=ctx.may_send_key(),
                          limits=LIMITS)
    if first is not None:
        model.predict_proba([first])  # asked by the first cell anyway
    return model, queries


def run_bias_study(*, predict: Callable[[list[str]], np.ndarray], model_name: str,
                   texts: Sequence[str], pairs: Sequence[tuple[str, str]],
                   source: NeighbourhoodSource, out: str | Path, ks: Sequence[int] = (0, 1, 2, 3),
                   budget: int = 2000, parents: int = 200, seed: int = 0, start: str = "test",
                   dataset_name: str = "", progress: bool = True, executor: str = "sequential",
                   workers: int = 1, ray_address: str | None = None, gpus_per_task: float = 0.0,
                   cpus_per_task: float = 1.0, log: Callable[[str], None] | None = None,
                   lm_check: LanguageModelCheck | None = None,
                   **_ignored: Any) -> dict[str, Any]:
    """B(p, k) of ``predict`` on ``texts`` (the Python API): the :class:`Bias` study with these
    objects standing in for a model spec, a dataset, a neighbourhood source (its blacklist is
    the caller's) and the language-model check (recorded by its model's name)."""
    from robustlab.runs.study import run_with

    config = BiasConfig(model=OBJECT + model_name, dataset={"name": dataset_name or "python"},
                        pairs=tuple((str(a), str(b)) for a, b in pairs),
                        ks=tuple(sorted(set(int(k) for k in ks))), budget=budget,
                        parents=parents, seed=seed, start=start,
                        source=getattr(source, "name", None), pairs_from="python",
                        lm_check=f"mlm:{lm_check.lm.model_id}" if lm_check else None)
    study = Bias(config, predict=predict, texts=list(texts), source=source, lm_check=lm_check)
    return run_with(study, out, executor=executor, workers=workers, ray_address=ray_address,
                    gpus_per_task=gpus_per_task, cpus_per_task=cpus_per_task,
                    progress=progress, log=log).summary


def from_stored(config: Any, trusted: bool) -> Bias:
    """The study of a configuration object from Python, or of a stored one (its
    :class:`~robustlab.studies.kind.StudyKind`)."""
    from robustlab.runs.study import study_of

    return study_of(Bias, BiasConfig, config, trusted, python_objects=True)
