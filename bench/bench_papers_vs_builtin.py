"""Learnability with the papers' realisation of the perturbations vs robustlab's built-ins (issue 24).

Run: ``.venv/bin/python bench/bench_papers_vs_builtin.py --out DIR [--models bow,textrnn,cnn]
[--seeds 0,1,2] [--steps 200] [--estimate quick|full] [--max-train N] [--max-test N]
[--executor sequential|process --workers N] [--md FILE]``

Two learnability studies (robustlab's own: :func:`robustlab.studies.learnability.study.run_study`)
on SST-2 (``../shared/data/sst/stsa.binary.train`` / ``stsa.binary.test``), the same models, seeds,
steps and sizes:

* ``papers``: the six perturbations NL-Augmenter provides, as ``--perturbations papers`` runs them
  (NL-Augmenter's own classes, ``reseed=False``; its reference code in
  ``../shared/reference/nl-augmenter`` is put on ``sys.path`` here);
* ``builtin``: robustlab's built-ins of the same names, plus ``duplicate_punctuations`` and
  ``shuffle_word`` (always built-in: the papers' own design, so they are the same cells in both
  realisations and are run once).

With ``--estimate quick`` (default) each pair gets learnability at p = 0.02 for every seed and at
p = 1 for the first seed (docs/learnability.md, "Quick estimate"); exp 0/1 (clean accuracy and
robustness A1 − A0) run too, for ρ of robustness between the realisations. Then, pair by pair:
the estimate (mean over seeds, and the seed std), learnability@1, robustness, in both
realisations and their difference; and Spearman ρ (scipy) between the realisations over the
model × perturbation pairs that differ (and per model). The run directories under ``--out`` are
ordinary robustlab runs: re-running the same command resumes them. Everything printed is computed
from those runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from robustlab.perturbations.presets import PAPER_PERTURBATIONS, expand  # noqa: E402
from robustlab.resources import shared_dir  # noqa: E402

SHARED_ONLY = ("duplicate_punctuations", "shuffle_word")


def _floats(v: Any) -> float:
    """A summary value (a number, or ``{mean, std, …}`` over seeds) as its mean; nan if absent."""
    if isinstance(v, dict):
        v = v.get("mean")
    return float("nan") if v is None else float(v)


def run(realisation: str, perts: list[str], args: argparse.Namespace,
        dataset: dict[str, Any]) -> dict[str, Any]:
    from robustlab.studies.learnability.study import LearnabilityStudy, run_study

    study = LearnabilityStudy(
        models=tuple(args.models.split(",")), perturbations=tuple(perts), dataset=dataset,
        seeds=tuple(int(s) for s in args.seeds.split(",")),
        experiments=("standard", "robustness", "learnability"), steps=args.steps,
        max_train=args.max_train, max_test=args.max_test, estimate=args.estimate,
        estimate_p=args.estimate_p)
    t0 = time.perf_counter()
    summary = run_study(study, Path(args.out) / realisation, executor=args.executor,
                        workers=args.workers, progress=False, plots=False,
                        log=lambda m: print(f"[{realisation}] {m}", file=sys.stderr, flush=True))
    print(f"[{realisation}] {summary['n_done']}/{summary['n_cells']} cells, "
          f"{time.perf_counter() - t0:.0f} s this invocation, {summary['seconds']:.0f} s in all",
          file=sys.stderr, flush=True)
    if not summary["complete"]:
        raise SystemExit(f"{realisation}: {len(summary['failed_cells'])} cells failed; rerun")
    return summary


def by_name(summary: dict[str, Any], names: dict[str, str]) -> dict[tuple[str, str], dict]:
    """(model, built-in name) -> {estimate, std, at1, robustness} of a finished run."""
    est = {(p["model"], p["perturbation"]): p for p in summary["estimate"]["pairs"]}
    out = {}
    for pair in summary["pairs"]:
        key = (pair["model"], pair["perturbation"])
        e = est[key]
        values = e["learnability_estimate"]["values"]
        out[(pair["model"], names[pair["perturbation"]])] = {
            "estimate": e["learnability_estimate"]["mean"],
            "std": statistics.pstdev(values) if len(values) > 1 else 0.0,
            "at1": _floats(e.get("learnability_at_1")),
            "area": _floats(e.get("learnability_estimate_area")),
            "robustness": _floats(pair.get("robustness")),
            "noop": _floats(pair.get("noop_rate"))}
    return out


def rho(a: list[float], b: list[float]) -> str:
    from scipy.stats import spearmanr

    if len(a) < 3:
        return "n/a"
    r = spearmanr(a, b)
    return f"{r.statistic:+.3f} (p={r.pvalue:.2g}, n={len(a)})"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, metavar="DIR", help="parent of the two run dirs")
    ap.add_argument("--models", default="bow,textrnn,cnn")
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--estimate", choices=("quick", "full"), default="quick")
    ap.add_argument("--estimate-p", type=float, default=0.02)
    ap.add_argument("--max-train", type=int)
    ap.add_argument("--max-test", type=int)
    ap.add_argument("--executor", default="sequential")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--md", metavar="FILE", help="also write the tables as Markdown")
    args = ap.parse_args(argv)

    shared = shared_dir()
    reference = shared / "reference" / "nl-augmenter"
    sst = shared / "data" / "sst"
    if not (reference / "nlaugmenter").is_dir() or not (sst / "stsa.binary.train").exists():
        print(f"needs NL-Augmenter's reference at {reference} and SST-2 at {sst}; skipped")
        return 0
    sys.path.insert(0, str(reference))
    dataset = {"path": str(sst / "stsa.binary.train"), "test_path": str(sst / "stsa.binary.test")}
    papers_specs = expand(["papers"])
    names = dict(zip(papers_specs, PAPER_PERTURBATIONS, strict=True)) | {
        n: n for n in PAPER_PERTURBATIONS}
    nla = [s for s in papers_specs if s.startswith("nlaugmenter:")]
    assert len(nla) == 6, "NL-Augmenter's reference did not import"

    t0 = time.perf_counter()
    builtin = by_name(run("builtin", list(PAPER_PERTURBATIONS), args, dataset), names)
    papers = by_name(run("papers", nla, args, dataset), names)
    wall = time.perf_counter() - t0

    lines = [f"SST-2 train {args.max_train or 'all'} / test {args.max_test or 'all'}; models "
             f"{args.models}; seeds {args.seeds}; {args.steps} steps; estimate {args.estimate} "
             f"(learnability at p={args.estimate_p:g} for every seed, p=1 for the first); exp 0/1 "
             f"for robustness; executor {args.executor} x{args.workers}; {wall:.0f} s wall this "
             "invocation", ""]
    head = ("| model | perturbation | estimate papers | estimate built-in | Δ | learn.@1 papers | "
            "learn.@1 built-in | robustness papers | robustness built-in |")
    lines += [head, "|" + "---|" * 9]
    pairs = [(m, n) for m in args.models.split(",") for n in PAPER_PERTURBATIONS]
    for m, n in pairs:
        b = builtin[(m, n)]
        p = papers.get((m, n), b)  # the two of the papers' own design: the same cells
        same = " (same)" if (m, n) not in papers else ""
        lines.append(f"| {m} | {n}{same} | {p['estimate']:.3f} ± {p['std']:.3f} | "
                     f"{b['estimate']:.3f} ± {b['std']:.3f} | {b['estimate'] - p['estimate']:+.3f} | "
                     f"{p['at1']:.3f} | {b['at1']:.3f} | {p['robustness']:+.3f} | "
                     f"{b['robustness']:+.3f} |")
    lines += ["", "Spearman ρ between the realisations (scipy.stats.spearmanr):", "",
              "| pairs | estimate | learnability@1 | 3-point area | robustness |", "|---|---|---|---|---|"]
    groups = [("the 18 that differ" if len(args.models.split(",")) == 3 else "pairs that differ",
               [k for k in pairs if k in papers]),
              ("all (the two shared perturbations included)", pairs)]
    groups += [(f"{m} (6 that differ)", [k for k in pairs if k in papers and k[0] == m])
               for m in args.models.split(",")]
    for label, keys in groups:
        cols = []
        for field in ("estimate", "at1", "area", "robustness"):
            a = [papers.get(k, builtin[k])[field] for k in keys]
            b = [builtin[k][field] for k in keys]
            cols.append(rho(a, b))
        lines.append(f"| {label} | " + " | ".join(cols) + " |")
    diffs = [abs(builtin[k]["estimate"] - papers[k]["estimate"]) for k in pairs if k in papers]
    noise = [max(builtin[k]["std"], papers[k]["std"]) for k in pairs if k in papers]
    lines += ["", f"mean |Δ estimate| over the pairs that differ: {statistics.fmean(diffs):.3f}; "
              f"mean seed std of one cell there: {statistics.fmean(noise):.3f}"]
    text = "\n".join(lines)
    print(text)
    if args.md:
        Path(args.md).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
