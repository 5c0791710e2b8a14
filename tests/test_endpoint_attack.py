"""The second-order attack over a model behind an HTTP endpoint (issue 34), against the real
uvicorn server of ``tests/endpoint_server.py`` (a robustlab-trained BoW, counting every request
and every text it received): the query estimate printed before starting, ``--max-queries``
refusing and stopping, the counts printed equal to the server's, no text asked twice, and a
resume that asks nothing new for finished examples.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_endpoints import bow, card, data, fresh, server  # noqa: F401  (fixtures)

from robustlab.cli import main

PAIRS = {"film": ["movie"], "plot": ["story"]}
TABLE = {"good": ["great", "nice"], "bad": ["poor", "weak"], "really": ["very", "quite"],
         "great": ["good"], "awful": ["poor"], "dull": ["boring"], "the": ["a"]}


@pytest.fixture(scope="module")
def tables(data) -> Path:  # noqa: F811
    (data / "pairs.json").write_text(json.dumps(PAIRS))
    (data / "table.json").write_text(json.dumps(TABLE))
    return data


def attack(tables: Path, model, out: Path, *extra) -> list[str]:
    return ["attack", "--recipe", "so-beam", "--model", str(model), "--dataset",
            str(tables / "dev.tsv"), "-n", "8", "--source", f"table:{tables / 'table.json'}",
            "--patch-table", str(tables / "pairs.json"), "--lm-check", "none", "--kappa", "2",
            "--beam-width", "2", "--max-distance", "3", "--out", str(out), "--no-progress",
            "--quiet", *map(str, extra)]


def run(args, capsys) -> tuple[int, str, str]:
    rc = main(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def estimate_of(stdout: str) -> int:
    m = re.search(r"at most ([\d,]+) endpoint queries for (\d+) example", stdout)
    assert m, stdout
    assert "an upper bound: SO-Beam's worst case" in stdout
    return int(m.group(1).replace(",", ""))


def asked(stdout: str) -> tuple[int, int]:
    m = re.search(r": (\d+) queries in (\d+) requests sent this run", stdout)
    assert m, stdout
    return int(m.group(1)), int(m.group(2))


def records(out: Path) -> list[tuple]:
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    return [(r["index"], r["result_type"], r["perturbed"], r["patch"], r["queries"])
            for r in recs]


def test_attack_over_an_endpoint_counts_and_resumes(tables, bow, fresh, tmp_path,  # noqa: F811
                                                    capsys):
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=1,
             request_field="text", max_concurrency=4)
    out = tmp_path / "run"
    rc, stdout, err = run(attack(tables, c, out), capsys)
    assert rc == 0, err
    estimate = estimate_of(stdout)
    queries, requests = asked(stdout)
    stats = fresh.stats()
    # what the attack printed is what the server received; no text was asked twice
    assert requests == stats["requests"] == queries == sum(stats["texts"].values()) > 0
    assert max(stats["texts"].values()) == 1
    assert queries <= estimate  # the estimate is an upper bound
    ep = json.loads((out / "summary.json").read_text())["endpoint"]
    assert ep["requests"] == requests and ep["queries_this_run"] == queries
    assert ep["estimate"] == estimate and ep["stopped"] is None
    assert "tokens: not reported by the server" in stdout  # a classifier's JSON has no usage
    # the bound holds for every example (the model queries it charged, store or not)
    from robustlab.studies.second_order.patch_words import PatchSelector
    from robustlab.studies.second_order.queries import estimate as bound_of

    kw = {"kappa": 2, "beam_width": 2, "max_rounds": 3}
    recs = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    selector = PatchSelector(str(tables / "pairs.json"))
    for r in recs:
        assert r["queries"] <= bound_of("so-beam", kw, [r["original"]], selector).queries, r
    # the endpoint's attack is the local model's attack, example for example
    local = tmp_path / "local"
    rc, _, err = run(attack(tables, bow, local), capsys)
    assert rc == 0, err
    assert records(out) == records(local)
    # examples were searched (not all skipped): the beam asked the endpoint many texts
    assert sum(r[1] != "skipped" for r in records(out)) >= 3 and queries > 20
    # a rerun of the finished run asks nothing (its estimate: 0 examples left, the probe)
    rc, stdout, err = run(attack(tables, c, out), capsys)
    assert rc == 0, err
    assert "for 0 example(s) not done yet" in stdout
    assert asked(stdout) == (0, 0) and fresh.stats()["requests"] == requests


def test_max_queries_refuses_then_stops_and_resumes(tables, fresh, tmp_path, capsys):  # noqa: F811
    c = card(tmp_path / "card.toml", f"{fresh.url}/predict", batch_size=1,
             request_field="text", max_concurrency=2)
    out = tmp_path / "run"
    rc, stdout, err = run(attack(tables, c, out, "--max-queries", 30), capsys)
    estimate = estimate_of(stdout)
    assert rc == 2 and estimate > 30
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1 and f"may ask up to {estimate:,} queries" in lines[0]
    assert f"--max-queries {estimate}" in lines[0] and "Traceback" not in err
    assert fresh.stats()["requests"] == 0 and not out.exists()  # nothing asked or written
    # --stop-at-budget: spend 30, stop cleanly, resume until done; never a text twice
    sent, rounds = 0, 0
    while True:
        rounds += 1
        assert rounds < 40
        rc, stdout, err = run(attack(tables, c, out, "--max-queries", 30, "--stop-at-budget"),
                              capsys)
        queries, requests = asked(stdout)
        assert queries == requests <= 30
        sent += requests
        stats = fresh.stats()
        assert stats["requests"] == sent and max(stats["texts"].values()) == 1
        summary = json.loads((out / "summary.json").read_text())
        if rc == 0:
            assert summary["complete"] and summary["endpoint"]["stopped"] is None
            break
        assert rc == 1 and not summary["complete"]
        assert "stopped at the query budget (--max-queries 30)" in stdout
        assert summary["endpoint"]["stopped"].startswith("stopped at the query budget")
    assert rounds > 1
    # the same attack uninterrupted asks the same texts: resuming lost nothing, added nothing
    fresh.reset()
    whole = tmp_path / "whole"
    rc, _, err = run(attack(tables, c, whole), capsys)
    assert rc == 0, err
    assert fresh.stats()["requests"] == sent
    assert records(out) == records(whole)


def test_the_bound_by_hand():
    """N1 = (L-1)·κ; SO-Beam N1 + (k-1)·β·N1; SO-Enum N1 + N1² (k = 2); the random baseline
    walks × steps; --query-budget caps the candidates; per example: the single words of the
    candidate pairs + 3 + 2 per candidate, and nothing for an example with no pair."""
    from robustlab.studies.second_order.patch_words import PatchSelector
    from robustlab.studies.second_order.queries import candidate_bound, estimate

    beam = {"kappa": 2, "beam_width": 2, "max_rounds": 3}
    assert candidate_bound("so-beam", beam, 5)[0] == 8 + 2 * 2 * 8
    assert candidate_bound("so-beam", {**beam, "query_budget": 10}, 5)[0] == 10
    # a table whose longest entry has 2 words bounds a position by 2 whatever κ
    assert candidate_bound("so-beam", {**beam, "kappa": 20, "per_position": 2}, 5)[0] == 40
    assert candidate_bound("so-beam", {**beam, "per_position": 50}, 5)[0] == 40  # κ=2 first
    assert candidate_bound("so-enum", {"kappa": 2, "max_distance": 2}, 5)[0] == 8 + 64
    assert candidate_bound("so-enum", {"kappa": 2, "max_distance": 1}, 5)[0] == 8
    assert candidate_bound("so-random", {"walks": 20, "max_changes": 6}, 5)[0] == 120
    selector = PatchSelector({"film": ["movie"], "plot": ["story"]})
    # "the film was good ." has 4 words (N1 = 3·2 = 6) and one pair (film, movie): 2 single
    # words + 3 + 2·(6 + 2·2·6); "a dull thing" has no pair: 0
    est = estimate("so-beam", beam, ["the film was good .", "a dull thing"], selector)
    assert (est.queries, est.examples, est.skipped) == (2 + 3 + 2 * (6 + 2 * 2 * 6), 2, 1)
