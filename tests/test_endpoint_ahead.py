"""An endpoint's eval pipelined across cells (``robustlab.studies.eval.ahead``), against the real
uvicorn server of ``tests/endpoint_server.py``: perturbing later cells while earlier ones are
asked gives the same stored predictions and results as the cell-by-cell path, with retries
drawing their jitter meanwhile; no text is asked twice; a resume pipelines only what is left and
asks nothing stored; and the perturbing really overlaps the asking.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from test_endpoints import bow, card, data, fresh, run_eval, server  # noqa: F401  (fixtures)

import robustlab.studies.eval.study as study_mod
from robustlab.studies.eval import ahead as ahead_mod

# robustlab's own perturbations and adapters that seed the global random state per text
PERTS = "leet_letters,char_swap,word_delete,shuffle_word,butter_fingers_perturbation"


def args(model, data: Path, out: Path, *extra) -> list:  # noqa: F811
    return ["--model", model, "--dataset", data / "dev.tsv", "--perturbations", PERTS,
            "--seeds", "0,1", "--out", out, *extra]


def stored(out: Path) -> tuple[list, list]:
    with sqlite3.connect(f"file:{out / 'store.sqlite'}?mode=ro", uri=True) as c:
        preds = c.execute("SELECT cell, idx, original, perturbed, label, pred_before, "
                          "prob_before, pred_after, prob_after FROM predictions "
                          "ORDER BY cell, idx").fetchall()
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    for r in results:
        for k in ("seconds", "perturb_wait_seconds"):
            r.pop(k)
    return preds, results


def test_pipelined_eval_equals_the_cell_by_cell_one(data, fresh, tmp_path, capsys,  # noqa: F811
                                                    monkeypatch):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", retries=6)
    used = []
    real = ahead_mod.Pipeline.__init__

    def spy(self, predictor, texts, cells, perturb):
        used.append(list(cells))
        real(self, predictor, texts, cells, perturb)

    monkeypatch.setattr(ahead_mod.Pipeline, "__init__", spy)
    # 500s without Retry-After: the client draws its backoff jitter while cells are perturbed
    fresh.control(faults=["500", "503", "500"])
    rc, _, err = run_eval(args(c, data, tmp_path / "ahead"), capsys)
    assert rc == 0, err
    assert len(used) == 1 and len(used[0]) == 10  # 5 perturbations x 2 seeds, pipelined
    stats = fresh.stats()
    assert max(stats["texts"].values()) == 1
    # the same eval cell by cell (no pipeline), against the same server
    fresh.reset()
    monkeypatch.setattr(study_mod, "ahead_cells", lambda *a, **k: None)
    rc, _, err = run_eval(args(c, data, tmp_path / "inline"), capsys)
    assert rc == 0, err
    assert len(used) == 1
    assert stored(tmp_path / "ahead") == stored(tmp_path / "inline")
    assert fresh.stats()["texts"] == stats["texts"]  # the same texts asked, each once


def test_a_resume_pipelines_only_the_cells_left_and_asks_nothing_stored(
        data, fresh, tmp_path, capsys, monkeypatch):  # noqa: F811
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict")
    out = tmp_path / "run"
    rc, _, err = run_eval(args(c, data, out), capsys)
    assert rc == 0, err
    before = stored(out)
    requests = fresh.stats()["requests"]
    with sqlite3.connect(out / "store.sqlite") as conn:
        conn.execute("UPDATE cells SET status='pending', result=NULL WHERE seq IN (2, 7)")
        pending = [(p["perturbation"], p["seed"], p["samples"]) for p in (
            json.loads(x) for (x,) in conn.execute(
                "SELECT params FROM cells WHERE status='pending' ORDER BY seq"))]
    used = []
    real = ahead_mod.Pipeline.__init__

    def spy(self, predictor, texts, cells, perturb):
        used.append(list(cells))
        real(self, predictor, texts, cells, perturb)

    monkeypatch.setattr(ahead_mod.Pipeline, "__init__", spy)
    rc, _, err = run_eval(args(c, data, out), capsys)
    assert rc == 0, err
    assert len(pending) == 2 and used == [pending]
    assert fresh.stats()["requests"] == requests and stored(out) == before


def test_perturbing_overlaps_the_asking(data, fresh, tmp_path, capsys, monkeypatch):  # noqa: F811
    """With a slow server and slow perturbations, cells are perturbed while an earlier batch's
    requests are in flight (the cell-by-cell path perturbs only between its cells' requests:
    with ``ahead_cells`` returning None this fails)."""
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=2, max_concurrency=2)
    fresh.control(delay=0.3)
    events: list[tuple] = []
    import robustlab.studies.eval.study as st

    real_chunks = st._perturbed_chunks

    def chunks(pert, texts, seed, samples):
        time.sleep(0.3)  # a perturbation that takes a while (a masked LM's)
        yield from real_chunks(pert, texts, seed, samples)
        events.append(("perturbed", time.monotonic()))

    real_fill = None

    def fill(self, texts):
        t0 = time.monotonic()
        real_fill(self, texts)
        events.append(("asked", t0, time.monotonic()))

    from robustlab.studies.eval.predict import Predictor

    real_fill = Predictor.fill
    monkeypatch.setattr(st, "_perturbed_chunks", chunks)
    monkeypatch.setattr(Predictor, "fill", fill)
    rc, _, err = run_eval(args(c, data, tmp_path / "run"), capsys)
    assert rc == 0, err
    asks = [(a, b) for kind, *t in events if kind == "asked" for a, b in [t]]
    done = [t[0] for kind, *t in events if kind == "perturbed"]
    assert len(done) == 10
    during = [t for t in done if any(a < t < b for a, b in asks)]
    assert len(during) >= 5, (done, asks)


@pytest.fixture(autouse=True)
def _no_delay(fresh):  # noqa: F811
    yield
    fresh.control(delay=0.0)
