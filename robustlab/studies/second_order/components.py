"""Second-order attacks (paper 002) built from TextAttack's own four parts.

* goal function :class:`SecondOrderGoal`: success when F(x̃; p) ≠ 0, i.e. the prediction on x̃
  and on x̃ ⊕ p differ (Eq. 2). Each candidate x̃ costs two model inputs (x̃, x̃ ⊕ p) sent in one
  batch through the single choke point :meth:`SecondOrderGoal._query`, which batches, counts
  every sentence sent to the model (``model_queries``) and times the forward passes. The
  single-word patch predictions are cached across examples but charged to every example that
  needs them, so an example's ``model_queries`` is the same whether it is attacked alone or
  after others (``total_model_queries`` is what really reached the model);
* transformation :class:`NeighbourSwap`: one substitution from a neighbourhood source
  (Algorithm 1, one step), never on the patch word, never inserting p1/p2;
* constraints: :class:`PatchFrozen` (pre-transformation) and TextAttack's ``MaxWordsPerturbed``
  (the ℓ0 ball around the original);
* search methods :class:`BeamSearch` (Algorithm 2), :class:`Enumerate` (SO-Enum) and
  :class:`RandomWalks` (the random baseline of Appendix A.1).

Scores: TextAttack maximises ``score``; here score = −L(x̃; p) with the loss of Eq. 4,
L = −log(1 − f_min) − log(f_max). Binary models use f_soft = P(class 1). Multi-class models
(documented extension): F ≠ 0 means the predicted class changes, and f_soft = P(c) with c the
prediction on the original sentence. A sentence with no applicable patch pair, an empty
sentence, or a model output with NaN/inf is **skipped** with a reason in
``attacked_text.attack_attrs["skip_reason"]``. If x0 itself already has F(x0; p) ≠ 0 the attack
is successful with ℓ0 = 0 (Neighbor_0(x0) = {x0}).
"""

from __future__ import annotations

import logging
import math
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustlab.errors import RobustlabError
from robustlab.resources import ensure_textattack

with warnings.catch_warnings():
    # import-time noise of TextAttack's dependencies (jieba's "pkg_resources is deprecated",
    # Deprecation/FutureWarnings of flair, nltk, ...) printed on every run; filters are restored
    # after the import, so the user's own code still sees its warnings
    for _category in (DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.simplefilter("ignore", _category)
    warnings.filterwarnings("ignore", message=r"pkg_resources is deprecated", category=UserWarning)
    ensure_textattack()

    import torch  # noqa: E402
    from textattack.constraints import PreTransformationConstraint  # noqa: E402
    from textattack.goal_function_results import (  # noqa: E402
        ClassificationGoalFunctionResult,
        GoalFunctionResultStatus,
    )
    from textattack.goal_functions import GoalFunction  # noqa: E402
    from textattack.shared import AttackedText  # noqa: E402
    from textattack.shared import logger as ta_logger  # noqa: E402
    from textattack.transformations import Transformation  # noqa: E402

from robustlab.studies.second_order.neighbourhood import (  # noqa: E402
    NeighbourhoodSource,
    match_case,
    word_spans,
)
from robustlab.studies.second_order.patch_words import Patch, PatchSelector  # noqa: E402

EPS = 1e-12
#: the fast AttackedText construction relies on textattack 0.3.x's private fields
_FAST_OK = all(hasattr(AttackedText("a b"), f) for f in
               ("_text_input", "_words", "_words_per_input", "_pos_tags", "_ner_tags"))
SUCCEEDED = GoalFunctionResultStatus.SUCCEEDED


class NonFiniteOutput(RobustlabError):
    """The victim model returned NaN or infinite probabilities."""


@contextmanager
def textattack_quiet():
    """TextAttack's logger at ERROR (and its ``logger.warn`` DeprecationWarning muted) while
    robustlab sets up TextAttack objects whose warnings do not apply: ``GoalFunction.__init__``
    warns "No entry found for goal function" and "Unknown if model ... compatible" for every
    goal function TextAttack does not list, i.e. for every second-order attack. Errors stay
    visible; the level is restored afterwards."""
    old = ta_logger.level
    ta_logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r".*'warn' method is deprecated",
                                    category=DeprecationWarning)
            yield
    finally:
        ta_logger.setLevel(old)


# ---- the quantities of the paper (pure functions, tested against hand-computed values) ----------


def f_soft(proba: np.ndarray, cls: int = 1) -> float:
    """Probability output used by Eq. 4/6: P(class ``cls``) (binary: the positive class)."""
    return float(np.asarray(proba)[cls])


def prediction_change(p_x: np.ndarray, p_xp: np.ndarray) -> int:
    """F(x; p) = f(x ⊕ p) − f(x) for binary models (−1, 0, 1); multi-class: 1 if changed."""
    a, b = int(np.argmax(p_x)), int(np.argmax(p_xp))
    if len(p_x) == 2:
        return b - a
    return int(a != b)


def soft_change(p_x: np.ndarray, p_xp: np.ndarray, cls: int = 1) -> float:
    """F_soft(x; p) = f_soft(x ⊕ p) − f_soft(x) (Eq. 6)."""
    return f_soft(p_xp, cls) - f_soft(p_x, cls)


def beam_loss(fx: float, fxp: float) -> float:
    """Eq. 4: −log(1 − f_min) − log(f_max) over the pair (f_soft(x), f_soft(x ⊕ p))."""
    lo, hi = min(fx, fxp), max(fx, fxp)
    return -math.log(max(1.0 - lo, EPS)) - math.log(max(hi, EPS))


# ---- shared per-example state ----------------------------------------------------------------


@dataclass
class AttackState:
    """What the goal, transformation and constraint share for the example being attacked."""

    patch: Patch | None = None
    cls: int = 1
    skip_reason: str | None = None
    model_queries: int = 0
    model_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def apply_patch(attacked_text: Any, patch: Patch) -> Any:
    """x ⊕ p: p1 at its (fixed) position replaced by p2, keeping the case of p1."""
    words = attacked_text.words
    return attacked_text.replace_word_at_index(patch.index, match_case(words[patch.index], patch.p2))


def spans_of(attacked_text: Any) -> list[tuple[int, int]]:
    """Word spans of an AttackedText, cached on the object (swaps derive them from the parent)."""
    spans = getattr(attacked_text, "_rl_spans", None)
    if spans is None:
        spans = word_spans(attacked_text.text, attacked_text.words)
        attacked_text._rl_spans = spans
    return spans


def _fast_attacked_text(cls: type, text: str, words: list[str], attrs: dict) -> Any:
    """An AttackedText whose words are known: skips ``__init__``'s re-tokenisation (the single
    largest non-model cost of the search). Mirrors textattack 0.3.11's ``__init__``."""
    at = cls.__new__(cls)
    at._text_input = OrderedDict([("text", text)])
    at._words, at._words_per_input = words, None
    at._pos_tags = at._ner_tags = None
    at.attack_attrs = attrs
    return at


def patched_input(attacked_text: Any, patch: Patch) -> Any:
    """The model input of x ⊕ p. Single-text inputs take a string splice (TextAttack's
    ``replace_word_at_index`` re-tokenises the sentence, which dominated the non-model time);
    multi-column inputs go through :func:`apply_patch`."""
    if len(attacked_text._text_input) != 1:
        return apply_patch(attacked_text, patch).tokenizer_input
    text, words = attacked_text.text, attacked_text.words
    start, end = spans_of(attacked_text)[patch.index]
    if start < 0:
        return apply_patch(attacked_text, patch).tokenizer_input
    return text[:start] + match_case(words[patch.index], patch.p2) + text[end:]


class SecondOrderResult(ClassificationGoalFunctionResult):
    """raw_output has two rows: probabilities of x̃ and of x̃ ⊕ p; displays x̃'s row."""

    @property
    def proba(self) -> np.ndarray:
        return np.asarray(self.raw_output[0])

    @property
    def patched_proba(self) -> np.ndarray:
        return np.asarray(self.raw_output[1])

    @property
    def _processed_output(self):
        from textattack.shared import utils

        label = int(self.raw_output[0].argmax())
        return label, utils.color_from_label(label)

    def get_colored_output(self, color_method=None):
        return self._colored(0, color_method)

    def get_colored_patched_output(self, color_method=None):
        """f(x̃ ⊕ p), as :meth:`get_colored_output` shows f(x̃)."""
        return self._colored(1, color_method)

    def _colored(self, row: int, color_method=None) -> str:
        from textattack.shared import utils

        label = int(self.raw_output[row].argmax())
        conf = float(self.raw_output[row][label])
        return f"{utils.color_text(str(label), utils.color_from_label(label), color_method)} " \
               f"({conf:.0%})"


class SecondOrderGoal(GoalFunction):
    """F(x̃; p) ≠ 0 over a TextAttack ``ModelWrapper`` returning class probabilities/logits."""

    def __init__(self, model_wrapper: Any, *, pairs: Any = None, blacklist: Sequence[str] = (),
                 query_budget: float = float("inf"), model_batch_size: int = 512,
                 state: AttackState | None = None, lm_check: Any = None) -> None:
        with textattack_quiet():  # its model/goal compatibility table does not list ours
            super().__init__(model_wrapper, maximizable=False, use_cache=True,
                             query_budget=query_budget, model_batch_size=model_batch_size)
        self.state = state or AttackState()
        self.selector = PatchSelector(pairs, blacklist=blacklist, lm_check=lm_check)
        self.total_model_queries = 0
        self.total_model_seconds = 0.0

    # the one choke point for every model call of the attack
    def _query(self, inputs: list[Any]) -> np.ndarray:
        t0 = time.perf_counter()
        outs = []
        for i in range(0, len(inputs), self.batch_size):
            out = self.model(inputs[i: i + self.batch_size])
            if isinstance(out, torch.Tensor):
                out = out.detach().cpu().numpy()
            outs.append(np.asarray(out, dtype=np.float64).reshape(len(inputs[i: i + self.batch_size]), -1))
        probs = np.concatenate(outs) if outs else np.zeros((0, 2))
        dt = time.perf_counter() - t0
        self.state.model_queries += len(inputs)
        self.state.model_seconds += dt
        self.total_model_queries += len(inputs)
        self.total_model_seconds += dt
        if not np.isfinite(probs).all():
            bad = int(np.flatnonzero(~np.isfinite(probs).all(axis=1))[0])
            raise NonFiniteOutput(f"the model returned NaN/inf probabilities for {inputs[bad]!r}")
        rows = probs.sum(axis=1)
        if len(probs) and not (np.abs(rows - 1) < 1e-4).all():  # logits: softmax them
            e = np.exp(probs - probs.max(axis=1, keepdims=True))
            probs = e / e.sum(axis=1, keepdims=True)
        return probs

    def init_attack_example(self, attacked_text, ground_truth_output):
        self.clear_cache()  # cached outputs depend on the previous example's patch
        st = self.state
        st.patch, st.skip_reason, st.model_queries, st.model_seconds = None, None, 0, 0.0
        st.cls = 1
        words = attacked_text.words
        if not words:
            st.skip_reason = "empty sentence (no words)"
        else:
            try:
                st.patch = self.selector.choose(words, lambda ws: self._query(list(ws)))
            except NonFiniteOutput as exc:
                st.skip_reason = str(exc)
            else:
                # charge every single-word input this sentence needs, cached or not: the
                # per-example count must not depend on the examples attacked before it
                st.model_queries = self.selector.last_queries
                if st.patch is None and self.selector.last_lm_rejected:
                    st.skip_reason = (f"no patch word: all {self.selector.last_lm_rejected} "
                                      "candidate pairs fail the language-model check")
                elif st.patch is None:
                    st.skip_reason = ("no patch word: no candidate pair has p1 exactly once "
                                      "and p2 absent in this sentence")
        if st.skip_reason is None:
            try:
                p0 = self._query([attacked_text.tokenizer_input])[0]
                st.cls = 1 if len(p0) == 2 else int(np.argmax(p0))
            except NonFiniteOutput as exc:
                st.skip_reason = str(exc)
        if st.skip_reason is not None:
            attacked_text.attack_attrs["skip_reason"] = st.skip_reason
        return super().init_attack_example(attacked_text, ground_truth_output)

    def _call_model_uncached(self, attacked_text_list):
        if not attacked_text_list:
            return []
        st = self.state
        if st.patch is None or st.skip_reason is not None:
            n = len(attacked_text_list)
            return [np.full((2, 2), 0.5) for _ in range(n)]
        inputs = []
        for at in attacked_text_list:
            inputs += [at.tokenizer_input, patched_input(at, st.patch)]
        try:
            probs = self._query(inputs)
        except NonFiniteOutput as exc:
            st.skip_reason = str(exc)
            return [np.full((2, 2), 0.5) for _ in attacked_text_list]
        # numpy rows: the per-candidate argmax/score below are several times cheaper than torch
        return list(probs.reshape(len(attacked_text_list), 2, -1))

    def _process_model_outputs(self, inputs, outputs):
        return outputs

    def _should_skip(self, model_output, attacked_text):
        return self.state.skip_reason is not None

    def _is_goal_complete(self, model_output, attacked_text):
        if self.state.skip_reason is not None:
            return False
        return bool(int(model_output[0].argmax()) != int(model_output[1].argmax()))

    def _get_score(self, model_output, attacked_text):
        c = self.state.cls
        return -beam_loss(float(model_output[0][c]), float(model_output[1][c]))

    def _get_displayed_output(self, raw_output):
        return int(raw_output[0].argmax())

    def _goal_function_result_type(self):
        return SecondOrderResult

    def extra_repr_keys(self):
        return ["batch_size"] + super().extra_repr_keys()


class PatchFrozen(PreTransformationConstraint):
    """Never substitute the patch word p1 (its position is fixed: swaps keep word counts)."""

    def __init__(self, state: AttackState) -> None:
        self.state = state

    def _get_modifiable_indices(self, current_text):
        idx = set(range(len(current_text.words)))
        if self.state.patch is not None:
            idx.discard(self.state.patch.index)
        return idx


class NeighbourSwap(Transformation):
    """Neighbor_1: one word replaced by a candidate from a neighbourhood source."""

    def __init__(self, source: NeighbourhoodSource, state: AttackState) -> None:
        self.source, self.state = source, state
        self.source_name = source.name  # for TextAttack's printout of the attack

    @property
    def deterministic(self) -> bool:
        return True

    def _exclude(self) -> set[str]:
        p = self.state.patch
        return {p.p1, p.p2} if p is not None else set()

    def _positions(self, at: Any) -> list[int]:
        p = self.state.patch
        return [i for i in range(len(at.words)) if p is None or i != p.index]

    def prefetch(self, texts: Iterable[Any]) -> None:
        """Ask the source for every text at once (one batched masked-LM pass)."""
        items = [(t.text, t.words, self._positions(t)) for t in texts]
        if items:
            self.source.candidates_many(items, self._exclude())

    def swap(self, current_text: Any, i: int, word: str,
             spans: list[tuple[int, int]] | None = None) -> Any:
        """One substitution. Single-text inputs are spliced into a new AttackedText whose words
        and spans are derived from the parent (TextAttack's ``replace_word_at_index``
        re-tokenises once per word); the attack attributes TextAttack keeps are carried over."""
        if len(current_text._text_input) != 1 or not _FAST_OK:
            return current_text.replace_word_at_index(i, word)
        text = current_text.text
        spans = spans_of(current_text)
        start, end = spans[i]
        if start < 0:
            return current_text.replace_word_at_index(i, word)
        attrs = current_text.attack_attrs
        words = list(current_text.words)
        words[i] = word
        new = _fast_attacked_text(type(current_text), text[:start] + word + text[end:], words, {
            "original_index_map": attrs["original_index_map"],  # word count is unchanged
            "modified_indices": set(attrs["modified_indices"]) | {i},
            "newly_modified_indices": {i},
            "previous_attacked_text": current_text,
            "last_transformation": self,
        })
        shift = len(word) - (end - start)
        new._rl_spans = spans[:i] + [(start, start + len(word))] + [
            (a + shift, b + shift) if a >= 0 else (a, b) for a, b in spans[i + 1:]]
        return new

    def candidates(self, current_text: Any, indices: Iterable[int]) -> dict[int, list[str]]:
        return self.source.candidates(current_text.text, current_text.words, sorted(indices),
                                      self._exclude())

    def _get_transformations(self, current_text, indices_to_modify):
        cands = self.candidates(current_text, indices_to_modify)
        return [self.swap(current_text, i, w) for i in sorted(cands) for w in cands[i]]

    def extra_repr_keys(self):
        return ["source_name"]  # TextAttack prints the attack: show which neighbourhood

    def __repr__(self) -> str:
        return f"NeighbourSwap(source={self.source.name})"


__all__ = ["AttackState", "NeighbourSwap", "NonFiniteOutput", "PatchFrozen", "SecondOrderGoal",
           "apply_patch", "beam_loss", "f_soft", "patched_input",
           "prediction_change", "soft_change", "textattack_quiet"]
