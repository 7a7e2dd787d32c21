"""Whole numbers from addresses, query strings and forms: one rule for all of them.

Ids, version numbers, reference numbers and page numbers are plain ASCII digits
from 0 to ``MAX_NUMBER`` (pages start at 1), the largest value of an INTEGER
column in PostgreSQL (SQLite's are wider). Anything else — a huge number, a sign, superscript or
other non-ASCII digits, an empty value — names nothing, so it gets what a
missing thing gets: in the path the 404 of a missing page; in the query
string, ``None`` (the page then behaves as for an id that matches no row) or,
for a page number, the same 404; in a form, a 400 that names the field.
Without this a number beyond the database's range reached a query and ended
in a 500.
"""

from __future__ import annotations

import re

from flask import request
from werkzeug.exceptions import BadRequest
from werkzeug.exceptions import NotFound as HTTPNotFound
from werkzeug.routing import BaseConverter

from portal.errors import NotFound

MAX_NUMBER = 2**31 - 1
_DIGITS = re.compile(r"[0-9]{1,10}")


def parse_number(raw: str | None) -> int | None:
    """``raw`` as an int when it is 0..MAX_NUMBER written in ASCII digits, else None."""
    if raw is None or not _DIGITS.fullmatch(raw):
        return None
    value = int(raw)
    return value if value <= MAX_NUMBER else None


class NumberConverter(BaseConverter):
    """``<int:…>`` in every route: ASCII digits within the database's range, else a 404.

    Digits out of range raise the 404 itself: a ValidationError would make Werkzeug
    answer 405 when a rule for another method has the same address.
    """

    regex = r"[0-9]+"

    def to_python(self, value: str) -> int:
        number = parse_number(value)
        if number is None:
            raise HTTPNotFound()
        return number

    def to_url(self, value) -> str:
        return str(int(value))


def query_number(name: str) -> int | None:
    """An id in the query string (``?run=``, ``?passage=``); None when absent or naming nothing."""
    return parse_number(request.args.get(name))


def page_number(raw: str | None) -> int:
    """A page number: 1 when absent or empty, the 404 of a missing page when it is not a page."""
    return _counted_from_one(raw) if raw else 1


def query_version(name: str = "version") -> int | None:
    """A document's version in the query string: None when absent or empty (the current one), the 404 of a missing
    version when it is not one ("abc", "-1", 2**31 showed the current text while 99999 was a 404)."""
    raw = request.args.get(name)
    return _counted_from_one(raw) if raw else None


def _counted_from_one(raw: str) -> int:
    number = parse_number(raw)
    if not number:  # None or 0
        raise NotFound(raw)
    return number


def query_page(name: str = "page") -> int:
    """The page number in the query string (see ``page_number``)."""
    return page_number(request.args.get(name))


def form_number(name: str, *, optional: bool = False) -> int | None:
    """A number posted in a form; a 400 naming the field when it is not one (empty is None when ``optional``)."""
    raw = request.form.get(name, "")
    if optional and raw == "":
        return None
    number = parse_number(raw)
    if number is None:
        raise BadRequest(
            f"The form field {name} must be a whole number from 0 to {MAX_NUMBER:,}; "
            "nothing was changed. Reload the page and try again."
        )
    return number


def init_app(app) -> None:
    """Make every ``<int:…>`` route use the bounded converter (before any blueprint adds its rules)."""
    app.url_map.converters["int"] = NumberConverter
