"""``robustlab perturb`` / ``augment`` on CoNLL, STS, SNLI and WikiQA files: the output has the
input's format, tags follow their tokens, ``--perturb-field`` picks the text of a pair, and a
perturbation NER refuses is one line with nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from robustlab.cli import main
from robustlab.tasks import get_task
from robustlab.tasks.align import iob2_error


def _head(src: Path, dst: Path, n: int) -> Path:
    lines = src.read_text(encoding="utf-8").split("\n")[:n]
    dst.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    return dst


@pytest.fixture(scope="module")
def files(shared_data, tmp_path_factory):
    d = tmp_path_factory.mktemp("task-files")
    return {
        "ner": _head(shared_data / "conll2003/test.txt", d / "conll.txt", 400),
        "similarity": _head(shared_data / "stsb/sts-test.csv", d / "sts.csv", 60),
        "answer-selection": _head(shared_data / "wikiqa/WikiQA-test.tsv", d / "wikiqa.tsv", 80),
        "pair": _head(shared_data / "textfooler_1k/snli.txt", d / "snli.txt", 60),
    }


@pytest.mark.parametrize("pert", ["word_delete", "word_repeat", "word_order", "negation",
                                  "char_swap", "misspelling"])
def test_conll_tags_follow_tokens(files, tmp_path, capsys, pert):
    out = tmp_path / "out.txt"
    rc = main(["perturb", "-p", pert, "-i", str(files["ner"]), "-o", str(out)])
    assert rc in (0, 1)  # 1: some sentence left unperturbed (named on stderr)
    assert "(ner)" in capsys.readouterr().err
    ner = get_task("ner")
    before = ner.read(files["ner"]).examples
    after = ner.read(out).examples  # the same format, read back by the task
    assert len(after) == len(before)
    assert sum(a.tokens != b.tokens for a, b in zip(after, before, strict=True)) > 0
    for a, b in zip(after, before, strict=True):
        assert iob2_error(a.tags) is None
        # every word of the output that was in the original has the entity type it had there
        kinds = {}
        for tok, tag in zip(b.tokens, b.tags, strict=True):
            kinds.setdefault(tok, set()).add(tag[2:] if tag != "O" else "O")
        for tok, tag in zip(a.tokens, a.tags, strict=True):
            if tok in kinds and pert != "negation":
                assert (tag[2:] if tag != "O" else "O") in kinds[tok], (a, b)


def test_ner_refusal_is_one_line_and_writes_nothing(files, tmp_path, capsys):
    out = tmp_path / "out.txt"
    assert main(["perturb", "-p", "whitespace_perturbation", "-i", str(files["ner"]), "-o",
                 str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refused for NER" in err
    assert not out.exists()
    assert main(["augment", "-p", "char_swap,shuffle_word", "-i", str(files["ner"]), "-o",
                 str(out)]) == 2
    assert "shuffle_word is refused for NER" in capsys.readouterr().err
    assert not out.exists()


def test_augment_conll_writes_originals_and_copies(files, tmp_path):
    out = tmp_path / "aug.txt"
    one = tmp_path / "one.txt"
    assert main(["augment", "-p", "char_swap,word_repeat", "-n", "2", "-i", str(files["ner"]),
                 "-o", str(out)]) in (0, 1)
    assert main(["perturb", "-p", "char_swap", "-i", str(files["ner"]), "-o", str(one)]) in (0, 1)
    ner = get_task("ner")
    before = ner.read(files["ner"]).examples
    after = ner.read(out).examples
    assert len(after) == 3 * len(before)
    assert after[0::3] == before  # each original first
    # copy 0 is what perturb gives with the same seed (augment's seeding)
    assert after[1::3] == ner.read(one).examples
    assert all(iob2_error(ex.tags) is None for ex in after)


@pytest.mark.parametrize("task, field, kept, changed", [
    ("similarity", "second", "first", "second"),
    ("pair", "first", "second", "first"),
])
def test_pair_files_perturb_the_field_asked(files, tmp_path, task, field, kept, changed):
    out = tmp_path / "out"
    argv = ["perturb", "-p", "letter_case", "-i", str(files[task]), "-o", str(out),
            "--perturb-field", field] + (["--task", "pair"] if task == "pair" else [])
    assert main(argv) == 0
    t = get_task(task)
    before, after = t.read(files[task]).examples, t.read(out).examples
    assert [getattr(e, kept) for e in after] == [getattr(e, kept) for e in before]
    assert sum(getattr(a, changed) != getattr(b, changed)
               for a, b in zip(after, before, strict=True)) > 0.8 * len(before)
    assert [e.label for e in after] == [e.label for e in before]


def test_wikiqa_perturbs_the_question_by_default(files, tmp_path):
    out = tmp_path / "out.tsv"
    assert main(["perturb", "-p", "char_swap", "-i", str(files["answer-selection"]), "-o",
                 str(out)]) == 0
    qa = get_task("answer-selection")
    before, after = qa.read(files["answer-selection"]).examples, qa.read(out).examples
    assert [e.candidates for e in after] == [e.candidates for e in before]
    assert [e.labels for e in after] == [e.labels for e in before]
    assert any(a.question != b.question for a, b in zip(after, before, strict=True))


def test_row_options_and_fields_refused_where_they_mean_nothing(files, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["perturb", "-p", "char_swap", "-i", str(files["ner"]), "-o", str(out),
                 "--task", "ner", "--column", "0"]) == 2
    assert "--column" in capsys.readouterr().err
    assert main(["perturb", "-p", "char_swap", "-i", str(files["ner"]), "-o", str(out),
                 "--perturb-field", "first"]) == 2
    assert "one text" in capsys.readouterr().err
    single = tmp_path / "single.tsv"
    single.write_text("label\ttext\n1\ta good film\n", encoding="utf-8")
    assert main(["perturb", "-p", "char_swap", "-i", str(single), "-o", str(out),
                 "--perturb-field", "first"]) == 2
    assert "--task" in capsys.readouterr().err
    assert not out.exists()
