"""Sentences per second for every built-in perturbation, and for TextAttack's equivalents.

Run: ``.venv/bin/python bench/bench_perturbations.py [--section all|rates|nlaugmenter]
[--only NAME ...] [--ta-budget SECONDS] [--repeats N]``

Section ``nlaugmenter`` (issue 13): each learnability perturbation against NL-Augmenter's
transformation of the same name on the 6,920 SST-2 train sentences, in one process, interleaved
(ours, theirs, ours, theirs, ...), medians of ``--repeats`` CPU-time passes, printed as a ratio.
NL-Augmenter is not installable, so its six transformations are re-implemented below (written
for this bench: the same algorithm, parameters and per-call seeding as NL-Augmenter's code —
``random.seed(self.seed)`` / ``np.random.seed`` at every ``generate`` — over robustlab's tables,
which only changes *what* a letter becomes, not the work); when ``nlaugmenter`` is importable its
real classes are timed instead. duplicate_punctuations and shuffle_word have no NL-Augmenter
equivalent: they are compared with a plain ``str.translate`` loop (dict table) and a plain
``random.shuffle`` loop (one generator, no per-text seeding). The no-op rate (texts left
unchanged, seed 0) is printed too (docs/perturbations.md).

Section ``rates``:

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
import functools
import importlib
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from robustlab.perturbations import available, make  # noqa: E402
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
    from robustlab.perturbations import grammar, word_perturbations

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


# ---- NL-Augmenter's transformations, re-implemented (see the module docstring) ----------------
#
# Each function is NL-Augmenter's generate() for one sentence and max_outputs=1: the same control
# flow, the same calls into ``random`` / ``numpy.random`` (reseeded at every call, as there) and the
# same string building. Only the character tables are robustlab's.

_NLA_RANDOM = random.Random()


@functools.cache
def _nla_key_approx() -> dict[str, str]:
    """butter_fingers' key_approx: each letter maps to itself plus the keys robustlab's typos
    reach (about as many as NL-Augmenter's lists hold)."""
    from robustlab.perturbations.lexicons import keyboard_typos

    table = {k: k + v for k, v in keyboard_typos().items() if k.islower()}
    table[" "] = " "
    return table


def nla_butter_fingers(text: str, seed: int = 0, prob: float = 0.05) -> str:
    rnd = _NLA_RANDOM
    rnd.seed(seed)
    key_approx = _nla_key_approx()
    prob_of_typo = int(prob * 100)
    butter_text = ""
    for letter in text:
        lcletter = letter.lower()
        if lcletter not in key_approx.keys():
            new_letter = lcletter
        else:
            if rnd.choice(range(0, 100)) <= prob_of_typo:
                new_letter = rnd.choice(key_approx[lcletter])
            else:
                new_letter = lcletter
        if not lcletter == letter:
            new_letter = new_letter.upper()
        butter_text += new_letter
    return butter_text


_NLA_NP: Any = None


def nla_random_upper(text: str, seed: int = 0, corrupt_proportion: float = 0.1) -> str:
    global _NLA_NP
    import numpy as np

    if _NLA_NP is None:
        _NLA_NP = np.random.RandomState()  # the generator behind np.random.seed/choice
    _NLA_NP.seed(seed)
    positions = _NLA_NP.choice(range(len(text)), int(len(text) * corrupt_proportion), False)
    new_sentence = [letter if index not in positions else letter.upper()
                    for index, letter in enumerate(text)]
    return "".join(new_sentence)


def _nla_whitespace(char: str, random_num: float, remove_prob: float = 0.1,
                    add_prob: float = 0.05) -> list[str]:
    if char.isspace() and random_num < remove_prob:
        return []
    perturbed_char = [char]
    if (not char.isspace()) and random_num < add_prob:
        perturbed_char.append(" ")
    return perturbed_char


def nla_whitespace(text: str, seed: int = 0) -> str:
    rnd = _NLA_RANDOM
    rnd.seed(seed)
    perturbed_text: list[str] = []
    for char in text:
        random_num = rnd.random()
        perturbed_text += _nla_whitespace(char, random_num, remove_prob=0.1, add_prob=0.05)
    return "".join(perturbed_text)


@functools.cache
def _nla_visual_mappings() -> dict[str, list[str]]:
    """visual_attack_letters' complete_mappings: every member of a letter's family maps to the
    rest of the family and the letter (built the way NL-Augmenter builds it)."""
    from robustlab.perturbations.lexicons import visual_lookalikes

    letter_mappings = {k: list(v) for k, v in visual_lookalikes().items()}
    complete: dict[str, list[str]] = {}
    for key_letter, family in letter_mappings.items():
        for letter in family:
            complete[letter] = list(set(family) - {letter} | {key_letter})
        complete[key_letter] = family
    return complete


def nla_visual_attack_letters(text: str, seed: int = 0, perturb_pct: float = 0.5) -> str:
    rnd = _NLA_RANDOM
    rnd.seed(seed)
    letter_mappings = _nla_visual_mappings()
    sentence_list = list(text)
    for idx, letter in enumerate(sentence_list):
        if letter in letter_mappings and rnd.random() < perturb_pct:
            sentence_list[idx] = rnd.choice(letter_mappings[letter])
    return "".join(sentence_list)


def nla_leet_letters(text: str, seed: int = 0, max_leet: float = 0.5) -> str:
    from robustlab.perturbations.lexicons import LEET

    rnd = _NLA_RANDOM
    rnd.seed(seed)
    max_leet_replacements = int(max_leet * len(text))
    leet_candidates = []
    for idx, letter in enumerate(text):
        if letter in LEET:
            leet_candidates.append((idx, LEET[letter]))
    leet_replacements = rnd.choices(leet_candidates, k=max_leet_replacements) \
        if leet_candidates else []
    sentence_list = list(text)
    for idx, leet in leet_replacements:
        sentence_list[idx] = str(leet)
    return "".join(sentence_list)


# insert_abbreviation: NL-Augmenter's "grammaire" engine: a character-loop tokenizer (spaces and
# a punctuation set split tokens; "." "-" "+" stay inside a token when a word character follows),
# rules indexed on their first token, longest rule first, each rule element a function call,
# matched spans replaced from last to first, the label capitalised after a capitalised token.
_NLA_PUNCT = {ord(c) for c in "!\"#&'()*+,-./:;<=>?@[\\]^`{|}~"} | {
    0xA0, 0xAB, 0xBB, 0x2013, 0x2014, 0x2018, 0x2019, 0x201C, 0x201D, 0x2026}
_NLA_SPACES = {9, 10, 13, 32, 160, 0x202F, 0x3000}


def _nla_checknext(s: str, i: int, sz: int) -> bool:
    return i < sz and ord(s[i]) not in _NLA_PUNCT and ord(s[i]) not in _NLA_SPACES


def _nla_tokenize(s: str) -> tuple[list[str], list[list[int]], list[str]]:
    begin, tokens, lower, offsets, atoken = 0, [], [], [], False
    sz = len(s)
    if sz and ord(s[-1]) not in _NLA_SPACES:
        s += " "
        sz += 1
    for i in range(sz):
        c = s[i]
        if ord(c) in _NLA_SPACES:
            if atoken:
                tok = s[begin:i]
                tokens.append(tok)
                lower.append(tok.lower())
                offsets.append([begin, i])
                atoken = False
        elif ord(c) in _NLA_PUNCT:
            if atoken:
                if c in {".", "-", "+"} and _nla_checknext(s, i + 1, sz):
                    continue
                tok = s[begin:i]
                tokens.append(tok)
                lower.append(tok.lower())
                offsets.append([begin, i])
                atoken = False
            elif c in {"+", "-"} and _nla_checknext(s, i + 1, sz):
                begin, atoken = i, True
                continue
            tokens.append(c)
            lower.append(c)
            offsets.append([i, i + 1])
            continue
        elif not atoken:
            atoken, begin = True, i
    return lower, offsets, tokens


def _nla_regularone(tokens: list[str], sz: int, element: list, pos: int) -> int:
    return pos + 1 if tokens[pos] == element[1] else -1


@functools.cache
def _nla_grammar() -> dict[str, list[tuple[str, list[list]]]]:
    """head token -> [(label, rule elements after the head)], longest rule first."""
    from robustlab.perturbations.lexicons import ABBREVIATIONS

    heads: dict[str, list[tuple[str, list[list]]]] = {}
    for phrase, label in ABBREVIATIONS.items():
        toks = _nla_tokenize(phrase)[0]
        heads.setdefault(toks[0], []).append((label, [[_nla_regularone, t] for t in toks[1:]]))
    for rules in heads.values():
        rules.sort(key=lambda r: -len(r[1]))
    return heads


def nla_insert_abbreviation(text: str, seed: int = 0) -> str:
    heads = _nla_grammar()
    tokens, offsets, raw = _nla_tokenize(text)
    sz = len(tokens)
    results = []
    i = 0
    while i < sz:
        rules = heads.get(tokens[i])
        if rules is not None:
            for label, rule in rules:
                pos, ok = i + 1, True
                for element in rule:
                    if pos == sz:
                        ok = False
                        break
                    npos = element[0](tokens, sz, element, pos)
                    if npos == -1:
                        ok = False
                        break
                    pos = npos
                if ok:
                    head = label[0].upper() + label[1:] if raw[i][0].isupper() else label
                    results.append([head, [offsets[i][0], offsets[pos - 1][1]]])
                    i = pos - 1
                    break
        i += 1
    results.reverse()
    out = text
    for label, (a, b) in results:
        out = out[:a] + label + out[b:]
    return out


#: robustlab name -> (NL-Augmenter folder, class, re-implementation)
NLAUGMENTER_EQUIVALENTS: dict[str, tuple[str, str, Callable[[str], str]]] = {
    "butter_fingers_perturbation": ("butter_fingers_perturbation", "ButterFingersPerturbation",
                                    nla_butter_fingers),
    "random_upper_transformation": ("random_upper_transformation", "RandomUpperPerturbation",
                                    nla_random_upper),
    "whitespace_perturbation": ("whitespace_perturbation", "WhitespacePerturbation",
                                nla_whitespace),
    "insert_abbreviation": ("insert_abbreviation", "AbbreviationInsertionEN",
                            nla_insert_abbreviation),
    "visual_attack_letters": ("visual_attack_letters", "VisualAttackLetters",
                              nla_visual_attack_letters),
    "leet_letters": ("leet_letters", "LeetLetters", nla_leet_letters),
}


def _plain_translate_loop() -> Callable[[list[str]], list[str]]:
    from robustlab.perturbations.lexicons import punctuation_doubling_table

    table = punctuation_doubling_table()  # the dict str.maketrans would build
    return lambda texts: [t.translate(table) for t in texts]


def _plain_shuffle_loop() -> Callable[[list[str]], list[str]]:
    def run(texts: list[str]) -> list[str]:
        rng = random.Random(0)
        out = []
        for t in texts:
            words = t.split()
            rng.shuffle(words)
            out.append(" ".join(words))
        return out

    return run


def reference_for(name: str) -> tuple[str, Callable[[list[str]], list[str]]] | None:
    """(description, batch function) NL-Augmenter's equivalent of ``name`` or its baseline."""
    if name == "duplicate_punctuations":
        return "plain str.translate loop (dict table)", _plain_translate_loop()
    if name == "shuffle_word":
        return "plain random.shuffle loop (one generator)", _plain_shuffle_loop()
    if name not in NLAUGMENTER_EQUIVALENTS:
        return None
    folder, cls_name, fn = NLAUGMENTER_EQUIVALENTS[name]
    try:  # the real thing when it is on the path
        module = importlib.import_module(f"nlaugmenter.transformations.{folder}.transformation")
        op = getattr(module, cls_name)(seed=0)
        return f"NL-Augmenter {cls_name}", lambda texts: [op.generate(t)[0] for t in texts]
    except Exception:
        return (f"NL-Augmenter {cls_name} (re-implemented here)",
                lambda texts: [fn(t) for t in texts])


def compare_nlaugmenter(names: list[str], texts: list[str], repeats: int) -> None:
    """Interleaved CPU-time passes of robustlab and the reference; medians and their ratio."""
    rows = []
    for name in names:
        ref = reference_for(name)
        if ref is None:
            continue
        desc, ref_fn = ref
        p = make(name)
        p.perturb_batch(texts[:50], seed=1)  # setup, tables and first imports are not per text
        ref_fn(texts[:50])
        ours, theirs = [], []
        for r in range(repeats):
            t0 = time.process_time()
            out = p.perturb_batch(texts, seed=r)
            ours.append(time.process_time() - t0)
            t0 = time.process_time()
            ref_fn(texts)
            theirs.append(time.process_time() - t0)
        noop = sum(a == b for a, b in zip(texts, p.perturb_batch(texts, seed=0), strict=True))
        del out
        mo, mt = statistics.median(ours), statistics.median(theirs)
        rows.append((name, len(texts) / mo, len(texts) / mt, mt / mo, noop / len(texts), desc))
        print(f"{name:30s} {len(texts) / mo:10.0f} {len(texts) / mt:10.0f} {mt / mo:7.1f}x"
              f" {noop / len(texts):7.1%}  {desc}", flush=True)
    return None


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
    ap.add_argument("--section", choices=("all", "rates", "nlaugmenter"), default="all")
    ap.add_argument("--repeats", type=int, default=7,
                    help="interleaved passes per perturbation in the nlaugmenter section")
    args = ap.parse_args(argv)

    data = shared_data_dir()
    sst_path, imdb_path = data / "sst" / "stsa.binary.train", data / "textfooler_1k" / "imdb.txt"
    if args.section in ("all", "nlaugmenter"):
        if not sst_path.exists():
            print(f"skipped: needs {sst_path} (the team's shared data is absent)")
            return 0
        sst = load_labelled(sst_path)
        names = args.only or [n for n, c in available().items() if c.source == "000"]
        print(f"robustlab vs NL-Augmenter on SST-2 train ({len(sst)} sentences), texts per CPU "
              f"second, medians of {args.repeats} interleaved passes")
        print(f"load average at start: {load_avg()}  (cores: {os.cpu_count()})")
        header = (f"{'perturbation':30s} {'robustlab':>10s} {'reference':>10s} {'ratio':>8s}"
                  f" {'no-op':>7s}  reference")
        print(header)
        print("-" * len(header))
        compare_nlaugmenter(names, sst, args.repeats)
        print(f"load average at end: {load_avg()}")
        if args.section == "nlaugmenter":
            return 0
        print()
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
