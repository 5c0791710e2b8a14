"""Running a second-order attack over a dataset into a run directory (kind ``attack``).

The Python API behind ``robustlab attack`` (and the TUI): one store cell per example (resumable:
a rerun with the same options continues where it stopped), then ``results.jsonl``,
``summary.json`` and, with ``csv_name``, a TextAttack-style CSV (TextAttack's ``CSVLogger``
columns plus ``patch``, ``l0``, ``seconds``, ``source``), all per docs/run-directory.md.
"""

from __future__ import annotations

import csv
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

RECIPES = {"so-beam": "robustlab.studies.second_order.so_beam", "so-enum": "robustlab.studies.second_order.so_enum",
           "so-random": "robustlab.studies.second_order.so_random"}
CSV_COLUMNS = ["original_text", "perturbed_text", "original_score", "perturbed_score",
               "original_output", "perturbed_output", "ground_truth_output", "num_queries",
               "result_type", "patch_words", "l0", "seconds", "source"]


#: the ``robustlab attack`` option each key of an attack run's config comes from (for messages)
CONFIG_OPTIONS = {
    "recipe": "--recipe", "model": "--model", "dataset": "--dataset", "n": "--num-examples",
    "source": "--source/--mlm", "pairs": "--patch-table", "kappa": "--kappa", "delta": "--delta",
    "beam_width": "--beam-width", "walks": "--beam-width", "max_rounds": "--max-distance",
    "max_distance": "--max-distance", "max_changes": "--max-distance", "seed": "--random-seed",
    "query_budget": "--query-budget", "model_batch_size": "--model-batch-size",
    "inputs": "input files",
}


def config_differences(stored: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between a run's stored config and this invocation's, by option name:
    ``["--num-examples: 10 in the run, 20 now", ...]``. ``data`` (the fingerprint of the
    examples) is named only when nothing else explains it (same count, other texts/labels)."""
    from robustlab.runs import inputs as run_inputs

    keys = [k for k in dict.fromkeys([*stored, *new]) if stored.get(k) != new.get(k)]
    out = []
    for k in keys:
        if k in ("data", run_inputs.KEY):  # inputs: by checksum below, not by path
            continue
        out.append(f"{CONFIG_OPTIONS.get(k, k)}: {json.dumps(stored.get(k))} in the run, "
                   f"{json.dumps(new.get(k))} now")
    if "data" in keys and not ({"n", "dataset"} & set(keys)):
        out.append(f"--dataset: the examples differ from the run's (fingerprint "
                   f"{stored.get('data')} in the run, {new.get('data')} now)")
    out += [f"input {line}" for line in run_inputs.changed(stored.get(run_inputs.KEY),
                                                            new.get(run_inputs.KEY))]
    return out


def source_input(spec: Any, option: str = "--source/--mlm") -> tuple[str | None, str]:
    """``(value, origin)`` of a neighbourhood source for the run's input record: the table file,
    the masked LM (directory or hub id), or WordNet's corpus directory; ``None`` (the default)
    resolves as :func:`~robustlab.studies.second_order.neighbourhood.make_source` does."""
    import os

    from robustlab.resources import named_source_path

    if spec is not None and not isinstance(spec, str):
        return str(getattr(spec, "name", type(spec).__name__)), f"{option} (an object)"
    origin = option
    if not spec:
        env = os.environ.get("ROBUSTLAB_NEIGHBOURHOOD")
        spec, origin = (env, "default: $ROBUSTLAB_NEIGHBOURHOOD") if env else ("wordnet",
                                                                               "default")
    if spec == "wordnet":
        path = named_source_path("wordnet")
        return (str(path) if path else "wordnet"), f"{origin} wordnet (NLTK data)"
    for prefix in ("table:", "mlm:"):
        if spec.startswith(prefix):
            return spec[len(prefix):], origin
    return spec, origin


def pairs_input(pairs: Any, option: str = "--patch-table") -> tuple[str | None, str]:
    """``(value, origin)`` of the table patch pairs are drawn from; ``None`` (the default)
    resolves as :func:`~robustlab.studies.second_order.patch_words.default_pair_source` does,
    so the run records which table "default" was. A dict given in Python has no file (its
    fingerprint is in the config)."""
    from robustlab.resources import named_source_path
    from robustlab.studies.second_order.patch_words import default_pair_source_origin

    if pairs is None:
        value, origin = default_pair_source_origin()
    elif isinstance(pairs, str):
        value, origin = pairs, option
    else:
        return None, option
    if value in ("wordnet", "textattack-counterfitted"):
        path = named_source_path(value)
        return (str(path) if path else value), (origin if pairs is None else f"{origin} {value}")
    return value, origin


def attack_inputs(kwargs: dict[str, Any]) -> list[tuple[str, str | None, str]]:
    """``(role, value, origin)`` of the recipe's own inputs: neighbourhood source, patch table."""
    return [("neighbourhood", *source_input(kwargs.get("source"))),
            ("patch_table", *pairs_input(kwargs.get("pairs")))]


def check_resumable(out: Path, config: dict[str, Any]) -> None:
    """Refuse, naming the differing options, to continue a run made with other options.

    A run's examples and options are fixed when it starts (its cells and signatures depend on
    them), so a larger ``--num-examples`` is refused too, with the way out. A store that cannot
    be read here is left to ``RunStore.init_run``, which reports damage with its recovery hint."""
    import sqlite3

    from robustlab.runs.store import RunStore, StoreError

    try:
        with RunStore(out, readonly=True) as store:
            info = store.run_info()
    except (StoreError, sqlite3.DatabaseError):
        return
    if info is None or info.kind != "attack":
        return
    diffs = config_differences(info.config, json.loads(json.dumps(config)))
    if diffs:
        from robustlab.textfmt import printable  # the stored values are shown, not run

        started = f"; it was started as: {printable(info.command)}" if info.command else ""
        raise InputError(
            f"{out} holds an attack run with other options: {printable('; '.join(diffs))}"
            f"{started}. A run's "
            "examples and options are fixed when it starts: rerun with its options to resume "
            "it, or choose another --out")


def import_textattack() -> None:
    """Import TextAttack (several seconds) quietly: the second-order components first, which
    mute its dependencies' import-time warnings."""
    import robustlab.studies.second_order.components  # noqa: F401


def recipe_module(name: str):
    import importlib

    if name not in RECIPES:
        raise InputError(f"unknown recipe {name!r}; choose from {', '.join(RECIPES)}")
    return importlib.import_module(RECIPES[name])


def example_record(result: Any, attack: Any, index: int, seconds: float) -> dict[str, Any]:
    """The per-example record of docs/run-directory.md from a TextAttack ``AttackResult``."""
    from robustlab.studies.second_order.components import apply_patch
    from robustlab.studies.second_order.search import l0

    st = attack.so_state
    kind = type(result).__name__.replace("AttackResult", "").lower()
    orig = result.original_result
    x0 = orig.attacked_text
    rec: dict[str, Any] = {
        "index": index, "original": x0.text, "perturbed": None, "patched": None,
        "patch": st.patch.as_list() if st.patch else None,
        "result_type": {"successful": "successful", "failed": "failed"}.get(kind, "skipped"),
        "skip_reason": st.skip_reason, "ground_truth": orig.ground_truth_output,
        "original_output": None, "perturbed_output": None, "patched_output": None,
        "original_proba": None, "perturbed_proba": None, "patched_proba": None,
        "l0": None, "queries": st.model_queries, "ta_queries": result.num_queries,
        "seconds": seconds, "model_seconds": st.model_seconds, "source": attack.so_source.name,
        "original_score": None, "perturbed_score": None,
        "original_marked": x0.text, "perturbed_marked": "",
    }
    if rec["result_type"] == "skipped":
        rec["skip_reason"] = st.skip_reason or "skipped by the goal function"
        return rec
    pert = result.perturbed_result
    rec.update(
        original_output=int(orig.raw_output[0].argmax()),
        original_proba=orig.raw_output[0].tolist(),
        original_score=float(orig.score), perturbed_score=float(pert.score),
    )
    if rec["result_type"] == "successful":
        xt = pert.attacked_text
        marked = result.diff_color("file") if xt.text != x0.text else (x0.text, xt.text)
        rec.update(
            perturbed=xt.text, patched=apply_patch(xt, st.patch).text,
            perturbed_output=int(pert.raw_output[0].argmax()),
            patched_output=int(pert.raw_output[1].argmax()),
            perturbed_proba=pert.raw_output[0].tolist(),
            patched_proba=pert.raw_output[1].tolist(),
            l0=l0(x0, xt), original_marked=marked[0], perturbed_marked=marked[1],
        )
    return rec


def perplexities(texts: Sequence[str], model: str) -> list[float]:
    """Per-sentence perplexity under a causal LM (``--ppl-model``: gpt2 or a local directory)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(model)
        lm = AutoModelForCausalLM.from_pretrained(model).eval()
    except (OSError, ValueError) as exc:
        raise InputError(f"--ppl-model {model!r} cannot be loaded ({exc}); pass a local "
                         "causal-LM directory") from exc
    out = []
    with torch.inference_mode():
        for t in texts:
            ids = tok(t, return_tensors="pt", truncation=True,
                      max_length=getattr(lm.config, "n_positions", 512))["input_ids"]
            if ids.shape[1] < 2:
                ids = torch.cat([torch.tensor([[tok.bos_token_id or 0]]), ids], dim=1)
            loss = lm(ids, labels=ids).loss
            out.append(float(torch.exp(loss)))
    return out


def summarise(records: list[dict[str, Any]], recipe: str, ppl: dict[str, Any] | None) -> dict:
    counts = {k: sum(r["result_type"] == k for r in records)
              for k in ("successful", "failed", "skipped")}
    attacked = counts["successful"] + counts["failed"]
    succ = [r for r in records if r["result_type"] == "successful"]
    n = max(len(records), 1)
    return {
        "recipe": recipe,
        "success_rate": counts["successful"] / attacked if attacked else None,
        "mean_l0": statistics.fmean(r["l0"] for r in succ) if succ else None,
        "queries_per_example": sum(r["queries"] for r in records) / n,
        "seconds_per_example": sum(r["seconds"] for r in records) / n,
        "model_seconds_share": (sum(r.get("model_seconds") or 0 for r in records)
                                / max(sum(r["seconds"] for r in records), 1e-9)),
        "counts": counts,
        "perplexity": ppl,
    }


def write_csv(path: Path, records: list[dict[str, Any]]) -> Path:
    """TextAttack CSVLogger columns (QUOTE_NONNUMERIC) plus patch words, ℓ0, seconds, source."""
    from robustlab.outputs import atomic_write

    names = {"successful": "Successful", "failed": "Failed", "skipped": "Skipped"}

    def w(f):
        wr = csv.DictWriter(f, CSV_COLUMNS, quoting=csv.QUOTE_NONNUMERIC)
        wr.writeheader()
        for r in records:
            wr.writerow({
                "original_text": r["original_marked"], "perturbed_text": r["perturbed_marked"],
                "original_score": r["original_score"], "perturbed_score": r["perturbed_score"],
                "original_output": r["original_output"],
                "perturbed_output": r["perturbed_output"],
                "ground_truth_output": r["ground_truth"], "num_queries": r["queries"],
                "result_type": names[r["result_type"]],
                "patch_words": "->".join(r["patch"]) if r["patch"] else "",
                "l0": r["l0"], "seconds": round(r["seconds"], 4), "source": r["source"]})

    return atomic_write(path, w)


def _config_value(v: Any) -> Any:
    """A stable JSON value for the run config (objects by name, so a resume matches)."""
    if isinstance(v, (int, float, str, bool, type(None))):
        return v
    if hasattr(v, "name"):
        return str(v.name)
    if isinstance(v, dict):
        from robustlab.signature import fingerprint

        return f"dict:{fingerprint(v)}"
    return type(v).__name__


#: per worker process: attacks built by AttackCells (key -> textattack.Attack)
_ATTACKS: dict[str, Any] = {}


class AttackCells:
    """The cell function of an attack study, picklable for the process and Ray executors.

    It carries what a worker needs to build the attack itself, once per process: the recipe,
    its options and the victim (a model spec that ``load_victim`` understands, or a model
    wrapper object shipped as it is). Cells carry their example (text, label), so no worker
    needs the dataset file. The sequential executor hands over the driver's own attack.
    """

    def __init__(self, recipe: str, kwargs: dict[str, Any], victim: Any, sig: str,
                 attack: Any = None) -> None:
        import uuid

        self.recipe, self.kwargs, self.victim, self.sig = recipe, kwargs, victim, sig
        self.key = uuid.uuid4().hex  # one study: copies in workers share their build
        self.attack = attack

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "attack": None}  # each worker builds its own

    def _attack(self) -> Any:
        if self.attack is not None:
            return self.attack
        hit = _ATTACKS.get(self.key)
        if hit is None:
            victim = self.victim
            if isinstance(victim, str):
                from robustlab.integrations.victims import load_victim

                victim = load_victim(victim)[0]
            hit = recipe_module(self.recipe).build(victim, **self.kwargs)
            _ATTACKS.clear()  # one study per process at a time
            _ATTACKS[self.key] = hit
        return hit

    def __call__(self, _kind: str, params: dict[str, Any]) -> Any:
        from robustlab.runs.executor import CellOutput

        attack = self._attack()
        # queries are counted per example: without the single-word predictions cached by the
        # examples this process attacked before, so every executor and resume order agrees
        selector = getattr(attack.goal_function, "selector", None)
        if selector is not None:
            selector.clear_cache()
        t0 = time.perf_counter()
        result = attack.attack(params["text"], int(params["label"]))
        rec = example_record(result, attack, int(params["index"]), time.perf_counter() - t0)
        rec["signature"] = self.sig
        return CellOutput(result=rec, signature=self.sig)


def portable_kwargs(kwargs: dict[str, Any], blacklist: Sequence[str] = ()) -> dict[str, Any]:
    """Recipe options naming no driver file: ``table:FILE`` sources and a ``pairs`` table file
    are read here and travel as data (an MLM source stays a checkpoint name)."""
    from robustlab.studies.second_order.neighbourhood import load_table, make_source

    out = dict(kwargs)
    src = out.get("source")
    if isinstance(src, str) and src.startswith("table:"):
        out["source"] = make_source(src, blacklist=out.get("blacklist", blacklist),
                                    kappa=out.get("kappa", 20), delta=out.get("delta", 3.0))
    pairs = out.get("pairs")
    if isinstance(pairs, str) and Path(pairs).is_file():
        out["pairs"] = load_table(pairs)
    return out


def run_attack_study(*, recipe: str, model_wrapper: Any, model_name: str,
                     examples: Sequence[tuple[str, int]], out: str | Path,
                     dataset_name: str = "", recipe_kwargs: dict[str, Any] | None = None,
                     csv_name: str | None = None, ppl_model: str | None = None,
                     command: str | None = None, progress: bool = True,
                     executor: str = "sequential", workers: int = 1,
                     model_spec: str | None = None, ray_address: str | None = None,
                     gpus_per_task: float = 0.0, cpus_per_task: float = 1.0,
                     log: Callable[[str], None] | None = None,
                     inputs: Sequence[tuple[str, str | None, str]] = ()) -> dict[str, Any]:
    """Attack ``examples`` [(text, label)] with a robustlab recipe; returns ``summary.json``.

    One cell per example on any executor (``sequential``, ``process``, ``ray``), with the same
    keys, resume and results. ``inputs`` (``(role, value, origin)``: the dataset file, the
    model directory) join the recipe's own (neighbourhood source, patch table) in the run's
    input record (:mod:`robustlab.runs.inputs`), with path, size and SHA-256. Parallel workers build the attack themselves from ``model_spec``
    when given (cheap to ship; a local model directory is shipped loaded to Ray instead), else
    from ``model_wrapper`` (pickled to them). ``log`` receives one line per set-up step.
    """
    from robustlab.outputs import write_json, write_jsonl
    from robustlab.runs import inputs as run_inputs
    from robustlab.runs.executor import run_cells
    from robustlab.runs.ray_backend import prepare
    from robustlab.runs.store import Cell, RunStore, is_run_dir
    from robustlab.signature import fingerprint, make_signature, versions

    say = log or (lambda _msg: None)
    mod = recipe_module(recipe)
    kwargs = dict(recipe_kwargs or {})
    out = Path(out)
    recorded = run_inputs.collect([*inputs, *attack_inputs(kwargs)])
    config = {"recipe": recipe, "model": model_name, "dataset": dataset_name,
              "n": len(examples), "data": fingerprint(list(examples)),
              **{k: _config_value(v) for k, v in kwargs.items()}, run_inputs.KEY: recorded}
    run_inputs.announce(recorded, say)
    src = kwargs.get("source")
    say(f"building {recipe} (neighbourhood source: "
        f"{getattr(src, 'name', src) or 'default'}, patch pairs: {kwargs.get('pairs') or 'default'})")
    attack = mod.build(model_wrapper, **kwargs)  # bad options fail before --out is created
    options = prepare(executor, workers, ray_address, gpus_per_task, cpus_per_task)
    if is_run_dir(out):
        check_resumable(out, config)
    store = RunStore(out)
    out = store.run_dir  # a run directory that is a link: resolved once, used by that path
    store.init_run("attack", f"{recipe} {model_name}", config, command=command,
                   versions=versions())
    sig = make_signature("attack", recipe=recipe, model=model_name, data=config["data"],
                         source=attack.so_source.name)
    cells = [Cell(f"ex={i:06d}", "attack", {"index": i, "text": str(t), "label": int(y)})
             for i, (t, y) in enumerate(examples)]
    if executor == "sequential":
        fn = AttackCells(recipe, kwargs, None, sig, attack=attack)
    else:
        victim: Any = model_spec or model_wrapper
        if executor == "ray":  # nodes may share no files with this machine
            kwargs = portable_kwargs(kwargs)
            if model_spec and Path(model_spec).exists():
                victim = model_wrapper
        fn = AttackCells(recipe, kwargs, victim, sig)

    done = len(store.done_keys())
    say(f"attacking {len(cells) - done} of {len(cells)} examples"
        + (f" ({done} already done)" if done else "") + f" -> {out}")
    try:
        report = run_cells(store, cells, fn, progress=progress, desc=recipe, executor=executor,
                           workers=workers, **options)
    except BaseException:
        store.close()
        raise
    records = [c.result for c in store.cells("done") if c.result]
    records.sort(key=lambda r: r["index"])
    ppl = None
    if ppl_model:
        succ = [r for r in records if r["result_type"] == "successful"]
        ppl = {"original": None, "perturbed": None, "model": ppl_model, "n": len(succ)}
        if succ:  # one call: the causal LM is loaded once for both sides
            both = perplexities([r["original"] for r in succ] + [r["perturbed"] for r in succ],
                                ppl_model)
            ppl["original"] = statistics.median(both[:len(succ)])
            ppl["perturbed"] = statistics.median(both[len(succ):])
    summary = summarise(records, recipe, ppl)
    files = []
    if csv_name:
        write_csv(out / csv_name, records)
        files.append(csv_name)
    failed = [c.key for c in store.cells("failed")]
    summary.update(kind="attack", complete=report.done == len(cells), failed_cells=failed,
                   config=config, signature=sig, versions=versions(), files=files,
                   seconds=store.elapsed(), source=attack.so_source.name)
    write_jsonl(out / "results.jsonl", records)
    write_json(out / "summary.json", summary)
    store.set_run_status("done" if not failed else "failed",
                         None if not failed else f"{len(failed)} cells failed")
    store.close()
    return summary
