"""Tags follow tokens: how a perturbed sentence's tokens map back to the original ones.

A perturbation sees a tagged sentence as its tokens joined by single spaces and returns a text;
the perturbed tokens are that text split on whitespace. An **alignment** gives, for each
perturbed token, the index of the original token it comes from, or ``None`` for a new word:

* a letter-level change keeps its token's place and tag (``in-place``);
* a deleted word takes its tag with it (``delete``);
* a repeated word is a second copy of its source and carries its tag (``repeat``);
* reordered words carry their tags to their new places (``reorder``);
* rewritten verbs ("likes" -> "does not like") are new words tagged ``O``; only words outside
  entities may be rewritten (``rewrite``); an inserted word (negation's "not") is ``O``.

:func:`carry_tags` then writes valid IOB2 from any tag sequence through an alignment: tokens
coming from one original entity that stay next to each other form one entity (``B-`` then
``I-``); an entity torn apart becomes several, each starting with ``B-``. The same function
carries gold tags and a model's clean predictions, so a failure compares like with like.

Why the alignment is recovered from the output rather than recorded by the perturbation: the
perturbations are plain-text functions (their outputs on text must not change), and each class
of edit above has an output shape that pins down the alignment; :func:`align` checks that shape
and raises :class:`AlignmentError` for an output it cannot explain (a word split at a space, an
edit inside a token such as "U.S." that changes what the token is), so labels never shift.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from difflib import SequenceMatcher

__all__ = [
    "IOB2_TAG",
    "KINDS",
    "AlignmentError",
    "align",
    "carry_tags",
    "check_iob2",
    "entities",
    "iob1_to_iob2",
    "iob2_error",
]

KINDS = ("in-place", "delete", "repeat", "reorder", "rewrite")
Alignment = tuple[int | None, ...]


class AlignmentError(ValueError):
    """A perturbed text whose tokens cannot be mapped to the original ones without guessing."""


#: one IOB2 tag: ``O``, or ``B-``/``I-`` and a type without spaces
IOB2_TAG = re.compile(r"O|[BI]-\S+")


def iob2_error(tags: Sequence[str]) -> str | None:
    """Why ``tags`` is not valid IOB2 (``O``, ``B-T``, ``I-T`` after ``B-T``/``I-T``), or None."""
    prev = "O"
    for i, tag in enumerate(tags):
        if not IOB2_TAG.fullmatch(tag):
            return f"tag {i} {tag!r} is not O, B-TYPE or I-TYPE"
        if tag != "O":
            head, kind = tag[0], tag[2:]
            if head == "I" and prev[2:] != kind:
                return f"tag {i} {tag!r} follows {prev!r} (IOB2 starts every entity with B-)"
        prev = tag
    return None


def iob1_to_iob2(tags: Sequence[str]) -> tuple[str, ...]:
    """IOB1 (an entity starts with ``I-`` unless it follows one of its type) as IOB2."""
    out: list[str] = []
    prev = "O"
    for tag in tags:
        if tag.startswith("I-") and prev[2:] != tag[2:]:
            tag = "B-" + tag[2:]
        out.append(tag)
        prev = tag
    return tuple(out)


def check_iob2(tags: Sequence[str]) -> None:
    """Raise ValueError unless ``tags`` is valid IOB2."""
    why = iob2_error(tags)
    if why:
        raise ValueError(why)


def entities(tags: Sequence[str]) -> set[tuple[str, int, int]]:
    """The entities of an IOB2 sequence as (type, first token, last token + 1)."""
    out: set[tuple[str, int, int]] = set()
    start, kind = None, ""
    for i, tag in enumerate([*tags, "O"]):
        head, _, t = tag.partition("-")
        if start is not None and (head != "I" or t != kind):
            out.add((kind, start, i))
            start = None
        if head == "B" or (head == "I" and start is None):  # a stray I- starts one (conlleval)
            start, kind = i, t
    return out


def _entity_keys(tags: Sequence[str]) -> list[tuple[str, int] | None]:
    """Per token: (type, index of its entity's first token), None outside entities."""
    keys: list[tuple[str, int] | None] = [None] * len(tags)
    for kind, a, b in entities(tags):
        for i in range(a, b):
            keys[i] = (kind, a)
    return keys


def carry_tags(tags: Sequence[str], alignment: Alignment) -> tuple[str, ...]:
    """The tags of the perturbed tokens: each takes its source's entity (``O`` when new), and
    IOB2 is rewritten so adjacent tokens of one source entity form one entity."""
    keys = _entity_keys(tags)
    out: list[str] = []
    prev = None
    for src in alignment:
        key = keys[src] if src is not None else None
        if key is None:
            out.append("O")
        else:
            out.append(("I-" if key == prev else "B-") + key[0])
        prev = key
    return tuple(out)


def _with_neighbour_copies(old: Sequence[str], new: Sequence[str], tags: Sequence[str],
                           ops: list[tuple[str, int, int, int, int]]) -> Alignment:
    """For ``repeat``: equal blocks map one to one; an inserted word must be a copy of the word
    just before it (word_repeat puts the copy after its source) or, in a run of equal words,
    of the next one; it maps to that word's source."""
    keys = _entity_keys(tags)
    out: list[int | None] = [None] * len(new)
    for op, i1, i2, j1, j2 in ops:
        if op == "equal":
            out[j1:j2] = range(i1, i2)
        elif op != "insert":
            raise AlignmentError(f"a repeat changed or removed words ({' '.join(old[i1:i2])!r} "
                                 f"-> {' '.join(new[j1:j2])!r})")
    for op, i1, _i2, j1, j2 in ops:
        if op != "insert":
            continue
        for j in range(j1, j2):
            before = i1 - 1 if i1 > 0 and old[i1 - 1] == new[j] else None
            after = i1 if i1 < len(old) and old[i1] == new[j] else None
            if before is None and after is None:
                raise AlignmentError(f"the inserted word {new[j]!r} is not a copy of a whole "
                                     "neighbouring token (a repeat inside a token)")
            run = set()  # the equal words around the copy: it may come from any of them
            n = i1 - 1
            while n >= 0 and old[n] == new[j]:
                run.add(keys[n])
                n -= 1
            n = i1
            while n < len(old) and old[n] == new[j]:
                run.add(keys[n])
                n += 1
            if len(run) > 1:
                raise AlignmentError(f"the repeated word {new[j]!r} stands in a run of equal "
                                     "words of different entities or tags (ambiguous)")
            out[j] = before if before is not None else after
    return tuple(out)


def _check_deletions(old: Sequence[str], tags: Sequence[str], kept: set[int]) -> None:
    """A deleted word inside a run of equal words could be any of them: refused when the run's
    words belong to different entities (the output does not say which one went)."""
    keys = _entity_keys(tags)
    for i in set(range(len(old))) - kept:
        for step in (-1, 1):
            n = i + step
            while 0 <= n < len(old) and old[n] == old[i]:
                if keys[n] != keys[i]:
                    raise AlignmentError(f"the deleted word {old[i]!r} stands in a run of equal "
                                         "words of other entities or tags (ambiguous)")
                n += step


def align(old: Sequence[str], new: Sequence[str], kind: str,
          tags: Sequence[str]) -> Alignment:
    """The alignment of ``new`` (perturbed tokens) to ``old`` for an edit of ``kind`` (see the
    module docstring); :class:`AlignmentError` when ``new`` does not have that kind's shape."""
    if kind not in KINDS:
        raise ValueError(f"unknown alignment kind {kind!r}; known: {', '.join(KINDS)}")
    if list(old) == list(new):
        return tuple(range(len(old)))
    if kind == "in-place":
        if len(old) != len(new):
            raise AlignmentError(f"{len(old)} tokens became {len(new)} (a word split or joined "
                                 "at a space), so tags cannot stay in place")
        return tuple(range(len(old)))
    if kind == "reorder":
        if len(old) != len(new) or Counter(old) != Counter(new):
            raise AlignmentError("the reordered words are not the original tokens (a reorder "
                                 "inside a token)")
        keys = _entity_keys(tags)
        size = Counter(keys)

        def sig(i: int) -> object:  # words of equal sig are interchangeable for the tags
            key = keys[i]
            return None if key is None else ("one", key[0]) if size[key] == 1 else key

        # a word at its old place stays; the others are matched to the moved words of equal text
        out: list[int | None] = [i if old[i] == new[i] else None for i in range(len(new))]
        free: dict[str, list[int]] = {}
        for i in range(len(old)):
            if out[i] is None:
                free.setdefault(old[i], []).append(i)
        for word, pool in free.items():
            if len({sig(i) for i in pool}) > 1:
                raise AlignmentError(f"the moved word {word!r} occurs more than once with "
                                     "different tags or entities (ambiguous)")
        for j in range(len(new)):
            if out[j] is None:
                out[j] = free[new[j]].pop(0)
        return tuple(out)
    ops = SequenceMatcher(None, list(old), list(new), autojunk=False).get_opcodes()
    if kind == "delete":
        if any(op not in ("equal", "delete") for op, *_ in ops):
            raise AlignmentError("a deletion left a changed word behind (a deletion inside a "
                                 "token)")
        out = [i for op, i1, i2, _, _ in ops if op == "equal" for i in range(i1, i2)]
        _check_deletions(old, tags, set(out))
        return tuple(out)
    if kind == "repeat":
        return _with_neighbour_copies(old, new, tags, ops)
    # rewrite: changed, removed and inserted words must lie outside entities, except a word
    # changed in place inside an entity (a verb of a title), which keeps its tag
    out = [None] * len(new)
    for op, i1, i2, j1, j2 in ops:
        if op == "equal" or (op == "replace" and i2 - i1 == j2 - j1):
            out[j1:j2] = range(i1, i2)
        elif any(t != "O" for t in tags[i1:i2]):
            raise AlignmentError(f"words of an entity were rewritten ({' '.join(old[i1:i2])!r} "
                                 f"-> {' '.join(new[j1:j2])!r}), so their tags cannot follow")
    return tuple(out)
