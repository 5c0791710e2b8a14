"""``robustlab failures RUN_DIR``: CheckList-style failing examples of a robustness or eval run.

Reads the per-example predictions a robustness or learnability run stored for its perturbed test
sets (exp 1 cells) and prints pass/fail counts per model × perturbation × seed, then the worst
failing examples (prediction changed by the perturbation, largest drop in the probability of the
true label first). ``--csv FILE`` (or .tsv/.jsonl) exports every failing example that matches the
filters. The TUI's failing-examples screen shows the same rows.
"""

from __future__ import annotations

import argparse
import sys

from robustlab.options import add_quiet_option
from robustlab.textfmt import echo


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "failures", help="failing examples per perturbation of a robustness run (CheckList style)",
        description="Pass/fail counts per model, perturbation and seed, and the worst failing "
        "examples (the perturbation changed the prediction), from a run directory of "
        "`robustlab eval`, `robustlab robustness` or `robustlab learnability`.",
        epilog="example:\n  robustlab failures runs/rob --perturbation leet_letters --limit 5\n"
        "  robustlab failures runs/rob --csv failing.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="RUN_DIR", help="run directory (the --out of a study)")
    p.add_argument("--perturbation", metavar="SPEC", help="only this perturbation")
    p.add_argument("--model", metavar="SPEC", help="only this model")
    p.add_argument("--seed", type=int, help="only this seed")
    p.add_argument("--contains", metavar="TEXT",
                   help="only examples whose text contains TEXT (case-insensitive)")
    p.add_argument("--limit", type=int, default=10, metavar="N",
                   help="failing examples to print (default 10; 0: counts only)")
    p.add_argument("--csv", "--export", dest="export", metavar="FILE",
                   help="write every matching failing example to FILE (.csv, .tsv or .jsonl)")
    p.add_argument("--force", action="store_true",
                   help="let --csv replace an existing file")
    add_quiet_option(p, help="no '-> FILE' line on stderr after --csv")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from robustlab.outputs import messages_off_stdout

    with messages_off_stdout(args.export):  # --csv -: the table goes to stderr
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from robustlab.errors import InputError
    from robustlab.outputs import refuse_run_file, refuse_same_file
    from robustlab.runs.predictions import (
        export_examples,
        failing_examples,
        failure_summary,
    )
    from robustlab.runs.store import RunStore, is_run_dir, run_files
    from robustlab.textfmt import align

    if not is_run_dir(args.run_dir):
        raise InputError(f"{args.run_dir}: not a robustlab run directory (no store.sqlite)")
    if args.limit < 0:
        raise InputError(f"--limit {args.limit}: must be 0 or more")
    refuse_same_file({"--csv": args.export},
                     {f"RUN_DIR {f.name}": f for f in run_files(args.run_dir)})
    refuse_run_file("--csv", args.export, [args.run_dir])
    if args.export and args.export != "-" and Path(args.export).suffix.lower() not in (
            "", ".csv", ".tsv", ".jsonl"):  # the extension picks the format: never CSV in .xlsx
        raise InputError(f"--csv {args.export}: writes .csv, .tsv or .jsonl (chosen by the "
                         "file's extension); name the file with one of them, or - for stdout")
    if args.export and args.export != "-" and Path(args.export).exists() and not args.force:
        raise InputError(f"--csv {args.export}: already exists (perhaps another run's "
                         "failures); pass --force to replace it, or name another file")
    with RunStore(Path(args.run_dir), readonly=True) as store:
        rows = failing_examples(store, perturbation=args.perturbation, model=args.model,
                                seed=args.seed, contains=args.contains)
        summary = [s for s in failure_summary(store)
                   if (args.perturbation is None or s["perturbation"] == args.perturbation)
                   and (args.model is None or s["model"] == args.model)
                   and (args.seed is None or s["seed"] == args.seed)]
        skipped = store.skipped_line()  # damaged cells: named, and left out of both tables
        if skipped:
            echo(f"robustlab failures: warning: {skipped}", file=sys.stderr)
        if not summary:
            raise InputError(
                f"{args.run_dir}: no stored predictions"
                + (" match the filters" if any((args.perturbation, args.model,
                                                args.seed is not None)) else
                   " (only robustness cells of runs made by this version keep them)"))
        rows = failing_examples(store, perturbation=args.perturbation, model=args.model,
                                seed=args.seed, contains=args.contains)
        info = store.run_info()
        # an eval run also says how many texts the perturbation changed: its failure rate is
        # the share of those that failed the cell's test (INV, DIR; docs/eval.md)
        results = {c.key: c.result or {} for c in store.cells("done")} \
            if info is not None and info.kind == "eval" else None
        # a model behind an endpoint: the raw answer of a prediction that named no label
        # (-1, "invalid": docs/endpoints.md), read from the run's responses table
        answers = store.answers_by_text(
            [e[t] for e in rows[: args.limit] for t, p in (("original", "pred_before"),
                                                            ("perturbed", "pred_after"))
             if e[p] == -1 and isinstance(e[t], str)]) if results is not None else {}
        # --csv of an endpoint run: every exported example's raw answers (docs/endpoints.md)
        raw = store.answers_by_text([e[t] for e in rows for t in ("original", "perturbed")
                                     if isinstance(e[t], str)]) \
            if args.export and store.has_responses_table() else None
    from robustlab.endpoints.kinds import shown
    from robustlab.metrics.checklist_tests import header
    from robustlab.studies.eval.study import fmt
    from robustlab.tasks.stored import describe, is_task_test, rule

    tests = {(s["model"], s["perturbation"], s["seed"]): s.get("test", "INV") for s in summary}
    task_run = any(is_task_test(t) for t in tests.values())
    head = ["model", "perturbation", "seed", "test", "n", "pass", "fail", "fail rate"]
    if results is not None:
        head += [f"{_metric(results)} pert-clean" if task_run else "A1-A0",
                 "changed examples" if task_run else "changed texts", "fail rate of changed"]
    # an LLM endpoint's answers that named no label (perturbed texts), per cell
    with_invalid = results is not None and any("invalid" in r for r in results.values())
    if with_invalid:
        head.append("invalid")
    table, keys = [], []
    for s in summary:
        r = (results or {}).get(s["cell"], {})
        test = s.get("test", "INV")
        shown_test = rule(test) if is_task_test(test) else header(test, s.get("expectation"))
        changed_test = shown_test == "changed"  # no pass/fail: only changed predictions
        row = [_short_model(s["model"]), s["perturbation"], s["seed"], shown_test,
               s["n"], "-" if changed_test else s["pass"], "-" if changed_test else s["fail"],
               fmt(None if changed_test else s["fail_rate"])]
        n = r.get("changed")
        tested = r.get("tested", n)  # a DIR test on pairs tests some changed examples only
        rate = None if changed_test else s["fail"] / tested if tested else None
        if results is not None:
            row += [fmt(r.get("delta")), n if n is not None else "-", fmt(rate)]
        if with_invalid:
            row.append(r.get("invalid", "-"))
        table.append(row)
        # worst first: A1 - A0 (most negative), then the failure rate
        d = r.get("delta")
        keys.append((0.0 if d is None else d, -(rate if rate is not None else s["fail_rate"])))
    order = sorted(range(len(table)), key=lambda i: keys[i])
    table = [table[i] for i in order]
    worst = [summary[i] for i in order[:3]]
    echo("worst: " + "; ".join(f"{s['perturbation']} seed {s['seed']} (fail {s['fail']} of "
                               f"{s['n']})" for s in worst))
    echo(align(head, table, rule=True))
    if args.limit and rows and task_run:  # in the task's words (robustlab.tasks.stored)
        echo(f"\nworst {min(args.limit, len(rows))} of {len(rows)} failing examples "
             "(entities: the entity set changed, tokens whose tag changed marked [word "
             "before->after]; |d|>t: the score moved more than t; ranking: the top candidate "
             "or the answers changed):")
        for e in rows[: args.limit]:
            test = tests.get((e["model"], e["perturbation"], e["seed"]), "INV")
            echo(f"\n[{e['perturbation']} | {_short_model(e['model'])} | seed {e['seed']} | "
                 f"#{e['idx']}] fails if: {rule(test)}")
            for line in describe(test, e):
                echo(line)
    elif args.limit and rows:
        echo(f"\nworst {min(args.limit, len(rows))} of {len(rows)} failing examples "
             "(failed their test — INV: prediction changed; DIR flip: neither changed nor lost "
             "P(label); drop = P(label) before - after):")
        for e in rows[: args.limit]:
            echo(f"\n[{e['perturbation']} | {_short_model(e['model'])} | seed {e['seed']} | #{e['idx']}] "
                 f"label {e['label']}: {_pred(e['pred_before'])} -> {_pred(e['pred_after'])}, "
                 f"P(label) {fmt(e['prob_before'])} -> {fmt(e['prob_after'])}")
            echo(f"  - {e['original']}")
            echo(f"  + {e['perturbed']}")
            for side, text, pred in (("before", e["original"], e["pred_before"]),
                                     ("after", e["perturbed"], e["pred_after"])):
                if pred == -1 and text in answers:
                    echo(f"  answer {side}: {shown(answers[text])} (names no label)")
    if args.export:
        extra: tuple[str, ...] = ()
        if raw is not None:  # an endpoint run: what the model answered, before and after
            from robustlab.endpoints.kinds import raw_text

            tsv = str(args.export).lower().endswith(".tsv")
            rows = [{**e, **{f"answer_{side}": raw_text(raw.get(e[t]), tsv=tsv)
                             for side, t in (("before", "original"), ("after", "perturbed"))}}
                    for e in rows]
            extra = ("answer_before", "answer_after")
        export_examples(rows, args.export, user=True, extra=extra)
        if not args.quiet:
            echo(f"{len(rows)} failing examples -> {args.export}", file=sys.stderr)
    return 0


def _pred(p: int) -> str:
    """A stored prediction: -1 is an endpoint's answer that named no label."""
    return "invalid" if p == -1 else str(p)


def _metric(results: dict[str, dict]) -> str:
    """The headline metric of a task run's cells, as tables name it."""
    from robustlab.studies.eval.tasks import metric_label

    task = next((r.get("task") for r in results.values() if r.get("task")), None)
    return metric_label(task)


def _short_model(model: str | None) -> str:
    """A model as a table shows it: a path by its last component (the full path is in the
    run's config); a family or hub id as it is."""
    from robustlab.textfmt import short_model

    return short_model(model)
