"""Sign-in, CSRF on state changes, cookie settings."""

from __future__ import annotations

from helpers import PASSWORD, login
from portal import create_app
from portal.config import load_settings


def test_wrong_password_is_refused_without_saying_which_part(app, users):
    client = app.test_client()
    response = login(client, users["Auditor"].email, "wrong password")
    assert response.status_code == 401
    assert "do not match" in response.get_data(as_text=True)
    unknown = login(client, "nobody@example.test", "whatever1")
    assert unknown.get_data(as_text=True).count("do not match") == 1


def test_passwords_are_hashed(users):
    from portal.auth import services

    assert PASSWORD not in users["Member"].password_hash
    assert users["Member"].password_hash.startswith("pbkdf2:")  # the suite's cheap method
    services.PASSWORD_HASH_METHOD = "scrypt"
    assert services.create_user("s@example.test", PASSWORD, {"Auditor"}).password_hash.startswith("scrypt:")


def test_login_redirects_only_to_local_paths(app, users):
    client = app.test_client()
    response = client.post("/login?next=https://evil.example/", data={"email": users["Auditor"].email,
                                                                       "password": PASSWORD})
    assert response.headers["Location"] == "/"
    client.post("/logout")
    response = client.post("/login?next=/packs/", data={"email": users["Auditor"].email, "password": PASSWORD})
    assert response.headers["Location"] == "/packs/"


def test_state_changes_need_a_csrf_token(tmp_path):
    app = create_app({"CAIRN_DATA_DIR": str(tmp_path / "csrf"), "SECRET_KEY": "x",
                      "CAIRN_REPAIR_INDEX_ON_START": False})
    with app.app_context():
        from portal.migrate import migrate

        migrate(app.config["DATABASE"])
        client = app.test_client()
        response = client.post("/login", data={"email": "a@b.test", "password": "x"})
        assert response.status_code == 400
        assert "Reload the page" in response.get_data(as_text=True)
        page = client.get("/login").get_data(as_text=True)
        assert 'name="csrf_token"' in page
        app.config["DATABASE"].close()


def test_session_cookie_flags(app, users):
    client = app.test_client()
    response = login(client, users["Auditor"].email)
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert app.config["SESSION_COOKIE_SECURE"] is False  # plain http on 127.0.0.1 by default
    assert load_settings({"CAIRN_DATA_DIR": app.config["CAIRN_DATA_DIR"], "SECRET_KEY": "x",
                          "CAIRN_SECURE_COOKIES": True})["CAIRN_SECURE_COOKIES"] is True


def test_logout_needs_post(app, client_as):
    client = client_as("Auditor")
    assert client.get("/logout").status_code == 405
    assert client.post("/logout").status_code == 302
    assert client.get("/packs/").status_code == 302
