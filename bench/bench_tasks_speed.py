"""Prediction speed of the task models (issue 31): robustlab's predictor against the
``transformers`` pipeline and against a bare forward pass, in one run.

NER: CoNLL-2003 test sentences with a MiniLM-architecture token classifier (the real
all-MiniLM-L6-v2 encoder with a 9-tag head drawn once and saved, so the head is random but the
speed is MiniLM's), the clean sentences plus the 14 perturbations of paper 001 at PPS 1 (15
prediction calls). Similarity: STS-B test pairs with a one-output regression head on the same
encoder, the same 15 calls. For each, three ways to get the predictions, timed over the same 15
calls:

* ``robustlab``: :func:`robustlab.tasks.predict.predict` with :class:`HFTagger` /
  :class:`HFPairScorer` (tokenise, length-sorted batches, per-word tags / scores, checks);
* ``pipeline``: the ``token-classification`` pipeline (``aggregation_strategy="none"``) /
  ``text-classification`` pipeline on text pairs, called once per perturbation with the same
  batch size, behind robustlab's :class:`PipelinePredictor` (word tags from character offsets);
* ``bare``: the model's forward pass alone over inputs tokenised before the clock starts, in
  length-sorted batches of the same size (the floor: no tokenising, no post-processing).

Targets: robustlab ≥ 2× faster than the pipeline, ≤ 1.3× the bare forward pass. The perturbed
texts are made before any timing (the same for all three). Every prediction of robustlab and
the pipeline is compared (they must agree: same model, same first-piece rule).

Run: ``nice -n 10 python bench/bench_tasks_speed.py [--n 500] [--device cpu]`` (``--n``: a
seeded subset of sentences/pairs when the machine is too loaded for the full 3,453 / 1,379).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from robustlab.perturbations import make
from robustlab.resources import minilm_path, shared_data_dir
from robustlab.tasks import get_task
from robustlab.tasks.predict import PipelinePredictor, predict

PERTURBATIONS = ["char_insert", "char_keyboard", "char_swap", "char_repeat", "char_delete",
                 "misspelling", "letter_case", "word_delete", "word_synonym", "negation",
                 "singular_plural_verb", "word_repeat", "verb_tense", "word_order"]
BATCH = 64


def load() -> str:
    out = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return out.split("load average:")[-1].strip() if out else "?"


def subset(examples: list, n: int | None, seed: int = 0) -> list:
    if not n or n >= len(examples):
        return list(examples)
    keep = np.sort(np.random.default_rng(seed).permutation(len(examples))[:n])
    return [examples[i] for i in keep]


def perturbed_sets(task, examples: list) -> list[list]:
    sets = [examples]
    for name in PERTURBATIONS:
        done = task.perturb(examples, make(name, pps=1) if name != "word_synonym"
                            else make(name), seed=0)
        sets.append([p.example for p in done])
    return sets


def save_head(kind: str, directory: Path, labels: list[str] | None) -> Path:
    """MiniLM's encoder with a head drawn once (seeded) and saved, so the folder loads as a
    trained model (the head's values do not change the speed)."""
    import shutil

    import torch
    import transformers

    torch.manual_seed(0)
    src = minilm_path()
    if kind == "ner":
        model = transformers.AutoModelForTokenClassification.from_pretrained(
            src, num_labels=len(labels), id2label=dict(enumerate(labels)),
            label2id={t: i for i, t in enumerate(labels)})
    else:
        model = transformers.AutoModelForSequenceClassification.from_pretrained(
            src, num_labels=1, problem_type="regression")
    model.save_pretrained(directory, safe_serialization=True)
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / f).exists():
            shutil.copy(src / f, directory / f)
    return directory


def bare(model, tok, inputs: list, pairs: bool, device) -> float:
    """Seconds of the forward passes alone over pre-tokenised, length-sorted batches."""
    import torch

    if pairs:
        enc = tok([a for a, _ in inputs], [b for _, b in inputs], truncation=True,
                  max_length=128)
    else:
        enc = tok([list(t) for t in inputs], is_split_into_words=True, truncation=True,
                  max_length=128)
    ids = enc["input_ids"]
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    batches = []
    for a in range(0, len(order), BATCH):
        idx = order[a: a + BATCH]
        width = max(len(ids[i]) for i in idx)
        batch = {}
        for key in enc.keys():
            fill = tok.pad_token_id if key == "input_ids" else 0
            batch[key] = torch.tensor([enc[key][i] + [fill] * (width - len(enc[key][i]))
                                       for i in idx], device=device)
        batches.append(batch)
    sync(device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            model(**batch).logits.float().cpu()
    sync(device)
    return time.perf_counter() - t0


def sync(device) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def run_task(name: str, path: Path, n: int | None, device: str) -> dict:
    import transformers

    from robustlab.models.hf_tasks import HFPairScorer, HFTagger

    task = get_task(name)
    examples = subset(task.read(path).examples, n)
    t0 = time.perf_counter()
    sets = perturbed_sets(task, examples)
    print(f"{name}: {len(examples)} examples x {len(sets)} calls (clean + 14 perturbations); "
          f"perturbing took {time.perf_counter() - t0:.0f} s (not timed below)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        labels = None
        if name == "ner":
            labels = ["O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-LOC", "I-MISC", "I-ORG",
                      "I-PER"]
        folder = save_head(name, Path(tmp), labels)
        cls = HFTagger if name == "ner" else HFPairScorer
        ours = cls.load(folder, device=device)
        dev = ours.device_
        kind = "token-classification" if name == "ner" else "text-classification"
        extra = {"aggregation_strategy": "none"} if name == "ner" else {}
        pipe = transformers.pipeline(kind, model=ours.model_, tokenizer=ours.tokenizer_,
                                     device=dev, **extra)
        wrapped = PipelinePredictor(pipe, batch_size=BATCH)
        times = {}
        # warm-up (first-call allocations, thread pools) on a few examples, untimed
        predict(task, ours, sets[0][:8])
        predict(task, wrapped, sets[0][:8])
        sync(dev)
        t0 = time.perf_counter()
        ours_preds = [predict(task, ours, s) for s in sets]
        sync(dev)
        times["robustlab"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        pipe_preds = [predict(task, wrapped, s) for s in sets]
        sync(dev)
        times["pipeline"] = time.perf_counter() - t0
        times["bare"] = sum(bare(ours.model_, ours.tokenizer_, task.model_inputs(s),
                                 name != "ner", dev) for s in sets)
        if name == "ner":
            agree = np.mean([a == b for x, y in zip(ours_preds, pipe_preds, strict=True)
                             for a, b in zip(x, y, strict=True)])
        else:
            agree = np.mean([abs(a - b) < 1e-3 for x, y in zip(ours_preds, pipe_preds,
                                                                 strict=True)
                             for a, b in zip(x, y, strict=True)])
    n_all = sum(len(s) for s in sets)
    print(f"  robustlab {times['robustlab']:.1f} s ({n_all / times['robustlab']:.0f}/s)  "
          f"pipeline {times['pipeline']:.1f} s  bare forward {times['bare']:.1f} s  -> "
          f"pipeline/robustlab {times['pipeline'] / times['robustlab']:.2f}x (target >= 2), "
          f"robustlab/bare {times['robustlab'] / times['bare']:.2f}x (target <= 1.3); "
          f"predictions equal to the pipeline's: {agree:.1%}; load {load()}", flush=True)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None,
                    help="seeded subset of sentences / pairs (default: all)")
    ap.add_argument("--tasks", default="ner,similarity")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default torch's)")
    args = ap.parse_args()
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"device {args.device}"
          + (f" ({torch.cuda.get_device_name()})" if args.device.startswith("cuda") else
             f", {os.cpu_count()} cores, torch threads {torch.get_num_threads()}")
          + f"; load at start {load()}", flush=True)
    root = shared_data_dir()
    files = {"ner": root / "conll2003/test.txt", "similarity": root / "stsb/sts-test.csv"}
    for name in args.tasks.split(","):
        run_task(name.strip(), files[name.strip()], args.n, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
