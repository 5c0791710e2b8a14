"""``robustlab cross-domain mt|clf|scores``: consistency across domains (paper 004).

Thin adapters over :mod:`robustlab.studies.cross_domain.study` (and ``cross_domain_clf``): parse the
options, read the data (every input checked before the run directory is touched), run, print a
table. Results go to ``--out DIR`` per docs/run-directory.md (kind ``cross-domain``).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from robustlab.outputs import check_out_dir
from robustlab.runs.study import RunContext, run_study
from robustlab.studies.cross_domain.clf import ClfStudy
from robustlab.studies.cross_domain.study import MTStudy, ScoresStudy
from robustlab.textfmt import align, echo

_EPILOG = """examples:
  robustlab cross-domain mt --wmt22-dir ../shared/data/wmt22_general --pair ru-en --out runs/ru-en
  robustlab cross-domain mt --systems A=a.txt B=b.txt --refs ref.txt --domains dom.txt \\
      --human human.tsv --out runs/ab
  robustlab cross-domain clf --model bow --domains books dvd electronics kitchen --out runs/amz
  robustlab cross-domain scores scores.csv            # columns system,domain,score
"""


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cross-domain", help="consistency across domains: variance, CoV, "
                       "(ε,γ)-robustness, bagging (MT with sacreBLEU, classifiers, score tables)",
                       description=__doc__, epilog=_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    cmds = p.add_subparsers(dest="cd_command", metavar="{mt,clf,scores}")
    cmds.required = True
    setup = "no set-up lines (the inputs read) on stderr"
    # the study options come from the configs' fields; the run options from RunContext. MT
    # systems are scored while the study plans, so it has no executor (nor models to place)
    mt = cmds.add_parser("mt", help="MT systems scored per segment with sacreBLEU",
                         epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    MTStudy.add_arguments(mt)
    RunContext.add_arguments(mt, executor=False, device=False, out_help="run directory",
                             quiet_help=setup)
    mt.set_defaults(func=run_mt, check=check)

    clf = cmds.add_parser("clf", help="train on one domain, test on the others",
                          epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ClfStudy.add_arguments(clf)
    RunContext.add_arguments(clf, out_help="run directory")
    clf.set_defaults(func=run_clf, check=check_clf)

    sc = cmds.add_parser("scores", help="consistency of a precomputed score table",
                         epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ScoresStudy.add_arguments(sc)
    RunContext.add_arguments(sc, executor=False, device=False, out_required=False,
                             out_help="also write a run directory (default: stdout only)",
                             quiet_help=setup)
    sc.set_defaults(func=run_scores, check=check)


def _config(args: argparse.Namespace) -> Any:
    """The config of a parsed ``cross-domain mt|clf|scores`` command line, not validated."""
    return _CONFIGS[args.cd_command].from_args(args)


def mt_study(args: argparse.Namespace) -> MTStudy:
    """The MT study's configuration from the command line (file paths absolute)."""
    return MTStudy.from_args(args)


def clf_study(args: argparse.Namespace) -> ClfStudy:
    return ClfStudy.from_args(args)


def scores_study(args: argparse.Namespace) -> ScoresStudy:
    return ScoresStudy.from_args(args)


def check(args: argparse.Namespace) -> None:
    """The consistency options (ε, bags), checked before anything is read or created (the
    files are checked when the study is validated, also before)."""
    _config(args).consistency.validate()


def check_clf(args: argparse.Namespace) -> None:
    """Every --model parses, the numbers are in range: before the run directory exists (the
    data is read by the study's own validation, also before)."""
    from robustlab.options import at_least

    at_least(args, 1, "steps", "workers", "max_train", "max_test")
    clf_study(args).consistency.validate()  # the models' specs parse; the data is read later


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
    origin = "--data-dir" if args.root else f"default: shared folder ({shared_dir_origin()[1]})"
    if not args.quiet:
        echo(f"robustlab cross-domain: data root {study.root} ({origin})", file=sys.stderr)
    outcome = run_study(Clf(study, root_origin=origin), args.out,
                        RunContext.from_args(args, log=_log(args)))
    summary = outcome.summary
    print_table(summary)
    echo(f"\nwrote {args.out} ({', '.join(summary['files'])}) in {summary['seconds']:.1f}s")
    return 0 if outcome.complete else 1


def run_scores(args: argparse.Namespace) -> int:
    from robustlab.studies.cross_domain.study import Scores, run_scores

    if args.out:
        check_out_dir(args.out)  # a file, under a file, read-only: stop first
    config = scores_study(args)
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


_CONFIGS: dict[str, Any] = {"mt": MTStudy, "clf": ClfStudy, "scores": ScoresStudy}
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
