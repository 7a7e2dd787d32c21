"""Text sent to the portal: one rule for addresses, query strings, forms and JSON.

Two rules: no NUL character, and no other control character but tab and line breaks (the bidirectional
reordering controls included).

PostgreSQL cannot hold U+0000 in text (psycopg2 refuses such a value before sending it), so a
NUL typed into a title, a question or a note — or one in an address or a query parameter that
names something to look up (``/packs/ops%00``, ``?pack=ops%00``) — ended in a 500 there, and
SQLite stored what nobody meant to write. No text a person or program sends needs one. An
address holding one names nothing: the 404 of a missing page. A query parameter, form field or
JSON value holding one is a 400 that names it; nothing is read further, nothing changes. (An
uploaded file's own bytes are content, read by ``ingest.formats``, which refuses a NUL there as
``encoding``.)

Every value (and name) of a query string, a form and a JSON body loses the bidirectional
reordering controls (``portal.controls``) and the other control characters but tab and line breaks
before any view reads it, and is composed, as uploaded text is (``controls.readable_text``): a
question, a title or a note holding U+202E would be stored as one thing and shown as another, and
would reorder the rest of each line that lists it; an escape or a backspace is invisible on a page
and acts in a terminal or a CSV that shows it. They are dropped rather than refused: chat programs
put isolates around names that people paste. A password is compared as typed and never shown: it
keeps them. Uploaded files are content, with their own rule.

A search typed into a page's ``?q=`` is read by ``query_search``, the one place its length is checked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from flask import Request, request
from werkzeug.datastructures import ImmutableMultiDict, iter_multi_items
from werkzeug.exceptions import BadRequest

from portal.controls import readable_text
from portal.errors import NotFound
from portal.ingest import limits

NUL = "\x00"


KEPT_AS_TYPED = frozenset({"password"})  # compared with what was set, never shown


def init_app(app) -> None:
    """Read every request's text through ``SentRequest`` and check it before its view; register after the
    upload's body limit and the CSRF check, which read the form first."""
    app.request_class = SentRequest
    app.before_request(refuse_nul_characters)


class SentText(ImmutableMultiDict):
    """A query string's or a form's values (and names) without control characters (``_shown``);
    uploaded files and the fields in ``KEPT_AS_TYPED`` as sent."""

    def __init__(self, mapping=None):
        super().__init__(
            (_shown(name), value if name in KEPT_AS_TYPED else _shown(value))
            for name, value in iter_multi_items(mapping or ())
        )


MAX_JSON_DEPTH = 32
"""How many arrays and objects deep a JSON body may nest; no body the portal reads nests more than three.
Reading goes down one call per level (Python's decoder, then ``sent_value``), so a deeper body, which
anyone can send to any address, ended in RecursionError: a 500."""

_TOO_DEEP = object()


class SentRequest(Request):
    parameter_storage_class = SentText

    def get_json(self, force: bool = False, silent: bool = False, cache: bool = True):
        """The body's JSON as ``sent_value`` gives it; one nested deeper than ``MAX_JSON_DEPTH`` is not read:
        None when ``silent``, else a 400 naming the limit."""
        try:
            value = super().get_json(force=force, silent=silent, cache=cache)
        except RecursionError:  # deeper than the decoder's own limit
            value = _TOO_DEEP
        if value is _TOO_DEEP or _nesting(value) > MAX_JSON_DEPTH:
            if silent:
                return None
            raise BadRequest(f"The JSON body nests more than {MAX_JSON_DEPTH} levels deep; nothing was changed.")
        return sent_value(value)


def _nesting(value) -> int:
    """How many arrays and objects deep ``value`` goes (counting stops past ``MAX_JSON_DEPTH``), without
    recursion."""
    deepest, waiting = 0, [(value, 1)]
    while waiting and deepest <= MAX_JSON_DEPTH:
        item, depth = waiting.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            waiting.extend((inner, depth + 1) for inner in (item.values() if isinstance(item, dict) else item))
    return deepest


def _shown(value):
    return readable_text(value, keep_nul=True) if isinstance(value, str) else value


def sent_value(value):
    """A parsed JSON value with every string's (and key's) control characters dropped, but the password's:
    for bodies read by ``get_json`` and the API's shapes, which parse the body themselves."""
    if isinstance(value, dict):
        return {_shown(key): item if key in KEPT_AS_TYPED else sent_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [sent_value(item) for item in value]
    return _shown(value)


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
        for where, what in _unwritable_places(request.get_json(silent=True), ""):
            raise BadRequest(f"The JSON value {where or 'body'} holds {what}; nothing was changed.")


# A lone surrogate escape ("\ud800" without its pair) is valid JSON to Python's decoder but names no character: no
# text can be stored or shown with it (the API's own reader said only "unexpected end of hex escape").
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _unwritable(text: str) -> str:
    """What in ``text`` no text can hold, in words ("" for nothing)."""
    if NUL in text:
        return "a NUL character (U+0000), which text cannot hold"
    surrogate = _LONE_SURROGATE.search(text)
    if surrogate:
        return f"an unpaired surrogate (\\u{ord(surrogate.group()):04x}), which is not a character"
    return ""


def _unwritable_places(value, where: str) -> Iterator[tuple[str, str]]:
    """Where in a parsed JSON value a string (or a key) holds what no text can (``text``, ``reader_roles[1]``),
    with what it is."""
    if isinstance(value, str):
        what = _unwritable(value)
        if what:
            yield where, what
    elif isinstance(value, dict):
        for key, item in value.items():
            place = f"{where}.{key}" if where else str(key)
            what = _unwritable(key)
            if what:
                yield repr(place), what
            yield from _unwritable_places(item, place)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _unwritable_places(item, f"{where}[{index}]")
