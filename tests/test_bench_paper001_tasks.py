"""bench/bench_paper001_tasks.py (issue 31): every number of paper 001's tables is read back
from a ``robustlab eval`` run, and equals what the tasks API gives on the same model and
examples (``--check-api``), for a baseline and a tiny random-config BERT fine-tuned 2 steps."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_paper001_tasks",
                                                  ROOT / "bench" / "bench_paper001_tasks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A tiny random BERT checkpoint (no task head), fine-tuned by the bench as its 'minilm'."""
    pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    from _tiny_tokenizer import bert_tokenizer
    from transformers import BertConfig, BertModel

    d = tmp_path_factory.mktemp("tiny-bert")
    words = "the a of to and in is was he she it said not year new world first two".split()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    (d / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    bert_tokenizer(d / "vocab.txt").save_pretrained(d)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=64)
    torch.manual_seed(0)
    BertModel(cfg).save_pretrained(d, safe_serialization=True)
    return d


def _check_run(bench, results: dict, keep: Path, key: str, kind: str, n: int) -> None:
    """Every value of ``results[key][kind]`` is the one eval's run folder holds."""
    r = results[key][kind]
    assert r["path"] == "robustlab eval"
    run = keep / key / f"{kind}-run"
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    assert summary["n_examples"] == n
    assert r["values"]["Test set"] == pytest.approx(summary["clean_metric"] * 100)
    cells = {c["perturbation"]: c for c in map(
        json.loads, (run / "results.jsonl").read_text(encoding="utf-8").splitlines())}
    specs = bench.perturbation_specs()
    assert set(cells) == set(specs)
    for spec, (_, pname) in zip(specs, bench.CHAR + bench.WORD, strict=True):
        assert r["changed"][pname] == cells[spec]["changed"] / cells[spec]["rows"]
        if cells[spec]["a1"] is not None:
            assert r["values"][pname] == pytest.approx(cells[spec]["a1"] * 100)
            assert r["value_source"][pname] == "a1"
        else:  # negation: label-changing, read from the stored predictions
            assert pname == "negation"
            assert r["value_source"][pname].startswith("stored predictions")


def test_the_tables_come_from_robustlab_eval_and_equal_the_tasks_api(shared_data, tmp_path):
    bench = _bench()
    out, keep = tmp_path / "p001", tmp_path / "keep"
    rc = bench.main(["--models", "baseline", "--tasks", "SS,QA", "--n-test", "12",
                     "--n-train", "150", "--device", "cpu", "--check-api", "--keep", str(keep),
                     "--out", str(out)])
    assert rc == 0
    results = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    for key in ("SS", "QA"):
        _check_run(bench, results, keep, key, "baseline", 12)
        assert results[key]["baseline"]["api_max_abs_diff"] <= bench.API_TOLERANCE
        # not a model that says the same for everything: the check compared real numbers
        assert len({round(v, 6) for v in results[key]["baseline"]["values"].values()}) > 3
    assert "Table 5 layout" in out.with_suffix(".md").read_text(encoding="utf-8")


def test_a_fine_tuned_hf_model_goes_through_eval_too(shared_data, tiny, tmp_path):
    """The 'minilm' path (here a tiny random BERT, 2 steps): saved with its task stamp and
    evaluated by eval as it is. Its scores differ in the 5th decimal only, so batch-level float
    noise moves its Pearson: --check-api is for a trained model, not asserted here."""
    bench = _bench()
    out, keep = tmp_path / "p001", tmp_path / "keep"
    rc = bench.main(["--models", "minilm", "--minilm", str(tiny), "--tasks", "SS",
                     "--n-test", "10", "--n-train", "40", "--steps", "2", "--batch-size", "8",
                     "--max-length", "32", "--device", "cpu", "--keep", str(keep),
                     "--out", str(out)])
    assert rc == 0
    results = json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))
    _check_run(bench, results, keep, "SS", "minilm", 10)
    meta = json.loads((keep / "SS" / "minilm-model" / "robustlab_model.json").read_text())
    assert meta["task"] == "similarity"
