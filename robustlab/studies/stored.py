"""A run directory's study, read back: the current format and every earlier one, in one place.

A run directory is data, never code (docs/run-directory.md, "Security"). What ``robustlab
resume`` and the TUI run is rebuilt from the stored *configuration* — the run row's config in
``store.sqlite`` — through :func:`robustlab.studies.study_from_config`: strict types, unknown keys
refused, specs resolved as untrusted data (registered names only, never ``module:Class``). No
stored command line is parsed, and nothing that writes outside the run directory is kept.

Runs made before the study protocol (their store has no ``config_format`` meta value) are
migrated here, and only here:

* learnability / robustness and cross-domain clf: the configuration is the same; a model path
  may be relative to the directory the run was started in, which is recovered from the stored
  command's ``--out`` (relative to that directory when it was relative) or taken as the run
  directory's parent.
* attack, bias, cross-domain mt and scores stored derived values (a model's id, file names, a
  data fingerprint) rather than their options: they resume when the command that made them is
  typed again (the study then replaces the old configuration, after checking it matches: see
  each study's ``adopt``), and are refused here with that command shown.
"""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from robustlab.errors import InputError
from robustlab.resources import SHARED_KEY
from robustlab.runs.inputs import split_config
from robustlab.runs.store import STORE_NAME, RunStore, StoreError, recovery_hint
from robustlab.runs.study import CONFIG_FORMAT_KEY, RUN_CONTEXT_KEY, RunContext, command_line
from robustlab.studies import study_from_config
from robustlab.textfmt import printable


@dataclass
class StoredStudy:
    """A study read back from ``run_dir``, ready for :func:`robustlab.runs.study.run_study`."""

    run_dir: Path
    study: Any
    #: the directory relative paths of the configuration were typed in (old runs only)
    cwd: Path
    #: where it was read from: ``store.sqlite``
    source: str
    #: relative model paths of a run of an earlier version -> the absolute path each was
    #: resolved to (against :attr:`cwd`); resume links them into a private working directory
    links: dict[str, Path] = dataclasses.field(default_factory=dict)
    #: how the run last ran (:meth:`RunContext.from_stored`: checked entries only)
    context: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: the shared folder recorded at the run's first start (raw meta, checked where used:
    #: :func:`robustlab.resources.use_recorded_shared`); None for runs that recorded none
    shared: str | None = None

    @property
    def command(self) -> str:
        """The command line that runs this study into ``run_dir`` the way it last ran (for
        people: shown, never parsed)."""
        import shlex

        how = RunContext(**self.context).argv()
        return command_line(self.study.config, self.run_dir) + (
            " " + shlex.join(how) if how else "")


def load(run_dir: str | Path, *, trusted: bool = False) -> StoredStudy:
    """The study of ``run_dir``; InputError naming the reason when there is none to resume."""
    run_dir = Path(run_dir).expanduser().resolve()
    where = printable(str(run_dir))
    if (run_dir / STORE_NAME).exists():
        try:
            with RunStore(run_dir, readonly=True) as store:
                problem = store.quick_check()
                if problem:
                    raise InputError(f"{where}/{STORE_NAME} is damaged (sqlite quick_check: "
                                     f"{printable(problem)}); "
                                     f"{recovery_hint(run_dir / STORE_NAME)}")
                info = store.run_info()
                current = store.meta(CONFIG_FORMAT_KEY) is not None
                context = RunContext.from_stored(store.meta(RUN_CONTEXT_KEY))
                shared = store.meta(SHARED_KEY)
        except StoreError as exc:
            raise InputError(str(exc)) from exc
        if info is None:
            raise InputError(f"{where} has a store but no run in it; start the study again")
        config, _ = split_config(info.config)
        if current:
            return StoredStudy(run_dir, _study(info.kind, config, trusted, where), run_dir,
                               STORE_NAME, context=context, shared=shared)
        stored = _migrate(run_dir, info.kind, config, info.command, trusted, where)
        stored.context, stored.shared = context, shared
        return stored
    if (run_dir / "worker.json").exists():
        raise InputError(f"{where}: its worker stopped before it created its run store, so "
                         "nothing was computed; start the study again")
    raise InputError(f"{where} is not a robustlab run directory (no {STORE_NAME})")


def _study(kind: Any, config: dict[str, Any], trusted: bool, where: str) -> Any:
    try:
        return study_from_config(kind, config, trusted=trusted)
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _migrate(run_dir: Path, kind: str, config: dict[str, Any], command: str | None,
             trusted: bool, where: str) -> StoredStudy:
    """A run made before the study protocol (module docstring)."""
    base = started_in(run_dir, command)
    try:
        study = study_from_config(kind, _rebased(config, base), trusted=trusted)
        if study.config.to_dict() != config and "models" in config:  # keep the spelling
            study = type(study)(dataclasses.replace(study.config,
                                                    models=tuple(config["models"])))
    except InputError:
        shown = f": {printable(command)[:300]}" if command else ""
        raise InputError(f"{where}: this {printable(str(kind))[:40]} run was made by an earlier "
                         "robustlab, whose stored configuration does not say everything needed "
                         f"to resume it; rerun the command that made it{shown}") from None
    return StoredStudy(run_dir, study, base, STORE_NAME, _relative_models(config, base, where))


def _relative_models(config: dict[str, Any], base: Path, where: str) -> dict[str, Path]:
    """The relative model paths of an old run, each resolved against ``base`` (see
    :attr:`StoredStudy.links`); a path that climbs out (``..``) is refused."""
    links = {}
    for m in config.get("models") or ():
        local = Path(str(m))
        if not isinstance(m, str) or local.is_absolute() or m.startswith("~") \
                or not (base / local).exists():
            continue
        if ".." in local.parts:
            raise InputError(f"{where}: its stored model path {printable(m)!r} climbs out of "
                             f"the directory the run was started in; cd {printable(str(base))} "
                             "and rerun the command that made it")
        links[m] = (base / local).resolve()
    return links


def _rebased(config: dict[str, Any], base: Path) -> dict[str, Any]:
    """``config`` with relative model paths made absolute against ``base``, to check it (the
    run keeps their spelling: its cell keys use it)."""
    models = config.get("models")
    if not isinstance(models, list):
        return config
    out = []
    for m in models:
        local = Path(str(m)).expanduser()
        out.append(str(base / local) if isinstance(m, str) and not local.is_absolute()
                   and (base / local).exists() else m)
    return {**config, "models": out}


def started_in(run_dir: Path, command: str | None) -> Path:
    """The directory a run of an earlier version was started in: where its stored command's
    ``--out`` (when relative) points at ``run_dir`` from, else ``run_dir``'s parent."""
    try:
        tokens = shlex.split(command or "")
    except ValueError:
        tokens = []
    out = None
    for i, tok in enumerate(tokens):
        if tok == "--out" and i + 1 < len(tokens):
            out = tokens[i + 1]
        elif tok.startswith("--out="):
            out = tok.split("=", 1)[1]
    if out and not Path(out).is_absolute():
        base = run_dir
        for _ in Path(out).parts:
            base = base.parent
        if (base / out).resolve() == run_dir:
            return base
    return run_dir.parent
