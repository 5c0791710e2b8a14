"""The perturbation base class (robustlab/perturbations/base.py) with small subclasses of each
randomness kind: seeded streams (pinned: stored results depend on them), the parameter protocol,
labels, signatures and the batch front doors (fast: the test selection of ``bench/mutation.py
perturbations-base``)."""

from __future__ import annotations

import random

import pytest

from robustlab.perturbations import base as B
from robustlab.perturbations.base import Perturbation, PerturbationError


def test_rng_for_is_a_pinned_pure_function_of_seed_salt_and_text() -> None:
    # pinned values: a change here changes every stored perturbation of an "rng" kind
    assert B.rng_for(3, "abc", "x").random() == 0.9545183013944037
    assert B.rng_for(0, "", "").random() == 0.882003652719606
    assert B.rng_for(-1, "é", "s").random() == 0.7521252254713832
    assert B.rng_for(3, "abc").random() == B.rng_for(3, "abc", "").random()
    values = {B.rng_for(*a).random() for a in [(3, "abc", "x"), (4, "abc", "x"), (3, "abd", "x"),
                                              (3, "abc", "y"), (3, "abc", "")]}
    assert len(values) == 5
    assert B.rng_for(3, "\ud800", "x").random() == B.rng_for(3, "\ud800", "x").random()


def test_stream_for_is_a_pinned_extendable_stream() -> None:
    assert B.stream_for(3, "abc", "x").digest(8).hex() == "63ecc6c7aca5dc17"
    assert B.stream_for(-2, "", "").digest(8).hex() == "0cd1e244569a25eb"
    s = B.stream_for(3, "abc", "x")
    assert s.digest(32)[:8] == s.digest(8) == B.stream_for(3, "abc", "x").digest(8)
    outs = {B.stream_for(*a).digest(8) for a in [(3, "abc", "x"), (4, "abc", "x"),
                                                (3, "abd", "x"), (3, "abc", "y"), (3, "abc", "")]}
    assert len(outs) == 5
    # the salt's length is absorbed: ("ab", "c") and ("a", "bc") never share a stream
    assert B.stream_for(1, "c", "ab").digest(8) != B.stream_for(1, "bc", "a").digest(8)
    assert B.stream_for(1, "\ud800").digest(4) == B.stream_for(1, "\ud800").digest(4)


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5])
def test_check_prob_accepts(value: float) -> None:
    B.check_prob("p", prob=value, other=0.25)


@pytest.mark.parametrize("value", [-0.1, 1.01, True, "0.5", None, float("nan")])
def test_check_prob_refuses_naming_owner_and_parameter(value: object) -> None:
    with pytest.raises(PerturbationError, match=rf"^owner: prob must be a number in \[0, 1\], "
                                                rf"got {repr(value).replace('(', '.')}$"):
        B.check_prob("owner", ok=0.5, prob=value)


def test_no_randomness_names_what_was_used() -> None:
    with pytest.raises(RuntimeError, match=r"^a perturbation declared randomness='none' used "
                                           r"rng.random$"):
        B.NO_RANDOMNESS.random()


class Swap(Perturbation):
    """rng kind: swaps two characters chosen by rng (with parameters and a default)."""

    name = "swap"
    version = 3

    def __init__(self, prob: float = 0.5, mode: str = "x", *args: int, **kw: int) -> None:
        self.prob, self.mode = prob, mode
        self.validated = self.set_up = 0

    def validate(self) -> None:
        self.validated += 1
        B.check_prob(self.name, prob=self.prob)

    def setup(self) -> None:
        self.set_up += 1

    def apply(self, text: str, rng: random.Random) -> str:
        if len(text) < 2:
            return text
        i = rng.randrange(len(text) - 1)
        return text[:i] + text[i + 1] + text[i] + text[i + 2:]


class Bytes(Perturbation):
    """bytes kind through apply_stream: appends the stream's first byte in hex."""

    name = "bytes"
    randomness = "bytes"

    def apply_stream(self, text: str, stream: object) -> str:
        if text == "boom":
            raise ValueError("cannot")
        return f"{text}:{stream.digest(1).hex()}"


class BytesMany(Perturbation):
    """bytes kind through apply_many (a whole chunk at once)."""

    name = "bytes"
    randomness = "bytes"
    calls: list[int] = []

    def apply_many(self, texts: list[str], streams: list) -> list[str]:
        BytesMany.calls.append(len(texts))
        return [f"{t}:{s.digest(1).hex()}" for t, s in zip(texts, streams, strict=True)]


class Bulk(Perturbation):
    name = "bulk"
    randomness = "bulk"
    calls: list[int] = []

    def perturb_many(self, texts: list[str], seed: int) -> list[str]:
        Bulk.calls.append(len(texts))
        return [f"{t}|{B.rng_for(seed, t).randrange(100)}" for t in texts]


class Neither(Perturbation):
    name = "neither"
    randomness = "bytes"


def test_parameters_clone_equality_and_hash() -> None:
    assert Swap.param_names() == ["prob", "mode"]
    assert Swap.param_defaults() == {"prob": 0.5, "mode": "x"}
    assert B.AppendToken.param_defaults() == {"token": "zxqv"}

    class Required(Perturbation):
        def __init__(self, k: int) -> None:
            self.k = k

    assert Required.param_defaults() == {"k": None}
    s = Swap(0.25, "y").with_label("my swap")
    assert s.get_params() == {"prob": 0.25, "mode": "y"}
    c = s.clone(mode="z")
    assert type(c) is Swap and c.get_params() == {"prob": 0.25, "mode": "z"}
    assert c.display_name == "my swap"  # the label travels with a clone
    assert Swap(0.25, "y") == s and Swap(0.25, "z") != s and s != B.AppendToken()
    assert hash(Swap(0.25, "y")) == hash(s) and hash(Swap(0.3, "y")) != hash(s)
    assert repr(s) == "Swap(prob=0.25, mode='y')"


def test_signature_sorted_and_versioned_from_2() -> None:
    assert Swap(0.25, "y").signature() == "swap/v3(mode='y',prob=0.25)"
    assert B.AppendToken("t").signature() == "append_token(token='t')"
    assert B.Identity().signature() == "identity()"


def test_display_labels() -> None:
    s = Swap()
    assert s.display_name == "swap"
    assert s.with_label("  nice  ") is s and s.display_name == "nice"
    assert s.with_label(None).display_name == "swap"
    for bad in ("", "   ", "two\nlines"):
        with pytest.raises(PerturbationError, match="^swap: a display label must be one "
                                                    "non-empty line$"):
            Swap().with_label(bad)


def test_validate_and_setup_run_once_before_the_first_text() -> None:
    s = Swap()
    assert (s.validated, s.set_up) == (0, 0)
    s.perturb("abc")
    s.perturb_batch(["abc"])
    s.perturb_outcomes(["abc"])
    assert (s.validated, s.set_up) == (1, 1)
    with pytest.raises(PerturbationError, match=r"^swap: prob must be"):
        Swap(prob=2.0).perturb_batch(["abc"])
    with pytest.raises(PerturbationError):
        Swap(prob=2.0).perturb("abc")
    with pytest.raises(PerturbationError):
        Swap(prob=2.0).perturb_outcomes(["abc"])


@pytest.mark.parametrize("cls", [Swap, Bytes, BytesMany, Bulk, B.AppendToken, B.Identity])
def test_each_text_depends_on_seed_and_itself_only(cls: type) -> None:
    texts = ["hello world", "abc", "hello world", "", "xy"]
    p = cls()
    batch = p.perturb_batch(texts, seed=5)
    assert batch == [p.perturb(t, 5) for t in texts] == [p(t, 5) for t in texts]
    assert p.perturb_batch(iter(texts), seed=5) == batch  # any iterable
    assert cls().perturb_batch(texts[::-1], seed=5) == batch[::-1]
    assert cls().perturb_batch([], seed=5) == []


def test_streams_are_the_documented_ones() -> None:
    assert Swap().perturb("abcdef", 7) == Swap().apply("abcdef", B.rng_for(7, "abcdef", "swap"))
    b = B.stream_for(7, "t", "bytes").digest(1).hex()
    assert Bytes().perturb("t", 7) == f"t:{b}" == BytesMany().perturb_batch(["t"], 7)[0]
    assert Bulk().perturb("t", 7) == f"t|{B.rng_for(7, 't').randrange(100)}"
    assert B.Identity().perturb_batch(["a b"]) == ["a b"]
    assert Bytes().perturb("t") == Bytes().perturb("t", 0)  # seed 0 by default
    assert Swap().perturb_batch(["abcdef"]) == Swap().perturb_batch(["abcdef"], 0)


def test_seeds_change_outputs() -> None:
    texts = [f"text number {i}" for i in range(20)]
    for cls in (Swap, Bytes, Bulk):
        assert cls().perturb_batch(texts, 1) != cls().perturb_batch(texts, 2)


def test_apply_with_a_callers_rng_for_bytes_and_bulk_kinds() -> None:
    rng_a, rng_b = random.Random(1), random.Random(1)
    key = rng_b.randbytes(16)
    import hashlib

    assert Bytes().apply("t", rng_a) == f"t:{hashlib.shake_128(key).digest(1).hex()}"
    rng_a, rng_b = random.Random(2), random.Random(2)
    assert Bulk().apply("t", rng_a) == Bulk().perturb_many(["t"], rng_b.getrandbits(63))[0]
    with pytest.raises(NotImplementedError):
        Perturbation().apply("t", random.Random(0))
    with pytest.raises(NotImplementedError):
        Perturbation().perturb_many(["t"], 0)
    with pytest.raises(NotImplementedError, match="^Neither defines neither apply_stream nor "
                                                  "apply_many$"):
        Neither().perturb("t")


def test_batches_go_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(B, "_CHUNK", 2)
    texts = ["a", "b", "c", "d", "e"]
    BytesMany.calls.clear()
    Bulk.calls.clear()
    many = BytesMany().perturb_batch(texts, 3)
    bulk = Bulk().perturb_batch(texts, 3)
    assert BytesMany.calls == [2, 2, 1] and Bulk.calls == [2, 2, 1]
    monkeypatch.setattr(B, "_CHUNK", 4096)
    assert BytesMany().perturb_batch(texts, 3) == many and Bulk().perturb_batch(texts, 3) == bulk


def test_outcomes_flag_changes_and_report_each_failing_text() -> None:
    out = B.AppendToken("z").perturb_outcomes(["a", "", "b"])
    assert out == [B.Outcome("a", "a z", True), B.Outcome("", "z", True),
                   B.Outcome("b", "b z", True)]
    assert B.Identity().perturb_outcomes(("x", "y")) == [B.Outcome("x", "x", False),
                                                         B.Outcome("y", "y", False)]
    out = Bytes().perturb_outcomes(["ok", "boom", "fine"], seed=4)
    assert out[1] == B.Outcome("boom", "boom", False, "ValueError: cannot")
    assert out[0] == B.Outcome("ok", Bytes().perturb("ok", 4), True)
    assert out[2].text == Bytes().perturb("fine", 4) and out[2].error is None
    assert B.Outcome("a", "a", False).error is None


def test_outcomes_when_the_batch_returns_the_wrong_length() -> None:
    class Short(Bulk):
        def perturb_many(self, texts: list[str], seed: int) -> list[str]:
            return [t.upper() for t in texts][: max(1, len(texts) - 1)]

    assert Short().perturb_outcomes(["a", "b"]) == [B.Outcome("a", "A", True),
                                                   B.Outcome("b", "B", True)]


def test_append_token_and_identity() -> None:
    assert B.AppendToken().perturb("a b") == "a b zxqv"
    assert B.AppendToken("q").perturb("  ") == "q"
    for bad in ("", "two words", "tab\tin"):
        with pytest.raises(PerturbationError, match="^append_token: token must be a non-empty "
                                                    "word without spaces$"):
            B.AppendToken(bad).perturb("x")
    ident = B.Identity()
    assert ident.perturb("x y") == "x y" and ident.asymmetric is False
    assert ident.deterministic is True and ident.randomness == "none"
    assert (B.AppendToken.level, B.Identity.level, Perturbation.level) == ("word", "sentence",
                                                                          "character")
    assert Perturbation.randomness == "rng" and Perturbation.version == 1
    assert Perturbation.label_preserving is True and Perturbation.asymmetric is True
