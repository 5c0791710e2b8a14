"""Run directories: the SQLite store, the executor loop (sequential, processes, Ray), signatures."""

from robustlab.runs.executor import EXECUTORS, CellOutput, RunReport, run_cells
from robustlab.runs.store import Cell, RunInfo, RunStore, StoreError, is_run_dir

__all__ = [
    "EXECUTORS",
    "Cell",
    "CellOutput",
    "RunInfo",
    "RunReport",
    "RunStore",
    "StoreError",
    "is_run_dir",
    "run_cells",
]
