"""Counterfactual token bias: a she-penalising model has B < 0 at every k, an unbiased one B ≈ 0."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.errors import InputError
from robustlab.runs.store import STORE_NAME
from robustlab.studies.second_order.bias import BiasEvaluator, run_bias_study
from robustlab.studies.second_order.config import BiasConfig
from robustlab.studies.second_order.gendered import (
    GENDERED_WORDS,
    gendered_pairs,
    read_blacklist,
    resolve_blacklist,
)
from robustlab.studies.second_order.neighbourhood import (
    LanguageModelCheck,
    TableSource,
    WordNetSource,
    default_source,
)
from robustlab.studies.second_order.pairs import BUILTIN_PAIRS, read_pairs, resolve_pairs

TEXTS = [
    "he said the film was good", "he thinks the plot is thin", "she liked the story",
    "he found the acting dull and the movie long", "a great film", "he he said it",
    "he was funny in a bad film", "the story he tells is sad",
]


def length_model(texts, she_penalty=0.0):
    """P(pos) depends on the sentence (its words) and, when biased, drops for 'she'."""
    out = []
    for t in texts:
        w = t.lower().split()
        p = 0.3 + 0.05 * (sum(len(x) for x in w if x not in ("he", "she")) % 9)
        if "she" in w:
            p -= she_penalty
        out.append([1 - p, p])
    return np.array(out)


@pytest.fixture(scope="module")
def wordnet_source():
    return WordNetSource(blacklist=[w for p in BUILTIN_PAIRS for w in p])


@pytest.mark.parametrize(("penalty", "sign"), [(0.2, -1), (0.0, 0)])
def test_biased_negative_unbiased_zero(tmp_path, wordnet_source, penalty, sign):
    summary = run_bias_study(
        predict=lambda ts: length_model(ts, penalty), model_name="toy", texts=TEXTS,
        pairs=[("he", "she")], source=wordnet_source, out=tmp_path / "run", budget=300,
        parents=30, progress=False)
    assert summary["complete"]
    rows = sorted(summary["table"], key=lambda r: r["k"])
    assert [r["k"] for r in rows] == [0, 1, 2, 3]
    assert rows[0]["n"] == 6  # X_test: "he" once and no "she" (5), or the other way round (1)
    for r in rows:
        assert r["n"] > 0
        if sign < 0:
            assert r["B"] < 0
            assert r["B"] == pytest.approx(-penalty)  # F_soft = -0.2 for every sentence
        else:
            assert abs(r["B"]) < 1e-12
    assert rows[3]["n"] <= 300
    for f in ("bias_table.csv", "bias_vs_k.png", "bias_hist_he_she.png", "summary.json",
              "results.jsonl"):
        assert (tmp_path / "run" / f).exists()
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["kind"] == "bias"


def test_neighbourhood_levels_respect_l0_blacklist_and_patch(wordnet_source):
    ev = BiasEvaluator(lambda ts: length_model(ts), wordnet_source, budget=10_000, parents=1000)
    base = ev.test_set(TEXTS, ("he", "she"))
    origs = {" ".join(w) for w, _ in base}
    for k in (1, 2):
        level, _ = ev.levels(base, ("he", "she"), k)
        assert level
        for words, idx in level:
            assert words[idx] == "he"  # the patch word is frozen
            assert not {"she", "her", "his", "him", "woman"} & {w.lower() for w in words}
            dist = min(sum(a != b for a, b in zip(words, o.split(), strict=False))
                       for o in origs if len(o.split()) == len(words))
            assert dist <= k


def test_test_set_reads_the_pair_both_ways():
    # as the authors' is_good_biaswords: "she" once and no "he" qualifies too, taken in its p1
    # form, so F_soft is f(x with she) - f(x with he) for every sentence
    base = BiasEvaluator.test_set(["She liked it", "he and she", "he liked it"], ("he", "she"))
    assert base == [(["He", "liked", "it"], 0), (["he", "liked", "it"], 0)]


def test_filtered_fraction_and_start_filter(tmp_path):
    # F_soft is zero for sentences without "dull", -0.5 with it
    def fn(ts):
        return np.array([[0.5, 0.5] if "she" not in t.split() or "dull" not in t.split()
                         else [1.0, 0.0] for t in ts])

    src = TableSource({"good": ["great"], "thin": ["dull"]})
    ev = BiasEvaluator(fn, src)
    res, records = ev.cell(TEXTS, ("he", "she"), 0)
    assert res["n_test"] == 6 and res["filtered_fraction"] == pytest.approx(5 / 6)
    assert len(records) == 6
    res1, _ = ev.cell(TEXTS, ("he", "she"), 1, start="filter")
    assert res1["B"] < 0  # the neighbourhood of the filtered set reveals the hidden bias


def test_pair_sources(tmp_path):
    f = tmp_path / "pairs.txt"
    f.write_text("# gender\nhe she\nactor,actress\n")
    assert read_pairs(f) == [("he", "she"), ("actor", "actress")]
    f.write_text("he she they\n")
    with pytest.raises(InputError, match="line 1"):
        read_pairs(f)
    assert ("he", "she") in resolve_pairs("builtin")
    pairs = resolve_pairs("all")
    assert ("gay", "straight") in pairs and len(pairs) > len(BUILTIN_PAIRS)


def test_nan_model_is_a_clear_error():
    ev = BiasEvaluator(lambda ts: np.full((len(ts), 2), np.nan), TableSource({}))
    with pytest.raises(InputError, match="NaN"):
        ev.cell(TEXTS, ("he", "she"), 0)


def test_resume_skips_done_cells(tmp_path, wordnet_source):
    calls = []

    def fn(ts):
        calls.append(len(ts))
        return length_model(ts)

    kw = dict(model_name="toy", texts=TEXTS, pairs=[("he", "she")], source=wordnet_source,
              out=tmp_path / "r", ks=(0, 1), budget=50, parents=10, progress=False)
    run_bias_study(predict=fn, **kw)
    n = len(calls)
    s = run_bias_study(predict=fn, **kw)
    assert len(calls) == n and s["complete"]


# ---- as paper 002 ran it: gendered blacklist, language-model check, masked-LM default --------

#: the keys a bias run stored before the blacklist / language-model options existed
OLD_KEYS = {"model", "dataset", "pairs", "num_examples", "ks", "source", "kappa", "delta",
            "budget", "parents", "start", "seed", "pairs_from"}


class FakeLM:
    """Stands in for a masked LM: a fixed PLL per sentence (default 0), counting calls."""

    def __init__(self, scores):
        self.scores, self.calls, self.model_id, self.name = scores, 0, "fake", "mlm:fake"

    def pseudo_log_likelihood(self, texts):
        self.calls += len(texts)
        return [self.scores.get(t, 0.0) for t in texts]


def test_gendered_pairs_blacklist_the_gendered_list():
    words, origin = resolve_blacklist(None, [("he", "she")])
    assert origin == "gendered" and {"him", "his", "man", "woman", "brothers"} <= set(words)
    # pairs of another kind keep only their own words (what runs before the list did)
    assert resolve_blacklist(None, [("gay", "straight")]) == (None, "pairs")
    assert gendered_pairs([("actor", "actress")]) and not gendered_pairs([("good", "bad")])
    assert resolve_blacklist("gendered", [("gay", "straight")])[0] == tuple(sorted(
        GENDERED_WORDS))
    # words that are gendered in one sense only stay out of the list (docstring)
    assert not {"miss", "master", "host", "parent", "person"} & GENDERED_WORDS


def test_blacklist_file_is_data(tmp_path):
    f = tmp_path / "b.txt"
    f.write_text("# mine\nHim\n\nwoman  # comment\n")
    assert read_blacklist(f) == ("him", "woman")
    assert resolve_blacklist(str(f), [("he", "she")]) == (("him", "woman"), str(f))
    for content, msg in (("two words\n", "line 1: expected one word"), ("# only\n", "no words"),
                         (b"\xff\xfe\n", "not UTF-8")):
        (f.write_bytes if isinstance(content, bytes) else f.write_text)(content)
        with pytest.raises(InputError, match=msg):
            read_blacklist(f)
    with pytest.raises(InputError, match="no such file"):
        read_blacklist(tmp_path / "missing.txt")


def test_blacklisted_gendered_words_never_enter_the_neighbourhood():
    table = {"good": ["woman", "great"], "liked": ["loved", "him"]}
    words, _ = resolve_blacklist(None, [("he", "she")])
    texts = ["he liked the good plot"]
    old = BiasEvaluator(length_model, TableSource(table, blacklist=["he", "she"]))
    new = BiasEvaluator(length_model, TableSource(table, blacklist=["he", "she", *words]))
    base = old.test_set(texts, ("he", "she"))
    got_old = {" ".join(w) for k in (1, 2) for w, _ in old.levels(base, ("he", "she"), k)[0]}
    got_new = {" ".join(w) for k in (1, 2) for w, _ in new.levels(base, ("he", "she"), k)[0]}
    assert "he liked the woman plot" in got_old and "he him the good plot" in got_old
    assert got_new == {"he loved the good plot", "he liked the great plot",
                       "he loved the great plot"}


def test_language_model_check_margin_and_long_sentences():
    lm = FakeLM({"a b": -2.0, "a c": -3.5, "a d": -3.51})
    check = LanguageModelCheck(lm)
    assert check.passes_many([("a b", "a c"), ("a b", "a d")]) == [True, False]
    assert (check.checked, check.rejected) == (2, 1)
    long = " ".join(["w"] * 21)
    calls = lm.calls
    # more than 20 words: exempt, as the authors skip them, and not scored at all
    assert check.passes_many([(long, long + " x")]) == [True] and lm.calls == calls
    # punctuation is not a word: 20 words and a full stop are still checked (and fail here)
    assert check.passes_many([(" ".join(["w"] * 20) + " .", "a d")]) == [False]
    assert lm.calls == calls + 2


def test_lm_check_filters_x_test_both_ways(tmp_path):
    # "she liked it" -> "he liked it" scores far lower: that sentence leaves X_test
    lm = FakeLM({"she liked it": -1.0, "he liked it": -4.0})
    ev = BiasEvaluator(length_model, TableSource({}), lm_check=LanguageModelCheck(lm))
    kept, rejected = ev.checked_test_set(["she liked it", "he found it", "he and she"],
                                         ("he", "she"))
    assert kept == [(["he", "found", "it"], 0)] and rejected == 1
    res, _ = ev.cell(["she liked it", "he found it"], ("he", "she"), 0)
    assert res["n_test"] == 1 and res["lm_rejected"] == 1
    summary = run_bias_study(predict=length_model, model_name="toy", texts=TEXTS,
                             pairs=[("he", "she")], source=TableSource({}),
                             out=tmp_path / "run", ks=(0,), progress=False,
                             lm_check=LanguageModelCheck(FakeLM({})))
    assert "lm_check:mlm:fake" in summary["signature"]


def bias_cli(files, out, *extra):
    return ["bias", "--model", "hf:toy", "--dataset", str(files / "g.txt"), "--pairs",
            str(files / "pairs.txt"), "--k", "0,1", "--out", str(out), "--no-progress", *extra]


@pytest.fixture
def bias_files(tmp_path, monkeypatch):
    import robustlab.models.registry as reg

    class Toy:
        def predict_proba(self, texts):
            return np.array([[0.7, 0.3] if "she" in t.split() else [0.4, 0.6] for t in texts])

        def model_id(self):
            return "toy"

    monkeypatch.setattr(reg, "load_model", lambda spec, device=None: Toy())
    # a checkpoint (hf:toy) is loaded with its trained head: robustlab.models.checkpoint
    monkeypatch.setattr("robustlab.models.checkpoint.load_checkpoint",
                        lambda spec, device=None: Toy())
    (tmp_path / "g.txt").write_text("1 he liked the good plot\n0 he hated it\n")
    (tmp_path / "pairs.txt").write_text("he she\n")
    (tmp_path / "table.json").write_text(json.dumps({"good": ["woman", "great"]}))
    return tmp_path


def test_cli_blacklist_option_and_bad_files(bias_files, capsys):
    out = bias_files / "run"
    assert main(bias_cli(bias_files, out, "--source",
                         f"table:{bias_files / 'table.json'}")) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["config"]["blacklist_from"] == "gendered" and "woman" in s["config"]["blacklist"]
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert next(r for r in recs if r["k"] == 1)["n"] == 1  # good -> great only, not woman
    capsys.readouterr()
    bad = bias_files / "bad.txt"
    bad.write_text("two words\n")
    for arg in (str(bad), str(bias_files / "missing.txt")):
        assert main(bias_cli(bias_files, bias_files / "r2", "--blacklist", arg)) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--blacklist" in err
        assert not (bias_files / "r2").exists()
    own = bias_files / "own.txt"
    own.write_text("great\n")
    assert main(bias_cli(bias_files, bias_files / "r3", "--source",
                         f"table:{bias_files / 'table.json'}", "--blacklist", str(own))) == 0
    s = json.loads((bias_files / "r3" / "summary.json").read_text())
    assert s["config"]["blacklist"] == ["great"]
    assert s["config"]["inputs"]["blacklist"]["path"] == str(own)
    assert next(r for r in s["table"] if r["k"] == 1)["n"] == 1  # good -> woman only


def test_old_run_resumes_with_its_old_behaviour(bias_files, capsys):
    """A run stored before these options (no blacklist/lm_check keys) resumes as it ran:
    the pairs' words only blacklisted, no language-model check, the same signature."""
    from robustlab.runs.study import RunContext, run_study
    from robustlab.studies.second_order.bias import Bias

    cfg = BiasConfig(model="hf:toy", dataset={"path": str(bias_files / "g.txt")},
                     pairs=(("he", "she"),), ks=(0, 1),
                     source=f"table:{bias_files / 'table.json'}",
                     pairs_from=str(bias_files / "pairs.txt"))
    stored = cfg.to_dict()
    assert set(stored) == OLD_KEYS  # what the code before this change stored
    old_sig = cfg.signature()
    assert "blacklist" not in old_sig and "lm_check" not in old_sig
    out = bias_files / "old"
    run_study(Bias(cfg), out, RunContext(progress=False, trusted=True))
    with sqlite3.connect(out / STORE_NAME) as db:  # interrupt it: the k=1 cell not done yet
        assert db.execute("UPDATE cells SET status='pending' WHERE key LIKE '%k=1'").rowcount
    assert BiasConfig.from_dict(stored).to_dict() == stored
    assert main(["resume", str(out), "--quiet"]) == 0
    s = json.loads((out / "summary.json").read_text())
    assert s["complete"] and s["signature"] == old_sig
    assert set(s["config"]) - {"inputs"} == OLD_KEYS
    k1 = next(r for r in s["table"] if r["k"] == 1)
    assert k1["n"] == 2  # good -> woman and good -> great: the old, pair-only blacklist
    # the command with today's defaults computes something else: refused, naming the option
    capsys.readouterr()
    assert main(bias_cli(bias_files, out, "--source",
                         f"table:{bias_files / 'table.json'}")) == 2
    assert "--blacklist" in capsys.readouterr().err


def test_default_neighbourhood_is_a_masked_lm_when_found(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBUSTLAB_NEIGHBOURHOOD", raising=False)
    monkeypatch.delenv("ROBUSTLAB_MLM", raising=False)
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(tmp_path / "nothing"))
    spec, origin = default_source()
    assert spec == "wordnet" and origin.startswith("fallback: WordNet")
    assert "--mlm DIR" in origin  # the fix is named
    mlm = tmp_path / "mlm"
    mlm.mkdir()
    (mlm / "config.json").write_text("{}")
    monkeypatch.setenv("ROBUSTLAB_MLM", str(mlm))
    assert default_source() == (f"mlm:{mlm}", "default: masked LM from the $ROBUSTLAB_MLM")


def test_cli_wordnet_fallback_is_said_and_recorded(bias_files, monkeypatch, capsys):
    monkeypatch.delenv("ROBUSTLAB_NEIGHBOURHOOD", raising=False)
    monkeypatch.delenv("ROBUSTLAB_MLM", raising=False)
    monkeypatch.setenv("ROBUSTLAB_SHARED", str(bias_files / "nothing"))
    out = bias_files / "wn"
    assert main(bias_cli(bias_files, out)[:-1]) == 0  # without --no-progress: messages shown
    err = capsys.readouterr().err
    assert "fallback: WordNet" in err
    s = json.loads((out / "summary.json").read_text())
    assert s["config"]["source"] == "wordnet" and "lm_check" not in s["config"]  # no check
    assert s["config"]["inputs"]["neighbourhood"]["origin"].startswith("fallback: WordNet")


def test_cli_lm_check_with_a_saved_random_bert(bias_files, tmp_path_factory, capsys):
    """--lm-check DIR: X_test passes through the check with that model, recorded in the
    signature and the inputs; the count of rejected sentences is the check's own verdict."""
    from _so_toys import tiny_mlm

    from robustlab.studies.second_order.neighbourhood import MaskedLMSource

    model, tok = tiny_mlm(tmp_path_factory.mktemp("tiny"))
    mlm = bias_files / "tiny-mlm"
    model.save_pretrained(mlm)
    tok.save_pretrained(mlm)
    lines = ["1 he was a good man", "0 she was a thin man", "1 he liked the plot",
             "0 the plot is thin and he is good"]
    (bias_files / "g.txt").write_text("\n".join(lines) + "\n")
    out = bias_files / "lm"
    assert main(bias_cli(bias_files, out, "--source", f"table:{bias_files / 'table.json'}",
                         "--lm-check", str(mlm), "--k", "0")) == 0
    s = json.loads((out / "summary.json").read_text())
    assert f"lm_check:mlm:{mlm}" in s["signature"]
    assert s["config"]["inputs"]["lm_check"]["path"] == str(mlm)
    cell = json.loads((out / "results.jsonl").read_text().splitlines()[0])
    check = LanguageModelCheck(MaskedLMSource(str(mlm), device="cpu"))
    texts = [t.split(" ", 1)[1] for t in lines]
    other = {"he": "she", "she": "he"}
    swaps = [(t, " ".join(other.get(w, w) for w in t.split())) for t in texts]
    verdict = check.passes_many(swaps)
    assert cell["lm_rejected"] == verdict.count(False)
    assert cell["n_test"] == verdict.count(True)
