"""An endpoint eval against a sequential ``requests`` loop and local predictions (issue 34).

A BoW trained by ``robustlab train`` on SST-2 train is served over HTTP by
``tests/endpoint_server.py`` (``--ray``: through Ray Serve; default: the same FastAPI app under
uvicorn), and the same 22 perturbations of SST-2 test (seed 0) are evaluated three ways, in one
run:

* ``robustlab eval --model card.toml --max-concurrency 8`` (one text per request, so the
  comparison with the loop is request for request);
* a plain sequential ``requests.post`` loop over the same distinct texts (timed on
  ``--loop-sample`` texts and extrapolated to all of them, said so in the output);
* ``robustlab eval --model BOW_DIR``: the same predictions made locally;
* the server's own pace: a bare ``httpx.AsyncClient`` sending the same distinct texts
  ``--concurrency`` at a time (no store, no retries, nothing perturbed): what no client at that
  concurrency can beat against this server on this machine;
* the perturbing alone: a process that imports robustlab and perturbs the same texts the same 22
  ways (no model, no store), timed inside (its start-up is not counted): what no eval can
  beat, however fast its asking.

The server waits ``--latencies`` seconds a request (a remote model's network and inference time,
so the two local cores are not what is measured); for each latency the three methods run
``--rounds`` times, interleaved (the order rotates each round, so a change in the machine's
load falls on all three). It prints, per run, the wall time, the requests the server received,
the duplicates (texts asked more than once: must be 0) and the load average, then the
ratios: the loop over eval end to end (eval also perturbs 22 ways), and the loop over the
perturbing alone (the ratio eval would reach if its asking cost nothing); target: no duplicate
and >= 5x the sequential loop at concurrency 8.

    PYTHONPATH=. python bench/bench_endpoint.py [--num-examples N] [--ray] [--latencies 0.05,0.2]
        [--rounds R] [--json FILE]
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


def mean(rows: list[dict[str, Any]], method: str) -> float:
    xs = [x["seconds"] for x in rows if x["method"] == method]
    return sum(xs) / len(xs) if xs else float("nan")


def load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def perturb_only(n: int | None) -> int:
    """``--perturb-only``: perturb the first ``n`` SST-2 test sentences the default 22 ways, as
    eval's cells do, and print the seconds as JSON (the bench runs it as a process)."""
    from robustlab.data.datasets import load_examples
    from robustlab.perturbations.registry import parse_spec
    from robustlab.resources import shared_data_dir
    from robustlab.studies.eval.config import default_perturbations
    from robustlab.studies.eval.study import _perturbed_chunks

    examples = load_examples(str(shared_data_dir() / "sst" / "stsa.binary.test"), n=n)
    texts = [t for t, _ in examples]
    t0 = time.perf_counter()
    each = {}
    for spec in default_perturbations():
        t = time.perf_counter()
        for _ in _perturbed_chunks(parse_spec(spec), texts, 0, 1):
            pass
        each[spec] = time.perf_counter() - t
    print(json.dumps({"seconds": time.perf_counter() - t0, "each": each}))
    return 0


def main() -> int:
    import requests

    from robustlab.resources import shared_data_dir
    from robustlab.studies.eval.config import default_perturbations

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--num-examples", type=int, default=None, help="first N of SST-2 test")
    ap.add_argument("--ray", action="store_true", help="serve through Ray Serve")
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--loop-sample", type=int, default=300,
                    help="texts the sequential loop sends (its time is extrapolated)")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--latencies", default="0.05,0.2",
                    help="seconds the server waits per request, comma-separated")
    ap.add_argument("--rounds", type=int, default=1, help="interleaved rounds per latency")
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument("--perturb-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.perturb_only:
        return perturb_only(args.num_examples)
    sst = shared_data_dir() / "sst"
    if not (sst / "stsa.binary.test").exists():
        print(f"needs SST-2 at {sst}", file=sys.stderr)
        return 2
    perts = ",".join(default_perturbations())
    n = args.num_examples
    latencies = [float(x) for x in args.latencies.split(",") if x.strip()]
    print(f"endpoint bench: SST-2 test{'' if n is None else f' (first {n})'}, "
          f"{len(default_perturbations())} perturbations, seed 0, concurrency "
          f"{args.concurrency}, server {'Ray Serve' if args.ray else 'uvicorn'}, latencies "
          f"{', '.join(f'{x * 1000:.0f} ms' for x in latencies)}, {args.rounds} round(s); "
          f"load average {load()}", flush=True)
    out: dict[str, Any] = {"server": "ray-serve" if args.ray else "uvicorn", "n": n,
                           "concurrency": args.concurrency, "runs": []}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        model = tmp / "bow"
        robustlab("train", "--model", "bow", "--dataset", sst / "stsa.binary.train",
                  "--steps", args.steps, "--out", model)
        t0 = time.perf_counter()
        proc, url = start_server(model, args.ray, tmp)
        out["server_start_s"] = time.perf_counter() - t0
        print(f"server up in {out['server_start_s']:.1f} s (load {load()})", flush=True)
        card = tmp / "card.toml"
        card.write_text(f'url = "{url}/predict"\nkind = "json"\nrequest_field = "text"\n'
                        'response_field = "probs"\nbatch_size = 1\n', encoding="utf-8")
        common = ["--dataset", sst / "stsa.binary.test", "--perturbations", perts,
                  "--seeds", "0", "--quiet", "--no-plots",
                  *([] if n is None else ["--num-examples", n])]
        texts: list[str] = []
        k = 0

        def serve(latency: float) -> None:
            requests.post(f"{url}/reset", timeout=60)
            requests.post(f"{url}/control", json={"delay": latency}, timeout=60)

        def run_local(latency: float) -> dict[str, Any]:
            s = robustlab("eval", "--model", model, *common, "--out", tmp / f"local{k}")
            return {"seconds": s}

        def run_endpoint(latency: float) -> dict[str, Any]:
            serve(latency)
            run = tmp / f"ep{k}"
            s = robustlab("eval", "--model", card, *common, "--out", run,
                          "--max-concurrency", args.concurrency)
            stats = requests.get(f"{url}/stats", timeout=120).json()
            ep = json.loads((run / "summary.json").read_text())["endpoint"]
            texts[:] = list(stats["texts"])
            local = next((tmp / f"local{j}" for j in range(k, -1, -1)
                          if (tmp / f"local{j}" / "store.sqlite").exists()), None)
            same = differing(run, local) if local else None
            return {"seconds": s, "requests": stats["requests"], "texts": len(stats["texts"]),
                    "duplicates": sum(c - 1 for c in stats["texts"].values()),
                    "robustlab_requests": ep["requests"], "differing_from_local": same}

        def run_perturb(latency: float) -> dict[str, Any]:
            done = subprocess.run([sys.executable, __file__, "--perturb-only",
                                   *([] if n is None else ["--num-examples", str(n)])],
                                  env={**os.environ, "PYTHONPATH": str(ROOT)},
                                  capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"perturbing alone failed: {done.stderr[-1500:]}")
            got = json.loads(done.stdout.strip().splitlines()[-1])
            slow = max(got["each"], key=got["each"].get)
            return {"seconds": got["seconds"], "slowest": slow,
                    "slowest_s": got["each"][slow]}

        def run_bare(latency: float) -> dict[str, Any]:
            if not texts:
                return {}
            import asyncio

            import httpx

            serve(latency)

            async def ask_all() -> float:
                sem = asyncio.Semaphore(args.concurrency)
                limits = httpx.Limits(max_connections=args.concurrency)
                async with httpx.AsyncClient(limits=limits, timeout=120) as client:
                    async def one(t: str) -> None:
                        async with sem:
                            r = await client.post(f"{url}/predict", json={"text": t})
                            r.raise_for_status()
                            r.json()

                    t0 = time.perf_counter()
                    await asyncio.gather(*(one(t) for t in texts))
                    return time.perf_counter() - t0

            return {"seconds": asyncio.run(ask_all()), "texts": len(texts)}

        def run_loop(latency: float) -> dict[str, Any]:
            if not texts:  # the endpoint run has not told us the texts yet
                return {}
            serve(latency)
            sample = texts[: args.loop_sample]
            t0 = time.perf_counter()
            with requests.Session() as session:
                for t in sample:
                    session.post(f"{url}/predict", json={"text": t}, timeout=60).json()
            took = time.perf_counter() - t0
            return {"sample": len(sample), "sample_s": took,
                    "seconds": took / len(sample) * len(texts), "extrapolated_to": len(texts)}

        methods = [("local", run_local), ("endpoint", run_endpoint), ("loop", run_loop),
                   ("perturb", run_perturb), ("bare", run_bare)]
        try:
            for latency in latencies:
                for r in range(args.rounds):
                    turn = r + latencies.index(latency)
                    order = methods[turn % 5:] + methods[: turn % 5]
                    if not texts:  # the loop needs the texts an endpoint run asked
                        order.sort(key=lambda m: m[0] in ("loop", "bare"))
                    for name, fn in order:
                        k += 1
                        before = load()
                        row = fn(latency)
                        if not row:
                            continue
                        row.update(method=name, latency=latency, round=r, load_before=before,
                                   load_after=load())
                        out["runs"].append(row)
                        extra = (f", {row['requests']} requests for {row['texts']} texts, "
                                 f"{row['duplicates']} duplicates, robustlab says "
                                 f"{row['robustlab_requests']}, predictions differing from "
                                 f"local: {row['differing_from_local']}"
                                 if name == "endpoint" else
                                 f" ({row['sample']} texts in {row['sample_s']:.1f} s, "
                                 f"extrapolated to {row['extrapolated_to']})"
                                 if name == "loop" else
                                 f" (of which {row['slowest']} {row['slowest_s']:.1f} s)"
                                 if name == "perturb" else
                                 f" ({row['texts']} texts, {args.concurrency} at a time)"
                                 if name == "bare" else "")
                        print(f"  {latency * 1000:.0f} ms, round {r}: {name:8s} "
                              f"{row['seconds']:7.1f} s{extra}  (load {before} -> "
                              f"{row['load_after']})", flush=True)
                rows = [x for x in out["runs"] if x["latency"] == latency]
                e, lo, lp, pt, bare = (mean(rows, m) for m in ("endpoint", "local", "loop",
                                                               "perturb", "bare"))
                summary = {"latency": latency, "endpoint_s": e, "local_s": lo, "loop_s": lp,
                           "perturb_s": pt, "bare_s": bare, "speedup_end_to_end": lp / e,
                           "speedup_if_asking_were_free": lp / pt,
                           "speedup_bare_client": lp / bare}
                out.setdefault("summary", []).append(summary)
                print(f"{latency * 1000:.0f} ms a request: sequential loop {lp:.1f} s, eval "
                      f"{e:.1f} s, local eval {lo:.1f} s, perturbing alone {pt:.1f} s, bare "
                      f"concurrent client {bare:.1f} s -> {lp / e:.1f}x end to end (bounds: "
                      f"{lp / pt:.1f}x by the perturbing alone, {lp / bare:.1f}x by the "
                      f"server's pace at concurrency {args.concurrency})", flush=True)
        finally:
            proc.terminate()
            proc.wait(120)
    print(f"load average after: {load()}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
