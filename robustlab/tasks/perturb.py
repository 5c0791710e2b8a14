"""How a perturbation applies to a task's examples.

Texts (single texts, pairs, questions) go through the perturbation's own batch path
(:meth:`~robustlab.perturbations.Perturbation.perturb_outcomes`), so a text perturbed here is
exactly the text ``robustlab perturb`` gives for it. Tagged sentences are perturbed as their
tokens joined by single spaces, and the output is mapped back to tokens by
:func:`robustlab.tasks.align.align` with the perturbation's alignment kind
(:func:`alignment_kind`). A perturbation whose edits cannot be followed is refused for tags with
one line naming why; one sentence whose output cannot be aligned is left unperturbed with the
reason as its error, counted like any failed text, never tagged by guess.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from robustlab.errors import InputError
from robustlab.tasks.align import AlignmentError, align, carry_tags
from robustlab.tasks.examples import TaggedExample

__all__ = [
    "ALIGNMENT_KINDS",
    "REFUSED_FOR_TAGS",
    "Perturbed",
    "TaskError",
    "alignment_kind",
    "perturb_tagged",
    "perturb_texts",
]


class TaskError(InputError):
    """A task cannot do what was asked (unknown task, a perturbation it refuses, a bad field)."""


@dataclass(frozen=True)
class Perturbed:
    """One example after a perturbation: the new example, whether it changed, the error that
    left it unchanged, and for tagged sentences the alignment of its tokens to the original's
    (``alignment[j]``: the original token of perturbed token j, None for a new word)."""

    original: Any
    example: Any
    changed: bool
    error: str | None = None
    alignment: tuple[int | None, ...] | None = None


#: how each built-in perturbation moves tokens (:mod:`robustlab.tasks.align`)
ALIGNMENT_KINDS = {
    **dict.fromkeys(("char_insert", "char_delete", "char_keyboard", "char_swap", "char_repeat",
                     "letter_case", "misspelling", "word_synonym", "identity",
                     "butter_fingers_perturbation", "random_upper_transformation",
                     "visual_attack_letters", "leet_letters", "duplicate_punctuations"),
                    "in-place"),
    "word_delete": "delete",
    "word_repeat": "repeat",
    "word_order": "reorder",
    **dict.fromkeys(("negation", "verb_tense", "singular_plural_verb", "append_token"),
                    "rewrite"),
}
#: built-ins that cannot keep tags on their tokens, and why
REFUSED_FOR_TAGS = {
    "whitespace_perturbation": "it splits words and joins neighbours at spaces, so a token's "
                               "tag has no single token to follow",
    "shuffle_word": "it shuffles the words of the whole sentence, and a sentence of repeated "
                    "words cannot say which copy went where",
    "insert_abbreviation": "it replaces several words by one abbreviation (and back), which "
                           "merges tokens of different tags",
}


def alignment_kind(perturbation: Any) -> str:
    """The alignment kind of ``perturbation`` for tagged sentences, or :class:`TaskError`
    naming why its tags cannot follow. A character-level perturbation robustlab does not know
    is taken as in-place (each output is still checked token by token)."""
    name = getattr(perturbation, "name", type(perturbation).__name__)
    if name in REFUSED_FOR_TAGS:
        raise TaskError(f"perturbation {name} is refused for NER: {REFUSED_FOR_TAGS[name]}")
    kind = ALIGNMENT_KINDS.get(name)
    if kind is None and getattr(perturbation, "level", None) == "character":
        kind = "in-place"
    if kind is None:
        raise TaskError(f"perturbation {name} is refused for NER: robustlab does not know how "
                        "its edits move words, so tags could not follow them (known: "
                        f"{', '.join(sorted(ALIGNMENT_KINDS))})")
    return kind


def perturb_texts(perturbation: Any, texts: Sequence[str], seed: int) -> list[tuple[str, str | None]]:
    """(output, error) for each text, through the perturbation's batch path; a text that is
    empty or blank is passed through unperturbed (there is nothing to edit)."""
    texts = list(texts)
    todo = sorted({t for t in texts if t.strip()})
    outs = {o.original: (o.text, o.error)
            for o in perturbation.perturb_outcomes(todo, seed)} if todo else {}
    return [outs.get(t, (t, None)) for t in texts]


def perturb_tagged(examples: Sequence[TaggedExample], perturbation: Any,
                   seed: int) -> list[Perturbed]:
    """Perturb tagged sentences; tags follow their tokens (module docstring)."""
    kind = alignment_kind(perturbation)
    outs = perturb_texts(perturbation, [ex.text for ex in examples], seed)
    result = []
    for ex, (text, error) in zip(examples, outs, strict=True):
        same = tuple(range(len(ex.tokens)))
        if error is not None or text == ex.text:
            result.append(Perturbed(ex, ex, False, error, same))
            continue
        new = tuple(text.split())
        try:
            if not new:
                raise AlignmentError("the perturbation removed every word")
            alignment = align(ex.tokens, new, kind, ex.tags)
        except AlignmentError as exc:
            result.append(Perturbed(ex, ex, False, f"cannot align tags: {exc}", same))
            continue
        columns = ()
        if ex.columns:
            blank = ("-X-",) * len(ex.columns[0])
            columns = tuple(ex.columns[src] if src is not None and ex.tokens[src] == tok
                            else blank for src, tok in zip(alignment, new, strict=True))
        out = TaggedExample(new, carry_tags(ex.tags, alignment), columns, ex.doc_start)
        result.append(Perturbed(ex, out, out.tokens != ex.tokens, None, alignment))
    return result
