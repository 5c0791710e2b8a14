"""The headless core never loads the TUI or the heavy ML stacks at import time.

Each module is imported in a fresh interpreter (so nothing else has loaded them first) and its
``sys.modules`` is inspected. ``robustlab.cli`` builds its parser too: discovering the
subcommands must not import what their handlers use.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("textual", "torch", "textattack", "checklist")
MODULES = ["robustlab", "robustlab.perturbations", "robustlab.metrics", "robustlab.recipes",
           "robustlab.runs", "robustlab.cli"]


def loaded_after(code: str) -> list[str]:
    probe = (f"import sys, json\n{code}\n"
             f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", MODULES)
def test_headless_modules_do_not_import_heavy_packages(module):
    assert loaded_after(f"import {module}") == []


def test_building_the_cli_parser_stays_light():
    assert loaded_after("from robustlab.cli import build_parser; build_parser()") == []


def test_tui_headless_parts_do_not_import_textual():
    """data/launch/results/specs/forms and the kinds' views are shared with tests and the
    benchmark: no textual."""
    assert "textual" not in loaded_after(
        "import robustlab.tui.data, robustlab.tui.launch, robustlab.tui.results, "
        "robustlab.tui.specs, robustlab.tui.forms, robustlab.studies.learnability.view, "
        "robustlab.studies.second_order.attack_view, robustlab.studies.second_order.bias_view, "
        "robustlab.studies.cross_domain.view, robustlab.studies.eval.view")
