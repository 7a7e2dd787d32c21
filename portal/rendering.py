"""One place that decides between a full page and an HTMX fragment."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from flask import make_response, render_template
from flask_htmx import HTMX
from werkzeug.datastructures import MultiDict

htmx = HTMX()


def wants_fragment() -> bool:
    """A fragment for HTMX requests, but not for boosted navigation or history restores."""
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def shown_args() -> MultiDict:
    """The query arguments of the address the reader's page shows (htmx sends it as ``HX-Current-URL``), so a
    fragment can replace what that page shows otherwise than the new one would; empty without the header, and
    for one that is no address (anyone can send the header; ``urlsplit`` refuses an unclosed IPv6 bracket)."""
    try:
        return MultiDict(parse_qsl(urlsplit(htmx.current_url or "").query))
    except ValueError:
        return MultiDict()


def render(page: str, fragment: str | None = None, status: int = 200, **context):
    """Render ``fragment`` for HTMX swaps and ``page`` (which includes it) otherwise."""
    template = fragment if fragment and wants_fragment() else page
    response = make_response(render_template(template, **context), status)
    response.vary.add("HX-Request")
    return response
