"""``robustlab judge RUN``: paper 001's human check of an eval run's label- and meaning-changing
perturbations (Moradi & Samwald 2021, section 6; :mod:`robustlab.studies.eval.judge`).

Draws the paper's sample (200 changed rows per perturbation, seeded) into the run's store,
exports it as CSV for a team to split, imports the verdicts (every row validated first; nothing
is imported from a file with a bad row), and on a terminal asks for each unjudged sample in turn
(keys: c consistent, r<label> relabel, d drop, s skip, q quit). ``robustlab eval`` (resume),
``report`` and ``check`` then score a fully judged perturbation on its judged samples with the
corrected labels and say ``judged n=…``.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import Any

from robustlab.errors import InputError
from robustlab.options import add_quiet_option
from robustlab.textfmt import echo

_EPILOG = """examples:
  robustlab judge runs/eval-bow --sample              # draw 200 per judged perturbation
  robustlab judge runs/eval-bow --export part.csv     # for the team; fill the verdict column:
                                                      #   consistent | drop | relabel:<label>
  robustlab judge runs/eval-bow --import part.csv     # every row checked first
  robustlab judge runs/eval-bow                       # on a terminal: judge one by one
  robustlab report runs/eval-bow                      # judged perturbations: "judged n=…"
"""


def register(sub: argparse._SubParsersAction) -> None:
    from robustlab.studies.eval.judge import PER_PERTURBATION

    p = sub.add_parser(
        "judge", help="paper 001's human check: judge an eval run's label-changing samples "
        "(consistent / relabel / drop), then score on them",
        description="Draw, export, import or record human judgements of an eval run's "
        "perturbed samples for word_delete, negation, word_synonym and label-changing "
        "perturbations, as Moradi & Samwald (2021) did; eval/report/check then score those "
        "perturbations on the judged samples with the corrected labels.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", metavar="RUN", help="an eval run directory")
    p.add_argument("--sample", action="store_true",
                   help="draw the sample (done anyway before the first export or judging; "
                   "drawing again keeps what is stored)")
    p.add_argument("--per", type=int, default=PER_PERTURBATION, metavar="N",
                   help=f"samples per perturbation (default {PER_PERTURBATION}, the paper's)")
    p.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--export", metavar="FILE.csv", help="write the sample and its verdicts")
    g.add_argument("--import", dest="import_", metavar="FILE.csv",
                   help="record the verdicts of FILE.csv (all rows checked first)")
    p.add_argument("--who", default=None, help="the judge's name (default: the login name)")
    add_quiet_option(p, help="no notes on stderr (the per-perturbation status still prints)")
    p.set_defaults(func=run)


def _open(run_dir: str) -> Any:
    from robustlab.runs.store import RunStore, is_run_dir

    if not is_run_dir(run_dir):
        raise InputError(f"{run_dir}: not a robustlab run directory")
    with RunStore(run_dir, readonly=True) as ro:  # checked before anything is written
        info = ro.run_info()
    if info is None or info.kind != "eval":
        raise InputError(f"{run_dir}: a {info.kind if info else 'empty'} run; robustlab judge "
                         "works on eval runs (robustlab eval)")
    return RunStore(run_dir)


def _draw(store: Any, args: argparse.Namespace) -> list[dict[str, Any]]:
    """The stored sample, drawn first when there is none (or with --sample)."""
    from robustlab.studies.eval.judge import draw_into

    samples = store.judgements()
    if samples and not args.sample:
        return samples
    drawn, new = draw_into(store, args.seed, args.per)
    if not args.quiet:
        echo(f"robustlab judge: drew {drawn} samples (seed {args.seed}, up to {args.per} "
             f"per perturbation), {new} new", file=sys.stderr)
    return store.judgements()


def _status(samples: list[dict[str, Any]]) -> None:
    by: dict[str, list[int]] = {}
    for s in samples:
        k = by.setdefault(s["perturbation"], [0, 0])
        k[0] += s["verdict"] is not None
        k[1] += 1
    for spec, (done, n) in by.items():
        echo(f"{spec}: {done} of {n} judged" + (" (scored on these)" if done == n else ""))


def _interactive(store: Any, samples: list[dict[str, Any]], n_classes: int, who: str) -> int:
    """Line mode: each unjudged sample, original beside perturbed, one answer each."""
    from robustlab.studies.eval.judge import label_names_of, label_text, labels_help, parse_verdict

    names = label_names_of(store, n_classes)
    todo = [s for s in samples if s["verdict"] is None]
    echo(f"{len(todo)} samples to judge. c = consistent with the label, r<label> = relabel "
         f"(labels {labels_help(n_classes, names)}), d = drop (not meaningful), s = skip, "
         "q = quit")
    saved = 0
    for i, s in enumerate(todo, 1):
        echo(f"\n[{i}/{len(todo)}] {s['perturbation']}  label "
             f"{label_text(s['label'], names)}\n"
             f"  original : {s['original']}\n  perturbed: {s['perturbed']}")
        while True:
            try:
                ans = input("> ").strip().lower()
            except EOFError:
                ans = "q"
            if ans == "q":
                echo(f"saved {saved} verdicts")
                return 0
            if ans == "s":
                break
            full = {"c": "consistent", "d": "drop"}.get(ans) or (
                "relabel:" + ans[1:] if ans.startswith("r") and not ans.startswith("re") else ans)
            try:
                verdict = parse_verdict(full, n_classes)
            except InputError as exc:
                echo(str(exc))
                continue
            store.set_verdicts([(s["sample"], verdict, who)])
            saved += 1
            break
    echo(f"saved {saved} verdicts")
    return 0


def run(args: argparse.Namespace) -> int:
    from robustlab.outputs import atomic_write, refuse_run_file
    from robustlab.studies.eval.judge import export_csv, n_classes_of, read_csv

    if args.per < 1:
        raise InputError(f"--per {args.per}: must be at least 1")
    if args.export:  # before anything is written
        refuse_run_file("--export", args.export, [args.run])
    who = args.who or getpass.getuser()
    with _open(args.run) as store:
        n_classes = n_classes_of(store)
        if args.import_:
            samples = store.judgements()
            if not samples:
                raise InputError(f"{args.run}: no sample drawn yet; robustlab judge {args.run} "
                                 "--sample (or --export) first")
            verdicts = read_csv(args.import_, samples, n_classes, who)  # every row, first
            store.set_verdicts(verdicts)
            if not args.quiet:
                echo(f"robustlab judge: imported {len(verdicts)} verdicts from {args.import_}",
                     file=sys.stderr)
            samples = store.judgements()
        else:
            samples = _draw(store, args)
            if args.export:
                text = export_csv(samples)
                atomic_write(args.export, lambda f: f.write(text.encode("utf-8")), mode="wb",
                             user=True)
                if not args.quiet:
                    echo(f"robustlab judge: wrote {len(samples)} samples -> {args.export}",
                         file=sys.stderr)
            elif not args.sample and sys.stdin.isatty() and sys.stdout.isatty():
                _interactive(store, samples, n_classes, who)
                samples = store.judgements()
        from robustlab.studies.eval.judge import refresh_outputs

        refresh_outputs(store)  # summary.json, eval.csv, eval.png: scored on the judgements
        _status(samples)
    return 0
