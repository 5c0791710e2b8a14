"""Paper 001's seven word-level perturbations (Moradi & Samwald 2021, section 4.2).

Registry names: ``word_delete``, ``word_repeat``, ``word_synonym`` (WordNet), ``negation``,
``singular_plural_verb``, ``verb_tense``, ``word_order``. Every one takes ``pps`` (the maximum
number of edits per text, 1-4). The three verb perturbations rely on the rule-based verb finder in
:mod:`robustlab.perturbations.grammar` and on ``lemminflect`` for inflection; what they can and cannot
handle is listed in docs/perturbations.md.
"""

from __future__ import annotations

import functools
import random

from robustlab.perturbations.base import PerturbationError
from robustlab.perturbations.grammar import CONTRACTIONS, Token, Verb, find_verbs, inflect, tokens
from robustlab.perturbations.pps import PPSPerturbation
from robustlab.perturbations.registry import register
from robustlab.perturbations.text_utils import match_case, replace_spans
from robustlab.resources import stopwords, wordnet, wordnet_sense_counts

__all__ = [
    "Negation",
    "SingularPluralVerb",
    "VerbTense",
    "WordDelete",
    "WordOrder",
    "WordRepeat",
    "WordSynonym",
    "wordnet_synonyms",
]

Edit = tuple[int, int, str]
_POSITIVE_TO_CONTRACTION = {v: k for k, v in CONTRACTIONS.items() if k != "cannot"}


@register
class WordDelete(PPSPerturbation):
    """Up to ``pps`` random words removed (with one adjoining space); one word always remains."""

    name = "word_delete"
    level = "word"
    summary = "deletes random words"

    def apply(self, text: str, rng: random.Random) -> str:
        toks = tokens(text)
        if len(toks) < 2:
            return text
        chosen = rng.sample(toks, min(self.pps, len(toks) - 1))
        ranges = []
        for t in chosen:
            a, b = t.start, t.end
            if a > 0 and text[a - 1].isspace():
                a -= 1
            else:
                while b < len(text) and text[b].isspace():
                    b += 1
            ranges.append((a, b))
        ranges.sort()
        merged: list[list[int]] = []
        for a, b in ranges:
            if merged and a <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        return replace_spans(text, [(a, b, "") for a, b in merged])


@register
class WordRepeat(PPSPerturbation):
    """Up to ``pps`` random words each followed by a copy of itself ("name" -> "name name")."""

    name = "word_repeat"
    level = "word"
    summary = "repeats random words"

    def apply(self, text: str, rng: random.Random) -> str:
        toks = tokens(text)
        return replace_spans(text, [(t.end, t.end, " " + t.text) for t in self.pick(rng, toks)])


@functools.lru_cache(maxsize=65536)
def wordnet_synonyms(word: str) -> tuple[str, ...]:
    """Single-word WordNet synonyms of ``word``, re-inflected like it ("received" -> "got").

    Why the sense filter: WordNet lists every rare sense ("like" the noun = "ilk"); only senses
    attested in SemCor (lemma count >= 1) of the word's most frequent part of speech are used,
    or the first listed sense when none is attested.
    """
    from lemminflect import getInflection

    wn = wordnet()
    counts = wordnet_sense_counts()
    scored = []
    for syn in wn.synsets(word):
        base = wn.morphy(word, syn.pos()) or word
        count = sum(counts.get(lem.key(), 0) for lem in syn.lemmas() if lem.name().lower() == base)
        scored.append((syn, base, count))
    if not scored:
        return ()
    by_pos: dict[str, int] = {}
    for syn, _, count in scored:
        key = "a" if syn.pos() == "s" else syn.pos()
        by_pos[key] = by_pos.get(key, 0) + count
    best = max(by_pos, key=by_pos.get)  # type: ignore[arg-type]
    senses = [(s, b) for s, b, c in scored if c >= 1 and ("a" if s.pos() == "s" else s.pos()) == best]
    senses = senses or [(scored[0][0], scored[0][1])]
    out: list[str] = []
    for syn, base in senses:
        pos, tag = syn.pos(), None
        if base != word:
            if pos == "n":
                tag = "NNS"
            elif pos == "v":
                tag = next((t for t in ("VBD", "VBZ", "VBG", "VBN")
                            if word in getInflection(base, t)), None)
            if tag is None:
                continue
        for lemma in syn.lemma_names():
            if not lemma.isalpha() or lemma.lower() == base or lemma[0].isupper():
                continue
            cand = lemma if tag is None else next(iter(getInflection(lemma, tag)), None)
            if cand and cand.lower() != word and cand.isalpha():
                out.append(cand)
    return tuple(dict.fromkeys(out))


@register
class WordSynonym(PPSPerturbation):
    """Up to ``pps`` content words (not stopwords, >= 3 letters) replaced by a WordNet synonym."""

    name = "word_synonym"
    level = "word"
    heavy = True
    summary = "replaces words by WordNet synonyms"
    reads = ("wordnet",)

    def setup(self) -> None:
        wordnet()  # fail early with the ResourceMissing fix, not on the first text
        wordnet_sense_counts()
        self._stop = frozenset(stopwords())

    def apply(self, text: str, rng: random.Random) -> str:
        stop = getattr(self, "_stop", None) or frozenset(stopwords())
        toks = [t for t in tokens(text) if len(t.low) >= 3 and t.low not in stop and t.low.isalpha()]
        edits: list[Edit] = []
        for t in rng.sample(toks, len(toks)):  # random order; stop once pps words are replaced
            syns = wordnet_synonyms(t.low)
            if syns:
                edits.append((t.start, t.end, match_case(t.text, syns[int(rng.random() * len(syns))])))
                if len(edits) == self.pps:
                    break
        return replace_spans(text, edits)


class _VerbPerturbation(PPSPerturbation):
    """Apply ``edit`` to up to ``pps`` of the finite verbs that it can change."""

    level = "word"

    def edit(self, text: str, toks: list[Token], v: Verb) -> list[Edit] | None:
        raise NotImplementedError

    def apply(self, text: str, rng: random.Random) -> str:
        toks = tokens(text)
        if not toks:
            return text
        options = [e for v in find_verbs(text, toks) if (e := self.edit(text, toks, v))]
        edits = [e for group in self.pick(rng, options) for e in group]
        return replace_spans(text, edits)


def _swap(tok: Token, new: str) -> Edit:
    return (tok.start, tok.end, match_case(tok.text, new))


@register
class Negation(_VerbPerturbation):
    """Negates a positive verb or removes the negation of a negated one (paper 001's rules):
    VBZ -> "does not" + VB, VBD -> "did not" + VB, VBP -> "do not" + VB; be/have/modal
    auxiliaries get "not" ("can" -> "cannot"); questions get the contraction ("Is it" -> "Isn't it").
    Removal reverses these ("doesn't like" -> "likes", "is not" -> "is", "won't" -> "will")."""

    name = "negation"
    asymmetric = False
    label_preserving = False
    summary = "injects or removes verb negation (does not / did not / is not ...)"

    def edit(self, text: str, toks: list[Token], v: Verb) -> list[Edit] | None:
        t = toks[v.i]
        if v.contracted or v.neg is not None:  # remove the negation
            positive = CONTRACTIONS.get(t.low, t.low)
            if v.kind == "do" and v.main is not None and not v.inverted:
                main = toks[v.main]
                new = inflect(main.low, v.tag)
                end = toks[v.neg + 1].start if v.neg is not None else toks[v.i + 1].start
                return [(t.start, end, ""), (main.start, main.end, match_case(t.text, new))]
            if v.contracted:
                return [_swap(t, positive)]
            return [(t.end, toks[v.neg].end, "")]
        after = [x.low for x in toks[v.i + 1: v.i + 3]]
        if after[:2] in (["all", "but"], ["as", "well"]) or after[:1] in (
                ["barely"], ["hardly"], ["scarcely"], ["no"], ["nothing"], ["never"]):
            return None  # "will all but take", "might as well", "is no": no room for "not"
        if v.inverted:  # questions: "Does he ..." -> "Doesn't he ..."
            neg = _POSITIVE_TO_CONTRACTION.get(t.low)
            return [_swap(t, neg)] if neg else None
        if v.kind == "main":
            aux = {"VBZ": "does", "VBD": "did"}.get(v.tag, "do")
            return [_swap(t, f"{aux} not {v.lemma}")]
        if t.low == "can":
            return [_swap(t, "cannot")]
        return [(t.end, t.end, " not")]


_NUMBER_SWAP = {
    "is": "are", "are": "is", "am": "are", "was": "were", "were": "was", "does": "do", "do": "does",
    "has": "have", "have": "has", "isn't": "aren't", "aren't": "isn't", "wasn't": "weren't",
    "weren't": "wasn't", "doesn't": "don't", "don't": "doesn't", "hasn't": "haven't",
    "haven't": "hasn't",
}


@register
class SingularPluralVerb(_VerbPerturbation):
    """Swaps the number of present-tense verbs (and was/were): "likes" <-> "like", "is" <-> "are",
    "does" <-> "do", "doesn't" <-> "don't". Past forms and modals have no number and are skipped."""

    name = "singular_plural_verb"
    asymmetric = False
    summary = "swaps singular/plural verb forms (is<->are, likes<->like)"

    def edit(self, text: str, toks: list[Token], v: Verb) -> list[Edit] | None:
        t = toks[v.i]
        if t.low in _NUMBER_SWAP and v.kind != "main" or t.low in ("has", "have", "does", "do"):
            return [_swap(t, _NUMBER_SWAP[t.low])]
        if v.kind == "main" and v.tag in ("VBZ", "VBP"):
            return [_swap(t, v.lemma if v.tag == "VBZ" else inflect(v.lemma, "VBZ"))]
        return None


_TO_PAST = {"is": "was", "am": "was", "are": "were", "does": "did", "do": "did", "has": "had",
            "have": "had", "isn't": "wasn't", "aren't": "weren't", "doesn't": "didn't",
            "don't": "didn't", "hasn't": "hadn't", "haven't": "hadn't"}
_TO_PRESENT = {  # by subject person
    "was": {"1sg": "am", "3sg": "is", "pl": "are"}, "were": {"1sg": "am", "3sg": "is", "pl": "are"},
    "did": {"1sg": "do", "3sg": "does", "pl": "do"}, "had": {"1sg": "have", "3sg": "has", "pl": "have"},
    "wasn't": {"1sg": "am not", "3sg": "isn't", "pl": "aren't"},
    "weren't": {"1sg": "am not", "3sg": "isn't", "pl": "aren't"},
    "didn't": {"1sg": "don't", "3sg": "doesn't", "pl": "don't"},
    "hadn't": {"1sg": "haven't", "3sg": "hasn't", "pl": "haven't"},
}


@register
class VerbTense(_VerbPerturbation):
    """Present simple/continuous <-> past: "walks" -> "walked", "is walking" -> "was walking",
    "walked" -> "walks" (agreeing with the subject), "did not" -> "does not". Modals are skipped."""

    name = "verb_tense"
    asymmetric = False
    summary = "changes verb tense present <-> past"

    def edit(self, text: str, toks: list[Token], v: Verb) -> list[Edit] | None:
        t = toks[v.i]
        if v.kind == "main":
            if v.tag == "VBD":
                return [_swap(t, inflect(v.lemma, "VBZ" if v.subject == "3sg" else "VBP"))]
            return [_swap(t, inflect(v.lemma, "VBD"))]
        if t.low in _TO_PAST:
            return [_swap(t, _TO_PAST[t.low])]
        if t.low in _TO_PRESENT:
            return [_swap(t, _TO_PRESENT[t.low][v.subject])]
        return None


@register
class WordOrder(PPSPerturbation):
    """Up to ``pps`` non-overlapping windows of ``window`` consecutive words (M in the paper)
    reordered at random; punctuation and spacing stay where they were."""

    name = "word_order"
    level = "word"
    summary = "reorders M consecutive words"

    def __init__(self, pps: int = 1, window: int = 3) -> None:
        super().__init__(pps)
        self.window = window

    def validate(self) -> None:
        super().validate()
        w = self.window
        if isinstance(w, bool) or not isinstance(w, int) or w < 2:
            raise PerturbationError(f"{self.name}: window (M) must be an integer >= 2, got {w!r}")

    def apply(self, text: str, rng: random.Random) -> str:
        toks = tokens(text)
        n = len(toks)
        w = min(self.window, n)
        if w < 2:
            return text
        taken: list[tuple[int, int]] = []
        for s in rng.sample(range(n - w + 1), n - w + 1):
            if all(s + w <= a or s >= b for a, b in taken):
                words = [t.text for t in toks[s : s + w]]
                if len(set(words)) > 1:
                    taken.append((s, s + w))
                    if len(taken) == self.pps:
                        break
        edits: list[Edit] = []
        for a, b in taken:
            words = [t.text for t in toks[a:b]]
            order = list(words)
            while order == words:
                rng.shuffle(order)
            edits += [(t.start, t.end, new) for t, new in zip(toks[a:b], order, strict=True)]
        return replace_spans(text, edits)
