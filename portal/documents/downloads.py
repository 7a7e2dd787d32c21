"""Sending stored files: every original upload and every figure image leaves the portal here.

The file is streamed from the data folder with ``Last-Modified`` and an ``ETag``
and answers conditional requests, so a browser that holds it already gets a 304
instead of the bytes again. An original is always an attachment of type
``application/octet-stream`` under its safe download name (so a browser never
renders it); the portal's own headers (``nosniff``, the CSP, …; portal/web.py)
apply to both, except that a figure has a CSP of its own (``FIGURE_CSP``). Callers check
permissions first: the paths are never shown.
"""

from __future__ import annotations

from flask import Response

from portal import storage
from portal.documents.filenames import download_name
from portal.models import Revision

FIGURE_MAX_AGE = 3600  # seconds a browser may reuse a figure without asking again
# A figure opened on its own (the viewer links each to its full size) is shown by the browser in a page
# it styles inline; an image runs nothing, so its own policy allows that style and nothing else.
FIGURE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"


def send_original(revision: Revision) -> Response:
    """The revision's original upload as a download; the browser asks again (cheaply) every time."""
    return _send_stored(
        revision.original_path,
        "application/octet-stream",
        max_age=0,
        attachment_name=download_name(revision.original_name),
    )


def send_figure(path: str) -> Response:
    """A figure image, kept for an hour by this browser only (never by a shared cache: it is permission-checked)."""
    response = _send_stored(path, "image/webp", max_age=FIGURE_MAX_AGE)
    response.headers["Cache-Control"] = f"private, max-age={FIGURE_MAX_AGE}"
    response.headers["Content-Security-Policy"] = FIGURE_CSP
    return response


def _send_stored(relative: str, mimetype: str, *, max_age: int, attachment_name: str | None = None) -> Response:
    return storage.send(
        relative,
        mimetype=mimetype,
        as_attachment=attachment_name is not None,
        download_name=attachment_name,
        conditional=True,
        etag=True,
        max_age=max_age,
    )
