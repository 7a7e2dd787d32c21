"""Sign-in (flask-login) and CSRF protection for every state change (flask-wtf)."""

from __future__ import annotations

from flask_login import LoginManager
from flask_wtf.csrf import CSRFProtect

login_manager = LoginManager()
csrf = CSRFProtect()


def init_app(app) -> None:
    from portal.auth.views import bp
    from portal.models import User

    login_manager.init_app(app)
    login_manager.login_view = "auth.login"
    login_manager.login_message = "Please sign in to open that page."
    login_manager.session_protection = "strong"
    csrf.init_app(app)

    @login_manager.user_loader
    def load_user(user_id: str):
        user = User.get_or_none(User.id == int(user_id)) if user_id.isdigit() else None
        return user if user is not None and user.active else None

    app.register_blueprint(bp)
