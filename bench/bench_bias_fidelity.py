"""Benchmark: the bias neighbourhood as paper 002 ran it (issue 24), before and after.

Three measurements on SST-2 dev with the real small fill-mask model (../shared/models/minilm-mlm):

1. **Gendered leakage.** Level-3 neighbourhoods (BiasEvaluator.levels, masked-LM source) of
   X_test for gendered pairs; the share of level-3 sentences that gain a gendered word absent
   from their original. Judged by an independent yardstick (the union of WinoBias' and
   GN-GloVe's gendered word lists in ../shared/data/bias_wordlists, read here only) and by
   robustlab's own list. *Before*: only the pair's words blacklisted; *after*: the pair's words
   plus robustlab's gendered list (``--blacklist`` default). Also prints the list's coverage of
   the yardstick.
2. **Language-model check on X_test**: |X_test| per pair without and with the authors' check.
3. **Patch words**: SO-Beam's patch choice (PatchSelector, counter-fitted table, a BoW model
   trained here, cached under ``--work``) on the first ``--patch-n`` dev sentences without and
   with the check: every patch that swaps an English function word (NLTK stopword) for a word
   that is not one — (to, de), (a, una), … — listed for the reader to judge, and the most
   frequent patches.

    .venv/bin/python bench/bench_bias_fidelity.py            # defaults below
    .venv/bin/python bench/bench_bias_fidelity.py --quick    # fewer pairs/sentences
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def sst_dev(shared: Path) -> list[tuple[str, int]]:
    out = []
    for line in (shared / "data" / "sst" / "stsa.binary.dev").read_text().splitlines():
        label, _, text = line.partition(" ")
        out.append((text, int(label)))
    return out


def yardstick(shared: Path) -> set[str]:
    """The union of WinoBias' and GN-GloVe's gendered words (single words only)."""
    d = shared / "data" / "bias_wordlists"
    words: set[str] = set()
    for name in ("gn_glove_male_word_file.txt", "gn_glove_female_word_file.txt"):
        words |= {w.strip().lower() for w in (d / name).read_text().splitlines()}
    for name in ("winobias_extra_gendered_words.txt", "winobias_generalized_swaps.txt"):
        for line in (d / name).read_text().splitlines():
            words |= {w.strip().lower() for w in line.split("\t")}
    return {w for w in words if w.isalpha()}


def leakage(args, texts, mlm) -> None:
    from robustlab.studies.second_order.bias import BiasEvaluator
    from robustlab.studies.second_order.gendered import GENDERED_WORDS

    ref = yardstick(args.shared)
    cover = len(ref & GENDERED_WORDS) / len(ref)
    print(f"\n== 1. gendered leakage at k={args.k} (masked LM {mlm.name}, budget {args.budget}, "
          f"parents {args.parents}) ==")
    print(f"robustlab's list: {len(GENDERED_WORDS)} words; covers {cover:.1%} of the "
          f"WinoBias+GN-GloVe yardstick ({len(ref)} words; the rest are mostly anatomy, "
          "hormones, animals and rare forms)")
    pairs = [tuple(p.split("/")) for p in args.pairs.split(",")]
    src = mlm  # one model and one cache: the blacklist filters cached candidates
    print(f"{'pair':>14s} {'blacklist':>10s} {'n(k)':>6s} {'gain (yardstick)':>17s} "
          f"{'gain (own list)':>16s} {'s':>6s}")
    totals: dict[str, list[int]] = {"before": [0, 0, 0], "after": [0, 0, 0]}
    examples: collections.Counter[str] = collections.Counter()
    for pair in pairs:
        for label, extra in (("before", set()), ("after", set(GENDERED_WORDS))):
            src.blacklist = {*pair, *extra}
            ev = BiasEvaluator(lambda ts: None, src, budget=args.budget, parents=args.parents,
                               seed=0)
            base = ev.test_set(texts, pair)
            t0 = time.perf_counter()
            level, _ = ev.levels(base, pair, args.k)
            dt = time.perf_counter() - t0
            gain_ref = gain_own = 0
            for words, i in level:
                new = {w.lower() for w in words} - {w.lower() for w in _origin(base, words, i)}
                gain_ref += bool(new & ref)
                gain_own += bool(new & GENDERED_WORDS)
                if label == "before":
                    examples.update(new & ref)
            n = len(level)
            t = totals[label]
            t[0] += n
            t[1] += gain_ref
            t[2] += gain_own
            print(f"{'/'.join(pair):>14s} {label:>10s} {n:6d} {gain_ref / max(n, 1):16.2%} "
                  f"{gain_own / max(n, 1):16.2%} {dt:6.0f}", flush=True)
    for label, (n, g_ref, g_own) in totals.items():
        print(f"{'all pairs':>14s} {label:>10s} {n:6d} {g_ref / max(n, 1):16.2%} "
              f"{g_own / max(n, 1):16.2%}")
    print("gendered words gained most often before:",
          ", ".join(f"{w} ({c})" for w, c in examples.most_common(10)))


def _origin(base, words, i):
    """The X_test sentence ``words`` descends from: same length, same pair position, fewest
    differing words (neighbours keep the word count and never move the pair word)."""
    best, best_d = None, None
    for w, j in base:
        if j != i or len(w) != len(words):
            continue
        d = sum(a != b for a, b in zip(w, words, strict=True))
        if best_d is None or d < best_d:
            best, best_d = w, d
    return best or []


def lm_test_sets(args, texts, mlm) -> None:
    from robustlab.studies.second_order.bias import BiasEvaluator
    from robustlab.studies.second_order.neighbourhood import LanguageModelCheck
    from robustlab.studies.second_order.pairs import BUILTIN_PAIRS

    print("\n== 2. X_test without / with the language-model check (PLL >= original - 1.5, "
          "<= 20 words) ==")
    check = LanguageModelCheck(mlm)
    print(f"{'pair':>20s} {'X_test':>7s} {'checked':>8s} {'kept':>6s}")
    tot = [0, 0, 0]
    t0 = time.perf_counter()
    for pair in BUILTIN_PAIRS:
        plain = BiasEvaluator(lambda ts: None, mlm).test_set(texts, pair)
        if not plain:
            continue
        ev = BiasEvaluator(lambda ts: None, mlm, lm_check=check)
        before = check.checked
        kept, rejected = ev.checked_test_set(texts, pair)
        checked = check.checked - before
        tot[0] += len(plain)
        tot[1] += checked
        tot[2] += len(kept)
        print(f"{'/'.join(pair):>20s} {len(plain):7d} {checked:8d} {len(kept):6d}")
    print(f"{'all':>20s} {tot[0]:7d} {tot[1]:8d} {tot[2]:6d}  "
          f"({time.perf_counter() - t0:.0f}s, {mlm.lm_calls} masked sentences in total)")


def patches(args, data, mlm) -> None:
    import numpy as np

    from robustlab.models.registry import load_model, make_model
    from robustlab.resources import stopwords
    from robustlab.studies.second_order.neighbourhood import LanguageModelCheck
    from robustlab.studies.second_order.patch_words import PatchSelector

    table = args.shared / "data" / "synonyms" / "counterfitted_neighbors.json"
    saved = args.work / f"bow-{args.steps}"
    t0 = time.perf_counter()
    if (saved / "robustlab_model.json").exists():
        model = load_model(str(saved))
    else:
        train = []
        for line in (args.shared / "data" / "sst" / "stsa.binary.train").read_text().splitlines():
            label, _, text = line.partition(" ")
            train.append((text, int(label)))
        model = make_model("bow").fit([t for t, _ in train], [y for _, y in train],
                                      steps=args.steps)
        model.save(saved)
    acc = float(np.mean(model.predict([t for t, _ in data]) == np.array([y for _, y in data])))
    print(f"\n== 3. SO-Beam patch words, first {args.patch_n} dev sentences (BoW, {args.steps} "
          f"steps, dev accuracy {acc:.3f}, ready in {time.perf_counter() - t0:.0f}s; "
          f"table {table.name}) ==")
    stop = set(stopwords())
    texts = [t for t, _ in data[: args.patch_n]]
    for label, check in (("without check", None), ("with check", LanguageModelCheck(mlm))):
        sel = PatchSelector(str(table), lm_check=check)
        t0 = time.perf_counter()
        got = [sel.choose(t.split(), model.predict_proba) for t in texts]
        dt = time.perf_counter() - t0
        chosen = [p for p in got if p is not None]
        # an English function word swapped for a word that is not one: (to, de), (a, una), …
        # listed in full so that a reader judges them
        fn = [p for p in chosen if p.p1 in stop and p.p2 not in stop]
        common = collections.Counter((p.p1, p.p2) for p in chosen).most_common(6)
        print(f"{label:>14s}: {len(chosen)} patched, {len(texts) - len(chosen)} without a "
              f"patch; function word -> other word: {len(fn)}; {dt:.0f}s")
        print(f"{'':>14s}  those: " + ", ".join(
            f"({a}, {b}) x{c}" for (a, b), c in
            collections.Counter((p.p1, p.p2) for p in fn).most_common()))
        print(f"{'':>14s}  most frequent: "
              + ", ".join(f"({a}, {b}) x{c}" for (a, b), c in common))
        if check is not None:
            print(f"{'':>14s}  check calls {check.checked}, rejected {check.rejected}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=None, help="the shared folder")
    ap.add_argument("--pairs", default="he/she,his/her,man/woman,actor/actress")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--budget", type=int, default=400)
    ap.add_argument("--parents", type=int, default=40)
    ap.add_argument("--patch-n", type=int, default=200)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--only", choices=["leakage", "lm", "patches"], default=None)
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench_bias_fidelity"),
                    help="where the trained BoW model is cached")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    from robustlab.resources import masked_lm_origin, shared_dir
    from robustlab.studies.second_order.neighbourhood import MaskedLMSource

    args.shared = args.shared or shared_dir()
    if args.quick:
        args.pairs, args.budget, args.parents, args.patch_n = "he/she", 200, 20, 50
    try:
        path, origin = masked_lm_origin()
    except Exception as exc:  # noqa: BLE001 - a benchmark reports and stops
        print(f"bench_bias_fidelity: {exc}", file=sys.stderr)
        return 2
    print(f"masked LM {path} ({origin}); torch threads {os.environ.get('OMP_NUM_THREADS', '-')}; "
          f"load {os.getloadavg()[0]:.1f}")
    mlm = MaskedLMSource(str(path), device="cpu")
    data = sst_dev(args.shared)
    texts = [t for t, _ in data]
    if args.only in (None, "leakage"):
        leakage(args, texts, mlm)
    if args.only in (None, "lm"):
        lm_test_sets(args, texts, mlm)
    if args.only in (None, "patches"):
        patches(args, data, mlm)
    print(json.dumps({"lm_calls": mlm.lm_calls, "lm_seconds": round(mlm.lm_seconds, 1),
                      "load": round(os.getloadavg()[0], 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
