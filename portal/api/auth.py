"""Who a request to ``/api/v1`` comes from: the bearer token in its ``Authorization`` header, and nothing else.

A session cookie is never read here, so a signed-in browser cannot call the API
(and the API needs no CSRF protection); the HTML pages read only the cookie, so
a token opens none of them.
"""

from __future__ import annotations

from flask import g, request
from flask_limiter.util import get_remote_address

from portal.api.errors import Unauthenticated
from portal.api.tokens import ApiToken, authenticate
from portal.models import User


def request_token() -> ApiToken | None:
    """The request's live token, looked up once per request."""
    if "api_token" not in g:
        scheme, _, secret = request.headers.get("Authorization", "").strip().partition(" ")
        g.api_token = authenticate(secret.strip()) if scheme.lower() == "bearer" and secret.strip() else None
    return g.api_token


def token_user() -> User:
    """The user whose token made this request; ``Unauthenticated`` without a live one."""
    token = request_token()
    if token is None:
        raise Unauthenticated(sent=bool(request.headers.get("Authorization")))
    return token.user


def rate_limit_key() -> str:
    """Requests count per token; those without a live token count per network address."""
    token = request_token()
    return f"api-token:{token.id}" if token is not None else f"api-address:{get_remote_address()}"
