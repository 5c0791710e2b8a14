"""Peak memory of `robustlab augment` as -n grows: it must not grow with -n x rows.

Runs the console script on a generated TSV (``--rows`` rows of 12 words) for each ``-n`` and
prints rows written, wall and CPU seconds (user + system of the command) and peak RSS. The peak
RSS is read by a small launcher process (``wait4``): Linux keeps a process's high-water mark
across fork and exec, so measuring from this process would report its own size.

    .venv/bin/python bench/bench_augment_memory.py [--rows 2000] [-p char_swap,leet_letters] \
        [--train-file] [N ...]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = ("the movie was good bad great terrible fine plot actors scene film story").split()
LAUNCHER = ("import os, subprocess, sys\n"
            "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL)\n"
            "_, status, usage = os.wait4(p.pid, 0)\n"
            "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, "
            "usage.ru_utime + usage.ru_stime)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", nargs="*", type=int, default=[1, 100, 1000, 10000])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("-p", "--perturbation", default="char_swap")
    ap.add_argument("--train-file", action="store_true", help="also write --train-file")
    args = ap.parse_args()
    exe = Path(sys.executable).parent / "robustlab"
    rng = random.Random(0)
    print(f"augment -p {args.perturbation} on {args.rows} rows; load "
          f"{os.getloadavg()[0]:.2f} (1-min average)")
    print(f"{'-n':>7s} {'rows out':>11s} {'wall s':>8s} {'cpu s':>8s} {'peak RSS MiB':>13s}")
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "in.tsv"
        with open(src, "w", encoding="utf-8") as f:
            f.write("sentence\tlabel\n")
            for i in range(args.rows):
                f.write(" ".join(rng.choice(WORDS) for _ in range(12)) + f"\t{i % 2}\n")
        for n in args.n:
            out = Path(tmp) / "out.tsv"
            cmd = [str(exe), "augment", "-p", args.perturbation, "-n", str(n), "-i", str(src),
                   "-o", str(out), "--no-progress"]
            if args.train_file:
                cmd += ["--train-file", str(Path(tmp) / "train.tsv")]
            t0 = time.perf_counter()
            res = subprocess.run([sys.executable, "-S", "-c", LAUNCHER, *cmd],
                                 capture_output=True, text=True, check=True)
            dt = time.perf_counter() - t0
            rc, maxrss, cpu = res.stdout.split()
            if int(rc) != 0:
                print(f"{n:>7d} exit {rc}")
                continue
            with open(out, "rb") as f:
                rows = sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
            print(f"{n:>7d} {rows - 1:>11,d} {dt:>8.1f} {float(cpu):>8.1f} "
                  f"{int(maxrss) / 1024:>13.0f}")
            out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
