"""Sign-in (flask-login), CSRF protection for every state change (flask-wtf) and sign-in limits (Flask-Limiter)."""

from __future__ import annotations

from flask import flash, make_response, redirect, request, session
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager, login_url
from flask_wtf.csrf import CSRFProtect

login_manager = LoginManager()
csrf = CSRFProtect()
# Only the sign-in form is limited (its decorators in views.py); nothing else counts.
limiter = Limiter(key_func=get_remote_address, strategy="fixed-window", headers_enabled=False)


SIGNED_OUT_MESSAGE = "You were signed out. Please sign in again; nothing was changed."


def _flash_once(message: str, category: str) -> None:
    """A message not already waiting to be shown: each file of an upload batch sent after the session ended asks
    the sign-in page to say it."""
    if not any(list(waiting) == [category, message] for waiting in session.get("_flashes", [])):  # tuples or lists
        flash(message, category)


def init_app(app) -> None:
    from portal.auth.views import bp
    from portal.auth.views import init_app as init_views
    from portal.models import User
    from portal.rendering import htmx, wants_fragment

    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to open that page."
    login_manager.session_protection = "strong"
    csrf.init_app(app)
    app.config["RATELIMIT_STORAGE_URI"] = app.config["CAIRN_SIGN_IN_LIMIT_STORAGE"]
    limiter.init_app(app)

    @login_manager.unauthorized_handler
    def sign_in_first():
        """A page asks the reader to sign in; a request htmx sends from a page (a rating, a search, a form part)
        sends the whole page there instead: the sign-in page swapped into an answer looked like part of it."""
        category = login_manager.login_message_category
        if not wants_fragment():  # as flask-login does; a Back that htmx restores from the server is a page too
            _flash_once(login_manager.login_message, category)
            response = redirect(login_url(login_manager.login_view, next_url=request.url))
        else:
            _flash_once(SIGNED_OUT_MESSAGE, category)
            response = make_response("", 204)
            response.headers["HX-Redirect"] = login_url(login_manager.login_view, next_url=htmx.current_url or None)
        response.vary.add("HX-Request")
        return response

    @login_manager.user_loader
    def load_user(session_token: str):
        """The cookie names the user's current session token; an older one names nobody."""
        user = User.by_session_token(session_token)
        return user if user is not None and user.active else None

    app.register_blueprint(bp)
    init_views(app)
