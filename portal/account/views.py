"""The account page: who you are, your API tokens (made and revoked here), and the API's readable reference.

A new token's secret is shown once, in the page that answers the form, never in
a redirect, a flash message or a log. A PlatformAdmin also sees every user's
tokens and may revoke any of them (``tokens.revoke_any``).
"""

from __future__ import annotations

from flask import Blueprint, current_app, flash, redirect, request, url_for
from flask_login import current_user, login_required

from portal import access
from portal.api import tokens
from portal.api.reference import readable_reference
from portal.errors import NotFound, Refused
from portal.rendering import render

bp = Blueprint("account", __name__, url_prefix="/account")


def _account_page(status: int = 200, **context):
    context = {
        "tokens": list(tokens.ApiToken.of_user(current_user)),
        "new_token": None,
        "new_secret": None,
        "error": None,
        "name": "",
        **context,
    }
    response = render("account/index.html", status=status, **context)
    response.headers["Cache-Control"] = "no-store"  # a new token's secret must not stay in any cache
    return response


@bp.route("/")
@login_required
def index():
    return _account_page()


@bp.route("/tokens", methods=["POST"])
@login_required
def create_token():
    name = request.form.get("name", "")
    try:
        token, secret = tokens.create_token(current_user, name, actor=current_user)
    except Refused as refusal:
        return _account_page(422, error=refusal.message, name=name)
    return _account_page(201, new_token=token, new_secret=secret)


@bp.route("/tokens/<int:token_id>/revoke", methods=["POST"])
@login_required
def revoke_token(token_id: int):
    token = tokens.token_for_revoking(current_user, token_id)
    tokens.revoke(token, current_user)
    flash(f"The token {token.name!r} of {token.user.email} is revoked: it opens nothing from now on.")
    own = token.user_id == current_user.id
    return redirect(url_for("account.index" if own else "account.all_tokens"), code=303)


@bp.route("/tokens/all")
@login_required
def all_tokens():
    if not access.can(current_user, "tokens.revoke_any"):
        raise NotFound("tokens")
    return render("account/tokens.html", tokens=list(tokens.ApiToken.everyone()))


@bp.route("/api")
@login_required
def api_reference():
    from portal.api.blueprint import api

    return render(
        "account/api.html",
        endpoints=readable_reference(api.document()),
        rate_limit=current_app.config["CAIRN_API_RATE_LIMIT"],
    )
