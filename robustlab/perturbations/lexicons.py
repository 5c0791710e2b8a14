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

#: hand-picked look-alikes from other scripts and IPA (Cyrillic, Greek, Armenian, Latin extended)
_HOMOGLYPHS: dict[str, str] = {
    "a": "аɑα⍺", "b": "Ьþƅɓ", "c": "сϲᴄƈ", "d": "ԁɗđð", "e": "еєəɛε", "f": "ƒϝ",
    "g": "ɡցɠ", "h": "һհɦħ", "i": "іɩιı", "j": "јϳȷ", "k": "κкƙᴋ", "l": "ӏⅼɭł",
    "m": "ⅿм", "n": "ոηпɲ", "o": "оοօσᴏø", "p": "рρþƥ", "q": "ԛզ", "r": "гɼɽ",
    "s": "ѕʂ", "t": "ƭʈŧ", "u": "υսʋ", "v": "ѵνᴠ", "w": "ԝաᴡ", "x": "хχ", "y": "уүγ",
    "z": "ᴢʐƶ",
    "A": "АΑ", "B": "ВΒß", "C": "СϹ", "D": "ĐƉ", "E": "ЕΕЄ", "H": "НΗ", "I": "ІΙӀ",
    "J": "Ј", "K": "КΚ", "M": "МΜ", "N": "ΝƝ", "O": "ОΟΘ", "P": "РΡ", "S": "Ѕ", "T": "ТΤ",
    "X": "ХΧ", "Y": "ҮΥ", "Z": "Ζ",
}
# Latin letters with diacritics are found by decomposition (ş -> s + cedilla) in these blocks:
_DIACRITIC_BLOCKS = ((0x00C0, 0x0250), (0x1E00, 0x1F00))


@functools.cache
def visual_lookalikes() -> dict[str, tuple[str, ...]]:
    """ASCII letter -> visually similar but different letters (diacritic variants + homoglyphs)."""
    table: dict[str, list[str]] = {c: list(v) for c, v in _HOMOGLYPHS.items()}
    for lo, hi in _DIACRITIC_BLOCKS:
        for cp in range(lo, hi):
            ch = chr(cp)
            base = unicodedata.normalize("NFD", ch)
            if len(base) > 1 and base[0].isascii() and base[0].isalpha() and ch.isalpha():
                table.setdefault(base[0], []).append(ch)
    return {k: tuple(dict.fromkeys(v)) for k, v in table.items()}


# ---- abbreviations ---------------------------------------------------------------------------

#: phrase (lower case) -> chat-style abbreviation, written for robustlab from common English chat
#: usage (acronyms, letter/number homophones, clipped and respelled words). Longer phrases win
#: over the words inside them; matching is whole-word and case-insensitive, the case of the first
#: letter / ALL CAPS is kept. NL-Augmenter's rule file (which paper 000 used) covers the same
#: ground (it maps "the" -> "da", "to" -> "2", "for" -> "4", ...); no line of it is copied here.
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
    # phrase contractions
    "going to": "gonna", "want to": "wanna", "got to": "gotta", "kind of": "kinda",
    "sort of": "sorta", "out of": "outta", "lot of": "lotta", "don't know": "dunno",
    "let me": "lemme", "give me": "gimme", "you all": "y'all", "no one": "no1",
    # letter and number homophones
    "you": "u", "your": "ur", "you're": "ur", "are": "r", "be": "b", "see": "c", "why": "y",
    "oh": "o", "okay": "k", "to": "2", "too": "2", "two": "2", "for": "4", "four": "4",
    "before": "b4", "forever": "4eva", "today": "2day", "tonight": "2nite", "tomorrow": "2moro",
    "great": "gr8", "later": "l8r", "late": "l8", "wait": "w8", "mate": "m8", "hate": "h8",
    "straight": "str8", "someone": "sum1", "anyone": "ne1", "everyone": "every1",
    "anybody": "nebody",
    # respellings
    "the": "da", "that": "dat", "this": "dis", "these": "dese", "those": "dose", "them": "dem",
    "and": "n", "what": "wat", "was": "wuz", "because": "bc", "cause": "cuz", "please": "pls",
    "people": "ppl", "thanks": "thx", "really": "rly", "seriously": "srsly", "about": "abt",
    "with": "w/", "without": "w/o", "within": "w/i", "through": "thru", "though": "tho",
    "although": "altho", "love": "luv", "night": "nite", "light": "lite", "right": "rite",
    "enough": "enuf", "good": "gud", "know": "kno", "just": "jus", "little": "lil",
    "nothing": "nuthin", "something": "sth", "everything": "evrythin", "very": "v",
    "sorry": "sry", "boyfriend": "bf", "girlfriend": "gf", "birthday": "bday",
    "probably": "prob", "between": "btwn", "message": "msg", "text": "txt", "picture": "pic",
    "pictures": "pics", "minutes": "mins", "minute": "min", "seconds": "secs",
    "second": "sec", "hours": "hrs", "hour": "hr", "years": "yrs", "year": "yr",
    "information": "info", "favourite": "fave", "favorite": "fave", "definitely": "def",
    "whatever": "w/e", "government": "govt", "versus": "vs", "could": "cld", "would": "wld",
    "should": "shld", "question": "q", "questions": "qs", "yesterday": "yday",
    "weekend": "wknd", "have": "hav", "some": "sum", "one": "1", "ever": "eva", "never": "neva",
    "could have": "coulda", "would have": "woulda", "should have": "shoulda",
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
