"""Cross-domain consistency studies (paper 004): MT systems scored with sacreBLEU, precomputed
score tables, and (in :mod:`robustlab.studies.cross_domain.clf`) classifiers across domains.

The flow follows sacreBLEU's "statistics first, resampling second" habit: every segment (or
domain) is scored once; the consistency tables (mean, variance, CoV, γ, leave-one-domain-out,
bagging and design bagging) are then recomputed from the stored score matrix, vectorised over
all systems at once, with the *same* bags for every system so systems are compared on paired
samples. Output: one run directory per docs/run-directory.md, kind ``cross-domain``, one cell
per system (key ``system=<name>``).
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from robustlab.data.files import regular_input
from robustlab.errors import InputError
from robustlab.metrics import consistency as cons
from robustlab.metrics.mt import MT_METRICS
from robustlab.options import absolute
from robustlab.runs import fields as field_options
from robustlab.runs.cells import CellOutput
from robustlab.runs.executor import RunReport
from robustlab.runs.fields import cell_parts, in_cell, option
from robustlab.runs.store import Cell, RunStore
from robustlab.runs.study import Plan, RunContext, StudyConfig
from robustlab.signature import make_signature
from robustlab.studies.cross_domain.consistency import (
    ConsistencyConfig,
    check_domains,
    common_sigma,
    consistency_tables,
)
from robustlab.studies.cross_domain.report import rank_and_agree, write_outputs

KIND = "cross-domain"
# ---- MT ------------------------------------------------------------------------------------------


class CrossDomainConfig(StudyConfig):
    """Base of the three cross-domain configurations: their stored dict is flat, as it always
    was (``task`` first, the consistency options beside the task's own)."""

    KIND: ClassVar[str] = KIND
    TASK: ClassVar[str] = ""

    def to_dict(self) -> dict[str, Any]:
        d = {"task": self.TASK, **super().to_dict()}
        cons_ = d.pop("consistency")
        if cons_.get("eps_grid") == "fixed":  # runs made before the option had no key
            del cons_["eps_grid"]
        return {**d, **cons_}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, trusted: bool = False) -> Any:
        if not isinstance(data, Mapping) or data.get("task") != cls.TASK:
            raise InputError(f"the stored configuration is not a cross-domain {cls.TASK} study")
        names = {f.name for f in dataclasses.fields(ConsistencyConfig)}
        own = {k: v for k, v in data.items() if k not in names and k != "task"}
        cons_ = {k: v for k, v in data.items() if k in names}
        own_fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        if "seed" in cons_ and "seed" in own_fields:  # one --seed for both (clf)
            own["seed"] = cons_["seed"]
        return super().from_dict({**own, "consistency": cons_}, trusted=trusted)

    def validate(self, *, trusted: bool = False) -> None:
        self.consistency.validate()  # type: ignore[attr-defined]

    def signature_prefix(self) -> dict[str, Any]:
        return {"task": self.TASK}

    @classmethod
    def add_arguments(cls, parser: Any) -> None:
        """The study's options, from its fields (:mod:`robustlab.runs.fields`)."""
        field_options.add_arguments(cls, parser)

    @classmethod
    def from_args(cls, args: Any) -> Any:
        """The config of a parsed ``cross-domain`` command line (paths absolute); not
        validated yet."""
        return field_options.from_args(cls, args)

    def argv(self) -> list[str]:
        return field_options.argv(self, ("cross-domain", self.TASK))


def consistency_option(order: float = 99) -> dict[str, Any]:
    """The ``consistency`` field's options: its own group, written last."""
    return option(add=ConsistencyConfig.add_arguments, read=ConsistencyConfig.from_args,
                  show=lambda v, _: v.argv(), always=True, order=order, argv_order=order)


def _unless_wmt22(flag: str) -> Callable[[Any, Any], list[str]]:
    """``show``: files named one by one, unless ``--wmt22-dir`` names them all."""
    return lambda v, c: [] if c.wmt22_dir else [flag, *v]


def _if_wmt22(flag: str) -> Callable[[Any, Any], list[str]]:
    return lambda v, c: [flag, *((v,) if isinstance(v, str) else v)] if c.wmt22_dir else []


def _if_set(flag: str) -> Callable[[Any, Any], list[str]]:
    return lambda v, _: [flag, v] if v else []


def _system_path(spec: str) -> str:
    """``[NAME=]FILE`` with the file absolute."""
    name, eq, path = spec.rpartition("=")
    return f"{name}={absolute(path)}" if eq else str(absolute(path))


def _mt_metrics(args: Any) -> tuple[str, ...]:
    """``--metrics``, by default BLEU and chrF (and TER when it is the --score); the --score is
    always computed."""
    metrics = tuple(args.metrics or (("bleu", "chrf") if args.score != "ter"
                                     else ("bleu", "chrf", "ter")))
    return metrics if args.score in metrics else (*metrics, args.score)


@dataclass(frozen=True)
class MTStudy(CrossDomainConfig):
    """An MT cross-domain study: the files (``wmt22_dir``/``pair`` or ``systems``/``refs``/
    ``domains``) are read by :mod:`robustlab.data.mt` when it runs."""

    TASK: ClassVar[str] = "mt"

    # the fields' order is the signature's and the stored dict's: ``order`` places an option in
    # --help, ``argv_order`` in the command line shown (the files first)
    score: str = field(default="bleu", metadata={**option(  # what the consistency metrics use
        "--score", choices=MT_METRICS, always=True,
        help="segment score the consistency metrics use (default bleu)"),
        **in_cell("score", 0)})
    metrics: tuple[str, ...] = field(default=("bleu", "chrf"), metadata=option(
        "--metrics", nargs="+", default=None, choices=MT_METRICS, read=_mt_metrics,
        help="sacreBLEU metrics to compute (default bleu chrf; TER is slow)",
        always=True, show=lambda v, _: ["--metrics", *v]))
    tokenize: str | None = field(default=None, metadata=option(
        "--tokenize", help="sacreBLEU BLEU tokenizer (default 13a)", show=_if_set("--tokenize")))
    consistency: ConsistencyConfig = field(default_factory=ConsistencyConfig,
                                           metadata=consistency_option())
    wmt22_dir: str | None = field(default=None, metadata=option(
        "--wmt22-dir", metavar="DIR", parse=absolute, order=-3, argv_order=-8,
        help="read the WMT22 General layout instead (systems, refs, domains, DA)"))
    pair: str = field(default="ru-en", metadata=option(
        "--pair", help="language pair under --wmt22-dir", order=-2, argv_order=-7,
        always=True, show=_if_wmt22("--pair")))
    wmt22_refs: tuple[str, ...] = field(default=("A",), metadata=option(
        "--wmt22-refs", nargs="+", default=["A"], metavar="R", parse=tuple, order=-1,
        argv_order=-6, help="references to use under --wmt22-dir (e.g. A B)", always=True,
        show=_if_wmt22("--wmt22-refs")))
    systems: tuple[str, ...] = field(default=(), metadata=option(
        "--systems", nargs="+", default=None, metavar="[NAME=]FILE", order=-7, argv_order=-5,
        help="system outputs, one segment per line",
        parse=lambda v: tuple(_system_path(s) for s in v or ()),
        always=True, show=_unless_wmt22("--systems")))
    refs: tuple[str, ...] = field(default=(), metadata=option(
        "--refs", nargs="+", default=None, metavar="FILE", order=-6, argv_order=-4,
        help="reference file(s), line-aligned", parse=lambda v: tuple(map(absolute, v or ())),
        always=True, show=_unless_wmt22("--refs")))
    domains: str | None = field(default=None, metadata=option(
        "--domains", metavar="FILE", parse=absolute, order=-5, argv_order=-3,
        help="one domain label per line, or a TSV/CSV with a 'domain' column",
        show=lambda v, c: [] if c.wmt22_dir or not v else ["--domains", v]))
    human: str | None = field(default=None, metadata=option(
        "--human", metavar="FILE", parse=absolute, order=-4, argv_order=-2,
        help="human scores per system ('system score' lines or WMT ad-sys-scores)",
        show=_if_set("--human")))
    allow_empty: bool = field(default=False, metadata=option(
        "--allow-empty", action="store_true", order=2.5,
        help="accept empty hypothesis lines (scored as sacreBLEU scores them)"))

    def validate(self, *, trusted: bool = False) -> None:
        bad = [m for m in self.metrics if m not in MT_METRICS]
        if bad:
            raise InputError(f"--metrics: unknown {bad}; choose from {', '.join(MT_METRICS)}")
        if self.score not in self.metrics:
            raise InputError(f"--score {self.score!r} must be one of --metrics "
                             f"({', '.join(self.metrics)})")
        if self.wmt22_dir and (self.systems or self.refs or self.domains):
            raise InputError("--wmt22-dir reads systems, refs and domains itself; drop "
                             "--systems/--refs/--domains (or drop --wmt22-dir)")
        self.consistency.validate()
        files = [*(s.split("=", 1)[-1] for s in self.systems), *self.refs,
                 *([self.domains] if self.domains else []), *([self.human] if self.human else [])]
        for f in files:
            regular_input(f)  # a FIFO or /dev/zero is refused, never read forever
        if self.wmt22_dir is not None and not Path(self.wmt22_dir).is_dir():
            raise InputError(f"--wmt22-dir {self.wmt22_dir}: no such directory")

    def describe(self) -> str:
        return f"cross-domain mt: {self.pair if self.wmt22_dir else 'files'}"


def data_fingerprint(data: Any) -> str:
    """What the MT cells were computed on: references, domains and every system's output."""
    from robustlab.signature import fingerprint

    return fingerprint([data.refs, data.domains, sorted(data.systems.items())])


def score_mt(study: MTStudy, data: Any) -> dict[str, Any]:
    """Score every system (one pass, shared references) and compute all tables, vectorised."""
    from robustlab.metrics.mt import MTScorer

    t0 = time.perf_counter()
    scorer = MTScorer(data.refs, study.metrics, tokenize=study.tokenize)
    scores = scorer.score_many(data.systems)
    t_score = time.perf_counter() - t0
    names = list(data.systems)
    X = np.stack([scores[n].segment[study.score] for n in names])
    labels = np.asarray(data.domains, dtype=object)
    doms = data.domain_names()
    tables = consistency_tables(X, data.domains, study.consistency)
    sigs = scorer.signatures()
    results = {}
    for i, name in enumerate(names):
        sc = scores[name]
        detail = {}
        for d in doms:
            idx = np.flatnonzero(labels == d)
            xd = X[i, idx]
            detail[d] = {"n": int(idx.size), "corpus": sc.corpus(scorer, idx),
                         "mean": float(xd.mean()), "variance": float(cons.variance(xd)),
                         "cov": float(cons.cov(xd))}
        corpus = {**sc.corpus(scorer), "signature": sigs}
        results[name] = {"system": name, "score": study.score,
                         "per_domain": {d: detail[d]["corpus"][study.score] for d in doms},
                         "per_domain_detail": detail, **tables[i], "corpus": corpus}
    return {"results": results, "segments": {n: scores[n].segment for n in names},
            "seconds_scoring": t_score, "seconds_tables": time.perf_counter() - t0 - t_score}


# ---- the studies --------------------------------------------------------------------------------


class CrossDomainRun:
    """What the three cross-domain studies share: their kind and their outputs."""

    kind: ClassVar[str] = KIND
    config: Any

    def adopt(self, stored: dict[str, Any], *, trusted: bool = False) -> Any:
        """A run an earlier version made with the same options stored derived data (file
        names, systems, a fingerprint) in its config: this study, whose config replaces it (the
        files themselves are compared by checksum)."""
        mine = self.config.to_dict()
        keys = [k for k in mine if k in LEGACY_SHARED]
        same = stored.get("task") == mine["task"] and all(
            stored.get(k) == mine[k] for k in keys if k in stored)
        return self if same else None

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]:

        state = plan.state or {}
        return write_outputs(store, out, seconds=store.elapsed(), plots=ctx.plots,
                             human=state.get("human"), extra=state.get("extra"),
                             signature=self.config.signature())


#: options a cross-domain config of an earlier version stored under the same names
LEGACY_SHARED = ("score", "metrics", "tokenize", "eps", "grid_max", "n_bags", "fraction",
                 "seed", "eps_grid", "root", "models", "domains", "steps", "max_train",
                 "max_test", "holdout")


@dataclass
class MT(CrossDomainRun):
    """MT systems scored with sacreBLEU across domains; ``data`` (a loaded
    :class:`robustlab.data.mt.MTData`) stands in for the config's files from Python."""

    config: MTStudy
    data: Any = None
    origin: Mapping[str, str] | str = ""

    def load(self) -> Any:
        """The systems, references, domains and human scores (read once)."""
        if self.data is None:
            from robustlab.data.mt import load_mt, load_wmt22, read_human

            cfg = self.config
            if cfg.wmt22_dir:
                data = load_wmt22(cfg.wmt22_dir, cfg.pair, refs=cfg.wmt22_refs,
                                  human=cfg.human is None)
            else:
                missing = [o for o, v in (("--systems", cfg.systems), ("--refs", cfg.refs),
                                          ("--domains", cfg.domains)) if not v]
                if missing:
                    raise InputError(f"missing {', '.join(missing)} (or use --wmt22-dir DIR "
                                     "--pair P)")
                data = load_mt(list(cfg.systems), list(cfg.refs), str(cfg.domains),
                               allow_empty=cfg.allow_empty)
            if cfg.human:
                data.human = read_human(cfg.human)
                data.files["human"] = cfg.human
            self.data = data
        return self.data

    def _origin(self, role: str) -> str:
        origin = self.origin
        if not origin:
            origin = ({"system": "--wmt22-dir", "ref": "--wmt22-dir", "domains": "--wmt22-dir",
                       "human": "--human" if self.config.human else "--wmt22-dir"}
                      if self.config.wmt22_dir else
                      {"system": "--systems", "ref": "--refs", "domains": "--domains",
                       "human": "--human"})
        if isinstance(origin, str):
            return origin
        return origin.get(role) or origin.get(role.split(":")[0]) or "files"

    def inputs(self) -> list[tuple[str, str | None, str]]:
        data = self.load()
        return [(role, path, self._origin(role)) for role, path in data.files.items()]

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        data = self.load()
        check_domains(data.domains, data.files.get("domains", "--domains"))
        computed = score_mt(self.config, data)
        results, segs, labels = computed["results"], computed["segments"], data.domains
        score, cfg = self.config.score, self.config.consistency

        def cell_fn(kind: str, params: dict[str, Any]) -> CellOutput:
            name = params["system"]
            seg = segs[name]
            records = [{"segment": i + 1, "domain": labels[i],
                        **{m: float(v[i]) for m, v in seg.items()}}
                       for i in range(len(labels))]
            return CellOutput(result=results[name], records=records,
                              signature=consistency_signature(
                                  cfg, **cell_parts(MTStudy, {"score": score}),
                                  sacrebleu=results[name]["corpus"]["signature"][score]))

        return Plan(cells=system_cells(list(results)), cell_fn=cell_fn,
                    name=f"cross-domain mt: {len(results)} systems",
                    pins={"data": (data_fingerprint(data), "the MT system, reference and "
                                                          "domain files")},
                    state={"human": data.human,
                           "extra": {"seconds_scoring": computed["seconds_scoring"],
                                     "seconds_tables": computed["seconds_tables"]}})


def system_cells(systems: list[str] | dict[str, dict[str, Any]]) -> list[Cell]:
    params = systems if isinstance(systems, dict) else {s: {} for s in systems}
    return [Cell(key=f"system={s}", kind=KIND, params={"system": s, **p})
            for s, p in params.items()]


def run_mt(study: MTStudy, data: Any, out_dir: str | os.PathLike[str], *,
           progress: bool = False, plots: bool = True,
           origin: str | Mapping[str, str] = "", log: Callable[[str], None] | None = None,
           **_ignored: Any) -> dict[str, Any]:
    """Score ``data`` (a loaded :class:`robustlab.data.mt.MTData`) into ``out_dir`` (the Python
    API): the :class:`MT` study with the data given. ``origin`` says where each file came from
    (one option for all, or per ``files`` key)."""
    from robustlab.runs.study import run_with

    return run_with(MT(study, data=data, origin=origin), out_dir, progress=progress,
                    plots=plots, log=log).summary


def consistency_signature(cfg: ConsistencyConfig, **parts: Any) -> str:
    """A cell's signature: the study's own ``parts`` (its fields' :func:`cell_parts` and what
    it computed, e.g. sacreBLEU's signature), then the consistency fields'."""
    return make_signature(KIND, **parts, **cell_parts(ConsistencyConfig, cfg))


# ---- precomputed score tables --------------------------------------------------------------------


def read_score_table(path: str | os.PathLike[str], score_column: str = "score",
                     system_column: str = "system", domain_column: str = "domain"
                     ) -> dict[str, tuple[np.ndarray, list[str]]]:
    """A long table (CSV/TSV/JSONL with a header): one row per sample or per domain, columns
    system, domain, score → {system: (scores, domain labels)}."""
    from robustlab.data.files import read_rows

    table = read_rows(path, header=True)
    for col in (system_column, domain_column, score_column):
        if col not in table.columns:
            raise InputError(f"{path}: no {col!r} column (columns: {', '.join(table.columns)}); "
                             "expected a header with system, domain and score columns "
                             "(--system-column/--domain-column/--score-column rename them)")
    out: dict[str, tuple[list[float], list[str]]] = {}
    for row, line in zip(table.rows, table.lines, strict=True):
        try:
            v = float(row[score_column])
        except (TypeError, ValueError):
            raise InputError(f"{path}: line {line}: score {row[score_column]!r} is not a "
                             "number") from None
        if not np.isfinite(v):
            raise InputError(f"{path}: line {line}: score {v} is not finite")
        xs, ds = out.setdefault(str(row[system_column]), ([], []))
        xs.append(v)
        ds.append(str(row[domain_column]))
    if not out:
        raise InputError(f"{path}: no rows")
    for name, (_, ds) in out.items():
        check_domains(ds, f"{path} (system {name!r})")
    return {k: (np.asarray(x, dtype=float), d) for k, (x, d) in out.items()}



def analyze_scores(table: Mapping[str, tuple[np.ndarray, list[str]]], cfg: ConsistencyConfig
                   ) -> dict[str, dict[str, Any]]:
    """Consistency results per system of a precomputed table (systems may differ in rows)."""
    results = {}
    ref = common_sigma([x for x, _ in table.values()]) if cfg.eps_grid == "sigma" else None
    for name, (x, labels) in table.items():
        res = consistency_tables(x[None, :], labels, cfg, sigma_ref=ref)[0]
        lab = np.asarray(labels, dtype=object)
        per = {d: float(x[lab == d].mean()) for d in dict.fromkeys(labels)}
        results[name] = {"system": name, "score": "score", "per_domain": per, **res}
    return results


@dataclass(frozen=True)
class ScoresStudy(CrossDomainConfig):
    """Consistency of a precomputed score table (``file``; WMT segment DA with ``wmt_da``)."""

    TASK: ClassVar[str] = "scores"

    file: str = field(default="", metadata=option(
        add=lambda g: g.add_argument("file", metavar="FILE", help="CSV/TSV/JSONL with a header: "
                                     "system, domain, score (one row per sample or per domain)"),
        read=lambda a: absolute(a.file) or "", always=True, show=lambda v, _: [v],
        argv_order=-1))
    score_column: str = field(default="score", metadata=option("--score-column"))
    system_column: str = field(default="system", metadata=option("--system-column"))
    domain_column: str = field(default="domain", metadata=option("--domain-column"))
    wmt_da: bool = field(default=False, metadata=option(
        "--wmt-da", action="store_true", argv_order=7.5,
        help="FILE is WMT segment-level DA (ad-seg-scores: SYS SID RAW.SCR Z.SCR N); needs "
        "--domains (γ on human scores, the paper's Figure 5 / Table 7)"))
    da_column: str = field(default="RAW.SCR", metadata=option(
        "--da-column", help="DA column with --wmt-da"))
    domains: str | None = field(default=None, metadata=option(
        "--domains", metavar="FILE", parse=absolute,
        help="with --wmt-da: the domain of each segment (line = SID)"))
    human: str | None = field(default=None, metadata=option(
        "--human", metavar="FILE", parse=absolute, order=3.5, help="human scores per system"))
    consistency: ConsistencyConfig = field(default_factory=ConsistencyConfig,
                                           metadata=consistency_option())

    def validate(self, *, trusted: bool = False) -> None:
        self.consistency.validate()
        if self.wmt_da and not self.domains:
            raise InputError("--wmt-da needs --domains FILE (the domain of each segment)")
        if self.domains and not self.wmt_da:
            raise InputError("--domains is only used with --wmt-da (score tables carry a domain "
                             "column)")
        for f in (self.file, self.domains, self.human):
            if f:
                regular_input(f)


@dataclass
class Scores(CrossDomainRun):
    """The consistency of a score table; ``table`` ({system: (scores, domains)}) and ``human``
    stand in for the config's files from Python."""

    config: ScoresStudy
    table: Mapping[str, tuple[Any, list[str]]] | None = None
    human_scores: Mapping[str, float] | None = None
    extra_inputs: Sequence[tuple[str, str | None, str]] = ()

    def load(self) -> tuple[dict[str, tuple[np.ndarray, list[str]]], Mapping[str, float] | None]:
        cfg = self.config
        table = self.table
        if table is None:
            if cfg.wmt_da:
                from robustlab.data.mt import read_domains, read_wmt_da_segments

                table = read_wmt_da_segments(cfg.file, read_domains(str(cfg.domains)),
                                             cfg.da_column)
            else:
                table = read_score_table(cfg.file, score_column=cfg.score_column,
                                         system_column=cfg.system_column,
                                         domain_column=cfg.domain_column)
        for name, (_, ds) in table.items():
            check_domains(ds, f"{cfg.file} (system {name!r})")
        human = self.human_scores
        if human is None and cfg.human:
            from robustlab.data.mt import read_human

            human = read_human(cfg.human)
        self.table = {k: (np.asarray(x, dtype=float), list(d)) for k, (x, d) in table.items()}
        self.human_scores = human
        return self.table, human

    def inputs(self) -> list[tuple[str, str | None, str]]:
        cfg = self.config
        return [("scores", cfg.file, "FILE"), ("human", cfg.human, "--human"),
                ("domains", cfg.domains, "--domains"), *self.extra_inputs]

    def plan(self, ctx: RunContext, out: Path) -> Plan:
        from robustlab.signature import fingerprint

        table, human = self.load()
        results = analyze_scores(table, self.config.consistency)
        cfg = self.config.consistency

        def cell_fn(kind: str, params: dict[str, Any]) -> CellOutput:
            name = params["system"]
            x, labels = table[name]
            recs = [{"domain": d, "score": float(v)} for v, d in zip(x, labels, strict=True)]
            return CellOutput(result=results[name], records=recs, signature=consistency_signature(cfg))

        fp = fingerprint(sorted((k, x.tolist(), d) for k, (x, d) in table.items()))
        return Plan(cells=system_cells(list(results)), cell_fn=cell_fn,
                    name=f"cross-domain scores: {len(results)} systems",
                    pins={"data": (fp, f"the score table {self.config.file}")},
                    state={"human": human})


def run_scores(path: str | os.PathLike[str], out_dir: str | os.PathLike[str] | None,
               cfg: ConsistencyConfig, *, human: Mapping[str, float] | None = None,
               columns: Mapping[str, str] | None = None, plots: bool = True,
               table: Mapping[str, tuple[Any, list[str]]] | None = None,
               inputs: Sequence[tuple[str, str | None, str]] = (),
               log: Callable[[str], None] | None = None, **_ignored: Any) -> dict[str, Any]:
    """``robustlab cross-domain scores FILE``: results per system; a run directory if asked.
    ``table`` ({system: (scores, domains)}) replaces reading ``path`` (e.g. WMT DA segments)."""
    from robustlab.runs.study import run_with

    config = ScoresStudy(file=str(path), consistency=cfg, **dict(columns or {}))
    cfg.validate()
    study = Scores(config, table=table, human_scores=human, extra_inputs=inputs)
    if out_dir is None:

        tab, hum = study.load()
        results = analyze_scores(tab, cfg)
        return {"kind": KIND, "systems": list(results.values()),
                **rank_and_agree(list(results.values()), hum)}
    return run_with(study, out_dir, progress=False, plots=plots, log=log).summary
