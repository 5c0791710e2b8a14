"""Running a second-order attack over a dataset into a run directory (kind ``attack``).

The Python API behind ``robustlab attack`` (and the TUI): one store cell per example (resumable:
a rerun with the same options continues where it stopped), then ``results.jsonl``,
``summary.json`` and, with ``csv_name``, a TextAttack-style CSV (TextAttack's ``CSVLogger``
columns plus ``patch``, ``l0``, ``seconds``, ``source``), all per docs/run-directory.md.
"""

from __future__ import annotations

import csv
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from robustlab.endpoints.card import is_endpoint
from robustlab.errors import InputError
from robustlab.runs import inputs as run_inputs
from robustlab.runs import payloads
from robustlab.runs.executor import RunReport
from robustlab.runs.store import Cell, RunStore
from robustlab.runs.study import Plan, RunContext, summary_base
from robustlab.signature import fingerprint
from robustlab.studies.second_order.config import OBJECT, AttackConfig
from robustlab.studies.second_order.inputs import attack_inputs

RECIPES = {"so-beam": "robustlab.studies.second_order.so_beam", "so-enum": "robustlab.studies.second_order.so_enum",
           "so-random": "robustlab.studies.second_order.so_random"}
#: what the summary indexes in every attack cell's result (docs/run-directory.md)
payloads.register_result("attack", {
    "index": int, "result_type": ("successful", "failed", "skipped"),
    "l0": (payloads.NUMBER, None), "queries": payloads.NUMBER, "seconds": payloads.NUMBER})
CSV_COLUMNS = ["original_text", "perturbed_text", "original_score", "perturbed_score",
               "original_output", "perturbed_output", "ground_truth_output", "num_queries",
               "result_type", "patch_words", "l0", "seconds", "source"]


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
        tok = AutoTokenizer.from_pretrained(model, trust_remote_code=False)
        lm = AutoModelForCausalLM.from_pretrained(model, trust_remote_code=False).eval()
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
                 attack: Any = None, device: str = "auto") -> None:
        import uuid

        self.recipe, self.kwargs, self.victim, self.sig = recipe, kwargs, victim, sig
        self.device = device  # where a masked-LM neighbourhood loads (lazily, in a cell)
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

                victim = load_victim(victim, self.device)[0]
            hit = recipe_module(self.recipe).build(victim, **self.kwargs)
            _ATTACKS.clear()  # one study per process at a time
            _ATTACKS[self.key] = hit
        return hit

    def __call__(self, _kind: str, params: dict[str, Any]) -> Any:
        from robustlab.runs.cells import CellOutput

        attack = self._attack()
        # queries are counted per example: without the single-word predictions cached by the
        # examples this process attacked before, so every executor and resume order agrees
        selector = getattr(attack.goal_function, "selector", None)
        if selector is not None:
            selector.clear_cache()
        from robustlab.studies.second_order.neighbourhood import mlm_device

        t0 = time.perf_counter()
        with mlm_device(self.device):
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


@dataclass
class Attack:
    """The attack study (:class:`robustlab.runs.study.Study`): one cell per example.

    From the command line (and ``robustlab resume``) everything comes from :attr:`config`; from
    Python, ``victim`` (a TextAttack ``ModelWrapper``), ``examples`` ([(text, label)]) and
    ``overrides`` (recipe options given as objects: a neighbourhood source, a pairs dict) may
    stand in for what the config names (its ``model`` is then ``object:NAME``).
    """

    config: AttackConfig
    victim: Any = None
    examples: Sequence[tuple[str, int]] | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    kind: ClassVar[str] = "attack"

    def recipe_kwargs(self) -> dict[str, Any]:
        return {**self.config.recipe_kwargs(), **self.overrides}

    def inputs(self) -> list[tuple[str, str | None, str]]:
        cfg = self.config
        items = run_inputs.data_and_model(cfg.dataset, cfg.model,
                                          data_given=self.examples is not None,
                                          model_given=self.victim is not None)
        items.append(("ppl_model", cfg.ppl_model, "--ppl-model"))
        if cfg.lm_check and "lm_check" not in self.overrides:
            items.append(("lm_check", cfg.lm_check.removeprefix("mlm:"), "--lm-check"))
        return [*items, *attack_inputs(self.recipe_kwargs())]

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        """Read the examples, load the victim, build the attack (nothing written yet)."""
        from robustlab.data.datasets import load_examples
        from robustlab.integrations.victims import load_victim
        from robustlab.models.device import resolve_device
        from robustlab.studies.second_order.config import NAMED_TABLES, load_options
        from robustlab.studies.second_order.neighbourhood import load_table, mlm_device

        cfg = self.config
        examples = self.examples
        where = cfg.dataset.get("path") or cfg.dataset.get("name")
        if examples is None:
            ctx.say(f"reading --dataset {where}")
            examples = load_examples(str(where), n=cfg.num_examples,
                                     **load_options(cfg.dataset))
        if not examples:
            raise InputError(f"--dataset {where}: no examples")
        if cfg.patch_table and cfg.patch_table not in NAMED_TABLES:
            load_table(cfg.patch_table)  # a bad table is refused before the model is loaded
        ctx.say("importing TextAttack")
        import_textattack()
        device = str(resolve_device(ctx.device))
        victim, model_name = self.victim, cfg.model.removeprefix(OBJECT)
        endpoint, estimated = None, None
        if victim is None and is_endpoint(cfg.model):
            # a model behind HTTP: asked through the endpoint client, every answer stored in
            # this run's store as it arrives; nothing is asked before the estimate is agreed
            if ctx.executor != "sequential":
                raise InputError(f"--executor {ctx.executor}: an attack over an endpoint runs "
                                 "with --executor sequential (its requests run "
                                 "--max-concurrency at a time)")
            victim, (endpoint, estimated) = open_endpoint_victim(cfg, examples,
                                                                 self.recipe_kwargs(), ctx, out)
            model_name = endpoint.card.url
        elif victim is None:
            ctx.say(f"loading model {cfg.model} on {device}")
            victim, model_name = load_victim(cfg.model, device)
        # a label the model does not have is refused before anything is written (issue 29)
        import numpy as np

        from robustlab.data.labels import check_model_classes

        # probed with a neutral text, not an example's (a resume must not re-ask a done one)
        try:
            probe = np.asarray(victim(["a"]))
        except InputError:
            if endpoint is not None:  # unreachable, refused, not JSON: one line, exit 2
                raise
            probe = None
        except Exception:  # noqa: BLE001  a model failing here fails its cells, which say why
            probe = None
        if probe is not None and probe.ndim == 2:
            check_model_classes([int(y) if isinstance(y, (int, np.integer)) else y
                                 for _, y in examples], int(probe.shape[-1]), where, model_name)
        kwargs = self.recipe_kwargs()
        src = kwargs.get("source")
        ctx.say(f"building {cfg.recipe} (neighbourhood source: "
                f"{getattr(src, 'name', src) or 'default'}, patch pairs: "
                f"{kwargs.get('pairs') or 'default'})")
        with mlm_device(device):
            attack = recipe_module(cfg.recipe).build(victim, **kwargs)
        sig = cfg.signature()
        cells = [Cell(f"ex={i:06d}", "attack", {"index": i, "text": str(t), "label": int(y)})
                 for i, (t, y) in enumerate(examples)]
        if ctx.executor == "sequential":
            fn = AttackCells(cfg.recipe, kwargs, None, sig, attack=attack, device=device)
        else:
            spec_victim: Any = None if self.victim is not None else cfg.model
            victim_for_workers: Any = spec_victim or victim
            if ctx.executor == "ray":  # nodes may share no files with this machine
                kwargs = portable_kwargs(kwargs)
                if spec_victim and Path(spec_victim).exists():
                    victim_for_workers = victim
            fn = AttackCells(cfg.recipe, kwargs, victim_for_workers, sig, device=device)
        ctx.say(f"attacking {len(cells)} examples -> {out}")
        return Plan(cells=cells, cell_fn=fn, name=f"{cfg.recipe} {model_name}",
                    pins={"data": (fingerprint(list(examples)), f"--dataset {where}")},
                    state={"attack": attack, "model_name": model_name, "endpoint": endpoint,
                           "estimate": estimated})

    def adopt(self, stored: dict[str, Any], *, trusted: bool = False) -> Attack | None:
        """A run an earlier version made with these options (its config was a flat dict of the
        recipe's options): this study, whose config then replaces the old one. The examples and
        files are still checked, by the data fingerprint and the input checksums."""
        if "recipe" not in stored or "dataset" in stored and isinstance(stored["dataset"], dict):
            return None
        kw = {k: v for k, v in self.recipe_kwargs().items() if k not in ("source", "pairs")}
        same = stored.get("recipe") == self.config.recipe and all(
            stored.get(k) == v for k, v in kw.items() if k in stored)
        n = self.config.num_examples
        return self if same and (n is None or stored.get("n") == n) else None

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]:
        from robustlab.outputs import write_json, write_jsonl

        cfg = self.config
        records = [c.result for c in store.cells("done") if c.result]
        records.sort(key=lambda r: r["index"])
        ppl = None
        if cfg.ppl_model:
            succ = [r for r in records if r["result_type"] == "successful"]
            ppl = {"original": None, "perturbed": None, "model": cfg.ppl_model, "n": len(succ)}
            if succ:  # one call: the causal LM is loaded once for both sides
                both = perplexities([r["original"] for r in succ] +
                                    [r["perturbed"] for r in succ], cfg.ppl_model)
                ppl["original"] = statistics.median(both[:len(succ)])
                ppl["perturbed"] = statistics.median(both[len(succ):])
        summary = summarise(records, cfg.recipe, ppl)
        files = []
        if cfg.log_to_csv:
            write_csv(out / cfg.log_to_csv, records)
            files.append(cfg.log_to_csv)
        summary.update(summary_base(self, store, report), files=files,
                       model=plan.state["model_name"],
                       source=plan.state["attack"].so_source.name)
        endpoint = plan.state.get("endpoint")
        if endpoint is not None:  # what asking cost, and why it stopped (docs/endpoints.md)
            from robustlab.endpoints.costs import costs

            summary["endpoint"] = {**costs(store, endpoint),
                                   "invalid": len(endpoint.invalid_texts),
                                   "estimate": plan.state.get("estimate"),
                                   "stopped": endpoint.stopped}
        write_jsonl(out / "results.jsonl", records)
        write_json(out / "summary.json", summary)
        return summary


def open_endpoint_victim(cfg: AttackConfig, examples: Sequence[tuple[str, int]],
                         kwargs: dict[str, Any], ctx: RunContext, out: Path
                         ) -> tuple[Any, tuple[Any, int]]:
    """The attack's victim over the endpoint ``cfg.model`` names (a TextAttack wrapper over an
    :class:`~robustlab.endpoints.EndpointModel` whose cache is this run's store), with the model
    and the query estimate over the examples not done yet, which is printed first and checked
    against ``--max-queries`` (refused in one line when larger: nothing asked or written)."""
    from robustlab.endpoints import LIMITS, open_endpoint, refuse_over_budget
    from robustlab.integrations.victims import textattack_wrapper
    from robustlab.runs.store import StoreCache, is_run_dir
    from robustlab.studies.second_order.patch_words import PatchSelector
    from robustlab.studies.second_order.queries import estimate
    from robustlab.textfmt import echo

    done: set[str] = set()
    if is_run_dir(out):  # a resume: finished examples ask nothing
        with RunStore(out, readonly=True) as store:
            done = {c.key for c in store.cells("done")}
    todo = [str(t) for i, (t, _) in enumerate(examples) if f"ex={i:06d}" not in done]
    src = kwargs.get("source")
    if isinstance(src, str) and src.startswith("table:"):  # c = its longest entry, if < κ
        from robustlab.studies.second_order.neighbourhood import load_table

        table = load_table(src[len("table:"):])
        kwargs = {**kwargs, "per_position": max((len(set(v)) for v in table.values()),
                                                default=0) or 1}
    est = estimate(cfg.recipe, kwargs, todo, PatchSelector(kwargs.get("pairs")))
    queries = est.queries + 1  # and the neutral probe of the model's classes
    echo(f"robustlab attack: {cfg.model}: at most {queries:,} endpoint queries for {len(todo)} "
         f"example(s) not done yet ({est.skipped} with no patch pair ask none) — an upper "
         f"bound: {est.how}")
    refuse_over_budget("attack", queries, "--query-budget, --beam-width or --num-examples")
    ctx.say(f"asking {cfg.model} (at most {LIMITS.max_queries or 'unlimited'} queries this run)")
    model = open_endpoint(cfg.model, cache=StoreCache(out), trusted=ctx.may_send_key(),
                          limits=LIMITS)
    # every text of a call in one predict_proba: its requests run --max-concurrency at a time
    return textattack_wrapper(model, batch_size=1 << 20), (model, queries)


def run_attack_study(*, recipe: str, model_wrapper: Any, model_name: str,
                     examples: Sequence[tuple[str, int]], out: str | Path,
                     dataset_name: str = "", recipe_kwargs: dict[str, Any] | None = None,
                     csv_name: str | None = None, ppl_model: str | None = None,
                     progress: bool = True, executor: str = "sequential", workers: int = 1,
                     ray_address: str | None = None, gpus_per_task: float = 0.0,
                     cpus_per_task: float = 1.0, log: Callable[[str], None] | None = None,
                     **_ignored: Any) -> dict[str, Any]:
    """Attack ``examples`` [(text, label)] with ``model_wrapper`` (the Python API): the
    :class:`Attack` study with these objects standing in for a model spec and a dataset. Recipe
    options that are objects (a source, a pairs dict) are used as they are and recorded by name.
    """
    from robustlab.runs.study import run_with

    kw = dict(recipe_kwargs or {})
    plain = {k: v for k, v in kw.items() if isinstance(v, (int, float, str, type(None)))
             and k in _CONFIG_KEYS}
    k = plain.pop("max_rounds", None) or plain.pop("max_distance", None) or \
        plain.pop("max_changes", None)
    if "walks" in plain:
        plain["beam_width"] = plain.pop("walks")
    config = AttackConfig(recipe=recipe, model=OBJECT + model_name,
                          dataset={"name": dataset_name or "python"},
                          num_examples=len(examples), max_distance=k, ppl_model=ppl_model,
                          log_to_csv=csv_name, **{n: v for n, v in plain.items()
                                                  if n in ("query_budget", "seed", "kappa",
                                                           "delta", "beam_width",
                                                           "model_batch_size")},
                          source=kw["source"] if isinstance(kw.get("source"), str) else None,
                          patch_table=kw["pairs"] if isinstance(kw.get("pairs"), str) else None,
                          lm_check=_lm_check_name(kw.get("lm_check")))
    overrides = {key: v for key, v in kw.items() if key not in plain and key != "max_rounds"
                 and key != "max_distance" and key != "max_changes" and key != "walks"
                 and not isinstance(v, (int, float, str, type(None)))}
    study = Attack(config, victim=model_wrapper, examples=list(examples), overrides=overrides)
    return run_with(study, out, executor=executor, workers=workers, ray_address=ray_address,
                    gpus_per_task=gpus_per_task, cpus_per_task=cpus_per_task,
                    progress=progress, log=log).summary


def _lm_check_name(check: Any) -> str | None:
    """The config's ``lm_check`` for a recipe option: a spec as it is, an object by its model."""
    if check is None or isinstance(check, str):
        return check
    return f"mlm:{getattr(getattr(check, 'lm', None), 'model_id', type(check).__name__)}"


#: recipe options that are AttackConfig fields (max_rounds/max_distance/max_changes/walks are
#: the recipes' names for max_distance and beam_width)
_CONFIG_KEYS = ("query_budget", "seed", "kappa", "delta", "beam_width", "model_batch_size",
                "max_rounds", "max_distance", "max_changes", "walks")


def from_stored(config: Any, trusted: bool) -> Attack:
    """The study of a configuration object from Python, or of a stored one (its
    :class:`~robustlab.studies.kind.StudyKind`)."""
    from robustlab.runs.study import study_of

    return study_of(Attack, AttackConfig, config, trusted, python_objects=True)
