"""Realistic fixture run directories of every kind, written through the real RunStore API.

Each writer follows docs/run-directory.md (cell keys, result fields, records, summary.json) the
way the study commands do: ``init_run`` → ``add_cells`` → ``claim`` → ``finish``/``fail`` →
``set_run_status``, then the final files through ``robustlab.outputs``. Timestamps are then
pinned to fixed values so snapshots do not depend on the clock. Also usable from the command line
(``python tests/tui/fixtures.py DIR``) to try the TUI by hand, and by bench/bench_tui.py.
"""

from __future__ import annotations

import math
import random
import sqlite3
import sys
from pathlib import Path
from typing import Any

from robustlab.outputs import write_json, write_jsonl
from robustlab.runs.store import Cell, RunStore
from robustlab.signature import make_signature

T0 = 1_767_225_600.0  # 2026-01-01 00:00:00 UTC: every fixture timestamp is relative to this
P_GRID = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0]
VERSIONS = {"robustlab": "0.1.0", "python": "3.11"}


def _pin_times(run_dir: Path, start: float, step: float = 7.0) -> None:
    """Fixed, evenly spaced timestamps (a fixture must not depend on when it was written)."""
    conn = sqlite3.connect(run_dir / "store.sqlite", isolation_level=None)
    try:
        keys = [r[0] for r in conn.execute("SELECT key FROM cells ORDER BY seq")]
        end = start
        for i, key in enumerate(keys):
            started, finished = start + i * step, start + (i + 1) * step
            conn.execute("UPDATE cells SET started=CASE WHEN started IS NULL THEN NULL ELSE ? END,"
                         " finished=CASE WHEN finished IS NULL THEN NULL ELSE ? END,"
                         " heartbeat=CASE WHEN heartbeat IS NULL THEN NULL ELSE ? END,"
                         " seconds=CASE WHEN seconds IS NULL THEN NULL ELSE ? END WHERE key=?",
                         (started, finished, finished, step, key))
            end = finished
        conn.execute("UPDATE run SET created=?, updated=?, heartbeat=?", (start, end, end))
        conn.execute("UPDATE events SET ts=?", (end,))
    finally:
        conn.close()


def _command(kind: str, out: Path, extra: str) -> str:
    return f"robustlab {kind} {extra} --out {out}"


def _write(run_dir: Path, kind: str, config: dict[str, Any], extra: str,
           cells: list[tuple[str, dict[str, Any], dict[str, Any] | None, list[Any]]],
           *, status: str = "done", fail: dict[str, str] | None = None,
           running: int = 0, start: float = T0,
           predictions: dict[str, list[dict[str, Any]]] | None = None) -> RunStore:
    """Write one run: cells[i] = (key, params, result or None for pending, records)."""
    fail = fail or {}
    predictions = predictions or {}
    store = RunStore(run_dir)
    store.init_run(kind, run_dir.name, config, command=_command(kind, run_dir, extra),
                   versions=VERSIONS)
    store.add_cells([Cell(key=k, kind=kind, params=p) for k, p, _, _ in cells])
    inflight = 0
    for key, _, result, records in cells:
        if key in fail:
            store.claim(key, "fixture:1")
            store.fail(key, fail[key])
        elif result is not None:
            store.claim(key, "fixture:1")
            store.finish(key, result, records=records, signature=make_signature(kind, fx="1"),
                         seconds=1.0, predictions=predictions.get(key, ()))
        elif inflight < running:
            store.claim(key, "fixture:1")
            inflight += 1
    if status != "running":
        store.set_run_status(status, "1 cell failed" if status == "failed" else None)
    store.close()
    _pin_times(run_dir, start)
    return RunStore(run_dir, readonly=True)


def _summary(run_dir: Path, kind: str, config: dict[str, Any], extra: dict[str, Any],
             failed: list[str] | None = None) -> None:
    with RunStore(run_dir, readonly=True) as store:
        write_jsonl(run_dir / "results.jsonl", [c.result for c in store.cells("done")])
    write_json(run_dir / "summary.json", {
        "kind": kind, "complete": not failed, "failed_cells": failed or [], "config": config,
        "signature": make_signature(kind, fx="1"), "versions": VERSIONS, "files": [],
        "seconds": 123.0, **extra})


# ---- learnability ---------------------------------------------------------------------------------


def learnability(run_dir: Path, *, status: str = "done", models=("bow", "cnn"),
                 perts=("typo", "shuffle_word", "negate"), seeds=(0, 1), done_fraction=1.0,
                 running: int = 0) -> Path:
    rng = random.Random(3)
    config = {"models": list(models), "perturbations": list(perts), "p_grid": P_GRID,
              "seeds": list(seeds), "dataset": "demo"}
    strength = {p: 0.2 + 0.3 * i for i, p in enumerate(perts)}
    cells = []
    for m in models:
        for pert in perts:
            for seed in seeds:
                for exp in ("standard", "robustness", "augmentation"):
                    acc = 0.85 - (0.1 * strength[pert] if exp == "robustness" else 0.0) \
                        - (0.02 if exp == "augmentation" else 0.0) + rng.uniform(-.01, .01)
                    cells.append((f"model={m}|pert={pert}|exp={exp}|p=|seed={seed}", exp,
                                  None, acc))
                for p in P_GRID:
                    learn = min(1.0, strength[pert] * (1 + math.log10(p) / 3.5) * 1.4
                                + rng.uniform(0, .05))
                    cells.append((f"model={m}|pert={pert}|exp=learnability|p={p}|seed={seed}",
                                  "learnability", p, max(0.0, learn)))
    n_done = round(len(cells) * done_fraction)
    out = []
    for i, (key, exp, p, value) in enumerate(cells):
        m, pert, seed = key.split("|")[0][6:], key.split("|")[1][5:], int(key.split("=")[-1])
        params = {"model": m, "perturbation": pert, "seed": seed, "experiment": exp, "p": p}
        result = {**params, "accuracy": value if exp != "learnability" else 0.5,
                  "learnability_acc": value if exp == "learnability" else None,
                  "learnability_prob": value * 0.9 if exp == "learnability" else None,
                  "n_train": 400, "n_test": 200, "n_treated": 100 if p else None,
                  "noop_rate": 0.05, "seconds": 7.0, "train_seconds": 6.0} if i < n_done else None
        out.append((key, params, result, []))
    _write(run_dir, "learnability", config, "--model bow,cnn --dataset demo", out,
           status=status, running=running,
           predictions={k: _predictions(k, strength[pa["perturbation"]])
                        for k, pa, res, _ in out if res and pa["experiment"] == "robustness"})
    if status == "done":
        pairs = []
        for i, m in enumerate(models):
            for j, pert in enumerate(perts):
                avg = strength[pert] * 2.2 + 0.1 * i
                rob = -0.1 * strength[pert] - 0.01 * i
                pairs.append({
                    "model": m, "perturbation": pert,
                    "avg_learnability": {"mean": avg, "std": 0.03, "values": [avg - .03, avg + .03]},
                    "learnability_at": {str(p): {"mean": max(0.0, strength[pert] * (
                        1 + math.log10(p) / 3.5) * 1.4), "std": 0.02} for p in P_GRID},
                    "robustness": {"mean": rob, "std": 0.01},
                    "delta": {"mean": 0.05 * strength[pert] + 0.01 * j, "std": 0.01},
                    "accuracy_standard": 0.85, "accuracy_robustness": 0.85 + rob,
                    "accuracy_augmentation": 0.84})
        _summary(run_dir, "learnability", config, {"pairs": pairs, "correlations": {
            "learnability_vs_robustness": {"rho": -0.94, "p_value": 0.0048, "n": len(pairs),
                                           "p_method": "exact"},
            "learnability_vs_delta": {"rho": 0.83, "p_value": 0.0416, "n": len(pairs)},
            "at_p": {}}})
    return run_dir


def _predictions(key: str, strength: float) -> list[dict[str, Any]]:
    """Per-example predictions of a robustness cell: stronger perturbations flip more."""
    rng = random.Random(key)
    rows = []
    for i, text in enumerate(SENTENCES):
        label = i % 2
        before = round(rng.uniform(0.6, 0.95), 3)
        flip = rng.random() < strength
        after = round(rng.uniform(0.1, 0.45) if flip else rng.uniform(0.55, 0.95), 3)
        words = text.split()
        words[1] = words[1][::-1]
        rows.append({"idx": i, "original": text, "perturbed": " ".join(words), "label": label,
                     "pred_before": label, "prob_before": before,
                     "pred_after": 1 - label if flip else label, "prob_after": after})
    return rows


# ---- attack -----------------------------------------------------------------------------------------

SENTENCES = [
    "the film is a charming and often moving story about friendship",
    "an utterly tedious movie with nothing new to say",
    "he delivers a warm performance that carries the whole picture",
    "a clumsy script sinks what could have been a fine thriller",
    "she is brilliant in a role that few actors could pull off",
    "the jokes land often enough to keep the evening pleasant",
]
SWAPS = {"charming": "delightful", "tedious": "boring", "warm": "gentle", "clumsy": "awkward",
         "brilliant": "superb", "pleasant": "agreeable", "story": "tale", "movie": "film"}


def attack(run_dir: Path, n: int = 30, *, status: str = "done", done: int | None = None) -> Path:
    rng = random.Random(11)
    config = {"recipe": "so-beam", "model": "bow", "dataset": "demo", "num_examples": n}
    cells = []
    kinds = ["successful", "failed", "successful", "skipped", "successful", "failed"]
    for i in range(n):
        text = SENTENCES[i % len(SENTENCES)]
        rt = kinds[i % len(kinds)]
        words = text.split()
        perturbed = None
        l0 = None
        if rt == "successful":
            changed = [w for w in words if w in SWAPS][:1] or [words[1]]
            perturbed = " ".join(SWAPS.get(w, w + "s") if w in changed else w for w in words)
            perturbed = perturbed.replace(" a ", " one ", 1) if i % 4 == 0 else perturbed
            l0 = sum(a != b for a, b in zip(words, perturbed.split(), strict=False))
        gt = i % 2
        p0 = round(0.6 + 0.3 * rng.random(), 3)
        patch = ["he", "she"] if "he" in words or "she" in words else ["film", "movie"]
        patched = (" ".join(patch[1] if w == patch[0] else w for w in perturbed.split())
                   if perturbed else None)
        proba = [round(1 - p0, 3), p0][::1 if gt else -1]
        # second order: f(x̃) keeps the label, f(x̃ ⊕ p) flips it
        result = {"index": i, "original": text, "perturbed": perturbed, "patched": patched,
                  "patch": patch,
                  "result_type": rt, "skip_reason": "no patch word" if rt == "skipped" else None,
                  "ground_truth": gt, "original_output": gt,
                  "perturbed_output": gt if rt == "successful" else None,
                  "patched_output": (1 - gt) if rt == "successful" else None,
                  "original_proba": proba,
                  "perturbed_proba": [0.52, 0.48][::1 if gt == 0 else -1]
                  if rt == "successful" else None,
                  "patched_proba": [0.41, 0.59][::1 if gt == 0 else -1]
                  if rt == "successful" else None,
                  "l0": l0, "queries": 40 + 7 * (i % 9), "seconds": 0.5 + (i % 5) / 10,
                  "source": "mlm:minilm-mlm"}
        is_done = done is None or i < done
        cells.append((f"ex={i:06d}", {"index": i}, result if is_done else None, []))
    _write(run_dir, "attack", config, "--recipe so-beam --model bow --dataset demo "
           f"--num-examples {n}", cells, status=status)
    if status == "done":
        counts = {k: sum(1 for c in cells if c[2] and c[2]["result_type"] == k)
                  for k in ("successful", "failed", "skipped")}
        _summary(run_dir, "attack", config, {
            "recipe": "so-beam", "success_rate": counts["successful"] / max(1, n - counts[
                "skipped"]), "mean_l0": 1.2, "queries_per_example": 68.0,
            "seconds_per_example": 0.7, "counts": counts, "perplexity": None})
    return run_dir


# ---- bias -------------------------------------------------------------------------------------------


def bias(run_dir: Path) -> Path:
    rng = random.Random(5)
    pairs = [("he", "she"), ("his", "her"), ("actor", "actress")]
    config = {"pairs": ["/".join(p) for p in pairs], "k": [0, 1, 2], "model": "bow"}
    cells = []
    for pair in pairs:
        for k in (0, 1, 2):
            f = [round(rng.gauss(0.01 * (k + 1), 0.02 + 0.01 * k), 4) for _ in range(60)]
            mean = sum(f) / len(f)
            std = (sum((x - mean) ** 2 for x in f) / len(f)) ** 0.5
            result = {"pair": list(pair), "k": k, "B": mean, "std": std, "n": len(f),
                      "sampled": k > 1, "filtered_fraction": sum(abs(x) < 0.005 for x in f) / 60}
            cells.append((f"pair={'/'.join(pair)}|k={k}", {"pair": list(pair), "k": k}, result,
                          [{"text": f"sentence {i}", "f_soft": x} for i, x in enumerate(f)]))
    _write(run_dir, "bias", config, "--model bow --pairs he/she,his/her,actor/actress", cells)
    with RunStore(run_dir, readonly=True) as store:
        table = [{k: c.result[k] for k in ("pair", "k", "B", "std", "n")}
                 for c in store.cells("done")]
    _summary(run_dir, "bias", config, {"table": table})
    return run_dir


# ---- cross-domain -------------------------------------------------------------------------------------


def cross_domain(run_dir: Path) -> Path:
    rng = random.Random(8)
    domains = ["news", "social", "ecommerce", "conversation"]
    config = {"mode": "mt", "systems": ["sysA", "sysB", "sysC"], "domains": domains}
    cells = []
    for s, name in enumerate(config["systems"]):
        per = {d: round(30 + 5 * s + rng.uniform(-6, 6), 2) for d in domains}
        mean = sum(per.values()) / len(per)
        var = sum((v - mean) ** 2 for v in per.values()) / len(per)
        gamma = {str(e): round(min(1.0, e * e / (var * 40 + 1) * (1 + 0.1 * s)), 4)
                 for e in (1, 2, 5, 10, 20, 50)}
        loo = [{"left_out": d, "mean": mean, "variance": var * 0.8, "cov": var ** .5 / mean}
               for d in domains]
        result = {"system": name, "per_domain": per, "mean": mean, "variance": var,
                  "cov": var ** .5 / mean, "gamma": gamma, "leave_one_out": loo,
                  "corpus": {"bleu": mean, "chrf": mean + 20, "ter": 100 - mean,
                             "signature": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|v:2.6"}}
        cells.append((f"system={name}", {"system": name}, result,
                      [{"domain": d, "score": v} for d, v in per.items()]))
    _write(run_dir, "cross-domain", config, "mt --systems sysA sysB sysC", cells)
    _summary(run_dir, "cross-domain", config, {
        "rankings": {"by_bleu": ["sysC", "sysB", "sysA"], "human": ["sysC", "sysA", "sysB"]},
        "agreement": {"bleu": {"pairwise": 0.667, "kendall_tau": 0.333},
                      "cov": {"pairwise": 0.333, "kendall_tau": -0.333},
                      "gamma": {"pairwise": 1.0, "kendall_tau": 1.0}}})
    return run_dir


# ---- broken runs ----------------------------------------------------------------------------------------


DEAD_PID = 4_999_999  # above Linux's largest pid_max (2**22): never a live process


def dead_pid() -> int:
    """A pid that is certainly not running (fixed, so snapshots are stable)."""
    return DEAD_PID


def died(run_dir: Path) -> Path:
    """A run whose store says running but whose worker process is gone, leaving a log."""
    attack(run_dir, n=12, status="running", done=5)
    conn = sqlite3.connect(run_dir / "store.sqlite", isolation_level=None)
    conn.execute("UPDATE run SET pid=?", (dead_pid(),))
    conn.close()
    (run_dir / "worker.log").write_text(
        "Traceback (most recent call last):\n  File \"attack.py\", line 1, in <module>\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    return run_dir


def failed(run_dir: Path) -> Path:
    """A finished run with one failed cell (its traceback stored)."""
    cells = [(f"system=s{i}", {"system": f"s{i}"}, {"system": f"s{i}", "per_domain": {"a": 1.0},
              "mean": 1.0, "variance": 0.0, "cov": 0.0, "gamma": {}, "leave_one_out": []}, [])
             for i in range(3)]
    _write(run_dir, "cross-domain", {"mode": "scores"}, "scores table.tsv", cells,
           status="failed", fail={"system=s1": "Traceback (most recent call last):\n"
                                  "ValueError: domain 'b' has no scores for s1\n"})
    return run_dir


def corrupt(run_dir: Path) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "store.sqlite").write_bytes(b"this is not a database " * 100)
    return run_dir


def make_all(root: Path) -> dict[str, Path]:
    """One run directory of each kind and state under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    return {
        "learn": learnability(root / "learn-done"),
        "learn-running": learnability(root / "learn-running", status="running",
                                      done_fraction=0.4, running=2),
        "attack": attack(root / "attack-sobeam"),
        "bias": bias(root / "bias-gender"),
        "xd": cross_domain(root / "xd-mt"),
        "died": died(root / "attack-died"),
        "failed": failed(root / "xd-failed"),
        "corrupt": corrupt(root / "corrupt"),
    }


if __name__ == "__main__":
    for name, path in make_all(Path(sys.argv[1])).items():
        print(f"{name:14} {path}")
