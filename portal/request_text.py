"""Text sent to the portal holds no NUL character: one rule for addresses, query strings, forms and JSON.

PostgreSQL cannot hold U+0000 in text (psycopg2 refuses such a value before sending it), so a
NUL typed into a title, a question or a note — or one in an address or a query parameter that
names something to look up (``/packs/ops%00``, ``?pack=ops%00``) — ended in a 500 there, and
SQLite stored what nobody meant to write. No text a person or program sends needs one. An
address holding one names nothing: the 404 of a missing page. A query parameter, form field or
JSON value holding one is a 400 that names it; nothing is read further, nothing changes. (An
uploaded file's own bytes are content, read by ``ingest.formats``, which refuses a NUL there as
``encoding``.)

A search typed into a page's ``?q=`` is read by ``query_search``, the one place its length is checked.
"""

from __future__ import annotations

from collections.abc import Iterator

from flask import request
from werkzeug.exceptions import BadRequest

from portal.errors import NotFound
from portal.ingest import limits

NUL = "\x00"


def init_app(app) -> None:
    """Check every request before its view; register after the upload's body limit and the CSRF check,
    which read the form first."""
    app.before_request(refuse_nul_characters)


def query_search(name: str = "q") -> str:
    """The search typed into the query string ("" for none); a 400 naming the limit when it is longer."""
    query = request.args.get(name, "")
    if len(query) > limits.MAX_SEARCH_CHARS:
        raise BadRequest(limits.search_too_long_message())
    return query


def refuse_nul_characters() -> None:
    if NUL in request.path:
        raise NotFound(request.path)
    for name, value in request.args.items(multi=True):
        if NUL in name or NUL in value:
            raise BadRequest(
                f"The query parameter {name!r} holds a NUL character (U+0000), which text cannot hold. "
                "Remove it and try again."
            )
    for name, value in request.form.items(multi=True):
        if NUL in name or NUL in value:
            raise BadRequest(
                f"The form field {name!r} holds a NUL character (U+0000), which text cannot hold; nothing was changed."
            )
    if request.is_json:
        for where in _nul_places(request.get_json(silent=True), ""):
            raise BadRequest(
                f"The JSON value {where or 'body'} holds a NUL character (U+0000), which text cannot hold; "
                "nothing was changed."
            )


def _nul_places(value, where: str) -> Iterator[str]:
    """Where in a parsed JSON value a string (or a key) holds a NUL: ``text``, ``reader_roles[1]``."""
    if isinstance(value, str):
        if NUL in value:
            yield where
    elif isinstance(value, dict):
        for key, item in value.items():
            place = f"{where}.{key}" if where else str(key)
            if NUL in key:
                yield repr(place)
            yield from _nul_places(item, place)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _nul_places(item, f"{where}[{index}]")
