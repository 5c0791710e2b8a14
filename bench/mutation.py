"""Mutation testing of robustlab's core with mutmut: killed/survived per module (issue 35).

Each module is mutated in its own scratch copy of the repository (``mutmut run`` writes a
``mutants/`` tree beside the code it mutates) against the fast tests that exercise it, one
module at a time (CPU is scarce: each run uses ``--max-children`` processes). The report
(``bench/results/mutation.md`` by default) has one row per module: mutants, killed, survived,
no tests (no selected test calls the mutated function: counted as survived), timeouts; and
every survivor's name, for the equivalence notes and new tests.

    python bench/mutation.py                     # every module, the report rewritten
    python bench/mutation.py eval-predict executor --max-children 2
    python bench/mutation.py --report-only       # the report from the scratch copies kept

``make mutate`` runs the first form.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRATCH = Path(os.environ.get("ROBUSTLAB_MUTATION_DIR", "/tmp/robustlab-mutation"))
MUTMUT = [sys.executable, "-m", "mutmut"]

#: module -> (files mutated, the fast tests that exercise them, target fraction killed)
MODULES: dict[str, tuple[list[str], list[str], float]] = {
    "metrics": (["robustlab/metrics/*"],
                ["tests/test_metrics_consistency.py", "tests/test_metrics_facade.py",
                 "tests/test_metrics_learnability.py", "tests/test_metrics_mt.py",
                 "tests/test_metrics_ranking.py", "tests/test_metrics_judged_checklist.py",
                 "tests/test_tasks_metrics.py"], 0.90),
    "eval-predict": (["robustlab/studies/eval/predict.py"], ["tests/test_eval_predict.py"], 0.90),
    "executor": (["robustlab/runs/executor.py"],
                 ["tests/test_runs_store.py::test_run_and_resume",
                  "tests/test_runs_store.py::test_done_results_in_study_order",
                  "tests/test_runs_store.py::test_failures_are_results_and_rerun",
                  "tests/test_runs_store.py::test_stale_cells_fail",
                  "tests/test_runs_store.py::test_parallel_backends_store_like_sequential[process]",
                  "tests/test_reliability.py::test_a_study_killed_in_cell_k_kept_every_cell_"
                  "finished_before_it",
                  "tests/test_reliability.py::test_a_killed_pool_worker_is_replaced_and_the_"
                  "study_completes",
                  "tests/test_reliability.py::test_two_identical_commands_on_one_out_both_"
                  "finish_complete"], 0.80),
    "learnability-summary": (["robustlab/studies/learnability/summary.py"],
                             ["tests/test_learnability_summary.py"], 0.80),
    "consistency-summary": (["robustlab/studies/cross_domain/consistency.py"],
                            ["tests/test_cross_domain_consistency.py"], 0.80),
    "perturbations-base": (["robustlab/perturbations/base.py"],
                           ["tests/test_perturbations_generic.py",
                            "tests/test_perturbation_streams.py"], 0.80),
    "store": (["robustlab/runs/store/*"],
              ["tests/test_runs_store.py", "tests/test_damaged_store.py"], 0.80),
}

#: survivors that cannot be killed, by the function mutmut names (its mangled name, without the
#: ``__mutmut_N`` suffix): one line each on why every mutant of it behaves like the original
EQUIVALENT: dict[str, str] = {
    "robustlab.studies.eval.predict.x__is_textattack_wrapper":
        "a TextAttack ModelWrapper is callable, so object_proba's `_is_textattack_wrapper(model) "
        "or callable(model)` is decided by callable() whatever this returns",
}

#: mutmut's words for a mutant's fate
STATUSES = ("killed", "survived", "no tests", "timeout", "suspicious", "skipped",
            "segfault", "check was interrupted by user", "not checked", "caught by type check")


def prepare(name: str) -> Path:
    """A scratch copy of the code, the tests and pyproject.toml with this module's mutmut
    section appended. A ``mutants/`` tree left by an earlier run is kept: mutmut keeps the
    verdict of every mutant whose function is unchanged (and, the test selection unchanged,
    picks up new tests), so a rerun checks only what is new; the unmutated code is refreshed
    in it."""
    only, tests, _ = MODULES[name]
    work = SCRATCH / name
    work.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for d in ("robustlab", "tests"):
        shutil.rmtree(work / d, ignore_errors=True)
        shutil.copytree(ROOT / d, work / d, ignore=ignore)
    kept = work / "mutants" / "robustlab"
    if kept.is_dir():  # mutmut copies unmutated files once: refresh them
        for src in (ROOT / "robustlab").rglob("*.py"):
            rel = src.relative_to(ROOT).as_posix()
            if not any(Path(rel).match(pattern) for pattern in only):
                dst = work / "mutants" / rel
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    q = lambda xs: "[" + ", ".join(json.dumps(x) for x in xs) + "]"  # noqa: E731
    toml += (f"\n[tool.mutmut]\nsource_paths = [\"robustlab\"]\nonly_mutate = {q(only)}\n"
             'pytest_add_cli_args = ["-p", "no:cacheprovider", "-m", "not slow", "-x", "-q", '
             '"--timeout", "600"]\n'
             f"pytest_add_cli_args_test_selection = {q(tests)}\n"
             # a worker forked from a process that ran torch deadlocks on a lock held by one
             # of its threads (seen as spurious timeouts): fork from a clean server instead
             'process_isolation = "forkserver"\n'
             # a forked worker pays the module fixtures (a tiny checkpoint, transformers'
             # import) that a test's own duration leaves out: without a floor, mutants of the
             # code those tests cover "time out" spuriously
             "timeout_constant = 60.0\n")
    (work / "pyproject.toml").write_text(toml, encoding="utf-8")
    return work


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    env.setdefault("ROBUSTLAB_SHARED", str(ROOT.parent / "shared"))
    return env


def run(name: str, children: int, recheck: bool = False) -> float:
    """Mutate one module; ``recheck``: only its survivors and no-tests mutants again (after new
    tests), named one by one since mutmut keeps a verdict it already has."""
    left: list[str] = []
    if recheck:
        by = results(name) or {}
        left = sorted(by.get("survived", []) + by.get("no tests", []) + by.get("timeout", []))
        if not left:
            return 0.0
    work = prepare(name)
    _forget_no_tests(work)
    t0 = time.time()
    with open(work / "mutmut.log", "ab") as log:
        subprocess.run([*MUTMUT, "run", "--max-children", str(children), *left], cwd=work,
                       env=_env(), stdout=log, stderr=subprocess.STDOUT, check=False)
    seconds = time.time() - t0
    sec = work / "seconds"
    before = float(sec.read_text()) if sec.exists() else 0.0
    sec.write_text(f"{before + seconds:.0f}")
    return seconds


def _forget_no_tests(work: Path) -> None:
    """Mark every "no tests" verdict of an earlier run unchecked: tests added since may call
    the function now (mutmut keeps any verdict it has, and maps new tests to functions)."""
    for meta in (work / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        codes = data.get("exit_code_by_key", {})
        stale = [k for k, v in codes.items() if v == 33]  # mutmut's exit code for "no tests"
        if stale:
            codes.update(dict.fromkeys(stale))
            meta.write_text(json.dumps(data), encoding="utf-8")


def results(name: str) -> dict[str, list[str]] | None:
    work = SCRATCH / name
    if not (work / "mutants").is_dir():
        return None
    out = subprocess.run([*MUTMUT, "results", "--all", "true"], cwd=work, env=_env(),
                         capture_output=True, text=True, check=False).stdout
    by: dict[str, list[str]] = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+): (.+)$", line)
        if m and m.group(2) in STATUSES:
            by.setdefault(m.group(2), []).append(m.group(1))
    return by


def report(path: Path, names: list[str]) -> str:
    lines = ["# Mutation testing of the core (mutmut)", "",
             "Generated by `python bench/mutation.py` (`make mutate`): each module mutated by "
             "mutmut in a scratch copy and run against the fast tests listed (`-m 'not slow' "
             "-x`). *No tests* (no selected test calls the function) and *timeout* (a test run "
             "that did not finish in 15× its usual time) count as not killed.", "",
             f"Machine: {platform.node()}, {os.cpu_count()} cores, shared with other sessions; "
             "*load* is the 1-minute load average at the start and end of each module's run.",
             "*Checked* excludes mutants the run did not reach (stopped early: named in the "
             "note below the table); *killed %* is of the checked ones.",
             "", "| module | files | tests | mutants | checked | killed | survived | no tests | "
             "timeout | killed % | target | minutes | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    detail: list[str] = []
    for name in names:
        by = results(name)
        only, tests, target = MODULES[name]
        if by is None:
            lines.append(f"| {name} | {', '.join(only)} | — | not run |" + " |" * 6
                         + f" {target:.0%} | | |")
            continue
        total = sum(len(v) for v in by.values())
        checked = total - len(by.get("not checked", []))
        killed = len(by.get("killed", []))  # a timeout is not counted as killed
        sec = SCRATCH / name / "seconds"
        minutes = f"{int(sec.read_text().strip()) / 60:.0f}" if sec.exists() else "?"
        ld = SCRATCH / name / "load"
        load = ld.read_text().strip() if ld.exists() else "?"
        pct = killed / checked if checked else 0.0
        lines.append(f"| {name} | {', '.join(only)} | {len(tests)} selections | {total} | {checked} | "
                     f"{len(by.get('killed', []))} | {len(by.get('survived', []))} | "
                     f"{len(by.get('no tests', []))} | {len(by.get('timeout', []))} | "
                     f"{pct:.1%} | {target:.0%} {'met' if pct >= target else 'NOT met'} | "
                     f"{minutes} | {load} |")
        left = sorted(by.get("survived", []) + by.get("no tests", []))
        if left:
            detail += ["", f"## {name}: {len(left)} not killed", "",
                       "Tests: " + ", ".join(f"`{t}`" for t in tests), "",
                       "Show one with `cd " + str(SCRATCH / name) + " && mutmut show NAME`.", ""]
            per_fn: dict[str, int] = {}
            for m in left:
                fn = m.rsplit("__mutmut_", 1)[0]
                per_fn[fn] = per_fn.get(fn, 0) + 1
            for fn, n in sorted(per_fn.items(), key=lambda kv: -kv[1]):
                why = EQUIVALENT.get(fn)
                detail.append(f"* `{fn}`: {n}" + (f" — equivalent: {why}" if why else ""))
    text = "\n".join(lines + detail) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*", metavar="MODULE",
                    help=f"modules to mutate, of {', '.join(MODULES)} (default: all, one at a "
                    "time)")
    ap.add_argument("--max-children", type=int, default=1)
    ap.add_argument("--recheck", action="store_true",
                    help="run only the mutants a module's last run left alive (after new tests)")
    ap.add_argument("--report", type=Path, default=ROOT / "bench" / "results" / "mutation.md")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the report from the scratch copies, running nothing")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.modules) - set(MODULES))
    if unknown:
        ap.error(f"unknown module(s) {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    names = args.modules or list(MODULES)
    if not args.report_only:
        for name in names:
            print(f"== {name}: mutating {', '.join(MODULES[name][0])}", flush=True)
            before = os.getloadavg()[0]
            print(f"   {run(name, args.max_children, args.recheck) / 60:.1f} min", flush=True)
            (SCRATCH / name / "load").write_text(f"{before:.1f}–{os.getloadavg()[0]:.1f}")
    print(report(args.report, list(MODULES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
