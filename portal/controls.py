"""The characters text loses before Cairn stores, shows, searches or prints it: one rule for uploaded text,
typed text, model replies and what ``cairn`` prints.

**Control characters.** C0 but tab, line feed and carriage return; DEL; and C1 but U+0085 (NEL, a line
break as ``str.splitlines`` counts one). An escape, a bell or a backspace is invisible on a page yet acts
in a terminal and in a spreadsheet; C1 is the 8-bit spelling of the terminal controls (U+009B is CSI,
"ESC ["), which VTE terminals and GNU screen run in UTF-8 text as they run an escape sequence.

**Bidirectional reordering controls.** Embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069)
reorder how the text after them is shown, to the end of its paragraph: "rm -rf /tmp/old" can be stored,
searched and given to a model as one thing and read as another ("Trojan Source"), and a question or a
title holding one reorders the rest of the line a list shows it in (the time, the rating, the agent after
it). Nothing a person writes needs them. The marks (U+200E, U+200F, U+061C) only place neutral
characters, and right-to-left text needs those: they stay. File names refuse the same set
(``documents.filenames``).

**One form of each letter.** Text Cairn reads is composed (Unicode NFC, ``readable_text``): "ü" written as a "u" and
a combining accent (as macOS writes text and some PDFs' text layers hold it) and "ü" typed as one character are one
word to search, to the evidence check and to the answer. Stored apart, a question typed in a browser never found the
document and the answer said "No document searched mentions Zürich" after quoting its sentence. The two forms are
canonically equivalent: they show alike. HTML once written is never composed: a ">" and a combining U+0338 after it
are one character, "≯", and the tag would lose its end.
"""

from __future__ import annotations

import re
import unicodedata

BIDI_REORDERING = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"

_CONTROLS_BUT_NUL = rf"\x01-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ufffe\uffff{BIDI_REORDERING}"
_CONTROL = re.compile(rf"[\x00{_CONTROLS_BUT_NUL}]")
_CONTROL_BUT_NUL = re.compile(rf"[{_CONTROLS_BUT_NUL}]")


def strip_control_characters(text: str, keep_nul: bool = False) -> str:
    """Drop control characters (keeping tab and newline) and the bidirectional controls that reorder text
    (``BIDI_REORDERING``): from HTML a sanitizer wrote, and from what ``cairn`` prints. Text Cairn reads is
    ``readable_text``. ``keep_nul``: text sent to the portal, where a NUL is refused, not dropped (``request_text``)."""
    return (_CONTROL_BUT_NUL if keep_nul else _CONTROL).sub("", text)


def readable_text(text: str, keep_nul: bool = False) -> str:
    """Text as Cairn reads it, from a file, a form, a query string, JSON or a model: without control characters
    (``strip_control_characters``) and composed (NFC), so the text people read is the text that is stored,
    searched and given to a model. Never applied to HTML once written: NFC joins a ">" and a combining U+0338
    after it into "≯", and the tag's end with it."""
    return unicodedata.normalize("NFC", strip_control_characters(text, keep_nul))


def normalised_text(text: str) -> str:
    """A document's text as it is stored, from an upload or an edit: newlines as ``\\n``, without control
    characters or bidirectional reordering."""
    return readable_text(text.replace("\r\n", "\n").replace("\r", "\n"))


# Characters shown as nothing that are neither white space nor format characters (Cf): Unicode's
# default-ignorable letters and marks (Hangul fillers, the combining grapheme joiner, variation selectors), and the
# blank Braille pattern, which fonts draw empty.
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0") | frozenset(map(chr, range(0x180B, 0x1810)))
_IGNORABLE |= frozenset(map(chr, range(0xFE00, 0xFE10))) | frozenset(map(chr, range(0xE0100, 0xE01F0)))
# Format characters a page does show: the Arabic and Syriac signs written before a number (U+0600–U+0605, U+06DD,
# U+070F, U+0890–U+0891, U+08E2) and the Kaithi number sign.
_SHOWN_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2\U000110bd\U000110cd")


def unseen(character: str) -> bool:
    """White space, a control, a format character (zero-width, bidirectional mark, soft hyphen) or another
    character shown as nothing."""
    return (
        character.isspace()
        or (unicodedata.category(character) in ("Cc", "Cf") and character not in _SHOWN_FORMAT)
        or character in _IGNORABLE
    )


def shows_nothing(text: str) -> bool:
    """Whether ``text`` would show nothing on a page: a title, a name, a question or a document made only of
    zero-width spaces, joiners or fillers is as empty as one of spaces (it listed as a link with nothing to click)."""
    return all(unseen(character) for character in text.strip())
