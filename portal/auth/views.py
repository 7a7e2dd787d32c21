"""Sign in and out."""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, flash, redirect, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from portal.auth.services import authenticate
from portal.rendering import render

bp = Blueprint("auth", __name__)


def _safe_next(target: str | None) -> str | None:
    """Only same-site paths: never redirect a signed-in user to another host."""
    if not target:
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//"):
        return None
    return target


@bp.route("/login", methods=["GET", "POST"])
def login():
    if current_user.is_authenticated:
        return redirect(url_for("home.index"))
    error = None
    if request.method == "POST":
        user = authenticate(request.form.get("email", ""), request.form.get("password", ""))
        if user is not None:
            login_user(user)
            return redirect(_safe_next(request.args.get("next")) or url_for("home.index"))
        error = "That e-mail and password do not match an account."
    return render("auth/login.html", status=401 if error else 200, error=error,
                  email=request.form.get("email", ""))


@bp.route("/logout", methods=["POST"])
@login_required
def logout():
    logout_user()
    flash("You are signed out.")
    return redirect(url_for("auth.login"))
