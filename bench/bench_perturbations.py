"""Sentences per second for every built-in perturbation, and for TextAttack's equivalents.

Run: ``.venv/bin/python bench/bench_perturbations.py [--only NAME ...] [--ta-budget SECONDS]``

Data: SST-2 train (``../shared/data/sst/stsa.binary.train``, short sentences) and the 1,000-review
IMDB sample (``../shared/data/textfooler_1k/imdb.txt``, long documents); the script exits cleanly
with a message when they are absent. Everything runs in one process on one core. Each robustlab
perturbation does one full seeded pass (``perturb_batch``, per-text seeding included) after
``setup()`` and a 50-text warm-up; caches that fill during the pass (WordNet synonyms, lemma
lookups) are part of the measured cost. TextAttack's equivalents (character swap/insertion/
deletion, WordNet swap) run through ``textattack.augmentation.Augmenter`` with one word changed per
text (the same work as pps=1), for at most ``--ta-budget`` CPU seconds per dataset; the rate is over
the texts it finished. Rates are texts per *CPU* second of this process (``time.process_time``),
i.e. one-core throughput, because the machine is shared; the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustlab.adapters import available, make  # noqa: E402
from robustlab.resources import ensure_textattack, shared_data_dir  # noqa: E402

#: robustlab name -> (TextAttack transformation class, constructor kwargs) doing the same edit
TEXTATTACK_EQUIVALENTS = {
    "char_swap": ("WordSwapNeighboringCharacterSwap", {}),
    "char_insert": ("WordSwapRandomCharacterInsertion",
                    {"skip_first_char": True, "skip_last_char": True}),
    "char_delete": ("WordSwapRandomCharacterDeletion",
                    {"skip_first_char": True, "skip_last_char": True}),
    "word_synonym": ("WordSwapWordNet", {}),
}


def load_labelled(path: Path) -> list[str]:
    """Texts of a ``<label> <text>`` file."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            label, _, text = line.rstrip("\n").partition(" ")
            if text:
                out.append(text)
    return out


def rate_robustlab(name: str, texts: list[str]) -> float:
    p = make(name)
    p.perturb_batch(texts[:50], seed=1)  # setup() and first-import costs are not per-text work
    t0 = time.process_time()
    p.perturb_batch(texts, seed=0)
    return len(texts) / (time.process_time() - t0)


def rate_textattack(name: str, texts: list[str], budget: float) -> tuple[float, int]:
    import textattack.transformations as T
    from textattack.augmentation import Augmenter

    cls_name, kwargs = TEXTATTACK_EQUIVALENTS[name]
    aug = Augmenter(transformation=getattr(T, cls_name)(**kwargs), pct_words_to_swap=0.0,
                    transformations_per_example=1)
    for t in texts[:5]:
        aug.augment(t)
    done, t0 = 0, time.process_time()
    for t in texts:
        aug.augment(t)
        done += 1
        if time.process_time() - t0 > budget:
            break
    return done / (time.process_time() - t0), done


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", nargs="*", help="perturbation names (default: every built-in)")
    ap.add_argument("--ta-budget", type=float, default=20.0,
                    help="seconds TextAttack may spend per perturbation and dataset (default 20)")
    ap.add_argument("--no-textattack", action="store_true", help="skip the TextAttack column")
    args = ap.parse_args(argv)

    data = shared_data_dir()
    sst_path, imdb_path = data / "sst" / "stsa.binary.train", data / "textfooler_1k" / "imdb.txt"
    if not sst_path.exists() or not imdb_path.exists():
        print(f"skipped: needs {sst_path} and {imdb_path} (the team's shared data is absent)")
        return 0
    datasets = {"SST-2": load_labelled(sst_path), "IMDB": load_labelled(imdb_path)}
    names = args.only or [n for n, c in available().items() if c.source in ("000", "001")]
    use_ta = not args.no_textattack and any(n in TEXTATTACK_EQUIVALENTS for n in names)
    if use_ta:
        ensure_textattack()
        t0 = time.perf_counter()
        import textattack  # noqa: F401
        print(f"(import textattack: {time.perf_counter() - t0:.1f} s, not counted)")

    print(f"load average at start: {load_avg()}  (cores: {os.cpu_count()})")
    for ds, texts in datasets.items():
        mean_len = sum(map(len, texts)) / len(texts)
        print(f"{ds}: {len(texts)} texts, mean {mean_len:.0f} characters")
    header = (f"{'perturbation':30s} {'level':9s} {'SST-2/s':>9s} {'IMDB/s':>8s}"
              f" {'TA SST-2/s':>10s} {'ratio':>6s} {'TA IMDB/s':>9s} {'ratio':>6s}")
    print(header)
    print("-" * len(header))
    for name in names:
        level = available()[name].level
        ours = {ds: rate_robustlab(name, texts) for ds, texts in datasets.items()}
        row = f"{name:30s} {level:9s} {ours['SST-2']:9.0f} {ours['IMDB']:8.0f}"
        if use_ta and name in TEXTATTACK_EQUIVALENTS:
            for ds in ("SST-2", "IMDB"):
                ta, n = rate_textattack(name, datasets[ds], args.ta_budget)
                row += f" {ta:10.0f} {ours[ds] / ta:5.0f}x" if ds == "SST-2" else \
                    f" {ta:9.1f} {ours[ds] / ta:5.0f}x"
                row += "" if n == len(datasets[ds]) else f" [{ds}: TA timed on {n} texts]"
        print(row, flush=True)
    print(f"load average at end: {load_avg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
