"""Prediction speed of the task models (issue 31): robustlab's eval predictor against the
``transformers`` pipeline and against a bare forward pass, interleaved in one run.

NER: CoNLL-2003 test sentences with a token classifier; similarity: STS-B test pairs with a
one-output regression head. The workload is what ``robustlab eval`` asks of the model: the
clean examples plus the 14 perturbations of paper 001 at PPS 1 (15 calls), perturbed before any
clock starts. Three ways to get the predictions:

* ``robustlab``: :class:`robustlab.studies.eval.tasks.TaskPredictor` (what eval uses: each
  distinct input predicted once per run) over :class:`HFTagger` / :class:`HFPairScorer`
  (tokenise, length-sorted batches, per-word tags / scores, checks), called with the 15 full
  example lists; a fresh predictor per repeat, so nothing is cached across repeats;
* ``pipeline``: the ``token-classification`` pipeline (``aggregation_strategy="none"``) /
  ``text-classification`` pipeline on text pairs, called once per perturbation with the same
  batch size, behind robustlab's :class:`PipelinePredictor` (word tags from character offsets);
* ``bare``: the model's forward pass alone over inputs tokenised and padded into length-sorted
  batches before the clock starts (the floor: no tokenising, no post-processing).

Each ratio answers its own question, so the inputs differ on purpose (both counts printed,
``inputs``: distinct / all):

* pipeline / robustlab — what a user gains: the pipeline is called per perturbation on every
  example (all 15 x n inputs, as one would call it), robustlab does what eval does (a no-op
  perturbation's example is the clean one and is not predicted again; any input seen before is
  not predicted again);
* robustlab / bare — robustlab's own overhead: the bare pass runs the same distinct inputs
  robustlab sends to the model (per call, those no earlier call had), so the ratio is
  tokenising, batching, tag/score decoding and checks over the identical model work.

The methods are interleaved round-robin (the order rotating each repeat) so a drift of the
machine's load hits all three alike; medians over ``--repeats`` and the ratios of medians are
reported, with the load average before and after. Targets (issue 31): robustlab >= 2x faster
than the pipeline, <= 1.3x the bare forward pass. robustlab's and the pipeline's predictions
are compared (same model, same first-piece rule: they must agree).

``--ahead-ab`` times instead robustlab's predictor against itself with every input tokenised
before the first forward pass (``encode_block`` set past the input count: no producer thread),
the two interleaved, and checks their predictions are the same: the effect of tokenising the
next block in a thread while the model runs (:meth:`HFTagger._encoded_blocks`).

``--own-work`` measures instead what a GPU's forward pass cannot hide, on any machine: robustlab's
predictor with the model's forward pass replaced by a stub returning zeros of the right shape and
the Rust tokenizer's ``encode_batch`` served from a memo filled in a warm-up, so what is timed is
the Python work around them (keys, encoding fields, batches, decoding, checks), which holds the
GIL; reported in microseconds per distinct input (min and median over ``--repeats``). On an H200
MiniLM's forward pass took about 50 us per input, so robustlab / bare <= 1.3 leaves ~15 us per
input for this. The memo wraps the tokenizer's ``_tokenizer`` (transformers' private name for
the Rust object, a bench-only reach), so the same command times an older checkout too
(``PYTHONPATH=OLD python bench/bench_tasks_speed.py --own-work``).

Models: ``--model-dir ner=DIR --model-dir similarity=DIR`` (a trained MiniLM token classifier /
similarity regressor folder, e.g. from ``robustlab train --task ner --model minilm``; a single
``--model-dir DIR`` with a single task), else a tiny random-config BERT (MiniLM's tokenizer) is
fine-tuned for a few steps here, for smoke use only: its timings say nothing of MiniLM's.

Only torch, transformers, numpy, scipy, scikit-learn, seqeval, nltk, lemminflect, codespell and
sacrebleu are imported on this path (no textattack, checklist, ray, textual or datasets):
``--block-optional`` makes importing those fail, to show it.

Run: ``nice -n 10 python bench/bench_tasks_speed.py --n 100 --repeats 3 --device cpu --out
bench/results/tasks_speed`` (``--device cuda`` on a GPU; the path is the same:
``model.to(device)`` and ``torch.inference_mode``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PERTURBATIONS = ["char_insert", "char_keyboard", "char_swap", "char_repeat", "char_delete",
                 "misspelling", "letter_case", "word_delete", "word_synonym", "negation",
                 "singular_plural_verb", "word_repeat", "verb_tense", "word_order"]
BATCH = 64
METHODS = ("robustlab", "pipeline", "bare")
#: modules this bench must not need (``--block-optional``)
OPTIONAL = ("textattack", "checklist", "ray", "textual", "datasets")
NER_TAGS = ["O", "B-LOC", "B-MISC", "B-ORG", "B-PER", "I-LOC", "I-MISC", "I-ORG", "I-PER"]


def block_optional() -> None:
    """Make ``import textattack`` (and the rest of :data:`OPTIONAL`) raise ImportError."""
    for name in OPTIONAL:
        sys.modules[name] = None  # type: ignore[assignment]


def load() -> str:
    out = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return out.split("load average:")[-1].strip() if out else "?"


def subset(examples: list, n: int | None, seed: int = 0) -> list:
    import numpy as np

    if not n or n >= len(examples):
        return list(examples)
    keep = np.sort(np.random.default_rng(seed).permutation(len(examples))[:n])
    return [examples[i] for i in keep]


def perturbed_sets(task: Any, examples: list) -> list[list]:
    """The clean examples and each perturbation's (PPS 1, seed 0). word_synonym without its
    masked LM: perturbing is not timed, and the LM only chooses among synonyms."""
    from robustlab.perturbations import make

    sets = [examples]
    for name in PERTURBATIONS:
        pert = make(name, mlm=None) if name == "word_synonym" else make(name, pps=1)
        sets.append([p.example for p in task.perturb(examples, pert, seed=0)])
    return sets


def new_inputs(task: Any, sets: list[list]) -> list[list]:
    """Per call, the examples no earlier call had (what robustlab's predictor sends on: the
    same key)."""
    from robustlab.studies.eval.tasks import input_key

    seen: set = set()
    calls = []
    for s in sets:
        call = []
        for ex, x in zip(s, task.model_inputs(s), strict=True):
            key = input_key(x)
            if key not in seen:
                seen.add(key)
                call.append(ex)
        calls.append(call)
    return calls


# ---- models -----------------------------------------------------------------------------------


def smoke_model(task: Any, examples: list, directory: Path, device: str) -> Path:
    """A tiny random-config BERT with MiniLM's tokenizer, fine-tuned 5 steps on ``examples``
    and saved (a trained folder for the smoke run; not MiniLM's speed)."""
    import shutil

    import torch
    from transformers import BertConfig, BertModel

    from robustlab.models.hf_tasks import HFPairScorer, HFTagger
    from robustlab.resources import minilm_path

    base = directory / "base"
    base.mkdir(parents=True)
    src = minilm_path()
    for f in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (src / f).exists():
            shutil.copy(src / f, base / f)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=30522, hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=128, max_position_embeddings=512)
    BertModel(cfg).save_pretrained(base, safe_serialization=True)
    if task.name == "ner":
        model = HFTagger(str(base), steps=5, batch_size=8, device=device).fit(
            [e.tokens for e in examples], [e.tags for e in examples])
    else:
        model = HFPairScorer(str(base), steps=5, batch_size=8, device=device).fit(
            [(e.first, e.second) for e in examples], [float(e.label) for e in examples])
    model.save(directory / "model")
    return directory / "model"


def bare_batches(model: Any, tok: Any, inputs: list, pairs: bool, device: Any) -> list[dict]:
    """Pre-tokenised, padded, length-sorted batches on the device (built before timing)."""
    import torch

    if not inputs:
        return []
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
    return batches


def sync(device: Any) -> None:
    import torch

    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


class _Memo:
    """A Rust tokenizer whose ``encode_batch`` answers from a memo (``--own-work``)."""

    def __init__(self, real: Any) -> None:
        self.real, self.memo = real, {}

    def encode_batch(self, inputs: list, *args: Any, **kwargs: Any) -> list:
        keys = [repr(x) for x in inputs]
        missing = [(k, x) for k, x in zip(keys, inputs, strict=True) if k not in self.memo]
        if missing:
            done = self.real.encode_batch([x for _, x in missing], *args, **kwargs)
            self.memo.update(zip([k for k, _ in missing], done, strict=True))
        return [self.memo[k] for k in keys]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def own_work(name: str, ours: Any, task: Any, sets: list, n_new: int,
             args: argparse.Namespace) -> dict:
    """``--own-work``: robustlab's predictor with a stub forward pass and a memoised Rust
    tokenizer, timed (module docstring)."""
    import torch

    from robustlab.studies.eval.tasks import TaskPredictor

    labels = ours.model_.config.num_labels

    class Output:
        def __init__(self, logits: Any) -> None:
            self.logits = logits

    class Stub(torch.nn.Module):
        def forward(self, input_ids: Any, **_: Any) -> Output:
            shape = (*input_ids.shape, labels) if name == "ner" else (input_ids.shape[0], 1)
            return Output(torch.zeros(shape))

    ours.model_ = Stub()
    ours.tokenizer_._tokenizer = _Memo(ours.tokenizer_._tokenizer)

    def run() -> list:
        predictor = TaskPredictor(task, ours, batch_size=BATCH)
        return [predictor(s) for s in sets]

    run()  # fills the memo (and makes robustlab's own tokenizer copy, where it has one)
    made = getattr(ours, "_backend", None)
    if made is not None and made[-1] is not None:
        ours._backend = (*made[:-1], _Memo(made[-1]))
    run()
    times = []
    for rep in range(args.repeats):
        t = time.perf_counter()
        run()
        times.append(time.perf_counter() - t)
        print(f"  repeat {rep + 1}/{args.repeats}: {times[-1]:.3f} s", flush=True)
    per = [t / n_new * 1e6 for t in times]
    result = {"task": name, "own_work_us_per_input_min": min(per),
              "own_work_us_per_input_median": statistics.median(per), "inputs_distinct": n_new,
              "seconds": times, "load_after": load(),
              "tokenizer_copy": made is not None and made[-1] is not None}
    print(f"  robustlab's own work (stub forward pass, memoised tokenizer): "
          f"{result['own_work_us_per_input_min']:.1f} us per distinct input (min), "
          f"{result['own_work_us_per_input_median']:.1f} (median); load {result['load_after']}",
          flush=True)
    return result


# ---- one task ---------------------------------------------------------------------------------


def run_task(name: str, path: Path, args: argparse.Namespace, model_dir: str | None) -> dict:
    import numpy as np
    import torch
    import transformers

    from robustlab.models.hf_tasks import HFPairScorer, HFTagger
    from robustlab.studies.eval.tasks import TaskPredictor, input_key
    from robustlab.tasks import get_task
    from robustlab.tasks.predict import PipelinePredictor, predict

    task = get_task(name)
    examples = subset(task.read(path).examples, args.n)
    t0 = time.perf_counter()
    sets = perturbed_sets(task, examples)
    calls = new_inputs(task, sets)
    n_all, n_new = sum(map(len, sets)), sum(map(len, calls))
    print(f"{name}: {len(examples)} examples x {len(sets)} calls (clean + 14 perturbations); "
          f"inputs {n_new} distinct / {n_all}; perturbing took {time.perf_counter() - t0:.0f} s "
          "(not timed)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if model_dir is None:
            train = subset(task.read(args.train_files[name]).examples, 64, seed=1)
            model_dir = str(smoke_model(task, train, Path(tmp), args.device))
            source = "tiny random-config BERT, 5 steps (smoke)"
        else:
            source = model_dir
        cls = HFTagger if name == "ner" else HFPairScorer
        ours = cls.load(model_dir, device=args.device)
        if args.encode_block:
            ours.encode_block = args.encode_block
        if args.own_work:
            return own_work(name, ours, task, sets, n_new, args)
        dev = ours.device_
        kind = "token-classification" if name == "ner" else "text-classification"
        extra = {"aggregation_strategy": "none"} if name == "ner" else {}
        pipe = transformers.pipeline(kind, model=ours.model_, tokenizer=ours.tokenizer_,
                                     device=dev, **extra)
        wrapped = PipelinePredictor(pipe, batch_size=BATCH)
        batches = [bare_batches(ours.model_, ours.tokenizer_, task.model_inputs(c),
                                name != "ner", dev) for c in calls]

        def run_robustlab() -> list:
            predictor = TaskPredictor(task, ours, batch_size=BATCH)
            return [predictor(s) for s in sets]

        def run_pipeline() -> list:
            return [predict(task, wrapped, s) for s in sets]

        def run_bare() -> None:
            with torch.inference_mode():
                for call in batches:
                    for batch in call:
                        ours.model_(**batch).logits.float().cpu()

        def run_one_block() -> list:  # tokenise every input before the first forward pass
            block = ours.encode_block
            ours.encode_block = 1 << 30
            try:
                return run_robustlab()
            finally:
                ours.encode_block = block

        fns = {"robustlab": run_robustlab, "pipeline": run_pipeline, "bare": run_bare,
               "one-block": run_one_block}
        # --ahead-ab: the producer thread's A/B alone (the pipeline and bare are the default run)
        methods = ("robustlab", "one-block") if args.ahead_ab else METHODS
        # warm-up (first-call allocations, thread pools), untimed
        predict(task, ours, sets[0][:8])
        if not args.ahead_ab:
            predict(task, wrapped, sets[0][:8])
        times: dict[str, list[float]] = {m: [] for m in methods}
        outputs: dict[str, Any] = {}
        load_before = load()
        for rep in range(args.repeats):
            r = rep % len(methods)
            order = methods[r:] + methods[:r]
            for m in order:
                sync(dev)
                t = time.perf_counter()
                out = fns[m]()
                sync(dev)
                times[m].append(time.perf_counter() - t)
                outputs.setdefault(m, out)
            print(f"  repeat {rep + 1}/{args.repeats} ({' > '.join(order)}): "
                  + "  ".join(f"{m} {times[m][-1]:.2f} s" for m in methods), flush=True)
        load_after = load()
        if args.ahead_ab:
            return ahead_result(name, examples, sets, times, outputs, source, dev, args,
                                load_before, load_after)
        if args.profile:  # where robustlab's time goes (its own code vs torch's forward)
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.runcall(run_robustlab)
            pstats.Stats(prof).sort_stats("tottime").print_stats(12)
        # agreement: robustlab's prediction of each distinct input against the pipeline's
        ours_by = {}
        for s, preds in zip(sets, outputs["robustlab"], strict=True):
            for x, p in zip(task.model_inputs(s), preds, strict=True):
                ours_by[input_key(x)] = p
        pairs = [(ours_by[input_key(x)], p)
                 for s, preds in zip(sets, outputs["pipeline"], strict=True)
                 for x, p in zip(task.model_inputs(s), preds, strict=True)]
        agree = float(np.mean([a == b if name == "ner" else abs(a - b) < 1e-3
                               for a, b in pairs]))
    med = {m: statistics.median(v) for m, v in times.items()}
    result = {"task": name, "examples": len(examples), "calls": len(sets),
              "inputs_all": n_all, "inputs_distinct": n_new, "model": source,
              "device": str(dev), "repeats": args.repeats, "seconds": times,
              "median_seconds": med,
              "pipeline_over_robustlab": med["pipeline"] / med["robustlab"],
              "robustlab_over_bare": med["robustlab"] / med["bare"],
              "agreement_with_pipeline": agree,
              "load_before": load_before, "load_after": load_after}
    print(f"  medians: robustlab {med['robustlab']:.2f} s ({n_new} inputs to the model)  "
          f"pipeline {med['pipeline']:.2f} s ({n_all} inputs)  bare {med['bare']:.2f} s "
          f"({n_new}) -> "
          f"pipeline/robustlab {result['pipeline_over_robustlab']:.2f}x (target >= 2), "
          f"robustlab/bare {result['robustlab_over_bare']:.2f}x (target <= 1.3); predictions "
          f"equal to the pipeline's {agree:.1%}; load {load_before} -> {load_after}",
          flush=True)
    return result


def ahead_result(name: str, examples: list, sets: list, times: dict, outputs: dict, source: str,
                 dev: Any, args: argparse.Namespace, load_before: str, load_after: str) -> dict:
    """``--ahead-ab``: robustlab's predictor with the next block tokenised in a producer thread
    against the same predictor with every input tokenised first; their predictions compared."""
    import numpy as np

    med = {m: statistics.median(v) for m, v in times.items()}
    a, b = outputs["robustlab"], outputs["one-block"]
    same = all(x == y if name == "ner" else np.allclose(x, y, atol=1e-5)
               for pa, pb in zip(a, b, strict=True) for x, y in zip(pa, pb, strict=True))
    result = {"task": name, "examples": len(examples), "calls": len(sets), "model": source,
              "device": str(dev), "repeats": args.repeats, "seconds": times,
              "median_seconds": med, "one_block_over_ahead": med["one-block"] / med["robustlab"],
              "same_predictions": same, "load_before": load_before, "load_after": load_after}
    print(f"  tokenising ahead: robustlab {med['robustlab']:.2f} s, every input tokenised first "
          f"{med['one-block']:.2f} s -> one-block / ahead {result['one_block_over_ahead']:.3f}x; "
          f"same predictions: {same}; load {load_before} -> {load_after}", flush=True)
    return result


def markdown(results: list[dict], header: str) -> str:
    lines = ["# Task prediction speed (bench/bench_tasks_speed.py)", "", header, "",
             "| task | examples | inputs distinct/all | robustlab s | pipeline s | bare s | "
             "pipeline/robustlab (>= 2) | robustlab/bare (<= 1.3) | agree | load before -> "
             "after |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        m = r["median_seconds"]
        lines.append(f"| {r['task']} | {r['examples']} | {r['inputs_distinct']}/"
                     f"{r['inputs_all']} | {m['robustlab']:.2f} | {m['pipeline']:.2f} | "
                     f"{m['bare']:.2f} | {r['pipeline_over_robustlab']:.2f}x | "
                     f"{r['robustlab_over_bare']:.2f}x | {r['agreement_with_pipeline']:.1%} | "
                     f"{r['load_before']} -> {r['load_after']} |")
    lines += ["", "Medians over the repeats (methods interleaved round-robin); model: "
              + "; ".join(f"{r['task']}: {r['model']}" for r in results) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=None,
                    help="seeded subset of sentences / pairs (default: all)")
    ap.add_argument("--tasks", default="ner,similarity")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--model-dir", action="append", default=[], metavar="[TASK=]DIR",
                    help="a trained model folder per task (ner=DIR, similarity=DIR); default: "
                    "a tiny random-config model trained here (smoke only)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default torch's)")
    ap.add_argument("--out", default=None, metavar="PREFIX",
                    help="write PREFIX.json and PREFIX.md")
    ap.add_argument("--profile", action="store_true",
                    help="after timing, run robustlab's path once under cProfile per task")
    ap.add_argument("--encode-block", type=int, default=None, metavar="N",
                    help="inputs tokenised per block by robustlab's predictor (default its own)")
    ap.add_argument("--ahead-ab", action="store_true",
                    help="time only robustlab against itself with every input tokenised before "
                         "the first forward pass (one block: no producer thread), interleaved")
    ap.add_argument("--own-work", action="store_true",
                    help="time only robustlab's own Python work per input: forward pass "
                         "stubbed, Rust tokenizer memoised (module docstring)")
    ap.add_argument("--block-optional", action="store_true",
                    help=f"make {', '.join(OPTIONAL)} unimportable (shows they are not needed)")
    args = ap.parse_args(argv)
    if args.block_optional:
        block_optional()
    import torch

    from robustlab.resources import shared_data_dir

    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    dirs: dict[str, str] = {}
    for spec in args.model_dir:
        name, sep, d = spec.partition("=")
        if not sep:
            if len(tasks) != 1:
                ap.error("--model-dir DIR without TASK= needs a single --tasks")
            name, d = tasks[0], spec
        dirs[name] = d
    if args.threads:
        torch.set_num_threads(args.threads)
    header = (f"device {args.device}"
              + (f" ({torch.cuda.get_device_name()})" if args.device == "cuda" else
                 f", {os.cpu_count()} cores, torch threads {torch.get_num_threads()}")
              + f"; torch {torch.__version__}; load at start {load()}; n {args.n}; repeats "
              f"{args.repeats}")
    print(header, flush=True)
    root = shared_data_dir()
    files = {"ner": root / "conll2003/test.txt", "similarity": root / "stsb/sts-test.csv"}
    args.train_files = {"ner": root / "conll2003/train.txt",
                        "similarity": root / "stsb/sts-train.csv"}
    results = [run_task(t, files[t], args, dirs.get(t)) for t in tasks]
    loaded = sorted(m for m in OPTIONAL if sys.modules.get(m) is not None)
    print(f"optional modules imported: {', '.join(loaded) or 'none'}", flush=True)
    if args.out:
        from robustlab.outputs import write_json

        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_json(out.with_suffix(".json"), {"header": header, "results": results,
                                              "optional_imported": loaded})
        if not (args.ahead_ab or args.own_work):
            out.with_suffix(".md").write_text(markdown(results, header), encoding="utf-8")
        print(f"-> {out.with_suffix('.json')}, {out.with_suffix('.md')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
