"""Every registered built-in perturbation passes the generic suite (one test id per check)."""

from __future__ import annotations

import pytest
from perturbation_checks import iter_checks

from robustlab.adapters import available, make

BUILTIN_SOURCES = {"000", "001"}
NAMES = [n for n, c in available().items() if c.source in BUILTIN_SOURCES]
CASES = [(n, check) for n in NAMES for check, _ in iter_checks(make(n))]


@pytest.mark.parametrize(("name", "check"), CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_generic_check(name: str, check: str) -> None:
    dict(iter_checks(make(name)))[check]()
