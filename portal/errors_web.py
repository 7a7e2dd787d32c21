"""Turn typed service errors into pages, fragments or JSON, one handler per type."""

from __future__ import annotations

from flask import Response, jsonify, request
from flask_login import current_user
from flask_wtf.csrf import CSRFError
from peewee import DoesNotExist, OperationalError
from werkzeug.exceptions import BadHost, BadRequest, MethodNotAllowed, RequestEntityTooLarge
from werkzeug.exceptions import NotFound as HTTPNotFound

from portal import db
from portal.auth import signed_out_form
from portal.errors import NoLongerToReview, NotFound, PackDeleted, Refused, VersionConflict
from portal.ingest.limits import request_too_large_message, too_many_form_parts_message
from portal.rendering import render
from portal.search.errors import SearchError

SEARCH_UNAVAILABLE_MESSAGE = (
    "The portal cannot search its documents right now; nothing was changed. "
    "Try again later; the administrator finds the cause in the server log."
)


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _problem(status: int, title: str, message: str, reason: str | None = None, **detail):
    """The error as a page (or fragment), or as ``{"error": {"code", "message", …}}`` for the API."""
    if _wants_json():
        response = jsonify({"error": {"code": reason or title.lower().replace(" ", "_"), "message": message, **detail}})
        response.status_code = status
        return response
    if isinstance(request.routing_exception, BadHost):
        # The Host header names no host Werkzeug can bind (a label over 63 characters …): the request has no URL
        # adapter, so no page can be drawn (each links its stylesheet with url_for). Anyone can send one.
        return Response(f"{title}: {message}\n", status, mimetype="text/plain")
    return render("errors/page.html", "errors/_message.html", status=status, title=title, message=message)


def too_large_problem():
    """The 413 page: Werkzeug raises the same error for a body over MAX_CONTENT_LENGTH and for a form of
    more than MAX_FORM_PARTS parts (a field over MAX_FORM_MEMORY_SIZE cannot happen: that limit is the
    body's). A body whose announced length is within the limit was refused for its parts."""
    length, limit = request.content_length, request.max_content_length
    if length is not None and limit is not None and length <= limit:
        return _problem(413, "Too many parts", too_many_form_parts_message(), "too_many_parts")
    return _problem(413, "Too large", request_too_large_message(), "too_large")


def init_app(app) -> None:
    @app.errorhandler(NoLongerToReview)
    def no_longer_to_review(_error):
        return _problem(
            404,
            "Rated Helpful now",
            "The person who asked rates this answer Helpful, so it is not in the review list. "
            "If it is rated Not helpful again, it comes back with any triage history and regression cases it had.",
            "rated_helpful",
        )

    @app.errorhandler(PackDeleted)
    def pack_deleted(error: PackDeleted):
        return _problem(404, "Pack deleted", error.message, "pack_deleted")

    @app.errorhandler(NotFound)
    @app.errorhandler(HTTPNotFound)
    def not_found(_error):
        return _problem(404, "Not found", "There is nothing here, or it is not yours to see.")

    @app.errorhandler(DoesNotExist)
    def vanished(error: DoesNotExist):
        """A row this request found was deleted by someone else before it read the row again: what the
        request would have got a moment later is a 404, never a 500. Logged, for a read that should have
        kept the row it had."""
        app.logger.warning("%s %s: a row vanished meanwhile: %s", request.method, request.path, error)
        return not_found(error)

    @app.errorhandler(VersionConflict)
    def version_conflict(error: VersionConflict):
        return _problem(409, "Version conflict", str(error), "version_conflict", current_version=error.current)

    @app.errorhandler(Refused)
    def refused(error: Refused):
        return _problem(422, "Refused", error.message, error.reason)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_error):
        return too_large_problem()

    @app.errorhandler(MethodNotAllowed)
    def method_not_allowed(error: MethodNotAllowed):
        response = _problem(
            405,
            "Method not allowed",
            f"{request.method} is not one of the methods this address answers.",
            "method_not_allowed",
        )
        response.headers["Allow"] = ", ".join(error.valid_methods or ())
        return response

    @app.errorhandler(BadRequest)
    def bad_request(error: BadRequest):
        # The API's one code for a request it cannot read (its documented list): a NUL in a value, a
        # body that is not JSON, a field of the wrong shape.
        return _problem(400, "Bad request", error.description, "invalid_request")

    @app.errorhandler(OperationalError)
    def database_busy(error: OperationalError):
        """SQLite's write lock still held by another change after the busy timeout (``db.SQLITE_PRAGMAS``):
        this request's transaction never began. Any other database error stays a 500."""
        if not db.is_busy(error):
            raise error
        response = _problem(503, "Busy", db.BUSY_MESSAGE, "busy")
        response.headers["Retry-After"] = "5"
        return response

    @app.errorhandler(SearchError)
    def search_unavailable(error: SearchError):
        """A Lucene index that cannot be read or written here (corrupt, unreadable, locked past its wait): the
        operator's message goes to the log, the person a 503 saying nothing was changed (a question's run is
        stored only after its answer, so a failed search stores nothing)."""
        app.logger.error("%s %s: search unavailable: %s", request.method, request.path, error)
        response = _problem(503, "Search unavailable", SEARCH_UNAVAILABLE_MESSAGE, "search_unavailable")
        response.headers["Retry-After"] = "30"
        return response

    @app.errorhandler(CSRFError)
    def csrf_failed(_error):
        if not current_user.is_authenticated and request.endpoint != "auth.login":
            # Signed out meanwhile (in another tab, or the session lapsed): the token went with the session. Said as
            # for any page asked signed out (sign in, and back to the page), not "the form had expired": its advice
            # to reload lost what was typed, and the reload only led to the sign-in page.
            return signed_out_form()
        return _problem(
            400,
            "Form expired",
            "The form had expired or did not come from this portal. "
            "Reload the page and try again; nothing was changed.",
            "csrf",
        )
