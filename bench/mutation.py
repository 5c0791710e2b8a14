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
                 ["tests/test_executor_units.py", "tests/test_executor_loop.py",
                  "tests/test_runs_store.py::test_run_and_resume",
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
                           ["tests/test_perturbation_base.py",
                            "tests/test_perturbation_streams.py"], 0.80),
    # the client (retry, backoff, Retry-After, budget, concurrency) and the card reader, against
    # their server-less unit tests: tests/test_endpoints*.py start a uvicorn server per module
    # (seconds per mutant under load), so they are left out of the map
    "endpoints": (["robustlab/endpoints/client.py", "robustlab/endpoints/card.py"],
                  ["tests/test_endpoint_units.py"], 0.80),
    "store": (["robustlab/runs/store/*"],
              ["tests/test_runs_store.py", "tests/test_damaged_store.py",
               "tests/test_store_judgements.py"], 0.80),
}

#: pytest options of one module's runs, beyond the common ones (each with its reason)
EXTRA_ARGS: dict[str, list[str]] = {
    # the WMT22 parity tests (5-17 s each under load) check sacreBLEU's code path on official
    # data; test_metrics_mt's small parity tests check the same calls in milliseconds
    "metrics": ["-k", "not wmt22"],
    # Ray's start-up wait (30 s under load) and two tests that train a model first (30 s):
    # the other store tests read and write the same tables
    "store": ["-k", "not ray and not commands_skip_damaged and not tui_loaders"],
}

#: survivors that cannot be killed, by the function mutmut names (its mangled name, without the
#: ``__mutmut_N`` suffix): one line each on why every mutant of it behaves like the original
EQUIVALENT: dict[str, str] = {
    "robustlab.metrics.mt.x_plain_sentence_bleu__mutmut_4":
        "dtype=float dropped: the scores are Python floats, which numpy stores as float64 anyway",
    "robustlab.metrics.learnability.x_log_auc__mutmut_8":
        "dtype=None: numeric values give float64 (ints: the same trapezoid); non-numbers are "
        "refused by the float p grid's shape check or np.trapezoid either way",
    "robustlab.metrics.learnability.x_seed_spread__mutmut_7":
        "dtype dropped: the values were converted with float() the line before, so numpy "
        "infers float64",
    "robustlab.metrics.learnability.x_seed_spread__mutmut_20":
        "_finite(None) for every value: this branch runs only when no value is finite, and "
        "_finite of a non-finite value is None too",
    "robustlab.metrics.consistency.x_summarize__mutmut_42":
        "zip strict=False: g is gamma(a, eps), one value per ε, so the lengths always match",
    "robustlab.metrics.learnability.x_learnability_prob__mutmut_3":
        "dtype=None for the perturbed probabilities: a float array converts to float64 "
        "exactly, and the subtraction with the float64 clean array is float64 either way",
    "robustlab.metrics.consistency.x_leave_one_out__mutmut_27":
        "the all-rows mask replaced by `labels != None`: domain labels are never None, so "
        "every element compares unequal and the mask is all True as before",
    "robustlab.metrics.tasks.x_answer_selection_metrics__mutmut_28":
        "dtype=float dropped: scores are numbers (the model's), and `>=`, isfinite and "
        "average_precision_score treat int and float arrays alike",
    "robustlab.metrics.mt.xǁMTScorerǁ_build__mutmut_18":
        "force=None on the corpus BLEU object: force only silences sacreBLEU's log warning "
        "about tokenized input; it changes no score (sacreBLEU's docs)",
    "robustlab.metrics.mt.xǁMTScorerǁscore_many__mutmut_11":
        "np.fromiter without count=: count only preallocates; the array is the same",
    "robustlab.metrics.ranking.x_spearman_test__mutmut_71":
        "the rank mean over all resamples instead of per resample: every resample is a "
        "permutation of the same ranks, so every row has the same mean",
    "robustlab.studies.learnability.summary.x_correlations__mutmut_71":
        "the robustness p-value is not re-set: at_p_table already computed it with the same "
        "spearman_test (same data, same seed), so the value is the same",
    "robustlab.studies.learnability.summary.x_correlations__mutmut_72": "as __mutmut_71",
    "robustlab.studies.cross_domain.consistency.x_consistency_tables__mutmut_6":
        "dtype=float dropped for the score matrix: every metrics function converts it to float "
        "itself (consistency._arr)",
    "robustlab.studies.cross_domain.consistency.x_consistency_tables__mutmut_29":
        "dtype=float dropped for ε: the --eps option is type=float, and the product with σ_ref "
        "is float either way",
    "robustlab.studies.cross_domain.consistency.x_consistency_tables__mutmut_38":
        "zip strict dropped: eps is computed from cfg.eps, one value each",
    "robustlab.studies.cross_domain.consistency.x_consistency_tables__mutmut_120":
        "names.get(k) without the default k: every γ key of a leave-one-out row is _key of a "
        "value of eps, which names maps, so the default is never used",
    "robustlab.studies.eval.predict.x__is_pipeline__mutmut_7":
        "`pipelines is not None` → always true: getattr(None, 'Pipeline', None) is None too, "
        "so nothing is a pipeline when transformers' pipelines are not imported, as before",
    "robustlab.studies.eval.predict.x__is_textattack_wrapper__mutmut_7":
        "as x__is_pipeline__mutmut_7, for TextAttack's ModelWrapper",
    "robustlab.metrics.tasks.x_classification_metrics__mutmut_40":
        "zero_division dropped from macro-F1: sklearn computes F1 as 2TP/(2TP+FP+FN), whose "
        "denominator is 0 only for a class in neither gold nor predictions, and macro averages "
        "over the classes in either (checked: the test with a class only predicted passes "
        "without a warning under this mutant)",
    "robustlab.perturbations.base.x_stream_for__mutmut_14":
        "'UTF-8' for 'utf-8': Python's codec names are case-insensitive, the same codec",
    "robustlab.perturbations.base.xǁPerturbationǁ_ready__mutmut_4":
        "getattr default None for False: both falsy, the check reads the same",
    "robustlab.runs.store.run.xǁRunRowǁreplace_config__mutmut_23":
        "the UPDATE statement in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.run.xǁRunRowǁinit_run__mutmut_19":
        "the SELECT in upper case: SQL names are case-insensitive, and so is sqlite3.Row's "
        "lookup by column name (row['kind'] finds KIND)",
    "robustlab.runs.store.run.xǁRunRowǁinit_run__mutmut_64":
        "row['KIND'] for row['kind']: sqlite3.Row looks column names up case-insensitively",
    "robustlab.runs.store.cells.xǁCellOpsǁfail__mutmut_6":
        "the UPDATE statement in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.recovery.xǁRecoveryǁdamaged_done__mutmut_47":
        "the fast CRC comparison broken: it only skips the full check, and on a mismatch "
        "payloads.load_bytes verifies the record and decides the same verdict (slower)",
    "robustlab.metrics.tasks.x_entity_metrics__mutmut_16":
        "zip strict=True dropped: _same_length has already refused lists of unequal length",
    "robustlab.metrics.tasks.x_similarity_metrics__mutmut_25":
        "`or` → `and` in the constant-side check: with one side constant scipy's pearsonr "
        "and spearmanr return NaN themselves (their warning is silenced), the same result",
    "robustlab.metrics.learnability.x_learnability_prob__mutmut_5":
        "dtype argument dropped: as __mutmut_3",
    "robustlab.runs.executor.xǁ_Processesǁ_restart__mutmut_4":
        "cancel_futures dropped on restart: _restart runs only on BrokenProcessPool, and a broken "
        "pool has already failed every pending future itself (concurrent.futures' "
        "terminate_broken), so nothing is left to cancel",
    "robustlab.runs.executor.xǁ_Processesǁ_restart__mutmut_9":
        "flush=None: sys.stderr is line-buffered (Python >= 3.9, terminal or pipe), so the "
        "line is written at its newline either way",
    "robustlab.runs.executor.x__announce_damaged__mutmut_16": "flush dropped: as "
        "xǁ_Processesǁ_restart__mutmut_9",
    "robustlab.runs.executor.xǁ_Processesǁclose__mutmut_1":
        "shutdown(wait=None): None and False are both false to shutdown's `if ... and wait`",
    "robustlab.runs.executor.x_refuse_unguarded_main__mutmut_45":
        "'UTF-8' for 'utf-8': Python's codec names are case-insensitive, the same codec",
    "robustlab.runs.executor.xǁ_CellLoopǁmore_to_do__mutmut_13":
        "_held_elsewhere(..., None) for (..., self.me): when more_to_do runs the backend has "
        "returned every cell this call claimed (each recorded done or failed), so no running "
        "cell has worker == me and both exclude nothing (two loops in one process on one run "
        "directory, which would share a worker id, are not a supported use)",
    "robustlab.endpoints.card.x_load_card__mutmut_34":
        "the defaults' url 'XXXX' for '': the defaults card is read only for each field's "
        "type (a str either way); url itself is checked by _check_url",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_2":
        "last = None for '': every try sets last (or returns or raises) before the loop can "
        "end, so its first value is never read",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_6":
        "last = None for '': every try sets last (or returns or raises) before the loop can "
        "end, so its first value is never read",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_10":
        "range(retries + 2): the loop breaks at attempt == retries, so the extra try is never "
        "reached",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_58":
        "content-type default 'XXXX' for '': neither starts with text/event-stream, the same "
        "branch",
    "robustlab.endpoints.client.xǁEndpointModelǁ_ask_all__mutmut_32":
        "'CONTENT-TYPE' for 'Content-Type': HTTP header names are case-insensitive (httpx "
        "merges the client's and the request's headers by lower-cased name)",
    "robustlab.endpoints.client.xǁEndpointModelǁ_keep__mutmut_55":
        "zip strict=None: kinds.answers has already refused a reply whose answers are not one "
        "per text, so the lengths always match",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_22":
        "zip strict=None: keys is built from texts one for one, so the lengths always match",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_35": "as __mutmut_22",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_39": "as __mutmut_22",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_53":
        "`width and len(row)`: width is read only for an invalid (None) row, which only the LLM "
        "kinds give, and their cards always have verbalizers (load_card refuses one without), "
        "so n_classes_ is set and the loop never changes width",
    "robustlab.runs.store.recovery.x__stat__mutmut_5":
        "(-1, -2) for a missing file's (-1, -1): the marker is only compared with another "
        "_stat of the same code (the quick_check cache key), so any constant reads the same",
    "robustlab.runs.store.records.xǁRecordReadsǁpredictions__mutmut_52":
        "ORDER BY in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.schema.x_read_meta__mutmut_7":
        "the SELECT in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.cells.xǁCellOpsǁclaim__mutmut_8":
        "the UPDATE in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.cells.xǁCellOpsǁdone_keys__mutmut_4":
        "the SELECT in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.cells.xǁCellOpsǁfinish__mutmut_64":
        "column names in upper case in an UPDATE: SQLite names are case-insensitive",
    "robustlab.runs.store.run.xǁRunRowǁrun_info__mutmut_4":
        "the SELECT in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.run.xǁRunRowǁrun_info__mutmut_48":
        "row['UPDATED'] for row['updated']: sqlite3.Row looks column names up "
        "case-insensitively",
    "robustlab.runs.store.records.xǁRecordReadsǁevents__mutmut_9":
        "the SELECT in upper case: SQLite names a plain column's result by its declared name "
        "(checked: SELECT ID ... gives the key 'id'), so the rows read the same",
    "robustlab.runs.store.schema.x_check_schema__mutmut_21":
        "the INSERT in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.run.xǁRunRowǁrun_heartbeat__mutmut_6":
        "the UPDATE statement in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.judgements.xǁJudgementOpsǁset_verdicts__mutmut_32":
        "the UPDATE in upper case: SQL keywords and names are case-insensitive in SQLite",
    "robustlab.runs.store.schema.x_add_checksums__mutmut_39":
        "the SELECT in lower case: SQL keywords are case-insensitive in SQLite",
    "robustlab.runs.store.responses.xǁResponseOpsǁresponse_totals__mutmut_24":
        "column and table names in upper case: SQLite names are case-insensitive",
    "robustlab.runs.store.judgements.x_judgement_checksum__mutmut_34":
        "ensure_ascii=None for False: json.dumps tests it for truth, both false",
    "robustlab.runs.store.responses.xǁResponseOpsǁadd_responses__mutmut_39":
        "getattr default None for False: both false, the check reads the same",
    "robustlab.runs.store.responses.xǁResponseOpsǁadd_responses__mutmut_5":
        "sort_keys=None: the answer is checksummed as the very string stored and decoded back "
        "on read, so key order changes no answer read (only the stored text's order)",
    "robustlab.runs.executor.xǁ_CellLoopǁ__init____mutmut_6":
        "self.me = None: store.claim(key, None) claims for worker_id(), the same name, and "
        "more_to_do's held-elsewhere reads as for xǁ_CellLoopǁmore_to_do__mutmut_13",
    "robustlab.endpoints.client.xǁEndpointModelǁ_check_budget__mutmut_1":
        "default texts=2: its one caller passes len(group), so the default is never used",
    "robustlab.endpoints.card.x_load_card__mutmut_33":
        "Card(url=None) for the defaults: url's default is read only for its type, and None "
        "leads _typed to the same str check as ''",
    "robustlab.endpoints.client.xǁEndpointModelǁ_ask__mutmut_7":
        "ThreadPoolExecutor(None) for (1): one task is ever submitted to it",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_3": "as _post__mutmut_2",
    "robustlab.endpoints.client.xǁEndpointModelǁ_post__mutmut_70":
        "'RETRY-AFTER' for 'Retry-After': httpx looks header names up case-insensitively",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_26":
        "zip strict=False: keys is built from texts one for one, so the lengths always match",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_38": "as __mutmut_26",
    "robustlab.endpoints.client.xǁEndpointModelǁpredict_proba__mutmut_56":
        "`width or 3`: width is None only without labels or verbalizers, which only the json "
        "and hf kinds allow, and they never give an invalid (None) row that reads it",
    "robustlab.endpoints.client.xǁ_Writerǁ_run__mutmut_1":
        "done = None for False: `while not done` reads both as false",
    "robustlab.endpoints.client.xǁEndpointModelǁrequest_key__mutmut_10":
        "'UTF-8' for 'utf-8': Python's codec names are case-insensitive, the same codec",
}

#: survivors (or no-tests mutants) of a run killed by a test written after it, or by one that
#: runs the code in a subprocess (mutmut maps tests to functions by tracing its own process,
#: so it finds "no tests" there), checked one by one with
#: ``python bench/mutation.py --check MODULE MUTANT TEST`` (the test fails under the mutant and
#: passes without it) until the module's next run rechecks them: mutant -> test
KILLED_AFTER: dict[str, str] = {
    "robustlab.runs.executor.x_refuse_unguarded_main__mutmut_8":
        "tests/test_executor_units.py::test_an_unguarded_script_is_refused_naming_its_line",
    "robustlab.runs.executor.x_refuse_unguarded_main__mutmut_11":
        "tests/test_executor_units.py::test_an_unguarded_script_is_refused_naming_its_line",
    "robustlab.runs.executor.x_refuse_unguarded_main__mutmut_32":
        "tests/test_executor_units.py::test_an_unguarded_script_is_refused_naming_its_line",
    "robustlab.runs.store.cells.xǁCellOpsǁ_cell__mutmut_16":
        "tests/test_store_judgements.py::test_an_unknown_status_is_named_in_twenty_characters",
    "robustlab.runs.store.run.xǁRunRowǁ_close_invocation__mutmut_10":
        "tests/test_store_judgements.py::test_a_resumed_run_adds_the_last_invocations_wall_time",
    "robustlab.runs.store.cells.xǁCellOpsǁheartbeat__mutmut_6":
        "tests/test_store_judgements.py::test_heartbeat_touches_running_cells_and_the_run_only",
    "robustlab.runs.store.run.xǁRunRowǁreplace_config__mutmut_19":
        "tests/test_store_judgements.py::test_replace_config_keeps_the_run_readable",
    "robustlab.runs.store.x_print_failed_cells__mutmut_24":
        "tests/test_store_judgements.py::test_failed_cells_are_listed_with_their_last_error_line",
    "robustlab.studies.eval.predict.x__checked__mutmut_34":
        "tests/test_eval_predict.py::test_probabilities_with_an_exact_zero_are_kept_and_the_refus"
        "al_says_what_to_do",
    "robustlab.studies.eval.predict.x__checked__mutmut_51":
        "tests/test_eval_predict.py::test_probabilities_with_an_exact_zero_are_kept_and_the_refus"
        "al_says_what_to_do",
    "robustlab.studies.eval.predict.x__checked__mutmut_52":
        "tests/test_eval_predict.py::test_probabilities_with_an_exact_zero_are_kept_and_the_refus"
        "al_says_what_to_do",
    "robustlab.studies.eval.predict.x_object_proba__mutmut_14":
        "tests/test_eval_predict.py::test_a_batch_size_setter_that_refuses_is_left_alone",
    "robustlab.studies.eval.predict.x_object_proba__mutmut_16":
        "tests/test_eval_predict.py::test_a_batch_size_setter_that_refuses_is_left_alone",
    "robustlab.studies.eval.predict.xǁPredictorǁ__init____mutmut_1":
        "tests/test_eval_predict.py::test_predictor_defaults",
    "robustlab.studies.eval.predict.xǁPredictorǁ__init____mutmut_3":
        "tests/test_eval_predict.py::test_predictor_defaults",
    "robustlab.metrics.consistency.x_design_bags__mutmut_27":
        "tests/test_metrics_consistency.py::test_design_bags_are_pinned_for_a_seed_and_order_is_"
        "indices",
    "robustlab.metrics.consistency.x_design_bags__mutmut_29":
        "tests/test_metrics_consistency.py::test_design_bags_are_pinned_for_a_seed_and_order_is_"
        "indices",
    "robustlab.metrics.consistency.x_design_bags__mutmut_53":
        "tests/test_metrics_consistency.py::test_design_bags_are_pinned_for_a_seed_and_order_is_"
        "indices",
    "robustlab.studies.learnability.summary.x_correlations__mutmut_98":
        "tests/test_learnability_summary.py::test_correlation_tables_are_keyed_by_p_as_printed",
    "robustlab.studies.cross_domain.consistency.xǁConsistencyConfigǁadd_arguments__mutmut_5":
        "tests/test_cross_domain_consistency.py::test_the_options_form_the_consistency_metrics_"
        "group",
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
        # and drop the modules since moved or removed (a stale robustlab/commands/<kind>.py
        # made the CLI register a command twice and every clean run fail)
        for old in kept.rglob("*.py"):
            rel = old.relative_to(work / "mutants").as_posix()
            if not (ROOT / rel).exists() and not any(Path(rel).match(p) for p in only):
                old.unlink()
                old.with_suffix(".py.meta").unlink(missing_ok=True)
    toml = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    q = lambda xs: "[" + ", ".join(json.dumps(x) for x in xs) + "]"  # noqa: E731
    args = ["-p", "no:cacheprovider", "-m", "not slow", "-x", "-q", "--timeout", "600",
            *EXTRA_ARGS.get(name, [])]
    toml += (f"\n[tool.mutmut]\nsource_paths = [\"robustlab\"]\nonly_mutate = {q(only)}\n"
             f"pytest_add_cli_args = {q(args)}\n"
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


def _all_mutants(work: Path) -> dict[str, int | None]:
    """Every mutant of the module and its exit code (None: not checked), from mutmut's files."""
    out: dict[str, int | None] = {}
    for meta in sorted((work / "mutants").rglob("*.meta")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        live = set(data.get("hash_by_function_name", {}))
        # mutmut keeps the verdicts of functions since removed from the file: not mutants now
        out.update({k: v for k, v in data.get("exit_code_by_key", {}).items()
                    if k.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[-1] in live})
    return out


def _generate(work: Path) -> None:
    """Only mutmut's mutant generation (its ``run`` without running anything), so a sample can
    be drawn from the names before any mutant is run."""
    code = ("import os, mutmut.__main__ as m; os.makedirs('mutants', exist_ok=True); "
            "m.copy_src_dir(); m.copy_also_copy_files(); m.setup_source_paths(); "
            "m.store_lines_covered_by_tests(); m.create_mutants(1)")
    subprocess.run([sys.executable, "-c", code], cwd=work, env=_env(), check=True,
                   capture_output=True)


def sample_names(name: str, n: int, seed: int) -> list[str]:
    """A seeded uniform sample of ``n`` of the module's mutants, kept in ``sample.txt`` (a
    larger n later extends it: the first names stay the same)."""
    import random

    work = SCRATCH / name
    names = sorted(_all_mutants(work))
    if n >= len(names):  # the whole module: not a sample
        (work / "sample.txt").unlink(missing_ok=True)
        return names
    chosen = random.Random(seed).sample(names, len(names))[:n]
    (work / "sample.txt").write_text("\n".join(chosen) + "\n", encoding="utf-8")
    return chosen


def run(name: str, children: int, recheck: bool = False, sample: int = 0,
        seed: int = 0) -> float:
    """Mutate one module; ``recheck``: only its survivors and no-tests mutants again (after new
    tests), named one by one since mutmut keeps a verdict it already has; ``sample``: only a
    seeded uniform sample of that many mutants (when the whole module cannot be run)."""
    left: list[str] = []
    if recheck:
        by = results(name) or {}
        left = sorted(by.get("survived", []) + by.get("no tests", []) + by.get("timeout", []))
        # an equivalent mutant cannot be killed; each would run every test that covers it
        left = [m for m in left if not _equivalent(m)]
        if not left:
            return 0.0
    work = prepare(name)
    _forget_no_tests(work)
    if sample:
        if not _all_mutants(work):
            _generate(work)
        codes = _all_mutants(work)
        chosen = sample_names(name, sample, seed)
        from mutmut.stats import status_by_exit_code

        # unchecked, and any not killed before (tests may have been added since)
        todo = [m for m in chosen
                if codes.get(m) is None or (status_by_exit_code[codes[m]] != "killed"
                                            and not _equivalent(m))]
        left = sorted(set(left) & set(chosen)) if recheck else todo
        if not left:
            return 0.0
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
    """{status: mutant names} of a module's scratch copy (None: never run), read from mutmut's
    files; restricted to ``sample.txt`` when the module was sampled."""
    from mutmut.stats import status_by_exit_code

    work = SCRATCH / name
    codes = _all_mutants(work) if (work / "mutants").is_dir() else {}
    if not codes:
        return None
    chosen = _sample(name)
    by: dict[str, list[str]] = {}
    for mutant, code in sorted(codes.items()):
        if chosen is None or mutant in chosen:
            by.setdefault(status_by_exit_code[code], []).append(mutant)
    return by


def _sample(name: str) -> set[str] | None:
    f = SCRATCH / name / "sample.txt"
    return set(f.read_text(encoding="utf-8").split()) if f.exists() else None


def _equivalent(mutant: str) -> str | None:
    """The reason a mutant is equivalent (by its own name, else by its function's)."""
    return EQUIVALENT.get(mutant) or EQUIVALENT.get(mutant.rsplit("__mutmut_", 1)[0])


def _wilson(k: int, n: int) -> str:
    """95 % Wilson interval of a sampled proportion."""
    if n == 0:
        return ""
    z, p = 1.96, k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return f" (95 % CI {mid - half:.0%}–{mid + half:.0%})"


def check(name: str, mutant: str, test: str) -> bool:
    """Whether ``test`` fails under ``mutant`` (and passes without it) in the module's mutmut
    tree, the test file copied in first: a survivor checked against a test written after the
    run, without a whole run."""
    tree = SCRATCH / name / "mutants"
    shutil.copy2(ROOT / test.split("::")[0], tree / test.split("::")[0])
    env = {**_env(), "PYTHONPATH": "."}
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test]
    mutated = subprocess.run(cmd, cwd=tree, env={**env, "MUTANT_UNDER_TEST": mutant},
                             capture_output=True, check=False).returncode
    clean = subprocess.run(cmd, cwd=tree, env={**env, "MUTANT_UNDER_TEST": ""},
                           capture_output=True, check=False).returncode
    print(f"{mutant}: {'killed' if mutated == 1 else 'NOT killed'} by {test} "
          f"(exit {mutated} under the mutant, {clean} without)")
    return mutated == 1 and clean == 0


def report(path: Path, names: list[str]) -> str:
    lines = ["# Mutation testing of the core (mutmut)", "",
             "Generated by `python bench/mutation.py` (`make mutate`): each module mutated by "
             "mutmut in a scratch copy and run against the fast tests listed (`-m 'not slow' "
             "-x`; mutmut runs, for each mutant, the selected tests that call its function).", "",
             "* *no tests*: no selected test calls the mutated function: not killed, listed "
             "below; *timeout*: not counted as killed;",
             "* *equivalent*: a survivor that behaves as the original for every input (the "
             "reason is given below each one); *killed %* = killed / (checked − equivalent);",
             "* *sample*: when a module could not be run whole in the time available, a seeded "
             "uniform sample of its mutants was run (`--sample N`): the figures are of the sample, "
             "with a 95 % interval for the module's killed %; *not run* = mutants outside the "
             "sample or not reached.",
             "", f"Report written {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
             f"Machine: {platform.node()}, {os.cpu_count()} cores, shared with other sessions; "
             "*load* is the 1-minute load average at the start and end of the module's last run; "
             "*minutes* adds up every run of the module (they are incremental: mutmut keeps the "
             "verdict of a mutant whose function did not change).",
             "* *killed after*: survivors (or no-tests mutants) of the run killed by a test "
             "written after it, or by a test that runs the code in a subprocess (mutmut's "
             "test mapping cannot see those), each checked with `--check MODULE MUTANT TEST` "
             "(listed below); the last column counts them as killed.",
             "", "| module | mutants | checked | killed | survived | no tests | timeout | "
             "equivalent | not run | killed % | target | minutes | load | killed after | "
             "killed % with them |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    detail: list[str] = []
    for name in names:
        by = results(name)
        only, tests, target = MODULES[name]
        if by is None:
            lines.append(f"| {name} | not run |" + " |" * 8 + f" {target:.0%} | | | | |")
            detail += ["", f"## {name}: not run", "", f"Mutates {', '.join(only)}; tests "
                       + ", ".join(f"`{t}`" for t in tests) + "."]
            continue
        population = len(_all_mutants(SCRATCH / name))
        chosen = _sample(name)
        considered = sum(len(v) for v in by.values())
        not_run = len(by.get("not checked", [])) + (population - considered)
        checked = considered - len(by.get("not checked", []))
        killed = len(by.get("killed", []))
        alive = sorted(by.get("survived", []) + by.get("no tests", []) + by.get("timeout", []))
        equivalent = [m for m in alive if _equivalent(m)]
        base = checked - len(equivalent)
        pct = killed / base if base else 0.0
        ci = _wilson(killed, base) if chosen is not None else ""
        after = [m for m in alive if m in KILLED_AFTER and not _equivalent(m)]
        pct_after = (killed + len(after)) / base if base else 0.0
        sec = SCRATCH / name / "seconds"
        minutes = f"{float(sec.read_text().strip()) / 60:.0f}" if sec.exists() else "?"
        ld = SCRATCH / name / "load"
        load = ld.read_text().strip() if ld.exists() else "?"
        size = f"{population}" + (f" (sample {len(chosen)})" if chosen is not None else "")
        lines.append(f"| {name} | {size} | {checked} | {killed} | "
                     f"{len(by.get('survived', []))} | {len(by.get('no tests', []))} | "
                     f"{len(by.get('timeout', []))} | {len(equivalent)} | {not_run} | "
                     f"{pct:.1%}{ci} | {target:.0%} {'met' if pct >= target else 'NOT met'} | "
                     f"{minutes} | {load} | {len(after)} | {pct_after:.1%} |")
        detail += ["", f"## {name}", "", f"Mutates {', '.join(only)}; tests "
                   + ", ".join(f"`{t}`" for t in tests)
                   + (f"; pytest {' '.join(EXTRA_ARGS[name])}" if name in EXTRA_ARGS else "")
                   + ".", ""]
        runs = SCRATCH / name / "runs.txt"
        if runs.exists():
            detail += ["Runs (each incremental on the last):", "",
                       *(f"* {r}" for r in runs.read_text(encoding="utf-8").splitlines()), ""]
        detail += [f"Show one with `cd {SCRATCH / name} && mutmut show NAME`.", ""]
        for m in alive:
            status = next(k for k, v in by.items() if m in v)
            why, after = _equivalent(m), KILLED_AFTER.get(m)
            detail.append(f"* `{m}` ({status})" + (f" — equivalent: {why}" if why else "")
                          + (f" — killed by `{after}` (checked with `--check`; counted here as "
                             "the run found it)" if after else ""))
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
    ap.add_argument("--check", nargs=3, metavar=("MODULE", "MUTANT", "TEST"),
                    help="run TEST under MUTANT in MODULE's mutmut tree and say if it kills it")
    ap.add_argument("--sample", type=int, default=0, metavar="N",
                    help="run only a seeded uniform sample of N mutants per module (reported "
                    "as a sample)")
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("--recheck", action="store_true",
                    help="run only the mutants a module's last run left alive (after new tests)")
    ap.add_argument("--report", type=Path, default=ROOT / "bench" / "results" / "mutation.md")
    ap.add_argument("--report-only", action="store_true",
                    help="rewrite the report from the scratch copies, running nothing")
    args = ap.parse_args(argv)
    unknown = sorted(set(args.modules) - set(MODULES))
    if unknown:
        ap.error(f"unknown module(s) {', '.join(unknown)}; choose from {', '.join(MODULES)}")
    if args.check:
        return 0 if check(*args.check) else 1
    names = args.modules or list(MODULES)
    if not args.report_only:
        for name in names:
            print(f"== {name}: mutating {', '.join(MODULES[name][0])}", flush=True)
            before, start = os.getloadavg()[0], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            sec = run(name, args.max_children, args.recheck, args.sample, args.sample_seed)
            print(f"   {sec / 60:.1f} min", flush=True)
            load = f"{before:.1f}–{os.getloadavg()[0]:.1f}"
            (SCRATCH / name / "load").write_text(load)
            opts = [f"--max-children {args.max_children}"] + (
                [f"--sample {args.sample}"] if args.sample else []) + (
                ["--recheck"] if args.recheck else [])
            with open(SCRATCH / name / "runs.txt", "a", encoding="utf-8") as log:
                log.write(f"{start}: `python bench/mutation.py {name} {' '.join(opts)}`, "
                          f"{sec / 60:.1f} min, load {load}\n")
    print(report(args.report, list(MODULES)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
