"""The execution options shared by every study command (``--executor``, ``--workers``, Ray's).

Runtime choices only: none of them is part of a study's configuration or signatures, so a run
started with one executor (or on one cluster) resumes with another.
"""

from __future__ import annotations

import argparse
from typing import Any


def add_executor_options(p: argparse.ArgumentParser) -> None:
    add_executor_arguments(p.add_argument_group("execution (see docs/executors.md)"))


def add_executor_arguments(e: Any) -> None:
    """The five options into an existing parser or argument group (learnability/robustness put
    them in their own "execution" group, beside --out and --threads)."""
    e.add_argument("--executor", choices=("sequential", "process", "ray"), default="sequential",
                   help="where cells run: this process, local worker processes, or Ray tasks")
    e.add_argument("--workers", type=int, default=1,
                   help="cells in parallel (process / ray; default 1)")
    e.add_argument("--ray-address", metavar="ADDR",
                   help="existing Ray cluster, e.g. HEAD:6379 (default: a private local one); "
                   "token-authenticated clusters need RAY_AUTH_TOKEN or ~/.ray/auth_token")
    e.add_argument("--gpus-per-task", type=float, default=0.0,
                   help="GPUs per Ray task (fractional allowed, e.g. 0.25)")
    e.add_argument("--cpus-per-task", type=float, default=1.0, help="CPUs per Ray task")


def executor_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """The options as keyword arguments of the recipes' ``run_*_study`` functions."""
    return {"executor": args.executor, "workers": args.workers,
            "ray_address": args.ray_address, "gpus_per_task": args.gpus_per_task,
            "cpus_per_task": args.cpus_per_task}
