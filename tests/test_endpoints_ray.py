"""The JSON kind against a real Ray Serve deployment of a robustlab-trained BoW (issue 34).

``tests/endpoint_server.py --ray`` starts a private Ray (no dashboard, one CPU, the import that
made every Ray process slow here hidden: ``lean_imports``) and Serve, and deploys the same
FastAPI app the uvicorn tests use. ``robustlab eval --model card.toml`` asks it through two
injected faults; the deployment's own count of requests equals the requests robustlab reports,
no text is asked twice, and a rerun asks nothing.

In the fast suite since robustlab's own local start hides that import too
(``robustlab.runs.ray_backend.lean_imports``): the whole test took 45.2 s at load 3-4 beside a
CI run (07:46 UTC; Ray and Serve up in 37 s). Earlier, before the hiding was shared, 45.6 s at
load 9-11, 79.4 s at load 11-12 and 105 s at load 13-14. One server per module, waited on with a
ceiling of 600 s.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time

import pytest
from test_endpoints import PERTS, bow, card, data, run_eval, start_server  # noqa: F401


@pytest.fixture(scope="module")
def ray_server(bow):  # noqa: F811
    # a short folder: Ray's unix sockets live under it (108 bytes at most in a socket's path)
    tmp = tempfile.mkdtemp(prefix="rl-ray-")
    t0 = time.monotonic()
    s = start_server(bow, "--ray", "--tmp", tmp, ceiling=600)
    # shown with -s (the test's own output is captured by capsys)
    print(f"\nRay and Serve up in {time.monotonic() - t0:.1f} s")
    yield s
    s.proc.terminate()
    s.proc.wait(120)
    shutil.rmtree(tmp, ignore_errors=True)


def test_eval_against_ray_serve_asks_each_text_once(data, ray_server, tmp_path,  # noqa: F811
                                                    capsys):
    c = card(tmp_path / "card.toml", f"{ray_server.url}/predict")
    ray_server.reset()
    ray_server.control(faults=["429", "500"])
    out = tmp_path / "run"
    args = ["--model", c, "--dataset", data / "dev.tsv", "--perturbations", PERTS, "--seeds",
            "0,1", "--out", out]
    rc, stdout, err = run_eval(args, capsys)
    assert rc == 0, err
    stats = ray_server.stats()
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    # every request the deployment counted is one robustlab reports, plus the two it refused
    assert stats["requests"] > 2 and stats["requests"] == ep["requests"] + 2
    assert stats["requests"] == ep["tries_this_run"] and ep["sent_this_run"] == ep["requests"]
    # no text charged twice (a refused request charges nothing), every one answered
    assert max(stats["texts"].values()) == 1
    assert sum(stats["texts"].values()) == ep["answers"]
    rc, _, err = run_eval(args, capsys)
    assert rc == 0, err
    assert ray_server.stats()["requests"] == stats["requests"]  # a rerun asks nothing
