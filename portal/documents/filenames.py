"""File names: what an upload may be called, and the name a download is given. One rule for both.

A name's folder part is dropped (some browsers and scripts send a whole path).
A name holding a control character (NUL, a line break, an escape …), a line or
paragraph separator (U+2028, U+2029: line breaks too) or a
text-direction mark (U+202E and the other bidirectional controls, which can make
``gnp.exe`` read as ``exe.png``) is refused at upload, naming the character:
such a name is broken or meant to deceive, and cleaning it would store a name
nobody chose. A name longer than ``MAX_NAME_CHARS`` is refused too: no file system
keeps one, and the revision's column holds no more (PostgreSQL answered 500).
Downloads use ``download_name``, which removes the same characters and every
other invisible format character, so names stored before this rule are served
safely too; Werkzeug writes the RFC 6266 ``filename*`` for a name that is not ASCII.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import PurePath

from portal.controls import BIDI_REORDERING
from portal.errors import Refused
from portal.ingest.classify import cut_redacted

# Unicode's bidirectional controls: the marks, and the embeddings, overrides and isolates that document text
# loses at upload (``strip_control_characters``); a name holds none of them.
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f" + BIDI_REORDERING)
FALLBACK_DOWNLOAD_NAME = "download"
MAX_NAME_CHARS = 255  # the width of revision.original_name, and the longest name file systems keep


def base_name(name: str) -> str:
    """The name without any folder part (``/`` or ``\\`` separated)."""
    return re.split(r"[\\/]", name)[-1]


# Control characters, and the line and paragraph separators (U+2028, U+2029), which end a line as a line
# feed does (``str.splitlines``, JavaScript, many editors) without being control characters.
_REFUSED_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})
# ... and a download name drops invisible format characters too (zero-width, direction marks: category Cf).
_DROPPED_CATEGORIES = _REFUSED_CATEGORIES | {"Cf"}


def _refused_character(character: str) -> bool:
    return unicodedata.category(character) in _REFUSED_CATEGORIES or character in BIDI_CONTROLS


def upload_name(name: str) -> str:
    """The name an upload is stored under; raise ``Refused`` when it holds a forbidden character."""
    name = base_name(name)
    for position, character in enumerate(name, start=1):
        if _refused_character(character):
            what = unicodedata.name(character, "a control character")
            raise Refused(
                "bad_name",
                f"The file name holds U+{ord(character):04X} ({what}) at character "
                f"{position}: control characters, line breaks and text-direction marks cannot be part "
                "of a file name. Rename the file and upload it again.",
            )
    if len(name) > MAX_NAME_CHARS:
        raise Refused(
            "bad_name",
            f"The file name has {len(name):,} characters; a file name has at most {MAX_NAME_CHARS}. "
            "Rename the file and upload it again.",
        )
    return name


def fitted_name(name: str) -> str:
    """A name that passed ``upload_name`` and was then redacted, cut back to ``MAX_NAME_CHARS`` with its
    extension kept: a redaction marker can be longer than the credential it replaces."""
    if len(name) <= MAX_NAME_CHARS:
        return name
    suffix = PurePath(name).suffix
    return cut_redacted(name[: len(name) - len(suffix)], MAX_NAME_CHARS - len(suffix)) + suffix


def shown_name(name: str) -> str:
    """A name as it may be shown (a refusal's outcome line): forbidden characters as U+FFFD."""
    return "".join("\ufffd" if _refused_character(c) else c for c in name)


def download_name(name: str | None) -> str:
    """The name a download is offered under: no folder part, no control, line break or invisible format
    character."""
    kept = "".join(c for c in base_name(name or "") if unicodedata.category(c) not in _DROPPED_CATEGORIES)
    kept = kept.strip().lstrip(".")
    return kept or FALLBACK_DOWNLOAD_NAME
