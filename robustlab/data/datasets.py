"""Classification datasets: single texts or sentence pairs with labels 0..C-1.

Sources (:func:`load_dataset`):

* ``demo``: robustlab's own generated sentiment sentences (:mod:`robustlab.data.demo`);
* a local file, read by :func:`robustlab.data.files.read_rows`: TSV/CSV/JSONL with column choice,
  or the ``<label> <text>`` one-per-line layout of the Kim-2014 files (SST, MR, TREC, SUBJ/CR/MPQA,
  TextFooler samples), detected when the extension says nothing. Encoding: UTF-8 unless
  ``encoding`` is given; a file that is not valid UTF-8 is refused naming the line, never decoded
  silently as something else (MR, SUBJ and TREC train need ``encoding="cp1252"``);
* Hugging Face ``datasets`` by name (``glue/sst2``, ``imdb``, ``yelp_polarity``, ``glue/qqp`` or
  ``hf:NAME[/CONFIG]``, or TextAttack's ``NAME^CONFIG^SPLIT`` as written for
  ``--dataset-from-huggingface``, e.g. ``glue^sst2^validation``; a split given there wins) when
  the hub is reachable; a clear error otherwise.

Balanced seeded subsampling (:meth:`Dataset.subsample`) reproduces the papers' control (every
dataset subsampled to the same size with balanced classes); :meth:`Dataset.split` makes a seeded
stratified train/test split. Validation raises :class:`~robustlab.errors.InputError` naming the
problem (empty dataset, one class, labels not 0..C-1, empty texts, missing file).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import numpy as np

from robustlab.data.labels import check_labels
from robustlab.errors import InputError

Example = str | tuple[str, str]

#: hub datasets known by name: name -> (path, config, text column(s), label column)
HF_DATASETS: dict[str, tuple[str, str | None, tuple[str, ...], str]] = {
    "glue/sst2": ("glue", "sst2", ("sentence",), "label"),
    "sst2": ("glue", "sst2", ("sentence",), "label"),
    "imdb": ("imdb", None, ("text",), "label"),
    "yelp_polarity": ("yelp_polarity", None, ("text",), "label"),
    "glue/qqp": ("glue", "qqp", ("question1", "question2"), "label"),
    "qqp": ("glue", "qqp", ("question1", "question2"), "label"),
}
LABEL_COLUMN_NAMES = ("label", "labels", "gold_label", "gold", "class", "sentiment", "target", "y")
PAIR_COLUMNS = (("sentence1", "sentence2"), ("question1", "question2"), ("premise", "hypothesis"),
                ("text_a", "text_b"))
_LABEL_TEXT_LINE = re.compile(r"^-?\d+(?: |$)")  # label-only lines occur (CR, MPQA)


@dataclass
class Dataset:
    """Texts (or (a, b) pairs) and integer labels; ``fingerprint`` identifies the contents."""

    texts: list[Example]
    labels: list[int]
    name: str = "dataset"
    label_names: list[str] | None = None
    source: str = ""
    _fp: str | None = field(default=None, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def n_classes(self) -> int:
        return max(self.labels) + 1 if self.labels else 0

    @property
    def is_pairs(self) -> bool:
        return bool(self.texts) and not isinstance(self.texts[0], str)

    @property
    def fingerprint(self) -> str:
        if self._fp is None:
            from robustlab.signature import fingerprint

            self._fp = fingerprint({"texts": self.texts, "labels": self.labels})
        return self._fp

    def class_counts(self) -> dict[int, int]:
        return dict(sorted(Counter(self.labels).items()))

    def validate(self, min_classes: int = 2) -> Dataset:
        """Raise :class:`InputError` unless the dataset can be trained on."""
        check_labels(self.labels, len(self.texts), where=f"dataset {self.name}",
                     min_classes=min_classes)
        for i, t in enumerate(self.texts):
            parts = (t,) if isinstance(t, str) else t
            if any(not isinstance(p, str) for p in parts) or not any(p.strip() for p in parts):
                raise InputError(f"dataset {self.name}: example {i} has an empty text "
                                 f"({t!r:.60}); remove it")
        return self

    def take(self, indices: Any, name: str | None = None) -> Dataset:
        idx = [int(i) for i in indices]
        return Dataset([self.texts[i] for i in idx], [self.labels[i] for i in idx],
                       name or self.name, self.label_names, self.source)

    def subsample(self, n: int | None = None, seed: int = 0, balanced: bool = True) -> Dataset:
        """A seeded random subset of ``n`` examples (all when None), in random order.

        ``balanced``: the same number from every class (``n`` must split evenly enough: class
        c gets ``n // C`` plus one of the remainder); ``n=None`` takes the largest balanced set.
        """
        rng = np.random.default_rng(seed)
        if not balanced:
            if n is None or n >= len(self):
                return self.take(rng.permutation(len(self)), self._sub_name(n, seed, balanced))
            return self.take(rng.permutation(len(self))[:n], self._sub_name(n, seed, balanced))
        counts = self.class_counts()
        k = len(counts)
        if k == 0:
            raise InputError(f"dataset {self.name}: empty, nothing to subsample")
        if n is None:
            quota = {c: min(counts.values()) for c in counts}
        else:
            quota = {c: n // k + (1 if j < n % k else 0) for j, c in enumerate(counts)}
        short = {c: (quota[c], counts[c]) for c in counts if quota[c] > counts[c]}
        if short:
            c, (want, have) = next(iter(short.items()))
            raise InputError(f"dataset {self.name}: a balanced sample of {n} needs {want} examples "
                             f"of class {c} but it has {have} (class counts {counts}); ask for "
                             f"at most {min(counts.values()) * k} or pass balanced=False")
        labels = np.asarray(self.labels)
        chosen = [rng.permutation(np.flatnonzero(labels == c))[: quota[c]] for c in counts]
        idx = rng.permutation(np.concatenate(chosen))
        return self.take(idx, self._sub_name(n, seed, balanced))

    def _sub_name(self, n: int | None, seed: int, balanced: bool) -> str:
        return f"{self.name}[{'balanced ' if balanced else ''}{n if n else 'all'},seed={seed}]"

    def split(self, test_size: float | int = 0.2, seed: int = 0,
              stratify: bool = True) -> tuple[Dataset, Dataset]:
        """Seeded (stratified) train/test split with scikit-learn's ``train_test_split``."""
        from sklearn.model_selection import train_test_split

        idx = np.arange(len(self))
        try:
            tr, te = train_test_split(idx, test_size=test_size, random_state=seed,
                                      stratify=self.labels if stratify else None)
        except ValueError as exc:
            raise InputError(f"dataset {self.name}: cannot split with test_size={test_size}: "
                             f"{exc}") from exc
        return self.take(tr, f"{self.name}/train"), self.take(te, f"{self.name}/test")


# ---- loading -------------------------------------------------------------------------------------


def load_dataset(spec: str, *, split: str | None = None, text_column: str | int | None = None,
                 text_pair_column: str | int | None = None, label_column: str | int | None = None,
                 fmt: str | None = None, encoding: str | None = None,
                 max_examples: int | None = None, seed: int = 0, balanced: bool = True,
                 validate: bool = True, header: bool | None = None) -> Dataset:
    """Load ``spec`` (``demo``, a file path or a hub name), optionally subsampled and validated."""
    spec = str(spec).strip()
    if not spec:
        raise InputError("--dataset: empty; pass a file, 'demo' or a hub dataset name")
    name, _, arg = spec.partition(":")
    if "^" in spec and not Path(spec).expanduser().exists():
        spec, config, split = _textattack_spec(spec, split)
        ds = load_hub(spec, split=split or "train", config=config, text_column=text_column,
                      text_pair_column=text_pair_column, label_column=label_column)
    elif name == "demo":
        from robustlab.data.demo import DEMO_DESCRIPTION, make_demo

        n = int(arg) if arg.isdigit() else 2000
        texts, labels = make_demo(n, seed=0)
        ds = Dataset(list(texts), labels, "demo", ["negative", "positive"], DEMO_DESCRIPTION)
    elif Path(spec).expanduser().exists():
        ds = load_file(Path(spec).expanduser(), text_column=text_column,
                       text_pair_column=text_pair_column, label_column=label_column, fmt=fmt,
                       encoding=encoding, header=header)
    elif name == "hf" or spec in HF_DATASETS:
        ds = load_hub(arg if name == "hf" else spec, split=split or "train",
                      text_column=text_column, text_pair_column=text_pair_column,
                      label_column=label_column)
    else:
        raise unresolved_dataset(spec)
    if validate:
        ds.validate()
    if max_examples is not None:
        if max_examples < 1:
            raise InputError(f"--max-examples must be >= 1, got {max_examples}")
        if max_examples < len(ds) or balanced:
            ds = ds.subsample(min(max_examples, len(ds)) if not balanced else
                              _balanced_cap(ds, max_examples), seed=seed, balanced=balanced)
    return ds


def known_names() -> str:
    """The dataset names ``--dataset`` accepts, for messages."""
    return ("demo, " + ", ".join(sorted(HF_DATASETS)) + ", hf:NAME[/CONFIG] or TextAttack's "
            "NAME^CONFIG^SPLIT")


def _looks_like_path(spec: str) -> bool:
    return (any(ch in spec for ch in "/\\") or spec.startswith((".", "~"))
            or bool(Path(spec).suffix))


def unresolved_dataset(spec: str, option: str = "--dataset") -> InputError:
    """The error for a ``--dataset`` that is neither an existing file nor a dataset name: it
    names both readings, so ``demo`` is never answered with "no such file"."""
    if _looks_like_path(spec):
        return InputError(f"{option} {spec}: no such file (and not a dataset name: {known_names()})")
    return InputError(f"{option} {spec}: no such file, and unknown dataset name; pass a file "
                      f"(TSV/CSV/JSONL or '<label> <text>' lines) or one of {known_names()}")


def resolve_dataset(spec: str, option: str = "--dataset", *,
                    must_exist: bool = True) -> dict[str, Any]:
    """``--dataset NAME|FILE`` as a study's dataset spec: ``{"path": ABSOLUTE}`` for a file,
    ``{"name": NAME}`` for a dataset name; InputError when neither reading works.

    The order is :func:`load_dataset`'s, so a study and ``robustlab train`` read the same thing:
    ``demo[:N]``; TextAttack's ``NAME^CONFIG^SPLIT`` (unless such a file exists); an existing
    file; a hub name robustlab knows (``sst2``, ``glue/sst2``, ``hf:NAME``); then a missing
    path. A name resolves to the same ``{"name": …}`` and a file to the same ``{"path": …}`` as
    ``--dataset NAME`` / ``--data FILE`` did before, so study signatures do not change.
    ``must_exist=False`` reads a missing path as a path (a stored command whose file moved
    still parses into its configuration; loading it then names the file).
    """
    text = str(spec).strip()
    if not text:
        raise InputError(f"{option}: empty; pass a file, 'demo' or a hub dataset name")
    name, _, arg = text.partition(":")
    path = Path(text).expanduser()
    if name == "demo":  # load_dataset reads any demo[:…] as the demo set
        return {"name": text}
    if "^" in text and not path.exists():
        _textattack_spec(text, None)  # a malformed NAME^CONFIG^SPLIT stops here
        return {"name": text}
    if path.is_dir():
        raise InputError(f"{option} {spec}: is a directory; pass a data file or a dataset name")
    if path.exists():
        return {"path": str(path.resolve())}
    if (name == "hf" and arg) or text in HF_DATASETS:
        return {"name": text}
    if not must_exist and _looks_like_path(text):
        return {"path": str(path.resolve())}
    raise unresolved_dataset(text, option)


def _textattack_spec(spec: str, split: str | None) -> tuple[str, str | None, str | None]:
    """TextAttack's ``NAME^CONFIG^SPLIT`` (CONFIG and SPLIT optional, CONFIG may be empty) as
    (hub name, config, split); a name robustlab knows (``glue/sst2``) keeps its columns."""
    parts = spec.split("^")
    if len(parts) > 3 or not parts[0]:
        raise InputError(f"--dataset-from-huggingface {spec!r}: expected NAME[^CONFIG[^SPLIT]], "
                         "e.g. glue^sst2^validation or imdb^^test")
    path, config = parts[0], (parts[1] if len(parts) > 1 and parts[1] else None)
    split = parts[2] if len(parts) > 2 and parts[2] else split
    known = f"{path}/{config}" if config else path
    if known in HF_DATASETS:
        return known, None, split
    return path, config, split


def _balanced_cap(ds: Dataset, n: int) -> int:
    counts = ds.class_counts()
    return min(n, min(counts.values()) * len(counts))


def _sniff(path: Path, text: str) -> str:
    lines = [ln for ln in text.split("\n")[:200] if ln.strip()]
    if any(" " in ln.strip() for ln in lines) and all(_LABEL_TEXT_LINE.match(ln) for ln in lines):
        return "label-text"
    if lines and all("\t" in ln for ln in lines):
        return "tsv"
    raise InputError(f"{path}: cannot tell where the labels are (not '<label> <text>' lines, not "
                     "tab-separated); pass --format tsv/csv/jsonl/label-text and the columns")


def _read_table(path: Path, fmt: str | None, encoding: str | None,
                header: bool | None = None):
    """Read ``path`` as ``encoding`` (default UTF-8). No fallback: a file that does not decode
    is refused naming its line (mojibake such as ``cafÃ©`` would silently change the data)."""
    from robustlab.data.files import decode_bytes, format_for, read_rows, regular_input

    regular_input(path)  # read twice (format sniffing, rows) and hashed: no FIFO or /dev/zero
    enc = encoding or "utf-8"
    if fmt is None and format_for(path) == "text":
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror})") from None
        fmt = _sniff(path, decode_bytes(raw, path, enc))
    return read_rows(path, fmt=fmt, encoding=enc, header=header), enc


def load_file(path: str | Path, *, text_column: str | int | None = None,
              text_pair_column: str | int | None = None, label_column: str | int | None = None,
              fmt: str | None = None, encoding: str | None = None,
              drop_empty: bool = True, header: bool | None = None) -> Dataset:
    """A dataset from a local row file (see the module docstring for formats and columns).

    Rows whose text is empty (CR and MPQA have a few label-only lines) are dropped and counted in
    ``source``; with ``drop_empty=False`` they are an error naming the line.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(f"{path}: is a directory; pass a data file")
    table, enc = _read_table(path, fmt, encoding, header)
    if len(table) == 0:
        raise InputError(f"{path}: the dataset is empty (no rows)")
    cols = table.columns
    label_col = table.column_name(label_column) if label_column is not None else next(
        (c for c in LABEL_COLUMN_NAMES if c in cols), None)
    if label_col is None:
        label_col = _guess_label_column(table)
    if text_column is None and text_pair_column is None:
        pair = next((p for p in PAIR_COLUMNS if p[0] in cols and p[1] in cols), None)
        if pair:
            text_column, text_pair_column = pair
    if text_column is None:
        others = [c for c in cols if c != label_col]
        text_col = others[0] if len(others) == 1 else table.column_name(None)
    else:
        text_col = table.column_name(text_column)
    pair_col = table.column_name(text_pair_column) if text_pair_column is not None else None
    rows = [(r, ln) for r, ln in zip(table.rows, table.lines or range(1, len(table) + 1),
                                     strict=True)
            if not (table.fmt in ("label-text", "text") and not str(r.get(label_col, "")).strip()
                    and not str(r.get(text_col, "")).strip())]
    texts: list[Example] = []
    kept: list[tuple[dict, int]] = []
    dropped: list[int] = []
    for r, ln in rows:
        a = r.get(text_col)
        if isinstance(a, str) and table.fmt == "label-text":
            a = a.strip()  # MR has "0  . . . text " (double space, trailing space)
        if not isinstance(a, str) or not a.strip():
            if not drop_empty:
                raise InputError(f"{path}: line {ln}: empty text in column {text_col!r}")
            dropped.append(ln)
            continue
        kept.append((r, ln))
        if pair_col is not None:
            b = r.get(pair_col)
            if not isinstance(b, str):
                raise InputError(f"{path}: line {ln}: missing text in column {pair_col!r}")
            texts.append((a, b))
        else:
            texts.append(a)
    if not kept:
        raise InputError(f"{path}: the dataset is empty (no row has a text in {text_col!r})")
    labels, names = _parse_labels([r.get(label_col) for r, _ in kept],
                                  [ln for _, ln in kept], path, label_col)
    src = f"{path} ({table.fmt}, {enc}, text={text_col!r}" + (
        f", pair={pair_col!r}" if pair_col else "") + f", label={label_col!r})"
    if dropped:
        src += (f"; dropped {len(dropped)} row(s) with an empty text (line(s) "
                f"{', '.join(map(str, dropped[:5]))}{', …' if len(dropped) > 5 else ''})")
    return Dataset(texts, labels, path.name, names, src)


def _number(text: str) -> Decimal | None:
    """A label written as a finite number (``1``, ``1.0``, ``1e3``), else None (a name)."""
    if not re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", text):
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        return None
    return value if value.is_finite() and abs(value.adjusted()) < 100 else None


def _guess_label_column(table: Any) -> str:
    ints = [c for c in table.columns
            if all(re.fullmatch(r"-?\d+", str(r.get(c, "")).strip()) for r in table.rows[:200])]
    if len(ints) == 1:
        return ints[0]
    raise InputError(f"{table.path}: which column holds the label? Pass --label-column NAME or "
                     f"INDEX (columns: {', '.join(map(repr, table.columns))})")


def _parse_labels(values: list[Any], lines: list[int], path: Path,
                  col: str) -> tuple[list[int], list[str] | None]:
    """Integer labels are kept (and must be 0..C-1); string labels map to sorted names. A
    number that is not an integer (``1.5``: a score, not a class) is refused by line."""
    strs = ["" if v is None else str(v).strip() for v in values]
    numbers = [_number(s) for s in strs]
    frac = next(((s, ln) for s, n, ln in zip(strs, numbers, lines, strict=True)
                 if n is not None and not n == n.to_integral_value()), None)
    if frac is not None:
        raise InputError(f"{path}: line {frac[1]}: label {frac[0]!r} in column {col!r} is not "
                         "an integer; labels are integers 0..C-1 or class names (a score is "
                         "not a class: round or bin it first)")
    if all(n is not None for n in numbers):
        labels = [int(n) for n in numbers]  # exact: 10**30 stays 10**30 and is refused
        check_labels(labels, len(labels), where=f"{path}: column {col!r}", min_classes=1)
        return labels, None
    blank = next((ln for s, ln in zip(strs, lines, strict=True) if not s), None)
    if blank is not None:
        raise InputError(f"{path}: line {blank}: empty label in column {col!r}")
    names = sorted(set(strs))
    index = {n: i for i, n in enumerate(names)}
    return [index[s] for s in strs], names


def load_hub(name: str, *, split: str = "train", text_column: str | int | None = None,
             text_pair_column: str | int | None = None,
             label_column: str | int | None = None, config: str | None = None) -> Dataset:
    """A dataset from the Hugging Face hub via ``datasets.load_dataset`` (needs network/cache);
    ``config`` names the hub configuration of a name robustlab does not know."""
    if config is not None:
        path, text_cols, label_col = name, ("text",), "label"
        name = f"{name}^{config}"
    elif name in HF_DATASETS:
        path, config, text_cols, label_col = HF_DATASETS[name]
    else:
        path, _, config = name.partition("/") if name.count("/") == 1 and name.startswith(
            "glue/") else (name, "", "")
        config = config or None
        text_cols, label_col = ("text",), "label"
    if text_column is not None:
        text_cols = (str(text_column),) + ((str(text_pair_column),) if text_pair_column else ())
    label_col = str(label_column) if label_column is not None else label_col
    try:
        import datasets as hf_datasets

        ds = hf_datasets.load_dataset(path, config, split=split)
    except Exception as exc:  # offline, unknown name, bad split: one clear message
        raise InputError(f"cannot load hub dataset {name!r} (split {split!r}): "
                         f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}. Without "
                         "network access use a local file or 'demo'") from exc
    missing = [c for c in (*text_cols, label_col) if c not in ds.column_names]
    if missing:
        raise InputError(f"hub dataset {name!r}: no column(s) {missing}; columns are "
                         f"{ds.column_names}")
    cols = [ds[c] for c in text_cols]
    texts: list[Example] = list(cols[0]) if len(cols) == 1 else list(zip(*cols, strict=True))
    labels = [int(v) for v in ds[label_col]]
    if labels and min(labels) < 0:
        raise InputError(f"hub dataset {name!r} split {split!r} has no labels (label -1, e.g. a "
                         "GLUE test split); use split train or validation")
    return Dataset(texts, labels, f"{name}:{split}", None, f"huggingface {path}/{config} {split}")


def load_examples(spec: str, split: str | None = "test", fmt: str | None = None,
                  n: int | None = None, **options: Any) -> list[tuple[str, int]]:
    """The first ``n`` (text, label) pairs of a dataset of single texts: the test inputs of the
    second-order attacks and of the bias study. ``options``: :func:`load_dataset`'s file
    options (``encoding``, ``header``, ``text_column``, ``label_column``)."""
    if n is not None and n < 1:
        raise InputError(f"--num-examples must be >= 1 (got {n})")
    ds = load_dataset(spec, split=split or "test", fmt=fmt, validate=False, **options)
    if ds.is_pairs:
        raise InputError(f"--dataset {spec}: sentence pairs are not supported by second-order "
                         "attacks or the bias study (single texts only)")
    out = [(str(t), int(y)) for t, y in zip(ds.texts, ds.labels, strict=False)]
    return out[:n] if n is not None else out
