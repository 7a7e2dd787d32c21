"""The API's own errors; the typed service errors (``NotFound``, ``Refused``, ``VersionConflict``, a body too
large) are turned into ``{"error": {"code", "message"}}`` by the one handler per type in ``portal.errors_web``."""

from __future__ import annotations

import math
import time

from flask import jsonify
from flask_limiter import RateLimitExceeded
from pydantic import ValidationError

from portal.errors import CairnError, NotFound
from portal.models import REVISIONS_KEPT


class Unauthenticated(CairnError):
    """No token, or one that is unknown, revoked, or of an inactive user: all look the same."""

    def __init__(self, sent: bool):
        super().__init__(
            "This API token is not valid: it is unknown or was revoked, or its user is not active."
            if sent
            else "Send an API token: `Authorization: Bearer <token>`."
        )


class RevisionPurged(NotFound):
    """A revision of a readable document that is no longer kept: the same 404, saying why."""

    def __init__(self, version: int):
        super().__init__(
            f"Version {version} of this document was purged: only the newest {REVISIONS_KEPT} "
            "revisions are kept. Citations of it can no longer be checked against its text."
        )


class MalformedBody(CairnError):
    """A body of the right media type whose parts are of the wrong kind: a 400 naming the part."""


class UnsupportedBody(CairnError):
    def __init__(self, accepted: list[str]):
        super().__init__(f"Send the body as {' or '.join(accepted)}.")


def error_response(status: int, code: str, message: str):
    response = jsonify({"error": {"code": code, "message": message}})
    response.status_code = status
    return response


def _validation_message(error: ValidationError) -> str:
    """Each problem as ``field: what is wrong``, without pydantic's links."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in error.errors())


def init_blueprint(bp, limiter) -> None:
    @bp.errorhandler(Unauthenticated)
    def unauthenticated(error: Unauthenticated):
        response = error_response(401, "unauthorized", str(error))
        response.headers["WWW-Authenticate"] = 'Bearer realm="cairn"'
        return response

    @bp.errorhandler(RevisionPurged)
    def purged(error: RevisionPurged):
        return error_response(404, "revision_purged", str(error))

    @bp.errorhandler(ValidationError)
    def invalid(error: ValidationError):
        return error_response(400, "invalid_request", _validation_message(error))

    @bp.errorhandler(MalformedBody)
    def malformed(error: MalformedBody):
        return error_response(400, "invalid_request", str(error))

    @bp.errorhandler(UnsupportedBody)
    def unsupported(error: UnsupportedBody):
        return error_response(415, "unsupported_media_type", str(error))

    @bp.errorhandler(RateLimitExceeded)
    def rate_limited(error: RateLimitExceeded):
        reset_at = limiter.current_limit.reset_at if limiter.current_limit else time.time() + 60
        seconds = max(1, math.ceil(reset_at - time.time()))
        response = error_response(
            429, "rate_limited", f"Too many requests with this token ({error.description}); try again in {seconds} s."
        )
        response.headers["Retry-After"] = str(seconds)
        return response
