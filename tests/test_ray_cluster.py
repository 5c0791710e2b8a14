"""Cells that travel: a learnability study on a real two-node Ray cluster (token auth, the
driver joining with ``--ray-address``) equals the sequential run; cells carry no driver path;
a worker killed mid-cell is retried; a missing token is named. See docs/executors.md."""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from learnability_toy import toy_spec
from ray_cluster_util import STUDY, LocalCluster, run_portable, stable

from robustlab.runs.inputs import file_sha256, split_config
from robustlab.runs.ray_backend import node_dir
from robustlab.runs.store import RunStore
from robustlab.studies.learnability.data import load_splits
from robustlab.studies.learnability.study import (
    CACHE_DIR,
    LearnabilityStudy,
    clear_caches,
    portable_params,
    ray_options,
    run_cell,
    run_study,
)

pytest.importorskip("ray")


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


def test_cells_carry_no_driver_paths(tmp_path):
    """The parameters a Ray task receives name no local path, and a process whose cwd is
    elsewhere and that cannot see the data file computes the sequential results from them."""
    spec = toy_spec(tmp_path / "data", n_train=60, n_test=30)
    study = LearnabilityStudy(**STUDY, dataset=spec)
    splits = load_splits(spec)
    run_dir = tmp_path / "run"
    cells = study.cells(splits.fingerprint, cache_dir=str(run_dir / CACHE_DIR))
    travel = ray_options(splits, cells)["travel"]
    sent = [travel.portable(c.params) for c in cells]
    for params in sent:
        for s in _strings(params):
            assert str(tmp_path) not in s and not (os.sep in s and os.path.exists(s)), s
    assert travel.node_dirs and all(d.startswith("node:") for d in travel.node_dirs)
    assert {p["cache_dir"] for p in sent} == set(travel.node_dirs)
    # the stored parameters (and so keys and configuration) are untouched
    assert cells[0].params["dataset"] == spec and portable_params(cells[0].params) == sent[0]

    picked = [i for i, c in enumerate(cells) if c.params["perturbation"] == "leet_letters"]
    clear_caches()
    want = [stable(run_cell(cells[i].kind, {**cells[i].params, "cache_dir": None}).result)
            for i in picked]
    shutil.rmtree(tmp_path / "data")  # the worker cannot read the data file any more
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    try:
        with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn"),
                                    initializer=os.chdir, initargs=(str(elsewhere),)) as pool:
            got = pool.submit(run_portable, splits, [sent[i] for i in picked]).result()
    finally:
        for d in travel.node_dirs:
            shutil.rmtree(node_dir(d), ignore_errors=True)
    assert got == want
    assert not run_dir.exists()  # the clean-model cache was node-local, not in the run dir


# ---- a real cluster ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    c = LocalCluster(cpus_per_node=1)
    c.env["RL_KILL_DIR"] = str(c.root / "kill")
    (c.root / "kill").mkdir()
    c.start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The toy data and the sequential run every cluster run must equal."""
    d = tmp_path_factory.mktemp("ray-ref")
    spec = toy_spec(d / "data", n_train=60, n_test=30)
    clear_caches()
    run_study(LearnabilityStudy(**STUDY, dataset=spec), d / "seq", progress=False, plots=False)
    with RunStore(d / "seq", readonly=True) as s:
        results = {k: stable(r) for k, r in s.done_results()}
    return spec, results


def _driver(cluster, argv, env=None, timeout=400):
    return subprocess.run([sys.executable, "-m", "robustlab", *argv], cwd=cluster.cwd,
                          env=env or cluster.driver_env(), capture_output=True, text=True,
                          timeout=timeout)


@pytest.mark.slow
def test_cluster_study_equals_sequential(cluster, reference, tmp_path):
    spec, want = reference
    out = tmp_path / "ray-run"
    argv = ["learnability", "--model", "bow", "--data", spec["path"], "--test-data",
            spec["test_path"], "--format", "label-text", "--perturbations",
            ",".join(STUDY["perturbations"]), "--p-grid", "0.1,1.0", "--seeds", "0",
            "--steps", "20", "--executor", "ray", "--ray-address", cluster.address,
            "--workers", "2", "--out", str(out), "--no-plots", "--quiet"]
    proc = _driver(cluster, argv)
    assert proc.returncode == 0, proc.stderr[-3000:]
    with RunStore(out, readonly=True) as s:
        got = {k: stable(r) for k, r in s.done_results()}
        info = s.run_info()
        stored = s.cells()
    assert got == want
    # same configuration as a sequential run; the address is only an option of the command, and
    # the input records (docs/run-directory.md) sit beside the configuration, outside its identity
    seq_config = LearnabilityStudy(**STUDY, dataset=spec).config()
    config, inputs = split_config(info.config)
    assert config == seq_config and "--ray-address" in (info.command or "")
    assert inputs["dataset"]["path"] == str(Path(spec["path"]).resolve())
    assert inputs["dataset"]["sha256"] == file_sha256(spec["path"])
    assert all(c.params["dataset"] == spec for c in stored)  # the store keeps real params
    assert not (out / CACHE_DIR).exists()
    # the clean model of (bow, seed 0) was trained at most once per node: 2 nodes
    clean = [r for r in (json.loads(x) for x in (out / "results.jsonl").read_text().splitlines())
             if r["experiment"] in ("standard", "robustness")]
    assert len(clean) == 4 and 1 <= sum(r["train_seconds"] > 0 for r in clean) <= 2


@pytest.mark.slow
def test_killed_worker_is_retried_and_exhausted_retries_fail_with_the_reason(cluster,
                                                                             reference,
                                                                             tmp_path):
    from robustlab.studies.learnability.study import cell_key

    spec, want = reference
    once = cell_key("bow", "leet_letters", "robustness", None, 0)
    always = cell_key("bow", "identity", "augmentation", None, 0)
    code = ("import json, sys, ray_cluster_util as u; "
            "u.fault_driver(sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4]))")
    kill = Path(cluster.env["RL_KILL_DIR"])
    for out, name, key, retries in ((tmp_path / "once", "once", once, 3),
                                    (tmp_path / "always", "always", always, 1)):
        (kill / name).write_text(key)
        proc = subprocess.run([sys.executable, "-c", code, cluster.address, json.dumps(spec),
                               str(out), str(retries)], cwd=cluster.cwd,
                              env=cluster.driver_env(), capture_output=True, text=True,
                              timeout=400)
        (kill / name).unlink()
        assert proc.returncode == 0, proc.stderr[-3000:]
        if name == "once":
            assert (kill / "killed").exists()  # a worker really died mid-cell
    with RunStore(tmp_path / "once", readonly=True) as s:
        assert s.counts() == {"pending": 0, "running": 0, "done": len(want), "failed": 0}
        assert {k: stable(r) for k, r in s.done_results()} == want
        assert all(c.attempts == 1 for c in s.cells())  # the driver stored each cell once
    with RunStore(tmp_path / "always", readonly=True) as s:
        failed = s.cells("failed")
        assert [c.key for c in failed] == [always]
        assert "died on all 2 attempts" in failed[0].error
        assert {k: stable(r) for k, r in s.done_results()} == \
            {k: v for k, v in want.items() if k != always}


@pytest.mark.slow
def test_missing_token_is_named_and_nothing_is_written(cluster, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in cluster.driver_env().items()
           if k not in ("RAY_AUTH_TOKEN", "RAY_AUTH_MODE")}
    env["HOME"] = str(home)
    out = tmp_path / "no-token"
    proc = _driver(cluster, ["learnability", "--model", "bow", "--perturbations", "identity",
                             "--seeds", "0", "--steps", "5", "--max-train", "20", "--max-test",
                             "10", "--executor", "ray", "--ray-address", cluster.address,
                             "--out", str(out), "--quiet"], env=env, timeout=200)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "RAY_AUTH_TOKEN" in last and "ray get-auth-token" in last and cluster.address in last
    assert not out.exists()
