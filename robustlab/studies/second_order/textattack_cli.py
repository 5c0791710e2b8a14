"""TextAttack's own CLI and ``Attacker`` with robustlab's second-order recipes, victims and data.

Used by ``robustlab textattack`` (TextAttack's CLI, run in-process):

* :func:`register_recipes`: ``--recipe so-beam|so-enum|so-random`` become valid recipe names;
* :func:`cli_hooks`: while TextAttack's ``attack`` command runs, ``--model`` also accepts a
  directory saved by ``robustlab train`` or a robustlab family name (TextAttack's own loader
  only knows its folders with ``config.json``: any other existing directory ended in an
  ``UnboundLocalError``), ``--dataset-from-huggingface`` also accepts a data file or ``demo``
  (read by :func:`robustlab.data.datasets.load_examples`, offline), and the ``Attacker`` is
  :class:`SecondOrderAttacker`;
* :class:`SecondOrderAttacker`: TextAttack's ``Attacker`` whose summary and CSV are right for
  second-order attacks (:class:`SecondOrderLogManager`, :class:`SecondOrderCSVLogger`); other
  attacks run exactly as with TextAttack's.

Everything TextAttack itself names (its models, hub datasets, recipes) goes to TextAttack
unchanged.
"""

from __future__ import annotations

import contextlib
import re
import statistics
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

# first: TextAttack imported offline and without its dependencies' import-time warnings
from robustlab.studies.second_order.components import textattack_quiet  # isort: skip

import textattack
from textattack.loggers import AttackLogManager, CSVLogger

from robustlab.studies.second_order.results import is_second_order
from robustlab.textfmt import printable


def register_recipes(argv: list[str] = ()) -> None:
    """Make ``--recipe so-beam|so-enum|so-random`` valid in TextAttack's argument parser.

    TextAttack documents ``--recipe NAME^key=value,...`` (keyword arguments for ``build``), but
    its parser only accepts the exact names; so a ``so-*^...`` value found in ``argv`` is
    registered as a name too, and TextAttack then splits it and passes the keywords."""
    import importlib

    import textattack.attack_args as aa

    import robustlab.studies.second_order.study  # binds robustlab: TextAttack evals its path
    from robustlab.studies.second_order.study import RECIPES

    for name, module in RECIPES.items():
        importlib.import_module(module)
        aa.ATTACK_RECIPE_NAMES[name] = module  # eval'd as f"{value}.build(model_wrapper)"
    for flag, value in zip(argv, list(argv)[1:], strict=False):
        if flag in ("--recipe", "--attack-recipe", "-r") and value.split("^")[0] in RECIPES:
            aa.ATTACK_RECIPE_NAMES[value] = RECIPES[value.split("^")[0]]
    aa.robustlab = robustlab  # the eval runs in attack_args' namespace


# ---- summary and CSV ----------------------------------------------------------------------------


def _pct(num: int, den: int) -> str:
    return f"{100.0 * num / den:.2f}%" if den else "n/a"


def summary_rows(results: list[Any]) -> list[list[Any]]:
    """TextAttack's summary table, counted for second-order attacks.

    TextAttack's "Original accuracy" is (total − skipped) / total because its attacks skip the
    examples the model already gets wrong. Second-order attacks never do (success is about the
    patch pair, not the label): they skip only examples without a patch pair, so here original
    accuracy is counted from f(x0) and the ground truth of the attacked examples, and the
    misclassified ones are reported as attacked."""
    from textattack.attack_results import (
        FailedAttackResult,
        SkippedAttackResult,
        SuccessfulAttackResult,
    )

    succ = [r for r in results if isinstance(r, SuccessfulAttackResult)]
    failed = [r for r in results if isinstance(r, FailedAttackResult)]
    skipped = [r for r in results if isinstance(r, SkippedAttackResult)]
    attacked = succ + failed
    correct = sum(r.original_result.output == r.original_result.ground_truth_output
                  for r in attacked)
    l0 = [len(r.original_result.attacked_text.all_words_diff(r.perturbed_result.attacked_text))
          for r in succ]
    queries = [r.num_queries for r in results if not isinstance(r, SkippedAttackResult)]
    return [
        ["Number of successful attacks:", len(succ)],
        ["Number of failed attacks:", len(failed)],
        ["Number of skipped attacks (no patch pair):", len(skipped)],
        ["Original accuracy (attacked examples):", _pct(correct, len(attacked))],
        ["Misclassified examples attacked:", len(attacked) - correct],
        ["Attack success rate:", _pct(len(succ), len(attacked))],
        ["Mean l0 of successful attacks:", f"{statistics.fmean(l0):.2f}" if l0 else "n/a"],
        ["Avg num queries:", f"{statistics.fmean(queries):.2f}" if queries else "n/a"],
        ["Note:", "misclassified examples are attacked too (not skipped)"],
    ]


class SecondOrderLogManager(AttackLogManager):
    """TextAttack's log manager with :func:`summary_rows` as the summary table."""

    def log_summary(self):
        if not self.results:
            return
        rows = summary_rows(self.results)
        for metric_name, metric in self.metrics.items():
            rows.append([metric_name, metric.calculate(self.results)])
        self.log_summary_rows(rows, "Attack Results", "attack_results_summary")


class SecondOrderCSVLogger(CSVLogger):
    """TextAttack's CSV columns plus ``patch_words`` (p1->p2), ``patched_text`` (x̃ ⊕ p with the
    patch word marked), ``patched_output`` (f(x̃ ⊕ p)) and ``l0``."""

    def log_attack_result(self, result):
        super().log_attack_result(result)
        patch = getattr(result, "patch", None)
        row = self.row_list[-1]
        row["patch_words"] = f"{patch.p1}->{patch.p2}" if patch is not None else ""
        row["patched_text"] = row["patched_output"] = row["l0"] = ""  # keeps the ints ints
        if type(result).__name__ == "SuccessfulAttackResult" and patch is not None:
            row["patched_text"] = result.patched_text(self.color_method)
            row["patched_output"] = int(result.perturbed_result.raw_output[1].argmax())
            row["l0"] = len(result.original_result.attacked_text.all_words_diff(
                result.perturbed_result.attacked_text))
        import pandas as pd

        self.df = pd.DataFrame.from_records(self.row_list)


def second_order_loggers(manager: AttackLogManager) -> SecondOrderLogManager:
    """The same loggers as ``manager`` (from TextAttack's own ``--log-to-*`` handling), with the
    second-order summary and CSV columns."""
    out = SecondOrderLogManager(manager.metrics)
    out.enable_advance_metrics = manager.enable_advance_metrics
    for lg in manager.loggers:
        if type(lg) is CSVLogger:
            so = SecondOrderCSVLogger.__new__(SecondOrderCSVLogger)
            so.__dict__.update(lg.__dict__)
            lg._flushed = True  # replaced, not lost: no "exiting without flush" warning
            lg = so
        out.loggers.append(lg)
    return out


class EscapingStream:
    """A text stream that escapes every control character written to it
    (:func:`robustlab.textfmt.printable`, newlines and tabs kept) except the exact sequences in
    ``keep``. TextAttack's stdout logger prints the dataset's texts with its own colour codes
    around words: the texts are data, so an OSC (terminal title, clipboard), a screen clear or
    an 8-bit CSI in them is shown escaped, while TextAttack's colours still reach the terminal
    (a text holding one of those very colour codes can recolour the printout, nothing more)."""

    def __init__(self, stream: Any, keep: Iterable[str]) -> None:
        self._stream = stream
        codes = sorted(set(keep), key=len, reverse=True)
        self._split = re.compile("(" + "|".join(map(re.escape, codes)) + ")") if codes else None

    def write(self, text: str) -> int:
        parts = self._split.split(text) if self._split else [text]
        # re.split with one group: the kept codes are at the odd indices
        return self._stream.write("".join(part if i % 2 else printable(part, lines=True)
                                          for i, part in enumerate(parts)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def textattack_colours() -> list[str]:
    """Every escape sequence TextAttack's ``color_text(..., "ansi")`` emits."""
    from textattack.shared.utils.strings import ANSI_ESCAPE_CODES

    return [v for k, v in vars(ANSI_ESCAPE_CODES).items()
            if not k.startswith("_") and isinstance(v, str) and v.startswith("\033[")]


def escape_stdout_loggers(manager: AttackLogManager) -> AttackLogManager:
    """Route the stdout loggers of ``manager`` through :class:`EscapingStream`."""
    from textattack.loggers import FileLogger

    for lg in manager.loggers:
        if isinstance(lg, FileLogger) and lg.stdout and not isinstance(lg.fout, EscapingStream):
            lg.fout = EscapingStream(lg.fout, textattack_colours())
    return manager


class SecondOrderAttacker(textattack.Attacker):
    """``textattack.Attacker``; for a second-order attack its logs use
    :class:`SecondOrderLogManager` (summary) and :class:`SecondOrderCSVLogger` (CSV). For every
    attack the examples printed on stdout go through :func:`escape_stdout_loggers`."""

    def attack_dataset(self):
        if self.attack_log_manager is None:
            manager = textattack.AttackArgs.create_loggers_from_args(self.attack_args)
            self.attack_log_manager = (second_order_loggers(manager)
                                       if is_second_order(self.attack) else manager)
        escape_stdout_loggers(self.attack_log_manager)
        return super().attack_dataset()


# ---- robustlab victims and data inside TextAttack's CLI ------------------------------------------


def is_robustlab_model(spec: str | None) -> bool:
    """``--model`` values robustlab loads: a directory saved by ``robustlab train``, a family
    name (``bow``, ``textrnn:hidden=50``, ...), or a path TextAttack cannot load (a missing one,
    or a directory without ``config.json``), so that the user gets robustlab's message.
    TextAttack's own model names and Hugging Face checkpoints stay TextAttack's."""
    from textattack.model_args import HUGGINGFACE_MODELS, TEXTATTACK_MODELS

    from robustlab.models.registry import available_models, is_saved_model, parse_model_spec

    if not spec or spec in HUGGINGFACE_MODELS or spec in TEXTATTACK_MODELS:
        return False
    if is_saved_model(spec) or parse_model_spec(spec)[0] in available_models():
        return True
    p = Path(spec).expanduser()
    if p.exists():  # TextAttack loads only directories with its config files
        return not (p.is_dir() and ((p / "config.json").is_file()
                                    or (p / "t5-wrapper-config.json").is_file()))
    return spec.startswith((".", "/", "~")) or ("/" in spec and p.parent.is_dir())


def is_robustlab_dataset(spec: Any) -> bool:
    """``--dataset-from-huggingface`` values robustlab reads: an existing file or ``demo``."""
    if not isinstance(spec, str):
        return False
    return spec.partition(":")[0] == "demo" or Path(spec).expanduser().is_file()


def load_robustlab_victim(spec: str) -> Any:
    from robustlab.integrations.victims import load_victim
    from robustlab.models.device import resolve_device

    textattack.shared.logger.info(printable(f"Loading robustlab model: {spec}"))
    return load_victim(spec, str(resolve_device("auto")))[0]


def load_robustlab_dataset(spec: str, split: str | None) -> Any:
    from robustlab.data.datasets import load_examples
    from robustlab.errors import InputError

    examples = load_examples(spec, split or "test")
    if not examples:
        raise InputError(f"--dataset-from-huggingface {spec}: no examples")
    textattack.shared.logger.info(printable(f"Loading robustlab dataset: {spec} "
                                            f"({len(examples)} examples)"))
    return textattack.datasets.Dataset(examples)


@contextlib.contextmanager
def cli_hooks() -> Iterator[None]:
    """Route robustlab models and data files through TextAttack's ``attack`` command (see the
    module docstring); TextAttack's names are restored afterwards."""
    import textattack.commands.attack_command as ac
    from textattack import DatasetArgs, ModelArgs

    class RobustlabModelArgs(ModelArgs):
        @classmethod
        def _create_model_from_args(cls, args):
            if not args.model_from_file and not args.model_from_huggingface \
                    and is_robustlab_model(args.model):
                return load_robustlab_victim(args.model)
            return ModelArgs._create_model_from_args(args)

    class RobustlabDatasetArgs(DatasetArgs):
        @classmethod
        def _create_dataset_from_args(cls, args):
            spec = args.dataset_from_huggingface
            if not args.dataset_from_file and is_robustlab_dataset(spec):
                ds = load_robustlab_dataset(spec, args.dataset_split)
                if args.filter_by_labels:
                    ds.filter_by_labels_(args.filter_by_labels)
                return ds
            return DatasetArgs._create_dataset_from_args(args)

    saved = (ac.ModelArgs, ac.DatasetArgs, ac.Attacker)
    ac.ModelArgs, ac.DatasetArgs, ac.Attacker = (RobustlabModelArgs, RobustlabDatasetArgs,
                                                 SecondOrderAttacker)
    try:
        yield
    finally:
        ac.ModelArgs, ac.DatasetArgs, ac.Attacker = saved


__all__ = ["EscapingStream", "SecondOrderAttacker", "SecondOrderCSVLogger", "SecondOrderLogManager",
           "cli_hooks", "escape_stdout_loggers", "is_robustlab_dataset", "is_robustlab_model",
           "register_recipes", "summary_rows", "textattack_colours", "textattack_quiet"]
