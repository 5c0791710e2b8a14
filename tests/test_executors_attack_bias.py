"""``robustlab attack`` and ``robustlab bias`` on the process executor with 2 workers give the
sequential results (same cells, same records), resume across executors, and reject bad
execution options before a run directory exists."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.runs.store import RunStore

TIMING = {"seconds", "model_seconds"}
GOOD = ("good", "great", "fine", "lovely")
BAD = ("bad", "dull", "poor", "awful")
TABLE = {"good": ["great", "fine"], "great": ["good"], "bad": ["poor", "dull"],
         "dull": ["bad"], "film": ["movie", "picture"], "plot": ["story"], "really": ["truly"]}


def _rows(n: int, seed: int) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        y = rng.randint(0, 1)
        who = rng.choice(["he", "she", "the man", "his friend"])
        out.append((y, f"{who} said the {rng.choice(['film', 'plot'])} was really "
                       f"{rng.choice(GOOD if y else BAD)} ."))
    return out


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> Path:
    """A saved bow model (trained on 120 toy sentences), a dev file, a table and a pair file."""
    from robustlab.models.registry import make_model

    d = tmp_path_factory.mktemp("exec")
    train = _rows(120, 1)
    model = make_model("bow", seed=0, steps=40)
    model.fit([t for _, t in train], [y for y, _ in train], steps=40)
    model.save(d / "bow")
    (d / "dev.txt").write_text("".join(f"{y} {t}\n" for y, t in _rows(8, 2)))
    (d / "table.json").write_text(json.dumps(TABLE))
    (d / "pairs.json").write_text(json.dumps({"film": ["movie"], "plot": ["story"]}))
    (d / "gender.txt").write_text("he she\nman woman\n")
    return d


def _stable(path: Path, drop: set[str]) -> list[dict]:
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    return [{k: v for k, v in r.items() if k not in drop} for r in rows]


def attack_argv(d: Path, out: Path, *extra: str) -> list[str]:
    return ["attack", "--recipe", "so-beam", "--model", str(d / "bow"), "--dataset",
            str(d / "dev.txt"), "--source", f"table:{d / 'table.json'}", "--patch-table",
            str(d / "pairs.json"), "--max-distance", "2", "--beam-width", "4",
            "--out", str(out), "--no-progress", *extra]


def bias_argv(d: Path, out: Path, *extra: str) -> list[str]:
    return ["bias", "--model", str(d / "bow"), "--dataset", str(d / "dev.txt"), "--pairs",
            str(d / "gender.txt"), "--k", "0,1,2", "--source", f"table:{d / 'table.json'}",
            "--budget", "30", "--parents", "10", "--out", str(out), "--no-progress", *extra]


def test_attack_with_two_workers_equals_sequential(setup, capsys):
    seq, par = setup / "attack-seq", setup / "attack-par"
    assert main(attack_argv(setup, seq)) == 0
    assert main(attack_argv(setup, par, "--executor", "process", "--workers", "2")) == 0
    a, b = _stable(seq / "results.jsonl", TIMING), _stable(par / "results.jsonl", TIMING)
    assert len(a) == 8 and a == b
    assert {r["result_type"] for r in a} & {"successful", "failed"}  # real attacks ran
    sa = json.loads((seq / "summary.json").read_text())
    sb = json.loads((par / "summary.json").read_text())
    for key in ("counts", "success_rate", "mean_l0", "queries_per_example", "config",
                "signature"):
        assert sa[key] == sb[key]
    with RunStore(par, readonly=True) as s:
        assert s.counts()["done"] == 8
        assert all(c.attempts == 1 for c in s.cells())  # nothing ran twice


def test_bias_with_two_workers_equals_sequential(setup):
    seq, par = setup / "bias-seq", setup / "bias-par"
    assert main(bias_argv(setup, seq)) == 0
    assert main(bias_argv(setup, par, "--executor", "process", "--workers", "2")) == 0
    a, b = _stable(seq / "results.jsonl", set()), _stable(par / "results.jsonl", set())
    assert len(a) == 6 and a == b  # 2 pairs x k in {0, 1, 2}
    assert any(r["n"] > 0 and r["B"] is not None for r in a)
    for key in ("pair=he/she|k=2", "pair=man/woman|k=1"):
        ra = RunStore(seq, readonly=True).records(key)
        rb = RunStore(par, readonly=True).records(key)
        assert ra == rb


def test_attack_resumes_on_another_executor(setup):
    """Half the cells done sequentially (then Ctrl-C), the rest by 2 workers: the sequential
    result, and the done half is not recomputed."""
    ref, out = setup / "attack-seq", setup / "attack-resumed"
    if not (ref / "summary.json").exists():  # run alone (-k): make the reference
        assert main(attack_argv(setup, ref)) == 0
    assert main(attack_argv(setup, out)) == 0
    with RunStore(out) as s:  # as if interrupted after 4 of the 8 examples
        keys = [c.key for c in s.cells()][4:]
        before = {c.key: c.finished for c in s.cells()}
        with s.transaction() as conn:
            conn.executemany("UPDATE cells SET status='pending', result=NULL, finished=NULL "
                             "WHERE key=?", [(k,) for k in keys])
    assert main(attack_argv(setup, out, "--executor", "process", "--workers", "2")) == 0
    assert _stable(out / "results.jsonl", TIMING) == _stable(ref / "results.jsonl", TIMING)
    with RunStore(out, readonly=True) as s:
        after = {c.key: c.finished for c in s.cells()}
    assert all(after[k] == before[k] for k in before if k not in keys)


@pytest.mark.parametrize("extra, message", [
    (("--workers", "0"), "--workers must be >= 1"),
    (("--executor", "ray", "--gpus-per-task", "-1"), "--gpus-per-task must be >= 0"),
    (("--executor", "ray", "--cpus-per-task", "0"), "--cpus-per-task must be > 0"),
])
def test_bad_execution_options_leave_no_run_directory(setup, capsys, extra, message):
    out = setup / "bad"
    assert main(bias_argv(setup, out, *extra)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
