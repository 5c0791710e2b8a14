"""Issue 35's three named bugs, each applied to a scratch copy of the code: the fast test named
beside it must fail (and passes on the code as it is).

* ``m1_truncate40``: eval's predictor truncates every text to 40 characters before the model;
* ``m2_pipeline_swap``: ``pipeline_proba`` puts each label's score in the other class's column;
* ``m3_executor_batch2``: the executor stores finished cells in batches of 2.

    python bench/named_mutations.py [m1_truncate40 …]

Prints one line per mutation: the test, and whether it failed with the bug (it must).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent / "mutations"

#: mutation -> the fast tests that must fail with it
TESTS = {
    "m1_truncate40": ["tests/test_eval.py::test_clean_accuracy_and_each_prediction_equal_the_"
                      "models_own_forward_pass"],
    "m2_pipeline_swap": ["tests/test_eval_models.py::test_each_python_model_kind_predicts_each_"
                         "example_as_the_checkpoint_does",
                         "tests/test_eval_predict.py::test_pipeline_scores_land_in_the_models_"
                         "label_order"],
    "m3_executor_batch2": ["tests/test_reliability.py::test_a_study_killed_in_cell_k_kept_every_"
                           "cell_finished_before_it[1]"],
}


def check(name: str) -> bool:
    with tempfile.TemporaryDirectory(prefix=f"robustlab-{name}-") as d:
        work = Path(d)
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        for sub in ("robustlab", "tests"):
            shutil.copytree(ROOT / sub, work / sub, ignore=ignore)
        shutil.copy(ROOT / "pyproject.toml", work)
        subprocess.run(["git", "apply", str(HERE / f"{name}.diff")], cwd=work,
                       check=True)
        env = {**os.environ, "PYTHONPATH": str(work), "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              *TESTS[name]], cwd=work, env=env, capture_output=True, text=True)
        last = (run.stdout.strip().splitlines() or ["(no output)"])[-1]
        caught = run.returncode == 1
        print(f"{name}: {'CAUGHT' if caught else 'NOT CAUGHT'} by {', '.join(TESTS[name])}: "
              f"{last}", flush=True)
        return caught


def main(argv: list[str]) -> int:
    names = argv or list(TESTS)
    return 0 if all([check(n) for n in names]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
