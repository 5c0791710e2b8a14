"""Named lists of perturbation specs, expanded in one place: ``--perturbations papers``.

``papers`` is the eight learnability perturbations of papers 000/003 realised as the papers ran
them. Six of them are NL-Augmenter transformations, and the papers called NL-Augmenter's own
``generate``, which re-seeds Python's and numpy's global generators with the object's seed (0)
before every sentence: every sentence gets the same random sequence. robustlab's built-ins draw an independent stream per
text and use robustlab's own tables, so they realise the same perturbations differently
(docs/perturbations.md measures by how much, and what it does to learnability). So:

* when an NL-Augmenter checkout is importable (the package ``nlaugmenter`` on ``PYTHONPATH``),
  each of the six becomes ``nlaugmenter:<class path>:reseed=False``, NL-Augmenter's class called
  exactly as NL-Augmenter calls it (:class:`robustlab.integrations.nlaugmenter.NLAugmenterPerturbation`);
  the study records the transformation's folder among its inputs;
* otherwise, or for a transformation that cannot be imported, the built-in of the same name runs,
  and one line on stderr says that the realisation differs from the papers';
* ``duplicate_punctuations`` and ``shuffle_word`` are always the built-ins: paper 000 designed
  them, NL-Augmenter has neither.

The expansion happens once, where a list of specs is read (``robustlab learnability``/
``robustness``/``augment``, :class:`robustlab.studies.learnability.study.LearnabilityStudy`), so a
run stores the concrete specs: resuming it never re-expands, and a resume without NL-Augmenter
fails naming it instead of silently switching realisation. From Python::

    from robustlab.perturbations.presets import expand
    expand(["papers"])          # the eight concrete specs
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable

from robustlab.textfmt import echo

__all__ = ["PAPERS", "PAPER_PERTURBATIONS", "PRESETS", "expand", "papers_specs"]

PAPERS = "papers"
#: the eight perturbations of paper 000 (robustlab's built-in names, the paper's order)
PAPER_PERTURBATIONS = ("duplicate_punctuations", "butter_fingers_perturbation", "shuffle_word",
                       "random_upper_transformation", "insert_abbreviation",
                       "whitespace_perturbation", "visual_attack_letters", "leet_letters")
#: preset name -> what it is (shown in messages and docs)
PRESETS = {PAPERS: "the eight learnability perturbations of papers 000/003 as the papers ran "
                   "them (NL-Augmenter's own code when importable)"}

#: built-in name -> (NL-Augmenter folder, class, extra wrapper parameters). ``insert_abbreviation``
#: has two classes (EN, FR): the class path says which. NL-Augmenter's LeetLetters raises on a text
#: without any encodable character (``random.choices`` of nothing); the papers' data could not
#: contain such a perturbed text, so it is a no-op here (``on_error=unchanged``), counted as one.
_NLAUGMENTER = {
    "butter_fingers_perturbation": ("butter_fingers_perturbation", "ButterFingersPerturbation", ""),
    "random_upper_transformation": ("random_upper_transformation", "RandomUpperPerturbation", ""),
    "insert_abbreviation": ("insert_abbreviation", "AbbreviationInsertionEN", ""),
    "whitespace_perturbation": ("whitespace_perturbation", "WhitespacePerturbation", ""),
    "visual_attack_letters": ("visual_attack_letters", "VisualAttackLetters", ""),
    "leet_letters": ("leet_letters", "LeetLetters", ",on_error=unchanged"),
}
#: notices already printed in this process (a command builds its study several times)
_SAID: set[str] = set()


def _stderr(line: str) -> None:
    echo(line, file=sys.stderr, flush=True)


def _importable(package: str) -> bool:
    """Whether ``import package`` would find it (nothing is imported)."""
    try:
        return importlib.util.find_spec(package) is not None
    except (ImportError, ValueError):
        return False


def _nlaugmenter_spec(name: str) -> tuple[str | None, str]:
    """(``nlaugmenter:…:reseed=False`` spec, "") for a built-in NL-Augmenter realises, or (None,
    why not) when its class cannot be imported."""
    folder, cls_name, extra = _NLAUGMENTER[name]
    module = f"nlaugmenter.transformations.{folder}.transformation"
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:  # absent, or one of its own dependencies is
        return None, f"{exc}"
    except Exception as exc:  # the module itself fails: say so, never hide it
        return None, f"importing {module} failed: {type(exc).__name__}: {exc}"
    if not isinstance(getattr(mod, cls_name, None), type):
        return None, f"{module} has no class {cls_name}"
    return f"nlaugmenter:{module}.{cls_name}:reseed=False{extra}", ""


def papers_specs(say: Callable[[str], None] | None = _stderr) -> list[str]:
    """The eight concrete specs of the ``papers`` preset (see the module docstring). ``say``
    gets one line when some of them fall back to the built-ins (once per process per message;
    None: silent)."""
    out: list[str] = []
    fallback: dict[str, str] = {}
    present = _importable("nlaugmenter")
    for name in PAPER_PERTURBATIONS:
        if name not in _NLAUGMENTER:
            out.append(name)
            continue
        spec, why = _nlaugmenter_spec(name) if present else (None, "")
        out.append(spec or name)
        if spec is None:
            fallback[name] = why
    if fallback and say is not None:
        what = ("NL-Augmenter is not importable" if not present else
                "; ".join(f"{n}: {w}" for n, w in fallback.items()))
        line = (f"robustlab: --perturbations papers: {what}, so "
                f"{', '.join(fallback)} run as robustlab's built-ins, whose realisation differs "
                "from the papers' (docs/perturbations.md, 'The papers preset'); put an "
                "NL-Augmenter checkout on PYTHONPATH to run the papers' own")
        if line not in _SAID:
            _SAID.add(line)
            say(line)
    return out


def expand(specs: Iterable[str] | str, say: Callable[[str], None] | None = _stderr) -> list[str]:
    """``specs`` with every preset name replaced, in place, by its concrete specs (others kept as
    they are). A single string is one spec."""
    items = [specs] if isinstance(specs, str) else list(specs)
    out: list[str] = []
    for spec in items:
        if spec.strip() == PAPERS:
            out += papers_specs(say)
        else:
            out.append(spec)
    return out
