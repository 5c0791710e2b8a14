"""The learnability study engine: design (random labels, perturbation rate), known answers
(identity → 0, a planted token → ≈ 1), the output contract, resume after kill -9, Ray."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from learnability_toy import toy_spec
from scipy import stats

from robustlab.runs.store import RunStore
from robustlab.studies.learnability.study import (
    LearnabilityStudy,
    clear_caches,
    label_randomness,
    learnability_train_set,
    run_cell,
    run_study,
)

REPO = Path(__file__).resolve().parents[1]
TIMING = {"seconds", "train_seconds", "predict_seconds", "model_seconds"}


def _study(spec, **kw) -> LearnabilityStudy:
    base = dict(models=("bow",), perturbations=("identity", "append_token"), dataset=spec,
                p_grid=(0.01, 0.1, 1.0), seeds=(0,), steps=40)
    base.update(kw)
    return LearnabilityStudy(**base)


def test_cells_are_deterministic_and_keyed(tmp_path):
    st = _study(toy_spec(tmp_path), seeds=(0, 1), perturbations=("identity", "leet_letters"))
    a, b = st.cells("fp"), st.cells("fp")
    assert [c.key for c in a] == [c.key for c in b]
    # per (model, seed, pert): standard, robustness, augmentation + one per p
    assert len(a) == 1 * 2 * 2 * (3 + 3)
    assert len({c.key for c in a}) == len(a)
    assert a[0].key == "model=bow|pert=identity|exp=standard|p=-|seed=0"
    assert "model=bow|pert=leet_letters|exp=learnability|p=0.01|seed=1" in {c.key for c in a}
    rob = _study(toy_spec(tmp_path), experiments=("standard", "robustness", "augmentation"),
                 p_grid=(), kind="robustness")
    assert {c.params["experiment"] for c in rob.cells()} == {"standard", "robustness",
                                                             "augmentation"}


def test_random_labels_are_fair_and_independent_of_text():
    n = 4000
    train_l, test_l, z = label_randomness(7, n, 2000)
    # a fair coin: two-sided binomial test
    assert stats.binomtest(int(train_l.sum()), n, 0.5).pvalue > 1e-3
    assert stats.binomtest(int(test_l.sum()), 2000, 0.5).pvalue > 1e-3
    # a function of the seed and sizes only: texts never enter, so they cannot predict l'
    true_labels = np.random.default_rng(123).integers(0, 2, n)  # any labelling of the texts
    table = [[int(((true_labels == a) & (train_l == b)).sum()) for b in (0, 1)] for a in (0, 1)]
    assert stats.chi2_contingency(table).pvalue > 1e-3
    again = label_randomness(7, n, 2000)
    assert np.array_equal(again[0], train_l) and np.array_equal(again[2], z)
    assert not np.array_equal(label_randomness(8, n, 2000)[0], train_l)
    # uniform z
    assert stats.kstest(z, "uniform").pvalue > 1e-3


@pytest.mark.parametrize("p", [0.05, 0.3, 1.0])
def test_only_treated_examples_are_perturbed_at_the_requested_rate(p):
    n = 6000
    labels, _, z = label_randomness(3, n, 10)
    texts = [f"text {i}" for i in range(n)]
    perturbed = [t + " *" for t in texts]
    out, mask = learnability_train_set(texts, perturbed, labels, z, p)
    changed = np.array([a != b for a, b in zip(out, texts, strict=True)])
    assert np.array_equal(changed, mask)
    assert not changed[labels == 0].any()          # l'=0 examples are never perturbed
    k, n1 = int(changed[labels == 1].sum()), int((labels == 1).sum())
    if p == 1.0:
        assert k == n1
    else:
        assert stats.binomtest(k, n1, p).pvalue > 1e-3
    # common random numbers: a smaller p perturbs a subset of a larger p's examples
    _, small = learnability_train_set(texts, perturbed, labels, z, p / 2)
    assert not (small & ~mask).any()


def _learn_cells(st, pert):
    clear_caches()
    return [run_cell(c.kind, c.params).result for c in st.cells()
            if c.params["perturbation"] == pert and c.params["experiment"] == "learnability"]


def test_identity_has_zero_learnability_at_every_p(tmp_path):
    st = _study(toy_spec(tmp_path), perturbations=("identity",),
                p_grid=(0.001, 0.01, 0.1, 0.5, 1.0))
    res = _learn_cells(st, "identity")
    assert len(res) == 5
    for r in res:
        assert r["learnability_acc"] == 0.0
        assert r["learnability_prob"] == pytest.approx(0.0, abs=1e-12)
        assert r["noop_rate"] == 1.0  # reported: identity never changes a text


def test_planted_token_is_learned(tmp_path):
    from robustlab.metrics.learnability import log_auc

    grid = (0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.5, 1.0)
    st = _study(toy_spec(tmp_path, n_train=300, n_test=120), perturbations=("append_token",),
                p_grid=grid, steps=80)
    res = sorted(_learn_cells(st, "append_token"), key=lambda r: r["p"])
    curve = [r["learnability_acc"] for r in res]
    assert curve[-1] >= 0.95                 # p = 1: the model fully learned the token
    assert res[-1]["noop_rate"] == 0.0
    assert res[-2]["learnability_acc"] >= 0.5  # p = 0.5: mostly learned already
    # large average learnability (max 3.0; identity scores exactly 0). On 300 toy sentences
    # nothing is learned from the handful of examples perturbed at p <= 0.05, so the area comes
    # from p >= 0.1: 0.7 * (l(0.1) + l(0.5)) / 2 + 0.3 * (l(0.5) + l(1)) / 2 >= 0.5 here
    assert log_auc(grid, curve) > 0.5


def test_run_study_writes_the_contract(tmp_path):
    out = tmp_path / "run"
    st = _study(toy_spec(tmp_path / "data"))
    summary = run_study(st, out, progress=False, command="robustlab learnability …")
    n = len(st.cells())
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == n
    rec = json.loads(lines[-1])
    for key in ("model", "perturbation", "seed", "experiment", "p", "accuracy",
                "learnability_acc", "learnability_prob", "n_train", "n_test", "n_treated",
                "noop_rate", "seconds", "train_seconds"):
        assert key in rec
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["complete"] is True and on_disk["failed_cells"] == []
    assert on_disk["kind"] == "learnability"
    for key in ("config", "signature", "versions", "files", "seconds", "pairs", "correlations"):
        assert key in on_disk
    pair = {r["perturbation"]: r for r in summary["pairs"]}
    assert pair["identity"]["avg_learnability"]["mean"] == 0.0
    assert set(pair["append_token"]["learnability_at"]) == {"0.01", "0.1", "1"}
    for key in ("robustness", "delta", "accuracy_standard", "accuracy_robustness",
                "accuracy_augmentation"):
        assert pair["identity"][key]["mean"] is not None
    assert pair["identity"]["robustness"]["mean"] == 0.0  # identity cannot hurt
    for key in ("learnability_vs_robustness", "learnability_vs_delta", "at_p"):
        assert key in on_disk["correlations"]
    for f in on_disk["files"]:
        assert (out / f).stat().st_size > 0
    assert {"learnability_curves.png", "learnability_table.csv",
            "learnability_vs_robustness.png"} <= set(on_disk["files"])
    info = RunStore(out, readonly=True).run_info()
    # the stored command is derived from the configuration (for people), never given by a caller
    assert info.status == "done" and info.command.startswith("robustlab learnability --model bow")
    assert info.command.endswith(f"--out {out.resolve()}")
    # same command again: everything is already done, nothing is recomputed
    again = run_study(st, out, progress=False)
    assert again["pairs"] == summary["pairs"]


def _stable(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text().splitlines():
        r = json.loads(line)
        key = f"{r['model']}|{r['perturbation']}|{r['experiment']}|{r['p']}|{r['seed']}"
        assert key not in out, f"duplicated cell {key}"
        out[key] = {k: v for k, v in r.items() if k not in TIMING}
    return out


def test_resume_after_kill_equals_uninterrupted_run(tmp_path):
    from robustlab.cli import main

    spec = toy_spec(tmp_path / "data", n_train=120, n_test=60)
    args = ["learnability", "--model", "bow", "--data", spec["path"], "--test-data",
            spec["test_path"], "--format", "label-text", "--perturbations",
            "identity,append_token,leet_letters", "--p-grid", "0.1,1", "--seeds", "0,1",
            "--steps", "30", "--quiet", "--no-plots"]
    argv = [sys.executable, "-m", "robustlab", *args]
    n_cells = 2 * 3 * (3 + 2)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    killed = tmp_path / "killed"
    proc = subprocess.Popen([*argv, "--out", str(killed)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and proc.poll() is None:
        if (killed / "store.sqlite").exists():
            try:
                with RunStore(killed, readonly=True) as s:
                    done = s.counts()["done"]
            except Exception:
                done = 0
            if done >= 5:
                break
        time.sleep(0.05)
    assert proc.poll() is None, "the study finished before it could be interrupted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with RunStore(killed, readonly=True) as s:
        counts = s.counts()
        done_at_kill = {c.key for c in s.cells("done")}
    assert 0 < counts["done"] < n_cells and not (killed / "summary.json").exists()
    rerun = subprocess.run([*argv, "--out", str(killed)], cwd=REPO, env=env,
                           capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    clean = tmp_path / "clean"  # the uninterrupted run (in this process: same code, same seeds)
    clear_caches()
    assert main([*args, "--out", str(clean)]) == 0
    a, b = _stable(killed / "results.jsonl"), _stable(clean / "results.jsonl")
    assert len(a) == n_cells and a == b
    with RunStore(killed, readonly=True) as s:
        assert s.check() == []
        assert s.counts() == {"pending": 0, "running": 0, "done": n_cells, "failed": 0}
        attempts = {c.key: c.attempts for c in s.cells()}
    # the cells stored done at the kill ran once (never again); only those in flight ran twice
    assert {k: attempts[k] for k in done_at_kill} == dict.fromkeys(done_at_kill, 1)
    assert max(attempts.values()) <= 2


@pytest.mark.slow
def test_ray_executor_gives_the_same_results(tmp_path):
    ray = pytest.importorskip("ray")
    from robustlab.runs.ray_backend import start_local

    spec = toy_spec(tmp_path / "data")
    st = _study(spec, perturbations=("identity", "leet_letters"))
    seq = run_study(st, tmp_path / "seq", progress=False, plots=False)
    start_local(2, {"env_vars": {"PYTHONPATH": str(REPO)}})  # lean; retried once under load
    try:
        dist = run_study(st, tmp_path / "ray", executor="ray", workers=2, progress=False,
                         plots=False)
    finally:
        ray.shutdown()
    assert _stable(tmp_path / "ray" / "results.jsonl") == _stable(tmp_path / "seq" /
                                                                   "results.jsonl")
    assert dist["pairs"] == seq["pairs"]


@pytest.mark.slow
def test_process_executor_gives_the_same_results(tmp_path):
    spec = toy_spec(tmp_path / "data")
    st = _study(spec, perturbations=("identity", "leet_letters"))
    seq = run_study(st, tmp_path / "seq", progress=False, plots=False)
    par = run_study(st, tmp_path / "proc", executor="process", workers=2, progress=False,
                    plots=False)
    assert _stable(tmp_path / "proc" / "results.jsonl") == _stable(tmp_path / "seq" /
                                                                    "results.jsonl")
    assert par["pairs"] == seq["pairs"]
    # the two workers share the clean model of exp 0/1 through the run's cache: trained once
    rows = [json.loads(x) for x in (tmp_path / "proc" / "results.jsonl").read_text().splitlines()]
    clean = [r for r in rows if r["experiment"] in ("standard", "robustness")]
    assert len(clean) == 4 and sum(r["train_seconds"] > 0 for r in clean) == 1
    assert not (tmp_path / "proc" / ".model-cache").exists()  # removed when complete


def test_sentence_pairs_are_perturbed_on_both_sides():
    from robustlab.perturbations.registry import make
    from robustlab.studies.learnability.study import perturb_examples

    pairs = [("how do I cook rice", "what is the way to cook rice"), ("a", "b")]
    new, changed = perturb_examples(make("append_token", token="zz"), pairs, seed=0)
    assert new == [("how do I cook rice zz", "what is the way to cook rice zz"), ("a zz", "b zz")]
    assert changed.tolist() == [True, True]
