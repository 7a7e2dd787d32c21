"""Sign in and out, with limits on failed sign-ins per account and per address."""

from __future__ import annotations

import math
import time
import unicodedata
from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, g, redirect, request, session, url_for
from flask_limiter import RateLimitExceeded
from flask_login import current_user, login_required, login_user, logout_user

from portal.auth import limiter
from portal.auth.services import authenticate
from portal.rendering import render

bp = Blueprint("auth", __name__)

WRONG_CREDENTIALS = "That e-mail and password do not match an account."


def _safe_next(target: str | None) -> str | None:
    """Only same-site paths: never redirect a signed-in user to another host. A control character is in no
    address the portal writes, and a line break cannot be written into the ``Location`` header."""
    if not target or any(unicodedata.category(character) == "Cc" for character in target):
        return None
    try:
        parts = urlsplit(target)
    except ValueError:  # no address at all: an unclosed IPv6 bracket ("//[x")
        return None
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return None
    return target


def _failed_sign_in(response) -> bool:
    """Only a wrong e-mail or password counts against the limits; a success costs nothing."""
    return response.status_code == 401


def _account_key() -> str:
    return "sign-in:" + request.form.get("email", "").strip().lower()[:320]


def _fresh_session() -> None:
    """Start a new session (and with it a new CSRF token): nothing from before a sign-in or sign-out is valid."""
    session.clear()
    g.pop("csrf_token", None)  # flask-wtf caches this request's token here


@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(
    lambda: current_app.config["CAIRN_SIGN_IN_LIMIT_PER_ADDRESS"],
    methods=["POST"],
    deduct_when=_failed_sign_in,
    error_message="Too many failed sign-ins from this network address.",
)
@limiter.limit(
    lambda: current_app.config["CAIRN_SIGN_IN_LIMIT_PER_ACCOUNT"],
    methods=["POST"],
    key_func=_account_key,
    deduct_when=_failed_sign_in,
    error_message="Too many failed sign-ins for this account.",
)
def login():
    if current_user.is_authenticated:
        return redirect(url_for("home.index"))
    error = None
    if request.method == "POST":
        user = authenticate(request.form.get("email", ""), request.form.get("password", ""))
        if user is not None:
            _fresh_session()
            login_user(user)
            return redirect(_safe_next(request.args.get("next")) or url_for("home.index"))
        error = WRONG_CREDENTIALS
    return render("auth/login.html", status=401 if error else 200, error=error, email=request.form.get("email", ""))


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    user = current_user._get_current_object()
    logout_user()
    user.end_every_session()
    _fresh_session()
    flash("You are signed out.")
    return redirect(url_for("auth.login"))


def init_app(app) -> None:
    @app.errorhandler(RateLimitExceeded)
    def sign_in_limited(error: RateLimitExceeded):
        """The sign-in page again, saying why and for how long; the password was not checked."""
        reset_at = limiter.current_limit.reset_at if limiter.current_limit else time.time() + 60
        seconds = max(1, math.ceil(reset_at - time.time()))
        minutes = max(1, round(seconds / 60))
        message = (
            f"{error.description} Signing in is paused for about {minutes} "
            f"minute{'s' if minutes > 1 else ''}; then try again."
        )
        response = render("auth/login.html", status=429, error=message, email=request.form.get("email", ""))
        response.headers["Retry-After"] = str(seconds)
        return response
