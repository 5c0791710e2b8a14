"""Counterfactual token bias: a she-penalising model has B < 0 at every k, an unbiased one B ≈ 0."""

from __future__ import annotations

import json

import numpy as np
import pytest

from robustlab.errors import InputError
from robustlab.studies.second_order.bias import (
    BUILTIN_PAIRS,
    BiasEvaluator,
    read_pairs,
    resolve_pairs,
    run_bias_study,
)
from robustlab.studies.second_order.neighbourhood import TableSource, WordNetSource

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
