"""Neighbourhood sources: which words may replace word *i* of a sentence (paper 002, Algorithm 1).

Neighbor_k(x) is built one substitution at a time: a source proposes, for each word position of
a sentence, the whole words that may replace it; the attacks (``second_order.py``) and the bias
study (``bias.py``) compose single substitutions into k-step neighbourhoods. Every source has a
``name`` (``mlm:<model>``, ``wordnet``, ``table:<file>``) that is stored with each result, so a
reader always knows which neighbourhood produced it.

* :class:`MaskedLMSource` (the paper's): mask each word, keep whole-word vocabulary entries whose
  logit is > max(L(κ), L(0) − δ) (κ = 20, δ = 3). Masked sentences are batched across positions
  and sentences and cached by their exact string, so no masked sentence is sent twice.
  **Over-long sentences are truncated** to the LM's limit: positions whose mask falls beyond the
  limit get no candidates (they are never substituted); all earlier positions work normally.
* :class:`WordNetSource` and :class:`TableSource`: context-free lexical neighbours for machines
  without a masked LM (WordNet synonyms; a JSON ``word -> [neighbours]`` table).

Shared rules: candidates are single alphabetic words (so a substitution never changes the number
of words), never the word itself, never a blacklisted word (for bias: protected tokens), and
they keep the capitalisation of the word they replace. Positions are chosen by the caller (the
patch word's position is never passed in).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from robustlab.errors import InputError

KAPPA = 20
DELTA = 3.0
_WORD = re.compile(r"^[A-Za-z]+$")


def match_case(template: str, word: str) -> str:
    """Give ``word`` the capitalisation pattern of ``template`` (lower, Title or UPPER)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def word_spans(text: str, words: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of ``words`` (in order) inside ``text``; -1 spans when a word is not found.

    Whole-word matches only ("a" is not found inside "ate"); plain ``str.find`` with a boundary
    check, because this runs for every candidate sentence of an attack.
    """
    spans, pos, n = [], 0, len(text)
    for w in words:
        i = text.find(w, pos)
        while i >= 0 and ((i > 0 and _is_word_char(text[i - 1]))
                          or (i + len(w) < n and _is_word_char(text[i + len(w)]))):
            i = text.find(w, i + 1)
        if i < 0:
            spans.append((-1, -1))
            continue
        spans.append((i, i + len(w)))
        pos = i + len(w)
    return spans


class NeighbourhoodSource:
    """Interface: ``candidates_many`` maps (text, words, positions) to per-position word lists."""

    name: str = "source"

    def __init__(self, blacklist: Iterable[str] = ()) -> None:
        self.blacklist = {w.lower() for w in blacklist}

    def _keep(self, original: str, cand: str, exclude: set[str]) -> bool:
        c = cand.lower()
        return (bool(_WORD.match(cand)) and c != original.lower() and c not in self.blacklist
                and c not in exclude)

    def candidates_many(self, items: Sequence[tuple[str, Sequence[str], Sequence[int]]],
                        exclude: Iterable[str] = ()) -> list[dict[int, list[str]]]:
        """For each (text, words, positions): {position: replacement words}, best first."""
        raise NotImplementedError

    def candidates(self, text: str, words: Sequence[str], positions: Sequence[int],
                   exclude: Iterable[str] = ()) -> dict[int, list[str]]:
        return self.candidates_many([(text, words, positions)], exclude)[0]

    def neighbours(self, words: Sequence[str], positions: Sequence[int] | None = None,
                   exclude: Iterable[str] = ()) -> list[list[str]]:
        """Neighbor_1 as word lists (space-joined text as context): one substitution each."""
        pos = range(len(words)) if positions is None else positions
        cands = self.candidates(" ".join(words), words, list(pos), exclude)
        out = []
        for i, words_i in cands.items():
            for c in words_i:
                w = list(words)
                w[i] = c
                out.append(w)
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "blacklist": sorted(self.blacklist)}


# ---- lexical sources ---------------------------------------------------------------------------


class _LexicalSource(NeighbourhoodSource):
    """Context-free sources: the candidates of a word depend on the word only (cached)."""

    def __init__(self, blacklist: Iterable[str] = (), max_candidates: int = KAPPA) -> None:
        super().__init__(blacklist)
        self.max_candidates = max_candidates
        self._cache: dict[str, list[str]] = {}

    def _lookup(self, word: str) -> list[str]:
        raise NotImplementedError

    def word_candidates(self, word: str) -> list[str]:
        key = word.lower()
        if key not in self._cache:
            seen: list[str] = []
            for c in self._lookup(key):
                c = c.lower()
                if c not in seen and self._keep(key, c, set()):
                    seen.append(c)
            self._cache[key] = seen[: self.max_candidates]
        return self._cache[key]

    def candidates_many(self, items, exclude=()):
        ex = {e.lower() for e in exclude}
        out = []
        for _text, words, positions in items:
            d = {}
            for i in positions:
                cs = [match_case(words[i], c) for c in self.word_candidates(words[i])
                      if c not in ex]
                if cs:
                    d[i] = cs
            out.append(d)
        return out


class WordNetSource(_LexicalSource):
    """WordNet synonyms (all synsets of the word), single words only; via robustlab.resources."""

    name = "wordnet"

    def __init__(self, blacklist: Iterable[str] = (), max_candidates: int = KAPPA) -> None:
        super().__init__(blacklist, max_candidates)
        from robustlab.resources import stopwords, wordnet

        self._wn = wordnet()
        self._stop = set(stopwords())

    def _lookup(self, word: str) -> list[str]:
        # function words: WordNet's senses of "is", "an", "a" give ungrammatical swaps (be, Associate)
        if word in self._stop:
            return []
        return [lem.name() for syn in self._wn.synsets(word) for lem in syn.lemmas()]


def load_table(path: str | os.PathLike[str]) -> dict[str, list[str]]:
    """Read a JSON neighbour table ``{word: [neighbours, ...]}`` (InputError on bad files)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"neighbour table {p} does not exist; pass a JSON file "
                         "{word: [neighbours]} (e.g. counterfitted_neighbors.json)")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"neighbour table {p} is not valid JSON: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise InputError(f"neighbour table {p} must be a JSON object word -> list of words")
    return {str(k).lower(): [str(x) for x in v] for k, v in data.items()}


class TableSource(_LexicalSource):
    """Neighbours from a JSON table word -> [neighbours] (e.g. counter-fitted neighbours)."""

    def __init__(self, table: str | os.PathLike[str] | dict[str, list[str]],
                 blacklist: Iterable[str] = (), max_candidates: int = KAPPA) -> None:
        super().__init__(blacklist, max_candidates)
        if isinstance(table, dict):
            self.table, self.name = {k.lower(): list(v) for k, v in table.items()}, "table:<dict>"
        else:
            self.table, self.name = load_table(table), f"table:{Path(table).name}"

    def _lookup(self, word: str) -> list[str]:
        return self.table.get(word, [])


# ---- masked language model ---------------------------------------------------------------------


class MaskedLMSource(NeighbourhoodSource):
    """Fill-mask neighbours from any Hugging Face masked LM (local directory or hub id)."""

    def __init__(self, model: str | os.PathLike[str] = "distilbert-base-uncased", *,
                 kappa: int = KAPPA, delta: float = DELTA, blacklist: Iterable[str] = (),
                 batch_size: int = 64, max_length: int | None = None, device: str | None = None,
                 model_obj: Any = None, tokenizer: Any = None) -> None:
        super().__init__(blacklist)
        if kappa < 1 or delta < 0:
            raise InputError(f"masked-LM thresholds need kappa >= 1 and delta >= 0 "
                             f"(got kappa={kappa}, delta={delta})")
        self.kappa, self.delta, self.batch_size = kappa, float(delta), batch_size
        self.model_id = str(model)
        self.name = f"mlm:{Path(self.model_id).name if os.path.isdir(self.model_id) else model}"
        self._model, self._tok = model_obj, tokenizer
        self._max_length = max_length
        # None: the --device of the command (mlm_device), else CUDA when present
        self.device = device
        self._cache: dict[str, list[tuple[str, float]]] = {}
        self.lm_calls = 0          # masked sentences actually sent to the LM
        self.lm_seconds = 0.0      # wall time inside LM forward passes
        self._word_ok: Any = None
        self._pll: dict[str, float] = {}
        self._target_ids: dict[str, int] = {}

    # loading is lazy so that building a recipe costs nothing until the first sentence
    def _load(self) -> None:
        if self._model is not None and self._tok is not None and self._word_ok is not None:
            return
        import torch
        from transformers import AutoModelForMaskedLM, AutoTokenizer

        try:
            if self._tok is None:
                self._tok = AutoTokenizer.from_pretrained(self.model_id, trust_remote_code=False)
            if self._model is None:
                self._model = AutoModelForMaskedLM.from_pretrained(self.model_id,
                                                                    trust_remote_code=False)
        except (OSError, ValueError) as exc:
            raise InputError(
                f"cannot load masked LM {self.model_id!r} ({exc}). Pass a local directory "
                "(e.g. --mlm ../shared/models/minilm-mlm), set HF_HUB_OFFLINE=0 with network, "
                "or use a lexical source (--source wordnet | table:FILE)") from exc
        from robustlab.models.device import resolve_device

        self.device = str(resolve_device(self.device or _MLM_DEVICE[0]))
        self._model.eval().to(self.device)
        if self._max_length is None:
            lim = getattr(self._model.config, "max_position_embeddings", 512) or 512
            self._max_length = min(int(lim), int(getattr(self._tok, "model_max_length", lim)))
        vocab = self._tok.convert_ids_to_tokens(list(range(len(self._tok))))
        special = set(self._tok.all_special_tokens)
        ok = [bool(_WORD.match(t)) and t not in special for t in vocab]
        self._vocab = vocab
        self._word_ok = torch.tensor(ok + [False] * (self._model.config.vocab_size - len(ok)))

    def _mask_logits(self, enc: Any, rows: Any, cols: Any) -> Any:
        """Logits at the mask positions only (BERT fast path: head applied to masked rows)."""
        m = self._model
        if hasattr(m, "bert") and hasattr(m, "cls"):
            hidden = m.bert(**enc).last_hidden_state
            return m.cls(hidden[rows, cols])
        if hasattr(m, "distilbert") and hasattr(m, "vocab_projector"):
            h = m.distilbert(**enc).last_hidden_state[rows, cols]
            h = m.vocab_layer_norm(m.activation(m.vocab_transform(h)))
            return m.vocab_projector(h)
        return m(**enc).logits[rows, cols]

    def _fill(self, masked: list[str]) -> None:
        """Run the LM on masked sentences not yet cached; store thresholded whole-word tokens."""
        import time

        import torch

        todo = [s for s in dict.fromkeys(masked) if s not in self._cache]
        if not todo:
            return
        self._load()
        tok, mask_id = self._tok, self._tok.mask_token_id
        t0 = time.perf_counter()
        with torch.inference_mode():
            for b in range(0, len(todo), self.batch_size):
                batch = todo[b: b + self.batch_size]
                enc = tok(batch, return_tensors="pt", padding=True, truncation=True,
                          max_length=self._max_length).to(self.device)
                is_mask = enc["input_ids"] == mask_id
                has = is_mask.any(dim=1)
                # first mask per row (exactly one mask per sentence; truncated ones have none)
                cols = is_mask.float().argmax(dim=1)
                rows = torch.nonzero(has).flatten()
                if len(rows):
                    logits = self._mask_logits(dict(enc), rows, cols[rows]).float()
                    top = torch.topk(logits, min(self.kappa + 1, logits.shape[1]), dim=1)
                    # one device->host copy per batch (per-row reads would sync a GPU each time)
                    values, indices = top.values.cpu(), top.indices.cpu()
                    for r, vals, ids in zip(rows.tolist(), values, indices, strict=False):
                        lmin = max(float(vals[min(self.kappa, len(vals) - 1)]),
                                   float(vals[0]) - self.delta)
                        keep = [(self._vocab[i], float(v)) for v, i in zip(vals.tolist(),
                                ids.tolist(), strict=False) if v > lmin and bool(self._word_ok[i])]
                        self._cache[batch[r]] = keep
                for r in torch.nonzero(~has).flatten().tolist():
                    self._cache[batch[r]] = []  # mask truncated away: no candidates
                self.lm_calls += len(batch)
        self.lm_seconds += time.perf_counter() - t0

    def masked_sentence(self, text: str, span: tuple[int, int]) -> str:
        self._load()
        return text[: span[0]] + self._tok.mask_token + text[span[1]:]

    def candidates_many(self, items, exclude=()):
        ex = {e.lower() for e in exclude}
        plan = []
        for text, words, positions in items:
            spans = word_spans(text, words)
            plan.append([(i, self.masked_sentence(text, spans[i])) for i in positions
                         if 0 <= i < len(words) and spans[i][0] >= 0])
        self._fill([m for p in plan for _, m in p])
        out = []
        for (_t, words, _p), p in zip(items, plan, strict=False):
            d = {}
            for i, m in p:
                cs = [match_case(words[i], c) for c, _ in self._cache[m]
                      if self._keep(words[i], c, ex)]
                if cs:
                    d[i] = cs
            out.append(d)
        return out

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model_id, "kappa": self.kappa,
                "delta": self.delta, "max_length": self._max_length}

    # ---- pseudo-log-likelihood (the authors' language-model score) ----------------------------

    def _target_id(self, word: str) -> int:
        """The vocabulary id scored for ``word``: the word's token when the tokenizer makes it
        one token, else the unknown token, as the authors' ``convert_tokens_to_ids(word)``
        does. robustlab lets the tokenizer normalise first (their uncased model scored every
        capitalised word as [UNK])."""
        tid = self._target_ids.get(word)
        if tid is None:
            tok = self._tok
            pieces = tok.tokenize(word)
            tid = tok.convert_tokens_to_ids(pieces[0]) if len(pieces) == 1 else None
            tid = self._target_ids[word] = int(tok.unk_token_id if tid is None else tid)
        return tid

    def pseudo_log_likelihood(self, texts: Sequence[str]) -> list[float]:
        """The authors' sentence score (their ``MaskedLanguageModelScorer.get_text_score``): the
        mean over the sentence's words of log P(word | the sentence with that word masked).

        One masked sentence per word, batched across words and sentences (``batch_size`` per
        forward, under ``torch.inference_mode``) and cached per sentence. Words are the
        space-separated tokens holding a letter or digit (punctuation is not scored, as
        TextAttack's word split drops it). A word whose mask is truncated away is left out
        (the authors' code took log(-1) there); a sentence with no word scores 0."""
        import time

        import torch

        todo = [t for t in dict.fromkeys(texts) if t not in self._pll]
        if todo:
            self._load()
            mask = self._tok.mask_token
            masked, owner, target = [], [], []
            for n, t in enumerate(todo):
                words = t.split()
                for w, (a, b) in zip(words, word_spans(t, words), strict=True):
                    if a >= 0 and _SCORED.search(w):
                        masked.append(t[:a] + mask + t[b:])
                        owner.append(n)
                        target.append(self._target_id(w))
            sums, counts = [0.0] * len(todo), [0] * len(todo)
            t0 = time.perf_counter()
            with torch.inference_mode():
                for b in range(0, len(masked), self.batch_size):
                    batch = masked[b: b + self.batch_size]
                    enc = self._tok(batch, return_tensors="pt", padding=True, truncation=True,
                                    max_length=self._max_length).to(self.device)
                    is_mask = enc["input_ids"] == self._tok.mask_token_id
                    rows = torch.nonzero(is_mask.any(dim=1)).flatten()
                    if not len(rows):
                        continue
                    cols = is_mask.float().argmax(dim=1)[rows]
                    logp = torch.log_softmax(self._mask_logits(dict(enc), rows, cols).float(),
                                             dim=1)
                    ids = torch.tensor([target[b + r] for r in rows.tolist()],
                                       device=logp.device)
                    got = logp.gather(1, ids[:, None]).squeeze(1).cpu().tolist()
                    for r, v in zip(rows.tolist(), got, strict=True):
                        sums[owner[b + r]] += v
                        counts[owner[b + r]] += 1
                    self.lm_calls += len(batch)
            self.lm_seconds += time.perf_counter() - t0
            for n, t in enumerate(todo):
                self._pll[t] = sums[n] / counts[n] if counts[n] else 0.0
        return [self._pll[t] for t in texts]


#: the authors' margin: a swapped sentence may score at most this much below the original
LM_MARGIN = 1.5
#: sentences with more words than this are not checked (the authors skip them for time)
LM_MAX_WORDS = 20
_SCORED = re.compile(r"[^\W_]")


def lm_words(text: str) -> int:
    """The number of words the check counts (tokens holding a letter or digit)."""
    return sum(1 for w in text.split() if _SCORED.search(w))


class LanguageModelCheck:
    """The authors' language-model check on a word swap (``BiasGoalFunction._get_active_
    biaswords``): the swapped sentence passes when PLL(swapped) >= PLL(original) − 1.5, where
    PLL is :meth:`MaskedLMSource.pseudo_log_likelihood`; an original of more than 20 words
    passes unchecked, as in their code. Used for X_test of the bias study and for the choice of
    SO-Beam's patch words, so that swaps like to -> de or a -> una are not taken."""

    def __init__(self, lm: MaskedLMSource, margin: float = LM_MARGIN,
                 max_words: int = LM_MAX_WORDS) -> None:
        self.lm, self.margin, self.max_words = lm, float(margin), int(max_words)
        self.checked = self.rejected = 0

    @property
    def name(self) -> str:
        return self.lm.name

    def passes_many(self, swaps: Sequence[tuple[str, str]]) -> list[bool]:
        """For each (original, swapped): whether the swap passes (scored in one batched call)."""
        need = [s for s in swaps if lm_words(s[0]) <= self.max_words]
        scores = dict(zip([t for s in need for t in s],
                          self.lm.pseudo_log_likelihood([t for s in need for t in s]),
                          strict=True))
        out = []
        for orig, new in swaps:
            if lm_words(orig) > self.max_words:
                out.append(True)
                continue
            ok = scores[new] >= scores[orig] - self.margin
            self.checked += 1
            self.rejected += not ok
            out.append(ok)
        return out

    def describe(self) -> dict[str, Any]:
        return {"model": self.lm.model_id, "margin": self.margin, "max_words": self.max_words}


#: device of masked-LM sources built without one (set by a command's --device via mlm_device)
_MLM_DEVICE: list[str] = ["auto"]


@contextlib.contextmanager
def mlm_device(device: str | None) -> Iterator[None]:
    """Run masked LMs created (and lazily loaded) inside this block on ``device``.

    The attack recipes build their neighbourhood source deep inside TextAttack's recipe
    builders; this carries the command's ``--device`` there without threading it through them.
    """
    old = _MLM_DEVICE[0]
    _MLM_DEVICE[0] = device or "auto"
    try:
        yield
    finally:
        _MLM_DEVICE[0] = old


def lm_check_for(spec: Any, source: Any = None, device: str | None = None) -> Any:
    """The language-model check of ``spec`` (``mlm:PATH``; an object with ``passes_many`` is
    used as it is), sharing the neighbourhood's masked LM when it is the same model (one
    load, one cache)."""
    if spec is None or not isinstance(spec, str):
        return spec
    model = spec.removeprefix("mlm:")
    if isinstance(source, MaskedLMSource) and source.model_id == model:
        return LanguageModelCheck(source)
    return LanguageModelCheck(MaskedLMSource(model, device=device))


def default_source() -> tuple[str, str]:
    """``(spec, origin)`` of the neighbourhood when none is named: ``$ROBUSTLAB_NEIGHBOURHOOD``;
    else the paper's kind, a masked LM found offline (:func:`robustlab.resources.
    masked_lm_origin`); else WordNet, with an origin that says it is a fallback and the fix."""
    from robustlab.resources import ResourceMissing, masked_lm_origin

    env = os.environ.get("ROBUSTLAB_NEIGHBOURHOOD")
    if env:
        return env, "default: $ROBUSTLAB_NEIGHBOURHOOD"
    try:
        path, origin = masked_lm_origin()
    except ResourceMissing as exc:
        return "wordnet", f"fallback: WordNet, no masked LM found (fix: {exc.fix})"
    return f"mlm:{path}", f"default: masked LM from the {origin}"


def default_lm_check(source: str | None) -> tuple[str | None, str]:
    """``(mlm:PATH or None, origin)`` of the language-model check when none is named: the
    neighbourhood's masked LM (the authors score with the model that proposes the words);
    a lexical neighbourhood gets no check unless ``--lm-check PATH`` names a model."""
    if source and source.startswith("mlm:"):
        return source, "default: the neighbourhood's masked LM"
    return None, "no language-model check (a lexical neighbourhood; --lm-check PATH adds one)"


def make_source(spec: str | NeighbourhoodSource | None, *, blacklist: Iterable[str] = (),
                kappa: int = KAPPA, delta: float = DELTA,
                device: str | None = None) -> NeighbourhoodSource:
    """``wordnet`` | ``table:FILE`` | ``mlm:PATH_OR_HUB_ID`` (or a bare existing directory).

    ``None`` means ``$ROBUSTLAB_NEIGHBOURHOOD`` when set, else ``wordnet`` (works offline; the
    paper's distilbert-base-uncased needs ``mlm:distilbert-base-uncased`` and the hub).
    """
    if isinstance(spec, NeighbourhoodSource):
        return spec
    spec = spec or os.environ.get("ROBUSTLAB_NEIGHBOURHOOD") or "wordnet"
    if spec == "wordnet":
        return WordNetSource(blacklist, max_candidates=kappa)
    if spec.startswith("table:"):
        return TableSource(spec[6:], blacklist, max_candidates=kappa)
    if spec.startswith("mlm:"):
        return MaskedLMSource(spec[4:], kappa=kappa, delta=delta, blacklist=blacklist,
                              device=device)
    if os.path.isdir(spec):
        return MaskedLMSource(spec, kappa=kappa, delta=delta, blacklist=blacklist,
                              device=device)
    raise InputError(f"unknown neighbourhood source {spec!r}; use wordnet, table:FILE or "
                     "mlm:PATH_OR_HUB_ID")
