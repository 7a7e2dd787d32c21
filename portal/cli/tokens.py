"""``cairn tokens create|list|revoke``: API tokens for automation; the secret is printed once, on creation."""

from __future__ import annotations

import click

from portal.cli.support import app_context, echo_listing, fail, say
from portal.numbers import MAX_NUMBER


@click.group()
def tokens():
    """Manage API tokens (the bearer credentials of /api/v1)."""


@tokens.command("create")
@click.argument("email")
@click.option("--name", required=True, help="What the token is for, e.g. 'helpdesk sync'.")
def tokens_create(email, name):
    """Make a token for the user EMAIL and print it (only its hash is kept: it cannot be shown again)."""
    from portal.api.tokens import create_token
    from portal.errors import Refused
    from portal.models import User

    app_context(repair=False)
    user = User.by_email(email)
    if user is None:
        fail(f"no user {email}")
    try:
        _token, secret = create_token(user, name)
    except Refused as refusal:
        fail(refusal.message)
    say(secret)


@tokens.command("list")
@click.argument("email", required=False)
@click.option("--json", "as_json", is_flag=True)
def tokens_list(email, as_json):
    """Tokens (of EMAIL, or everyone's): id, user, name, first characters, created, last used, revoked."""
    from portal.api.tokens import ApiToken
    from portal.models import User

    app_context(repair=False)
    query = ApiToken.everyone()
    if email:
        user = User.by_email(email)
        if user is None:
            fail(f"no user {email}")
        query = query.where(ApiToken.user == user.id)
    rows = [
        {
            "id": t.id,
            "user": t.user.email,
            "name": t.name,
            "shown": t.shown,
            "created_at": t.created_at.isoformat(timespec="seconds"),
            "last_used_at": t.last_used_at.isoformat(timespec="seconds") if t.last_used_at else None,
            "revoked_at": t.revoked_at.isoformat(timespec="seconds") if t.revoked_at else None,
        }
        for t in query
    ]
    echo_listing(
        rows,
        as_json,
        lambda r: f"{r['id']}  {r['user']}  {r['name']}  {r['shown']}…{'  revoked' if r['revoked_at'] else ''}",
    )


@tokens.command("revoke")
@click.argument("token_id", type=click.IntRange(1, MAX_NUMBER))  # an id as the database holds one
def tokens_revoke(token_id):
    """Revoke the token TOKEN_ID (see `cairn tokens list`)."""
    from portal.api.tokens import ApiToken, revoke

    app_context(repair=False)
    token = ApiToken.get_or_none(ApiToken.id == token_id)
    if token is None:
        fail(f"no token {token_id}")
    if revoke(token, None):
        say(f"revoked token {token.id} ({token.name}) of {token.user.email}")
    else:
        say(f"token {token.id} ({token.name}) of {token.user.email} was revoked already; nothing changed")
