"""Cross-domain data readers, rankings and the recipe's run directory (docs/run-directory.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from wmt_official import official

from robustlab.data.mt import (
    load_mt,
    load_wmt22,
    parse_system_specs,
    read_domains,
    read_human,
    system_name,
)
from robustlab.data.multidomain import load_domain, read_domain_csv, read_review_file
from robustlab.errors import InputError
from robustlab.metrics import ranking
from robustlab.runs.store import RunStore
from robustlab.studies.cross_domain.study import ConsistencyConfig, MTStudy, analyze_scores, run_mt

REF = ["the cat sat on the mat", "a dog barks at night", "rain falls in spain",
       "we like green tea", "the market closed higher", "prices rose again today"]
DOM = ["news", "news", "social", "social", "ecommerce", "ecommerce"]
SYS = {"good": REF, "mid": ["the cat sat on a mat", "a dog barks", "rain falls on spain",
                            "we like tea", "the market closed", "prices rose today"],
       "bad": ["cat", "dog night", "spain rain", "green", "closed market", "prices"]}


def _write(tmp: Path, name: str, lines: list[str]) -> Path:
    p = tmp / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def _files(tmp: Path) -> tuple[list[str], list[str], str]:
    systems = [f"{k}={_write(tmp, f'{k}.txt', v)}" for k, v in SYS.items()]
    return systems, [str(_write(tmp, "ref.txt", REF))], str(_write(tmp, "dom.txt", DOM))


# ---- data readers --------------------------------------------------------------------------------


def test_system_names_and_specs(tmp_path: Path) -> None:
    assert system_name("x/generaltest2022.ru-en.hyp.Online-G.en") == "Online-G"
    assert system_name("out/my_system.txt") == "my_system"
    specs = parse_system_specs(["A=a.txt", "b.txt"])
    assert list(specs) == ["A", "b"]
    with pytest.raises(InputError, match="two systems are named"):
        parse_system_specs(["x/s.txt", "y/s.txt"])


def test_systems_with_different_segment_counts_name_the_file(tmp_path: Path) -> None:
    systems, refs, dom = _files(tmp_path)
    short = _write(tmp_path, "short.txt", REF[:-1])
    with pytest.raises(InputError, match=r"short\.txt.*5 segments.*6"):
        load_mt([*systems, f"short={short}"], refs, dom)


def test_domain_file_that_does_not_match(tmp_path: Path) -> None:
    systems, refs, _ = _files(tmp_path)
    dom = _write(tmp_path, "dom_short.txt", DOM[:4])
    with pytest.raises(InputError, match=r"dom_short\.txt: 4 domain labels.*6 segments"):
        load_mt(systems, refs, dom)
    blank = _write(tmp_path, "dom_blank.txt", [*DOM[:2], " ", *DOM[3:]])
    with pytest.raises(InputError, match=r"dom_blank\.txt: line 3: empty domain"):
        load_mt(systems, refs, blank)


def test_empty_hypothesis_names_file_and_line(tmp_path: Path) -> None:
    systems, refs, dom = _files(tmp_path)
    hole = _write(tmp_path, "hole.txt", [*REF[:3], "", *REF[4:]])
    with pytest.raises(InputError, match=r"hole\.txt: line 4: empty hypothesis"):
        load_mt([f"hole={hole}"], refs, dom)
    data = load_mt([f"hole={hole}"], refs, dom, allow_empty=True)
    assert data.systems["hole"][3] == ""


def test_non_utf8_file_names_the_line(tmp_path: Path) -> None:
    systems, refs, dom = _files(tmp_path)
    bad = tmp_path / "latin.txt"
    bad.write_bytes("\n".join(REF[:2]).encode() + "\ncaf\xe9 ol\xe9\n".encode("latin-1")
                    + "\n".join(REF[3:]).encode() + b"\n")
    with pytest.raises(InputError, match=r"latin\.txt: line 3"):
        load_mt([f"latin={bad}"], refs, dom)


def test_single_domain_refused_before_the_run_dir_exists(tmp_path: Path) -> None:
    systems, refs, _ = _files(tmp_path)
    one = _write(tmp_path, "one.txt", ["news"] * 6)
    data = load_mt(systems, refs, one)
    out = tmp_path / "run"
    with pytest.raises(InputError, match=r"one\.txt: only one domain.*at least two"):
        run_mt(MTStudy(), data, out)
    assert not out.exists()


def test_domains_from_tsv_column(tmp_path: Path) -> None:
    p = tmp_path / "segments.tsv"
    p.write_text("line\tdoc_id\tdomain\n1\td1\tnews\n2\td1\tnews\n3\td2\tsocial\n",
                 encoding="utf-8")
    assert read_domains(p, 3) == ["news", "news", "social"]


def test_read_human_wmt_and_plain(tmp_path: Path) -> None:
    wmt = _write(tmp_path, "ad-sys.csv", ["RAW.SCR Z.SCR N SYS N.ALL ",
                                          "69.7 -0.23 1857 ALMAnaCH-Inria.2 2655 ",
                                          "77.4 0.04 1899 HuaweiTSC.3 2615 "])
    assert read_human(wmt) == {"ALMAnaCH-Inria": -0.23, "HuaweiTSC": 0.04}
    assert read_human(wmt, column="RAW.SCR")["HuaweiTSC"] == 77.4
    plain = _write(tmp_path, "h.tsv", ["system\tscore", "a\t1.5", "b\t-2"])
    assert read_human(plain) == {"a": 1.5, "b": -2.0}
    bad = _write(tmp_path, "bad.tsv", ["a 1", "b x"])
    with pytest.raises(InputError, match=r"bad\.tsv: line 2"):
        read_human(bad)


def test_blitzer_pseudo_xml_needs_a_regex(tmp_path: Path) -> None:
    p = tmp_path / "positive.review"
    p.write_text("<reviews>\n<review>\n<title>\nA & B\n</title>\n<rating>\n5.0\n</rating>\n"
                 "<review_text>\nGreat value & 3 < 4 stars <3\n</review_text>\n</review>\n"
                 "<review>\n<review_text>\nSecond\none\n</review_text>\n</review>\n</reviews>\n",
                 encoding="utf-8")
    assert read_review_file(p) == ["Great value & 3 < 4 stars <3", "Second one"]
    assert read_review_file(p, with_title=True)[0] == "A & B. Great value & 3 < 4 stars <3"


def test_domain_csv_multiline_quoted_fields(tmp_path: Path) -> None:
    p = tmp_path / "blog.csv"
    p.write_text('reviews,labels\n"first, with comma\nand a newline",1\nplain<br />text,0\n',
                 encoding="utf-8")
    texts, labels = read_domain_csv(p)
    assert texts == ["first, with comma and a newline", "plain text"] and labels == [1, 0]
    p.write_text("reviews,labels\nx,7\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"blog\.csv: line 2: label 7"):
        read_domain_csv(p)


def test_shared_multidomain_and_wmt22_layout(shared_data: Path) -> None:
    root = shared_data / "amazon_multidomain"
    books = load_domain(root, "books")
    assert len(books) == 2000 and sum(books.labels) == 1000
    airline = load_domain(root, "airline")
    assert len(airline) == 2000 and sum(airline.labels) == 1068
    with pytest.raises(InputError, match="no domain 'music'"):
        load_domain(root, "music")
    data = load_wmt22(shared_data / "wmt22_general", "ru-en")
    assert len(data.systems) == 10 and data.n_segments == 2016
    assert {d: data.domains.count(d) for d in data.domain_names()} == {
        "news": 1004, "ecommerce": 508, "social": 504}
    assert data.human is not None and len(data.human) == 10


# ---- rankings ------------------------------------------------------------------------------------


def test_pairwise_agreement_reproduces_table_8() -> None:
    # Table 8: CV ranks WMT > BIO > IWSLT > MTNT (robust first); humans swap BIO and IWSLT
    cv = {"WMT": 0.83, "BIO": 1.18, "IWSLT": 1.39, "MTNT": 1.89}  # lower is better
    human = {"WMT": 4, "IWSLT": 3, "BIO": 2, "MTNT": 1}  # higher is better
    a = ranking.agreement({"cov": cv}, human)["cov"]
    assert a["pairwise"] == pytest.approx(5 / 6)  # "one out of six scenarios is different"
    assert a["kendall_tau"] == pytest.approx((5 - 1) / 6)
    assert ranking.rank(cv, higher_is_better=False) == ["WMT", "BIO", "IWSLT", "MTNT"]


def test_pairwise_ties_count_half() -> None:
    r = ranking.pairwise_agreement({"a": 1, "b": 1, "c": 0}, {"a": 2, "b": 1, "c": 0})
    assert r["ties"] == 1 and r["pairwise"] == pytest.approx(2.5 / 3)


# ---- the MT recipe -------------------------------------------------------------------------------


def _small_cfg() -> ConsistencyConfig:
    return ConsistencyConfig(eps=(5.0, 10.0), grid_max=100, n_bags=6, fraction=0.5, seed=1)


def test_run_mt_writes_the_contract(tmp_path: Path) -> None:
    systems, refs, dom = _files(tmp_path)
    data = load_mt(systems, refs, dom)
    data.human = {"good": 3.0, "mid": 2.0, "bad": 1.0}
    out = tmp_path / "run"
    s = run_mt(MTStudy(consistency=_small_cfg()), data, out)
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["kind"] == "cross-domain" and on_disk["complete"] is True
    for key in ("config", "signature", "versions", "files", "seconds", "systems", "rankings",
                "agreement"):
        assert key in on_disk
    assert set(on_disk["files"]) >= {"systems.csv", "per_domain.csv", "leave_one_out.csv",
                                     "gamma_curves.png", "rankings.csv", "agreement.csv"}
    for f in on_disk["files"]:
        assert (out / f).exists()
    res = {r["system"]: r for r in s["systems"]}
    good = res["good"]
    for key in ("system", "per_domain", "mean", "variance", "cov", "gamma", "leave_one_out",
                "corpus", "bagging", "design_bagging"):
        assert key in good
    assert good["corpus"]["bleu"] == pytest.approx(100.0)
    assert set(good["per_domain"]) == {"news", "social", "ecommerce"}
    assert [r["left_out"] for r in good["leave_one_out"]] == ["news", "social", "ecommerce"]
    assert set(good["gamma"]) == {"5", "10"}
    assert good["cov"] == 0.0 and all(v == 0 for v in good["gamma"].values())  # constant 100
    assert s["rankings"]["by_bleu"] == ["good", "mid", "bad"]
    assert s["rankings"]["human"] == ["good", "mid", "bad"]
    assert s["agreement"]["bleu"]["pairwise"] == 1.0
    store = RunStore(out, readonly=True)
    assert store.counts()["done"] == 3
    assert store.run_info().kind == "cross-domain"
    recs = store.records("system=mid")
    assert len(recs) == 6 and {"segment", "domain", "bleu", "chrf"} <= set(recs[0])
    store.close()
    again = run_mt(MTStudy(consistency=_small_cfg()), data, out)  # resume: nothing recomputed
    assert [r["mean"] for r in again["systems"]] == [r["mean"] for r in s["systems"]]


def test_score_table_analysis_matches_direct_metrics() -> None:
    x = np.array([60.0, 70, 65, 80, 50])
    labels = ["a", "b", "c", "d", "e"]
    res = analyze_scores({"m": (x, labels)}, _small_cfg())["m"]
    assert res["mean"] == 65.0 and res["cov"] == pytest.approx(np.std(x) / 65)
    loo = {r["left_out"]: r for r in res["leave_one_out"]}
    assert loo["d"]["mean"] == pytest.approx(61.25)
    assert res["per_domain"] == {"a": 60.0, "b": 70.0, "c": 65.0, "d": 80.0, "e": 50.0}


def test_wmt22_ru_en_subset_end_to_end(shared_data: Path, tmp_path: Path) -> None:
    data = load_wmt22(shared_data / "wmt22_general", "ru-en",
                      systems=["Online-G", "ALMAnaCH-Inria", "JDExploreAcademy"])
    s = run_mt(MTStudy(consistency=_small_cfg()), data, tmp_path / "ruen", plots=False)
    res = {r["system"]: r for r in s["systems"]}
    # WMT22's published corpus BLEU (bleu-A) of Online-G on ru-en: 46.6679
    assert round(res["Online-G"]["corpus"]["bleu"], 4) == round(official(shared_data, "ru-en", "Online-G", "bleu-A"), 4)
    assert res["Online-G"]["cov"] < res["ALMAnaCH-Inria"]["cov"]
    assert s["rankings"]["human"][0] == "JDExploreAcademy"
    assert set(s["agreement"]) == {"bleu", "chrf", "cov", "gamma"}


# ---- classification across domains -------------------------------------------------------------


def _domain_csv(root: Path, name: str, pos: str, neg: str, n: int = 40) -> None:
    rows = ["reviews,labels"]
    for i in range(n):
        rows.append(f"{pos} item {i} really {pos},1")
        rows.append(f"{neg} item {i} really {neg},0")
    (root / "extra_domains").mkdir(parents=True, exist_ok=True)
    (root / "extra_domains" / f"{name}.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_run_clf_trains_on_one_domain_and_tests_on_the_others(tmp_path: Path) -> None:
    from robustlab.studies.cross_domain.clf import ClfStudy, run_clf

    root = tmp_path / "data"
    _domain_csv(root, "alpha", "great", "awful")
    _domain_csv(root, "beta", "great", "awful")
    _domain_csv(root, "gamma", "great", "terrible")
    _domain_csv(root, "delta", "superb", "awful")
    study = ClfStudy(root=str(root), models=("bow:embed_dim=16,hidden=16,batch_size=16",),
                     domains=("alpha", "beta", "gamma", "delta"), train_domains=("alpha", "beta"),
                     steps=40, consistency=_small_cfg())
    s = run_clf(study, tmp_path / "clf", progress=False, plots=False)
    assert s["complete"] and len(s["systems"]) == 2
    r = {x["train_domain"]: x for x in s["systems"]}["alpha"]
    assert set(r["per_domain"]) == {"beta", "gamma", "delta"}
    assert r["per_domain"]["beta"] >= 90.0  # same words as the training domain
    assert r["in_domain_accuracy"] >= 90.0
    assert r["mean"] == pytest.approx(np.mean(list(r["per_domain"].values())))
    assert [x["left_out"] for x in r["leave_one_out"]] == ["beta", "gamma", "delta"]
    assert r["system"].endswith("@alpha")
    with pytest.raises(InputError, match="at least 3 domains"):
        run_clf(ClfStudy(root=str(root), domains=("alpha", "beta")), tmp_path / "x")
    with pytest.raises(InputError, match="no domain 'zeta'"):
        run_clf(ClfStudy(root=str(root), domains=("alpha", "beta", "zeta")), tmp_path / "y")
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_run_clf_with_a_saved_model_only_evaluates(tmp_path: Path) -> None:
    from robustlab.models.registry import make_model
    from robustlab.studies.cross_domain.clf import ClfStudy, run_clf

    root = tmp_path / "data"
    for name, pos, neg in [("alpha", "great", "awful"), ("beta", "great", "awful"),
                           ("gamma", "great", "terrible")]:
        _domain_csv(root, name, pos, neg, n=10)
    model = make_model("bow", embed_dim=8, hidden=8, batch_size=8, seed=0)
    model.fit(["great item", "awful item"] * 10, [1, 0] * 10, steps=30)
    saved = tmp_path / "my_bow"
    model.save(saved)
    s = run_clf(ClfStudy(root=str(root), models=(str(saved),),
                         domains=("alpha", "beta", "gamma"), consistency=_small_cfg()),
                tmp_path / "run", progress=False, plots=False)
    (r,) = s["systems"]
    assert r["system"] == "my_bow@trained" and r["in_domain_accuracy"] is None
    assert set(r["per_domain"]) == {"alpha", "beta", "gamma"}
    assert r["per_domain"]["alpha"] == r["per_domain"]["beta"]  # identical data, same model
