"""Paper 001's seven word-level perturbations (Moradi & Samwald 2021, section 4.2).

Registry names: ``word_delete``, ``word_repeat``, ``word_synonym`` (WordNet), ``negation``,
``singular_plural_verb``, ``verb_tense``, ``word_order``. Every one takes ``pps`` (the maximum
number of edits per text, 1-4). The three verb perturbations rely on the rule-based verb finder in
:mod:`robustlab.perturbations.grammar` and on ``lemminflect`` for inflection; what they can and cannot
handle is listed in docs/perturbations.md.
"""

from __future__ import annotations

import functools
import json
import random
import sys

from robustlab.perturbations.base import PerturbationError
from robustlab.perturbations.grammar import (
    CONTRACTIONS,
    MODALS,
    PREPOSITIONS,
    Token,
    Verb,
    find_verbs,
    inflect,
    tokens,
)
from robustlab.perturbations.named import register
from robustlab.perturbations.pps import PPSPerturbation
from robustlab.perturbations.text_utils import match_case, replace_spans
from robustlab.resources import stopwords, synonyms_dir, wordnet, wordnet_sense_counts
from robustlab.textfmt import echo

__all__ = [
    "Negation",
    "SingularPluralVerb",
    "VerbTense",
    "WordDelete",
    "WordOrder",
    "WordRepeat",
    "WordSynonym",
    "context_pos",
    "synonym_constraints",
    "wordnet_synonyms",
]

Edit = tuple[int, int, str]
_POSITIVE_TO_CONTRACTION = {v: k for k, v in CONTRACTIONS.items() if k != "cannot"}


@register
class WordDelete(PPSPerturbation):
    """Up to ``pps`` random words removed (with one adjoining space); one word always remains."""

    name = "word_delete"
    version = 2  # tokens kept whole (hyphenated compounds, clitics, alphanumerics)
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
    version = 2  # tokens kept whole (hyphenated compounds, clitics, alphanumerics)
    level = "word"
    summary = "repeats random words"

    def apply(self, text: str, rng: random.Random) -> str:
        toks = tokens(text)
        return replace_spans(text, [(t.end, t.end, " " + t.text) for t in self.pick(rng, toks)])


_DETERMINERS = frozenset(
    "a an the this that these those my your his her its our their some any every each no "
    "another such 's".split())
_COPULAS = frozenset(
    "is are was were be been being am 's 're 'm seem seems seemed look looks looked feel feels "
    "felt become becomes became remain remains remained very so too more most less least "
    "quite rather pretty really".split())
_POS_LETTERS = ("n", "v", "a", "r")
_NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred thousand million billion first second third fourth fifth""".split())


def context_pos(toks: list[Token], i: int, verbs: frozenset[int]) -> frozenset[str]:
    """WordNet parts of speech the token ``i`` can have *here*, from its neighbours.

    Why a heuristic: no tagger runs offline (docs/perturbations.md). The cues, in order: a
    finite verb found by :func:`~robustlab.perturbations.grammar.find_verbs` is a verb; after
    "to", a modal or a do-auxiliary a verb; after a copula or degree word ("is", "very") an
    adjective or adverb; after a determiner or possessive a noun or adjective; a word ending
    in "ly" an adverb; otherwise any part of speech WordNet gives it.
    """
    if i in verbs:
        return frozenset("v")
    before = toks[i - 1].low if i > 0 else ""
    word = toks[i].low
    if before == "to" or before in MODALS or before in ("do", "does", "did", "n't", "not") \
            and i >= 2 and toks[i - 2].low in ("do", "does", "did"):
        return frozenset("v")
    if before in _COPULAS:
        return frozenset("ar")
    if before in _DETERMINERS:
        return frozenset("na")
    if word.endswith("ly"):
        return frozenset("r")
    return frozenset(_POS_LETTERS)


@functools.lru_cache(maxsize=65536)
def wordnet_synonyms(word: str, pos: frozenset[str] | None = None) -> tuple[str, ...]:
    """Single-word WordNet synonyms of ``word`` in parts of speech ``pos`` (all when None),
    re-inflected like it ("received" -> "got"), without its WordNet antonyms.

    Why the sense filter: WordNet lists every rare sense ("like" the noun = "ilk"); only the
    word's most frequent sense in SemCor (lemma count; the first listed sense on a tie) of its
    most frequent allowed part of speech is used.
    """
    from lemminflect import getInflection

    wn = wordnet()
    counts = wordnet_sense_counts()
    scored = []
    for syn in wn.synsets(word):
        key = "a" if syn.pos() == "s" else syn.pos()
        if pos is not None and key not in pos:
            continue
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
    # the word's dominant sense only: its other senses' synonyms rarely fit a given sentence
    # ("line" -> "bloodline", "called" -> "phoned", "lot" -> "batch"); measured on the dev half
    # of tests/fixtures/judgements (docs/perturbations.md)
    of_best = [(s, b, c) for s, b, c in scored if ("a" if s.pos() == "s" else s.pos()) == best]
    top = max(of_best, key=lambda sbc: sbc[2])
    senses = [(top[0], top[1])]
    antonyms = {a.name().lower() for syn, _, _ in scored for lem in syn.lemmas()
                for a in lem.antonyms()}
    out: list[str] = []
    for syn, base in senses:
        pos_, tag = syn.pos(), None
        if base != word:
            if pos_ == "n":
                tag = "NNS"
            elif pos_ == "v":
                tag = next((t for t in ("VBD", "VBZ", "VBG", "VBN")
                            if word in getInflection(base, t)), None)
            if tag is None:
                continue
        for lemma in syn.lemma_names():
            if not lemma.isalpha() or lemma.lower() == base or lemma[0].isupper() \
                    or lemma.lower() in antonyms:
                continue
            cand = lemma if tag is None else next(iter(getInflection(lemma, tag)), None)
            if cand and cand.lower() != word and cand.isalpha():
                out.append(cand)
    return tuple(dict.fromkeys(out))


@functools.cache
def synonym_constraints() -> tuple[dict[str, frozenset[str]], frozenset[tuple[str, str]]] | None:
    """(counter-fitted neighbours, antonym pairs) from :func:`robustlab.resources.synonyms_dir`,
    or None when they are not available (word_synonym then uses WordNet alone)."""
    folder, _ = synonyms_dir()
    if folder is None:
        return None
    with open(folder / "counterfitted_neighbors.json", encoding="utf-8") as fh:
        neighbours = {k: frozenset(v) for k, v in json.load(fh).items() if v}
    pairs: set[tuple[str, str]] = set()
    for name in ("ppdb_antonyms.txt", "wordnet_antonyms.txt"):
        with open(folder / name, encoding="utf-8") as fh:
            for line in fh:
                ab = line.split()
                if len(ab) == 2:
                    pairs.update({(ab[0], ab[1]), (ab[1], ab[0])})
    return neighbours, frozenset(pairs)


class _MaskedLM:
    """A fill-mask model's probability of each candidate word at a masked position.

    transformers is imported lazily: only ``word_synonym:mlm=PATH`` needs it. Loaded from a
    local folder only (``local_files_only``, ``trust_remote_code=False``)."""

    def __init__(self, path: str) -> None:
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        try:
            self.tok = AutoTokenizer.from_pretrained(path, local_files_only=True,
                                                     trust_remote_code=False)
            self.model = AutoModelForMaskedLM.from_pretrained(
                path, local_files_only=True, trust_remote_code=False).eval()
        except (OSError, ValueError) as exc:
            raise PerturbationError(f"word_synonym: mlm={path!r} is not a local fill-mask "
                                    f"model folder ({exc})") from exc
        self.torch = torch

    def log_probs(self, text: str, start: int, end: int, words: list[str]) -> list[float]:
        """log p(word | context) at ``text[start:end]`` for each word: a word of k word pieces
        fills k masks and scores the sum of its pieces' log probabilities (one forward pass
        per distinct k), so "psychoanalytic" is not scored by its first piece alone."""
        pieces = [self.tok(w, add_special_tokens=False)["input_ids"] for w in words]
        out = [float("-inf")] * len(words)
        for k in sorted({len(p) for p in pieces if p}):
            masked = text[:start] + " ".join([self.tok.mask_token] * k) + text[end:]
            enc = self.tok(masked, return_tensors="pt", truncation=True, max_length=256)
            pos = (enc["input_ids"][0] == self.tok.mask_token_id).nonzero().flatten().tolist()
            if len(pos) != k:
                continue  # truncated away
            with self.torch.no_grad():
                logits = self.model(**enc).logits[0, pos]
            lp = self.torch.log_softmax(logits.float(), -1)
            for j, ids in enumerate(pieces):
                if len(ids) == k:
                    out[j] = float(sum(lp[m, t] for m, t in enumerate(ids)))
        return out


@functools.lru_cache(maxsize=4)
def _masked_lm(path: str) -> _MaskedLM:
    return _MaskedLM(path)


#: notes already printed in this process (a missing resource is said once, not per cell)
_NOTED = {"synonyms": False}


@register
class WordSynonym(PPSPerturbation):
    """Up to ``pps`` content words (not stopwords, >= 3 letters) replaced by a synonym that fits
    the context: a WordNet synonym of the part of speech the word has there
    (:func:`context_pos`), never an antonym, and, when the counter-fitted neighbours are
    available (``robustlab resources check synonyms``), one of the word's neighbours too. With
    ``mlm`` (a local fill-mask model folder) a candidate must also be about as likely in the
    sentence as the word itself: masked-LM log probability >= the word's minus ``mlm_margin``.
    """

    name = "word_synonym"
    version = 3  # context filter (part of speech, antonyms, neighbours, masked LM); whole tokens
    level = "word"
    # not asymmetric: with one dominant sense and its neighbours a synonym's synonym is often the
    # word again (movie -> film -> movie: g(g(x)) == x for about half the texts)
    asymmetric = False
    heavy = True
    summary = "replaces words by WordNet synonyms that fit the context"
    reads = ("wordnet", "synonyms")

    def __init__(self, pps: int = 1, mlm: str | None = None, mlm_margin: float = 3.0) -> None:
        super().__init__(pps)
        self.mlm = mlm
        self.mlm_margin = mlm_margin

    def validate(self) -> None:
        super().validate()
        if self.mlm is not None and (not isinstance(self.mlm, str) or not self.mlm):
            raise PerturbationError(f"word_synonym: mlm must be a model folder, got {self.mlm!r}")
        m = self.mlm_margin
        if isinstance(m, bool) or not isinstance(m, (int, float)) or not 0 <= m <= 50:
            raise PerturbationError(f"word_synonym: mlm_margin must be a number in [0, 50], got {m!r}")

    def setup(self) -> None:
        wordnet()  # fail early with the ResourceMissing fix, not on the first text
        wordnet_sense_counts()
        self._stop = frozenset(stopwords())
        self._constraints = synonym_constraints()
        if self._constraints is None and not _NOTED["synonyms"]:
            _NOTED["synonyms"] = True  # once per process, not once per cell or seed
            echo(f"note: word_synonym: {synonyms_dir()[1]}: using WordNet synonyms without the "
                 "counter-fitted neighbour filter (fewer synonyms fit their context; set "
                 "$ROBUSTLAB_SYNONYMS or $ROBUSTLAB_SHARED)", file=sys.stderr)
        self._lm = _masked_lm(self.mlm) if self.mlm else None

    def candidates(self, text: str, toks: list[Token], i: int, verbs: frozenset[int]) -> list[str]:
        """The synonyms of token ``i`` that pass every filter, in WordNet's order."""
        t = toks[i]
        pos = context_pos(toks, i, verbs)
        if not t.low.endswith("ly"):
            # adverbs that are not -ly adverbs are mostly function-like ("also", "well", "even",
            # "near", "back"): their WordNet synonyms do not fit ("and besides refreshingly")
            pos = pos - {"r"}
        if t.low in _NUMBER_WORDS or t.low in PREPOSITIONS or t.low == "near" or not pos:
            return []  # "three" -> "iii", "one" -> "ace"
        syns = wordnet_synonyms(t.low, pos)
        # a synonym keeps the word's -ing shape ("focus" -/-> "focusing", "color" -/->
        # "coloring"): WordNet lists such nominalisations as synonyms of the plain noun
        syns = tuple(s for s in syns if s.lower().endswith("ing") == t.low.endswith("ing"))
        cons = getattr(self, "_constraints", None)
        if cons is not None:
            neighbours, antonyms = cons
            near = neighbours.get(t.low, frozenset())
            syns = tuple(s for s in syns if s.lower() in near and (t.low, s.lower()) not in antonyms)
        lm = getattr(self, "_lm", None)
        if lm is not None and syns:
            scores = lm.log_probs(text, t.start, t.end, [t.low, *[s.lower() for s in syns]])
            syns = tuple(s for s, lp in zip(syns, scores[1:], strict=True)
                         if lp >= scores[0] - self.mlm_margin)
        return list(syns)

    def apply(self, text: str, rng: random.Random) -> str:
        if not hasattr(self, "_stop"):
            self.setup()
        stop = self._stop
        toks = tokens(text)
        # a capitalised word inside a sentence is taken for a name ("the Nobel Prize")
        eligible = [i for i, t in enumerate(toks)
                    if len(t.low) >= 3 and t.low not in stop and t.low.isalpha()
                    and (i == 0 or not t.text[:1].isupper())]
        if not eligible:
            return text
        verbs = frozenset(v.i for v in find_verbs(text, toks))
        edits: list[Edit] = []
        done = 0
        for i in rng.sample(eligible, len(eligible)):  # random order; stop at pps replacements
            syns = self.candidates(text, toks, i, verbs)
            if syns:
                done += 1
                t = toks[i]
                new = match_case(t.text, syns[int(rng.random() * len(syns))])
                edits.append((t.start, t.end, new))
                if i > 0 and toks[i - 1].low in ("a", "an"):  # "a gripping" -> "an engrossing"
                    art = toks[i - 1]
                    want = "an" if new[:1].lower() in "aeio" else "a"
                    if art.low != want:
                        edits.append((art.start, art.end, match_case(art.text, want)))
                if done == self.pps:
                    break
        return replace_spans(text, edits)


class _VerbPerturbation(PPSPerturbation):
    """Apply ``edit`` to up to ``pps`` of the finite verbs that it can change."""

    level = "word"
    version = 2  # questions, PTB clitics, nouns before verbs; tokens kept whole

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
        if v.inverted and v.main is not None:  # "When did Hawaii not become a state ?"
            main = toks[v.main]
            return [(main.start, main.start, "not ")]
        if v.inverted:  # a copula question: "Is it ..." -> "Isn't it ...", "What isn't ..."
            neg = _POSITIVE_TO_CONTRACTION.get(t.low)
            return [_swap(t, neg)] if neg else None
        if v.kind == "main":
            aux = {"VBZ": "does", "VBD": "did"}.get(v.tag, "do")
            return [_swap(t, f"{aux} not {v.lemma}")]
        if t.low == "can":
            return [_swap(t, "cannot")]
        if t.low == "'ll":  # "we 'll" -> "we wo n't": PTB spelling of "won't"
            return [_swap(t, "wo n't")]
        return [(t.end, t.end, " not")]


_NUMBER_SWAP = {
    "is": "are", "are": "is", "am": "are", "was": "were", "were": "was", "does": "do", "do": "does",
    "has": "have", "have": "has", "isn't": "aren't", "aren't": "isn't", "wasn't": "weren't",
    "weren't": "wasn't", "doesn't": "don't", "don't": "doesn't", "hasn't": "haven't",
    "haven't": "hasn't", "'re": "is", "'m": "are", "'ve": "has",
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
        if t.low == "'s":  # "it 's" -> "it are", "it 's been" -> "it have been"
            return [(t.start - (text[t.start - 1: t.start] == " "), t.end,
                     " are" if v.kind == "be" else " have")]
        if t.low in _NUMBER_SWAP and v.kind != "main" or t.low in ("has", "have", "does", "do"):
            new = _NUMBER_SWAP[t.low]
            if t.low.startswith("'") and not new.startswith("'"):
                return [(t.start - (text[t.start - 1: t.start] == " "), t.end, " " + new)]
            return [_swap(t, new)]
        if v.kind == "main" and v.tag in ("VBZ", "VBP"):
            return [_swap(t, v.lemma if v.tag == "VBZ" else inflect(v.lemma, "VBZ"))]
        return None


_TO_PAST = {"is": "was", "am": "was", "are": "were", "does": "did", "do": "did", "has": "had",
            "have": "had", "isn't": "wasn't", "aren't": "weren't", "doesn't": "didn't",
            "don't": "didn't", "hasn't": "hadn't", "haven't": "hadn't", "'re": "were", "'m": "was",
            "'ve": "had"}
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
        if t.low == "'s":  # "it 's" -> "it was", "it 's been" -> "it had been"
            return [(t.start - (text[t.start - 1: t.start] == " "), t.end,
                     " was" if v.kind == "be" else " had")]
        if t.low in _TO_PAST and t.low.startswith("'"):  # "they 're" -> "they were"
            return [(t.start - (text[t.start - 1: t.start] == " "), t.end, " " + _TO_PAST[t.low])]
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
    version = 2  # tokens kept whole (hyphenated compounds, clitics, alphanumerics)
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
