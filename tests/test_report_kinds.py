"""What each report kind says (issue 25): the layouts a robustness, quick-estimate, attack, bias
and cross-domain run get, read back from the rendered HTML and Markdown. The browser checks of
the same reports are in test_report_pages.py."""

from __future__ import annotations

import json
import re

import pytest
import report_helpers as rh
from report_helpers import markdown_html, parse, table

from robustlab.report import build_document, to_html, to_markdown, write_report
from robustlab.report.doc import Document, Table, numeric_columns
from robustlab.report.sections import compact_json


def _html(runs, tmp_path, name="r.html") -> str:
    return write_report(runs, tmp_path / name, "html").read_text(encoding="utf-8")


def test_robustness_report_has_its_own_layout(tmp_path):
    run = rh.learnability_run(tmp_path / "rob", kind="robustness", learn=False)
    html = _html([run], tmp_path)
    page = parse(html)
    assert "Average learnability (log-AUC" not in html  # no Table 2 for a robustness study
    pairs = table(page, "A0 = standard accuracy")
    assert "avg. learnability" not in pairs["head"]  # no all-dash learnability columns
    assert all(c != "–" for r in pairs["rows"] for c in r)
    assert "Not measured in this run, so not shown: avg. learnability" in pairs["caption"]
    # Table 3: only ρ that exists (robustness vs Δ); none of n = 0
    t3 = table(page, "Spearman ρ over model×perturbation pairs")
    assert [r[1] for r in t3["rows"]] == ["robustness vs Δ"] and t3["rows"][0][-1] == "8"
    # failure rates and the worst failing examples, as `robustlab failures` has them
    from robustlab.runs.store import RunStore
    from robustlab.studies.learnability.predictions import failure_summary

    with RunStore(run, readonly=True) as store:
        want = failure_summary(store)
    rates = table(page, "Share of test examples failing their CheckList test")
    assert [r[-1] for r in rates["rows"]] == [f"{w['fail_rate']:.3f}" for w in want]
    assert table(page, "worst failing examples")["rows"]
    assert any(i.startswith("data:image/png") for i in page.images)  # the robustness bars


def test_quick_report_shows_the_estimate_and_its_correlations(tmp_path):
    run = rh.learnability_run(tmp_path / "quick", quick=True)
    summary = json.loads((run / "summary.json").read_text())
    page = parse(_html([run], tmp_path))
    est = summary["estimate"]
    t3 = table(page, "Spearman ρ over model×perturbation pairs")
    rows = {r[1]: r for r in t3["rows"]}
    c = est["correlations"]["estimate_vs_robustness"]
    row = rows["learnability estimate (@0.02) vs robustness"]
    assert row[2] == f"{c['rho']:+.3f}" and row[-1] == str(c["n"]) and c["n"] == 8
    assert not any(r[-1] == "0" for r in t3["rows"])  # never a row of n = 0
    t = table(page, "Learnable: learnability@1")
    assert len(t["rows"]) == len(est["pairs"])
    assert "Average learnability (log-AUC" not in " ".join(x["caption"] for x in page.tables)
    assert len(page.images) == 2  # the estimate heat map (+ scatter) and the robustness bars


def test_attack_report_model_id_is_a_row_and_l0_zero_is_not_marked(tmp_path):
    run = rh.attack_run(tmp_path / "attack")
    html = _html([run], tmp_path)
    page = parse(html)
    t = table(page, "Success rate over attacked")
    assert t["head"] == ["", "attack"]  # the run's name heads the column, not the model id
    assert t["rows"][0] == ["model", rh.LONG_MODEL]
    vuln = table(page, "vulnerable examples")
    zero = [r for r in vuln["rows"] if r[-1] == "0"]
    assert zero and all("no word changed" in r[2] for r in zero)
    body = html[html.index("Vulnerable examples"):]
    first_row = body[body.index("<tr><td>0</td>"):].split("</tr>")[0]
    vulnerable = first_row.split("</td>")[2]  # the x̃ cell (the next one marks the patch)
    assert "no word changed" in vulnerable
    assert '<mark class="changed">' not in vulnerable  # ℓ0 = 0: nothing marked as changed
    assert '<mark class="changed">a-new-word</mark>' in body  # ℓ0 = 1: the word is marked


def test_bias_report_is_paper_002_and_says_n_zero(tmp_path):
    run = rh.bias_run(tmp_path / "bias")
    html = _html([run], tmp_path)
    assert "paper 002" in html and "paper 001" not in html
    assert "k not run" not in html
    assert "3 of 6 pairs never occur" in html and "king/queen" in html
    t = table(parse(html), "B(p, k) = mean F_soft")
    assert [r[0] for r in t["rows"]] == ["he/she", "his/her", "actor/actress"]
    # the configuration dump keeps each pair on its line's width, not one token per line
    import html as htmllib

    assert '"pairs": ["he/she", "his/her", "actor/actress"' in htmllib.unescape(html)


def test_compact_json_is_valid_and_short():
    cfg = {"pairs": [["he", "she"], ["his", "her"]] * 10, "k": [0, 1, 2, 3],
           "inputs": {"dataset": {"name": "demo"}}}
    text = compact_json(cfg)
    assert json.loads(text) == cfg
    assert len(text.splitlines()) <= 10 and max(map(len, text.splitlines())) <= 96
    assert '["he", "she"], ["his", "her"], ["he", "she"]' in text  # not one token per line


def test_zero_bagging_tables_say_why(tmp_path):
    run = rh.cross_domain_run(tmp_path / "clf")
    s = json.loads((run / "summary.json").read_text())
    html = _html([run], tmp_path)
    # 4 domains, one left out: 3, bags of 0.6 · 3 ≈ 2 domains: real spread, no warning
    assert s["systems"][0]["bagging"]["cov"] > 0 and "All zero" not in html
    rh.patch_config(run, fraction=0.3)
    for r in s["systems"]:
        for m in ("bagging", "design_bagging"):
            for row in r[m]["leave_one_out"]:
                row["variance"] = row["cov"] = 0.0
    (run / "summary.json").write_text(json.dumps(s))
    html = _html([run], tmp_path, "z.html")
    assert html.count("All zero by construction") == 2  # bagging and design bagging
    assert "every bag holds 1 domain" in html


def test_markdown_right_aligns_only_number_columns(tmp_path):
    t = Table(["perturbation", "model", "ρ", "note"],
              [["typo", "bow", "+0.500", "ok"], ["negate", "cnn", "–", "3 pairs"]])
    assert numeric_columns(t, strict=True) == [False, False, True, False]
    doc = Document("t")
    doc.add(t)
    md = to_markdown(doc)
    assert "|:---|:---|---:|:---|" in md
    html = markdown_html(md)
    assert re.search(r'<th style="text-align: ?right">ρ</th>', html)
    assert re.search(r'<th style="text-align: ?left">note</th>', html)


def test_side_by_side_puts_each_run_in_a_column(tmp_path):
    from robustlab.report.doc import Columns

    a = rh.learnability_run(tmp_path / "a")
    b = rh.learnability_run(tmp_path / "b", quick=True)
    doc = build_document([a, b])
    cols = [x for x in doc.blocks if isinstance(x, Columns)]
    assert cols and cols[0].labels == ["a", "b"]
    html = to_html(doc)
    assert html.count('<div class="side">') >= 1 and html.count('<div class="col">') >= 2
    md = write_report([a, b], tmp_path / "r.md", "md").read_text()
    assert "#### a" in md and "#### b" in md  # Markdown: one after the other, labelled
    names = sorted(f.name for f in (tmp_path / "r_figures").iterdir())
    assert names == ["curves_a.png", "estimate_b.png", "robustness_b.png", "scatter_a.png",
                     "table_a.png"]  # the figures inside the columns are written too


@pytest.mark.parametrize("width", [6.5, 20.0])
def test_figures_fit_the_report_column(width):
    from robustlab import plots

    fig = plots.new_figure(width, 3)
    assert fig.get_size_inches()[0] * plots.DPI <= 1140  # shown at its size, text ≥ 9 pt
    with plots.width_limit(5.0):
        assert plots.new_figure(width, 3).get_size_inches()[0] == 5.0


def test_mt_report_states_the_sacrebleu_signature(tmp_path):
    html = _html([rh.cross_domain_run(tmp_path / "mt", "mt")], tmp_path)
    assert "sacreBLEU signatures: bleu: nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|" \
        "version:2.5.1." in html
