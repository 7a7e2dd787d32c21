"""Turn typed service errors into pages, fragments or JSON, one handler per type."""

from __future__ import annotations

from flask import jsonify, request
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import BadRequest
from werkzeug.exceptions import NotFound as HTTPNotFound
from werkzeug.exceptions import RequestEntityTooLarge

from portal.errors import NotFound, Refused, VersionConflict
from portal.ingest.limits import MAX_FILE_BYTES
from portal.rendering import render


def _wants_json() -> bool:
    return request.path.startswith("/api/") or request.accept_mimetypes.best == "application/json"


def _problem(status: int, title: str, message: str, reason: str | None = None):
    if _wants_json():
        response = jsonify({"error": reason or title.lower().replace(" ", "_"), "message": message})
        response.status_code = status
        return response
    return render("errors/page.html", "errors/_message.html", status=status, title=title, message=message)


def init_app(app) -> None:
    @app.errorhandler(NotFound)
    @app.errorhandler(HTTPNotFound)
    def not_found(_error):
        return _problem(404, "Not found", "There is nothing here, or it is not yours to see.")

    @app.errorhandler(VersionConflict)
    def version_conflict(error: VersionConflict):
        return _problem(409, "Version conflict", str(error), "version_conflict")

    @app.errorhandler(Refused)
    def refused(error: Refused):
        return _problem(422, "Refused", error.message, error.reason)

    @app.errorhandler(RequestEntityTooLarge)
    def too_large(_error):
        mb = MAX_FILE_BYTES // (1024 * 1024)
        return _problem(413, "Too large", f"The upload is larger than the {mb} MB limit per file, so it was "
                                          "not read. Upload large files one at a time, or split them.",
                        "too_large")

    @app.errorhandler(BadRequest)
    def bad_request(error: BadRequest):
        return _problem(400, "Bad request", error.description, "bad_request")

    @app.errorhandler(CSRFError)
    def csrf_failed(_error):
        return _problem(400, "Form expired", "The form had expired or did not come from this portal. "
                                             "Reload the page and try again; nothing was changed.", "csrf")
