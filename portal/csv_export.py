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
from collections.abc import Iterable, Sequence
from itertools import chain

from portal.controls import unseen

# With their full-width forms, which a spreadsheet in an East Asian locale may read as the ASCII signs.
FORMULA_SIGNS = frozenset("=+-@\uff1d\uff0b\uff0d\uff20")
ALWAYS_PREFIXED = frozenset("\t\r\x00")  # first characters named themselves: OWASP's tab and CR, ASVS's NUL


def spreadsheet_cell(value) -> str:
    """``value`` as a CSV cell's text: with a leading ``'`` when a spreadsheet would run it as a formula."""
    text = "" if value is None else str(value)
    if text[:1] in ALWAYS_PREFIXED:
        return "'" + text
    for character in text:
        if not unseen(character):
            return "'" + text if character in FORMULA_SIGNS else text
    return text


def csv_text(header: Sequence[str], rows: Iterable[Iterable]) -> str:
    """``header`` and ``rows`` as CSV (RFC 4180: CRLF line ends, quoted where needed), every cell through
    ``spreadsheet_cell``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in chain([header], rows):
        writer.writerow([spreadsheet_cell(value) for value in row])
    return out.getvalue()
