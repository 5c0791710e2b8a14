"""Cell functions for tests/test_reliability.py, importable by spawned pool workers."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def square_cell(kind: str, params: dict) -> dict:
    """A deterministic cell; with ``kill_once`` set, the first worker to run cell ``kill_at``
    SIGKILLs itself (the marker file makes it happen once per study)."""
    time.sleep(params.get("delay", 0.0))
    if params.get("kill_once") and params["i"] == params.get("kill_at"):
        marker = Path(params["kill_once"])
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
    if params.get("always_kill") and params["i"] == params.get("kill_at"):
        os.kill(os.getpid(), signal.SIGKILL)
    return {"i": params["i"], "square": params["i"] ** 2}


def main(argv: list[str]) -> int:
    """``python tests/reliability_cells.py OUT CELLS DELAY EXECUTOR WORKERS``: a study of
    ``square_cell`` cells into OUT with the final files written as the study commands do."""
    from robustlab.outputs import write_json
    from robustlab.runs import Cell, RunStore, run_cells

    out, n, delay, executor, workers = argv[0], int(argv[1]), float(argv[2]), argv[3], int(argv[4])
    store = RunStore(out)
    store.init_run("squares", "squares", {"cells": n, "delay": delay})
    cells = [Cell(f"i={i:03d}", "squares", {"i": i, "delay": delay}) for i in range(n)]
    report = run_cells(store, cells, square_cell, executor=executor, workers=workers,
                       progress=False)
    results = {c.key: c.result for c in store.cells("done")}
    write_json(Path(out) / "summary.json", {"complete": report.complete, "results": results})
    print(f"finished {report.done}/{report.total} cells", flush=True)
    return 0 if report.complete else 1


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
