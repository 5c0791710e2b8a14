"""The symmetric word pairs p of counterfactual bias (paper 002, Sec. 4): the built-in gendered
pairs, pairs chained from CheckList's lexicons, or a pair file. Below the configuration
(:mod:`.config` resolves ``--pairs`` with it) and the study (:mod:`.bias`)."""

from __future__ import annotations

import json
from pathlib import Path

from robustlab.errors import InputError

BUILTIN_PAIRS: tuple[tuple[str, str], ...] = (
    ("he", "she"), ("his", "her"), ("him", "her"), ("himself", "herself"), ("man", "woman"),
    ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("father", "mother"),
    ("son", "daughter"), ("brother", "sister"), ("husband", "wife"), ("king", "queen"),
    ("actor", "actress"), ("actors", "actresses"), ("mr", "mrs"), ("gentleman", "lady"),
    ("male", "female"), ("guy", "gal"), ("uncle", "aunt"),
)
CHECKLIST_LEXICONS = ("nationality", "religion_adj", "sexual_adj")


def checklist_pairs(per_lexicon: int = 5) -> list[tuple[str, str]]:
    """Pairs from CheckList's lexicons (nationality, religion, sexual orientation) when installed.

    Each lexicon's first ``per_lexicon + 1`` single-word entries are chained into pairs
    (a, b), (b, c), ...; (gay, straight) is always included, as in the paper's Fig. 7.
    """
    import importlib.util

    spec = importlib.util.find_spec("checklist")
    if spec is None or not spec.submodule_search_locations:
        return []
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "lexicons" / "basic.json"
    if not path.is_file():
        return []
    lex = json.loads(path.read_text(encoding="utf-8"))
    out: list[tuple[str, str]] = []
    for name in CHECKLIST_LEXICONS:
        words = [w.lower() for w in lex.get(name, []) if isinstance(w, str) and w.isalpha()]
        words = words[: per_lexicon + 1]
        out += list(zip(words, words[1:], strict=False))
    if ("gay", "straight") not in out:
        out.append(("gay", "straight"))
    return out


def read_pairs(path: str | Path) -> list[tuple[str, str]]:
    """A pair file: one pair per line, ``p1 p2`` / ``p1<TAB>p2`` / ``p1,p2``; # comments."""
    from robustlab.data.files import decode_bytes

    p = Path(path)
    if not p.is_file():
        raise InputError(f"--pairs file {p} does not exist")
    try:
        text = decode_bytes(p.read_bytes(), p, "utf-8")  # a binary file: one line naming it
    except OSError as exc:
        raise InputError(f"--pairs file {p}: cannot read ({exc.strerror or exc})") from None
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = [x.strip() for x in line.replace(",", " ").replace("\t", " ").split()]
        if len(parts) != 2 or not all(x.isalpha() for x in parts):
            raise InputError(f"{p}, line {n}: expected two words 'p1 p2', got {line!r}")
        out.append((parts[0].lower(), parts[1].lower()))
    if not out:
        raise InputError(f"--pairs file {p} holds no pairs")
    return out


def resolve_pairs(spec: str | None) -> list[tuple[str, str]]:
    """``builtin`` (default), ``checklist``, ``all`` (both) or a pair file."""
    spec = spec or "builtin"
    if spec == "builtin":
        return list(BUILTIN_PAIRS)
    if spec == "checklist":
        pairs = checklist_pairs()
        if not pairs:
            raise InputError("--pairs checklist: CheckList is not installed (pip install checklist)")
        return pairs
    if spec == "all":
        return list(BUILTIN_PAIRS) + checklist_pairs()
    return read_pairs(spec)
