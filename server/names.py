"""Player names: which are allowed, and when two of them look the same.

A name is what other players read next to a seat, so it must be visible, one
line, written left to right as typed, and not a disguise of someone else's
name. :func:`check_name` is the one rule, used by ``hello`` and ``register``;
:func:`name_key` is the form under which names are compared: two names with the
same key look alike, and only one of them can belong to an account.

What is refused (each with its own message):

* blank names, leading, trailing or doubled spaces, and any space but U+0020;
* control characters, line and paragraph separators (U+2028, U+2029);
* bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E, U+200F, U+061C);
* invisible characters: format characters (zero-width space and joiners, soft
  hyphen, BOM), Unicode's default-ignorable code points (variation selectors,
  Hangul fillers) and the blank braille pattern; a name of nothing else is
  refused as invisible;
* more than two combining marks on one character ("zalgo" text);
* private-use, unassigned and surrogate code points;
* compatibility characters (fullwidth letters, ligatures, superscripts: any name
  that Unicode's NFKC normalization would change), which imitate plain ones;
* letters of more than one script, except the combinations that writing systems
  use (Latin with Han, Hiragana, Katakana, Hangul or Bopomofo), as Unicode's
  "highly restrictive" profile (UTS #39) allows: so "pаypal" with a Cyrillic
  "а" is refused;
* a trailing parenthesized word ending in "bot" such as "alice (bot)": the server
  marks bots so;
* a name of nothing but spaces and ``_-.`` (its look-alike key would be empty).

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 32
MAX_MARKS = 2

#: Bidirectional formatting characters: they reorder what comes after them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                          "\u2066\u2067\u2068\u2069")

#: Unicode's Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt) plus
#: characters that render as blank without being spaces.
_INVISIBLE_RANGES = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x2800, 0x2800), (0x3164, 0x3164), (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)

#: Scripts that may appear together in one name (besides a single script alone).
_COMPATIBLE_SCRIPTS = (
    frozenset({"LATIN", "CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "CJK", "HANGUL"}),
    frozenset({"LATIN", "CJK", "BOPOMOFO"}),
)

_BOT_SUFFIX = re.compile(r"\([^()]*bot\)$")

#: Look-alikes folded together by :func:`name_key` (after NFKC and casefolding):
#: Cyrillic and Greek letters drawn like Latin ones, and the digits and marks
#: drawn like letters.
_CONFUSABLES = str.maketrans({
    # Cyrillic
    "а": "a", "в": "b", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j",
    "к": "k", "ӏ": "l", "м": "m", "н": "h", "о": "o", "р": "p", "ԛ": "q", "ѕ": "s",
    "т": "t", "ц": "u", "ѵ": "v", "ԝ": "w", "х": "x", "у": "y", "ѐ": "e", "ё": "e",
    "ї": "i", "г": "r", "п": "n", "ь": "b",
    # Greek
    "α": "a", "β": "b", "ε": "e", "η": "n", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
    "ρ": "p", "τ": "t", "υ": "u", "χ": "x", "γ": "y", "ω": "w", "ζ": "z", "μ": "u",
    # digits and marks
    "0": "o", "1": "l", "|": "l", "5": "s", "$": "s", "@": "a",
    # Latin look-alikes of each other
    "i": "l", "ı": "l", "ɡ": "g",
})


class BadName(ValueError):
    """A name that :func:`check_name` refuses; ``str(exc)`` says why, for the player."""


def _invisible(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _INVISIBLE_RANGES)


def _script(ch: str) -> str | None:
    """The script of a letter (the first word of its Unicode name), None for others
    (modifier letters such as the prolonged sound mark are shared by scripts)."""
    if not unicodedata.category(ch).startswith("L") or unicodedata.category(ch) == "Lm":
        return None
    name = unicodedata.name(ch, "")
    if not name:
        return None
    word = name.split()[0]
    return "CJK" if word in ("CJK", "IDEOGRAPHIC") else word


def _check_char(ch: str) -> None:
    cat = unicodedata.category(ch)
    code = f"U+{ord(ch):04X}"
    if ch in BIDI_CONTROLS:
        raise BadName(f"a name may not contain bidirectional controls ({code})")
    if cat in ("Zl", "Zp") or ch in "\n\r\x0b\x0c\x85":
        raise BadName(f"a name is one line: no line or paragraph separators ({code})")
    if cat == "Cc":
        raise BadName(f"a name may not contain control characters ({code})")
    if cat == "Cf" or _invisible(ch):
        raise BadName(f"a name may not contain invisible characters ({code})")
    if cat == "Zs" and ch != " ":
        raise BadName(f"the only space allowed in a name is the plain one, not {code}")
    if cat in ("Co", "Cn", "Cs"):
        raise BadName(f"a name may not contain private-use or unassigned characters ({code})")


def check_name(name: str) -> str:
    """Check a player's name and return it NFC-normalized (the form to store and show).

    Raises:
        BadName: the name breaks one of the rules in the module docstring; the
            message names the rule and, for a bad character, its code point.
    """
    name = unicodedata.normalize("NFC", name)
    if not name or name.isspace():
        raise BadName("a name may not be blank")
    if len(name) > MAX_LENGTH:
        raise BadName(f"a name has at most {MAX_LENGTH} characters")
    marks = 0
    for ch in name:
        _check_char(ch)
        marks = marks + 1 if unicodedata.category(ch).startswith("M") else 0
        if marks > MAX_MARKS:
            raise BadName(f"at most {MAX_MARKS} combining marks on one character")
    if unicodedata.category(name[0]).startswith("M"):
        raise BadName("a name may not start with a combining mark")
    if name != name.strip(" "):
        raise BadName("a name may not start or end with a space")
    if "  " in name:
        raise BadName("a name may not contain two spaces in a row")
    if unicodedata.normalize("NFKC", name) != name:
        raise BadName("a name may not contain compatibility characters (fullwidth letters, "
                      "ligatures, superscripts): type the plain ones")
    scripts = {s for s in map(_script, name) if s is not None}
    if len(scripts) > 1 and not any(scripts <= ok for ok in _COMPATIBLE_SCRIPTS):
        raise BadName("a name may not mix letters of different scripts ("
                      + ", ".join(sorted(s.lower() for s in scripts)) + ")")
    key = name_key(name)
    if not key:
        raise BadName("a name needs a character other than spaces and _-.")
    if _BOT_SUFFIX.search(key):
        raise BadName('a name may not end in "(bot)": the server marks bots so')
    return name


def name_key(name: str) -> str:
    """The form under which two names are the same name (never shown to anyone).

    NFKC, casefolded, look-alike letters and digits folded together (Cyrillic "а"
    and Latin "a", "0" and "o", "l", "1" and "I"), spaces and the punctuation
    ``_-.`` removed. ``name_key("Alice") == name_key("аlice") == name_key("a_l1ce")``.
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    folded = "".join(ch for ch in unicodedata.normalize("NFD", folded)
                     if not unicodedata.category(ch).startswith("M"))
    folded = folded.translate(_CONFUSABLES)
    folded = folded.replace("rn", "m").replace("vv", "w")
    return re.sub(r"[\s_.\-]", "", folded)
