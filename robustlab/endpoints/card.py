"""The model card: what robustlab needs to know to test a model behind an HTTP endpoint.

A card is a small TOML file (docs/endpoints.md)::

    url = "http://127.0.0.1:8000/predict"
    kind = "json"                 # json | openai-chat | openai-completions | hf-inference
    request_field = "texts"       # json: where the text (or the list of texts) goes
    response_field = "probs"      # json: where the answer is (dotted path; a list per batch)
    response_type = "proba"       # json: "proba" (a row of class probabilities) or "label"
    batch_size = 32               # texts per request where the API takes lists (1: one each)
    labels = ["negative", "positive"]          # class names in class order
    api_key_env = "MY_SERVICE_KEY"             # the key's environment variable (never the key)
    max_concurrency = 8
    rps = 0                       # requests per second (0: no limit)
    timeout = 30                  # seconds per request
    retries = 5                   # on 429, 5xx, timeouts and dropped connections

and, for the LLM kinds, ``model``, ``template`` (with ``{text}``, and ``{text_pair}`` for pairs),
``verbalizers`` (label -> words that mean it), ``use_logprobs``, ``max_tokens``, ``temperature``
(default 0), ``seed`` and ``stream`` (ask for server-sent events with the token usage in the
last chunk).

``--model http://…`` (with ``--endpoint-kind``) is a card with only a URL and a kind; a run
stores it as ``endpoint:KIND:URL``. A key is only ever read from the environment variable a
card names: a URL given alone never carries one.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import tomllib

from robustlab.errors import InputError

KINDS = ("json", "openai-chat", "openai-completions", "hf-inference")
LLM_KINDS = ("openai-chat", "openai-completions")
#: how a run stores ``--model URL --endpoint-kind KIND``
PREFIX = "endpoint:"
CARD_SUFFIX = ".toml"


@dataclass(frozen=True)
class Card:
    """One endpoint (module docstring). ``source``: the card file, or None for a bare URL."""

    url: str
    kind: str = "json"
    request_field: str = "text"
    response_field: str = ""
    response_type: str = "proba"
    batch_size: int = 1
    labels: tuple[str, ...] = ()
    model: str | None = None
    template: str = "{text}"
    verbalizers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    use_logprobs: bool = False
    #: LLM kinds: ask for a stream of server-sent events with ``stream_options.include_usage``,
    #: so a server that only reports token usage in a stream's last chunk reports it
    stream: bool = False
    max_tokens: int = 8
    temperature: float = 0.0
    seed: int | None = 0
    api_key_env: str | None = None
    max_concurrency: int = 4
    rps: float = 0.0
    timeout: float = 30.0
    retries: int = 5
    source: str | None = None

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    def identity(self) -> dict[str, Any]:
        """What a response depends on (its cache key, with the text): the endpoint and how a
        text is asked, not how fast or how often."""
        keys = ("url", "kind", "request_field", "response_field", "model", "template",
                "max_tokens", "temperature", "seed", "use_logprobs")
        return {k: getattr(self, k) for k in keys}

    def label_names(self) -> list[str]:
        """Class names in class order: ``labels``, else the verbalizers' keys."""
        if self.labels:
            return list(self.labels)
        return list(self.verbalizers)


def is_endpoint(spec: str) -> bool:
    """Whether a ``--model`` value names an endpoint: a URL, ``endpoint:KIND:URL`` or a
    ``.toml`` card."""
    text = str(spec).strip()
    return text.startswith(("http://", "https://", PREFIX)) or text.endswith(CARD_SUFFIX)


def canonical_spec(spec: str, kind: str | None = None) -> str:
    """The form a run stores: a card by its absolute path, a URL as ``endpoint:KIND:URL``."""
    text = str(spec).strip()
    if text.startswith(PREFIX):
        if kind:
            raise InputError(f"--endpoint-kind {kind}: --model {text} names its kind already")
        parse_spec(text)
        return text
    if text.startswith(("http://", "https://")):
        k = kind or "json"
        _check_kind(k, "--endpoint-kind")
        _check_url(text, "--model")
        return f"{PREFIX}{k}:{text}"
    if kind:
        raise InputError(f"--endpoint-kind {kind}: a model card names its kind itself "
                         "(kind = …); --endpoint-kind goes with --model http(s)://…")
    return str(Path(text).expanduser().resolve())


def parse_spec(spec: str) -> Card:
    """The card a stored or typed spec names (read from its file for a ``.toml``)."""
    text = str(spec).strip()
    if text.startswith(PREFIX):
        kind, _, url = text[len(PREFIX):].partition(":")
        _check_kind(kind, "--model endpoint:KIND:URL")
        _check_url(url, "--model")
        if kind in LLM_KINDS:
            raise InputError(f"--endpoint-kind {kind}: an LLM endpoint needs a model card "
                             "(the prompt template and the label words): --model card.toml "
                             "(docs/endpoints.md)")
        return Card(url=url, kind=kind)
    if text.startswith(("http://", "https://")):
        return parse_spec(canonical_spec(text))
    return load_card(text)


def load_card(path: str | Path) -> Card:
    """A card file, checked (unknown keys, kinds, types and the URL: one line each)."""
    p = Path(path).expanduser()
    where = f"--model {p}"
    try:
        raw = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{where}: no such model card") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{where}: cannot read the model card ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: not a valid TOML model card ({exc})") from None
    except RecursionError:  # tomllib recurses per nested array or table (as a plan's reader)
        raise InputError(f"{where}: nests arrays or tables too deep to be a model card") from None
    known = {f.name for f in dataclasses.fields(Card)} - {"source"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r} in the model card (keys: "
                         f"{', '.join(sorted(known))})")
    if "url" not in raw:
        raise InputError(f"{where}: the model card has no url")
    values: dict[str, Any] = {}
    defaults = Card(url="")
    for name, value in raw.items():
        default = getattr(defaults, name)
        values[name] = _typed(name, value, default, where)
    card = Card(**values, source=str(p.resolve()))
    _check_kind(card.kind, f"{where}: kind")
    _check_url(card.url, f"{where}: url")
    _check_card(card, where)
    return card


def _typed(name: str, value: Any, default: Any, where: str) -> Any:
    """``value`` as the type of the field's default (one line when it is not)."""
    bad = InputError(f"{where}: {name} = {value!r} is not a valid value")
    if name == "verbalizers":
        if not isinstance(value, dict):
            raise bad
        out = {}
        for label, words in value.items():
            words = [words] if isinstance(words, str) else words
            if not isinstance(words, list) or not words or \
                    not all(isinstance(w, str) and w.strip() for w in words):
                raise InputError(f"{where}: verbalizers.{label} must be a word or a list of "
                                 "words")
            out[str(label)] = tuple(w.strip() for w in words)
        return out
    if name == "labels":
        if not isinstance(value, list) or not all(isinstance(v, str | int) for v in value):
            raise bad
        return tuple(str(v) for v in value)
    if name in ("model", "api_key_env") or (name == "seed" and value is not None):
        if name == "seed":
            if isinstance(value, bool) or not isinstance(value, int):
                raise bad
            return value
        if not isinstance(value, str) or not value:
            raise bad
        return value
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise bad
        return value
    if isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise bad
        return value
    if isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise bad
        return float(value)
    if not isinstance(value, str):
        raise bad
    return value


def _check_kind(kind: str, where: str) -> None:
    if kind not in KINDS:
        raise InputError(f"{where}: unknown endpoint kind {kind!r} (one of {', '.join(KINDS)})")


def _check_url(url: str, where: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"{where}: {url!r} is not an http(s) URL")
    if parts.username or parts.password:
        raise InputError(f"{where}: the URL carries a user name or password; put the key in "
                         "an environment variable named by the card's api_key_env")


def _check_card(card: Card, where: str) -> None:
    if card.response_type not in ("proba", "label"):
        raise InputError(f"{where}: response_type must be \"proba\" or \"label\"")
    if card.batch_size < 1 or card.max_concurrency < 1:
        raise InputError(f"{where}: batch_size and max_concurrency must be >= 1")
    if card.timeout <= 0:
        raise InputError(f"{where}: timeout must be > 0 seconds")
    if card.kind in LLM_KINDS:
        if not card.verbalizers:
            raise InputError(f"{where}: an LLM endpoint needs verbalizers (label = [\"word\", "
                             "…] for each label) to map its answers to labels")
        if "{text}" not in card.template:
            raise InputError(f"{where}: the template must contain {{text}}")
        if card.batch_size != 1:
            raise InputError(f"{where}: batch_size applies to the json and hf-inference kinds")
    elif card.stream:
        raise InputError(f"{where}: stream applies to the openai-chat and openai-completions "
                         "kinds")
        if card.labels and sorted(card.labels) != sorted(card.verbalizers):
            raise InputError(f"{where}: labels and the verbalizers' labels differ")
    if card.kind == "json" and card.response_type == "label" and not card.labels:
        raise InputError(f"{where}: response_type = \"label\" needs labels = [...] (class "
                         "names in class order)")
