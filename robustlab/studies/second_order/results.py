"""TextAttack's attack results, displayed as second-order examples.

A second-order success is the pair (x̃, x̃ ⊕ p): the prediction changes when the patch word p1 is
swapped for p2, not between x0 and x̃. TextAttack's own display shows f(x0) → f(x̃), which for a
success is usually ``[[1]] --> [[1]]`` with no patch words anywhere. These subclasses keep
TextAttack's classes (``isinstance`` checks, metrics, the CSV's ``result_type``: the class names
are TextAttack's on purpose, so results stay "Successful"/"Failed"/"Skipped") and only change
what is printed: the goal line reads f(x0) → f(x̃) →(p1 → p2)→ f(x̃ ⊕ p), and a success shows
x0, x̃ and x̃ ⊕ p with the changed words marked. ``diff_color`` (x0 vs x̃, used by CSV loggers and
robustlab's results.jsonl) is TextAttack's, unchanged.

:class:`SecondOrderAttack` attaches the patch and the skip reason to every result it returns.
"""

from __future__ import annotations

from typing import Any

# first: TextAttack imported offline and without its dependencies' import-time warnings
from robustlab.studies.second_order.components import apply_patch  # isort: skip

from textattack import Attack
from textattack.attack_results import FailedAttackResult as _TAFailed
from textattack.attack_results import SkippedAttackResult as _TASkipped
from textattack.attack_results import SuccessfulAttackResult as _TASuccessful
from textattack.shared import utils

#: how the patch word is marked (TextAttack's colours: "[[w]]" with color_method="file")
PATCH_COLOR = "blue"


class _SecondOrderDisplay:
    """What every second-order result adds: the patch and why an example was skipped."""

    patch: Any = None  # robustlab.studies.second_order.patch_words.Patch
    skip_reason: str | None = None

    def patch_str(self, color_method: str | None = None) -> str:
        if self.patch is None:
            return "(no patch pair)"
        arrow = f"{self.patch.p1} → {self.patch.p2}"
        return utils.color_text(arrow, PATCH_COLOR, color_method)

    def patched_text(self, color_method: str | None = None) -> str:
        """x̃ ⊕ p with the patch word marked (x̃ is the perturbed text)."""
        xt = apply_patch(self.perturbed_result.attacked_text, self.patch)
        i = self.patch.index
        marked = xt.replace_words_at_indices(
            [i], [utils.color_text(xt.words[i], PATCH_COLOR, color_method)])
        return marked.printable_text(key_color=("bold", "underline"),
                                     key_color_method=color_method)


class SuccessfulAttackResult(_SecondOrderDisplay, _TASuccessful):
    """A vulnerable example x̃: f(x̃) ≠ f(x̃ ⊕ p)."""

    def goal_function_result_str(self, color_method=None):
        orig = self.original_result.get_colored_output(color_method)
        pert = self.perturbed_result.get_colored_output(color_method)
        patched = self.perturbed_result.get_colored_patched_output(color_method)
        return f"{orig} --> {pert} --({self.patch_str(color_method)})--> {patched}"

    def str_lines(self, color_method=None):
        x0, xt = self.diff_color(color_method)
        return [self.goal_function_result_str(color_method), x0, xt,
                self.patched_text(color_method)]


class FailedAttackResult(_SecondOrderDisplay, _TAFailed):
    """No vulnerable example within the search's ℓ0 ball and budget."""

    def goal_function_result_str(self, color_method=None):
        return f"{super().goal_function_result_str(color_method)} " \
               f"(patch {self.patch_str(color_method)})"


class SkippedAttackResult(_SecondOrderDisplay, _TASkipped):
    """Not attacked: no patch pair, an empty sentence or a non-finite model output (never
    because the model misclassifies x0: second-order attacks attack those too)."""

    def goal_function_result_str(self, color_method=None):
        skipped = utils.color_text("[SKIPPED]", "gray", color_method)
        return f"{skipped} {self.skip_reason or ''}".rstrip()


_DISPLAY = {_TASuccessful: SuccessfulAttackResult, _TAFailed: FailedAttackResult,
            _TASkipped: SkippedAttackResult}


class SecondOrderAttack(Attack):
    """``textattack.Attack`` whose results display the patch pair (see module docstring).

    The result is TextAttack's, with the same fields, in the display subclass (plus the patch
    and skip reason), so what is found, counted and logged is exactly what ``Attack``
    computes."""

    def attack(self, example, ground_truth_output):
        result = super().attack(example, ground_truth_output)
        cls = _DISPLAY.get(type(result))
        if cls is None:
            return result
        shown = cls.__new__(cls)
        shown.__dict__.update(result.__dict__)
        shown.patch, shown.skip_reason = self.so_state.patch, self.so_state.skip_reason
        return shown

    def __repr__(self) -> str:
        """TextAttack prints the attack before its results: say there how to read its summary
        (the stock ``textattack attack`` cannot be given a second-order summary table)."""
        base = super().__repr__()
        note = ("  (note):  misclassified examples are attacked, not skipped (skipped = no patch "
                "pair); TextAttack's own 'Original accuracy' row then means the share with a "
                "patch pair\n")
        return base[:-1] + note + base[-1:] if base.endswith(")") else f"{base}\n{note}"

    __str__ = __repr__  # as in Attack, whose __str__ is bound to its own __repr__


def is_second_order(attack: Any) -> bool:
    return hasattr(attack, "so_state")


__all__ = ["FailedAttackResult", "SecondOrderAttack", "SkippedAttackResult",
           "SuccessfulAttackResult", "is_second_order"]
