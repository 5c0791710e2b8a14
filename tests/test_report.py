"""``robustlab report``: one document per run kind, from small real runs and fixture run
directories; every number checked against summary.json; hostile run directories escaped;
Markdown valid CommonMark; incomplete runs labelled."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from report_helpers import markdown_html, parse, table
from tui import fixtures

from robustlab.cli import main
from robustlab.runs.store import RunStore


def _report(run_dirs, out: Path, *extra) -> str:
    assert main(["report", *map(str, run_dirs), "--out", str(out), *extra]) == 0
    return out.read_text(encoding="utf-8")


def _f(v, d=3, signed=False):
    return f"{v:{'+' if signed else ''}.{d}f}"


# ---- learnability: a real run on the demo data ---------------------------------------------------


def test_learnability_report_from_a_real_run_equals_summary(tmp_path, capsys):
    out = tmp_path / "learn"
    assert main(["learnability", "--model", "bow", "--dataset", "demo", "--perturbations",
                 "identity,append_token,leet_letters", "--p-grid", "0.05,1", "--seeds", "0",
                 "--steps", "30", "--max-train", "120", "--max-test", "60", "--quiet",
                 "--no-plots", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "±" not in printed  # one seed: no made-up spread
    assert "(exact p, n=3)" in printed  # 3 pairs: exact p, and said so
    summary = json.loads((out / "summary.json").read_text())
    page = parse(_report([out], tmp_path / "r.html"))
    # Table 2: every cell is summary.json's average learnability (one seed: the mean alone)
    t2 = table(page, "Average learnability (log-AUC")
    assert t2["head"] == ["perturbation", "bow", "average"]
    by_pert = {r["perturbation"]: r for r in summary["pairs"]}
    cells = {row[0]: row[1] for row in t2["rows"]}
    assert cells == {p: _f(r["avg_learnability"]["mean"]) for p, r in by_pert.items()}
    means = [by_pert[row[0]]["avg_learnability"]["mean"] for row in t2["rows"]]
    assert means == sorted(means)  # ascending, as paper 000 Table 2
    best = max(range(3), key=lambda i: means[i])
    assert t2["marks"][(best, 1)] == "best" and "second" in t2["marks"].values()
    # Table 3: ρ, p and how p was computed, as in summary.json
    t3 = table(page, "Spearman ρ over model×perturbation pairs")
    c = summary["correlations"]["learnability_vs_robustness"]
    row = next(r for r in t3["rows"] if r[1] == "avg. learnability vs robustness")
    assert c["p_method"] == "exact"
    assert row[2:] == [_f(c["rho"], signed=True) if c["rho"] is not None else "–",
                       f"{c['p_value']:.3g}" if c["p_value"] is not None else "–",
                       "exact" if c["rho"] is not None else "–", "3"]
    # per pair: robustness and Δ equal the summary's
    tp = table(page, "A0 = standard accuracy")
    col = {h: j for j, h in enumerate(tp["head"])}
    for r in tp["rows"]:
        s = by_pert[r[1]]
        assert r[col["robustness (A1−A0, INV)"]] == _f(s["robustness"]["mean"])
        assert r[col["Δ (A2−A1)"]] == _f(s["delta"]["mean"])
        assert r[col["A0 / A1 / A2"]] == " / ".join(_f(s[k]["mean"]) for k in (
            "accuracy_standard", "accuracy_robustness", "accuracy_augmentation"))
        assert r[col["seeds"]] == "1"
    # advice, Table 4, figures, provenance
    assert table(page, "bow: augment with the top rows first")["rows"]
    assert table(page, "σ of learnability at each p")["rows"][-1][0] == "avg"
    assert len(page.images) == 3 and all(i.startswith("data:image/png;base64,")
                                         for i in page.images)
    info = RunStore(out, readonly=True).run_info()
    html_text = (tmp_path / "r.html").read_text()
    assert info.command in html_text.replace("&quot;", '"').replace("&#x27;", "'")
    prov = table(page, "")  # the first table without caption text is fine: find by field
    rows = {r[0]: r[1] for t in page.tables if t["head"] == ["field", "value"] for r in t["rows"]}
    assert rows["status"] == "done (complete)" and rows["seeds"] == "[0]"
    assert "robustlab" in rows["versions"] and prov
    # the same numbers in Markdown, which is valid CommonMark with real tables
    md = _report([out], tmp_path / "r.md")
    assert (tmp_path / "r_figures").is_dir() and len(list((tmp_path / "r_figures").iterdir())) == 3
    mpage = parse(markdown_html(md))
    mt2 = next(t for t in mpage.tables if t["head"] == ["perturbation", "bow", "average"])
    assert {row[0]: row[1] for row in mt2["rows"]} == cells
    for src in mpage.images:
        assert (tmp_path / src).is_file()


# ---- attacks, bias, cross-domain: small real runs -------------------------------------------------


@pytest.fixture
def attack_files(tmp_path):
    data = tmp_path / "dev.txt"
    data.write_text("1 the plot is good film .\n0 a dull thing\n1 good film and plot\n")
    (tmp_path / "table.json").write_text(json.dumps({"good": ["great", "fine"],
                                                     "plot": ["story"]}))
    (tmp_path / "pairs.json").write_text(json.dumps({"film": ["movie"]}))
    return tmp_path


def test_attack_report_from_a_real_run(attack_files, monkeypatch, tmp_path):
    from _so_toys import make_wrapper, planted_proba

    import robustlab.integrations.victims as cmd

    monkeypatch.setattr(cmd, "load_victim", lambda spec, device=None: (make_wrapper(planted_proba),
                                                          "planted"))
    out = attack_files / "run"
    assert main(["attack", "--recipe", "so-beam", "--model", "hf:planted", "--dataset",
                 str(attack_files / "dev.txt"), "--source",
                 f"table:{attack_files / 'table.json'}", "--patch-table",
                 str(attack_files / "pairs.json"), "--out", str(out), "--no-progress"]) == 0
    s = json.loads((out / "summary.json").read_text())
    text = _report([out], tmp_path / "a.html")
    page = parse(text)
    t = table(page, "Success rate over attacked")
    rows = {r[0]: r[1] for r in t["rows"]}
    assert rows["success rate"] == _f(s["success_rate"])
    assert rows["mean ℓ0 (words changed)"] == _f(s["mean_l0"])
    assert rows["successful"] == str(s["counts"]["successful"])
    assert rows["perplexity, original"] == "–"  # not measured: said, not invented
    ex = table(page, "vulnerable examples: f keeps its answer")
    assert ex["rows"][0][1] == "the plot is good film ."
    assert ex["rows"][0][2] == "the plot is great film ."
    assert '<mark class="changed">great</mark>' in text  # the changed word is marked
    assert '<mark class="patch">film</mark>' in text or '<mark class="changed">movie</mark>' \
        in text


def test_bias_report_from_a_real_run(attack_files, monkeypatch, tmp_path):
    class Toy:
        def predict_proba(self, texts):
            return np.array([[0.7, 0.3] if "she" in t.split() else [0.4, 0.6] for t in texts])

        def model_id(self):
            return "toy"

    import robustlab.models.registry as reg

    monkeypatch.setattr(reg, "load_model", lambda spec, device=None: Toy())
    # a checkpoint (hf:toy) is loaded with its trained head: robustlab.models.checkpoint
    monkeypatch.setattr("robustlab.models.checkpoint.load_checkpoint",
                        lambda spec, device=None: Toy())
    data = attack_files / "g.txt"
    data.write_text("1 he liked the good plot\n0 he hated it\n1 the film\n")
    out = attack_files / "bias"
    assert main(["bias", "--model", "hf:toy", "--dataset", str(data), "--pairs", "builtin",
                 "--source", f"table:{attack_files / 'table.json'}", "--k", "0,1", "--out",
                 str(out), "--no-progress"]) == 0
    s = json.loads((out / "summary.json").read_text())
    html = _report([out], tmp_path / "b.html")
    page = parse(html)
    assert "(paper 002, Sec. 4)" in html and "paper 001" not in html  # bias is paper 002's
    t = table(page, "B(p, k) = mean F_soft")
    assert t["head"] == ["pair", "k=0", "k=1"]  # the distances that ran
    rows = {r[0]: r[1:] for r in t["rows"]}
    for r in s["table"]:
        name = "/".join(r["pair"])
        if r["B"] is not None:
            assert rows[name][r["k"]] == _f(r["B"], 4, signed=True)
    assert rows["he/she"] == ["-0.3000", "-0.3000"]
    assert len(page.images) >= 2  # B against k, and the he/she F_soft histogram


def test_cross_domain_reports_side_by_side_with_the_sigma_grid(tmp_path):
    rows = ["system,domain,score"]
    accs = {"bow": [80.2, 81.5, 79.1, 82.0], "cnn": [84.0, 78.5, 81.0, 86.2],
            "lstm": [77.9, 78.2, 77.7, 78.4]}
    rows += [f"{s},{d},{v}" for s, vs in accs.items() for d, v in zip("abcd", vs, strict=True)]
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(rows) + "\n")
    fixed, sigma = tmp_path / "fixed", tmp_path / "sigma"
    small = ["--bags", "5", "--bag-fraction", "0.5", "--no-plots"]
    assert main(["cross-domain", "scores", str(f), "--out", str(fixed), *small]) == 0
    assert main(["cross-domain", "scores", str(f), "--out", str(sigma), "--eps-grid", "sigma",
                 *small]) == 0
    page = parse(_report([fixed, sigma], tmp_path / "x.html"))
    for run, grid_word in ((fixed, "fixed grid"), (sigma, "units of the score spread")):
        s = json.loads((run / "summary.json").read_text())
        t = table(page, grid_word)
        col = {h: i for i, h in enumerate(t["head"])}
        for r in s["systems"]:
            row = next(x for x in t["rows"] if x[0] == r["system"])
            assert row[col["mean"]] == _f(r["mean"])
            assert row[col["CoV (σ/μ)"]] == _f(r["cov"], 4)
            assert row[col["γ-AUC"]] == _f(r["gamma_auc"], 4)
    t = table(page, "units of the score spread")
    assert "γ@0.5σ" in t["head"] and "γ@2σ" in t["head"]
    side = table(page, "Each run's mean, CoV and γ-AUC per system")
    assert side["head"][1:4] == ["mean (fixed)", "CoV (fixed)", "γ-AUC (fixed)"]
    assert [r[0] for r in side["rows"]] == ["bow", "cnn", "lstm"]
    # the σ grid separates the systems the fixed grid presses against 0
    auc = {k: [r["gamma_auc"] for r in json.loads((d / "summary.json").read_text())["systems"]]
           for k, d in (("fixed", fixed), ("sigma", sigma))}
    assert max(auc["fixed"]) - min(auc["fixed"]) < 0.01
    assert max(auc["sigma"]) - min(auc["sigma"]) > 0.03


# ---- fixture run directories of every kind and state ----------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return fixtures.make_all(tmp_path_factory.mktemp("runs"))


def test_every_kind_reports_and_incomplete_runs_say_so(runs, tmp_path):
    for key in ("learn", "attack", "bias", "xd"):
        page = parse(_report([runs[key]], tmp_path / f"{key}.html"))
        rows = {r[0]: r[1] for t in page.tables if t["head"] == ["field", "value"]
                for r in t["rows"]}
        assert rows["status"] == "done (complete)" and rows["wall time"].startswith("2m 03s")
        assert rows["started"] == "2026-01-01 00:00:00 UTC"
        assert rows["cell signatures"].endswith(" cells)") and "fx:1" in rows["cell signatures"]
    # fixture learnability: two seeds, so mean ± sd, and the fixed summary numbers
    page = parse((tmp_path / "learn.html").read_text())
    t2 = table(page, "Average learnability (log-AUC")
    s = json.loads((runs["learn"] / "summary.json").read_text())
    want = {(r["perturbation"], r["model"]): f"{r['avg_learnability']['mean']:.3f}±0.030"
            for r in s["pairs"]}
    for row in t2["rows"]:
        for j, m in enumerate(t2["head"][1:3], start=1):
            assert row[j] == want[(row[0], m)]
    # a run still going and a run with a failed cell are labelled incomplete, first thing
    for key in ("learn-running", "failed", "died"):
        text = _report([runs[key]], tmp_path / f"{key}.html")
        assert "INCOMPLETE" in text[:text.index("<h2")]
    running = parse((tmp_path / "learn-running.html").read_text())
    assert table(running, "Average learnability (log-AUC")["rows"]  # so far, from the store
    # two runs of different kinds in one report, and bad input
    assert main(["report", str(runs["attack"]), str(runs["bias"]), "--out",
                 str(tmp_path / "mix.md")]) == 0
    assert "Counterfactual bias" in (tmp_path / "mix.md").read_text()
    assert main(["report", str(runs["corrupt"]), "--out", str(tmp_path / "c.html")]) == 2
    assert main(["report", str(tmp_path / "nope"), "--out", str(tmp_path / "n.html")]) == 2
    assert not (tmp_path / "c.html").exists() and not (tmp_path / "n.html").exists()


def test_two_bias_runs_side_by_side(runs, tmp_path):
    import shutil

    other = tmp_path / "bias-b"
    shutil.copytree(runs["bias"], other)
    page = parse(_report([runs["bias"], other], tmp_path / "bb.html"))
    t = table(page, "B(p, k) of each run")
    assert t["head"] == ["pair", "k", "B (bias-gender)", "B (bias-b)"]
    assert "bias-gender: bow" in t["caption"]  # the models, named once in the caption
    s = json.loads((other / "summary.json").read_text())
    first = s["table"][0]
    assert t["rows"][0] == ["/".join(first["pair"]), str(first["k"]),
                            *[_f(first["B"], 4, signed=True)] * 2]


def test_two_learnability_runs_side_by_side(runs, tmp_path):
    other = fixtures.learnability(tmp_path / "learn-b", models=("lstm",))
    page = parse(_report([runs["learn"], other], tmp_path / "two.html"))
    t2 = table(page, "Average learnability (log-AUC")
    assert t2["head"] == ["perturbation", "bow", "cnn", "lstm", "average"]
    t3 = table(page, "Spearman ρ over model×perturbation pairs")
    assert {r[0] for r in t3["rows"]} == {"learn-done", "learn-b"}


def test_hostile_run_directory_is_escaped(tmp_path):
    evil = ("<img src=x onerror=alert(1)>", "**b** [l](http://evil.example) `c` &amp; \\")
    run = fixtures.learnability(tmp_path / "evil", perts=evil)
    text = _report([run], tmp_path / "e.html")
    assert "<img src=x" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "<script" not in text.lower() and "<a " not in text and "href=" not in text
    page = parse(text)
    assert "<img src=x onerror=alert(1)>" in {r[0] for r in table(
        page, "Average learnability (log-AUC")["rows"]}
    md = _report([run], tmp_path / "e.md")
    rendered = markdown_html(md)
    assert "<img src=x" not in rendered and '<a href="http://evil' not in rendered
    assert "<strong>b</strong>" not in rendered and "<code>c</code>" not in rendered
    mpage = parse(rendered)
    firsts = {r[0] for t in mpage.tables for r in t["rows"]}
    assert "<img src=x onerror=alert(1)>" in firsts  # shown literally, as text


def test_markdown_tables_all_render(runs, tmp_path):
    """Every Table block comes out of markdown-it-py as a table with the same columns."""
    from robustlab.report import build_document
    from robustlab.report.doc import Table

    for key in ("learn", "attack", "bias", "xd"):
        doc = build_document([runs[key]])
        blocks = [b for b in doc.blocks if isinstance(b, Table)]
        md = _report([runs[key]], tmp_path / f"{key}.md")
        mpage = parse(markdown_html(md))
        assert len(mpage.tables) == len(blocks)
        for b, t in zip(blocks, mpage.tables, strict=True):
            assert len(t["head"]) == len(b.columns)
            assert len(t["rows"]) == len(b.rows)
            assert all(len(r) == len(b.columns) for r in t["rows"])


def test_default_output_and_format_choice(runs, tmp_path):
    import shutil

    run = tmp_path / "copy"
    shutil.copytree(runs["bias"], run)
    assert main(["report", str(run)]) == 0
    assert (run / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["report", str(run), "--format", "md"]) == 0
    assert (run / "report.md").read_text().startswith("# robustlab report")
    assert main(["report", str(run), "--out", str(tmp_path)]) == 2  # a directory


@pytest.mark.parametrize("text", [
    "# not a heading", "1. not a list", "- not a list", "> not a quote", "---", "***", "===",
    "<b>raw</b>", "<http://auto.link>", "[x](http://e.example)", "![i](x.png)", "`code`",
    "*em* **strong** _u_", "a | b", "&amp; &#35;", "trailing \\", "~~strike~~", "0.440±0.030",
    "2026-01-01 00:00:00 UTC", "+1 point", "10) ten"])
def test_markdown_escape_round_trips_as_plain_text(text):
    import html

    from robustlab.report.doc import md_escape

    assert markdown_html(md_escape(text)) == f"<p>{html.escape(text, quote=False)}</p>\n"
