"""CSV files the portal hands out, written so that opening one in a spreadsheet runs nothing (OWASP, CSV Injection).

A spreadsheet program reads a cell whose text starts with ``=``, ``+``, ``-`` or ``@`` as a formula. It also
trims leading white space when it imports a file, and shows no zero-width or bidirectional mark, so a formula
behind them (``  =HYPERLINK(…)``, ``\\u200b=…``) runs as well. ``spreadsheet_cell`` is the one rule: such a
cell, and one starting with a tab, a carriage return or a NUL (OWASP's and ASVS's lists), gets a leading
``'``, which the spreadsheet reads as "this cell is text". Every export writes its rows through ``csv_text``.
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Sequence
from itertools import chain

# With their full-width forms, which a spreadsheet in an East Asian locale may read as the ASCII signs.
FORMULA_SIGNS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
ALWAYS_PREFIXED = frozenset("\t\r\x00")  # first characters named themselves: OWASP's tab and CR, ASVS's NUL
# Characters shown as nothing that are neither white space nor format characters (Cf): Unicode's
# default-ignorable letters and marks (Hangul fillers, the combining grapheme joiner, variation selectors).
_IGNORABLE = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u3164\uffa0") | frozenset(map(chr, range(0x180B, 0x1810)))
_IGNORABLE |= frozenset(map(chr, range(0xFE00, 0xFE10)))


def spreadsheet_cell(value) -> str:
    """``value`` as a CSV cell's text: with a leading ``'`` when a spreadsheet would run it as a formula."""
    text = "" if value is None else str(value)
    if text[:1] in ALWAYS_PREFIXED:
        return "'" + text
    for character in text:
        if not _unseen(character):
            return "'" + text if character in FORMULA_SIGNS else text
    return text


def _unseen(character: str) -> bool:
    """White space, a control, a format character (zero-width, bidirectional mark) or another invisible one."""
    return character.isspace() or unicodedata.category(character) in ("Cc", "Cf") or character in _IGNORABLE


def csv_text(header: Sequence[str], rows: Iterable[Iterable]) -> str:
    """``header`` and ``rows`` as CSV (RFC 4180: CRLF line ends, quoted where needed), every cell through
    ``spreadsheet_cell``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in chain([header], rows):
        writer.writerow([spreadsheet_cell(value) for value in row])
    return out.getvalue()
