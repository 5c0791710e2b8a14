"""Reading a rendered report back: its tables (HTML or Markdown rendered by markdown-it-py)."""

from __future__ import annotations

from html.parser import HTMLParser


class Tables(HTMLParser):
    """Every <table> of an HTML page as {caption, head, rows, marks}, cell text unescaped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[dict] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._classes: list[str] = []
        self._in_caption = False
        self.images: list[str] = []
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.tables.append({"caption": "", "head": [], "rows": [], "marks": {}})
        elif tag == "caption":
            self._in_caption = True
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = []
            self._classes = (a.get("class") or "").split()
        elif tag == "img":
            self.images.append(a.get("src") or "")
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "caption":
            self._in_caption = False
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            text = "".join(self._cell).strip()
            t = self.tables[-1]
            if tag == "td":
                for c in ("best", "second"):
                    if c in self._classes:
                        t["marks"][(len(t["rows"]), len(self._row))] = c
            self._row.append(text)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            t = self.tables[-1]
            if not t["head"]:
                t["head"] = self._row
            else:
                t["rows"].append(self._row)
            self._row = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self._in_caption and self.tables:
            self.tables[-1]["caption"] += data
        elif self._in_title:
            self.title += data


def parse(html_text: str) -> Tables:
    p = Tables()
    p.feed(html_text)
    return p


def table(page: Tables, caption_part: str) -> dict:
    """The first table whose caption contains ``caption_part``."""
    for t in page.tables:
        if caption_part in t["caption"]:
            return t
    raise AssertionError(f"no table captioned {caption_part!r}; have "
                         f"{[t['caption'][:40] for t in page.tables]}")


def markdown_html(md_text: str) -> str:
    """CommonMark (with GFM tables) rendered by markdown-it-py, the reference parser."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(md_text)


# ---- cheap run directories of every report kind ---------------------------------------------------
#
# Written through the real RunStore API; where the study has a summary writer of its own
# (learnability / robustness / quick estimate, cross-domain) that writer makes summary.json, so
# the report reads what a real run would hold. Nothing is trained.

import math  # noqa: E402
import random  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

SENTENCES = [
    "the film is a charming and often moving story about friendship",
    "an utterly tedious movie with nothing new to say",
    "he delivers a warm performance that carries the whole picture",
    "a clumsy script sinks what could have been a fine thriller",
    "she is brilliant in a role that few actors could pull off",
    "the jokes land often enough to keep the evening pleasant",
]
#: a model id as `robustlab train` records it: 150+ characters with no space to break at
LONG_MODEL = ("textrnn(batch_size=64,bidirectional=True,cell=lstm,dropout=0.2,embed_dim=64,"
              "hidden=64,layers=1,lowercase=False,lr=0.004,max_len=50,max_vocab=30000,"
              "min_freq=2,seed=0,steps=150,weight_decay=0.0)")


def _store(run_dir: Path, kind: str, config: dict[str, Any], cells: list[tuple], *,
           command: str) -> Any:
    """cells: (key, params, result, records, predictions); every cell finished."""
    from robustlab.runs.store import Cell, RunStore

    store = RunStore(run_dir)
    store.init_run(kind, run_dir.name, config, command=command,
                   versions={"robustlab": "test", "python": "3.11"})
    store.add_cells([Cell(key=k, kind=kind, params=p) for k, p, *_ in cells])
    for key, _, result, records, preds in cells:
        store.claim(key, "test:1")
        store.finish(key, result, records=records, signature=f"{kind}|test", seconds=1.0,
                     predictions=preds)
    store.set_run_status("done")
    return store


def _predictions(key: str, strength: float) -> list[dict[str, Any]]:
    rng = random.Random(key)
    rows = []
    for i, text in enumerate(SENTENCES * 3):
        label = i % 2
        flip = rng.random() < strength
        words = text.split()
        words[1] = words[1][::-1]
        rows.append({"idx": i, "original": text, "perturbed": " ".join(words), "label": label,
                     "pred_before": label, "prob_before": round(rng.uniform(0.6, 0.95), 3),
                     "pred_after": 1 - label if flip else label,
                     "prob_after": round(rng.uniform(0.1, 0.45) if flip else
                                         rng.uniform(0.55, 0.95), 3)})
    return rows


def learnability_run(run_dir: Path, *, kind: str = "learnability", quick: bool = False,
                     learn: bool = True, models: tuple[str, ...] = ("bow", "cnn"),
                     perts: tuple[str, ...] = ("butter_fingers_perturbation", "shuffle_word",
                                               "append_token", "duplicate_punctuations"),
                     seeds: tuple[int, ...] = (0, 1)) -> Path:
    """A learnability run (``quick``: the quick estimate, learnability at p=0.02 for every
    seed and p=1 for the first; ``learn=False``: a robustness study, exp 0–2 only), summarised
    by the study's own writer."""
    from robustlab.studies.learnability.report import write_outputs

    rng = random.Random(7)
    grid = [0.001, 0.01, 0.02, 0.1, 0.5, 1.0]
    config = {"models": list(models), "perturbations": list(perts), "p_grid": grid,
              "seeds": list(seeds), "dataset": "demo", "steps": 60,
              "experiments": (["learnability"] if learn else [])
              + ["standard", "robustness", "augmentation"],
              "estimate": "quick" if quick else "full", "estimate_p": 0.02}
    strength = {p: 0.15 + 0.25 * i for i, p in enumerate(perts)}
    cells = []
    for m in models:
        for pert in perts:
            for seed in seeds:
                base = {"model": m, "perturbation": pert, "seed": seed, "n_train": 300,
                        "n_test": 100, "noop_rate": 0.05, "seconds": 2.0, "train_seconds": 1.5}
                a0 = 0.8 + rng.uniform(-.02, .02)
                a1 = a0 - 0.2 * strength[pert] + rng.uniform(-.01, .01)
                a2 = a1 + 0.1 * strength[pert] + rng.uniform(-.01, .01)
                for exp, acc in (("standard", a0), ("robustness", a1), ("augmentation", a2)):
                    key = f"model={m}|pert={pert}|exp={exp}|p=|seed={seed}"
                    res = {**base, "experiment": exp, "p": None, "accuracy": acc,
                           "accuracy_clean": a0 if exp == "robustness" else None}
                    cells.append((key, {"model": m, "perturbation": pert, "seed": seed,
                                        "experiment": exp, "p": None}, res, [],
                                  _predictions(key, strength[pert]) if exp == "robustness"
                                  else []))
                if not learn:
                    continue
                ps = ([0.02] + ([1.0] if seed == seeds[0] else [])) if quick else grid
                for p in ps:
                    v = max(0.0, min(1.0, strength[pert] * (1 + math.log10(p) / 3) * 1.3
                                     + rng.uniform(0, .04)))
                    key = f"model={m}|pert={pert}|exp=learnability|p={p}|seed={seed}"
                    res = {**base, "experiment": "learnability", "p": p, "accuracy": 0.5,
                           "learnability_acc": v, "learnability_prob": v * 0.9,
                           "n_treated": 50}
                    cells.append((key, {"model": m, "perturbation": pert, "seed": seed,
                                        "experiment": "learnability", "p": p}, res, [], []))
    store = _store(run_dir, kind, config, cells, command=f"robustlab {kind} --out {run_dir}")
    write_outputs(store, run_dir, seconds=12.0, plots=False)
    store.close()
    return run_dir


def attack_run(run_dir: Path) -> Path:
    """An attack run with a model id as long as a real one and a vulnerable example whose
    ℓ0 is 0 (x itself is vulnerable)."""
    from robustlab.outputs import write_json

    config = {"recipe": "so-beam", "model": LONG_MODEL, "dataset": "demo", "num_examples": 12}
    cells = []
    kinds = ["successful", "failed", "successful", "skipped"]
    for i in range(12):
        text = SENTENCES[i % len(SENTENCES)]
        rt = kinds[i % len(kinds)]
        words = text.split()
        perturbed = None
        if rt == "successful":
            perturbed = text if i == 0 else " ".join(
                w.upper() if j == 2 else w for j, w in enumerate(words)).replace(
                words[2].upper(), "a-new-word")
        l0 = None if perturbed is None else (0 if perturbed == text else 1)
        gt = i % 2
        patch = ["film", "movie"]
        result = {"index": i, "original": text, "perturbed": perturbed,
                  "patched": perturbed and perturbed.replace("film", "movie"), "patch": patch,
                  "result_type": rt, "ground_truth": gt, "original_output": gt,
                  "perturbed_output": gt if perturbed else None,
                  "patched_output": 1 - gt if perturbed else None, "l0": l0,
                  "queries": 40 + i, "seconds": 0.5}
        cells.append((f"ex={i:06d}", {"index": i}, result, [], []))
    _store(run_dir, "attack", config, cells,
           command=f"robustlab attack --model {LONG_MODEL} --out {run_dir}").close()
    counts = {k: kinds.count(k) * 3 for k in ("successful", "failed", "skipped")}
    write_json(run_dir / "summary.json", {
        "kind": "attack", "complete": True, "failed_cells": [], "config": config,
        "signature": "attack|test", "versions": {}, "files": [], "seconds": 9.0,
        "recipe": "so-beam", "success_rate": 0.5, "mean_l0": 0.67, "queries_per_example": 45.5,
        "seconds_per_example": 0.5, "counts": counts, "perplexity": None})
    return run_dir


def bias_run(run_dir: Path) -> Path:
    """A bias run over 6 pairs of which 3 never occur (n = 0 at every k)."""
    from robustlab.outputs import write_json

    rng = random.Random(5)
    pairs = [("he", "she"), ("his", "her"), ("actor", "actress"), ("king", "queen"),
             ("waiter", "waitress"), ("nephew", "niece")]
    config = {"pairs": ["/".join(p) for p in pairs], "k": [0, 1, 2], "model": LONG_MODEL}
    cells, table = [], []
    for n_pair, pair in enumerate(pairs):
        for k in (0, 1, 2):
            n = 0 if n_pair >= 3 else 40
            f = [round(rng.gauss(0.01 * (k + 1), 0.01), 4) for _ in range(n)]
            mean = sum(f) / n if n else None
            std = (sum((x - mean) ** 2 for x in f) / n) ** 0.5 if n else None
            row = {"pair": list(pair), "k": k, "B": mean, "std": std, "n": n}
            table.append(row)
            cells.append((f"pair={'/'.join(pair)}|k={k}", {"pair": list(pair), "k": k}, row,
                          [{"text": f"s{i}", "f_soft": x} for i, x in enumerate(f)], []))
    _store(run_dir, "bias", config, cells, command=f"robustlab bias --out {run_dir}").close()
    write_json(run_dir / "summary.json", {
        "kind": "bias", "complete": True, "failed_cells": [], "config": config,
        "signature": "bias|test", "versions": {}, "files": [], "seconds": 5.0, "table": table})
    return run_dir


def cross_domain_run(run_dir: Path, mode: str = "clf") -> Path:
    """A cross-domain run whose consistency tables (bagging included) are computed by the
    study's own functions from a small score matrix."""
    import numpy as np

    from robustlab.runs.store import RunStore
    from robustlab.studies.cross_domain.report import write_outputs
    from robustlab.studies.cross_domain.study import ConsistencyConfig, consistency_tables

    domains = ["books", "dvd", "electronics", "kitchen"]
    systems = ["bow", "cnn", "textrnn"]
    rng = np.random.default_rng(3)
    X = 70 + 10 * rng.random((len(systems), len(domains)))
    cfg = ConsistencyConfig()
    rows = consistency_tables(X, domains, cfg)
    config = {"mode": mode, "task": mode, "score": "accuracy" if mode == "clf" else "bleu",
              "systems": systems, "domains": domains, "n_bags": cfg.n_bags,
              "fraction": cfg.fraction, "seed": cfg.seed}
    cells = []
    for i, (name, r) in enumerate(zip(systems, rows, strict=True)):
        r = {**r, "system": name, "per_domain": dict(zip(domains, X[i].tolist(), strict=True))}
        if mode == "mt":
            r["corpus"] = {"bleu": float(X[i].mean()), "signature": {
                "bleu": "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1"}}
        cells.append((f"system={name}", {"system": name}, r, [], []))
    _store(run_dir, "cross-domain", config, cells,
           command=f"robustlab cross-domain {mode} --out {run_dir}").close()
    with RunStore(run_dir) as store:
        write_outputs(store, run_dir, seconds=3.0, plots=False)
    return run_dir


def patch_config(run_dir: Path, **changes: Any) -> None:
    """Change a stored run's configuration (a test fixture only), through the store so the
    configuration's checksum stays valid."""
    from robustlab.runs.store import RunStore

    with RunStore(run_dir) as store:
        cfg = store.run_info().config
        store.replace_config({**cfg, **changes})
