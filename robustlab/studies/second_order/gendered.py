"""The gendered-token blacklist of the bias study (paper 002, footnote 7) and ``--blacklist FILE``.

Why: B(p, k) for a gendered pair such as he/she measures what swapping *that* word does. If the
neighbourhood may also turn "the actor" into "the actress" or "his" into "her", the sentences
no longer differ from X_test in the pair only, and B mixes the pair's effect with others. The
authors blacklist every gender-defining word (their ``get_gender_define_words``) besides the
pair words; robustlab does the same with its own list.

**Provenance and criteria.** :data:`GENDERED_WORDS` was written for robustlab (not copied from a
published list): lower-case English words whose dictionary meaning states the sex or gender of
a person (pronouns; kinship; address and titles; nobility; gender-marked occupational nouns
such as ``actress``/``chairman``; ``male``/``feminine``-type adjectives and nouns built on
them), in singular and plural where the plural is a separate token. Left out on purpose: given
names (unbounded, and SST-2 rarely has them), words that are gendered in one sense only and
common in another (``miss``, ``ma``, ``pop``, ``chap``, ``stud``, ``chick``, ``master``,
``host``, ``count``), and gender-neutral words (``parent``, ``sibling``, ``person``).
Coverage against WinoBias' and GN-GloVe's lists is measured by
``bench/bench_bias_fidelity.py`` (docs/attacks.md).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from robustlab.errors import InputError

_MALE = """
he him his himself man men boy boys male males masculine manly manhood boyhood boyish
father fathers dad dads daddy daddies papa son sons sonny brother brothers bro bros brethren
husband husbands uncle uncles nephew nephews grandfather grandfathers grandpa grandpas granddad
grandson grandsons stepfather stepfathers stepson stepsons stepbrother stepbrothers godfather
godfathers godson fatherhood brotherhood fraternal fraternity paternal patriarch patriarchs
king kings prince princes duke dukes lord lords emperor emperors baron barons earl earls
sultan sultans czar tsar pharaoh sheikh
sir mr mister messrs monsieur signor senor gentleman gentlemen gentlemanly
guy guys lad lads laddie fella fellas dude dudes bloke blokes boyfriend boyfriends
groom grooms bridegroom bridegrooms widower widowers bachelor bachelors fiance
actor actors waiter waiters steward stewards headmaster headmasters schoolboy schoolboys
businessman businessmen chairman chairmen spokesman spokesmen policeman policemen fireman
firemen salesman salesmen sportsman sportsmen cameraman cameramen congressman congressmen
fisherman fishermen horseman horsemen nobleman noblemen countryman countrymen workman workmen
craftsman craftsmen statesman statesmen postman postmen doorman doormen foreman frontman
madman madmen strongman hitman henchman henchmen serviceman servicemen cowboy cowboys
monk monks friar friars abbot abbots wizard wizards sorcerer sorcerers warlock manservant
manservants menservants macho masculinity manliness patrilineal airman airmen barman barmen
beau beaus bellboy bellboys busboy busboys councilman councilmen handyman househusband
househusbands hubby marquis masseur masseurs gents fiances fraternities
"""

_FEMALE = """
she her hers herself woman women girl girls female females feminine womanly womanhood girlhood
girlish mother mothers mom moms mommy mommies mum mums mummy mama mamas daughter daughters
sister sisters sis sistren wife wives aunt aunts auntie aunties niece nieces grandmother
grandmothers grandma grandmas granny grannies granddaughter granddaughters stepmother
stepmothers stepdaughter stepdaughters stepsister stepsisters godmother godmothers goddaughter
motherhood sisterhood sororal sorority maternal matriarch matriarchs
queen queens princess princesses duchess duchesses lady ladies empress empresses baroness
countess countesses sultana czarina tsarina
madam madame mrs ms mademoiselle signora senora gentlewoman gal gals lass lasses lassie
girlfriend girlfriends bride brides widow widows spinster spinsters fiancee
actress actresses waitress waitresses stewardess stewardesses hostess hostesses heroine
heroines headmistress schoolgirl schoolgirls businesswoman businesswomen chairwoman chairwomen
spokeswoman spokeswomen policewoman policewomen firewoman saleswoman saleswomen sportswoman
sportswomen camerawoman camerawomen congresswoman congresswomen fisherwoman horsewoman
noblewoman noblewomen countrywoman countrywomen workwoman craftswoman stateswoman postwoman
forewoman madwoman cowgirl cowgirls housewife housewives maid maids maiden maidens
mistress mistresses nun nuns abbess priestess priestesses witch witches sorceress enchantress
goddess goddesses heiress heiresses diva divas ballerina ballerinas seamstress seamstresses
songstress temptress landlady landladies manageress usherette femininity matrilineal airwoman
airwomen barwoman barwomen bachelorette bachelorettes belle belles councilwoman councilwomen
handywoman governess governesses headmistresses horsewomen maidservant maidservants
marchioness masseuse masseuses minx wench wenches strongwoman abbesses sorceresses sororities
fiancees effeminate
"""

#: the project's gendered words (module docstring): male and female forms, lower case
GENDERED_WORDS: frozenset[str] = frozenset((_MALE + _FEMALE).split())
#: the value of ``blacklist_from`` for the list above
BUILTIN = "gendered"
#: ``--blacklist pairs``: only the pairs' own words (what runs made before the list did)
PAIRS_ONLY = "pairs"

_WORD = re.compile(r"^[^\W\d_]+(?:['-][^\W\d_]+)*$")
#: the largest blacklist file read (a word list is a few KiB; a larger file is not one)
MAX_BLACKLIST_BYTES = 1 << 20


def gendered_pairs(pairs: Iterable[Sequence[str]]) -> bool:
    """Whether any word of any pair is gendered (then the gendered list is blacklisted)."""
    return any(w.lower() in GENDERED_WORDS for pair in pairs for w in pair)


def read_blacklist(path: str | os.PathLike[str]) -> tuple[str, ...]:
    """One word per line (``#`` starts a comment; blank lines skipped), lower-cased, sorted.

    Read as data: every line must be a single word; anything else is an InputError naming the
    file and the line (the command prints it on one line and exits 2)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--blacklist {p}: no such file (one word per line)")
    if p.stat().st_size > MAX_BLACKLIST_BYTES:
        raise InputError(f"--blacklist {p}: larger than {MAX_BLACKLIST_BYTES} bytes; not a "
                         "word list")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"--blacklist {p}: not UTF-8 text ({exc.reason} at byte "
                         f"{exc.start})") from None
    except OSError as exc:
        raise InputError(f"--blacklist {p}: cannot be read ({exc.strerror})") from None
    words: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        word = line.split("#", 1)[0].strip()
        if not word:
            continue
        if not _WORD.match(word):
            raise InputError(f"--blacklist {p}, line {n}: expected one word, got {word[:60]!r}")
        words.add(word.lower())
    if not words:
        raise InputError(f"--blacklist {p}: holds no words")
    return tuple(sorted(words))


def resolve_blacklist(spec: str | None, pairs: Iterable[Sequence[str]]
                      ) -> tuple[tuple[str, ...] | None, str]:
    """``(words, from)`` blacklisted besides the pairs' own words.

    ``spec`` None: the gendered list when the pairs are gendered, else nothing; ``pairs``:
    nothing (the pairs' words only: words None, as runs stored before this option);
    ``gendered``: the list whatever the pairs; else a file. ``from`` says which
    (``gendered``, ``pairs`` or the file's absolute path), for people."""
    pairs = list(pairs)
    if spec is None:
        spec = BUILTIN if gendered_pairs(pairs) else PAIRS_ONLY
    if spec == PAIRS_ONLY:
        return None, PAIRS_ONLY
    if spec == BUILTIN:
        return tuple(sorted(GENDERED_WORDS)), BUILTIN
    return read_blacklist(spec), str(Path(spec).expanduser().resolve())


__all__ = ["BUILTIN", "GENDERED_WORDS", "PAIRS_ONLY", "gendered_pairs", "read_blacklist",
           "resolve_blacklist"]
