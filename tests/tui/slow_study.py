"""A tiny real study for launch/stop/resume tests: N cells that each sleep, via ``run_cells``.

Run as ``python tests/tui/slow_study.py sleepy --out DIR [--cells N] [--delay S]``; like
``robustlab``, it continues a run with ``python tests/tui/slow_study.py resume DIR``, reading the
stored configuration (the TUI's Resume launches that).
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

from robustlab.outputs import write_json
from robustlab.procs import answer_ctrl_c
from robustlab.runs.executor import run_cells
from robustlab.runs.store import Cell, RunStore


def sleepy_cell(kind: str, params: dict) -> dict:
    """Sleeps ``delay``; with ``hold`` set, cells from ``hold_from`` on first wait while the
    file ``hold`` exists: a stop test releases them (or never does) on its own event, so a
    loaded machine cannot let the run finish before Stop arrives."""
    if params.get("hold") and params["i"] >= params.get("hold_from", 2):
        while Path(params["hold"]).exists():
            time.sleep(0.02)
    time.sleep(params["delay"])
    return {"i": params["i"], "square": params["i"] ** 2, "seconds": params["delay"]}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="robustlab")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("sleepy", help="a study of N cells that sleep (TUI tests)")
    p.add_argument("--out", required=True, help="run directory")
    p.add_argument("--cells", type=int, default=6, help="number of cells")
    p.add_argument("--delay", type=float, default=0.3, help="seconds per cell")
    p.add_argument("--mode", choices=["fast", "thorough"], default="fast", help="a choice")
    p.add_argument("--hold", help="cells from --hold-from on wait while this file exists")
    p.add_argument("--hold-from", type=int, default=2, help="the first cell --hold holds")
    return parser


def main(argv: list[str]) -> int:
    answer_ctrl_c()  # as robustlab's entry point: Stop's SIGINT works from a background job
    if argv[:1] == ["resume"]:  # the stored configuration, as robustlab resume reads its own
        out = Path(argv[1])
        with RunStore(out, readonly=True) as store:
            config = store.run_info().config
        argv = ["sleepy", "--out", str(out), "--cells", str(config["cells"]), "--delay",
                str(config["delay"])]
        if config.get("hold"):
            argv += ["--hold", config["hold"], "--hold-from", str(config["hold_from"])]
    args = build_parser().parse_args(argv)
    out = Path(args.out)
    store = RunStore(out)
    config = {"cells": args.cells, "delay": args.delay}
    held = {"hold": args.hold, "hold_from": args.hold_from} if args.hold else {}
    config.update(held)
    command = shlex.join(["python", str(Path(__file__).resolve()), *argv])
    store.init_run("sleepy", out.name, config, command=command)
    cells = [Cell(key=f"i={i:03d}", kind="sleepy", params={"i": i, "delay": args.delay, **held})
             for i in range(args.cells)]
    report = run_cells(store, cells, sleepy_cell, progress=False)
    store.set_run_status("done" if report.complete else "failed")
    write_json(out / "summary.json", {"kind": "sleepy", "complete": report.complete,
                                      "failed_cells": [], "config": config})
    print(f"finished {report.done}/{report.total} cells", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
