"""``robustlab cross-domain mt|clf|scores`` through the real command line entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wmt_official import official

from robustlab.cli import main

REF = ["the cat sat on the mat", "a dog barks at night", "rain falls in spain",
       "we like green tea", "the market closed higher", "prices rose again today"]
DOM = ["news", "news", "social", "social", "ecommerce", "ecommerce"]
HYP = ["the cat sat on a mat", "a dog barks", "rain falls on spain", "we like tea",
       "the market closed", "prices rose today"]


def _w(p: Path, lines: list[str]) -> str:
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(p)


def _small() -> list[str]:
    return ["--bags", "5", "--bag-fraction", "0.5", "--eps", "5", "10", "--no-plots"]


def test_mt_command_writes_run_dir_and_prints_table(tmp_path: Path, capsys) -> None:
    ref = _w(tmp_path / "ref.txt", REF)
    dom = _w(tmp_path / "dom.txt", DOM)
    a = _w(tmp_path / "a.txt", HYP)
    b = _w(tmp_path / "b.txt", REF)
    human = _w(tmp_path / "human.tsv", ["A 1.0", "B 2.0", "C 3.0"])
    out = tmp_path / "run"
    rc = main(["cross-domain", "mt", "--systems", f"A={a}", f"B={b}", "--refs", ref,
               "--domains", dom, "--human", human, "--out", str(out), *_small()])
    assert rc == 0
    text = capsys.readouterr().out
    assert "by_bleu: B > A" in text and "agreement with human" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kind"] == "cross-domain" and summary["complete"]
    # sacreBLEU's signature is printed with the scores, as sacreBLEU itself prints it
    sig = summary["systems"][0]["corpus"]["signature"]["bleu"]
    assert f"sacreBLEU BLEU signature: {sig}" in text and "tok:13a" in sig
    assert summary["rankings"]["human"] == ["B", "A"]
    assert summary["config"]["eps"] == [5.0, 10.0]


def test_mt_command_bad_input_exit_2_and_no_run_dir(tmp_path: Path, capsys) -> None:
    ref = _w(tmp_path / "ref.txt", REF)
    dom = _w(tmp_path / "dom.txt", DOM[:5])
    a = _w(tmp_path / "a.txt", HYP)
    out = tmp_path / "run"
    rc = main(["cross-domain", "mt", "--systems", a, "--refs", ref, "--domains", dom,
               "--out", str(out)])
    assert rc == 2
    err = capsys.readouterr().err
    assert "dom.txt" in err and "5 domain labels" in err
    assert not out.exists()
    rc = main(["cross-domain", "mt", "--systems", a, "--out", str(out)])
    assert rc == 2 and "--refs" in capsys.readouterr().err


def test_scores_command_stdout_and_optional_run_dir(tmp_path: Path, capsys) -> None:
    rows = ["system,domain,score"]
    for sys_, accs in {"m1": [60, 62, 61, 59], "m2": [40, 80, 70, 50]}.items():
        rows += [f"{sys_},{d},{v}" for d, v in zip("abcd", accs, strict=True)]
    f = _w(tmp_path / "scores.csv", rows)
    assert main(["cross-domain", "scores", f, *_small()]) == 0
    text = capsys.readouterr().out
    assert "by_cov: m1 > m2" in text
    out = tmp_path / "sc"
    assert main(["cross-domain", "scores", f, "--out", str(out), *_small()]) == 0
    assert json.loads((out / "summary.json").read_text())["config"]["task"] == "scores"
    bad = _w(tmp_path / "bad.csv", ["system,domain,score", "m1,a,1", "m1,b,oops"])
    assert main(["cross-domain", "scores", bad]) == 2
    assert "bad.csv: line 3" in capsys.readouterr().err


@pytest.mark.slow
def test_wmt22_convenience_full_ru_en(shared_data: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "ruen"
    rc = main(["cross-domain", "mt", "--wmt22-dir", str(shared_data / "wmt22_general"),
               "--pair", "ru-en", "--out", str(out)])
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["systems"]) == 10
    g = {r["system"]: r for r in summary["systems"]}["Online-G"]
    # WMT22's published corpus BLEU (bleu-A) of Online-G on ru-en: 46.6679
    assert round(g["corpus"]["bleu"], 4) == round(official(shared_data, "ru-en", "Online-G", "bleu-A"), 4)
    assert "gamma_curves.png" in summary["files"]
    assert set(summary["agreement"]) >= {"bleu", "cov", "gamma"}


def test_scores_from_wmt_segment_da(tmp_path: Path, capsys) -> None:
    da = _w(tmp_path / "ad-seg.csv", ["SYS SID RAW.SCR Z.SCR N ",
                                      "A.1 1 80 0.1 1 ", "A.1 3 60 -0.2 1 ", "A.1 5 70 0 2 ",
                                      "B.2 2 90 0.5 1 ", "B.2 4 91 0.6 1 ", "B.2 6 89 0.4 1 "])
    dom = _w(tmp_path / "dom.txt", DOM)
    assert main(["cross-domain", "scores", da, "--wmt-da", "--domains", dom, *_small()]) == 0
    out = capsys.readouterr().out
    assert "by_mean: B > A" in out and "by_cov: B > A" in out
    assert main(["cross-domain", "scores", da, "--wmt-da"]) == 2
    assert "--domains" in capsys.readouterr().err
    short = _w(tmp_path / "dom3.txt", DOM[:3])
    assert main(["cross-domain", "scores", da, "--wmt-da", "--domains", short]) == 2
    assert "line 4: segment id 5 outside 1..3" in capsys.readouterr().err
