"""Sign-in (flask-login), CSRF protection for every state change (flask-wtf) and sign-in limits (Flask-Limiter)."""

from __future__ import annotations

from urllib.parse import urlsplit

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


def signed_out_form():
    """The answer to a form sent after its session ended (signed out in another tab, or lapsed): signed out, as any
    request then. With htmx, the sign-in page and back to the page the form is on (``unauthorized``); a plain form
    goes back to the page it was sent from (a same-site Referer), never to its own address, which only takes a POST
    (a second "Sign out" sent from an old tab went to a 405 after signing in), and "Sign out" to no page at all."""
    from portal.rendering import wants_fragment

    if wants_fragment():
        return login_manager.unauthorized()
    _flash_once(SIGNED_OUT_MESSAGE, login_manager.login_message_category)
    sent_from = urlsplit(request.referrer or "")
    back = sent_from.path + (f"?{sent_from.query}" if sent_from.query else "")
    same_site = sent_from.netloc == request.host and back.startswith("/") and request.endpoint != "auth.logout"
    return redirect(login_url(login_manager.login_view, next_url=back if same_site else None))


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
