"""Bad input, across every command (issue 21, "Done when"): one table, one rule.

Each case is a command line that must be refused with exactly one error line on stderr (status
and warning lines before it allowed, as ``attack`` prints set-up steps; argparse's usage block
too), a non-zero exit code (2 for input errors) and nothing half-written: the case's own
directory and the shared fixture directory are byte-for-byte as before (no run directory, no
output file, an existing file unchanged). Cases run in-process through ``robustlab.cli.main``;
the few whose exit path needs a real process (a watchdog that ends it, signals) run as one.

The table subsumes the end-to-end bad-input cases of tests/test_cli_conventions.py and
tests/test_reliability.py that ran a command (moved here); parse-level spelling tests stay there.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from learnability_toy import sentences
from tui import fixtures as tui_fixtures

from robustlab.cli import main

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Bad:
    """``argv`` (``{W}``: the shared fixture folder, ``{T}``: this case's empty folder, also the
    working directory) must fail with ``code`` and an error line containing ``message``."""

    argv: tuple[str, ...]
    message: str
    code: int = 2
    process: bool = False  # run as a subprocess (the exit path needs a real process)
    env: tuple[tuple[str, str], ...] = ()

    def args(self, world: Path, tmp: Path) -> list[str]:
        return [a.replace("{W}", str(world)).replace("{T}", str(tmp)) for a in self.argv]


def bad(line: str, message: str, **kw) -> Bad:
    """A case from a command line written as one string (split on spaces; ``\\s`` is a space
    inside an argument)."""
    return Bad(tuple(a.replace("\\s", " ") for a in line.split(" ")), message, **kw)


TRAIN = "train --dataset {W}/good.txt --format label-text --out {T}/m"
LEARN = ("learnability --model bow --dataset {W}/good.txt --format label-text --perturbations "
         "leet_letters --steps 5 --quiet --no-plots --out {T}/r")
ROBUST = ("robustness --model bow --dataset {W}/good.txt --format label-text --perturbations "
          "leet_letters --steps 5 --quiet --no-plots --out {T}/r")
CENT = ("cent --model bow --dataset {W}/good.txt --format label-text --perturbations "
        "leet_letters --steps 5 --quiet --no-plots --out {T}/r")
DEMO = "demo --steps 5 --quiet --no-plots --out {T}/r"
EVIL = "nlaugmenter:subprocess.Popen:args=touch\\s{T}/pwned,shell=true"
PERTURB = "perturb -p leet_letters -i {W}/good.tsv -o {T}/o.tsv"
AUGMENT = "augment -p leet_letters -i {W}/good.tsv -o {T}/o.tsv"
ATTACK = ("attack --recipe so-beam --model {W}/model --dataset {W}/good.txt --dataset-format "
          "label-text -n 2 --no-progress --out {T}/r")
ATTACK_NO_MODEL = ATTACK.replace(" --model {W}/model", "")
BIAS = ("bias --model {W}/model --dataset {W}/good.txt --dataset-format label-text -n 2 "
        "--no-progress --out {T}/r")
BIAS_NO_MODEL = BIAS.replace(" --model {W}/model", "")
EVAL = ("eval --model {W}/model --dataset {W}/good.txt --dataset-format label-text "
        "--perturbations leet_letters --quiet --no-plots --out {T}/r")
EVAL_NO_MODEL = EVAL.replace(" --model {W}/model", "")
MT = ("cross-domain mt --systems {W}/mt/a.txt {W}/mt/b.txt {W}/mt/c.txt --refs {W}/mt/ref.txt "
      "--domains {W}/mt/domains.txt --no-plots --out {T}/r")
CLF = ("cross-domain clf --model bow --data-dir {W}/domains --domains alpha beta gamma "
       "--steps 3 --quiet --no-plots --out {T}/r")
SCORES = "cross-domain scores {W}/scores.csv --no-plots"

#: every model parameter that is a number, with a value out of range of each kind
OUT_OF_RANGE = ("0", "-3", "nan", "inf", "1e12")

CASES: list[Bad] = [
    # ---- robustlab itself ----
    bad("nosuchcommand", "invalid choice"),
    bad("--no-such-option", "unrecognized arguments"),
    # ---- perturb ----
    bad("perturb -p nosuch -i {W}/good.tsv -o {T}/o.tsv", "nosuch"),
    bad("perturb -p leet_letters:nosuch=1 -i {W}/good.tsv -o {T}/o.tsv", "nosuch"),
    bad("perturb -p leet_letters -i {W}/missing.tsv -o {T}/o.tsv", "missing.tsv"),
    bad("perturb -p leet_letters -i {W} -o {T}/o.tsv", "directory"),
    bad(f"{PERTURB} --column nope", "no column 'nope'"),
    bad(f"{PERTURB} --column -1", "0-based"),
    bad(f"{PERTURB} --column 9", "9"),
    bad(f"{PERTURB} --pps 0", "pps"),
    bad(f"{PERTURB} --pps -2", "pps"),
    bad(f"{PERTURB} --param noequals", "noequals"),
    bad(f"{PERTURB} --param nosuch=1", "nosuch"),
    bad(f"{PERTURB} --format xml", "invalid choice"),
    bad(f"{PERTURB} --output-format xml", "invalid choice"),
    bad(f"{PERTURB} --encoding no-such-encoding", "no-such-encoding"),
    bad("perturb -p leet_letters -i {W}/latin1.txt -o {T}/o.txt --format label-text",
        "--encoding"),
    bad(f"{PERTURB} --seed -1", "out of range"),
    bad(f"{PERTURB} --seed x", "invalid seed"),
    bad("perturb -p leet_letters -i {W}/good.tsv", "required"),
    bad("perturb -i {W}/good.tsv -o {T}/o.tsv", "required"),
    bad("perturb -p leet_letters -i {W}/good.tsv -o {T}/keep.txt/o.tsv", "keep.txt"),
    # a class named by its import path (typed here, so trusted) must be of the slot's kind
    bad(f"perturb -p {EVIL} -i {{W}}/good.tsv -o {{T}}/o.tsv",
        "is not an NL-Augmenter SentenceOperation subclass"),
    bad("perturb -p textattack:subprocess.Popen -i {W}/good.tsv -o {T}/o.tsv",
        "is not a TextAttack Transformation or Augmenter subclass"),
    bad("perturb -p textattack:Transformation -i {W}/good.tsv -o {T}/o.tsv",
        "is not a TextAttack Transformation or Augmenter subclass"),
    bad("perturb -p json.decoder:JSONDecoder -i {W}/good.tsv -o {T}/o.tsv",
        "is not a robustlab Perturbation subclass"),
    bad("perturb -p os.path:join -i {W}/good.tsv -o {T}/o.tsv", "has no class join"),
    bad("perturb -p no_such_pkg.mod:Cls -i {W}/good.tsv -o {T}/o.tsv", "cannot import"),
    bad("perturb -p nlaugmenter:no_such_pkg.mod.Cls -i {W}/good.tsv -o {T}/o.tsv",
        "cannot import"),
    # ---- augment ----
    bad(f"{AUGMENT} -n 0", "at least 1"),
    bad(f"{AUGMENT} -n -4", "at least 1"),
    bad(f"{AUGMENT} -n x", "invalid int"),
    bad(f"{AUGMENT} --label-column nope", "no column 'nope'"),
    bad(f"{AUGMENT} --label-column label", "give --train-file too"),
    bad(f"{AUGMENT} --label-column nope --train-file {{T}}/t.tsv", "no column 'nope'"),
    bad(f"{AUGMENT} --label-column text --train-file {{T}}/t.tsv", "cannot be the text column"),
    bad(f"{AUGMENT} --train-file {{T}}/o.tsv", "is the same file as -o/--output"),
    bad("augment -p nosuch -i {W}/good.tsv -o {T}/o.tsv", "nosuch"),
    bad("augment -p , -i {W}/good.tsv -o {T}/o.tsv", "at least one perturbation"),
    bad(f"{AUGMENT} --column nope", "no column 'nope'"),
    bad("augment -p leet_letters -i {W}/missing.tsv -o {T}/o.tsv", "missing.tsv"),
    bad(f"{AUGMENT} --pps 0", "pps"),
    bad(f"{AUGMENT} --param noequals", "noequals"),
    bad(f"{AUGMENT} --format xml", "invalid choice"),
    bad(f"{AUGMENT} --encoding no-such-encoding", "no-such-encoding"),
    bad(f"{AUGMENT} --seed -1", "out of range"),
    bad("augment -p json.decoder:JSONDecoder -i {W}/good.tsv -o {T}/o.tsv",
        "is not a robustlab Perturbation subclass"),
    bad("augment -p nlaugmenter:subprocess.Popen -i {W}/good.tsv -o {T}/o.tsv",
        "is not an NL-Augmenter SentenceOperation subclass"),
    bad("augment -p leet_letters -i {W}/latin1.txt -o {T}/o.txt --format label-text",
        "--encoding"),
    # ---- train ----
    bad(f"{TRAIN} --model bow:hidden=-3", "hidden=-3 is out of range"),
    bad(f"{TRAIN} --model bow:nosuch=1", "unknown parameter(s) nosuch"),
    bad(f"{TRAIN} --model textrnn:cell=xyz", "cell takes one of"),
    bad(f"{TRAIN} --model textrnn:bidirectional=3", "bidirectional"),
    bad(f"{TRAIN} --model cnn:kernel_sizes=0", "kernel_sizes"),
    bad(f"{TRAIN} --model transformer:heads=3", "not a multiple of heads=3"),
    bad(f"{TRAIN} --model minilm:hidden=3", "unknown parameter(s) hidden"),
    bad(f"{TRAIN} --model minilm:precision=fp64", "precision takes one of"),
    bad(f"{TRAIN} --model minilm:max_length=-1", "max_length"),
    bad(f"{TRAIN} --model bow --param hidden=-1", "hidden=-1 is out of range"),
    bad(f"{TRAIN} --model bow --param noequals", "expected KEY=VALUE"),
    bad(f"{TRAIN} --model bow --param nosuch=2", "unknown parameter(s) nosuch"),
    bad(f"{TRAIN} --model bow --steps 0", "--steps must be >= 1"),
    bad(f"{TRAIN} --model bow --steps 100000000000000000000", "steps=100000000000000000000"),
    bad(f"{TRAIN} --model bow --max-examples 0", "--max-examples must be >= 1"),
    bad(f"{TRAIN} --model bow --test-size 1.5", "--test-size must be between 0 and 1"),
    bad(f"{TRAIN} --model bow --test-size 0", "--test-size must be between 0 and 1"),
    bad(f"{TRAIN} --model bow --seed -1", "out of range"),
    bad(f"{TRAIN} --model bow --model cnn", "takes one model"),
    bad(f"{TRAIN} --model nosuchfamily", "unknown model"),
    bad(f"{TRAIN} --model ./no/such/dir", "no such model directory"),
    bad(f"{TRAIN} --model {{W}}/model", "already a trained model"),
    bad(f"{TRAIN} --model {{W}}/notrun", "a directory without robustlab_model.json"),
    bad(f"{TRAIN} --model bow$(x)", "unknown model"),
    bad("train --model bow --dataset {W}/missing.txt --out {T}/m", "no such file"),
    bad("train --model bow --dataset nosuchset --out {T}/m", "unknown dataset name"),
    bad("train --model bow --dataset {W}/biglab.txt --format label-text --out {T}/m",
        "more than 1,000,000 classes"),
    bad("train --model bow --dataset {W}/floatlab.tsv --out {T}/m", "'1.5'"),
    bad("train --model bow --dataset {W}/onelabel.txt --format label-text --out {T}/m",
        "only 1 class"),
    bad("train --model bow --dataset {W}/neglab.txt --format label-text --out {T}/m",
        "0..C-1"),
    bad("train --model bow --dataset {W}/empty.txt --format label-text --out {T}/m", "empty"),
    bad("train --model bow --dataset {W}/latin1.txt --format label-text --out {T}/m",
        "--encoding cp1252"),
    bad("train --model bow --dataset {W}/good.tsv --text-column nope --out {T}/m", "nope"),
    bad("train --model bow --dataset {W}/good.tsv --label-column nope --out {T}/m", "nope"),
    bad("train --model bow --dataset {W}/good.txt --format label-text --encoding nosuch-enc "
        "--out {T}/m", "nosuch-enc"),
    bad("train --model bow --dataset demo --text-column x --out {T}/m", "file options"),
    bad("train --model bow --dataset {W}/good.txt --format label-text --out {T}/keep.txt",
        "is not a directory"),
    bad("train --model bow --dataset {W}/good.txt --format label-text --out {T}/keep.txt/m",
        "is a file, not a directory"),
    bad("train --model bow --dataset {W}/good.txt --format label-text --out {T}/full",
        "already exists"),
    bad("train --model bow --dataset {W}/good.txt --format label-text --device cuda "
        "--out {T}/m", "cuda"),
    bad("train --model bow --dataset {W}/good.txt --format xml --out {T}/m", "xml"),
    bad("train --dataset {W}/good.txt --out {T}/m", "required"),
    # ---- learnability / cent / robustness / demo ----
    bad(f"{LEARN} --p-grid 0,2", "--p-grid"),
    bad(f"{LEARN} --p-grid 0.5,0.1", "increasing"),
    bad(f"{LEARN} --p-grid x", "expected comma-separated numbers"),
    bad(f"{LEARN} --p-grid 0.1,0.1000001", "same probability to the 6 significant digits"),
    bad(f"{LEARN} --seeds -1", "seeds: -1 is out of range"),
    bad(f"{LEARN} --seeds 0,123456789012345678901", "2**32"),
    bad(f"{LEARN} --seeds 1,1", "duplicate seeds"),
    bad(f"{LEARN} --seeds x", "expected comma-separated integers"),
    bad(f"{LEARN} --steps 0", "--steps must be >= 1"),
    bad(f"{LEARN} --steps 100000000000000000000", "is out of range"),
    bad(f"{LEARN} --max-train 1", "--max-train must be >= 2"),
    bad(f"{LEARN} --max-test 0", "--max-test must be >= 2"),
    bad(f"{LEARN} --experiments nosuch", "--experiments: unknown nosuch"),
    bad(f"{LEARN} --estimate-p 0", "--estimate-p"),
    bad(f"{LEARN} --estimate-p 2", "--estimate-p"),
    bad(f"{LEARN} --estimate quick --p-grid 0.1,1", "does not go with --estimate quick"),
    bad(f"{LEARN} --estimate slow", "invalid choice"),
    bad(f"{LEARN} --perturbations nosuch", "nosuch"),
    bad(f"{LEARN} --perturbations leet_leters", "leet_letters"),
    bad(f"{LEARN} --perturbations leet_letters,leet_letters", "duplicates"),
    bad(f"{LEARN} --model bow,bow", "duplicate models"),
    bad(f"{LEARN} --model bow:hidden=-3", "hidden=-3 is out of range"),
    bad(f"{LEARN} --model bow:steps=1e20", "steps=1e+20 is out of range"),
    bad(f"{LEARN} --perturbations nlaugmenter:subprocess.Popen:shell=true",
        "is not an NL-Augmenter SentenceOperation subclass"),
    bad(f"{LEARN} --model subprocess:Popen", "is not a robustlab TextClassifier subclass"),
    bad(f"{ROBUST} --model json.decoder:JSONDecoder", "is not a robustlab TextClassifier"),
    bad(f"{ROBUST} --model no_such_pkg.mod:Model", "cannot import no_such_pkg.mod"),
    bad(f"{LEARN} --model bow$(x)", "robustlab list models"),
    bad(f"{LEARN} --workers 0", "--workers must be >= 1"),
    bad(f"{LEARN} --threads 0", "--threads must be >= 1"),
    bad(f"{LEARN} --gpus-per-task -1", "--gpus-per-task"),
    bad(f"{LEARN} --cpus-per-task 0", "--cpus-per-task"),
    bad(f"{LEARN} --executor nosuch", "invalid choice"),
    bad(f"{LEARN} --device cuda", "cuda"),
    bad(f"{LEARN} --min-accuracy 2", "min-accuracy"),
    bad(f"{LEARN} --max-drop nan", "max-drop"),
    bad(f"{LEARN} --test-dataset {{W}}/missing.txt", "missing.txt"),
    bad(f"{LEARN} --text-column 7", "7"),
    bad("learnability --model bow --dataset demo --test-dataset {W}/good.txt --out {T}/r",
        "--test-dataset needs --dataset FILE"),
    bad("learnability --model bow --dataset demo --label-column x --out {T}/r",
        "file options, but --dataset demo is a dataset name"),
    bad("learnability --model bow cnn --dataset nosuchset --out {T}/r",
        "no such file, and unknown dataset name"),
    bad("learnability --model bow --data {T}/missing.tsv --out {T}/r", "missing.tsv: no such file"),
    bad(f"{LEARN.replace('{T}/r', '{T}/keep.txt')}", "exists and is not a directory"),
    bad(f"{LEARN.replace('{T}/r', '{T}/keep.txt/r')}", "is a file, not a directory"),
    bad("learnability --model bow --dataset {W}/biglab.txt --format label-text --out {T}/r",
        "more than 1,000,000 classes"),
    bad("learnability --model bow --dataset {W}/latin1.txt --format label-text --out {T}/r",
        "--encoding cp1252"),
    bad(f"{CENT} --p-grid 1.5", "--p-grid"),
    bad(f"{CENT} --seeds -2", "out of range"),
    bad(f"{CENT} --model bow:lr=nan", "lr=nan is out of range"),
    bad(f"{ROBUST} --perturbations nosuch", "nosuch"),
    bad(f"{ROBUST} --seeds 3,3", "duplicate seeds"),
    bad(f"{ROBUST} --workers 0", "--workers must be >= 1"),
    bad(f"{ROBUST} --model cnn:kernel_sizes=-1", "kernel_sizes"),
    bad("robustness --model bow --dataset demo --text-column x --out {T}/r",
        "--text-column: file options, but --dataset demo is a dataset name"),
    bad("robustness --model bow$(x) --dataset demo --out {T}/r", "robustlab list models"),
    bad(f"{DEMO} --steps 0", "--steps must be >= 1"),
    bad(f"{DEMO} --model nosuch", "unknown model"),
    bad(f"{DEMO} --perturbations nosuch", "nosuch"),
    bad(f"{DEMO} --seeds -1", "out of range"),
    bad(f"{DEMO.replace('{T}/r', '{T}/keep.txt')}", "exists and is not a directory"),
    # ---- correlate ----
    bad("correlate {W}/missing", "not a run directory"),
    bad("correlate {W}/notrun", "not a run directory"),
    bad("correlate {W}/attack", "not a learnability study"),
    bad("correlate {W}/corrupt", "not a readable robustlab store"),
    bad("correlate {W}/run --measure nosuch", "invalid choice"),
    bad("correlate {W}/run --estimate-p x", "invalid float"),
    bad("correlate", "required"),
    # ---- report ----
    bad("report {W}/missing --out {T}/r.html", "no such run directory"),
    bad("report {W}/notrun --out {T}/r.html", "not a run directory"),
    bad("report {W}/corrupt --out {T}/r.html", "not a readable robustlab store"),
    bad("report {W}/emptystore --out {T}/r.html", "no run row"),
    bad("report {W}/run --format pdf --out {T}/r.pdf", "invalid choice"),
    bad("report {W}/run --out {T}", "is a directory"),
    bad("report", "required"),
    # ---- failures ----
    bad("failures {W}/notrun", "not a robustlab run directory"),
    bad("failures {W}/missing", "not a robustlab run directory"),
    bad("failures {W}/run --limit -1", "--limit -1: must be 0 or more"),
    bad("failures {W}/run --seed x", "invalid int"),
    bad("failures {W}/run --perturbation nope", "no stored predictions match the filters"),
    bad("failures {W}/run --model nope", "no stored predictions match the filters"),
    bad("failures {W}/run --seed 7", "no stored predictions match the filters"),
    bad("failures {W}/attack", "no stored predictions"),
    bad("failures {W}/corrupt", "not a readable robustlab store"),
    bad("failures {W}/run --csv {T}/f.xlsx", "xlsx"),
    bad("failures {W}/run --csv {T}/keep.txt/f.csv", "keep.txt"),
    bad("failures", "required"),
    # ---- judge ----
    bad("judge", "required"),
    bad("judge {T}/none", "not a robustlab run directory"),
    bad("judge {W}/attack", "works on eval runs"),
    bad("judge {W}/corrupt", "not a readable robustlab store"),
    bad("judge {W}/attack --per 0", "--per 0: must be at least 1"),
    bad("judge {W}/attack --import {T}/none.csv --export {T}/x.csv", "not allowed with"),
    # ---- check ----
    bad("check {W}/plans/missing.toml", "no such file"),
    bad("check {W}/plans/notoml.toml", "not valid TOML"),
    bad("check {W}/plans/unknown_key.toml", "unknown key(s) colour"),
    bad("check {W}/plans/steps_huge.toml", "steps must be an integer from 1 to"),
    bad("check {W}/plans/steps_float.toml", "steps must be an integer from 1 to"),
    bad("check {W}/plans/steps_zero.toml", "steps must be an integer from 1 to"),
    bad("check {W}/plans/bad_model.toml", "hidden=-3 is out of range"),
    bad("check {W}/plans/user_class.toml", "accepted only when typed on the command line"),
    bad("check {W}/plans/bad_seeds.toml", "out of range"),
    bad("check {W}/plans/seeds_text.toml", "seeds must be a list of integers"),
    bad("check {W}/plans/max_train.toml", "max_train must be an integer >= 2"),
    bad("check {W}/plans/format_type.toml", "format must be a string"),
    bad("check {W}/plans/no_tests.toml", "no [[test]] tables"),
    bad("check {W}/plans/threshold.toml", "max_drop = 2 is outside"),
    bad("check {W}/plans/threshold_text.toml", "min_accuracy must be a number"),
    bad("check {W}/plans/no_threshold.toml", "no threshold"),
    bad("check {W}/plans/bad_pert.toml", "perturbation 'nosuch'"),
    bad("check {W}/plans/both_data.toml", "not both"),
    bad("check {W}/plans/test_only.toml", "test_data needs data"),
    bad("check {W}/plans/missing_data.toml", "no such file"),
    bad("check {W}/plans/dup_models.toml", "duplicate models"),
    bad("check {W}/plans/pert_class.toml", "accepted only when typed on the command line"),
    bad("check {W}/plans/pert_plain_class.toml", "accepted only when typed on the command line"),
    # ---- resume: a run directory is data ----
    bad("resume {W}/missing", "not a robustlab run directory"),
    bad("resume {W}/notrun", "not a robustlab run directory"),
    bad("resume {W}/good.txt", "not a robustlab run directory"),
    bad("resume {W}/evil_pert", "accepted only when typed on the command line"),
    bad("resume {W}/evil_model", "accepted only when typed on the command line"),
    bad("resume {W}/evil_textattack", "accepted only when typed on the command line"),
    bad("resume {W}/evil_unknown_key", "unknown key"),
    bad("check", "required"),
    # ---- attack ----
    bad(f"{ATTACK} --recipe nosuch", "unknown recipe"),
    bad(f"{ATTACK} -n 0", "--num-examples must be >= 1"),
    bad(f"{ATTACK} --query-budget 0", "--query-budget must be >= 1"),
    bad(f"{ATTACK} --kappa 0", "--kappa must be >= 1"),
    bad(f"{ATTACK} --beam-width 0", "--beam-width must be >= 1"),
    bad(f"{ATTACK} --max-distance 0", "--max-distance must be >= 1"),
    bad(f"{ATTACK} --recipe so-enum -k 3", "so-enum must be <= 2"),
    bad(f"{ATTACK} --delta -1", "--delta must be >= 0"),
    bad(f"{ATTACK} --delta nan", "--delta must be >= 0"),
    bad(f"{ATTACK} --model-batch-size 0", "--model-batch-size must be >= 1"),
    bad(f"{ATTACK} --mlm /nonexistent", "/nonexistent: no such directory"),
    bad(f"{ATTACK} --mlm {{W}}/notrun", "not a checkpoint directory"),
    bad(f"{ATTACK} --mlm not/a/valid/id", "not a valid Hugging Face id"),
    bad(f"{ATTACK} --source foo", "expected wordnet, table:FILE or mlm:"),
    bad(f"{ATTACK} --source mlm:/nonexistent", "no such directory"),
    bad(f"{ATTACK} --ppl-model /nonexistent", "--ppl-model /nonexistent: no such directory"),
    bad(f"{ATTACK} --ppl-model gpt2", "not in the local Hugging Face cache"),
    bad(f"{ATTACK} --patch-table {{W}}/missing.json", "missing.json: no such file"),
    bad(f"{ATTACK} --patch-table {{W}}/list.json", "must be a JSON object"),
    bad(f"{ATTACK} --seed -1", "out of range"),
    bad(f"{ATTACK} --workers 0", "--workers must be >= 1"),
    bad(f"{ATTACK} --executor nosuch", "invalid choice"),
    bad(f"{ATTACK} --model {{W}}/model --model bow", "takes one model"),
    bad(f"{ATTACK_NO_MODEL} --model bow-$(x)", "not a valid Hugging Face id"),
    bad(f"{ATTACK_NO_MODEL} --model bow", "untrained bow model"),
    bad(f"{ATTACK_NO_MODEL} --model bow:hidden=0", "hidden=0 is out of range"),
    bad(f"{ATTACK_NO_MODEL} --model subprocess:Popen", "is not a robustlab TextClassifier"),
    bad("attack --recipe so-beam --model {W}/model --dataset nosuchset --out {T}/r",
        "unknown dataset name"),
    bad("attack --recipe so-beam --model {W}/model --dataset {W}/empty.txt "
        "--dataset-format label-text --out {T}/r", "empty"),
    bad(f"{ATTACK.replace('{T}/r', '{T}/keep.txt')}", "exists and is not a directory"),
    bad("attack --model {W}/model --dataset demo --out {T}/r", "required"),
    # ---- eval ----
    bad(f"{EVAL_NO_MODEL} --model bow", "untrained bow model"),
    bad(f"{EVAL_NO_MODEL} --model ./nothere", "no such model directory"),
    bad(f"{EVAL_NO_MODEL} --model models/nothere", "no such model directory"),
    bad(f"{EVAL_NO_MODEL} --model ~/nothere", "no such model directory"),
    bad(EVAL_NO_MODEL, "the following arguments are required: --model"),
    bad(f"{EVAL} --perturbations nosuch", "unknown perturbation 'nosuch'"),
    bad(f"{EVAL} -n 0", "-n/--samples must be >= 1"),
    bad(f"{EVAL} --batch-size 0", "--batch-size must be >= 1"),
    bad(f"{EVAL} --num-examples 0", "--num-examples must be >= 1"),
    bad(f"{EVAL} --seeds -1", "out of range"),
    bad(f"{EVAL} --seeds x", "--seeds"),
    bad(f"{EVAL} --text-column nope", "no column 'nope'"),
    # ---- bias ----
    bad(f"{BIAS} --k 99", "distances above 6 are not computable"),
    bad(f"{BIAS} --k -1", "distances must be distinct integers >= 0"),
    bad(f"{BIAS} --k x", "--k 'x'"),
    bad(f"{BIAS} --k ,", "distances must be distinct integers >= 0"),
    bad(f"{BIAS} -n 0", "--num-examples must be >= 1"),
    bad(f"{BIAS} --kappa 0", "--kappa must be >= 1"),
    bad(f"{BIAS} --budget 0", "--budget must be >= 1"),
    bad(f"{BIAS} --parents 0", "--parents must be >= 1"),
    bad(f"{BIAS} --delta inf", "--delta must be >= 0"),
    bad(f"{BIAS} --mlm /nonexistent", "/nonexistent: no such directory"),
    bad(f"{BIAS} --source foo", "expected wordnet, table:FILE or mlm:"),
    bad(f"{BIAS} --source mlm:nosuch-model-xyz", "not in the local Hugging Face cache"),
    bad(f"{BIAS} --pairs {{W}}/missing.txt", "missing.txt"),
    bad(f"{BIAS} --pairs {{W}}/pairs_bad.txt", "pairs_bad.txt"),
    bad(f"{BIAS} --start nosuch", "invalid choice"),
    bad(f"{BIAS_NO_MODEL} --model bow", "untrained bow model"),
    bad(f"{BIAS} --seed 4294967296", "out of range"),
    bad("bias --model {W}/model --dataset {W}/missing.tsv --out {T}/r", "no such file"),
    bad(f"{BIAS.replace('{T}/r', '{T}/keep.txt/r')}", "is a file, not a directory"),
    # ---- cross-domain mt / clf / scores ----
    bad("cross-domain mt --systems {W}/mt/missing.txt {W}/mt/b.txt --refs {W}/mt/ref.txt "
        "--domains {W}/mt/domains.txt --out {T}/r", "missing.txt"),
    bad("cross-domain mt --systems {W}/mt/a.txt {W}/mt/b.txt --refs {W}/mt/missing.txt "
        "--domains {W}/mt/domains.txt --out {T}/r", "missing.txt"),
    bad("cross-domain mt --systems {W}/mt/a.txt {W}/mt/short.txt --refs {W}/mt/ref.txt "
        "--domains {W}/mt/domains.txt --out {T}/r", "short.txt"),
    bad("cross-domain mt --systems {W}/mt/a.txt {W}/mt/b.txt --refs {W}/mt/ref.txt "
        "--domains {W}/mt/short.txt --out {T}/r", "short.txt"),
    bad(f"{MT} --score nosuch", "invalid choice"),
    bad(f"{MT} --bags 0", "--bags"),
    bad(f"{MT} --bag-fraction 0", "--bag-fraction"),
    bad(f"{MT} --bag-fraction 1.5", "--bag-fraction"),
    bad(f"{MT} --bag-fraction nan", "--bag-fraction"),
    bad(f"{MT} --eps -1", "--eps"),
    bad(f"{MT} --eps nan", "--eps"),
    bad(f"{MT} --eps-max 0", "--eps-max"),
    bad(f"{MT} --seed -1", "out of range"),
    bad("cross-domain mt --wmt22-dir {W}/missing --pair en-de --out {T}/r", "missing"),
    bad("cross-domain mt --systems {W}/mt/a.txt {W}/mt/b.txt --out {T}/r", "--refs"),
    bad("cross-domain clf --model bow$(x) --out {T}/r", "robustlab list models"),
    bad("cross-domain clf --model bow,bow --out {T}/r", "duplicate models"),
    bad(f"{CLF} --steps 0", "--steps must be >= 1"),
    bad(f"{CLF} --steps 100000000000000000000", "steps"),
    bad(f"{CLF} --model bow:hidden=nan", "hidden=nan is out of range"),
    bad(f"{CLF} --bags 0", "--bags"),
    bad(f"{CLF} --max-train 0", "--max-train"),
    bad(f"{CLF} --workers 0", "--workers"),
    bad(f"{CLF} --domains alpha", "domains"),
    bad(f"{CLF} --domains alpha beta nosuch", "nosuch"),
    bad("cross-domain clf --model bow --data-dir {W}/missing --domains a b c --out {T}/r",
        "missing"),
    bad(f"{CLF} --train-domains nosuch", "nosuch"),
    bad(f"{CLF} --model subprocess:Popen", "is not a robustlab TextClassifier subclass"),
    bad(f"{SCORES.replace('scores.csv', 'missing.csv')}", "missing.csv"),
    bad(f"{SCORES} --score-column nope", "nope"),
    bad(f"{SCORES} --system-column nope", "nope"),
    bad(f"{SCORES} --bags 0", "--bags"),
    bad(f"{SCORES} --bag-fraction 2", "--bag-fraction"),
    bad(f"{SCORES} --eps-max 0", "--eps-max"),
    bad(f"{SCORES} --human {{W}}/missing.tsv", "missing.tsv"),
    bad("cross-domain scores {W}/notascore.csv --no-plots", "notascore.csv"),
    bad("cross-domain nosuch", "invalid choice"),
    # ---- list, resources, recipe-path, textattack, tui ----
    bad("list nosuch", "invalid choice"),
    bad("list", "required"),
    bad("resources nosuch", "invalid choice"),
    bad("resources check nosuchresource", "nosuchresource"),
    bad("recipe-path nosuch", "invalid choice"),
    bad("recipe-path", "required"),
    bad("textattack attack --recipe nosuch --model {W}/model --dataset demo", "nosuch"),
    bad("textattack nosuchcommand", "invalid choice"),
    bad("tui --poll 0", "--poll must be positive"),
    bad("tui --poll -1", "--poll must be positive"),
    bad("tui --poll nan", "--poll must be positive"),
    bad("tui --poll inf", "--poll must be positive"),
    bad("tui --poll x", "invalid float"),
    bad("tui --runs-root {T}/keep.txt", "keep.txt"),
    bad("tui {W}/good.txt", "not a directory"),
]

RAY = ("robustness --model bow --dataset {W}/good.txt --format label-text --perturbations "
       "leet_letters --steps 3 --quiet --no-plots --executor ray --out {T}/r")
PROCESS_CASES: list[Bad] = [
    bad(f"{RAY} --ray-address 127.0.0.1:{{REFUSED}}", "cannot reach the Ray cluster",
        process=True),
    bad(f"{RAY} --ray-address nosuchhost.invalid:6379", "does not resolve", process=True),
    bad(f"{RAY} --ray-address 127.0.0.1:{{SILENT}}", "did not answer within 3 s",
        process=True, env=(("ROBUSTLAB_RAY_CONNECT_TIMEOUT", "3"),)),
    bad(f"{RAY} --ray-address 127.0.0.1:{{SILENT}}", "ROBUSTLAB_RAY_CONNECT_TIMEOUT",
        process=True, env=(("ROBUSTLAB_RAY_CONNECT_TIMEOUT", "soon"),)),
]


# ---- the shared fixture folder ----------------------------------------------------------------------


def _label_text(path: Path, rows: list[tuple[object, str]]) -> None:
    path.write_text("".join(f"{y} {t}\n" for y, t in rows), encoding="utf-8")


def _plans(d: Path, good: Path) -> None:
    d.mkdir()
    test = '\n[[test]]\nperturbation = "leet_letters"\nmax_drop = 0.5\n'
    plans = {
        "notoml": "steps = = 3\n",
        "unknown_key": f"colour = 'red'\n{test}",
        "steps_huge": f"steps = 100000000000000000000\n{test}",
        "steps_float": f"steps = 1e20\n{test}",
        "steps_zero": f"steps = 0\n{test}",
        "bad_model": f"models = ['bow:hidden=-3']\n{test}",
        "user_class": f"models = ['subprocess:Popen']\n{test}",
        "bad_seeds": f"seeds = [-1]\n{test}",
        "seeds_text": f"seeds = ['a']\n{test}",
        "max_train": f"max_train = 'x'\n{test}",
        "format_type": f"data = '{good}'\nformat = 5\n{test}",
        "no_tests": "steps = 3\n",
        "threshold": "[[test]]\nperturbation = 'leet_letters'\nmax_drop = 2\n",
        "threshold_text": "[[test]]\nperturbation = 'leet_letters'\nmin_accuracy = 'high'\n",
        "no_threshold": "[[test]]\nperturbation = 'leet_letters'\n",
        "bad_pert": "[[test]]\nperturbation = 'nosuch'\nmax_drop = 0.1\n",
        "both_data": f"data = '{good}'\ndataset = 'demo'\n{test}",
        "test_only": f"test_data = '{good}'\n{test}",
        "missing_data": f"data = 'missing.txt'\nformat = 'label-text'\nsteps = 3\n{test}",
        "dup_models": f"models = ['bow', 'bow']\nsteps = 3\n{test}",
        "pert_class": "[[test]]\nperturbation = 'nlaugmenter:subprocess.Popen:args=touch "
                      f"{d}/pwned,shell=true'\nmax_drop = 0.1\n",
        "pert_plain_class": "[[test]]\nperturbation = 'json.decoder:JSONDecoder'\n"
                            "max_drop = 0.1\n",
    }
    for name, text in plans.items():
        (d / f"{name}.toml").write_text(text, encoding="utf-8")


def _mt(d: Path) -> None:
    d.mkdir()
    refs = [f"the {w} is on the table" for w in ("cat", "dog", "cup", "pen", "book", "key")]
    (d / "ref.txt").write_text("\n".join(refs) + "\n")
    (d / "a.txt").write_text("\n".join(r.replace("the", "a") for r in refs) + "\n")
    (d / "b.txt").write_text("\n".join(refs) + "\n")
    (d / "c.txt").write_text("\n".join(r.replace("table", "desk") for r in refs) + "\n")
    (d / "short.txt").write_text("\n".join(refs[:3]) + "\n")
    (d / "domains.txt").write_text("news\nnews\nchat\nchat\nweb\nweb\n")


def _domains(root: Path) -> None:
    root.mkdir()
    good = ["a fine and great product", "wonderful and loved it", "excellent value and great"]
    badw = ["awful and broken", "terrible and hated it", "poor value and bad"]
    for d in ("alpha", "beta", "gamma"):
        rows = ["reviews,labels"] + [f"{t} {d},1" for t in good * 4] + [
            f"{t} {d},0" for t in badw * 4]
        (root / f"{d}.csv").write_text("\n".join(rows) + "\n")


def _crafted_runs(w: Path) -> None:
    """Run directories whose stored configuration names code (as an attacker's could)."""
    from robustlab.runs.store import RunStore
    from robustlab.runs.study import CONFIG_FORMAT, CONFIG_FORMAT_KEY
    from robustlab.studies.learnability.config import LearnabilityStudy

    good = LearnabilityStudy(models=("bow",), perturbations=("leet_letters",), p_grid=(),
                             seeds=(0,), steps=2, kind="robustness",
                             experiments=("standard", "robustness")).to_dict()
    for name, change in (
            ("evil_pert", {"perturbations": [
                f"nlaugmenter:subprocess.Popen:args=touch {w}/pwned,shell=true"]}),
            ("evil_model", {"models": ["subprocess:Popen"]}),
            ("evil_textattack", {"perturbations": ["textattack:subprocess.Popen"]}),
            ("evil_unknown_key", {"run": "touch pwned"})):
        store = RunStore(w / name)
        store.init_run("robustness", "crafted", {**good, **change},
                       command=f"robustlab robustness --out {name}")
        store.set_meta(CONFIG_FORMAT_KEY, CONFIG_FORMAT)
        store.set_run_status("interrupted", "interrupted by the user (Ctrl-C); rerun to resume")
        store.close()


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The files bad inputs point at, built once; each case checks it is left unchanged."""
    w = tmp_path_factory.mktemp("world")
    rows = sentences(40, 3)
    _label_text(w / "good.txt", rows)
    (w / "good.tsv").write_text("text\tlabel\n" + "".join(f"{t}\t{y}\n" for y, t in rows))
    (w / "empty.txt").write_text("")
    (w / "latin1.txt").write_bytes("1 caf\u00e9 is good\n0 bad\n".encode("cp1252"))
    _label_text(w / "biglab.txt", [(10**30, "fine"), *rows[:6]])
    (w / "floatlab.tsv").write_text("text\tlabel\n" + "".join(
        f"{t}\t{y}\n" for y, t in rows[:6]) + "fine\t1.5\n")
    _label_text(w / "onelabel.txt", [(0, t) for _, t in rows[:8]])
    _label_text(w / "neglab.txt", [(-1, t) for _, t in rows[:4]] + [(0, t) for _, t in rows[4:8]])
    (w / "notrun").mkdir()
    (w / "pairs_bad.txt").write_text("he\n")
    (w / "list.json").write_text("[1, 2]")
    (w / "scores.csv").write_text("system,domain,score\n" + "".join(
        f"s{i},{d},{0.5 + 0.1 * i + (0.05 if d == 'b' else 0)}\n"
        for i in range(3) for d in ("a", "b", "c")))
    (w / "notascore.csv").write_text("a,b\n1,2\n")
    _plans(w / "plans", w / "good.txt")
    _mt(w / "mt")
    _domains(w / "domains")
    tui_fixtures.attack(w / "attack")
    tui_fixtures.corrupt(w / "corrupt")
    from robustlab.runs.store import RunStore

    RunStore(w / "emptystore").conn.close()  # a store with a schema and no run row
    _crafted_runs(w)
    assert main(["train", "--model", "bow", "--dataset", str(w / "good.txt"), "--format",
                 "label-text", "--steps", "5", "--out", str(w / "model")]) == 0
    assert main(["robustness", "--model", "bow", "--dataset", str(w / "good.txt"), "--format",
                 "label-text", "--perturbations", "leet_letters", "--steps", "5", "--quiet",
                 "--no-plots", "--out", str(w / "run")]) == 0
    return w


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under ``root`` with its size and content (small files: these fixtures).
    SQLite's shared-memory index (``-shm``) and an empty write-ahead log (``-wal``), which a
    reader of a WAL store creates beside it, are left out: they hold no data."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.name.endswith("-shm") or (p.name.endswith("-wal") and p.stat().st_size == 0):
            continue
        if p.is_file() or p.is_symlink():
            out[str(p.relative_to(root))] = (p.stat().st_size, p.read_bytes())
        elif p.is_dir():
            out[str(p.relative_to(root)) + "/"] = (0, b"")
    return out


def case_dir(tmp_path: Path) -> Path:
    """A case's folder: empty but for a file (keep.txt) and a finished model (full/) that
    cases aim outputs at, so "an existing file unchanged" is checked too."""
    (tmp_path / "keep.txt").write_text("keep me\n")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "weights").write_text("earlier output\n")
    return tmp_path


def assert_one_error(err: str, message: str, code: int, rc: int) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == code, f"exit {rc}, expected {code}:\n{err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    errors = [ln for ln in lines if ": error: " in ln]
    assert len(errors) == 1 and lines[-1] == errors[0], f"not exactly one error line:\n{err}"
    assert message in errors[0], f"{message!r} not in {errors[0]!r}"
    usage = False
    for ln in lines[:-1]:  # before it: argparse's usage block, status and warning lines
        usage = ln.startswith("usage:") or (usage and ln.startswith(" "))
        assert usage or ln.startswith(("robustlab", "warning")) or _library_log(ln), \
            f"unexpected line before the error: {ln!r}"


def _library_log(line: str) -> bool:
    """Ray's own log lines (``2026-… INFO worker.py…``, ``[2026-… W …]``) in the process cases."""
    return bool(re.match(r"^\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d", line))


@pytest.mark.parametrize("case", CASES, ids=lambda c: " ".join(c.argv)[:90])
def test_bad_input(case: Bad, world: Path, tmp_path: Path, monkeypatch, capfd) -> None:
    tmp = case_dir(tmp_path)
    monkeypatch.chdir(tmp)
    before, world_before = snapshot(tmp), snapshot(world)
    capfd.readouterr()
    try:
        rc = main(case.args(world, tmp))
    except SystemExit as exc:  # argparse
        rc = exc.code
    err = capfd.readouterr().err
    assert_one_error(err, case.message, case.code, rc)
    assert snapshot(tmp) == before, "the case's folder changed"
    assert snapshot(world) == world_before, "the shared fixture folder changed"


def _ports() -> dict[str, str]:
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)  # accepts connections, never answers: not a Ray head
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    refused = free.getsockname()[1]
    free.close()
    _ports.keep = silent  # type: ignore[attr-defined]  # open until the module ends
    return {"{SILENT}": str(silent.getsockname()[1]), "{REFUSED}": str(refused)}


@pytest.mark.parametrize("case", PROCESS_CASES, ids=lambda c: " ".join(c.argv)[-60:])
def test_bad_input_in_a_process(case: Bad, world: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray")
    tmp = case_dir(tmp_path)
    ports = _ports()
    argv = case.args(world, tmp)
    for key, value in ports.items():
        argv = [a.replace(key, value) for a in argv]
    before, world_before = snapshot(tmp), snapshot(world)
    env = {**os.environ, "PYTHONPATH": str(HERE.parent), "HF_HUB_OFFLINE": "1",
           **dict(case.env)}
    proc = subprocess.run([sys.executable, "-m", "robustlab", *argv], env=env, cwd=tmp,
                          capture_output=True, text=True, timeout=240)
    assert_one_error(proc.stderr, case.message, case.code, proc.returncode)
    assert snapshot(tmp) == before and snapshot(world) == world_before


def test_the_table_covers_every_command() -> None:
    from robustlab.cli import build_parser

    parser = build_parser()
    commands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    tried = {c.argv[0] for c in CASES + PROCESS_CASES}
    assert commands - {"cent"} <= tried | {"cent"} and "cent" in tried
    subs = {" ".join(c.argv[:2]) for c in CASES if c.argv[0] == "cross-domain"}
    assert {"cross-domain mt", "cross-domain clf", "cross-domain scores"} <= subs
    assert len(CASES) + len(PROCESS_CASES) >= 200, len(CASES) + len(PROCESS_CASES)


def test_every_numeric_model_parameter_out_of_range_is_one_input_error() -> None:
    """Every numeric parameter of every family (and of Hugging Face checkpoints): zero or
    negative where it must be positive, NaN, inf and absurdly large values are refused by
    ``check_model_spec`` before anything runs, naming the parameter; the same values passed to
    a family's constructor are refused the same way (an InputError, not a torch error)."""
    from robustlab.errors import InputError
    from robustlab.models.params import HF_RULES, TORCH_DEFAULTS, TORCH_RULES, torch_defaults
    from robustlab.models.registry import check_model_spec

    tried = 0
    for family in (*TORCH_DEFAULTS, "minilm"):
        rules = HF_RULES if family == "minilm" else TORCH_RULES
        accepted = HF_RULES if family == "minilm" else torch_defaults(family)
        for key in accepted:
            rule = rules.get(key)
            if rule is None or rule.kind not in (int, float) or rule.choices:
                continue  # kernel_sizes, texts, choices: cases of the table
            for value in OUT_OF_RANGE:
                spec = f"{family}:{key}={value}"
                if key in VALID_OUT_OF_RANGE.get(value, ()):
                    assert check_model_spec(spec) == spec
                    continue
                with pytest.raises(InputError, match=rf"{key}=\S+ is out of range"):
                    check_model_spec(spec)
                tried += 1
    assert tried >= 200, tried


#: of the values OUT_OF_RANGE tries, the parameters that take one as valid (written out here,
#: not derived from the rules under test): 0 is a dropout, weight decay, warmup ratio or seed,
#: and num_threads=0 leaves torch's setting; every other (parameter, value) is refused
VALID_OUT_OF_RANGE = {"0": {"dropout", "weight_decay", "warmup_ratio", "seed", "num_threads"}}


def test_hf_rules_name_the_constructor_parameters() -> None:
    """models/params.py's table of HFClassifier parameters is the constructor's signature."""
    import inspect

    from robustlab.models.hf import HFClassifier
    from robustlab.models.params import HF_RULES

    assert set(HF_RULES) == set(inspect.signature(HFClassifier.__init__).parameters) - {"self"}


def test_constructors_refuse_what_the_check_refuses() -> None:
    from robustlab.errors import InputError
    from robustlab.models.registry import make_model

    for spec in ("bow:hidden=-3", "textrnn:layers=0", "cnn:dropout=1", "transformer:heads=5",
                 "lstm:lr=inf"):
        with pytest.raises(InputError, match="--model"):
            make_model(spec)
    model = make_model("bow:hidden=1e2,steps=3.0")  # integral floats become integers
    assert (model.hidden, model.steps) == (100, 3)

