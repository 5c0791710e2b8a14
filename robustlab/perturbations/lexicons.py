"""Tables the built-in perturbations use, written for robustlab.

Every table is built once (lazily where building costs anything) and then only read, so the
per-text work is lookups. Keyboard neighbours are derived from the QWERTY row geometry, not typed
by hand, so they stay consistent (a key's neighbours are the keys touching it).
"""

from __future__ import annotations

import functools
import unicodedata

__all__ = [
    "ABBREVIATIONS",
    "LEET",
    "keyboard_neighbours",
    "keyboard_typos",
    "punctuation_doubling_list",
    "punctuation_doubling_table",
    "visual_lookalikes",
]

# ---- keyboard ---------------------------------------------------------------------------------

_QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@functools.cache
def keyboard_neighbours() -> dict[str, str]:
    """letter -> the letters on touching keys (QWERTY, both cases; the letter itself excluded).

    Rows are staggered to the right as on a real keyboard: key ``c`` of a row touches keys
    ``c`` and ``c + 1`` of the row above and ``c - 1`` and ``c`` of the row below.
    """
    out: dict[str, str] = {}
    for r, row in enumerate(_QWERTY_ROWS):
        for c, key in enumerate(row):
            near = [row[i] for i in (c - 1, c + 1) if 0 <= i < len(row)]
            if r > 0:
                above = _QWERTY_ROWS[r - 1]
                near += [above[i] for i in (c, c + 1) if 0 <= i < len(above)]
            if r + 1 < len(_QWERTY_ROWS):
                below = _QWERTY_ROWS[r + 1]
                near += [below[i] for i in (c - 1, c) if 0 <= i < len(below)]
            out[key] = "".join(near)
            out[key.upper()] = "".join(near).upper()
    return out


#: key centres of the three letter rows, in key widths: rows staggered as on an ANSI keyboard
#: (the A row starts a quarter key right of the Q row, the Z row three quarters)
_ROW_OFFSETS = (0.0, 0.25, 0.75)
#: a butter-finger typo lands on a key whose centre is at most this far (key widths) from the
#: intended one. NL-Augmenter's hand-written lists (butter_fingers_perturbation) reach about as
#: far: of the radii 1.1-3.0 this one matches its lists best (mean Jaccard 0.80, 10.2 keys per
#: letter against its 9.1), and 41 % of the substitutes then touch the key (NL-Augmenter: 42 %).
TYPO_RADIUS = 2.5


@functools.cache
def keyboard_typos() -> dict[str, str]:
    """letter -> the letters a butter-finger typo may give (both cases; the letter excluded):
    every letter key within :data:`TYPO_RADIUS` key widths of it, nearest first. Wider than
    :func:`keyboard_neighbours` (touching keys only), which paper 001's ``char_keyboard`` uses."""
    import math

    centre = {k: (c + _ROW_OFFSETS[r], float(r))
              for r, row in enumerate(_QWERTY_ROWS) for c, k in enumerate(row)}
    out: dict[str, str] = {}
    for key, (x, y) in centre.items():
        near = sorted((math.hypot(x - x2, y - y2), other) for other, (x2, y2) in centre.items()
                      if other != key and math.hypot(x - x2, y - y2) <= TYPO_RADIUS)
        out[key] = "".join(k for _, k in near)
        out[key.upper()] = out[key].upper()
    return out


# ---- leet -------------------------------------------------------------------------------------

#: letter -> leet digit(s). Lower-case letters are those paper 000 (Figure 3) shows being encoded
#: (e->3, g->9, w->3, o->0, h->4, b->6, y->4); upper-case ones use the classic leet digits.
LEET: dict[str, str] = {
    "b": "6", "e": "3", "g": "9", "h": "4", "j": "7", "m": "3", "o": "0", "w": "3", "y": "4",
    "A": "4", "B": "8", "C": "0", "D": "0", "E": "3", "G": "6", "I": "1", "J": "9", "L": "7",
    "N": "11", "O": "0", "S": "5", "T": "7", "X": "8", "Z": "2",
    "!": "1", "|": "1",
}

# ---- visually similar letters -------------------------------------------------------------------

#: hand-picked look-alikes that are not a Latin letter with a diacritic: Cyrillic, Greek,
#: Armenian, Cherokee and Tifinagh letters, IPA and small capitals, Latin letters with a stroke or
#: hook (``ł``, ``ɗ``, ``ƶ``), none with a compatibility decomposition. So they stay different
#: after NFKD and accent stripping, the normalisation of XLNet's and uncased BERT's tokenizers
#: (tests/test_perturbations_learnability.py checks this with the ``tokenizers`` normalisers).
_HOMOGLYPHS: dict[str, str] = {
    "a": "аɑαⱥ⍺", "b": "Ьƅɓƀƃ", "c": "сϲᴄƈȼҫ", "d": "ԁɗđɖƌ", "e": "еєɛεҽә", "f": "ƒϝʄ",
    "g": "ɡցɠǥ", "h": "һհɦħћ", "i": "іɩιıɨ", "j": "јϳȷɉʝ", "k": "κкƙᴋĸ", "l": "ӏɭłƚȴ",
    "m": "мɱᴍ", "n": "ոηпɲŋɳ", "o": "оοօσᴏøɵ", "p": "рρþƥ⍴", "q": "ԛզɋʠ", "r": "гɼɽᴦґ",
    "s": "ѕʂꜱ", "t": "ƭʈŧƫ", "u": "υսʋʉᴜμ", "v": "ѵνᴠⱱ", "w": "ԝաᴡⱳ", "x": "хχӿҳ",
    "y": "уүγƴ", "z": "ᴢʐƶȥʑ",
    "A": "АΑȺ", "B": "ВΒßɃ", "C": "СϹȻᏟ", "D": "ĐƉᎠ", "E": "ЕΕЄƐ", "F": "ϜҒ", "G": "ԌƓǤ",
    "H": "НΗĦⱧ", "I": "ІΙӀƗ", "J": "ЈɈ", "K": "КΚƘⱩ", "L": "ŁᏞԼ", "M": "МΜϺ", "N": "ΝƝŊ",
    "O": "ОΟΘՕØƟ", "P": "РΡⱣƤ", "Q": "ԚɊ", "R": "ƦɌᏒ", "S": "ЅᏚ", "T": "ТΤŦƬ", "U": "ՍɄᑌ",
    "V": "ѴᏙⴸ", "W": "ԜᏔ", "X": "ХΧӾ", "Y": "ҮΥɎƳ", "Z": "ΖƵȤ",
}
# Latin letters with diacritics are found by decomposition (ş -> s + cedilla) in these blocks:
_DIACRITIC_BLOCKS = ((0x00C0, 0x0250), (0x1E00, 0x1F00))
#: diacritic variants per hand-picked look-alike of a letter. NL-Augmenter's table
#: (visual_attack_letters, which the papers used) draws 43-46 % of its substitutes among Latin
#: diacritic variants, which NFKD + accent stripping turn back into the letter; 0.8 per
#: look-alike gives about the same mix (44 %), so the attack survives those tokenizers about
#: as often as the papers' did (docs/perturbations.md measures it).
_DIACRITICS_PER_HOMOGLYPH = 0.8


@functools.cache
def visual_lookalikes() -> dict[str, tuple[str, ...]]:
    """ASCII letter -> visually similar but different letters: the hand-picked look-alikes, then
    ``round(0.8 * their number)`` of its Latin diacritic variants (found by decomposition,
    spread evenly over the Unicode blocks' order), without repeats."""
    variants: dict[str, list[str]] = {}
    for lo, hi in _DIACRITIC_BLOCKS:
        for cp in range(lo, hi):
            ch = chr(cp)
            base = unicodedata.normalize("NFD", ch)
            if len(base) > 1 and base[0].isascii() and base[0].isalpha() and ch.isalpha():
                variants.setdefault(base[0], []).append(ch)
    table: dict[str, tuple[str, ...]] = {}
    for letter in sorted(set(_HOMOGLYPHS) | set(variants)):
        glyphs = list(_HOMOGLYPHS.get(letter, ""))
        found = variants.get(letter, [])
        k = min(len(found), round(_DIACRITICS_PER_HOMOGLYPH * max(1, len(glyphs))))
        picked = [found[(i * len(found)) // k] for i in range(k)] if k else []
        table[letter] = tuple(dict.fromkeys(glyphs + picked))
    return table


# ---- abbreviations ---------------------------------------------------------------------------

#: phrase (lower case) -> chat-style abbreviation, written for robustlab from common English chat
#: usage (acronyms, letter/number homophones, clipped and respelled words). Longer phrases win
#: over the words inside them; matching is whole-word and case-insensitive, the case of the first
#: letter / ALL CAPS is kept. Which words it abbreviates follows NL-Augmenter's rule file (which
#: paper 000 used; no line of it is copied here): its most frequent rules on SST-2 are
#: ``the→da``, ``to→2``, ``with→w/``, ``for→4``, ``you→u``, ``have→hv``, ``what``, ``are→r``,
#: ``be→b``, ``good→gd``; it leaves ``and``, ``that``, ``this``, ``one``, ``would`` alone, so this
#: table does too. Where NL-Augmenter's spelling is idiosyncratic (``love→<3333``, ``own→pwn``,
#: ``man→bloke``) the common chat spelling is used or the word is left out.
#: ``bench/bench_perturbation_fidelity.py`` measures the agreement (docs/perturbations.md).
ABBREVIATIONS: dict[str, str] = {
    # acronyms of phrases
    "as far as i know": "afaik", "as soon as possible": "asap", "at the moment": "atm",
    "be right back": "brb", "by the way": "btw", "for what it's worth": "fwiw",
    "for your information": "fyi", "i don't know": "idk", "i love you": "ily",
    "in my humble opinion": "imho", "in my opinion": "imo", "in real life": "irl",
    "laughing out loud": "lol", "let me know": "lmk", "never mind": "nvm", "no problem": "np",
    "not gonna lie": "ngl", "of course": "ofc", "oh my god": "omg", "oh my gosh": "omg",
    "right now": "rn", "shaking my head": "smh", "talk to you later": "ttyl", "to be fair": "tbf",
    "to be honest": "tbh", "too long didn't read": "tl;dr", "what the hell": "wth",
    "see you later": "cul8r", "see you": "cu", "thank you": "ty", "how are you": "hru",
    "are you": "ru", "in case you missed it": "icymi", "for the win": "ftw",
    "with regard to": "wrt", "best friends forever": "bff", "what's up": "sup",
    "point of view": "pov", "take care": "tc", "you are": "ur", "i know": "ik",
    # phrase contractions
    "to be": "2b", "going to": "gonna", "want to": "wanna", "got to": "gotta",
    "don't know": "dunno", "let me": "lemme", "give me": "gimme", "you all": "y'all",
    "no one": "no1",
    # letter and number homophones
    "you": "u", "your": "ur", "you're": "ur", "are": "r", "be": "b", "why": "y", "oh": "o",
    "okay": "k", "to": "2", "for": "4", "before": "b4", "forever": "4eva", "tonight": "2nite",
    "tomorrow": "2moro", "great": "gr8", "greatest": "gr8est", "create": "cr8", "later": "l8r",
    "wait": "w8", "mate": "m8", "hate": "h8", "straight": "str8", "anyone": "ne1", "any": "ne",
    "everyone": "every1", "once": "1ce", "first": "1st", "second": "2nd", "third": "3rd",
    "excellent": "xlnt", "easy": "ez",
    # respellings and clippings
    "the": "da", "what": "wat", "was": "wuz", "because": "bc", "please": "pls", "people": "ppl",
    "thanks": "thx", "really": "rly", "seriously": "srsly", "about": "abt", "with": "w/",
    "without": "w/o", "love": "luv", "enough": "enuf", "good": "gd", "have": "hv",
    "nothing": "nuthin", "very": "vry", "never": "nvr", "ever": "eva", "sorry": "sry",
    "boyfriend": "bf", "girlfriend": "gf", "girl": "grl", "birthday": "bday", "probably": "probs",
    "definitely": "def", "obviously": "obv", "totally": "totes", "usually": "usu",
    "message": "msg", "picture": "pic", "pictures": "pics", "camera": "cam", "minutes": "mins",
    "minute": "min", "hours": "hrs", "hour": "hr", "week": "wk", "weekend": "wknd",
    "yesterday": "yday", "information": "info", "whatever": "w/e", "government": "govt",
    "versus": "vs", "could": "cld", "work": "wrk", "best": "bst", "down": "dn",
    "family": "fam", "check": "chk", "cool": "kewl", "welcome": "wc",
}

# ---- punctuation -------------------------------------------------------------------------------


@functools.cache
def punctuation_doubling_table() -> dict[int, str]:
    """str.translate table doubling every punctuation mark (Unicode category P*) in the BMP."""
    return {
        cp: chr(cp) * 2 for cp in range(0x10000) if unicodedata.category(chr(cp)).startswith("P")
    }


@functools.cache
def punctuation_doubling_list() -> list[str]:
    """The same table as a list indexed by code point (BMP): ``str.translate`` indexes a list
    much faster than it hashes into a dict; code points past its end map to themselves."""
    out = [chr(cp) for cp in range(0x10000)]
    for cp, doubled in punctuation_doubling_table().items():
        out[cp] = doubled
    return out
