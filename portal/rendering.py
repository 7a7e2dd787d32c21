"""One place that decides between a full page and an HTMX fragment."""

from __future__ import annotations

from flask import make_response, render_template
from flask_htmx import HTMX

htmx = HTMX()


def wants_fragment() -> bool:
    """A fragment for HTMX requests, but not for boosted navigation or history restores."""
    return bool(htmx) and not htmx.boosted and not htmx.history_restore_request


def render(page: str, fragment: str | None = None, status: int = 200, **context):
    """Render ``fragment`` for HTMX swaps and ``page`` (which includes it) otherwise."""
    template = fragment if fragment and wants_fragment() else page
    response = make_response(render_template(template, **context), status)
    response.vary.add("HX-Request")
    return response
