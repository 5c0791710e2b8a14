"""Sentences per second for every built-in perturbation, and for TextAttack's equivalents.

Run: ``.venv/bin/python bench/bench_perturbations.py [--only NAME ...] [--ta-budget SECONDS]``

Data: SST-2 train (``../shared/data/sst/stsa.binary.train``, short sentences) and the 1,000-review
IMDB sample (``../shared/data/textfooler_1k/imdb.txt``, long documents); the script exits cleanly
with a message when they are absent. Everything runs in one process on one core. Each robustlab
perturbation does one full seeded pass (``perturb_batch``, per-text seeding included) after
``setup()`` and a 50-text warm-up; the lemma and synonym caches are emptied before each pass, so
filling them is part of the measured cost (as TextAttack, which has no such cache, pays it too). TextAttack's equivalents (character swap/insertion/
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


def _clear_caches() -> None:
    """Start every measured pass cold: lemma/synonym caches must not carry over between datasets."""
    from robustlab.adapters import grammar, word_perturbations

    for fn in (word_perturbations.wordnet_synonyms, grammar.verb_forms, grammar.is_adverb,
               grammar._is_participle, grammar._nounish):
        fn.cache_clear()


def rate_robustlab(name: str, texts: list[str]) -> float:
    _clear_caches()
    p = make(name)
    p.perturb_batch(texts[:50], seed=1)  # setup() and first-import costs are not per-text work
    t0 = time.process_time()
    p.perturb_batch(texts, seed=0)
    return len(texts) / (time.process_time() - t0)


def _timed(fn, texts: list[str], budget: float) -> tuple[float, int]:
    """Texts per CPU second of ``fn`` over ``texts``, stopping after ``budget`` CPU seconds."""
    for t in texts[:5]:
        fn(t)
    done, t0 = 0, time.process_time()
    for t in texts:
        fn(t)
        done += 1
        if time.process_time() - t0 > budget:
            break
    return done / (time.process_time() - t0), done


def rate_textattack(name: str, texts: list[str], budget: float) -> dict[str, tuple[float, int]]:
    """Two ways through TextAttack: its transformation asked for one random word index of an
    AttackedText (the cheapest TextAttack path to the same edit), and its Augmenter with one word
    swapped per text (what a TextAttack user runs; it transforms every word, then picks one)."""
    import random

    import textattack.transformations as T
    from textattack.augmentation import Augmenter
    from textattack.shared import AttackedText

    cls_name, kwargs = TEXTATTACK_EQUIVALENTS[name]
    transformation = getattr(T, cls_name)(**kwargs)
    pick = random.Random(0)

    def direct(text: str) -> None:
        at = AttackedText(text)
        if at.words:
            transformation(at, indices_to_modify={pick.randrange(len(at.words))})

    aug = Augmenter(transformation=transformation, pct_words_to_swap=0.0,
                    transformations_per_example=1)
    return {"transformation": _timed(direct, texts, budget), "augmenter": _timed(aug.augment, texts, budget)}


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
        t0 = time.perf_counter()
        ensure_textattack()  # imports textattack
        print(f"(import textattack: {time.perf_counter() - t0:.1f} s, not counted)")

    print(f"load average at start: {load_avg()}  (cores: {os.cpu_count()})")
    for ds, texts in datasets.items():
        mean_len = sum(map(len, texts)) / len(texts)
        print(f"{ds}: {len(texts)} texts, mean {mean_len:.0f} characters")
    header = f"{'perturbation':30s} {'level':9s} {'SST-2/s':>9s} {'IMDB/s':>8s}"
    print(header)
    print("-" * len(header))
    ours: dict[str, dict[str, float]] = {}
    for name in names:
        ours[name] = {ds: rate_robustlab(name, texts) for ds, texts in datasets.items()}
        level = available()[name].level
        print(f"{name:30s} {level:9s} {ours[name]['SST-2']:9.0f} {ours[name]['IMDB']:8.0f}", flush=True)
    if use_ta:
        print("\nThe same work through TextAttack (texts per CPU second; ratio = robustlab / TextAttack)")
        header = (f"{'perturbation':14s} {'data':6s} {'robustlab':>10s} {'TA transf.':>11s} {'ratio':>7s}"
                  f" {'TA Augmenter':>13s} {'ratio':>7s}  TextAttack class")
        print(header)
        print("-" * len(header))
        for name in (n for n in names if n in TEXTATTACK_EQUIVALENTS):
            for ds, texts in datasets.items():
                ta = rate_textattack(name, texts, args.ta_budget)
                (tr, n1), (au, n2) = ta["transformation"], ta["augmenter"]
                note = "" if n1 == n2 == len(texts) else f" (timed on {n1}/{n2} of {len(texts)} texts)"
                print(f"{name:14s} {ds:6s} {ours[name][ds]:10.0f} {tr:11.1f} {ours[name][ds] / tr:6.1f}x"
                      f" {au:13.1f} {ours[name][ds] / au:6.0f}x  {TEXTATTACK_EQUIVALENTS[name][0]}{note}",
                      flush=True)
    print(f"load average at end: {load_avg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
