"""A script that starts a study with ``--executor process`` from its top-level code, outside
``if __name__ == "__main__":``, fails at once with one line naming the guard (spawned workers
re-import the script: without the guard each would start the study again and the run would
hang); with the guard it runs, and ``robustlab resume`` continues with the same executor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).parents[1]

PRELUDE = f"""import sys
sys.path.insert(0, {str(FIXTURES)!r})
from robustlab import studies
studies.PACKAGES.append("toykind")
from robustlab.cli import main
"""


def _script(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    path = tmp_path / "study_script.py"
    path.write_text(PRELUDE + body, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get(
        "PYTHONPATH", "")])}
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          timeout=300, env=env, cwd=tmp_path)


def test_unguarded_script_fails_at_once_naming_the_guard(tmp_path):
    out = tmp_path / "run"
    call = (f'main(["toy", "--n", "4", "--out", {str(out)!r}, "--executor", "process", '
            '"--workers", "2", "--quiet"])')
    done = _script(tmp_path, f"sys.exit({call})\n")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and 'if __name__ == "__main__":' in lines[0], done.stderr
    assert "study_script.py" in lines[0] and "line 6" in lines[0]
    assert not out.exists()  # refused before anything was written

    # a call inside a function the script calls at top level is just as unguarded
    done = _script(tmp_path, f"def go():\n    return {call}\n\n\nsys.exit(go())\n")
    assert done.returncode == 2 and "line 10" in done.stderr, done.stderr


def test_guarded_script_runs_and_resume_keeps_the_executor(tmp_path):
    out = tmp_path / "run"
    done = _script(tmp_path, 'if __name__ == "__main__":\n    sys.exit(main(["toy", "--n", '
                   f'"4", "--out", {str(out)!r}, "--executor", "process", "--workers", "2", '
                   '"--quiet"]))\n')
    assert done.returncode == 0, done.stderr
    assert json.loads((out / "summary.json").read_text())["total"] == 14
    done = _script(tmp_path, 'if __name__ == "__main__":\n    sys.exit(main(["resume", '
                   f'{str(out)!r}]))\n')
    assert done.returncode == 0, done.stderr
    assert "--executor process --workers 2; as it last ran" in done.stderr
