"""``robustlab cross-domain mt|clf|scores``: consistency across domains (paper 004).

Thin adapters over :mod:`robustlab.studies.cross_domain.study` (and ``cross_domain_clf``): parse the
options, read the data (every input checked before the run directory is touched), run, print a
table. Results go to ``--out DIR`` per docs/run-directory.md (kind ``cross-domain``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.models.device import add_device_option
from robustlab.options import add_model_option, add_quiet_option, add_seed_option
from robustlab.outputs import check_out_dir
from robustlab.runs.study import RunContext, run_study
from robustlab.textfmt import align, echo

_EPILOG = """examples:
  robustlab cross-domain mt --wmt22-dir ../shared/data/wmt22_general --pair ru-en --out runs/ru-en
  robustlab cross-domain mt --systems A=a.txt B=b.txt --refs ref.txt --domains dom.txt \\
      --human human.tsv --out runs/ab
  robustlab cross-domain clf --model bow --domains books dvd electronics kitchen --out runs/amz
  robustlab cross-domain scores scores.csv            # columns system,domain,score
"""


def _defaults(cls: type) -> dict[str, Any]:
    """A config dataclass's field defaults: the one place each default lives."""
    import dataclasses

    return {f.name: f.default for f in dataclasses.fields(cls)}


def _consistency_args(p: argparse.ArgumentParser) -> None:
    from robustlab.studies.cross_domain.study import ConsistencyConfig

    d = _defaults(ConsistencyConfig)
    g = p.add_argument_group("consistency metrics")
    g.add_argument("--eps", type=float, nargs="+", default=None, metavar="E",
                   help="ε values whose γ is reported (default 1 5 10 20 50)")
    g.add_argument("--eps-max", type=int, default=d["grid_max"],
                   help=f"γ curve over ε = 1..EPS_MAX (default {d['grid_max']}, the BLEU scale)")
    g.add_argument("--eps-grid", choices=("fixed", "sigma"), default="fixed",
                   help="fixed: the paper's ε = 1..EPS_MAX in score points (default); sigma: ε "
                   "in units of the scores' spread σ (0.05σ..3σ), so γ separates systems whose "
                   "scores differ by a few points; --eps are then multiples of σ "
                   "(default 0.5 1 1.5 2)")
    g.add_argument("--bags", type=int, default=d["n_bags"],
                   help=f"number of bags M (default {d['n_bags']})")
    g.add_argument("--bag-fraction", type=float, default=d["fraction"],
                   help=f"share of the pool in each bag (default {d['fraction']:g})")
    add_seed_option(g, help="seed of the bags (and of training; default 0)")
    g.add_argument("--no-plots", action="store_true", help="skip the PNG")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cross-domain", help="consistency across domains: variance, CoV, "
                       "(ε,γ)-robustness, bagging (MT with sacreBLEU, classifiers, score tables)",
                       description=__doc__, epilog=_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    cmds = p.add_subparsers(dest="cd_command", metavar="{mt,clf,scores}")
    cmds.required = True

    mt = cmds.add_parser("mt", help="MT systems scored per segment with sacreBLEU",
                         epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    mt.add_argument("--systems", nargs="+", metavar="[NAME=]FILE",
                    help="system outputs, one segment per line")
    mt.add_argument("--refs", nargs="+", metavar="FILE", help="reference file(s), line-aligned")
    mt.add_argument("--domains", metavar="FILE",
                    help="one domain label per line, or a TSV/CSV with a 'domain' column")
    mt.add_argument("--human", metavar="FILE",
                    help="human scores per system ('system score' lines or WMT ad-sys-scores)")
    mt.add_argument("--wmt22-dir", metavar="DIR",
                    help="read the WMT22 General layout instead (systems, refs, domains, DA)")
    mt.add_argument("--pair", default="ru-en", help="language pair under --wmt22-dir")
    mt.add_argument("--wmt22-refs", nargs="+", default=["A"], metavar="R",
                    help="references to use under --wmt22-dir (e.g. A B)")
    mt.add_argument("--score", default="bleu", choices=("bleu", "chrf", "ter"),
                    help="segment score the consistency metrics use (default bleu)")
    mt.add_argument("--metrics", nargs="+", default=None, choices=("bleu", "chrf", "ter"),
                    help="sacreBLEU metrics to compute (default bleu chrf; TER is slow)")
    mt.add_argument("--tokenize", default=None, help="sacreBLEU BLEU tokenizer (default 13a)")
    mt.add_argument("--allow-empty", action="store_true",
                    help="accept empty hypothesis lines (scored as sacreBLEU scores them)")
    mt.add_argument("--out", required=True, metavar="DIR", help="run directory")
    add_quiet_option(mt, help="no set-up lines (the inputs read) on stderr")
    _consistency_args(mt)
    mt.set_defaults(func=run_mt, check=check_consistency)

    clf = cmds.add_parser("clf", help="train on one domain, test on the others",
                          epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_option(clf, multi=True, default=["bow"],
                     help="model family or spec (bow, cnn, textrnn, lstm, … or family:key=v,…), "
                     "a HF checkpoint or a saved model dir; several: space or comma separated, "
                     "or --model repeated (default bow)")
    clf.add_argument("--data-dir", default=None, metavar="DIR",
                     help="multi-domain data root (default: $ROBUSTLAB_SHARED/data/amazon_multidomain, "
                     "else shared/ or ../shared/ from the current directory)")
    from robustlab.studies.cross_domain.clf import ClfStudy

    dc = _defaults(ClfStudy)
    clf.add_argument("--domains", nargs="+", default=list(dc["domains"]))
    clf.add_argument("--train-domains", nargs="+", default=None,
                     help="domains to train on (default: every --domains entry)")
    clf.add_argument("--steps", type=int, default=dc["steps"], help="optimiser steps per model")
    clf.add_argument("--max-train", type=int, default=None, help="cap on training examples")
    clf.add_argument("--max-test", type=int, default=None, help="cap on test examples per domain")
    clf.add_argument("--executor", default="sequential", choices=("sequential", "process", "ray"))
    clf.add_argument("--workers", type=int, default=1)
    clf.add_argument("--out", required=True, metavar="DIR", help="run directory")
    add_device_option(clf)
    add_quiet_option(clf)
    _consistency_args(clf)
    clf.set_defaults(func=run_clf, check=check_clf)

    sc = cmds.add_parser("scores", help="consistency of a precomputed score table",
                         epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sc.add_argument("file", metavar="FILE",
                    help="CSV/TSV/JSONL with a header: system, domain, score (one row per "
                    "sample or per domain)")
    sc.add_argument("--score-column", default="score")
    sc.add_argument("--system-column", default="system")
    sc.add_argument("--domain-column", default="domain")
    sc.add_argument("--human", metavar="FILE", help="human scores per system")
    sc.add_argument("--wmt-da", action="store_true",
                    help="FILE is WMT segment-level DA (ad-seg-scores: SYS SID RAW.SCR Z.SCR N);"
                    " needs --domains (γ on human scores, the paper's Figure 5 / Table 7)")
    sc.add_argument("--da-column", default="RAW.SCR", help="DA column with --wmt-da")
    sc.add_argument("--domains", metavar="FILE",
                    help="with --wmt-da: the domain of each segment (line = SID)")
    sc.add_argument("--out", default=None, metavar="DIR",
                    help="also write a run directory (default: stdout only)")
    add_quiet_option(sc, help="no set-up lines (the inputs read) on stderr")
    _consistency_args(sc)
    sc.set_defaults(func=run_scores, check=check_consistency)


def _cfg(args: argparse.Namespace) -> Any:
    from robustlab.metrics.consistency import DEFAULT_EPS, SIGMA_EPS
    from robustlab.studies.cross_domain.study import ConsistencyConfig

    grid = getattr(args, "eps_grid", "fixed")
    cfg = ConsistencyConfig(eps=tuple(args.eps or (SIGMA_EPS if grid == "sigma" else DEFAULT_EPS)),
                            grid_max=args.eps_max, n_bags=args.bags, fraction=args.bag_fraction,
                            seed=args.seed, eps_grid=grid)
    cfg.validate()
    return cfg


def check_consistency(args: argparse.Namespace) -> None:
    """The consistency options (ε, bags), checked before anything is read or created."""
    _cfg(args)


def _abs(path: str | None) -> str | None:
    return str(Path(path).expanduser().resolve()) if path else path


def mt_study(args: argparse.Namespace) -> Any:
    """The MT study's configuration from the command line (file paths absolute)."""
    from robustlab.studies.cross_domain.study import MTStudy

    metrics = tuple(args.metrics or (("bleu", "chrf") if args.score != "ter"
                                     else ("bleu", "chrf", "ter")))
    if args.score not in metrics:
        metrics = (*metrics, args.score)
    if args.wmt22_dir and (args.systems or args.refs or args.domains):
        raise InputError("--wmt22-dir reads systems, refs and domains itself; drop "
                         "--systems/--refs/--domains (or drop --wmt22-dir)")
    systems = []
    for spec in args.systems or ():
        name, eq, path = spec.rpartition("=")
        systems.append(f"{name}={_abs(path)}" if eq else str(_abs(path)))
    return MTStudy(score=args.score, metrics=metrics, tokenize=args.tokenize,
                   consistency=_cfg(args), wmt22_dir=_abs(args.wmt22_dir), pair=args.pair,
                   wmt22_refs=tuple(args.wmt22_refs), systems=tuple(systems),
                   refs=tuple(_abs(r) for r in args.refs or ()), domains=_abs(args.domains),
                   human=_abs(args.human), allow_empty=args.allow_empty)


def clf_study(args: argparse.Namespace) -> Any:
    from robustlab.models.registry import canonical_model_spec
    from robustlab.resources import shared_dir_origin
    from robustlab.studies.cross_domain.clf import ClfStudy

    root = args.data_dir or str(shared_dir_origin()[0] / "data" / "amazon_multidomain")
    return ClfStudy(root=str(Path(root).resolve()),
                    models=tuple(canonical_model_spec(m) for m in args.model),
                    domains=tuple(args.domains),
                    train_domains=tuple(args.train_domains) if args.train_domains else None,
                    steps=args.steps, max_train=args.max_train, max_test=args.max_test,
                    seed=args.seed, consistency=_cfg(args))


def check_clf(args: argparse.Namespace) -> None:
    """Every --model parses, the numbers are in range: before the run directory exists (the
    data is read by the study's own validation, also before)."""
    from robustlab.options import at_least

    at_least(args, 1, "steps", "workers", "max_train", "max_test")
    _cfg(args)
    clf_study(args)  # the models' specs (the data is read when the study is validated)


def _log(args: argparse.Namespace) -> Any:
    """Set-up lines (the inputs a run records) on stderr, unless --quiet."""
    if getattr(args, "quiet", False):
        return None
    return lambda msg: echo(f"robustlab cross-domain: {msg}", file=sys.stderr, flush=True)


def run_mt(args: argparse.Namespace) -> int:
    from robustlab.studies.cross_domain.study import MT

    ctx = dataclasses.replace(RunContext.from_args(args, log=_log(args)), progress=False)
    outcome = run_study(MT(mt_study(args)), args.out, ctx)
    summary = outcome.summary
    print_table(summary)
    echo(f"\nwrote {args.out} ({', '.join(summary['files'])}) in {summary['seconds']:.1f}s")
    return 0 if outcome.complete else 1


def run_clf(args: argparse.Namespace) -> int:
    from robustlab.resources import shared_dir_origin
    from robustlab.studies.cross_domain.clf import Clf

    study = clf_study(args)
    origin = "--data-dir" if args.data_dir else f"default: shared folder ({shared_dir_origin()[1]})"
    if not args.quiet:
        echo(f"robustlab cross-domain: data root {study.root} ({origin})", file=sys.stderr)
    outcome = run_study(Clf(study, root_origin=origin), args.out,
                        RunContext.from_args(args, log=_log(args)))
    summary = outcome.summary
    print_table(summary)
    echo(f"\nwrote {args.out} ({', '.join(summary['files'])}) in {summary['seconds']:.1f}s")
    return 0 if outcome.complete else 1


def run_scores(args: argparse.Namespace) -> int:
    from robustlab.studies.cross_domain.study import Scores, ScoresStudy, run_scores

    if args.out:
        check_out_dir(args.out)  # a file, under a file, read-only: stop first
    config = ScoresStudy(file=_abs(args.file) or "", score_column=args.score_column,
                         system_column=args.system_column, domain_column=args.domain_column,
                         wmt_da=args.wmt_da, da_column=args.da_column,
                         domains=_abs(args.domains), human=_abs(args.human),
                         consistency=_cfg(args))
    config.validate()
    if args.out:
        ctx = dataclasses.replace(RunContext.from_args(args, log=_log(args)), progress=False)
        summary = run_study(Scores(config), args.out, ctx).summary
    else:
        study = Scores(config)
        table, human = study.load()
        summary = run_scores(config.file, None, config.consistency, human=human, table=table)
    print_table(summary)
    if args.out:
        echo(f"\nwrote {args.out} ({', '.join(summary['files'])})")
    return 0


_METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF2", "ter": "TER"}


def print_table(summary: dict[str, Any]) -> None:
    """One line per system, then rankings and agreement with the human ranking."""
    systems = summary["systems"]
    if not systems:
        echo("no finished systems")
        return
    eps = sorted(systems[0]["gamma"], key=float)
    e_show = "10" if "10" in eps else eps[len(eps) // 2]
    acc = "bleu" if "corpus" in systems[0] and "bleu" in systems[0]["corpus"] else None
    grid = systems[0].get("eps_grid") or {}
    unit = "σ" if grid.get("eps_grid") == "sigma" else ""
    head = ["system", *(["BLEU"] if acc else []), "mean", "var", "CoV", f"γ@{e_show}{unit}",
            "γ-AUC",
            "bag CoV", "design CoV", "LOO CoV range"]
    rows = []
    for r in systems:
        loo = [x["cov"] for x in r["leave_one_out"]]
        rows.append([r["system"], *([f"{r['corpus']['bleu']:.2f}"] if acc else []),
                     f"{r['mean']:.2f}", f"{r['variance']:.2f}", f"{r['cov']:.3f}",
                     f"{r['gamma'][e_show]:.3f}", f"{r['gamma_auc']:.3f}",
                     f"{r['bagging']['cov']:.3f}", f"{r['design_bagging']['cov']:.3f}",
                     f"{min(loo):.3f}–{max(loo):.3f}"])
    echo(align(head, rows))
    if acc:  # sacreBLEU's users expect the signature with every score it printed
        seen: dict[str, list[str]] = {}
        for r in systems:
            sigs = (r.get("corpus") or {}).get("signature") or {}
            for metric, sig in (sigs.items() if isinstance(sigs, dict) else [("bleu", sigs)]):
                if sig not in seen.setdefault(metric, []):
                    seen[metric].append(str(sig))
        for metric, found in seen.items():
            for sig in found:  # one line per metric (systems scored alike share it)
                echo(f"sacreBLEU {_METRIC_NAMES.get(metric, metric)} signature: {sig}")
    if unit:
        echo(f"ε grid: {grid['t'][0]:g}σ..{grid['t'][1]:g}σ in units of the score spread "
             f"σ = {grid['sigma_ref']:.4g} (--eps-grid sigma)")
    echo()
    for name, order in summary.get("rankings", {}).items():
        echo(f"{name:>10}: {' > '.join(order)}")
    if summary.get("human_missing"):
        echo(f"warning: no human score for {', '.join(summary['human_missing'])} (system names "
             "must match the human score file)", file=sys.stderr)
    for metric, a in (summary.get("agreement") or {}).items():
        tau = "n/a" if a["kendall_tau"] is None else f"{a['kendall_tau']:.3f}"
        pw = "n/a" if a["pairwise"] is None else f"{a['pairwise']:.3f}"
        echo(f"agreement with human, {metric:>5}: pairwise {pw}, Kendall τ {tau} "
             f"({a['n_systems']} systems)")
