"""Counterfactual token bias (paper 002, Sec. 4, Eq. 5–6) into a run directory (kind ``bias``).

B(p, k) = mean of F_soft(x; p) = f_soft(x ⊕ p) − f_soft(x) over x ∈ Neighbor_k(X_test), k = 0..3
(k = 0 is the test set). X_test = the sentences with p1 exactly once (and p2 absent); f_soft =
P(class 1). Neighbourhoods are built one substitution at a time by a neighbourhood source with
the protected words of every pair blacklisted and the patch word frozen; Neighbor_k is the
deduplicated union of Neighbor_1 over Neighbor_{k−1} (so it holds sentences within ℓ0 ≤ k).

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
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.errors import InputError
from robustlab.recipes.neighbourhood import NeighbourhoodSource, match_case

EPSILON = 0.005
BUILTIN_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("his", "her"), ("him", "her"), ("himself", "herself"), ("man", "woman"),
    ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("father", "mother"),
    ("son", "daughter"), ("brother", "sister"), ("husband", "wife"), ("king", "queen"),
    ("actor", "actress"), ("actors", "actresses"), ("mr", "mrs"), ("gentleman", "lady"),
    ("male", "female"), ("guy", "gal"), ("uncle", "aunt"),
)
CHECKLIST_LEXICONS = ("nationality", "religion_adj", "sexual_adj")


def checklist_pairs(per_lexicon: int = 5) -> list[tuple[str, str]]:
    """Pairs from CheckList's lexicons (nationality, religion, sexual orientation) when installed.

    Each lexicon's first ``per_lexicon + 1`` single-word entries are chained into pairs
    (a, b), (b, c), ...; (gay, straight) is always included, as in the paper's Fig. 7.
    """
    import importlib.util

    spec = importlib.util.find_spec("checklist")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "lexicons" / "basic.json"
    if not path.is_file():
        return []
    lex = json.loads(path.read_text(encoding="utf-8"))
    out: list[tuple[str, str]] = []
    for name in CHECKLIST_LEXICONS:
        words = [w.lower() for w in lex.get(name, []) if isinstance(w, str) and w.isalpha()]
        words = words[: per_lexicon + 1]
        out += list(zip(words, words[1:], strict=False))
    if ("gay", "straight") not in out:
        out.append(("gay", "straight"))
    return out


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """A pair file: one pair per line, ``p1 p2`` / ``p1<TAB>p2`` / ``p1,p2``; # comments."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--pairs file {p} does not exist")
    out = []
    for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [x.strip() for x in line.replace(",", " ").replace("\t", " ").split()]
        if len(parts) != 2 or not all(x.isalpha() for x in parts):
            raise InputError(f"{p}, line {n}: expected two words 'p1 p2', got {line!r}")
        out.append((parts[0].lower(), parts[1].lower()))
    if not out:
        raise InputError(f"--pairs file {p} holds no pairs")
    return out


def resolve_pairs(spec: str | None) -> list[tuple[str, str]]:
    """``builtin`` (default), ``checklist``, ``all`` (both) or a pair file."""
    spec = spec or "builtin"
    if spec == "builtin":
        return list(BUILTIN_PAIRS)
    if spec == "checklist":
        pairs = checklist_pairs()
        if not pairs:
            raise InputError("--pairs checklist: CheckList is not installed (pip install checklist)")
        return pairs
    if spec == "all":
        return list(BUILTIN_PAIRS) + checklist_pairs()
    return read_pairs(spec)


class BiasEvaluator:
    """B(p, k) with cached model outputs and neighbourhoods (cells recompute levels cheaply)."""

    def __init__(self, predict: Callable[[list[str]], np.ndarray], source: NeighbourhoodSource,
                 *, budget: int = 2000, parents: int = 200, seed: int = 0,
                 batch_size: int = 256) -> None:
        self.predict, self.source = predict, source
        self.budget, self.parents, self.seed, self.batch_size = budget, parents, seed, batch_size
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
                self._proba[t] = float(row[1])
        return np.array([self._proba[t] for t in texts])

    @staticmethod
    def test_set(texts: Sequence[str], pair: tuple[str, str]) -> list[tuple[list[str], int]]:
        """(words, index of p1) for sentences with p1 exactly once and p2 absent."""
        p1, p2 = pair
        out = []
        for t in texts:
            words = t.split()
            low = [w.lower() for w in words]
            if low.count(p1) == 1 and p2 not in low:
                out.append((words, low.index(p1)))
        return out

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
        base = self.test_set(texts, pair)
        fs0 = self.f_soft_change(base, pair[1]) if base else np.zeros(0)
        filtered = [b for b, f in zip(base, fs0, strict=False) if abs(f) < EPSILON]
        if start == "filter":
            base = filtered
        items, sampled = self.levels(base, pair, k) if base else ([], False)
        fs = self.f_soft_change(items, pair[1]) if items else np.zeros(0)
        result = {
            "pair": list(pair), "k": k, "B": float(fs.mean()) if len(fs) else None,
            "std": float(fs.std()) if len(fs) else None, "n": len(fs), "sampled": sampled,
            "filtered_fraction": len(filtered) / len(fs0) if len(fs0) else None,
            "n_test": len(fs0), "n_filter": len(filtered), "start": start,
            "source": self.source.name,
        }
        records = [{"text": " ".join(w), "f_soft": float(f)}
                   for (w, _), f in zip(items, fs, strict=False)]
        return result, records


def write_table(path: Path, table: list[dict[str, Any]]) -> Path:
    from robustlab.runs.outputs import atomic_write

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


def run_bias_study(*, predict: Callable[[list[str]], np.ndarray], model_name: str,
                   texts: Sequence[str], pairs: Sequence[tuple[str, str]],
                   source: NeighbourhoodSource, out: str | Path, ks: Sequence[int] = (0, 1, 2, 3),
                   budget: int = 2000, parents: int = 200, seed: int = 0, start: str = "test",
                   dataset_name: str = "", command: str | None = None,
                   progress: bool = True) -> dict[str, Any]:
    """One cell per (pair, k) into ``out`` (resumable); returns ``summary.json``."""
    from robustlab.runs.executor import CellOutput, run_cells
    from robustlab.runs.outputs import write_json, write_jsonl
    from robustlab.runs.signature import fingerprint, make_signature, versions
    from robustlab.runs.store import Cell, RunStore

    if start not in ("test", "filter"):
        raise InputError(f"start must be 'test' or 'filter' (got {start!r})")
    if any(k < 0 for k in ks):
        raise InputError("k must be >= 0")
    out = Path(out)
    config = {"model": model_name, "dataset": dataset_name, "data": fingerprint(list(texts)),
              "pairs": [list(p) for p in pairs], "ks": list(ks), "budget": budget,
              "parents": parents, "seed": seed, "start": start, "source": source.name,
              "epsilon": EPSILON}
    store = RunStore(out)
    store.init_run("bias", f"bias {model_name}", config, command=command, versions=versions())
    ev = BiasEvaluator(predict, source, budget=budget, parents=parents, seed=seed)
    sig = make_signature("bias", model=model_name, data=config["data"], source=source.name,
                         budget=budget, seed=seed)
    cells = [Cell(f"pair={p1}/{p2}|k={k}", "bias", {"pair": [p1, p2], "k": k})
             for p1, p2 in pairs for k in ks]

    def fn(_kind: str, params: dict[str, Any]) -> CellOutput:
        result, records = ev.cell(texts, tuple(params["pair"]), params["k"], start)
        return CellOutput(result={**result, "signature": sig}, records=records, signature=sig)

    t0 = time.perf_counter()
    report = run_cells(store, cells, fn, progress=progress, desc="bias")
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
    files += plot_bias(out, table, hist, ks)
    failed = [c.key for c in store.cells("failed")]
    bs = [r["B"] for r in table if r["B"] is not None]
    summary = {"kind": "bias", "complete": report.done == len(cells), "failed_cells": failed,
               "config": config, "signature": sig, "versions": versions(), "files": files,
               "seconds": time.perf_counter() - t0, "table": table, "source": source.name,
               "epsilon": EPSILON, "mean_abs_B": statistics.fmean(abs(b) for b in bs) if bs
               else None}
    write_jsonl(out / "results.jsonl", [done[c.key].result for c in cells if c.key in done])
    write_json(out / "summary.json", summary)
    store.set_run_status("done" if not failed else "failed",
                         None if not failed else f"{len(failed)} cells failed")
    store.close()
    return summary
