"""Behaviour of paper 001's character-level perturbations (Moradi & Samwald, section 4.1)."""

from __future__ import annotations

import re

import pytest

from robustlab.perturbations import PerturbationError, make
from robustlab.perturbations.char_perturbations import misspellings_by_correction
from robustlab.perturbations.lexicons import keyboard_neighbours
from robustlab.resources import codespell_dictionary

TEXT = "Who was the first governor of Alaska? We definitely received the letters from Juneau."
CHAR_NAMES = ["char_insert", "char_delete", "char_keyboard", "char_swap", "char_repeat",
              "misspelling", "letter_case"]


def _changed_words(a: str, b: str) -> list[tuple[str, str]]:
    wa, wb = re.findall(r"\S+", a), re.findall(r"\S+", b)
    assert len(wa) == len(wb), "a character edit must not add or remove words"
    return [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]


@pytest.mark.parametrize("name", CHAR_NAMES)
@pytest.mark.parametrize("pps", [1, 2, 3, 4])
def test_pps_bounds_the_number_of_edited_words(name: str, pps: int) -> None:
    p = make(name, pps=pps)
    counts = {len(_changed_words(TEXT, p.perturb(TEXT, seed=s))) for s in range(20)}
    assert max(counts) <= pps
    assert max(counts) >= 1
    if name not in ("misspelling",):  # enough eligible words: pps is reached
        assert max(counts) == pps


@pytest.mark.parametrize("name", CHAR_NAMES)
@pytest.mark.parametrize("bad", [0, 5, -1, 2.5, "2", True])
def test_pps_out_of_range_is_a_clear_error(name: str, bad: object) -> None:
    with pytest.raises(PerturbationError, match="pps .*1 to 4"):
        make(name, pps=bad)


def test_insertion_adds_one_inner_letter() -> None:
    p = make("char_insert")
    for s in range(30):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        core_old, core_new = old.strip("?."), new.strip("?.")
        assert len(core_new) == len(core_old) + 1 and len(core_old) >= 3
        assert core_new[0] == core_old[0] and core_new[-1] == core_old[-1]


def test_deletion_keeps_first_and_last_letter() -> None:
    p = make("char_delete")
    for s in range(30):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        core_old, core_new = old.strip("?."), new.strip("?.")
        assert len(core_new) == len(core_old) - 1 and len(core_old) >= 3
        assert core_new[0] == core_old[0] and core_new[-1] == core_old[-1]
    assert p.perturb("I am ok") == "I am ok"  # no word of 3+ letters: a reported no-op


def test_keyboard_replacement_uses_adjacent_keys() -> None:
    p = make("char_keyboard")
    for s in range(30):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        [(a, b)] = [(x, y) for x, y in zip(old, new, strict=True) if x != y]
        assert b in keyboard_neighbours()[a]


def test_swap_exchanges_adjacent_letters() -> None:
    p = make("char_swap")
    for s in range(30):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        diff = [i for i, (x, y) in enumerate(zip(old, new, strict=True)) if x != y]
        assert len(diff) == 2 and diff[1] == diff[0] + 1
        assert sorted(old) == sorted(new)
    assert p.perturb("aa ooo") == "aa ooo"  # swapping equal letters would be a hidden no-op


def test_repetition_doubles_an_inner_letter() -> None:
    p = make("char_repeat")
    for s in range(30):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        i = next(i for i, (x, y) in enumerate(zip(old, new, strict=False)) if x != y)
        assert new == old[:i] + old[i - 1] + old[i:] or new == old[: i + 1] + old[i:]
        assert new[-1] == old[-1]


def test_misspelling_falls_back_to_codespell_by_name(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.delenv("ROBUSTLAB_MISSPELLINGS", raising=False)
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(tmp_path))  # no Wikipedia list there
    misspellings_by_correction.cache_clear()
    try:
        table = misspellings_by_correction()
        assert "recieve" in table["receive"] and "definately" in table["definitely"]
        assert len(table) > 10_000  # the real list, not a toy one
        lines = codespell_dictionary().read_text(encoding="utf-8").splitlines()
        known = {tuple(line.split("->")) for line in lines}
        p = make("misspelling", pps=4)
        for s in range(20):
            for old, new in _changed_words(TEXT, p.perturb(TEXT, seed=s)):
                core_old, core_new = old.strip("?."), new.strip("?.")
                assert (core_new.lower(), core_old.lower()) in known
        assert "FALLBACK package codespell" in capsys.readouterr().err  # said, not silent
        assert make("misspelling").perturb("Definitely.", seed=1)[0] == "D"  # case kept
    finally:
        misspellings_by_correction.cache_clear()


def test_misspelling_uses_the_wikipedia_list(shared_data, monkeypatch) -> None:
    import json

    path = shared_data / "misspellings" / "wikipedia_common_misspellings.json"
    monkeypatch.setenv("ROBUSTLAB_MISSPELLINGS", str(path))
    misspellings_by_correction.cache_clear()
    try:
        wiki = json.loads(path.read_text(encoding="utf-8"))
        listed = {(w.lower(), r.lower()) for w, rs in wiki.items() for r in rs}
        p = make("misspelling", pps=4)
        assert p.signature() == "misspelling/v3(pps=4)"  # new list, new tokens: new rule version
        n = 0
        for s in range(20):
            for old, new in _changed_words(TEXT, p.perturb(TEXT, seed=s)):
                assert (new.strip("?.").lower(), old.strip("?.").lower()) in listed
                n += 1
        assert n >= 40
        assert "Britain" in p.perturb("Britain", seed=0) or p.perturb("Britain", 0) == "Britian"
        assert "wel-known" not in p.perturb("well-known", seed=0)  # compounds kept whole
    finally:
        misspellings_by_correction.cache_clear()


def test_letter_case_toggles_first_or_all_letters() -> None:
    p = make("letter_case")
    seen = set()
    for s in range(40):
        [(old, new)] = _changed_words(TEXT, p.perturb(TEXT, seed=s))
        assert new.lower() == old.lower()
        if new == old.swapcase():
            seen.add("all")
        if new == old[0].swapcase() + old[1:]:
            seen.add("first")
    assert seen == {"all", "first"}
    assert make("letter_case").perturb("octopus", seed=0) in {"Octopus", "OCTOPUS"}


def test_resources_check_names_the_misspellings_source(monkeypatch, tmp_path) -> None:
    from robustlab.resources import check_all

    monkeypatch.delenv("ROBUSTLAB_MISSPELLINGS", raising=False)
    monkeypatch.delenv("ROBUSTLAB_SYNONYMS", raising=False)
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(tmp_path))
    got = check_all(("misspellings", "synonyms"))
    assert got["misspellings"].startswith("fallback: codespell's dictionary")
    assert "$ROBUSTLAB_MISSPELLINGS" in got["misspellings"]  # names the fix
    assert got["synonyms"].startswith("fallback: word_synonym uses WordNet alone")
    wiki = tmp_path / "data" / "misspellings" / "wikipedia_common_misspellings.json"
    wiki.parent.mkdir(parents=True)
    wiki.write_text('{"teh": ["the"]}', encoding="utf-8")
    assert check_all(("misspellings",))["misspellings"] == f"ok ({wiki.resolve()})"
    monkeypatch.setenv("ROBUSTLAB_MISSPELLINGS", str(tmp_path / "missing.json"))
    assert "is not a file" in check_all(("misspellings",))["misspellings"]
