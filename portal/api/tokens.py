"""API tokens: the bearer credentials of ``/api/v1``, stored only as a hash.

A token is ``cairn_`` followed by 32 random bytes (URL-safe base64); it is shown
once, when it is made, and the database keeps its SHA-256 (a fast hash is enough
for a secret of that entropy: there is nothing to guess), its first characters
to tell it apart in a list, its name, and when it was made, last used and
revoked. A token acts with the rights of its user, and only while that user is
active and the token is not revoked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets

from portal.audit import audit
from portal.controls import shows_nothing
from portal.db import database
from portal.errors import NotFound, Refused, too_long
from portal.models import ApiToken, User, utcnow
from portal.models.tokens import MAX_NAME_CHARS, SHOWN_CHARS

TOKEN_PREFIX = "cairn_"
# Writing the last use on every request would make every API call a database write; once a minute is
# precise enough to tell an unused token from a used one.
LAST_USED_PRECISION = dt.timedelta(minutes=1)


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def create_token(user: User, name: str, actor: User | None = None) -> tuple[ApiToken, str]:
    """A new token for ``user`` named ``name``: the row and the secret, which is never stored or shown again."""
    name = " ".join((name or "").split())
    if shows_nothing(name):
        raise Refused("bad_token_name", "Give the token a name, such as the system that will use it.")
    if len(name) > MAX_NAME_CHARS:
        raise too_long("bad_token_name", "A token name", MAX_NAME_CHARS, len(name))
    if not user.active:
        raise Refused("inactive_user", f"{user.email} is not active; an API token would not work.")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with database().atomic():  # a token and its audit entry stand or fall together
        token = ApiToken.create(user=user, name=name, shown=secret[:SHOWN_CHARS], secret_sha256=_digest(secret))
        audit(actor, "api_token.create", token, {"name": name, "user": user.email})
    return token, secret


def token_for_revoking(actor: User, token_id: int) -> ApiToken:
    """The token, if ``actor`` may revoke it: their own, or anyone's with ``tokens.revoke_any``."""
    from portal import access

    token = ApiToken.get_or_none(ApiToken.id == token_id) if actor.is_authenticated else None
    if token is None or (token.user_id != actor.id and not access.can(actor, "tokens.revoke_any")):
        raise NotFound(token_id)
    return token


def revoke(token: ApiToken, actor: User | None) -> bool:
    """Revoke ``token`` at once; whether this revoked it (revoking it again changes nothing)."""
    with database().atomic():
        changed = (
            ApiToken.update(revoked_at=utcnow(), revoked_by=actor.id if actor is not None else None)
            .where((ApiToken.id == token.id) & ApiToken.revoked_at.is_null())
            .execute()
        )
        if changed:
            audit(actor, "api_token.revoke", token, {"name": token.name, "user": token.user.email})
    return bool(changed)


def authenticate(secret: str) -> ApiToken | None:
    """The live token whose secret this is (its user active), noting the use; None for anything else."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.select(ApiToken, User)
        .join(User, on=(ApiToken.user == User.id))
        .where((ApiToken.secret_sha256 == _digest(secret)) & ApiToken.revoked_at.is_null())
        .first()
    )
    if token is None or not token.user.active:
        return None
    now = utcnow()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_PRECISION:
        ApiToken.update(last_used_at=now).where(ApiToken.id == token.id).execute()
        token.last_used_at = now
    return token
