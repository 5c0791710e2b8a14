"""Benchmark ``robustlab eval`` against the usual ways of getting the same predictions.

The 22 default perturbations (the papers' 8 and paper 001's 14, seed 0, one sample) on SST-2
test (1,821 sentences, ``$ROBUSTLAB_SHARED/data/sst/stsa.binary.test``), with two trained models
on CPU: a saved bag-of-words (trained here, a few hundred steps) and MiniLM (the ``minilm``
family, fine-tuned here for a few steps only: speed does not depend on how good it is). Methods,
all in this one process, each predicting the clean texts once and every perturbed text set:

* ``robustlab eval`` end to end (:func:`robustlab.studies.eval.study.evaluate`: perturbation,
  prediction, the run store and its files), with the perturbation thread on and off;
* robustlab's predictions alone (a :class:`~robustlab.studies.eval.predict.Predictor` over the
  same perturbed texts: each distinct text once, length-sorted batches, dynamic padding);
* TextAttack's wrappers called per perturbation in a loop, as TextAttack's own evaluation calls
  them (batches of 32): ``PyTorchModelWrapper`` (BoW) and ``HuggingFaceModelWrapper`` (MiniLM,
  which pads every batch to the tokenizer's ``model_max_length``, 512: over every text that
  takes hours on 2 shared cores, so it predicts ``--ta-sample`` clean texts and its time per
  text is extrapolated, as the output says);
* a ``transformers`` text-classification pipeline per perturbation (MiniLM; batch 32);
* the bare forward pass over the same distinct texts, pre-tokenised, length-sorted and padded
  per batch outside the timer (the limit).

The perturbed texts are made once, outside the baselines' timers (so baselines get perturbation
for free: the comparison of predictions is conservative for robustlab). Predictions are checked
to be identical (argmax) across methods, and the largest probability difference is printed.
The machine is shared: ``os.getloadavg()`` is printed with the numbers.

    .venv/bin/python bench/bench_eval.py [--n 1821] [--minilm-n 1821] [--minilm-steps 20]
        [--ta-sample 64] [--skip-bow] [--skip-minilm] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from robustlab.data.datasets import load_dataset, load_examples  # noqa: E402
from robustlab.resources import shared_data_dir  # noqa: E402

BATCH = 32  # TextAttack's and the pipeline's batch of model queries
#: robustlab's predictions and the bare forward pass are timed this many times (the minimum is
#: kept: the machine is shared, and both are compared at their best)
REPEAT = 3


def ours_min(model_dir: str, texts: list[str], perturbed: dict[str, list[str]]
             ) -> tuple[dict[str, np.ndarray], float, Any]:
    """robustlab's predictions with a fresh predictor (nothing cached), once."""
    from robustlab.studies.eval.predict import as_predictor

    pred = as_predictor(model_dir, device="cpu")
    out, s = timed(lambda: robustlab_predictions(pred, texts, perturbed))
    return out, s, pred


def interleaved(model_dir: str, texts: list[str], perturbed: dict[str, list[str]],
                forward: Callable[[], None]) -> dict[str, float]:
    """robustlab's predictions and the bare forward pass timed alternately REPEAT times (the
    load of a shared machine drifts within minutes), best of each."""
    ours, bare = [], []
    for _ in range(REPEAT):
        ours.append(ours_min(model_dir, texts, perturbed)[1])
        bare.append(timed(forward)[1])
    return {"robustlab_predict_s": min(ours), "bare_forward_s": min(bare),
            "robustlab_predict_all_s": ours, "bare_forward_all_s": bare}


def perturb_all(specs: Sequence[str], texts: list[str]) -> tuple[dict[str, list[str]], float]:
    """Every perturbation of ``texts`` and the seconds it took, resources already loaded (a
    first call on a few texts loads lexicons and tables, as eval's runs find them loaded)."""
    from robustlab.perturbations.registry import parse_spec

    for s in specs:
        parse_spec(s).perturb_outcomes(texts[:20], 0)
    t0 = time.perf_counter()
    out = {s: [o.text for o in parse_spec(s).perturb_outcomes(texts, 0)] for s in specs}
    return out, time.perf_counter() - t0


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def loop_predictions(call: Callable[[list[str]], np.ndarray], texts: list[str],
                     perturbed: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """Clean texts once, then each perturbation's texts, in batches of BATCH (argmax rows)."""
    def run(xs: list[str]) -> np.ndarray:
        return np.concatenate([np.asarray(call(xs[a: a + BATCH]), dtype=np.float64)
                               for a in range(0, len(xs), BATCH)])
    out = {"clean": run(texts)}
    for spec, xs in perturbed.items():
        out[spec] = run(xs)
    return out


def robustlab_predictions(predictor: Any, texts: list[str], perturbed: dict[str, list[str]]
                          ) -> dict[str, np.ndarray]:
    out = {"clean": predictor(texts)}
    for spec, xs in perturbed.items():
        out[spec] = predictor(xs)
    return out


def softmax(x: np.ndarray) -> np.ndarray:
    z = np.exp(x - x.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def compare(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> tuple[int, int, float]:
    """(rows whose argmax differs, rows, largest |probability difference|)."""
    diff = rows = 0
    worst = 0.0
    for k in a:
        pa, pb = a[k], b[k]
        pa = pa if np.allclose(pa.sum(1), 1, atol=1e-4) else softmax(pa)
        pb = pb if np.allclose(pb.sum(1), 1, atol=1e-4) else softmax(pb)
        diff += int((pa.argmax(1) != pb.argmax(1)).sum())
        rows += len(pa)
        worst = max(worst, float(np.abs(pa - pb).max()))
    return diff, rows, worst


def eval_end_to_end(model_dir: str, examples: list[tuple[str, int]], specs: Sequence[str],
                    prefetch: bool) -> float:
    from robustlab.studies.eval.study import evaluate

    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        evaluate(model_dir, Path(tmp) / "run", examples=examples, perturbations=list(specs),
                 seeds=[0], progress=False, plots=False, prefetch=prefetch, device="cpu")
        return time.perf_counter() - t0


def distinct(texts: list[str], perturbed: dict[str, list[str]]) -> list[str]:
    return list(dict.fromkeys([*texts, *(t for xs in perturbed.values() for t in xs)]))


def bench_bow(train: Any, examples: list[tuple[str, int]], specs: Sequence[str],
              perturbed: dict[str, list[str]], steps: int, tmp: Path) -> dict[str, Any]:
    import torch
    from textattack.models.wrappers import PyTorchModelWrapper

    from robustlab.models.registry import load_saved, make_model
    from robustlab.models.vocab import encode
    texts = [t for t, _ in examples]
    m = make_model("bow", steps=steps, seed=0, device="cpu").fit(train.texts, train.labels)
    m.save(tmp / "bow")
    model = load_saved(tmp / "bow", device="cpu")
    res: dict[str, Any] = {}
    ours, _, pred = ours_min(str(tmp / "bow"), texts, perturbed)
    res["distinct_texts"] = pred.predicted
    res["rows"] = sum(len(v) for v in ours.values())

    def tok(xs: list[str]) -> list[list[int]]:
        return encode(xs, model.vocab_, model.max_len, model.lowercase)[0].tolist()

    net = model.model_.eval()
    wrapper = PyTorchModelWrapper(net, tok)
    ta, res["textattack_s"] = timed(lambda: loop_predictions(
        lambda xs: softmax(np.asarray(wrapper(xs, batch_size=BATCH), dtype=np.float64)), texts,
        perturbed))
    res["textattack_vs_robustlab"] = compare(ta, ours)
    # the bare forward pass over the same distinct texts, batched as robustlab batches them
    uniq = sorted(distinct(texts, perturbed), key=len)
    batches = []
    for a in range(0, len(uniq), 128):
        x, lengths = encode(uniq[a: a + 128], model.vocab_, model.max_len, model.lowercase)
        batches.append(torch.from_numpy(x))
    def forward() -> None:
        with torch.inference_mode():
            for b in batches:
                torch.softmax(net(b).double(), -1)
    res.update(interleaved(str(tmp / "bow"), texts, perturbed, forward))
    res["eval_end_to_end_s"] = eval_end_to_end(str(tmp / "bow"), examples, specs, True)
    res["eval_end_to_end_no_prefetch_s"] = eval_end_to_end(str(tmp / "bow"), examples, specs,
                                                          False)
    return res


def bench_minilm(train: Any, examples: list[tuple[str, int]], specs: Sequence[str],
                 perturbed: dict[str, list[str]], steps: int, tmp: Path,
                 ta_sample: int = 64) -> dict[str, Any]:
    import torch
    from textattack.models.wrappers import HuggingFaceModelWrapper
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from robustlab.models.registry import make_model

    texts = [t for t, _ in examples]
    res: dict[str, Any] = {}
    t0 = time.perf_counter()
    sub = train.subsample(min(len(train), 32 * steps), seed=0)
    make_model("minilm", steps=steps, seed=0, device="cpu", max_length=128).fit(
        sub.texts, sub.labels).save(tmp / "minilm")
    res["train_s"] = time.perf_counter() - t0
    ours, _, pred = ours_min(str(tmp / "minilm"), texts, perturbed)
    res["distinct_texts"] = pred.predicted
    res["rows"] = sum(len(v) for v in ours.values())
    tok = AutoTokenizer.from_pretrained(tmp / "minilm")
    hf = AutoModelForSequenceClassification.from_pretrained(tmp / "minilm").float().eval()
    res["model_max_length"] = int(tok.model_max_length)
    wrapper = HuggingFaceModelWrapper(hf, tok)
    # the wrapper pads every batch to model_max_length (512 here): over all the texts it takes
    # hours on 2 shared cores, so it runs on the first ta_sample clean texts and its time per
    # text is extrapolated to every prediction (said so in the output)
    k = min(ta_sample, len(texts))
    ta, ta_s = timed(lambda: loop_predictions(lambda xs: wrapper(xs).double().numpy(),
                                              texts[:k], {}))
    res["textattack_sample"] = k
    res["textattack_s"] = ta_s / k * res["rows"]
    res["textattack_vs_robustlab"] = compare(ta, {"clean": ours["clean"][:k]})
    pipe = pipeline("text-classification", model=hf, tokenizer=tok, device="cpu")
    from robustlab.studies.eval.predict import pipeline_proba

    proba = pipeline_proba(pipe, BATCH)
    pp, res["pipeline_s"] = timed(lambda: loop_predictions(proba, texts, perturbed))
    res["pipeline_vs_robustlab"] = compare(pp, ours)
    # the bare forward pass: the same distinct texts, tokenised as robustlab tokenises them
    # (truncated at the saved max_length), length-sorted, padded per batch outside the timer
    uniq = distinct(texts, perturbed)
    meta = json.loads((tmp / "minilm" / "robustlab_model.json").read_text())
    enc = tok(uniq, truncation=True, max_length=int(meta["max_length"]))
    order = np.argsort([len(x) for x in enc["input_ids"]], kind="stable")
    batches = []
    for a in range(0, len(order), 128):
        rows = [{k: enc[k][i] for k in enc} for i in order[a: a + 128]]
        batches.append(tok.pad(rows, return_tensors="pt"))
    def forward() -> None:
        with torch.inference_mode():
            for b in batches:
                torch.softmax(hf(**b).logits.double(), -1)
    res.update(interleaved(str(tmp / "minilm"), texts, perturbed, forward))
    res["eval_end_to_end_s"] = eval_end_to_end(str(tmp / "minilm"), examples, specs, True)
    res["eval_end_to_end_no_prefetch_s"] = eval_end_to_end(str(tmp / "minilm"), examples, specs,
                                                          False)
    return res


def report(name: str, r: dict[str, Any], perturb_s: float) -> None:
    base = {k: r[k] for k in ("textattack_s", "pipeline_s") if k in r}
    best = min(base, key=base.get)
    print(f"\n== {name}: {r['rows']} predictions ({r['distinct_texts']} distinct texts)")
    print(f"  robustlab predictions   {r['robustlab_predict_s']:8.2f} s")
    for k, v in base.items():
        d, n, w = r[k.replace('_s', '_vs_robustlab')]
        est = (f" (extrapolated from {r['textattack_sample']} texts)"
               if k == "textattack_s" and "textattack_sample" in r else "")
        print(f"  {k[:-2]:<23} {v:8.2f} s{est}   argmax differs on {d} of {n}; "
              f"max |Δp| {w:.2e}")
    print(f"  bare forward pass       {r['bare_forward_s']:8.2f} s  (the limit)")
    print(f"  eval end to end         {r['eval_end_to_end_s']:8.2f} s  (perturb + predict + store;"
          f" no perturbation thread: {r['eval_end_to_end_no_prefetch_s']:.2f} s)")
    print(f"  speed-up over the faster baseline ({best[:-2]}): "
          f"{base[best] / r['robustlab_predict_s']:.2f}x on predictions; "
          f"{(base[best] + perturb_s) / r['eval_end_to_end_s']:.2f}x end to end (baseline + "
          f"the {perturb_s:.1f} s of perturbation it was given)")
    print(f"  robustlab / bare forward: {r['robustlab_predict_s'] / r['bare_forward_s']:.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1821, help="SST-2 test sentences (BoW)")
    ap.add_argument("--minilm-n", type=int, default=1821, help="SST-2 test sentences (MiniLM)")
    ap.add_argument("--bow-steps", type=int, default=300)
    ap.add_argument("--minilm-steps", type=int, default=20)
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--ta-sample", type=int, default=64,
                    help="texts TextAttack's HuggingFaceModelWrapper predicts (MiniLM; its time "
                    "per text is extrapolated: it pads to 512 tokens)")
    ap.add_argument("--skip-bow", action="store_true")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args()
    import torch

    from robustlab.resources import ensure_textattack
    from robustlab.studies.eval.config import default_perturbations

    ensure_textattack()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    sst = shared_data_dir() / "sst"
    if not (sst / "stsa.binary.test").exists():
        print(f"needs SST-2 at {sst}", file=sys.stderr)
        return 2
    train = load_dataset(str(sst / "stsa.binary.train"))
    examples = load_examples(str(sst / "stsa.binary.test"))
    specs = default_perturbations()
    print(f"robustlab eval bench: {len(specs)} perturbations, seed 0; torch threads "
          f"{torch.get_num_threads()}; load average {os.getloadavg()}")
    out: dict[str, Any] = {"perturbations": list(specs)}
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_bow:
            ex = examples[: args.n]
            perturbed, perturb_s = perturb_all(specs, [t for t, _ in ex])
            print(f"perturbing {len(ex)} sentences x {len(specs)} perturbations: "
                  f"{perturb_s:.2f} s")
            out["bow"] = {**bench_bow(train, ex, specs, perturbed, args.bow_steps, Path(tmp)),
                          "n": len(ex), "perturb_s": perturb_s}
            report(f"saved BoW on SST-2 test ({len(ex)} sentences)", out["bow"], perturb_s)
        if not args.skip_minilm:
            ex = examples[: args.minilm_n]
            perturbed, perturb_s = perturb_all(specs, [t for t, _ in ex])
            out["minilm"] = {**bench_minilm(train, ex, specs, perturbed, args.minilm_steps,
                                            Path(tmp), args.ta_sample),
                             "n": len(ex), "perturb_s": perturb_s}
            report(f"MiniLM on SST-2 test ({len(ex)} sentences)", out["minilm"], perturb_s)
    print(f"\nload average at the end {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
