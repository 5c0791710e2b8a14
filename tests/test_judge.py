"""``robustlab judge``: paper 001's human check of label- and meaning-changing samples (issue 33).

A tiny eval run with a keyword model whose predictions can be worked out by hand: class 1 when
the text has "good" and no negator, else 0. Sentences "... good" are labelled 1, "... bad" 0.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from robustlab.cli import main
from robustlab.errors import InputError
from robustlab.runs.store import RunStore
from robustlab.studies.eval.judge import draw_sample, judged_scores, needs_judging
from robustlab.studies.eval.study import evaluate

NEGATORS = {"not", "n't", "never", "no", "don't", "doesn't", "isn't", "didn't", "wasn't"}
GOOD = ["the movie is good", "this film was good", "the plot is good", "the acting was good",
        "the story is good", "the cast was good"]
BAD = ["the movie is bad", "this film was bad", "the plot is bad", "the acting was bad"]
PERTS = ("negation", "word_delete", "char_swap")


class Keyword:
    """1 when "good" is in the text and no negator is, else 0 (probabilities 0.9 / 0.1)."""

    def predict_proba(self, texts):
        out = []
        for t in texts:
            w = set(t.lower().replace("n't", " n't").split())
            p = 0.9 if "good" in w and not (w & NEGATORS) else 0.1
            out.append([1 - p, p])
        return np.asarray(out)


EXAMPLES = [(t, 1) for t in GOOD] + [(t, 0) for t in BAD]


def _run(out: Path) -> dict:
    return evaluate(Keyword(), out, examples=EXAMPLES, perturbations=PERTS, seeds=(0,),
                    progress=False, plots=False, name="keyword")


@pytest.fixture
def run(tmp_path) -> Path:
    out = tmp_path / "run"
    _run(out)
    return out


def _judge(*args: str) -> int:
    return main(["judge", *map(str, args)])


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def test_which_perturbations_are_judged():
    assert needs_judging("negation") and needs_judging("word_delete")
    assert needs_judging("word_synonym") and needs_judging("negation@neg")
    assert not needs_judging("char_swap") and not needs_judging("leet_letters")


def test_sample_is_seeded_limited_and_only_changed_rows_of_judged_perturbations(run):
    with RunStore(run, readonly=True) as store:
        preds = store.predictions()
        cells = {c.key: c.params["perturbation"] for c in store.cells("done")}
    a = draw_sample(preds, cells, seed=0, per=3)
    assert a == draw_sample(preds, cells, seed=0, per=3)  # seeded
    assert {s["perturbation"] for s in a} == {"negation", "word_delete"}  # not char_swap
    assert all(s["original"] != s["perturbed"] for s in a)
    assert max(sum(s["perturbation"] == p for s in a) for p in ("negation", "word_delete")) == 3
    other = [draw_sample(preds, cells, seed=k, per=3) for k in range(1, 6)]
    assert any(o != a for o in other)  # the seed matters
    full = draw_sample(preds, cells, seed=0)
    changed = [p for p in preds if cells[p["cell"]] in ("negation", "word_delete")
               and p["original"] != p["perturbed"]]
    assert len(full) == len(changed) < 200  # the 200 cap never pads: every changed row once


def test_judged_scores_by_hand():
    rows = [  # label, verdict, clean prediction, perturbed prediction
        {"label": 1, "verdict": "consistent", "pred_before": 1, "pred_after": 1},
        {"label": 1, "verdict": "relabel:0", "pred_before": 1, "pred_after": 0},
        {"label": 1, "verdict": "relabel:1", "pred_before": 1, "pred_after": 0},
        {"label": 0, "verdict": "drop", "pred_before": 0, "pred_after": 1},
        {"label": 0, "verdict": "consistent", "pred_before": 1, "pred_after": 0},
    ]
    s = judged_scores(rows)
    # kept 4 (the drop removed); A0 on originals vs original labels: right, right, right,
    # wrong -> 3/4; A1 vs corrected labels 1,0,1,0: right, right, wrong, right -> 3/4;
    # failure among the 3 with a right clean prediction: one (the third)
    assert (s["n"], s["sampled"], s["dropped"], s["relabelled"]) == (4, 5, 1, 2)
    assert s["a0"] == pytest.approx(0.75) and s["a1"] == pytest.approx(0.75)
    assert s["delta"] == pytest.approx(0.0)
    assert s["failure_rate"] == pytest.approx(1 / 3)
    # a relabel counts: the second row judged consistent instead makes it wrong
    rows[1]["verdict"] = "consistent"
    assert judged_scores(rows)["a1"] == pytest.approx(0.5)


def test_export_import_round_trip_and_corrected_label_scoring(run, tmp_path, capsys):
    assert _judge(run, "--sample") == 0
    assert _judge(run, "--export", tmp_path / "all.csv") == 0
    rows = _rows(tmp_path / "all.csv")
    assert rows and all(r["verdict"] == "" for r in rows)
    neg = [r for r in rows if r["perturbation"] == "negation"]
    assert neg, "negation changed no sentence"
    # by hand: every negated sentence has a negator, so the keyword model says 0. A "good"
    # sentence negated is relabelled 0 (right); a "bad" one negated is dropped
    for r in rows:
        if r["perturbation"] == "negation":
            r["verdict"] = "relabel:0" if r["label"] == "1" else "drop"
        else:
            r["verdict"] = "consistent"
        r["who"] = "ann"
    # the team splits the work: two files, imported one after the other
    half = len(rows) // 2
    (run / "eval.png").write_bytes(b"stale")  # as if drawn by eval before the judging
    assert _judge(run, "--import", _write(tmp_path / "a.csv", rows[:half])) == 0
    assert _judge(run, "--import", _write(tmp_path / "b.csv", rows[half:])) == 0
    assert _judge(run, "--export", tmp_path / "back.csv") == 0
    back = {r["sample"]: r for r in _rows(tmp_path / "back.csv")}
    assert {k: (r["verdict"], r["who"]) for k, r in back.items()} == \
        {r["sample"]: (r["verdict"], "ann") for r in rows}
    capsys.readouterr()
    # the summary (rewritten by judge) scores negation on the judged rows
    summary = json.loads((run / "summary.json").read_text())
    row = next(r for r in summary["perturbations"] if r["perturbation"] == "negation")
    n_good = sum(r["label"] == "1" for r in neg)
    assert row["judged"]["n"] == n_good and row["judged"]["dropped"] == len(neg) - n_good
    assert row["test"] == "INV" and row["a1"]["mean"] == pytest.approx(1.0)
    assert row["a0"]["mean"] == pytest.approx(1.0)
    assert row["raw"]["test"] != "INV"  # negation's own test, kept beside
    # eval.csv and eval.png follow at once, not on the next resume
    csv_row = next(r for r in _rows(run / "eval.csv") if r["perturbation"] == "negation")
    assert f"judged n={n_good}" in csv_row["test"], csv_row
    assert (run / "eval.png").read_bytes().startswith(b"\x89PNG")
    # ... and a resume keeps the judgements and prints the marker
    summary = _run(run)
    row = next(r for r in summary["perturbations"] if r["perturbation"] == "negation")
    assert row["judged"]["n"] == n_good and row["a1"]["mean"] == pytest.approx(1.0)
    with RunStore(run, readonly=True) as store:
        assert all(j["verdict"] and j["who"] == "ann" for j in store.judgements())
    from robustlab.studies.eval.command import print_summary

    print_summary(summary)
    assert f"INV judged n={n_good}" in capsys.readouterr().out


def test_report_and_check_use_the_corrected_labels(run, tmp_path):
    from robustlab.report.load import load_run
    from robustlab.studies.eval.report import eval_section
    from robustlab.studies.learnability.thresholds import Check
    from robustlab.studies.learnability.thresholds import evaluate as gate

    _judge(run, "--export", tmp_path / "all.csv")
    rows = _rows(tmp_path / "all.csv")
    for r in rows:  # every negated sentence judged consistent with its original label
        r["verdict"] = "consistent"
    assert _judge(run, "--import", _write(tmp_path / "c.csv", rows)) == 0
    neg = [r for r in rows if r["perturbation"] == "negation"]
    # by hand: negated sentences are all predicted 0; only the "bad" ones keep label 0
    want = sum(r["label"] == "0" for r in neg) / len(neg)
    with RunStore(run, readonly=True) as store:
        (c,) = gate(store, [Check("object:keyword", "negation", "max_fail_rate", 0.5)])
    assert c.test == f"INV judged n={len(neg)}"
    n_good = sum(r["label"] == "1" for r in neg)
    assert c.value == pytest.approx(n_good / len(neg))  # every right "good" one now fails
    text = json.dumps([getattr(b, "rows", None) for b in eval_section([load_run(run)])])
    assert f"INV judged n={len(neg)}" in text
    assert f"{want:.3f}" in text


def test_bad_csv_rows_are_refused_and_nothing_is_imported(run, tmp_path, capsys):
    _judge(run, "--export", tmp_path / "all.csv")
    rows = _rows(tmp_path / "all.csv")
    for r in rows:
        r["verdict"] = "consistent"
    for bad, why in [({"sample": "p9|seed=0/999"}, "unknown sample"),
                     ({"verdict": "relabel:7"}, "model's labels"),
                     ({"verdict": "consistant"}, "expected consistent"),
                     ({"perturbed": "something else"}, "perturbed text differs")]:
        broken = [dict(r) for r in rows]
        broken[-1].update(bad)
        capsys.readouterr()
        assert _judge(run, "--import", _write(tmp_path / "bad.csv", broken)) == 2
        err = capsys.readouterr().err.strip()
        assert why in err and f"line {len(rows) + 1}" in err and "\n" not in err
        with RunStore(run, readonly=True) as store:
            assert all(j["verdict"] is None for j in store.judgements())  # not half-imported


def test_partly_judged_is_marked_and_not_rescored(run, tmp_path):
    _judge(run, "--export", tmp_path / "all.csv")
    rows = _rows(tmp_path / "all.csv")
    neg = [r for r in rows if r["perturbation"] == "negation"]
    neg[0]["verdict"] = "drop"
    assert _judge(run, "--import", _write(tmp_path / "p.csv", neg)) == 0
    row = next(r for r in json.loads((run / "summary.json").read_text())["perturbations"]
               if r["perturbation"] == "negation")
    assert row["judging"] == {"judged": 1, "sampled": len(neg)} and "judged" not in row


def test_a_tampered_judgement_is_refused(run, tmp_path):
    import sqlite3

    _judge(run, "--sample")
    con = sqlite3.connect(run / "store.sqlite")
    con.execute("UPDATE judgements SET verdict='drop' WHERE rowid=1")
    con.commit()
    con.close()
    with RunStore(run, readonly=True) as store, pytest.raises(Exception, match="checksum"):
        store.judgements()


def test_an_old_run_without_the_table_still_reads(run):
    with RunStore(run, readonly=True) as store:
        assert not store.has_judgements_table() and store.judgements() == []


def test_tui_judges_20_samples_by_keys_at_80x24(run, tmp_path):
    """j on the eval screen opens the judge screen; 20 samples judged by single keys land in
    the store, and the eval summary then scores on them."""
    import asyncio

    pytest.importorskip("textual", reason="the TUI tests need textual")
    from robustlab.cli import build_parser
    from robustlab.studies.eval.judge_screen import JudgeScreen
    from robustlab.tui.app import RobustlabApp, Settings

    def verdicts():
        with RunStore(run, readonly=True) as store:
            return [j["verdict"] for j in store.judgements()]

    from tui.test_app import wait_for as until  # an event with a generous ceiling

    keys = [["c"], ["d"], ["r", "0"], ["r", "1"]]

    async def main():
        app = RobustlabApp([run], Settings(parser=build_parser, cwd=tmp_path, poll_seconds=0.2))
        async with app.run_test(size=(80, 24)) as pilot:
            app.open_results(run, "eval")
            await until(pilot, lambda: getattr(app.screen, "view", None) is not None)
            await pilot.press("j")
            await until(pilot, lambda: isinstance(app.screen, JudgeScreen)
                        and app.screen.view is not None)
            screen = app.screen
            assert len(screen.samples) == 20
            for w in ("#judge-original", "#judge-perturbed", "#judge-help"):
                region = screen.query_one(w).region
                assert region.height >= 1 and region.bottom <= 23, (w, region)  # on screen
            assert "original : " in str(screen.query_one("#judge-original").render())
            first = screen.samples[0]["perturbed"]
            assert first in str(screen.query_one("#judge-perturbed").render())
            for i in range(20):
                await pilot.press(*keys[i % 4])
            await until(pilot, lambda: None not in verdicts())
            await pilot.press("escape")
            await pilot.press("ctrl+r")  # the eval table says it scores on the judgements
            await until(pilot, lambda: "judged n=" in str(app.screen.view.table.rows))

    asyncio.run(main())
    got = verdicts()
    assert got.count("consistent") == 5 and got.count("drop") == 5
    assert got.count("relabel:0") == 5 and got.count("relabel:1") == 5
    summary = _run(run)  # a resume scores on them
    assert {r["perturbation"] for r in summary["perturbations"] if r.get("judged")} == \
        {"negation", "word_delete"}


def test_terminal_line_mode_records_verdicts(run, monkeypatch, capsys):
    """On a terminal, ``robustlab judge RUN`` asks for each sample: c, r<label>, d; a bad
    answer is asked again; q stops with what was saved kept."""
    import sys

    answers = iter(["c", "r7", "r0", "x", "d", "q"])
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(answers))
    assert _judge(run) == 0
    out = capsys.readouterr().out
    assert "original : " in out and "perturbed: " in out and "0..1" in out
    with RunStore(run, readonly=True) as store:
        got = [j["verdict"] for j in store.judgements() if j["verdict"]]
    assert got == ["consistent", "relabel:0", "drop"]


def test_a_stale_judgement_is_not_scored_and_is_said(run, tmp_path):
    """A judged row whose cell now holds other texts (recomputed) never counts: the
    perturbation keeps its raw scores and says how many are stale; eval still writes."""
    import sqlite3

    _judge(run, "--export", tmp_path / "all.csv")
    rows = _rows(tmp_path / "all.csv")
    for r in rows:
        r["verdict"] = "consistent"
    _judge(run, "--import", _write(tmp_path / "c.csv", rows))
    neg = next(r for r in rows if r["perturbation"] == "negation")
    cell, idx = neg["sample"].rsplit("/", 1)
    con = sqlite3.connect(run / "store.sqlite")  # as a recomputed cell would hold
    con.execute("DELETE FROM predictions WHERE cell=? AND idx=?", (cell, int(idx)))
    con.commit()
    con.close()
    summary = _run(run)
    row = next(r for r in summary["perturbations"] if r["perturbation"] == "negation")
    assert "judged" not in row and row["judging"]["stale"] == 1


def test_drawing_again_keeps_verdicts_and_replaces_stale_samples(run):
    row = {"sample": "p0|seed=0/0", "cell": "p0|seed=0", "idx": 0, "perturbation": "negation",
           "original": "a good film", "perturbed": "not a good film", "label": 1}
    with RunStore(run) as store:
        assert store.add_samples([row]) == 1
        store.set_verdicts([(row["sample"], "relabel:0", "ann")])
        assert store.add_samples([row]) == 0  # the same texts: the verdict stays
        assert store.judgements()[0]["verdict"] == "relabel:0"
        assert store.add_samples([{**row, "perturbed": "a film"}]) == 1  # recomputed cell
        (j,) = store.judgements()
        assert (j["perturbed"], j["verdict"], j["who"]) == ("a film", None, None)


def test_check_plan_accepts_accuracy_thresholds_on_a_label_changing_perturbation_once_judged(
        run, tmp_path):
    """min_accuracy / max_drop on negation (label-changing: no A1) are refused when the plan
    loads, unless the plan's run has every drawn negation sample judged; then they gate A1 on
    the corrected labels."""
    from robustlab.studies.learnability.thresholds import Check, load_plan
    from robustlab.studies.learnability.thresholds import evaluate as gate

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}", encoding="utf-8")
    plan = tmp_path / "plan.toml"
    plan.write_text(f'model = "model"\ndataset = "demo"\nout = "{run.name}"\n[[test]]\n'
                    'perturbation = "negation"\nmin_accuracy = 0.4\nmax_drop = 0.5\n',
                    encoding="utf-8")
    with pytest.raises(InputError, match="changes the label.*judge its samples first"):
        load_plan(plan)
    _judge(run, "--export", tmp_path / "all.csv")
    rows = _rows(tmp_path / "all.csv")
    neg = [r for r in rows if r["perturbation"] == "negation"]
    half = neg[: len(neg) // 2]
    for r in half:
        r["verdict"] = "consistent"
    assert _judge(run, "--import", _write(tmp_path / "h.csv", half)) == 0
    with pytest.raises(InputError, match="changes the label"):  # partly judged: still refused
        load_plan(plan)
    for r in neg:  # the "good" ones, negated, relabelled 0; the "bad" ones dropped
        r["verdict"] = "relabel:0" if r["label"] == "1" else "drop"
    assert _judge(run, "--import", _write(tmp_path / "all2.csv", neg)) == 0
    loaded = load_plan(plan)
    assert {c.threshold for c in loaded.checks()} == {"min_accuracy", "max_drop"}
    with RunStore(run, readonly=True) as store:
        (c,) = gate(store, [Check("object:keyword", "negation", "min_accuracy", 0.4)])
    n_good = sum(r["label"] == "1" for r in neg)
    # by hand: every kept sample is a negated "good" one relabelled 0, all predicted 0
    assert c.test == f"INV judged n={n_good}" and c.value == pytest.approx(1.0) and c.passed


def test_labels_are_shown_by_name_where_the_model_has_them(tmp_path):
    """A checkpoint's id2label names the labels (judge's line mode and TUI show "1
    (positive)"); generic LABEL_k names, or none, leave the integers."""
    from types import SimpleNamespace

    from robustlab.studies.eval.judge import label_names_of, label_text, labels_help

    def store(model: str):
        return SimpleNamespace(run_info=lambda: SimpleNamespace(config={"model": model}))

    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"id2label": {"0": "negative", "1": "positive"}}))
    names = label_names_of(store(str(ckpt)), 2)
    assert names == ["negative", "positive"]
    assert label_names_of(store(f"hf:{ckpt}"), 2) == names
    assert label_text(1, names) == "1 (positive)" and label_text("0", None) == "0"
    assert labels_help(2, names) == "0 negative, 1 positive" and labels_help(3, None) == "0..2"
    (ckpt / "config.json").write_text(json.dumps({"id2label": {"0": "LABEL_0", "1": "LABEL_1"}}))
    assert label_names_of(store(str(ckpt)), 2) is None
    assert label_names_of(store("object:keyword"), 2) is None
