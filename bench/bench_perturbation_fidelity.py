"""How faithfully robustlab's built-in learnability perturbations realise NL-Augmenter's (issue 24).

Run: ``.venv/bin/python bench/bench_perturbation_fidelity.py [--before REV] [--data FILE]
[--json FILE]``

On the 6,920 SST-2 train sentences (``../shared/data/sst/stsa.binary.train``; ``--data`` takes any
``label text`` file, e.g. ``../shared/data/subj_cr_mpqa/custrev.all`` as held-out text: the
abbreviation table was revised looking at SST-2 train), four realisations of each perturbation,
side by side:

* ``papers``: NL-Augmenter's own transformation (``../shared/reference/nl-augmenter``, put on
  ``sys.path`` here) called as NL-Augmenter calls it: ``generate`` re-seeds with 0 before every
  sentence — robustlab's ``nlaugmenter:<folder>:reseed=False``, what ``--perturbations papers``
  runs and how the papers' data were made;
* ``nla/text``: the same class with a fresh seed per text (the adapter's default, ``reseed=True``,
  robustlab seed 0): NL-Augmenter's tables without the papers' shared random sequence;
* ``before``: robustlab's built-in at ``--before REV`` (default 93e9e68, before issue 24), its
  ``robustlab`` package extracted with ``git archive`` and run in a subprocess;
* ``after``: the built-in of this checkout.

Measures (robustlab seed 0 throughout):

* ``visual_attack_letters``: the share of substitutes that are a Latin diacritic variant of the
  same letter (NFD base letter = the original), and the share of the input's ASCII letters that
  still differ from the original after each tokenizer's normalisation — XLNet's default (NFKD,
  accents stripped: ``tokenizers`` ``NFKD`` + ``StripAccents``) and uncased BERT's
  (``tokenizers`` ``BertNormalizer(lowercase=True)``: NFD, accents stripped, lower-cased);
* ``butter_fingers_perturbation``: sentences changed, characters changed per sentence, the share
  of substitutes on a key touching the original's (QWERTY rows, staggered), and the share of
  sentences whose first typo falls at the most common position (the papers' realisation
  repeats one random sequence for every sentence: a positional regularity);
* ``insert_abbreviation``: sentences changed, words changed per sentence (whitespace tokens in
  non-equal ``difflib`` blocks), the share of NL-Augmenter's replacements (span → new words) the
  realisation reproduces, and the share of its own replacements NL-Augmenter also makes;
* every perturbation with an NL-Augmenter counterpart: sentences changed and mean character edit
  distance (``rapidfuzz`` Levenshtein when installed).

Everything printed is measured in this run; nothing is read from earlier runs. The script exits
with a message when the reference or the data is absent.
"""

from __future__ import annotations

import argparse
import collections
import difflib
import importlib
import json
import os
import random
import statistics
import subprocess
import sys
import tarfile
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("butter_fingers_perturbation", "random_upper_transformation", "insert_abbreviation",
         "whitespace_perturbation", "visual_attack_letters", "leet_letters")
CLASSES = {"butter_fingers_perturbation": "ButterFingersPerturbation",
           "random_upper_transformation": "RandomUpperPerturbation",
           "insert_abbreviation": "AbbreviationInsertionEN",
           "whitespace_perturbation": "WhitespacePerturbation",
           "visual_attack_letters": "VisualAttackLetters", "leet_letters": "LeetLetters"}
COLUMNS = ("papers", "nla/text", "before", "after")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def load_texts(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n").partition(" ")[2] for line in fh if line.strip()]


def robustlab_outputs(texts: list[str]) -> dict[str, list[str]]:
    """The built-ins of whichever ``robustlab`` is importable, seed 0."""
    from robustlab.perturbations import make

    return {name: make(name).perturb_batch(texts, seed=0) for name in NAMES}


def before_outputs(rev: str, texts_file: Path) -> dict[str, list[str]]:
    """:func:`robustlab_outputs` of robustlab at git revision ``rev`` (a subprocess)."""
    with tempfile.TemporaryDirectory(prefix="fidelity-before-") as tmp:
        archive = Path(tmp) / "src.tar"
        with open(archive, "wb") as fh:
            subprocess.run(["git", "-C", str(ROOT), "archive", rev, "robustlab"], stdout=fh,
                           check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        out = Path(tmp) / "outputs.json"
        env = {**os.environ, "PYTHONPATH": tmp}
        subprocess.run([sys.executable, __file__, "--emit", str(texts_file), str(out)], env=env,
                       check=True)
        return json.loads(out.read_text(encoding="utf-8"))


def nlaugmenter_outputs(texts: list[str], reseed: bool) -> dict[str, list[str]]:
    """NL-Augmenter's classes: as NL-Augmenter calls them (``reseed`` False), or through
    robustlab's adapter with a seed per text (``reseed`` True)."""
    from robustlab.integrations.nlaugmenter import from_nlaugmenter

    out = {}
    for name in NAMES:
        module = importlib.import_module(f"nlaugmenter.transformations.{name}.transformation")
        op = getattr(module, CLASSES[name])()
        pert = from_nlaugmenter(op, reseed=reseed, on_error="unchanged")
        out[name] = pert.perturb_batch(texts, seed=0)
    return out


# ---- measures ---------------------------------------------------------------------------------


def _touching() -> dict[str, set[str]]:
    """Letter -> letters on keys touching it (staggered QWERTY rows), for the measure only."""
    out: dict[str, set[str]] = {}
    for r, row in enumerate(_ROWS):
        for c, key in enumerate(row):
            near = {row[i] for i in (c - 1, c + 1) if 0 <= i < len(row)}
            if r > 0:
                near |= {_ROWS[r - 1][i] for i in (c, c + 1) if 0 <= i < len(_ROWS[r - 1])}
            if r + 1 < len(_ROWS):
                near |= {_ROWS[r + 1][i] for i in (c - 1, c) if 0 <= i < len(_ROWS[r + 1])}
            out[key] = near
    return out


def char_diffs(texts: list[str], outs: list[str]) -> list[list[tuple[int, str, str]]]:
    """Per sentence, the (position, old, new) of substituted characters (equal lengths only)."""
    diffs = []
    for t, o in zip(texts, outs, strict=True):
        diffs.append([(i, a, b) for i, (a, b) in enumerate(zip(t, o, strict=True)) if a != b]
                     if len(t) == len(o) else [])
    return diffs


def measure_visual(texts: list[str], outs: list[str]) -> dict[str, float]:
    from tokenizers import normalizers

    xlnet = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents()])
    bert = normalizers.BertNormalizer(lowercase=True)
    cache: dict[tuple[int, str], str] = {}

    def norm(which: int, ch: str) -> str:
        key = (which, ch)
        if key not in cache:
            cache[key] = (xlnet if which == 0 else bert).normalize_str(ch)
        return cache[key]

    letters = subs = diacritic = still_x = still_b = 0
    for t, o in zip(texts, outs, strict=True):
        assert len(t) == len(o), "visual_attack_letters substitutes one character for one"
        for a, b in zip(t, o, strict=True):
            if not (a.isascii() and a.isalpha()):
                continue
            letters += 1
            if a == b:
                continue
            subs += 1
            base = unicodedata.normalize("NFD", b)[0]
            diacritic += base.lower() == a.lower() and len(unicodedata.normalize("NFD", b)) > 1
            still_x += norm(0, b) != norm(0, a)
            still_b += norm(1, b) != norm(1, a)
    return {"letters substituted %": 100 * subs / letters,
            "substitutes: Latin diacritic variant %": 100 * diacritic / subs,
            "letters still differing after NFKD+strip (XLNet) %": 100 * still_x / letters,
            "letters still differing after uncased BERT %": 100 * still_b / letters}


def measure_butter(texts: list[str], outs: list[str]) -> dict[str, float]:
    touching = _touching()
    diffs = char_diffs(texts, outs)
    subs = [(a, b) for d in diffs for _, a, b in d if a.isalpha()]
    touch = sum(b.lower() in touching.get(a.lower(), ()) for a, b in subs)
    firsts = collections.Counter(d[0][0] for d in diffs if d)
    pos, n = firsts.most_common(1)[0] if firsts else (-1, 0)
    return {"sentences changed %": 100 * sum(map(bool, diffs)) / len(texts),
            "characters changed per sentence": sum(map(len, diffs)) / len(texts),
            "substitutes on a touching key %": 100 * touch / max(1, len(subs)),
            "first typos at the modal position %": 100 * n / max(1, sum(firsts.values())),
            "  that position (1-based character)": pos + 1}


def replacements(text: str, out: str) -> list[tuple[int, int, str]]:
    """(start, end, new words) of each replaced span of whitespace tokens; equal-length
    replaced blocks are split token by token (``difflib`` merges neighbouring edits)."""
    a, b = text.split(), out.split()
    reps: list[tuple[int, int, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 - i1 == j2 - j1:
            reps += [(i, i + 1, b[j1 + k]) for k, i in enumerate(range(i1, i2)) if a[i] != b[j1 + k]]
        else:
            reps.append((i1, i2, " ".join(b[j1:j2])))
    return reps


def measure_abbreviation(texts: list[str], outs: list[str],
                         reference: list[str]) -> dict[str, float]:
    mine = [replacements(t, o) for t, o in zip(texts, outs, strict=True)]
    ref = [replacements(t, r) for t, r in zip(texts, reference, strict=True)]
    both = sum(len(set(m) & set(r)) for m, r in zip(mine, ref, strict=True))
    return {"sentences changed %": 100 * sum(o != t for t, o in zip(texts, outs, strict=True))
            / len(texts),
            "words changed per sentence": sum(i2 - i1 for m in mine for i1, i2, _ in m)
            / len(texts),
            "NL-Augmenter's replacements reproduced %": 100 * both / max(1, sum(map(len, ref))),
            "own replacements NL-Augmenter also makes %": 100 * both / max(1, sum(map(len, mine)))}


def measure_edits(texts: list[str], outs: list[str]) -> dict[str, float]:
    try:
        from rapidfuzz.distance import Levenshtein
    except ImportError:  # optional: only the share changed is printed then
        dist = None
    else:
        dist = statistics.fmean(Levenshtein.distance(t, o) for t, o in zip(texts, outs,
                                                                            strict=True))
    out = {"sentences changed %": 100 * sum(o != t for t, o in zip(texts, outs, strict=True))
           / len(texts)}
    if dist is not None:
        out["mean edit distance (chars)"] = dist
    return out


def _table(title: str, per_col: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """Print measure rows x realisation columns; return {measure: {column: value}}."""
    cols = list(per_col)
    table: dict[str, dict[str, float]] = {}
    for col, vals in per_col.items():
        for measure, v in vals.items():
            table.setdefault(measure, {})[col] = round(v, 2)
    print(f"\n{title}")
    print(f"  {'measure':58s}" + "".join(f"{c:>10s}" for c in cols))
    for measure, row in table.items():
        print(f"  {measure:58s}" + "".join(f"{row.get(c, float('nan')):10.2f}" for c in cols))
    return table


def report(texts: list[str], cols: dict[str, dict[str, list[str]]]) -> dict[str, Any]:
    """name -> {measure: {column: value}}, printed as tables."""
    ref = cols["papers"]["insert_abbreviation"]
    results = {
        "visual_attack_letters": _table("visual_attack_letters", {
            c: measure_visual(texts, o["visual_attack_letters"]) for c, o in cols.items()}),
        "butter_fingers_perturbation": _table("butter_fingers_perturbation", {
            c: measure_butter(texts, o["butter_fingers_perturbation"]) for c, o in cols.items()}),
        "insert_abbreviation": _table("insert_abbreviation", {
            c: measure_abbreviation(texts, o["insert_abbreviation"], ref)
            for c, o in cols.items()}),
    }
    for name in NAMES:
        results[f"{name} (edits)"] = _table(f"{name}: edits", {
            c: measure_edits(texts, o[name]) for c, o in cols.items()})
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", default="93e9e68", metavar="REV",
                    help="git revision of the 'before' built-ins (default 93e9e68)")
    ap.add_argument("--data", metavar="FILE", type=Path,
                    help="a `label text` file (default ../shared/data/sst/stsa.binary.train)")
    ap.add_argument("--json", metavar="FILE", help="also write the measures to FILE")
    ap.add_argument("--emit", nargs=2, metavar=("TEXTS", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.emit:  # the child of before_outputs: robustlab from PYTHONPATH
        texts = json.loads(Path(args.emit[0]).read_text(encoding="utf-8"))
        Path(args.emit[1]).write_text(json.dumps(robustlab_outputs(texts)), encoding="utf-8")
        return 0
    sys.path.insert(0, str(ROOT))
    from robustlab.resources import shared_dir

    shared = shared_dir()
    reference = shared / "reference" / "nl-augmenter"
    data = args.data or shared / "data" / "sst" / "stsa.binary.train"
    if not (reference / "nlaugmenter").is_dir() or not data.exists():
        print(f"needs NL-Augmenter's reference at {reference} and the data {data}; skipped")
        return 0
    sys.path.insert(0, str(reference))
    texts = load_texts(data)
    state = random.getstate()
    cols: dict[str, dict[str, list[str]]] = {}
    cols["papers"] = nlaugmenter_outputs(texts, reseed=False)
    cols["nla/text"] = nlaugmenter_outputs(texts, reseed=True)
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as fh:
        json.dump(texts, fh)
    try:
        cols["before"] = before_outputs(args.before, Path(fh.name))
    finally:
        os.unlink(fh.name)
    cols["after"] = robustlab_outputs(texts)
    assert random.getstate() == state
    print(f"{data}, {len(texts)} sentences; columns: papers = NL-Augmenter reseed=False "
          f"(seed 0), nla/text = NL-Augmenter with a seed per text, before = robustlab "
          f"{args.before}, after = this checkout (robustlab seed 0)")
    results = report(texts, cols)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
