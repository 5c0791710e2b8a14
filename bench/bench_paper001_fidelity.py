"""Paper 001's perturbations against what the paper ran (issue 24), measured on held-out SST-2.

Prints, for docs/perturbations.md:
* misspelling: the share of its replacements that are a Wikipedia common misspelling of the word
  replaced, and the share of SST-2 sentences the Wikipedia list covers (a listed word in them);
* negation / verb_tense / singular_plural_verb: the share of sentences left unchanged, and of
  sentences with a PTB clitic ('s 're 'm 'd 'll 've) whose verb they edit;
* word-level perturbations: outputs in which a hyphenated compound, a clitic or an
  alphanumeric token was split (must be 0);
* the precision of each rule from the hand judgements in tests/fixtures/judgements (dev half,
  held-out half, SST-2 / TREC).

Needs the shared data ($ROBUSTLAB_SHARED or ../shared). Run:
``ROBUSTLAB_SHARED=/path/to/shared python bench/bench_paper001_fidelity.py [--n 2000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

from robustlab.perturbations import make
from robustlab.perturbations.char_perturbations import misspellings_by_correction
from robustlab.perturbations.text_utils import TOKEN_RE
from robustlab.resources import misspellings_file, shared_data_dir

JUDGED = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "judgements"
CLITIC = re.compile(r"(?<=\s)'(?:s|re|m|d|ll|ve)\b")


def sst_heldout(n: int) -> list[str]:
    d = shared_data_dir() / "sst"
    lines = []
    for name in ("stsa.binary.dev", "stsa.binary.test"):
        lines += [ln[2:].strip() for ln in (d / name).read_text(encoding="utf-8").splitlines()]
    return [s for s in lines if s][:n]


def misspelling(texts: list[str]) -> None:
    path, kind, origin = misspellings_file()
    if kind != "wikipedia":
        print(f"misspelling: skipped ({origin})")
        return
    share = _wiki_share(texts, path)
    # the codespell fallback (what robustlab used before issue 24), measured the same way
    saved = {k: os.environ.pop(k, None) for k in ("ROBUSTLAB_MISSPELLINGS", "ROBUSTLAB_SHARED")}
    os.environ["ROBUSTLAB_SHARED"] = str(Path(tempfile.mkdtemp()))
    misspellings_by_correction.cache_clear()
    try:
        fallback = _wiki_share(texts, path)
    finally:
        os.environ.pop("ROBUSTLAB_SHARED")
        os.environ.update({k: v for k, v in saved.items() if v is not None})
        misspellings_by_correction.cache_clear()
    print(f"misspelling: {share}\n  codespell fallback: {fallback}")


def _wiki_share(texts: list[str], path: Path) -> str:
    """Share of ``misspelling``'s replacements (seed 0) that the Wikipedia list at ``path``
    gives for the word replaced, and the share of sentences the list covers."""
    wiki = json.loads(path.read_text(encoding="utf-8"))
    listed = {(w.strip().lower(), r.strip().lower()) for w, rs in wiki.items() for r in rs}
    corrections = {r.strip().lower() for rs in wiki.values() for r in rs}
    covered = sum(any(m.group().lower() in corrections for m in TOKEN_RE.finditer(t)) for t in texts)
    p = make("misspelling")
    hits = total = 0
    for t in texts:
        out = p.perturb(t, seed=0)
        a = [m.group() for m in TOKEN_RE.finditer(t)]
        b = [m.group() for m in TOKEN_RE.finditer(out)]
        for x, y in zip(a, b, strict=False):
            if x != y:
                total += 1
                hits += (y.lower(), x.lower()) in listed
    return (f"{hits}/{total} = {100 * hits / max(total, 1):.1f} % of replacements are a "
            f"Wikipedia common misspelling of the word; the Wikipedia list covers "
            f"{covered}/{len(texts)} = {100 * covered / len(texts):.1f} % of SST-2 sentences")


def verbs(texts: list[str]) -> None:
    with_clitic = [t for t in texts if CLITIC.search(" " + t)]
    for name in ("negation", "verb_tense", "singular_plural_verb"):
        p = make(name)
        t0 = time.perf_counter()
        outs = p.perturb_batch(texts, seed=0)
        secs = time.perf_counter() - t0
        noop = sum(o == t for o, t in zip(outs, texts, strict=True))
        clitic_edit = sum(1 for t in with_clitic
                          if CLITIC.search(" " + t) and _clitic_changed(t, p.perturb(t, seed=0)))
        print(f"{name}: unchanged {noop}/{len(texts)} = {100 * noop / len(texts):.1f} %; a clitic "
              f"verb edited in {clitic_edit}/{len(with_clitic)} sentences with one (pps=1); "
              f"{len(texts) / secs:.0f} texts/s")


def _clitic_changed(src: str, out: str) -> bool:
    """The edit touches a clitic verb ("it 's" -> "it 's not" / "it was" / "it are")."""
    a, b = src.split(), out.split()
    for i, w in enumerate(a):
        if w in ("'s", "'re", "'m", "'d", "'ll", "'ve"):
            if i >= len(b) or b[i] != w or (i + 1 < len(b) and b[i + 1] == "not"
                                            and (i + 1 >= len(a) or a[i + 1] != "not")):
                return True
    return False


def splits(texts: list[str]) -> None:
    keep = [t for t in texts if re.search(r"\w-\w|\d|\s'(?:s|re|m|d|ll|ve)\b", t)]
    for name in ("word_delete", "word_repeat", "word_order", "word_synonym", "negation",
                 "verb_tense", "singular_plural_verb", "misspelling"):
        p = make(name, pps=4)
        bad = 0
        for t in keep:
            out = p.perturb(t, seed=0)
            before = {m.group() for m in TOKEN_RE.finditer(t)}
            whole = [w for w in before if "-" in w or any(c.isdigit() for c in w)]
            after = {m.group() for m in TOKEN_RE.finditer(out)}
            new = after - before
            bad += any(_split(w, new) for w in whole if w not in after) or any(
                n.startswith("'") and n not in ("'s", "'re", "'m", "'d", "'ll", "'ve") for n in new)
        print(f"{name}: {bad}/{len(keep)} outputs split a compound, clitic or alphanumeric (pps=4)")


def _split(whole: str, new: set[str]) -> bool:
    """``whole`` (gone from the output) was torn apart: a new token is a run of its hyphen
    pieces ("one-of" of "one-of-a-kind"), or holds a digit or a prefix of an alphanumeric
    ("vitamin1" or "B" of "B1")."""
    if "-" in whole:
        return any(f"-{n}-" in f"-{whole}-" for n in new)
    return any(any(c.isdigit() for c in n) or whole.startswith(n) for n in new)


def judgements() -> None:
    print("precision from the hand judgements (correct / judged):")
    for path in sorted(JUDGED.glob("*.tsv")):
        rows = [ln.split("\t") for ln in path.read_text(encoding="utf-8").splitlines()
                if ln and not ln.startswith("#")]
        cells = []
        for half in ("dev", "heldout"):
            for ds in ("sst2", "trec"):
                sel = [r for r in rows if r[0] == half and r[1] == ds]
                ok = sum(r[5] == "correct" for r in sel)
                cells.append(f"{half}/{ds} {ok}/{len(sel)}")
        ok = sum(r[5] == "correct" for r in rows)
        held = [r for r in rows if r[0] == "heldout"]
        hok = sum(r[5] == "correct" for r in held)
        print(f"  {path.stem}: {'; '.join(cells)}; all {ok}/{len(rows)} = {100 * ok / len(rows):.0f} %;"
              f" held-out {hok}/{len(held)} = {100 * hok / len(held):.0f} %")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2693, help="held-out SST-2 sentences (dev, then test)")
    args = ap.parse_args()
    if not (shared_data_dir() / "sst").is_dir():
        print(f"error: needs the shared data at {shared_data_dir()}", file=sys.stderr)
        return 2
    texts = sst_heldout(args.n)
    print(f"SST-2 held-out sentences: {len(texts)}")
    judgements()
    misspelling(texts)
    verbs(texts)
    splits(texts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
