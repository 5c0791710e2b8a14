"""One generic suite every perturbation must pass (scikit-learn ``parametrize_with_checks`` style).

Use from any test module::

    from perturbation_checks import check_perturbation
    check_perturbation(make("leet_letters"))              # runs every check, AssertionError on failure

or parametrize over ``iter_checks(p)`` to get one test id per check. ``corpus`` replaces the built-in
English sample corpus (it should contain texts the perturbation can change).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence

from robustlab.perturbations.base import Perturbation

__all__ = ["EDGE_TEXTS", "SAMPLE_CORPUS", "check_perturbation", "iter_checks"]

SAMPLE_CORPUS: tuple[str, ...] = (
    "He likes it.",
    "She walks home every evening.",
    "The dogs were barking loudly at the mailman.",
    "I can believe how good this movie is!",
    "They don't want to go, do they?",
    "What is the primary language in Iceland?",
    "We definitely received the package yesterday, and it was great.",
    "His quiet and straightforward demeanor was rare then and would be today.",
    "The committee has decided to postpone the meeting until next week.",
    "You are probably right about the weather; it is cold.",
    "a stirring , funny and finally transporting re-imagining of beauty and the beast .",
    "My brother plays the guitar while our neighbours sing.",
    "It isn't the worst film I have seen, but it comes close.",
    "The results were surprising because nobody expected them.",
    "Please send the message before tomorrow night.",
    "Anna reads books and writes long letters to her friends.",
)

EDGE_TEXTS: dict[str, str] = {
    "empty": "",
    "whitespace_only": " \t\n  \u00a0",
    "long_100k": ("The quick brown fox, it seems, is happy and jumps over lazy dogs! " * 1600)[:100_000],
    "non_ascii": "Crème brûlée à Paris coûte 7 €, naïve façade — «très» cher.",
    "emoji": "I love it 😍🔥👍🏽 so much!!! 👨‍👩‍👧",
    "mixed_scripts": "Hello мир, 你好世界 and مرحبا بالعالم; Γειά σου κόσμε.",
    "digits_punct": "1234 ... ??? !!! --- ((()))",
    "single_word": "word",
}

Check = Callable[[Perturbation, Sequence[str]], None]


def _check_edge_texts(p: Perturbation, corpus: Sequence[str]) -> None:
    for label, text in EDGE_TEXTS.items():
        out = p.perturb(text, seed=3)
        assert isinstance(out, str), f"{p.name} on {label}: returned {type(out).__name__}, not str"
        assert p.perturb(text, seed=3) == out, f"{p.name} on {label}: not deterministic"
    for o in p.perturb_outcomes(list(EDGE_TEXTS.values()), seed=3):
        assert o.error is None, f"{p.name}: error on an edge text: {o.error}"


def _check_seeded_determinism(p: Perturbation, corpus: Sequence[str]) -> None:
    a = p.perturb_batch(corpus, seed=11)
    b = p.perturb_batch(corpus, seed=11)
    c = p.clone().perturb_batch(corpus, seed=11)
    assert a == b == c, f"{p.name}: same seed gave different outputs"
    assert all(isinstance(t, str) for t in a), f"{p.name}: returned a non-str"
    if not p.deterministic:
        seeds = [tuple(p.perturb_batch(corpus, seed=s)) for s in range(4)]
        assert len(set(seeds)) > 1, f"{p.name}: not deterministic=True, yet seed has no effect"


def _check_batch_independence(p: Perturbation, corpus: Sequence[str]) -> None:
    texts = list(corpus)
    full = p.perturb_batch(texts, seed=5)
    assert full == [p.perturb(t, seed=5) for t in texts], f"{p.name}: batch != loop"
    rev = p.perturb_batch(texts[::-1], seed=5)
    assert rev == full[::-1], f"{p.name}: output depends on batch order"
    halves = p.perturb_batch(texts[:3], seed=5) + p.perturb_batch(texts[3:], seed=5)
    assert halves == full, f"{p.name}: output depends on batch size"
    order = list(range(len(texts)))
    random.Random(0).shuffle(order)
    shuffled = p.perturb_batch([texts[i] for i in order], seed=5)
    assert shuffled == [full[i] for i in order], f"{p.name}: output depends on batch order"


def _check_outcomes(p: Perturbation, corpus: Sequence[str]) -> None:
    texts = [*corpus, "", "   "]
    outcomes = p.perturb_outcomes(texts, seed=7)
    assert len(outcomes) == len(texts), f"{p.name}: outcomes dropped rows"
    plain = p.perturb_batch(texts, seed=7)
    for o, t, q in zip(outcomes, texts, plain, strict=True):
        assert o.original == t and o.text == q, f"{p.name}: outcome differs from perturb_batch"
        assert o.changed == (q != t), f"{p.name}: changed flag wrong for {t!r}"
        assert o.error is None, f"{p.name}: error {o.error} on {t!r}"
    assert any(o.changed for o in outcomes), f"{p.name}: changed none of the sample corpus"


def _check_asymmetry_claim(p: Perturbation, corpus: Sequence[str]) -> None:
    pairs = []
    for seed in range(5):
        for x, gx in zip(corpus, p.perturb_batch(corpus, seed=seed), strict=True):
            if gx != x:
                pairs.append((x, p.perturb(gx, seed=seed)))
    if not pairs:
        return
    back = sum(ggx == x for x, ggx in pairs)
    if p.asymmetric:
        assert back <= 0.1 * len(pairs), (
            f"{p.name} claims asymmetric but g(g(x)) == x for {back}/{len(pairs)} texts"
        )
    else:
        assert back > 0, f"{p.name} claims symmetric but g(g(x)) never returned x"


def _check_params_and_rng_hygiene(p: Perturbation, corpus: Sequence[str]) -> None:
    assert p.clone() == p and p.clone().get_params() == p.get_params()
    assert isinstance(p.signature(), str) and p.name in p.signature()
    state = random.getstate()
    p.perturb_batch(corpus, seed=1)
    assert random.getstate() == state, f"{p.name}: touched the global random state"


_CHECKS: tuple[Check, ...] = (
    _check_edge_texts,
    _check_seeded_determinism,
    _check_batch_independence,
    _check_outcomes,
    _check_asymmetry_claim,
    _check_params_and_rng_hygiene,
)


def iter_checks(p: Perturbation, corpus: Sequence[str] | None = None) -> Iterator[tuple[str, Callable[[], None]]]:
    """(check name, zero-argument callable) pairs, for one pytest id per check."""
    texts = tuple(corpus) if corpus is not None else SAMPLE_CORPUS
    for check in _CHECKS:
        yield check.__name__.removeprefix("_check_"), (lambda c=check: c(p, texts))


def check_perturbation(p: Perturbation, corpus: Sequence[str] | None = None) -> None:
    """Run every generic check on ``p``; raises AssertionError naming the first failure."""
    for _name, run in iter_checks(p, corpus):
        run()
