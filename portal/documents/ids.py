"""A document's id from its file name: one rule, here (docs/decisions.md, "Document ids come from file names").

The id is the name's stem in lower case, its letters written in ASCII ("Übergabe.md" → ``ubergabe``,
"Straße" → ``strasse``), every other run of characters outside ``[a-z0-9._-]`` a ``-``. A name written only
in another script ("日本語.md") has no such letters: its id is a digest of the name, so the same name is
always the same document.

Before 2026-12-07 letters outside ASCII were dropped ("Übergabe.md" → ``bergabe``). A pack may hold
documents named so: ``id_in_pack`` gives the old id while only it names a document there, so uploading or
syncing such a file again is still a new version of it, never a second document.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from pathlib import PurePath

from portal.controls import unseen
from portal.errors import Refused
from portal.models import DOCUMENT_ID_RE, MAX_ID_CHARS

# Letters NFKD does not decompose into an ASCII letter and a mark.
_SPELLED_OUT = str.maketrans({"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "þ": "th", "ð": "d"})


def _stem(filename: str) -> str:
    # The composed form (NFC) first: a Mac names "Café" with a combining accent (NFD), others with one character.
    return PurePath(unicodedata.normalize("NFC", filename)).stem.strip().lower()


def _in_ascii(stem: str) -> str:
    """``stem`` with its Latin letters written in ASCII: accents dropped, ß as ss; other scripts stay."""
    decomposed = unicodedata.normalize("NFKD", stem.translate(_SPELLED_OUT))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _cleaned(stem: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "-", stem).strip("-._")[:MAX_ID_CHARS].rstrip("-._")


def document_id_for(filename: str) -> str:
    """The document id a file name maps to (see the module); ``Refused`` for a name with no letter or digit."""
    stem = _stem(filename)
    cleaned = _cleaned(_in_ascii(stem))
    if DOCUMENT_ID_RE.match(cleaned):
        return cleaned
    # a Hangul filler is a letter to Unicode and shows as nothing: no name to tell the document by
    if any(character.isalnum() and not unseen(character) for character in stem):
        return "doc-" + hashlib.blake2b(stem.encode("utf-8"), digest_size=5).hexdigest()
    raise Refused("bad_name", f"The file name {filename!r} has no letters or digits to name the document by.")


def id_in_pack(filename: str, named: Callable[[str], bool]) -> str:
    """``document_id_for(filename)``, or the id the name mapped to before letters outside ASCII were written in
    ASCII, while only that one names a document of the pack (``named``: whether an id names one, deleted ones
    too)."""
    new = document_id_for(filename)
    old = _cleaned(_stem(filename))
    return old if old != new and DOCUMENT_ID_RE.match(old) and not named(new) and named(old) else new
