"""The JSON kind against a real Ray Serve deployment of a robustlab-trained BoW (issue 34).

Marked slow: Ray's start on a loaded 2-core machine took minutes or timed out in its raylet (it
waits for the dashboard agent), which the fast suite cannot afford; ``tests/test_endpoints.py``
runs the same app under uvicorn in the fast suite. One server per module, waited on with a
generous ceiling.
"""

from __future__ import annotations

import json

import pytest
from test_endpoints import PERTS, bow, card, data, run_eval, start_server  # noqa: F401

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_server(bow, tmp_path_factory):  # noqa: F811
    tmp = tmp_path_factory.mktemp("ray")
    s = start_server(bow, "--ray", "--tmp", str(tmp), ceiling=900)
    yield s
    s.proc.terminate()
    s.proc.wait(120)


def test_eval_against_ray_serve_asks_each_text_once(data, ray_server, tmp_path,  # noqa: F811
                                                    capsys):
    c = card(tmp_path / "card.toml", f"{ray_server.url}/predict")
    ray_server.control(faults=["429", "500"])
    out = tmp_path / "run"
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           PERTS, "--seeds", "0,1", "--out", out], capsys)
    assert rc == 0, err
    stats = ray_server.stats()
    assert max(stats["texts"].values()) == 1
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert stats["requests"] == ep["requests"] + 2
    rc, _, err = run_eval(["--model", c, "--dataset", data / "dev.tsv", "--perturbations",
                           PERTS, "--seeds", "0,1", "--out", out], capsys)
    assert rc == 0 and ray_server.stats()["requests"] == stats["requests"]
