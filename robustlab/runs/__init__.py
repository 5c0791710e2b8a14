"""Run directories: the SQLite store, the executor loop (sequential, processes, Ray), signatures.

The names below load their submodule on first use (:mod:`robustlab.lazy`): a command that only
writes files atomically (``robustlab perturb`` through :mod:`robustlab.outputs`) does not
import the store, sqlite3 or the executors.
"""

from robustlab.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "EXECUTORS": "cells",
    "Cell": "store",
    "CellOutput": "cells",
    "RunInfo": "store",
    "RunReport": "executor",
    "RunStore": "store",
    "StoreError": "store",
    "is_run_dir": "store",
    "run_cells": "executor",
})
