"""The configurations of the second-order attack study and the bias study (paper 002), and the
options derived from them.

Each config is the run's identity (stored as :meth:`to_dict`, rebuilt by ``robustlab resume``
with :meth:`from_dict`); its fields hold every default, from which :meth:`add_arguments` and
:meth:`from_args` derive the command line, and :meth:`validate` is the one check of the options.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar

from robustlab.errors import InputError
from robustlab.models.registry import canonical_model_spec, check_model_spec
from robustlab.options import (
    SEED_LIMIT,
    add_dataset_options,
    add_model_option,
    add_seed_option,
    column,
)
from robustlab.outputs import RUN_FILE_NAMES
from robustlab.resources import check_checkpoint
from robustlab.runs.study import StudyConfig
from robustlab.studies.second_order.pairs import resolve_pairs

RECIPE_NAMES = ("so-beam", "so-enum", "so-random")
NAMED_TABLES = ("wordnet", "textattack-counterfitted")
NAMED_PAIRS = ("builtin", "checklist", "all")
#: file options of a dataset spec, with their JSON types (a stored run is untrusted)
FILE_OPTIONS: dict[str, tuple[type, ...]] = {
    "format": (str,), "encoding": (str,), "header": (bool,), "text_column": (str, int),
    "label_column": (str, int), "split": (str,)}
#: prefix of a model that was given as a Python object (no spec to rebuild it from)
OBJECT = "object:"


def dataset_from_args(args: argparse.Namespace, format_dest: str = "dataset_format"
                      ) -> dict[str, Any]:
    """``--dataset NAME|FILE`` and its file options as a stored spec: ``{"path": ABS}`` or
    ``{"name": NAME}`` plus the options given."""
    from robustlab.data.datasets import resolve_dataset

    spec = resolve_dataset(args.dataset)
    for key, dest in (("format", format_dest), ("encoding", "encoding"), ("header", "header"),
                      ("text_column", "text_column"), ("label_column", "label_column"),
                      ("split", "split")):
        value = getattr(args, dest, None)
        if value is not None:
            spec[key] = column(value) if key.endswith("_column") else value
    return spec


def check_dataset(spec: Any) -> None:
    """A dataset spec: a name or an existing file, and known file options of their types."""
    if not isinstance(spec, dict) or not (spec.get("name") or spec.get("path")):
        raise InputError("--dataset: give a data file or a dataset name")
    for key, value in spec.items():
        if key in ("name", "path"):
            if not isinstance(value, str):
                raise InputError(f"--dataset: {key} must be a string")
            continue
        types_ = FILE_OPTIONS.get(key)
        if types_ is None:
            raise InputError(f"--dataset: unknown dataset option {key!r}")
        if not isinstance(value, types_) or (isinstance(value, bool) and bool not in types_):
            raise InputError(f"--dataset: {key} must be {' or '.join(t.__name__ for t in types_)}"
                             f", got {value!r:.60}")
    if spec.get("path") and not Path(spec["path"]).is_file():
        raise InputError(f"--dataset {spec['path']}: no such file")


def dataset_argv(spec: dict[str, Any]) -> list[str]:
    argv = ["--dataset", str(spec.get("path") or spec.get("name"))]
    for key, flag in (("format", "--format"), ("encoding", "--encoding"),
                      ("text_column", "--text-column"), ("label_column", "--label-column"),
                      ("split", "--split")):
        if key in spec:
            argv += [flag, str(spec[key])]
    if "header" in spec:
        argv.append("--header" if spec["header"] else "--no-header")
    return argv


def load_options(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec's file options as :func:`robustlab.data.datasets.load_examples` arguments."""
    return {("fmt" if k == "format" else k): v for k, v in spec.items()
            if k not in ("name", "path")}


def _local(value: str | None) -> str | None:
    """A file or directory option's canonical form: absolute when it names a local path."""
    if not value:
        return value
    p = Path(value).expanduser()
    return str(p.resolve()) if p.exists() or value.startswith((".", "~", "/")) else value


def canonical_source(spec: str | None) -> str | None:
    """``--source``/``--mlm`` in stored form: ``table:ABS`` / ``mlm:ABS`` for local paths."""
    if not spec:
        return None
    for prefix in ("table:", "mlm:"):
        if spec.startswith(prefix):
            return prefix + (_local(spec[len(prefix):]) or "")
    return spec


def check_source(spec: str | None, option: str = "--source") -> None:
    if spec is None or spec == "wordnet":
        return
    if spec.startswith("table:"):
        if not Path(spec[6:]).is_file():
            raise InputError(f"{option} {spec}: no such table file")
        return
    if spec.startswith("mlm:"):  # a masked LM that cannot load stops here, not in a cell
        check_checkpoint(spec[4:], option)
        return
    raise InputError(f"{option} {spec!r}: expected wordnet, table:FILE or mlm:PATH_OR_HUB_ID")


def check_trained_model(spec: str, *, trusted: bool) -> None:
    """An attack, a bias study or eval needs a trained model: a saved directory or a checkpoint,
    never a family name (it would be untrained) or a path that does not exist."""
    from robustlab.models.registry import (
        available_models,
        family_shadows_directory,
        parse_model_spec,
    )

    if spec.startswith(OBJECT):  # a model object given from Python: the caller's to check
        return
    local = Path(spec).expanduser()
    if not spec.startswith("hf:") and (os.sep in spec or "/" in spec or
                                       spec.startswith((".", "~"))) and not local.exists():
        # a path, never a hub id (hub ids go as hf:ID): a typo is not a download
        raise InputError(f"--model {spec}: no such model directory (a hub checkpoint is "
                         "named hf:ID)")
    shadowed = family_shadows_directory(spec)
    if shadowed:
        raise InputError(f"--model {spec}: is both a model family (which would be untrained) "
                         f"and the directory {shadowed}; pass {shadowed} to use the saved model")
    check_model_spec(spec, user_class=trusted)
    name, _ = parse_model_spec(spec)
    if name in available_models():
        raise InputError(f"--model {spec}: an untrained {name} model predicts at random, so "
                         f"it tests nothing; train it first (robustlab train --model {spec} "
                         "--dataset … --out DIR) and pass the saved directory")


@dataclass(frozen=True)
class AttackConfig(StudyConfig):
    """A second-order attack over the first ``num_examples`` of a dataset (one cell each)."""

    KIND: ClassVar[str] = "attack"

    recipe: str
    model: str
    dataset: dict[str, Any]
    num_examples: int | None = None
    query_budget: int | None = None
    seed: int = 0
    source: str | None = field(default=None, metadata={"flag": "--source/--mlm"})
    patch_table: str | None = None
    kappa: int = 20
    delta: float = 3.0
    beam_width: int = 20
    max_distance: int | None = None
    #: sentences per call to the model wrapper: how, not what (not in the signature)
    model_batch_size: int = field(default=512, metadata={"sig": None})
    ppl_model: str | None = None
    #: the name of a TextAttack-style CSV written into the run directory (an output, not a result)
    log_to_csv: str | None = field(default=None, metadata={"sig": None})
    #: added after runs were stored (None: what they did): the masked LM of the authors'
    #: language-model check on the patch words (``mlm:PATH``)
    lm_check: str | None = field(default=None, metadata={"added": True, "flag": "--lm-check"})

    def validate(self, *, trusted: bool = False) -> None:
        if self.recipe not in RECIPE_NAMES:
            raise InputError(f"unknown recipe {self.recipe!r}; choose from "
                             f"{', '.join(RECIPE_NAMES)}")
        check_dataset(self.dataset)
        for flag, v, low in (("--num-examples", self.num_examples, 1),
                             ("--query-budget", self.query_budget, 1), ("--kappa", self.kappa, 1),
                             ("--beam-width", self.beam_width, 1),
                             ("--max-distance", self.max_distance, 1),
                             ("--model-batch-size", self.model_batch_size, 1),
                             ("--delta", self.delta, 0)):
            if v is not None and not v >= low:
                raise InputError(f"{flag} must be >= {low}, got {v}")
        if self.recipe == "so-enum" and (self.max_distance or 2) > 2:
            raise InputError("--max-distance for so-enum must be <= 2 (use so-beam for larger k)")
        if not 0 <= self.seed < SEED_LIMIT:
            raise InputError(f"--seed {self.seed} is out of range: 0 <= seed < 2**32")
        if not self.model.startswith(OBJECT):  # from Python, a source may be an object's name
            check_source(self.source)
        if self.patch_table and self.patch_table not in NAMED_TABLES and \
                not Path(self.patch_table).is_file():
            raise InputError(f"--patch-table {self.patch_table}: no such file (a JSON neighbour "
                             f"table, or one of {', '.join(NAMED_TABLES)})")
        check_checkpoint(self.ppl_model, "--ppl-model")  # used after the attack: checked first
        if self.lm_check is not None and not self.model.startswith(OBJECT):
            if not self.lm_check.startswith("mlm:"):
                raise InputError(f"--lm-check {self.lm_check!r}: expected a masked LM "
                                 "(mlm:PATH_OR_HUB_ID), auto or none")
            check_source(self.lm_check, "--lm-check")
        if self.log_to_csv is not None and (not self.log_to_csv or Path(self.log_to_csv).name
                                            != self.log_to_csv or self.log_to_csv[0] == "."):
            raise InputError(f"--log-to-csv {self.log_to_csv!r}: a file name inside the run "
                             "directory (no directories)")
        if self.log_to_csv in RUN_FILE_NAMES:
            raise InputError(f"--log-to-csv {self.log_to_csv!r}: is one of the run's own files; "
                             "writing it would destroy the run. Choose another name")
        check_trained_model(self.model, trusted=trusted)

    def recipe_kwargs(self) -> dict[str, Any]:
        """The keyword arguments of the recipe's ``build()``."""
        kw: dict[str, Any] = {"source": self.source, "pairs": self.patch_table,
                              "kappa": self.kappa, "delta": self.delta,
                              "model_batch_size": self.model_batch_size}
        if self.query_budget is not None:
            kw["query_budget"] = self.query_budget
        if self.lm_check is not None:
            kw["lm_check"] = self.lm_check
        k = self.max_distance
        if self.recipe == "so-beam":
            kw.update(beam_width=self.beam_width, max_rounds=k or 6)
        elif self.recipe == "so-enum":
            kw.update(max_distance=k or 2)
        else:
            kw.update(max_changes=k or 6, walks=self.beam_width, seed=self.seed)
        return kw

    def describe(self) -> str:
        return f"{self.recipe} {Path(self.model).name if '/' in self.model else self.model}"

    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> None:
        d = {f.name: f.default for f in fields(cls)}
        p.add_argument("--recipe", required=True, help=f"one of {', '.join(RECIPE_NAMES)}")
        add_model_option(p, multi=False, required=True,
                         help="a saved robustlab model directory or a HF sequence-classification "
                         "checkpoint (exactly one; a family name would be untrained)")
        add_dataset_options(p, required=True, pairs=False, format_dest="dataset_format",
                            help="a file (label-text, TSV, CSV, JSONL) or a dataset name (demo, "
                            "sst2, TextAttack's NAME^CONFIG^SPLIT, …); split --split (default "
                            "test)")
        p.add_argument("--num-examples", "-n", type=int, default=None, help="attack the first N")
        p.add_argument("--query-budget", type=int, default=None,
                       help="maximum candidates x̃ per example (each costs two model inputs)")
        add_seed_option(p, default=d["seed"], help="seed of the random baseline (default 0)")
        p.add_argument("--checkpoint-interval", type=int, default=None,
                       help="accepted for TextAttack compatibility: the run store checkpoints "
                       "every example, so any value behaves like 1")
        p.add_argument("--log-to-csv", nargs="?", const="attack_results.csv", default=None,
                       metavar="NAME", help="also write a TextAttack-style CSV into --out")
        src = p.add_mutually_exclusive_group()
        src.add_argument("--mlm", default=None, help="masked LM (directory or hub id) as source")
        src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")
        p.add_argument("--patch-table", default=None,
                       help="synonym pairs: a JSON neighbour table, or 'wordnet'")
        p.add_argument("--lm-check", default="auto", metavar="MLM",
                       help="masked LM of the authors' check on the patch words (PLL of the "
                       "swapped sentence >= original - 1.5, sentences <= 20 words): auto (the "
                       "neighbourhood's masked LM; none for a lexical one), none, or a path")
        p.add_argument("--kappa", type=int, default=d["kappa"])
        p.add_argument("--delta", type=float, default=d["delta"])
        p.add_argument("--beam-width", type=int, default=d["beam_width"])
        p.add_argument("--max-distance", "-k", type=int, default=None,
                       help="rounds/ℓ0 radius (default 6 for so-beam/so-random, 2 for so-enum)")
        p.add_argument("--model-batch-size", type=int, default=d["model_batch_size"],
                       help="sentences per call to the model wrapper (it batches further)")
        p.add_argument("--ppl-model", default=None,
                       help="causal LM for median perplexity (gpt2)")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AttackConfig:
        source = args.source or (f"mlm:{args.mlm}" if args.mlm else None)
        table = args.patch_table
        return cls(recipe=args.recipe, model=canonical_model_spec(args.model),
                   dataset=dataset_from_args(args), num_examples=args.num_examples,
                   query_budget=args.query_budget, seed=args.seed,
                   source=canonical_source(source),
                   patch_table=table if table in NAMED_TABLES else _local(table),
                   kappa=args.kappa, delta=args.delta, beam_width=args.beam_width,
                   max_distance=args.max_distance, model_batch_size=args.model_batch_size,
                   ppl_model=_local(args.ppl_model), log_to_csv=args.log_to_csv,
                   lm_check=resolve_lm_check_option(args.lm_check, canonical_source(source)))

    def argv(self) -> list[str]:
        argv = ["attack", "--recipe", self.recipe, "--model", self.model,
                *dataset_argv(self.dataset)]
        for flag, v, default in (("--num-examples", self.num_examples, None),
                                 ("--query-budget", self.query_budget, None),
                                 ("--seed", self.seed, 0), ("--source", self.source, None),
                                 ("--patch-table", self.patch_table, None),
                                 ("--kappa", self.kappa, 20), ("--delta", self.delta, 3.0),
                                 ("--beam-width", self.beam_width, 20),
                                 ("--max-distance", self.max_distance, None),
                                 ("--model-batch-size", self.model_batch_size, 512),
                                 ("--ppl-model", self.ppl_model, None),
                                 ("--log-to-csv", self.log_to_csv, None)):
            if v != default:
                argv += [flag, format(v, "g") if isinstance(v, float) else str(v)]
        argv += ["--lm-check", self.lm_check.removeprefix("mlm:") if self.lm_check else "none"]
        return argv


def _ks(values: Any) -> tuple[int, ...]:
    try:
        ks = sorted({int(x) for x in str(values).split(",") if x.strip()})
    except ValueError:
        raise InputError(f"--k {values!r}: expected comma-separated integers like 0,1,2,3") \
            from None
    return tuple(ks)


@dataclass(frozen=True)
class BiasConfig(StudyConfig):
    """Counterfactual token bias B(p, k) over neighbourhoods of a test set (one cell per pair
    and distance). ``pairs`` are stored resolved (a pairs file's content, not its path)."""

    KIND: ClassVar[str] = "bias"
    #: the largest distance k: Neighbor_k grows exponentially (the paper stops at 3)
    MAX_K: ClassVar[int] = 6

    model: str
    dataset: dict[str, Any]
    pairs: tuple[tuple[str, str], ...]
    num_examples: int | None = None
    ks: tuple[int, ...] = (0, 1, 2, 3)
    source: str | None = None
    kappa: int = 20
    delta: float = 3.0
    budget: int = 2000
    parents: int = 200
    start: str = "test"
    seed: int = 0
    #: where the pairs came from (builtin, checklist, all or the file), for people
    pairs_from: str = field(default="builtin", metadata={"sig": None})
    # ---- added after runs were stored: None is what those runs did (runs/study.py) ----
    #: words blacklisted from neighbourhoods besides the pairs' own, resolved (``--blacklist``:
    #: the gendered list when the pairs are gendered); None: the pairs' words only (as before)
    blacklist: tuple[str, ...] | None = field(
        default=None, metadata={"added": True, "digest": True, "flag": "--blacklist"})
    #: where the blacklist came from (gendered, pairs or the file), for people
    blacklist_from: str | None = field(default=None, metadata={"added": True, "sig": None})
    #: the masked LM of the authors' language-model check on X_test (``mlm:PATH``); None: none
    lm_check: str | None = field(default=None, metadata={"added": True, "flag": "--lm-check"})
    #: how the neighbourhood source was chosen when no --source/--mlm was given, for people
    source_from: str | None = field(default=None, metadata={"added": True, "sig": None})

    def validate(self, *, trusted: bool = False) -> None:
        check_dataset(self.dataset)
        if not self.pairs:
            raise InputError("--pairs: no word pairs")
        for pair in self.pairs:
            if len(pair) != 2 or not all(isinstance(w, str) and w.strip() and " " not in w.strip()
                                         for w in pair) or pair[0] == pair[1]:
                raise InputError(f"--pairs: {list(pair)!r} is not a pair of two different words")
        if not self.ks or self.ks[0] < 0 or list(self.ks) != sorted(set(self.ks)):
            raise InputError(f"--k: distances must be distinct integers >= 0, got "
                             f"{list(self.ks)}")
        if self.ks[-1] > self.MAX_K:
            raise InputError(f"--k {self.ks[-1]}: distances above {self.MAX_K} are not "
                             "computable (Neighbor_k grows exponentially; the paper uses 0..3)")
        for flag, v in (("--num-examples", self.num_examples), ("--kappa", self.kappa),
                        ("--budget", self.budget), ("--parents", self.parents)):
            if v is not None and v < 1:
                raise InputError(f"{flag} must be >= 1, got {v}")
        if not (self.delta >= 0 and math.isfinite(self.delta)):  # inf: nothing is ever biased
            raise InputError(f"--delta must be >= 0 and finite, got {self.delta}")
        if self.start not in ("test", "filter"):
            raise InputError(f"--start must be test or filter, got {self.start!r}")
        if not 0 <= self.seed < SEED_LIMIT:
            raise InputError(f"--seed {self.seed} is out of range: 0 <= seed < 2**32")
        if not self.model.startswith(OBJECT):  # from Python, a source may be an object's name
            check_source(self.source)
            if self.lm_check is not None:
                if not self.lm_check.startswith("mlm:"):
                    raise InputError(f"--lm-check {self.lm_check!r}: expected a masked LM "
                                     "(mlm:PATH_OR_HUB_ID), auto or none")
                check_source(self.lm_check, "--lm-check")
        if self.blacklist is not None and not all(isinstance(w, str) and w and " " not in w
                                                  for w in self.blacklist):
            raise InputError("--blacklist: every entry must be one word")
        check_trained_model(self.model, trusted=trusted)

    def describe(self) -> str:
        return f"bias {Path(self.model).name if '/' in self.model else self.model}"

    @classmethod
    def add_arguments(cls, p: argparse.ArgumentParser) -> None:
        d = {f.name: f.default for f in fields(cls)}
        add_model_option(p, multi=False, required=True,
                         help="a saved robustlab model directory or a HF sequence-classification "
                         "checkpoint (exactly one)")
        add_dataset_options(p, required=True, pairs=False, format_dest="dataset_format",
                            help="a file (label-text, TSV, CSV, JSONL) or a dataset name (demo, "
                            "sst2, TextAttack's NAME^CONFIG^SPLIT, …); split --split (default "
                            "test)")
        p.add_argument("--num-examples", "-n", type=int, default=None)
        p.add_argument("--pairs", default=d["pairs_from"],
                       help="builtin | checklist | all | FILE (one 'p1 p2' per line)")
        p.add_argument("--k", dest="ks", default=",".join(map(str, d["ks"])),
                       help="distances, e.g. 0,1,2,3")
        src = p.add_mutually_exclusive_group()
        src.add_argument("--mlm", default=None,
                         help="masked LM directory or hub id (default: $ROBUSTLAB_MLM or the "
                         "shared minilm-mlm when found; else WordNet, said on stderr)")
        src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")
        p.add_argument("--blacklist", default=None, metavar="FILE",
                       help="words never put into a neighbourhood besides the pairs' own: a "
                       "file (one word per line), 'gendered' or 'pairs' (default: robustlab's "
                       "gendered list when a pair is gendered, as the paper's footnote 7)")
        p.add_argument("--lm-check", default="auto", metavar="MLM",
                       help="masked LM of the authors' check on X_test (PLL of the swapped "
                       "sentence >= original - 1.5, sentences <= 20 words): auto (the "
                       "neighbourhood's masked LM; none for a lexical one), none, or a path")
        p.add_argument("--kappa", type=int, default=d["kappa"])
        p.add_argument("--delta", type=float, default=d["delta"])
        p.add_argument("--budget", type=int, default=d["budget"],
                       help="at most this many sentences per (pair, k); larger levels are "
                       "sampled")
        p.add_argument("--parents", type=int, default=d["parents"],
                       help="at most this many sentences of level k-1 are expanded into level k")
        p.add_argument("--start", choices=["test", "filter"], default=d["start"],
                       help="build neighbourhoods from X_test or from X_filter (|F_soft| < "
                       "0.005)")
        add_seed_option(p, default=d["seed"],
                        help="seed of the neighbourhood sampling (default 0)")

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BiasConfig:
        from robustlab.studies.second_order.gendered import resolve_blacklist

        source, source_from = resolve_source_option(args)
        pairs_from = args.pairs if args.pairs in NAMED_PAIRS else _local(args.pairs) or ""
        pairs = tuple((a, b) for a, b in resolve_pairs(args.pairs))
        blacklist, blacklist_from = resolve_blacklist(args.blacklist, pairs)
        return cls(model=canonical_model_spec(args.model), dataset=dataset_from_args(args),
                   pairs=pairs, num_examples=args.num_examples, ks=_ks(args.ks),
                   source=source, kappa=args.kappa, delta=args.delta,
                   budget=args.budget, parents=args.parents, start=args.start, seed=args.seed,
                   pairs_from=pairs_from, blacklist=blacklist, blacklist_from=blacklist_from,
                   lm_check=resolve_lm_check_option(args.lm_check, source),
                   source_from=source_from)

    def argv(self) -> list[str]:
        argv = ["bias", "--model", self.model, *dataset_argv(self.dataset),
                "--pairs", self.pairs_from, "--k", ",".join(map(str, self.ks))]
        for flag, v, default in (("--num-examples", self.num_examples, None),
                                 ("--source", self.source, None), ("--kappa", self.kappa, 20),
                                 ("--delta", self.delta, 3.0), ("--budget", self.budget, 2000),
                                 ("--parents", self.parents, 200),
                                 ("--start", self.start, "test"), ("--seed", self.seed, 0)):
            if v != default:
                argv += [flag, format(v, "g") if isinstance(v, float) else str(v)]
        argv += ["--blacklist", self.blacklist_from or "pairs",
                 "--lm-check", self.lm_check.removeprefix("mlm:") if self.lm_check else "none"]
        return argv


def resolve_source_option(args: argparse.Namespace) -> tuple[str, str]:
    """``--source``/``--mlm`` in stored form and where it came from; neither given: the masked
    LM found offline, else WordNet as a named fallback (neighbourhood.default_source)."""
    from robustlab.studies.second_order.neighbourhood import default_source

    if args.source:
        return canonical_source(args.source) or "", "--source"
    if args.mlm:
        return canonical_source(f"mlm:{args.mlm}") or "", "--mlm"
    spec, origin = default_source()
    return canonical_source(spec) or spec, origin


def resolve_lm_check_option(value: str | None, source: str | None) -> str | None:
    """``--lm-check auto|none|MLM`` in stored form (``mlm:ABS`` or None)."""
    from robustlab.studies.second_order.neighbourhood import default_lm_check

    if value in (None, "auto"):
        return canonical_source(default_lm_check(source)[0])
    if value == "none":
        return None
    return canonical_source(value if value.startswith("mlm:") else f"mlm:{value}")
