"""The task concept: registry, file formats (read then write gives the same file), bad inputs
(one line, an InputError so exit 2, nothing written), perturbation fields and failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from robustlab.data.files import FileFormatError
from robustlab.errors import InputError
from robustlab.perturbations import make
from robustlab.tasks import TASKS, Perturbed, TaskError, available, get_task
from robustlab.tasks.examples import CandidatesExample, PairExample, TaggedExample

CONLL = """-DOCSTART- -X- -X- O

EU NNP B-NP B-ORG
rejects VBZ B-VP O
German JJ B-NP B-MISC
call NN I-NP O
. . O O

Peter NNP B-NP B-PER
Blackburn NNP I-NP I-PER

-DOCSTART- -X- -X- O

BRUSSELS NNP B-NP B-LOC
1996-08-22 CD I-NP O

"""
STS = ("main-captions\tMSRvid\t2012test\t0024\t2.500\tA girl is styling her hair.\tA girl is "
       "brushing her hair.\n"
       "main-news\theadlines\t2016\t0001\t4\tHe said \"no\".\tHe said no.\tEMM\tsrc\n")
SNLI = ("entailment\tA man is running .\tA person moves .\n"
        "contradiction\tA dog sleeps .\tThe dog \"runs\" .\n")
WIKIQA = ("QuestionID\tQuestion\tDocumentID\tDocumentTitle\tSentenceID\tSentence\tLabel\n"
          "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-0\tA partly \"submerged\" "
          "glacier cave.\t0\n"
          "Q1\thow are glacier caves formed?\tD1\tGlacier cave\tD1-1\tThe ice melts .\t1\n"
          "Q2\twho wrote it\tD2\tBook\tD2-0\tSomeone did .\t0\n")
LABEL_TEXT = "1 a fine film .\n0 do n't bother\n3\n"


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_registry_names_and_aliases():
    assert available() == ["classification", "ner", "similarity", "answer-selection", "pair"]
    assert get_task("sts") is TASKS["similarity"]
    assert get_task("NLI") is TASKS["pair"]
    assert get_task("answer_selection") is TASKS["answer-selection"]
    assert get_task("conll").name == "ner"
    with pytest.raises(TaskError, match="unknown task 'pos'; choose from classification"):
        get_task("pos")
    assert isinstance(TaskError("x"), InputError)


@pytest.mark.parametrize("task,name,text", [
    ("ner", "t.conll", CONLL),
    ("similarity", "sts.csv", STS),
    ("pair", "snli.txt", SNLI),
    ("answer-selection", "w.tsv", WIKIQA),
    ("classification", "k.txt", LABEL_TEXT),
    ("classification", "k.tsv", "sentence\tlabel\ngood\t1\nbad \"x\"\t0\n"),
])
def test_read_then_write_gives_the_same_file(tmp_path, task, name, text):
    t = get_task(task)
    src = _write(tmp_path, name, text)
    corpus = t.read(src)
    out = tmp_path / ("out_" + name)
    t.write(out, corpus)
    assert out.read_text(encoding="utf-8") == text


def test_conll_examples():
    corpus = get_task("ner").read(_write_tmp(CONLL))
    first, second, third = corpus.examples
    assert first.tokens == ("EU", "rejects", "German", "call", ".")
    assert first.tags == ("B-ORG", "O", "B-MISC", "O", "O")
    assert first.columns[0] == ("NNP", "B-NP")
    assert first.doc_start == "-DOCSTART- -X- -X- O" and second.doc_start is None
    assert third.doc_start is not None and third.tokens == ("BRUSSELS", "1996-08-22")


def _write_tmp(text: str, name: str = "f.txt") -> Path:
    import tempfile

    d = Path(tempfile.mkdtemp())
    return _write(d, name, text)


def test_sts_reads_quotes_and_extra_fields_as_data():
    corpus = get_task("sts").read(_write_tmp(STS, "s.csv"))
    assert [e.label for e in corpus.examples] == [2.5, 4.0]
    assert corpus.examples[1].first == 'He said "no".'


def test_wikiqa_groups_candidates_by_question():
    corpus = get_task("wikiqa").read(_write_tmp(WIKIQA, "w.tsv"))
    q1, q2 = corpus.examples
    assert q1.qid == "Q1" and q1.labels == (0, 1) and len(q1.candidates) == 2
    assert q2.candidates == ("Someone did .",)


# ---- bad inputs: one line, InputError (exit 2), nothing written -------------------------------------


@pytest.mark.parametrize("task,name,text,message", [
    ("ner", "c.txt", "EU NNP B-NP B-ORG\nrejects VBZ B-VP\n\n",
     r"line 2: 3 column\(s\), but line 1 has 4: a column \(the tag\?\) is missing"),
    ("ner", "c.txt", "EU\nrejects\n\n", r"line 1: one column .*tag column missing"),
    ("ner", "c.txt", "EU B-ORG\nsays I-PER\n\n", r"line 1: tag 1 'I-PER' follows 'B-ORG'.*iob1"),
    ("ner", "c.txt", "EU ORG\n\n", r"tag 0 'ORG' is not O, B-TYPE or I-TYPE"),
    ("ner", "c.txt", "\n\n", "no sentence"),
    ("pair", "p.txt", "entailment\tA man runs .\n", r"line 1: 2 tab-separated field\(s\), expected 3"),
    ("pair", "p.txt", "entailment\tA man runs .\tA person moves .\nneutral\tonly one\n",
     r"line 2: expected 3 tab-separated fields, found 2"),
    ("pair", "p.txt", "entailment\tA man runs .\t \n", "line 1: an empty text"),
    ("similarity", "s.csv", "g\tf\t2012\t1\t5.5\tA b.\tC d.\n",
     r"line 1: score '5.5' is not a number in the declared range 0-5"),
    ("similarity", "s.csv", "g\tf\t2012\t1\t-1\tA b.\tC d.\n", "declared range"),
    ("similarity", "s.csv", "g\tf\t2012\t1\tnan\tA b.\tC d.\n", "declared range"),
    ("similarity", "s.csv", "g\tf\t2012\t1\t3\tA b.\n", r"line 1: 6 tab-separated field\(s\)"),
    ("answer-selection", "w.tsv", "QuestionID\tQuestion\tSentence\nQ1\twhy\tbecause\n",
     "no column.*Label"),
    ("answer-selection", "w.tsv", WIKIQA.replace("\t1\n", "\t2\n"), "line 3: Label '2'"),
])
def test_bad_input_is_one_clear_line(tmp_path, task, name, text, message):
    src = _write(tmp_path, name, text)
    with pytest.raises(FileFormatError, match=message) as info:
        get_task(task).read(src)
    assert "\n" not in str(info.value)
    assert str(src) in str(info.value)
    assert info.value.exit_code == 2


def test_nothing_written_when_an_example_cannot_be_held(tmp_path):
    ner = get_task("ner")
    corpus = ner.read(_write(tmp_path, "c.txt", CONLL))
    bad = corpus.with_examples([TaggedExample(("New York",), ("B-LOC",), (("NNP", "B-NP"),))])
    out = tmp_path / "out.txt"
    with pytest.raises(FileFormatError, match="holds whitespace"):
        ner.write(out, bad)
    assert not out.exists()
    sts = get_task("sts")
    corpus = sts.read(_write(tmp_path, "s.csv", STS))
    bad = corpus.with_examples([PairExample("a\tb", "c", 1.0, corpus.examples[0].row)])
    with pytest.raises(FileFormatError, match="tab or line break"):
        sts.write(out, bad)
    assert not out.exists()


def test_perturbed_files_keep_their_format(tmp_path):
    ner = get_task("ner")
    corpus = ner.read(_write(tmp_path, "c.txt", CONLL))
    done = ner.perturb(corpus.examples, make("word_repeat"), seed=0)
    out = tmp_path / "p.txt"
    ner.write(out, corpus.with_examples([p.example for p in done]))
    again = ner.read(out).examples
    assert [e.tokens for e in again] == [p.example.tokens for p in done]
    assert [e.tags for e in again] == [p.example.tags for p in done]
    # a copied token keeps its POS/chunk columns (same text, same source)
    assert all(len(c) == 2 for e in again for c in e.columns)


# ---- fields ----------------------------------------------------------------------------------------


def test_pair_field_first_second_both():
    sim = get_task("similarity")
    pairs = [PairExample("A girl is styling her hair.", "A girl is brushing her hair.", 2.5)]
    p = make("char_swap")
    first = sim.perturb(pairs, p, seed=1, field="first")[0].example
    second = sim.perturb(pairs, p, seed=1, field="second")[0].example
    both = sim.perturb(pairs, p, seed=1)[0].example  # default: both
    assert first.first != pairs[0].first and first.second == pairs[0].second
    assert second.second != pairs[0].second and second.first == pairs[0].first
    assert both.first == first.first and both.second == second.second
    assert both.label == 2.5
    # exactly what the perturbation gives the text alone
    assert first.first == p.perturb(pairs[0].first, 1)
    assert sim.default_field == "both" and get_task("pair").default_field == "both"


def test_answer_selection_perturbs_the_question_by_default():
    qa = get_task("wikiqa")
    ex = [CandidatesExample("Q1", "how are glacier caves formed", ("The ice melts .",
                                                                   "Caves form slowly ."), (1, 0))]
    p = make("char_swap")
    q = qa.perturb(ex, p, seed=0)[0].example
    assert q.question == p.perturb(ex[0].question, 0) != ex[0].question
    assert q.candidates == ex[0].candidates and q.labels == (1, 0)
    s = qa.perturb(ex, p, seed=0, field="second")[0].example
    assert s.question == ex[0].question
    assert s.candidates == tuple(p.perturb(c, 0) for c in ex[0].candidates)


def test_bad_field_is_refused():
    with pytest.raises(TaskError, match="choose from first, second, both"):
        get_task("sts").field("third")
    with pytest.raises(TaskError, match="one text"):
        get_task("classification").field("first")
    with pytest.raises(TaskError, match="one text"):
        get_task("ner").perturb([], make("char_swap"), field="second")


# ---- failures --------------------------------------------------------------------------------------


def test_failure_is_in_the_task_s_terms():
    assert get_task("classification").failed("pos", "neg")
    assert not get_task("pair").failed("entailment", "entailment")
    sim = get_task("sts")
    assert sim.failed(3.0, 3.6) and not sim.failed(3.0, 3.4)
    assert not sim.failed(3.0, 3.6, tolerance=1.0)
    qa = get_task("wikiqa")
    assert qa.failed([0.9, 0.2], [0.2, 0.9])  # top candidate changed
    assert qa.failed([0.9, 0.6], [0.9, 0.4])  # the second is no longer an answer
    assert not qa.failed([0.9, 0.2], [0.8, 0.1])


def test_ner_failure_compares_entities_through_the_alignment():
    ner = get_task("ner")
    ex = TaggedExample(("Peter", "Blackburn", "likes", "Paris"), ("B-PER", "I-PER", "O", "B-LOC"))
    # "likes" deleted: the clean prediction carried over is B-PER I-PER B-LOC
    moved = Perturbed(ex, TaggedExample(("Peter", "Blackburn", "Paris"),
                                        ("B-PER", "I-PER", "B-LOC")), True, None, (0, 1, 3))
    clean = ("B-PER", "I-PER", "O", "B-LOC")
    assert not ner.failed(clean, ("B-PER", "I-PER", "B-LOC"), moved)
    assert ner.failed(clean, ("B-PER", "I-PER", "O"), moved)  # Paris lost
    assert ner.failed(clean, ("B-PER", "B-PER", "B-LOC"), moved)  # Peter Blackburn split
    # without the alignment the token positions are compared as they are
    assert not ner.failed(clean, clean)


# ---- the shared files ------------------------------------------------------------------------------


@pytest.mark.parametrize("task,rel,count", [
    ("ner", "conll2003/test.txt", 3453),
    ("ner", "conll2003/valid.txt", 3250),
    ("similarity", "stsb/sts-test.csv", 1379),
    ("similarity", "stsb/sts-train.csv", 5749),
    ("answer-selection", "wikiqa/WikiQA-test.tsv", 633),
    ("pair", "textfooler_1k/snli.txt", 1000),
    ("classification", "sst/stsa.fine.test", 2210),
    ("classification", "trec/TREC.test.all", 500),
])
def test_shared_files_read_and_write_back_byte_for_byte(shared_data, tmp_path, task, rel, count):
    t = get_task(task)
    corpus = t.read(shared_data / rel)
    assert len(corpus) == count
    out = tmp_path / "out"
    t.write(out, corpus)
    assert out.read_bytes() == (shared_data / rel).read_bytes()


# ---- the task read from the data, the model's tag set -----------------------------------------------


@pytest.mark.parametrize("name,text,task", [
    ("c.txt", CONLL, "ner"),
    ("c.txt", CONLL.replace("-DOCSTART- -X- -X- O\n\n", ""), "ner"),
    ("s.csv", STS, "similarity"),
    ("p.txt", SNLI, "pair"),
    ("w.tsv", WIKIQA, "answer-selection"),
    ("k.txt", LABEL_TEXT, "classification"),
    ("k.tsv", "sentence\tlabel\ngood\t1\n", "classification"),
])
def test_detect_task(tmp_path, name, text, task):
    from robustlab.tasks import detect_task

    assert detect_task(_write(tmp_path, name, text)) == task


def test_detect_task_on_the_shared_files(shared_data):
    from robustlab.tasks import detect_task

    for rel, task in (("conll2003/test.txt", "ner"), ("stsb/sts-test.csv", "similarity"),
                      ("wikiqa/WikiQA-test.tsv", "answer-selection"),
                      ("textfooler_1k/snli.txt", "pair"), ("sst/stsa.fine.test", "classification"),
                      ("trec/TREC.test.all", "classification")):
        assert detect_task(shared_data / rel) == task, rel


def test_a_model_tag_set_missing_a_data_type_is_refused():
    ner = get_task("ner")
    data = [TaggedExample(("Peter", "in", "Paris"), ("B-PER", "O", "B-LOC"))]
    ner.check_tag_set(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"], data)
    with pytest.raises(TaskError, match=r"no tag for entity type\(s\) LOC of the data"):
        ner.check_tag_set(["O", "B-PER", "I-PER"], data)
    with pytest.raises(TaskError, match="not O, B-TYPE or I-TYPE"):
        ner.check_tag_set(["O", "PER", "LOC"], data)


def test_an_iob1_file_is_read_as_iob2_when_asked(tmp_path):
    src = _write(tmp_path, "c.txt", "Peter I-PER\nBlackburn I-PER\nand O\nJohn I-PER\nParis I-LOC\n"
                 "Rome B-LOC\n\n")
    with pytest.raises(FileFormatError, match="scheme iob1"):
        get_task("ner").read(src)
    ex = get_task("ner").read(src, scheme="iob1").examples[0]
    assert ex.tags == ("B-PER", "I-PER", "O", "B-PER", "B-LOC", "B-LOC")


@pytest.mark.parametrize("tags, bad", [
    (("B-PER", "PER", "LOC"), "'PER'"),          # the first bad tag in order is named
    (("B-PER", "O", 3), "3"),
    (("B-PER", ["O"], "X"), r"\['O'\]"),         # an unhashable "tag"
    (("B-PER", "I-PER", "B-"), "'B-'"),              # no type
])
def test_a_prediction_with_a_tag_that_is_not_iob2_is_refused(tags, bad):
    ner = get_task("ner")
    data = [TaggedExample(("Peter", "in", "Paris"), ("B-PER", "O", "B-LOC"))] * 2
    assert ner.check_predictions(data, [("B-PER", "O", "B-LOC"), ("O", "O", "I-LOC")])
    with pytest.raises(TaskError, match=rf"prediction 1: tag {bad} is not O, B-TYPE or I-TYPE"):
        ner.check_predictions(data, [("B-PER", "O", "B-LOC"), tags])
