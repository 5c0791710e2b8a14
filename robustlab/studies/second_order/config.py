"""The configurations of the second-order attack study and the bias study (paper 002), and the
options derived from them.

Each config is the run's identity (stored as :meth:`to_dict`, rebuilt by ``robustlab resume``
with :meth:`from_dict`); its fields hold every default, from which :meth:`add_arguments` and
:meth:`from_args` derive the command line, and :meth:`validate` is the one check of the options.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from robustlab.errors import InputError
from robustlab.options import (
    SEED_LIMIT,
    add_seed_option,
)
from robustlab.outputs import RUN_FILE_NAMES
from robustlab.resources import check_checkpoint
from robustlab.runs import fields as field_options
from robustlab.runs.fields import option
from robustlab.runs.inputs import (  # noqa: F401  (OBJECT, load_options: the slice's names)
    OBJECT,
    canonical_source,
    check_dataset,
    check_source,
    check_trained_model,
    dataset_argv,
    dataset_file_field,
    dataset_from_args,
    load_options,
    local_path,
    trained_model_field,
)
from robustlab.runs.study import StudyConfig
from robustlab.studies.second_order.pairs import resolve_pairs

RECIPE_NAMES = ("so-beam", "so-enum", "so-random")
NAMED_TABLES = ("wordnet", "textattack-counterfitted")
NAMED_PAIRS = ("builtin", "checklist", "all")


ATTACK_MODEL_HELP = ("a saved robustlab model directory or a HF sequence-classification "
                     "checkpoint (exactly one; a family name would be untrained)")
ATTACK_LM_CHECK_HELP = ("masked LM of the authors' check on the patch words (PLL of the swapped "
                        "sentence >= original - 1.5, sentences <= 20 words): auto (the "
                        "neighbourhood's masked LM; none for a lexical one), none, or a path")


def _add_log_to_csv(g: Any) -> None:
    """``--checkpoint-interval`` (TextAttack's, accepted and void: the store checkpoints every
    example) and ``--log-to-csv``, TextAttack's two output options."""
    g.add_argument("--checkpoint-interval", type=int, default=None,
                   help="accepted for TextAttack compatibility: the run store checkpoints "
                   "every example, so any value behaves like 1")
    g.add_argument("--log-to-csv", nargs="?", const="attack_results.csv", default=None,
                   metavar="NAME", help="also write a TextAttack-style CSV into --out")


def _add_source(g: Any) -> None:
    """The neighbourhood source: ``--mlm`` or ``--source``, not both."""
    src = g.add_mutually_exclusive_group()
    src.add_argument("--mlm", default=None, help="masked LM (directory or hub id) as source")
    src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")


@dataclass(frozen=True)
class AttackConfig(StudyConfig):
    """A second-order attack over the first ``num_examples`` of a dataset (one cell each)."""

    KIND: ClassVar[str] = "attack"

    # the fields' order is the signature's; ``order`` places an option in --help
    recipe: str = field(metadata=option(
        "--recipe", required=True, default=None, help=f"one of {', '.join(RECIPE_NAMES)}",
        always=True))
    model: str = trained_model_field(ATTACK_MODEL_HELP)
    dataset: dict[str, Any] = dataset_file_field()
    num_examples: int | None = field(default=None, metadata=option(
        "--num-examples", "-n", type=int, help="attack the first N"))
    query_budget: int | None = field(default=None, metadata=option(
        "--query-budget", type=int,
        help="maximum candidates x̃ per example (each costs two model inputs)"))
    seed: int = field(default=0, metadata=option(
        add=lambda g: add_seed_option(g, default=0, help="seed of the random baseline (default 0)"),
        show=lambda v, _: ["--seed", str(v)]))
    source: str | None = field(default=None, metadata={"flag": "--source/--mlm", **option(
        "--source", add=_add_source, read=lambda a: canonical_source(
            a.source or (f"mlm:{a.mlm}" if a.mlm else None)), order=7.5)})
    patch_table: str | None = field(default=None, metadata=option(
        "--patch-table", help="synonym pairs: a JSON neighbour table, or 'wordnet'",
        parse=lambda t: t if t in NAMED_TABLES else local_path(t), order=7.6))
    kappa: int = field(default=20, metadata=option("--kappa", type=int, order=7.8))
    delta: float = field(default=3.0, metadata=option("--delta", type=float, order=7.8))
    beam_width: int = field(default=20, metadata=option("--beam-width", type=int, order=7.8))
    max_distance: int | None = field(default=None, metadata=option(
        "--max-distance", "-k", type=int, order=7.8,
        help="rounds/ℓ0 radius (default 6 for so-beam/so-random, 2 for so-enum)"))
    #: sentences per call to the model wrapper: how, not what (not in the signature)
    model_batch_size: int = field(default=512, metadata={"sig": None, **option(
        "--model-batch-size", type=int, order=7.8,
        help="sentences per call to the model wrapper (it batches further)")})
    ppl_model: str | None = field(default=None, metadata=option(
        "--ppl-model", help="causal LM for median perplexity (gpt2)", parse=local_path,
        order=7.8))
    #: the name of a TextAttack-style CSV written into the run directory (an output, not a result)
    log_to_csv: str | None = field(default=None, metadata={"sig": None, **option(
        "--log-to-csv", add=_add_log_to_csv, order=7.4)})
    #: added after runs were stored (None: what they did): the masked LM of the authors'
    #: language-model check on the patch words (``mlm:PATH``)
    lm_check: str | None = field(default=None, metadata={"added": True, "flag": "--lm-check",
                                                         **option(
        "--lm-check", default="auto", metavar="MLM", help=ATTACK_LM_CHECK_HELP, order=7.7,
        read=lambda a: resolve_lm_check_option(a.lm_check, canonical_source(
            a.source or (f"mlm:{a.mlm}" if a.mlm else None))),
        show=lambda v, _: ["--lm-check", v.removeprefix("mlm:") if v else "none"], always=True)})

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
        """The study's options, from the fields (:mod:`robustlab.runs.fields`)."""
        field_options.add_arguments(cls, p)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> AttackConfig:
        return field_options.from_args(cls, args)

    def argv(self) -> list[str]:
        return field_options.argv(self, ["attack"])


def _add_bias_source(g: Any) -> None:
    """The neighbourhood source: ``--mlm`` or ``--source``, not both (neither: found)."""
    src = g.add_mutually_exclusive_group()
    src.add_argument("--mlm", default=None,
                     help="masked LM directory or hub id (default: $ROBUSTLAB_MLM or the "
                     "shared minilm-mlm when found; else WordNet, said on stderr)")
    src.add_argument("--source", default=None, help="wordnet | table:FILE | mlm:PATH")


BIAS_MODEL_HELP = ("a saved robustlab model directory or a HF sequence-classification "
                   "checkpoint (exactly one)")
BLACKLIST_HELP = ("words never put into a neighbourhood besides the pairs' own: a file (one word "
                  "per line), 'gendered' or 'pairs' (default: robustlab's gendered list when a "
                  "pair is gendered, as the paper's footnote 7)")
BIAS_LM_CHECK_HELP = ("masked LM of the authors' check on X_test (PLL of the swapped sentence >= "
                      "original - 1.5, sentences <= 20 words): auto (the neighbourhood's masked "
                      "LM; none for a lexical one), none, or a path")


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

    # the fields' order is the signature's; ``order``/``argv_order`` place an option in --help
    # and in argv(); ``pairs``, ``source``, ``blacklist``, ``lm_check`` and where each came from
    # are resolved together from their options (derive_options)
    model: str = trained_model_field(BIAS_MODEL_HELP)
    dataset: dict[str, Any] = dataset_file_field()
    pairs: tuple[tuple[str, str], ...] = field(metadata=option(
        "--pairs", default="builtin", help="builtin | checklist | all | FILE (one 'p1 p2' per line)",
        show=lambda v, c: ["--pairs", c.pairs_from], always=True))
    num_examples: int | None = field(default=None, metadata=option(
        "--num-examples", "-n", type=int, order=1.5, argv_order=4.5))
    ks: tuple[int, ...] = field(default=(0, 1, 2, 3), metadata=option(
        "--k", default="0,1,2,3", help="distances, e.g. 0,1,2,3", parse=lambda v: _ks(v),
        show=lambda v, _: ["--k", ",".join(map(str, v))], always=True))
    source: str | None = field(default=None, metadata=option("--source", add=_add_bias_source))
    kappa: int = field(default=20, metadata=option("--kappa", type=int))
    delta: float = field(default=3.0, metadata=option("--delta", type=float))
    budget: int = field(default=2000, metadata=option(
        "--budget", type=int,
        help="at most this many sentences per (pair, k); larger levels are sampled"))
    parents: int = field(default=200, metadata=option(
        "--parents", type=int,
        help="at most this many sentences of level k-1 are expanded into level k"))
    start: str = field(default="test", metadata=option(
        "--start", choices=["test", "filter"],
        help="build neighbourhoods from X_test or from X_filter (|F_soft| < 0.005)"))
    seed: int = field(default=0, metadata=option(
        add=lambda g: add_seed_option(g, default=0,
                                      help="seed of the neighbourhood sampling (default 0)"),
        show=lambda v, _: ["--seed", str(v)]))
    #: where the pairs came from (builtin, checklist, all or the file), for people
    pairs_from: str = field(default="builtin", metadata={"sig": None})
    # ---- added after runs were stored: None is what those runs did (runs/study.py) ----
    #: words blacklisted from neighbourhoods besides the pairs' own, resolved (``--blacklist``:
    #: the gendered list when the pairs are gendered); None: the pairs' words only (as before)
    blacklist: tuple[str, ...] | None = field(
        default=None, metadata={"added": True, "digest": True, "flag": "--blacklist", **option(
            "--blacklist", metavar="FILE", help=BLACKLIST_HELP, order=5.1, always=True,
            show=lambda v, c: ["--blacklist", c.blacklist_from or "pairs"])})
    #: where the blacklist came from (gendered, pairs or the file), for people
    blacklist_from: str | None = field(default=None, metadata={"added": True, "sig": None})
    #: the masked LM of the authors' language-model check on X_test (``mlm:PATH``); None: none
    lm_check: str | None = field(default=None, metadata={"added": True, "flag": "--lm-check",
                                                         **option(
        "--lm-check", default="auto", metavar="MLM", help=BIAS_LM_CHECK_HELP, order=5.2,
        show=lambda v, _: ["--lm-check", v.removeprefix("mlm:") if v else "none"], always=True)})
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
        """The study's options, from the fields (:mod:`robustlab.runs.fields`)."""
        field_options.add_arguments(cls, p)

    @classmethod
    def derive_options(cls, args: argparse.Namespace, **fixed: Any) -> dict[str, Any]:
        """The fields resolved together from ``--pairs``, ``--mlm``/``--source``,
        ``--blacklist`` and ``--lm-check`` (each also records where it came from)."""
        from robustlab.studies.second_order.gendered import resolve_blacklist

        source, source_from = resolve_source_option(args)
        pairs = tuple((a, b) for a, b in resolve_pairs(args.pairs))
        blacklist, blacklist_from = resolve_blacklist(args.blacklist, pairs)
        return {"source": source, "source_from": source_from, "pairs": pairs,
                "pairs_from": args.pairs if args.pairs in NAMED_PAIRS else
                local_path(args.pairs) or "",
                "blacklist": blacklist, "blacklist_from": blacklist_from,
                "lm_check": resolve_lm_check_option(args.lm_check, source)}

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> BiasConfig:
        return field_options.from_args(cls, args)

    def argv(self) -> list[str]:
        return field_options.argv(self, ["bias"])


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
