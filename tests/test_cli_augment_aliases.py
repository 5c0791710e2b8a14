"""`robustlab augment` takes `textattack augment`'s options with TextAttack's meaning."""

from __future__ import annotations

import pytest

from robustlab.cli import main
from robustlab.commands.augment import TEXTATTACK_RECIPES, recipe_spec
from robustlab.data.files import read_rows
from robustlab.errors import InputError


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "in.csv"
    path.write_text("text,label\nthe movie is wonderful and the acting is superb .,1\n"
                    "a dull and tedious film with a lazy script .,0\n", encoding="utf-8")
    return path


def test_textattack_spellings_equal_robustlab_ones(tmp_path, capsys, src) -> None:
    ours, theirs = tmp_path / "ours.csv", tmp_path / "theirs.csv"
    assert main(["augment", "-p", "char_swap", "-i", str(src), "-o", str(ours), "--column",
                 "text", "-n", "3", "--seed", "7", "--exclude-original"]) == 0
    assert main(["augment", "-p", "char_swap", "--input-csv", str(src), "--output-csv",
                 str(theirs), "--input-column", "text", "--transformations-per-example", "3",
                 "--random-seed", "7", "--exclude-original", "--overwrite"]) == 0
    assert ours.read_bytes() == theirs.read_bytes()
    assert len(read_rows(theirs)) == 6
    # TextAttack's short spellings too
    short = tmp_path / "short.csv"
    assert main(["augment", "-p", "char_swap", "--input-csv", str(src), "--output-csv",
                 str(short), "--i", "text", "--t", "3", "--random-seed", "7",
                 "--exclude-original"]) == 0
    assert short.read_bytes() == ours.read_bytes()
    capsys.readouterr()


@pytest.mark.parametrize("recipe", [k for k, v in TEXTATTACK_RECIPES.items() if v[0] is None])
def test_recipes_that_download_are_refused_naming_why(tmp_path, capsys, src, recipe) -> None:
    out = tmp_path / "o.csv"
    assert main(["augment", "--recipe", recipe, "--input-csv", str(src), "--output-csv",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--recipe {recipe}: not run" in err[0] and "download" in err[0]
    assert not out.exists()


def test_bad_combinations_are_one_line(tmp_path, capsys, src) -> None:
    out = str(tmp_path / "o.csv")
    for argv, words in ((["-p", "leet_letters", "--pct-words-to-swap", "0.2"], "--pps"),
                        (["-p", "leet_letters", "--recipe", "eda"], "give one"),
                        (["--recipe", "eda", "--pct-words-to-swap", "1.5"], "between 0 and 1")):
        assert main(["augment", *argv, "--input-csv", str(src), "--output-csv", out]) == 2
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err


def test_recipe_spec_keeps_textattack_meaning() -> None:
    assert recipe_spec("eda", None) == ("textattack:EasyDataAugmenter:pct_words_to_swap=0.1,"
                                        "transformations_per_example=1")
    assert "pct_words_to_swap=0.3" in recipe_spec("charswap", 0.3)
    with pytest.raises(InputError, match="download"):
        recipe_spec("clare", 0.1)


@pytest.mark.slow
def test_charswap_recipe_runs_textattack_augmenter(tmp_path, capsys, src) -> None:
    """Imports TextAttack (tens of seconds on a loaded machine): slow."""
    out = tmp_path / "o.csv"
    assert main(["augment", "--recipe", "charswap", "--input-csv", str(src), "--output-csv",
                 str(out), "--input-column", "text", "--pct-words-to-swap", "0.2"]) == 0
    rows = read_rows(out).rows
    assert len(rows) == 2 * (2 + 1)  # TextAttack's default: 2 copies plus the original
    copies = [r for r in rows if r["perturbation"]]
    assert all(r["perturbation"] == "textattack:char_swap_augmenter" for r in copies)
    originals = {r["text"] for r in rows if not r["perturbation"]}
    changed = [r for r in copies if r["text"] not in originals]
    assert changed and all(r["changed"] == "true" for r in changed)
    # 0.2 of 10 words: TextAttack changes max(int(0.2 * 10), 1) = 2 words of the first row
    first = rows[0]["text"].split()
    for r in copies[:2]:
        diff = sum(a != b for a, b in zip(first, r["text"].split(), strict=False))
        assert 1 <= diff <= 2
    capsys.readouterr()
