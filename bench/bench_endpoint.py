"""An endpoint eval against a sequential ``requests`` loop and local predictions (issue 34).

A BoW trained by ``robustlab train`` on SST-2 train is served over HTTP by
``tests/endpoint_server.py`` (``--ray``: through Ray Serve; default: the same FastAPI app under
uvicorn), and the same 22 perturbations of SST-2 test (seed 0) are evaluated three ways, in one
run:

* ``robustlab eval --model card.toml --max-concurrency 8`` (one text per request, so the
  comparison with the loop is request for request; ``--batch`` also times 32 texts a request);
* a plain sequential ``requests.post`` loop over the same distinct texts (timed on
  ``--loop-sample`` texts and extrapolated to all of them, said so in the output);
* ``robustlab eval --model BOW_DIR``: the same predictions made locally.

It prints the requests the server received, the most times one text was asked (1: no duplicate)
and the wall times; target: no duplicate and >= 5x the sequential loop at concurrency 8.

    PYTHONPATH=. python bench/bench_endpoint.py [--num-examples N] [--ray] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, ray: bool, tmp: Path) -> tuple[subprocess.Popen, str]:
    import requests

    port = free_port()
    extra = ["--ray", "--tmp", str(tmp / "ray")] if ray else []
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "endpoint_server.py"),
                             "--model", str(model), "--port", str(port), *extra],
                            env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 900
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode()[-1500:]}")
        try:
            requests.get(f"{url}/stats", timeout=5)
            return proc, url
        except requests.RequestException:
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("server did not answer within 900 s")


def robustlab(*args: Any) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "robustlab", *map(str, args)],
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True,
                          text=True)
    if done.returncode:
        raise SystemExit(f"robustlab {args[0]} failed: {done.stderr[-1500:]}")
    return time.perf_counter() - t0


def differing(run: Path, local: Path) -> tuple[int, int]:
    """(predictions whose class differs from the local run's, predictions)."""
    import sqlite3

    def preds(d: Path) -> dict:
        with sqlite3.connect(f"file:{d / 'store.sqlite'}?mode=ro", uri=True) as c:
            return {(k, i): (b, a) for k, i, b, a in c.execute(
                "SELECT cell, idx, pred_before, pred_after FROM predictions")}

    a, b = preds(run), preds(local)
    return sum(a[k] != b.get(k) for k in a), len(a)


def main() -> int:
    import requests

    from robustlab.resources import shared_data_dir
    from robustlab.studies.eval.config import default_perturbations

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-examples", type=int, default=None, help="first N of SST-2 test")
    ap.add_argument("--ray", action="store_true", help="serve through Ray Serve")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--loop-sample", type=int, default=500,
                    help="texts the sequential loop sends (its time is extrapolated)")
    ap.add_argument("--batch", action="store_true", help="also 32 texts per request")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--latency", type=float, default=0.0,
                    help="seconds the server waits per request before answering, as a remote "
                    "model's network and inference time would (0: the bare local server, "
                    "CPU-bound on this machine, so concurrency cannot pay)")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    sst = shared_data_dir() / "sst"
    if not (sst / "stsa.binary.test").exists():
        print(f"needs SST-2 at {sst}", file=sys.stderr)
        return 2
    perts = ",".join(default_perturbations())
    n = args.num_examples
    print(f"endpoint bench: SST-2 test{'' if n is None else f' (first {n})'}, "
          f"{len(default_perturbations())} perturbations, seed 0, concurrency "
          f"{args.concurrency}, server {'Ray Serve' if args.ray else 'uvicorn'}, latency "
          f"{args.latency * 1000:.0f} ms a request; load average "
          f"{os.getloadavg()}")
    out: dict[str, Any] = {"server": "ray-serve" if args.ray else "uvicorn", "n": n}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = tmp / "bow"
        robustlab("train", "--model", "bow", "--dataset", sst / "stsa.binary.train",
                  "--steps", args.steps, "--out", model)
        t0 = time.perf_counter()
        proc, url = start_server(model, args.ray, tmp)
        print(f"server up in {time.perf_counter() - t0:.1f} s")
        try:
            common = ["--dataset", sst / "stsa.binary.test", "--perturbations", perts,
                      "--seeds", "0", "--quiet", "--no-plots",
                      *([] if n is None else ["--num-examples", n])]
            local_s = robustlab("eval", "--model", model, *common, "--out", tmp / "local")
            out["local_s"] = local_s
            runs = [("one text a request", 1)] + ([("32 texts a request", 32)]
                                                  if args.batch else [])
            for name, bs in runs:
                card = tmp / f"card{bs}.toml"
                card.write_text(f'url = "{url}/predict"\nkind = "json"\n'
                                f'request_field = "{"texts" if bs > 1 else "text"}"\n'
                                f'response_field = "probs"\nbatch_size = {bs}\n',
                                encoding="utf-8")
                requests.post(f"{url}/reset", timeout=30)
                requests.post(f"{url}/control", json={"delay": args.latency}, timeout=30)
                s = robustlab("eval", "--model", card, *common, "--out", tmp / f"ep{bs}",
                              "--max-concurrency", args.concurrency)
                stats = requests.get(f"{url}/stats", timeout=60).json()
                summary = json.loads((tmp / f"ep{bs}" / "summary.json").read_text())
                same = differing(tmp / f"ep{bs}", tmp / "local")
                out[f"endpoint_b{bs}"] = r = {
                    "seconds": s, "requests": stats["requests"],
                    "texts": len(stats["texts"]), "max_asks": max(stats["texts"].values()),
                    "stored_requests": summary["endpoint"]["requests"], "same_as_local": same}
                print(f"robustlab eval, {name}: {s:.1f} s, {r['requests']} requests for "
                      f"{r['texts']} distinct texts, most asks of one text {r['max_asks']}, "
                      f"predictions differing from local: {same[0]} of {same[1]}")
                texts = list(stats["texts"])
            requests.post(f"{url}/reset", timeout=30)
            requests.post(f"{url}/control", json={"delay": args.latency}, timeout=30)
            sample = texts[: args.loop_sample]
            t0 = time.perf_counter()
            with requests.Session() as session:
                for t in sample:
                    session.post(f"{url}/predict", json={"text": t}, timeout=60).json()
            loop_s = time.perf_counter() - t0
            per = loop_s / len(sample)
            loop_all = per * len(texts)
            out.update(loop_sample=len(sample), loop_sample_s=loop_s,
                       loop_extrapolated_s=loop_all)
            print(f"sequential requests loop: {len(sample)} texts in {loop_s:.1f} s "
                  f"({per * 1000:.1f} ms each) -> {loop_all:.1f} s for all {len(texts)} "
                  "(extrapolated; it asks each distinct text once, like eval)")
            print(f"local eval (same BoW, no HTTP): {local_s:.1f} s")
            e1 = out["endpoint_b1"]["seconds"]
            asking = e1 - local_s
            print(f"speedup of robustlab eval over the loop: {loop_all / e1:.1f}x end to end "
                  "(eval's time includes perturbing 22 ways and Python start-up; the loop's "
                  f"only its requests); {loop_all / max(asking, 1e-9):.1f}x on the asking alone "
                  f"(eval minus the local eval: {asking:.1f} s)")
            out.update(speedup=loop_all / e1, speedup_asking=loop_all / max(asking, 1e-9))
        finally:
            proc.terminate()
            proc.wait(120)
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
