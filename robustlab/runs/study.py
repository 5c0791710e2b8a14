"""A study as one object, and the one run lifecycle every study goes through.

A *study* is a configuration (a frozen dataclass, :class:`StudyConfig`: the run's identity) plus
what robustlab needs to run it: :meth:`Study.inputs` (the files it reads, recorded with their
checksums), :meth:`Study.plan` (data loaded, models checked, the cells and their cell function,
all before anything is written) and :meth:`Study.write_outputs` (``summary.json`` and the
kind's files, from the store). :func:`run_study` is the lifecycle, written once:

1. the configuration and the runtime options are checked; ``--out`` must be usable;
2. the study plans (bad data or models stop here, before the run directory exists);
3. the executor is prepared (a Ray cluster is joined before anything is written);
4. the inputs are recorded and shown; the store is opened (created, or resumed: an existing
   run must have the same kind and configuration, and the same input bytes);
5. the cells run (already finished ones are skipped); outputs are written; the run's status
   is ``done`` when every cell finished, ``failed`` otherwise; the store is closed whatever
   happens.

The stored configuration is :meth:`StudyConfig.to_dict` — absolute paths, specs in their
canonical form — and ``robustlab resume DIR`` rebuilds the study from it with
:meth:`StudyConfig.from_dict` (strict types, unknown keys refused, specs resolved as untrusted
data: only registered names). A command line is derived from the config for people
(:meth:`StudyConfig.argv`); it is never parsed back. The signature is built from the config's
own fields (:meth:`StudyConfig.signature`), so every option that changes results is in it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, Union

from robustlab.errors import InputError
from robustlab.runs import inputs as run_inputs
from robustlab.runs.cells import EXECUTORS, CellFn
from robustlab.runs.executor import RunReport, run_cells
from robustlab.runs.store import Cell, RunStore
from robustlab.signature import fingerprint, make_signature, versions

#: (role, location or name, where the location came from): one input a study reads
InputItem = tuple[str, str | None, str]


# ---- the configuration ---------------------------------------------------------------------------


class StudyConfig:
    """Base of a study's configuration dataclass (``@dataclass(frozen=True)`` subclasses).

    Subclasses set :attr:`KIND` and write :meth:`validate`; everything else is derived from the
    fields: the stored dict, its strict reading, and the signature. A field's metadata may give
    ``sig`` (its short name in the signature, or ``None`` to leave it out: e.g. a display name),
    ``flag`` (the option that sets it, for messages) and ``digest`` (a long list enters the
    signature by its fingerprint). A field added after runs were stored carries
    ``added=True``: while it holds its default (which must be the behaviour of runs stored
    without it) it is left out of the stored dict and of the signature, so those runs still
    open, resume and keep their signature.
    """

    KIND: ClassVar[str] = ""

    def study_kind(self) -> str:
        """The run kind (``robustness`` is a learnability config with its own kind)."""
        return self.KIND

    def validate(self, *, trusted: bool = False) -> None:
        """Check the options (not the data): InputError naming the option and the fix.
        ``trusted``: specs typed on this command line (may name ``module:Class``)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored identity: JSON types only, tuples as lists."""
        return {f.name: _jsonable(getattr(self, f.name)) for f in dataclasses.fields(self)  # type: ignore[arg-type]
                if not _added_at_default(self, f)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, trusted: bool = False) -> Any:
        """A config from its stored dict, checked as untrusted data: every key known, every
        value of its field's type, then :meth:`validate`. Raises InputError naming the key."""
        if not isinstance(data, Mapping):
            raise InputError(f"a stored {cls.KIND} configuration must be a JSON object, got "
                             f"{type(data).__name__}")
        fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise InputError(f"the stored {cls.KIND} configuration has unknown key(s) "
                             f"{', '.join(map(repr, unknown))}")
        hints = typing.get_type_hints(cls)
        values = {}
        for name, value in data.items():
            try:
                values[name] = _coerce(value, hints[name])
            except TypeError as exc:
                raise InputError(f"the stored {cls.KIND} configuration: {name}: {exc}") from None
        try:
            config = cls(**values)
        except TypeError as exc:  # a required field missing
            raise InputError(f"the stored {cls.KIND} configuration: {exc}") from None
        config.validate(trusted=trusted)
        return config

    def signature(self) -> str:
        """sacreBLEU-style ``kind|name:value|…|v:VERSION`` over every field (lists joined with
        ``,``, mappings by fingerprint), so two configs that compute different things differ."""
        parts: dict[str, Any] = dict(self.signature_prefix())
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            short = f.metadata.get("sig", f.name)
            if short is None or f.name == "kind" or _added_at_default(self, f):
                continue  # the kind leads the signature already
            v = getattr(self, f.name)  # ``digest``: a long list enters by its fingerprint
            parts[short] = fingerprint(_jsonable(v), n=8) if f.metadata.get("digest") and \
                v is not None else _sig_value(v)
        return make_signature(self.study_kind(), **parts)

    def signature_prefix(self) -> dict[str, Any]:
        """Fields that lead the signature after the kind (cross-domain: its task)."""
        return {}

    def argv(self) -> list[str]:
        """The options of a command line that runs this study (for people: shown, copied,
        never parsed back). Subclasses write it; the default names the resume command."""
        return []

    def describe(self) -> str:
        """One line naming the study (the run's name in lists)."""
        return self.KIND


def _added_at_default(config: Any, f: dataclasses.Field) -> bool:
    """A field added after runs were stored, holding its default (see :class:`StudyConfig`)."""
    return bool(f.metadata.get("added")) and getattr(config, f.name) == f.default


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return [_jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _jsonable(getattr(v, f.name)) for f in dataclasses.fields(v)}
    return v


def _sig_value(v: Any) -> Any:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return format(v, "g")
    if isinstance(v, tuple | list):
        return ",".join(str(_sig_value(x)) for x in v) or "-"
    if isinstance(v, Mapping) or dataclasses.is_dataclass(v):
        return fingerprint(_jsonable(v), n=8)
    return v


_SCALARS = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}


def _coerce(value: Any, tp: Any) -> Any:
    """``value`` (from JSON) as type ``tp``, or TypeError saying what was expected. Only the
    types configurations use: scalars, ``X | None``, ``tuple[X, ...]``, ``dict[str, X]``,
    ``Any`` and nested config dataclasses."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return value
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _coerce(value, arg)
            except TypeError as exc:
                errors.append(str(exc))
        raise TypeError(errors[0] if errors else f"expected one of {args}")
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(value, list | tuple):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_coerce(v, args[0]) for v in value)
        if len(args) != len(value):
            raise TypeError(f"expected {len(args)} values, got {len(value)}")
        return tuple(_coerce(v, a) for v, a in zip(value, args, strict=True))
    if origin is dict or tp is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise TypeError(f"expected an object, got {type(value).__name__}")
        args = typing.get_args(tp)
        vt = args[1] if len(args) == 2 else Any
        return {k: _coerce(v, vt) for k, v in value.items()}
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, Mapping):
            raise TypeError(f"expected an object, got {type(value).__name__}")
        hints = typing.get_type_hints(tp)
        names = {f.name for f in dataclasses.fields(tp)}
        unknown = sorted(set(value) - names)
        if unknown:
            raise TypeError(f"unknown key(s) {', '.join(map(repr, unknown))}")
        return tp(**{k: _coerce(v, hints[k]) for k, v in value.items()})
    if tp in _SCALARS:
        ok = (isinstance(value, bool) if tp is bool else
              isinstance(value, int | float) and not isinstance(value, bool) if tp is float else
              isinstance(value, int) and not isinstance(value, bool) if tp is int else
              isinstance(value, str))
        if not ok:
            raise TypeError(f"expected {_SCALARS[tp]}, got {value!r:.60}")
        return float(value) if tp is float else value
    raise TypeError(f"unsupported type {tp!r}")  # pragma: no cover - a config's own mistake


# ---- runtime options -------------------------------------------------------------------------------


@dataclass
class RunContext:
    """How a study runs, never what it computes: none of this is stored as configuration or
    enters a signature, so a run started one way resumes another (a CPU run on a GPU)."""

    executor: str = "sequential"
    workers: int = 1
    ray_address: str | None = None
    gpus_per_task: float = 0.0
    cpus_per_task: float = 1.0
    device: str = "auto"
    #: torch threads per training (learnability: 1 measured fastest on a busy 2-core machine)
    threads: int | None = 1
    progress: bool = True
    plots: bool = True
    #: where the study's specs came from: True only for this command line (``module:Class``)
    trusted: bool = False
    #: the endpoint card the study names was given on this command line, in a file the user
    #: named (``robustlab check PLAN``: the plan's ``model``), so its ``api_key_env`` may be
    #: read although the plan's other specs are data (no ``module:Class``); never for a resume
    endpoint_key: bool = False
    #: ``robustlab resume``: the files the user re-adopts (``--adopt-input``) for inputs the run
    #: has no checksum of; None when the command line names the inputs itself
    adopt: tuple[str, ...] | None = None
    log: Callable[[str], None] | None = None

    def may_send_key(self) -> bool:
        """Whether an endpoint card's key may be read (typed --model, or check's own plan)."""
        return self.trusted or self.endpoint_key

    def say(self, message: str) -> None:
        if self.log is not None:
            self.log(message)

    @classmethod
    def add_arguments(cls, parser: Any, *, threads: bool = False, plots: bool = True,
                      device: bool = True, out: bool = True, out_required: bool = True,
                      executor: bool = True, out_help: str | None = None,
                      quiet_help: str | None = None) -> None:
        """``--out`` and the runtime options of a study command (one "execution" group): where
        cells run (``--executor``, ``--workers``, Ray's; not for a study whose cells are
        computed while it plans), ``--device``, ``--threads``, ``--no-plots`` and ``--quiet``;
        defaults from this class's fields."""
        from robustlab.options import add_quiet_option

        d = cls()
        e = parser.add_argument_group("execution (see docs/executors.md)")
        if out:
            e.add_argument("--out", required=out_required, metavar="DIR", help=out_help or
                           "run directory (re-running the same command resumes it)")
        if executor:
            cls._add_executor_arguments(e)
        if threads:
            e.add_argument("--threads", type=int, default=d.threads,
                           help=f"torch threads per training (default {d.threads}; see "
                           "docs/learnability.md)")
        if device:
            from robustlab.models.device import add_device_option

            add_device_option(e)
        if plots:
            e.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
        add_quiet_option(e, help=quiet_help)

    @classmethod
    def _add_executor_arguments(cls, e: Any) -> None:
        d = cls()
        e.add_argument("--executor", choices=EXECUTORS, default=d.executor,
                       help="where cells run: this process, local worker processes, or Ray tasks")
        e.add_argument("--workers", type=int, default=d.workers,
                       help=f"cells in parallel (process / ray; default {d.workers})")
        e.add_argument("--ray-address", metavar="ADDR",
                       help="existing Ray cluster, e.g. HEAD:6379 (default: a private local "
                       "one); token-authenticated clusters need RAY_AUTH_TOKEN or "
                       "~/.ray/auth_token")
        e.add_argument("--gpus-per-task", type=float, default=d.gpus_per_task,
                       help="GPUs per Ray task (fractional allowed, e.g. 0.25)")
        e.add_argument("--cpus-per-task", type=float, default=d.cpus_per_task,
                       help="CPUs per Ray task")

    @classmethod
    def from_args(cls, args: Any, *, trusted: bool | None = None,
                  log: Callable[[str], None] | None = None) -> RunContext:
        """The runtime options of a parsed command line (``trusted``: its specs were typed
        here; by default ``args.trusted``, which robustlab.cli sets). Options a command does
        not declare keep their defaults."""
        d = cls()
        if trusted is None:
            trusted = bool(getattr(args, "trusted", True))
        quiet = bool(getattr(args, "quiet", False) or getattr(args, "no_progress", False))
        return cls(executor=getattr(args, "executor", d.executor),
                   workers=getattr(args, "workers", d.workers),
                   ray_address=getattr(args, "ray_address", None),
                   gpus_per_task=getattr(args, "gpus_per_task", d.gpus_per_task),
                   cpus_per_task=getattr(args, "cpus_per_task", d.cpus_per_task),
                   device=getattr(args, "device", d.device),
                   threads=getattr(args, "threads", d.threads),
                   progress=not quiet, plots=not getattr(args, "no_plots", False),
                   trusted=trusted, log=None if quiet else log)

    #: what :meth:`stored` keeps in the run's meta (a Ray address never: it names a cluster
    #: that may be gone, and a stored run must not connect anywhere on its own)
    STORED: ClassVar[tuple[str, ...]] = ("executor", "workers", "gpus_per_task",
                                         "cpus_per_task", "device", "threads")

    def stored(self) -> dict[str, Any]:
        """How this run ran, for the run's meta (:data:`RUN_CONTEXT_KEY`): resume continues the
        same way unless told otherwise. Never part of a signature or the configuration."""
        return {name: getattr(self, name) for name in self.STORED}

    @classmethod
    def from_stored(cls, data: Any) -> dict[str, Any]:
        """The valid entries of a stored context (data from a run directory: each checked for
        its type and range, anything else dropped, so a damaged value means the default)."""
        import json

        try:
            data = json.loads(data) if isinstance(data, str) else data
        except ValueError:
            return {}
        if not isinstance(data, Mapping):
            return {}
        out: dict[str, Any] = {}
        for name in cls.STORED:
            v = data.get(name)
            if name == "executor" and v in EXECUTORS:
                out[name] = v
            elif name in ("workers", "threads") and type(v) is int and 1 <= v <= 4096:
                out[name] = v
            elif name in ("gpus_per_task", "cpus_per_task") and type(v) in (int, float) \
                    and 0 <= v <= 4096:
                out[name] = float(v)
            elif name == "device" and isinstance(v, str) and v.isprintable() and len(v) <= 40:
                out[name] = v
        return out

    def argv(self) -> list[str]:
        """The runtime options that differ from the defaults, as command-line options (shown
        with a run's command, e.g. by ``robustlab resume`` and the TUI's resume confirmation;
        a Ray address never: it is not stored)."""
        d, out = RunContext(), []
        for name in self.STORED:
            v = getattr(self, name)
            if v != getattr(d, name) and v is not None:
                out += [f"--{name.replace('_', '-')}", str(v)]
        if not self.plots:
            out.append("--no-plots")
        if not self.progress:
            out.append("--quiet")
        return out

    def validate(self) -> None:
        from robustlab.runs.executor import refuse_unguarded_main
        from robustlab.runs.ray_backend import check_resources

        if self.executor not in EXECUTORS:
            raise InputError(f"--executor: unknown {self.executor!r}; choose one of "
                             f"{', '.join(EXECUTORS)}")
        if self.executor == "process":  # workers re-import the main script: it must be guarded
            refuse_unguarded_main()
        check_resources(self.workers, self.gpus_per_task, self.cpus_per_task)
        if self.threads is not None and int(self.threads) < 1:
            raise InputError(f"--threads must be >= 1, got {self.threads}")


# ---- the protocol ---------------------------------------------------------------------------------


@dataclass
class Plan:
    """What :meth:`Study.plan` prepared: everything a run needs, made before anything is
    written (so a bad input leaves no run directory behind)."""

    cells: list[Cell]
    cell_fn: CellFn
    #: the run's name in lists (``learnability: bow on sst2``)
    name: str
    #: content fingerprints pinned by the store when the run starts: {name: (fp, what)}
    pins: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: extra executor options (Ray's travelling data)
    backend: dict[str, Any] = field(default_factory=dict)
    #: whatever the study's write_outputs needs from planning (loaded data, the attack)
    state: Any = None


class Study(Protocol):
    """A study: its configuration and the three steps the lifecycle calls."""

    config: StudyConfig

    @property
    def kind(self) -> str: ...

    def inputs(self) -> Sequence[InputItem]: ...

    def plan(self, ctx: RunContext, out: Path) -> Plan: ...

    def write_outputs(self, store: RunStore, out: Path, plan: Plan, ctx: RunContext,
                      report: RunReport) -> dict[str, Any]: ...


@dataclass
class Outcome:
    """What :func:`run_study` returns: the summary (also in ``summary.json``) and whether every
    cell finished."""

    summary: dict[str, Any]
    complete: bool
    failed: list[str]
    out: Path
    report: RunReport


#: the keyword arguments that say how a study runs from Python (``robustlab.run``'s ``how``)
HOW = tuple(f.name for f in dataclasses.fields(RunContext))


def context(**how: Any) -> RunContext:
    """The run context of :func:`robustlab.run`'s ``how`` (RunContext's fields; ``trusted``
    True by default: specs written in the caller's own Python may name ``module:Class``). An
    unknown keyword is a TypeError naming the known ones, raised before anything is written."""
    unknown = sorted(set(how) - set(HOW))
    if unknown:
        raise TypeError(f"robustlab.run: unknown option(s) {', '.join(unknown)}; how a study "
                        f"runs is one of {', '.join(HOW)}")
    return RunContext(**{"trusted": True, **how})


def run_with(study: Study, out: str | os.PathLike[str], **how: Any) -> Outcome:
    """Run the study object ``study`` into ``out`` as :func:`robustlab.run` does (the one Python
    entry point: it resolves a configuration to its study through the registry, then comes
    here). A kind's Python wrapper that builds a study around runtime objects (a model, data)
    calls this, so every Python route builds its context, and stores it, the same way."""
    return run_study(study, out, context(**how))


def run_study(study: Study, out: str | Path, ctx: RunContext | None = None) -> Outcome:
    """The lifecycle of every study (module docstring). Re-running the same study into the same
    ``out`` resumes it; a different study there is refused naming what differs."""
    from robustlab.models.device import resolve_device
    from robustlab.outputs import check_out_dir, resolve_run_dir
    from robustlab.runs.ray_backend import prepare

    ctx = ctx or RunContext()
    study.config.validate(trusted=ctx.trusted)
    ctx.validate()
    check_out_dir(out)
    resolve_device(ctx.device)  # --device cuda without a GPU: one line, nothing written
    out = resolve_run_dir(out)  # a run directory that is a link: resolved once, said once
    study = _adopt_stored_spelling(study, out, ctx)
    _refuse_other_options(study, out)
    recorded = run_inputs.collect(study.inputs())
    if ctx.adopt is not None:
        _refuse_unpinned_inputs(out, recorded, ctx.adopt)
    run_inputs.announce(recorded, ctx.log)
    plan = study.plan(ctx, out)
    if len(plan.cells) > MAX_CELLS:  # before the store: nothing is written
        raise InputError(f"{study.kind}: {len(plan.cells)} cells, more than the {MAX_CELLS} one "
                         "run may hold; split the study into several runs (fewer seeds, models, "
                         "perturbations or examples per run)")
    backend = prepare(ctx.executor, ctx.workers, ctx.ray_address, ctx.gpus_per_task,
                      ctx.cpus_per_task)
    backend.update(plan.backend if ctx.executor == "ray" else {})
    store = RunStore(out)
    try:
        store.init_run(study.kind, plan.name, {**study.config.to_dict(), run_inputs.KEY: recorded},
                       command=command_line(study.config, out), versions=versions(),
                       inputs=plan.pins)
        store.set_meta(CONFIG_FORMAT_KEY, CONFIG_FORMAT)
        store.set_meta(RUN_CONTEXT_KEY, json.dumps(ctx.stored()))
        from robustlab.resources import SHARED_KEY, recorded_shared

        if store.meta(SHARED_KEY) is None:  # the first start's: a resume reads it back
            store.set_meta(SHARED_KEY, json.dumps(recorded_shared()))
        report = run_cells(store, plan.cells, plan.cell_fn, executor=ctx.executor,
                           workers=ctx.workers, progress=ctx.progress, desc=study.kind,
                           **backend)
        summary = study.write_outputs(store, out, plan, ctx, report)
        failed = list(summary.get("failed_cells") or [c.key for c in store.cells("failed")])
        store.set_run_status("done" if report.complete else "failed",
                             None if report.complete else
                             f"{report.total - report.done} of {report.total} cells not done; "
                             "rerun (or `robustlab resume`) to retry them")
    finally:
        store.close()
    return Outcome(summary, report.complete, failed, out, report)


#: the store's ``meta`` key saying its run config is a :meth:`StudyConfig.to_dict` (runs made
#: before the study protocol have none: robustlab.studies.stored reads them)
#: the most cells one run holds (issue 29, F10): a store of a million cells is ~1 GB and its
#: readers slow; a larger study is several runs
MAX_CELLS = 1_000_000

CONFIG_FORMAT_KEY = "config_format"
CONFIG_FORMAT = "2"
#: the store's ``meta`` key holding how the run last ran (:meth:`RunContext.stored`)
RUN_CONTEXT_KEY = "run_context"
#: a gated run's thresholds and outcomes in its run directory (``robustlab check`` writes it,
#: ``robustlab report`` shows it)
CHECKS_FILE = "checks.json"


def _existing_run_info(out: Path) -> Any:
    """The run row of the run already at ``out``, or None: no run there, or a damaged store
    (``init_run`` reports that with its recovery hint)."""
    import sqlite3

    from robustlab.runs.store import StoreError, is_run_dir

    if not is_run_dir(out):
        return None
    try:
        with RunStore(out, readonly=True) as store:
            return store.run_info()
    except (StoreError, sqlite3.DatabaseError):
        return None


def _refuse_unpinned_inputs(out: Path, recorded: Mapping[str, Mapping[str, Any]],
                            adopt: Sequence[str]) -> None:
    """A resumed run reads the files its stored configuration names: only those whose checksum
    the run recorded when it started (so a changed path or file is refused) or that the user
    names again with ``--adopt-input``. A run whose ``inputs`` or checksums are missing (deleted,
    or a run of an earlier version) is damaged, not fresh: anyone who could write it would
    choose which file is read into its tables."""
    from robustlab.textfmt import printable

    info = _existing_run_info(out)
    if info is None:
        return
    _, stored = run_inputs.split_config(info.config)
    for role, rec in recorded.items():
        if "sha256" not in rec:
            continue
        pinned = stored.get(role) if "sha256" in (stored.get(role) or {}) else next(
            (r for r in stored.values() if isinstance(r, Mapping) and "sha256" in r
             and _same_path(r.get("path"), str(rec.get("path")))), None)
        if pinned is not None:  # by role, or (another spelling of the same spec) by path
            if pinned["sha256"] != rec["sha256"]:
                raise InputError(printable(
                    f"{out}: input changed since this run started: "
                    f"{run_inputs.role_label(role)} {rec.get('path')} sha256 "
                    f"{str(pinned['sha256'])[:12]} when the run started, "
                    f"{str(rec['sha256'])[:12]} now"))
            continue
        if any(_same_path(rec.get("path"), a) for a in adopt):
            continue
        raise InputError(printable(
            f"{out}: the run has no checksum of its {run_inputs.role_label(role)} "
            f"{rec.get('path')} (its recorded inputs are missing or damaged), so resuming would "
            f"read whatever file is there now; if that file is the one you mean, resume with "
            f"--adopt-input {rec.get('path')}"))


def _same_path(a: Any, b: str) -> bool:
    try:
        return a is not None and os.path.samefile(str(a), b)
    except OSError:
        return False


def _adopt_stored_spelling(study: Study, out: Path, ctx: RunContext) -> Study:
    """The study as an earlier version stored it, when that run is this study in an older
    spelling (a relative model path, say: the cells' keys use it), so that re-running the
    command that made a run resumes it. Studies opt in with ``adopt(stored) -> Study | None``."""
    import sqlite3

    from robustlab.runs.store import StoreError, is_run_dir

    adopt = getattr(study, "adopt", None)
    if adopt is None or not is_run_dir(out):
        return study
    try:
        with RunStore(out, readonly=True) as store:
            info = store.run_info()
            if info is None or info.kind != study.kind or store.meta(CONFIG_FORMAT_KEY):
                return study
    except (StoreError, sqlite3.DatabaseError):
        return study  # init_run reports a damaged store with its recovery hint
    stored, recorded = run_inputs.split_config(info.config)
    if stored == study.config.to_dict():
        return study
    adopted = adopt(stored, trusted=ctx.trusted)
    if adopted is None:
        return study
    new = adopted.config.to_dict()
    if new != stored:  # the same study, stored the old way: store it the current way
        with RunStore(out) as store:
            store.replace_config({**new, run_inputs.KEY: recorded} if recorded else new)
    return adopted


def config_differences(config: StudyConfig, stored: Mapping[str, Any]) -> list[str]:
    """What differs between a run's stored configuration and ``config``, by option:
    ``["--num-examples: 10 in the run, 20 now", …]`` (a field's ``flag`` metadata names its
    option; by default ``--field-name``)."""
    import json

    new = config.to_dict()
    flags = {f.name: f.metadata.get("flag", "--" + f.name.replace("_", "-"))
             for f in dataclasses.fields(config)}  # type: ignore[arg-type]
    out = []
    for key in dict.fromkeys([*new, *stored]):
        if new.get(key) != stored.get(key):
            out.append(f"{flags.get(key, key)}: {json.dumps(stored.get(key))[:120]} in the "
                       f"run, {json.dumps(new.get(key))[:120]} now")
    return out


def _refuse_other_options(study: Study, out: Path) -> None:
    """Before any work: a run directory holding another study is refused, naming each option
    that differs with both values (and the command that made it, escaped)."""
    from robustlab.textfmt import printable

    info = _existing_run_info(out)
    if info is None:
        return
    if info.kind != study.kind:
        raise InputError(f"{printable(str(out))} holds a {printable(str(info.kind))[:40]} run, "
                         f"not a {study.kind} run; choose another --out")
    stored, _ = run_inputs.split_config(info.config)
    diffs = config_differences(study.config, stored)
    if diffs:
        started = f"; it was started as: {printable(info.command)}" if info.command else ""
        raise InputError(
            f"{printable(str(out))} holds a {study.kind} run with other options: "
            f"{printable('; '.join(diffs))}{started}. A run's options are fixed when it starts: "
            "rerun with its options to resume it, or choose another --out")


def study_of(study_cls: Callable[[Any], Any], config_cls: type, config: Any, trusted: bool, *,
             python_objects: bool = False) -> Any:
    """The study of ``config``: a ``config_cls`` object from Python as it is, or a stored dict
    read as untrusted data (unless ``trusted``). ``python_objects``: the kind may hold a model
    given as a Python object, which a stored run cannot rebuild (refused in one line)."""
    if isinstance(config, config_cls):
        return study_cls(config)
    if python_objects:
        run_inputs.refuse_object_model(config)
    return study_cls(config_cls.from_dict(config, trusted=trusted))  # type: ignore[attr-defined]


def command_line(config: StudyConfig, out: str | Path) -> str:
    """The command that runs ``config`` into ``out``, for people (stored in the run row and
    shown by the TUI and reports; resume never parses it)."""
    import shlex

    return shlex.join(["robustlab", *config.argv(), "--out", str(Path(out).resolve())])


def summary_base(study: Study, store: RunStore, report: RunReport) -> dict[str, Any]:
    """The keys every ``summary.json`` has (docs/run-directory.md): kind, complete, failed
    cells, config (with its inputs), signature, versions, seconds."""
    info = store.run_info()
    return {"kind": study.kind, "complete": report.complete,
            "failed_cells": [c.key for c in store.cells("failed")],
            "config": info.config if info is not None else study.config.to_dict(),
            "signature": study.config.signature(), "versions": versions(),
            "seconds": store.elapsed()}


__all__ = ["CONFIG_FORMAT", "CONFIG_FORMAT_KEY", "RUN_CONTEXT_KEY", "InputItem", "config_differences", "Outcome", "Plan", "RunContext", "Study", "StudyConfig",
           "HOW", "command_line", "context", "run_study", "run_with", "study_of", "summary_base"]
