"""Sign-in, CSRF on state changes, cookie settings."""

from __future__ import annotations

import re

import pytest

from helpers import PASSWORD, POSTGRES_URL, empty_postgres, login
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
    response = client.post(
        "/login?next=https://evil.example/", data={"email": users["Auditor"].email, "password": PASSWORD}
    )
    assert response.headers["Location"] == "/"
    client.post("/logout")
    response = client.post("/login?next=/packs/", data={"email": users["Auditor"].email, "password": PASSWORD})
    assert response.headers["Location"] == "/packs/"


@pytest.mark.parametrize(
    "target",
    ["/%0d%0aSet-Cookie:%20session=x", "/packs/%0aops", "/%09packs/"],
    ids=["header-split", "line-break", "tab"],
)
def test_a_sign_in_link_whose_next_holds_a_control_character_goes_home(app, users, target):
    """A link to the sign-in page names the page to go to after it. One holding a line break made the
    redirect's ``Location`` header impossible to write: a 500 after a good password. No address the portal
    writes holds a control character (``url_for`` quotes them), so such a ``next`` is not followed."""
    response = app.test_client().post(
        f"/login?next={target}", data={"email": users["Auditor"].email, "password": PASSWORD}
    )
    assert response.status_code == 302 and response.headers["Location"] == "/"


@pytest.mark.parametrize("target", ["//[evil.example/", "http://[::1/packs/", "https://[x"])
def test_a_sign_in_link_whose_next_is_no_address_goes_home(app, users, target):
    """``urlsplit`` refuses an unclosed IPv6 bracket with ValueError: such a ``next`` made a good password a 500,
    the person signed in all the same. It is not followed, as any address that is not a local path."""
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500 the way a served portal answers one
    response = app.test_client().post(
        "/login", query_string={"next": target}, data={"email": users["Auditor"].email, "password": PASSWORD}
    )
    assert response.status_code == 302 and response.headers["Location"] == "/"


def test_arriving_at_the_home_page_signed_out_is_no_refusal(app, users):
    client = app.test_client()
    arriving = client.get("/")
    assert arriving.status_code == 302 and arriving.headers["Location"] == "/login"
    assert "Please sign in" not in client.get("/login").get_data(as_text=True)
    # Any other page asked for names why the sign-in page came, and comes back after it.
    refused = client.get("/packs/")
    assert refused.status_code == 302 and refused.headers["Location"] == "/login?next=%2Fpacks%2F"
    assert "Please sign in to open that page." in client.get("/login").get_data(as_text=True)
    signed_in = client.post("/login?next=/packs/", data={"email": users["Auditor"].email, "password": PASSWORD})
    assert signed_in.headers["Location"] == "/packs/"


@pytest.mark.parametrize(
    "role, home",
    [("PlatformAdmin", "/packs/"), ("AgentBuilder", "/agents/"), ("Auditor", "/feedback/"), ("Member", "/chat/")],
)
def test_each_role_starts_where_its_work_is(app, users, role, home):
    client = app.test_client()
    signed_in = client.post("/login", data={"email": users[role].email, "password": PASSWORD})
    assert signed_in.headers["Location"] == "/"
    assert client.get("/").headers["Location"] == home


def test_a_part_of_a_page_asked_for_signed_out_sends_the_whole_page_to_sign_in(app, users):
    """A rating or a search htmx sent after the session ended got the sign-in page, which htmx swapped into the
    answer bubble or the results as if it were part of the page (found by a browser walkthrough)."""
    client = app.test_client()
    shown = "http://localhost/chat/7?agent=basis"
    refused = client.get("/packs/", headers={"HX-Request": "true", "HX-Current-URL": shown})
    assert refused.status_code == 204 and refused.get_data() == b""
    assert refused.headers["HX-Redirect"] == "/login?next=%2Fchat%2F7%3Fagent%3Dbasis"
    assert "You were signed out. Please sign in again; nothing was changed." in client.get("/login").get_data(
        as_text=True
    )
    signed_in = client.post(
        "/login?next=/chat/7?agent=basis", data={"email": users["Auditor"].email, "password": PASSWORD}
    )
    assert signed_in.headers["Location"] == "/chat/7?agent=basis"


def test_a_page_htmx_restores_signed_out_is_a_page_and_the_message_comes_once(app, users):
    """Back to a page htmx restores from the server (its history cache is off) got an empty 204, which htmx swapped
    into the body: a blank page; and each file of an upload batch added one more "You were signed out" (found by
    review)."""
    client = app.test_client()
    restored = client.get("/library/", headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert restored.status_code == 302 and restored.headers["Location"] == "/login?next=%2Flibrary%2F"
    assert "HX-Request" in restored.headers["Vary"]
    client.get("/login")  # shows and so takes the message
    for _ in range(3):
        client.get("/packs/", headers={"HX-Request": "true", "HX-Current-URL": "http://localhost/packs/ops"})
    assert client.get("/login").get_data(as_text=True).count("You were signed out.") == 1


def test_state_changes_need_a_csrf_token(tmp_path):
    app = create_app(
        {"CAIRN_DATA_DIR": str(tmp_path / "csrf"), "SECRET_KEY": "x", "CAIRN_REPAIR_INDEX_ON_START": False}
    )
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


def test_a_form_sent_after_signing_out_elsewhere_is_told_signed_out_not_expired(tmp_path):
    """Signed out in another tab, the chat's Send answered "The form had expired … Reload the page": the reload led to
    the sign-in page, and the question typed was gone (found by a browser walkthrough). It is now a signed-out
    request like any other: to the sign-in page, and back to the page after it."""
    from portal.auth.services import create_user
    from portal.migrate import migrate

    app = create_app({"CAIRN_DATA_DIR": str(tmp_path / "out"), "SECRET_KEY": "x", "CAIRN_REPAIR_INDEX_ON_START": False})
    with app.app_context():
        migrate(app.config["DATABASE"])
        create_user("member@example.test", PASSWORD, {"Member"}, "Acme Test Co")
        client = app.test_client()

        def token() -> str:
            return re.search(r'name="csrf_token" value="([^"]+)"', client.get("/login").get_data(as_text=True))[1]

        signed_in = client.post(
            "/login", data={"email": "member@example.test", "password": PASSWORD, "csrf_token": token()}
        )
        assert signed_in.status_code == 302
        page = client.get("/chat/").get_data(as_text=True)
        old_token = re.search(r'name="csrf_token" value="([^"]+)"', page)[1]
        assert client.post("/logout", data={"csrf_token": old_token}).status_code == 302
        sent = client.post(
            "/chat/",
            data={"csrf_token": old_token, "agent": "desk", "question": "Why?"},
            headers={"HX-Request": "true", "HX-Current-URL": "http://localhost/chat/"},
        )
        assert sent.status_code == 204 and sent.headers["HX-Redirect"] == "/login?next=%2Fchat%2F"
        assert "You were signed out" in client.get("/login").get_data(as_text=True)
        # a plain form goes back to the page it was sent from, never to its own POST-only address; "Sign out" from
        # an old tab to the sign-in page alone (it went to a 405 after signing in)
        plain = client.post("/chat/", data={"csrf_token": old_token}, headers={"Referer": "http://localhost/chat/7"})
        assert plain.status_code == 302 and plain.headers["Location"] == "/login?next=%2Fchat%2F7"
        again = client.post("/logout", data={"csrf_token": old_token}, headers={"Referer": "http://localhost/chat/"})
        assert again.status_code == 302 and again.headers["Location"] == "/login"
        elsewhere = client.post("/chat/", data={"csrf_token": old_token}, headers={"Referer": "http://evil.test/x"})
        assert elsewhere.headers["Location"] == "/login"
        # the sign-in form itself, sent with a stale token, still says to reload it
        stale = client.post("/login", data={"email": "member@example.test", "password": PASSWORD, "csrf_token": "x"})
        assert stale.status_code == 400 and "Reload the page" in stale.get_data(as_text=True)
        app.config["DATABASE"].close()


def test_session_cookie_flags(app, users):
    client = app.test_client()
    response = login(client, users["Auditor"].email)
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert app.config["SESSION_COOKIE_SECURE"] is False  # plain http on 127.0.0.1 by default
    assert (
        load_settings(
            {"CAIRN_DATA_DIR": app.config["CAIRN_DATA_DIR"], "SECRET_KEY": "x", "CAIRN_SECURE_COOKIES": True}
        )["CAIRN_SECURE_COOKIES"]
        is True
    )


def test_logout_needs_post(app, client_as):
    client = client_as("Auditor")
    assert client.get("/logout").status_code == 405
    assert client.post("/logout").status_code == 302
    assert client.get("/packs/").status_code == 302


# --- sign-out and a new password end every earlier session (issue 9, item 7) ----------------------


def _session_cookie(client) -> str:
    return client.get_cookie("session").value


def test_signing_out_ends_every_earlier_cookie_of_that_user(app, users):
    client = app.test_client()
    assert login(client, users["Auditor"].email).status_code == 302
    saved = _session_cookie(client)
    elsewhere = app.test_client()  # the same user signed in on another machine
    assert login(elsewhere, users["Auditor"].email).status_code == 302
    assert client.get("/packs/").status_code == 200
    assert client.post("/logout").status_code == 302
    client.set_cookie("session", saved)  # replay the cookie saved before signing out
    response = client.get("/packs/")
    assert response.status_code == 302 and "/login" in response.headers["Location"]
    assert elsewhere.get("/packs/").status_code == 302
    assert login(client, users["Auditor"].email).status_code == 302  # signing in again works
    assert client.get("/packs/").status_code == 200


def test_a_new_password_ends_every_session_and_the_new_one_signs_in(app, users):
    from portal.auth.services import set_password

    client = app.test_client()
    login(client, users["Auditor"].email)
    assert client.get("/packs/").status_code == 200
    set_password(users["Auditor"], "a brand new password")
    assert client.get("/packs/").status_code == 302
    assert login(client, users["Auditor"].email).status_code == 401
    assert login(client, users["Auditor"].email, "a brand new password").status_code == 302


def test_the_cookie_names_a_session_token_not_the_user_id(app, users):
    user = users["Member"]
    assert user.get_id() == user.session_token and len(user.session_token) >= 40
    assert user.get_id() != str(user.id)
    assert len({u.session_token for u in users.values()}) == len(users)


def test_existing_users_get_a_session_token_when_the_database_migrates_forward(tmp_path):
    from portal import migrate as migrations
    from portal.db import open_database

    if POSTGRES_URL:
        empty_postgres(POSTGRES_URL)
    db = open_database(POSTGRES_URL or f"sqlite:///{tmp_path / 'old.db'}")
    migrations.migrate(db, target="0003_chat_feedback")
    for n in (1, 2):
        db.execute_sql(
            'INSERT INTO "user" (email, password_hash, roles, active, created_at) '
            f"VALUES ({db.param}, 'x', 'Auditor', {db.param}, CURRENT_TIMESTAMP)",
            (f"old{n}@example.test", True),
        )
    assert "0004_user_session_token" in migrations.migrate(db)
    tokens = [row[0] for row in db.execute_sql('SELECT session_token FROM "user"').fetchall()]
    db.close()
    assert len(tokens) == 2 and len(set(tokens)) == 2 and all(len(t) >= 40 for t in tokens)


# --- the CSRF token changes at sign-in and sign-out (issue 9, item 11) -------------------------------


def _csrf_token(page: str) -> str:
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def test_sign_in_and_sign_out_give_a_new_csrf_token(tmp_path):
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(tmp_path / "csrf"),
            "SECRET_KEY": "x",
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "DATABASE_URL": POSTGRES_URL or None,
        }
    )
    if POSTGRES_URL:
        empty_postgres(POSTGRES_URL)
    with app.app_context():
        from portal.auth.services import create_user
        from portal.migrate import migrate

        migrate(app.config["DATABASE"])
        create_user("a@example.test", PASSWORD, {"Auditor"})
    client = app.test_client()
    anonymous = _csrf_token(client.get("/login").get_data(as_text=True))
    response = client.post("/login", data={"email": "a@example.test", "password": PASSWORD, "csrf_token": anonymous})
    assert response.status_code == 302
    signed_in = _csrf_token(client.get("/packs/").get_data(as_text=True))
    assert client.post("/logout", data={"csrf_token": anonymous}).status_code == 400  # the token from before
    assert client.get("/packs/").status_code == 200
    assert client.post("/logout", data={"csrf_token": signed_in}).status_code == 302
    after = _csrf_token(client.get("/login").get_data(as_text=True))
    refused = client.post("/login", data={"email": "a@example.test", "password": PASSWORD, "csrf_token": signed_in})
    assert refused.status_code == 400
    assert (
        client.post("/login", data={"email": "a@example.test", "password": PASSWORD, "csrf_token": after}).status_code
        == 302
    )
    app.extensions["cairn_indexes"].close()
    app.config["DATABASE"].close()


# --- sign-in limits (issue 9, item 6) ----------------------------------------------------------------


def test_wrong_passwords_for_one_account_are_limited_with_a_clear_429(app, users):
    from portal.auth import limiter

    client = app.test_client()
    email = users["Auditor"].email
    for _ in range(10):
        assert login(client, email, "wrong password").status_code == 401
    limited = login(client, email)  # even the right password waits: it would end a guessing run
    assert limited.status_code == 429
    page = limited.get_data(as_text=True)
    assert "Too many failed sign-ins for this account." in page and "minutes; then try again" in page
    assert 0 < int(limited.headers["Retry-After"]) <= 15 * 60 + 1  # the window's end, to the second
    assert 'name="password"' in page and f'value="{email}"' in page  # the sign-in page, not an error page
    assert login(app.test_client(), users["AgentBuilder"].email).status_code == 302  # other accounts unaffected
    limiter.reset()  # what the end of the 15-minute window does
    assert login(client, email).status_code == 302


def test_only_failed_sign_ins_count(app, users):
    client = app.test_client()
    for _ in range(12):
        assert login(client, users["Auditor"].email).status_code == 302
        client.post("/logout")
    for _ in range(9):
        login(client, users["Auditor"].email, "wrong password")
    assert login(client, users["Auditor"].email).status_code == 302


def test_wrong_passwords_from_one_address_are_limited_across_accounts(app, users):
    app.config["CAIRN_SIGN_IN_LIMIT_PER_ADDRESS"] = "3 per 15 minutes"
    client = app.test_client()
    for n in range(3):
        assert login(client, f"guess{n}@example.test", "wrong password").status_code == 401
    limited = login(client, users["Auditor"].email)
    assert limited.status_code == 429
    assert "Too many failed sign-ins from this network address." in limited.get_data(as_text=True)
    elsewhere = app.test_client()
    elsewhere.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    assert login(elsewhere, users["Auditor"].email).status_code == 302


def test_a_bad_sign_in_limit_stops_the_portal_at_start(tmp_path):
    from portal.config import ConfigError

    with pytest.raises(ConfigError, match="CAIRN_SIGN_IN_LIMIT_PER_ACCOUNT: 'ten' is not a limit"):
        create_app({"CAIRN_DATA_DIR": str(tmp_path / "d"), "SECRET_KEY": "x", "CAIRN_SIGN_IN_LIMIT_PER_ACCOUNT": "ten"})


def test_behind_a_trusted_proxy_the_address_limit_counts_the_client(tmp_path):
    if POSTGRES_URL:
        empty_postgres(POSTGRES_URL)
    app = create_app(
        {
            "CAIRN_DATA_DIR": str(tmp_path / "proxied"),
            "SECRET_KEY": "x",
            "WTF_CSRF_ENABLED": False,
            "CAIRN_REPAIR_INDEX_ON_START": False,
            "DATABASE_URL": POSTGRES_URL or None,
            "CAIRN_PROXIES": 1,
            "CAIRN_SIGN_IN_LIMIT_PER_ADDRESS": "2 per 15 minutes",
        }
    )
    with app.app_context():
        from portal.migrate import migrate

        migrate(app.config["DATABASE"])
    client = app.test_client()

    def attempt(client_address: str) -> int:
        return client.post(
            "/login",
            data={"email": "x@example.test", "password": "wrong password"},
            headers={"X-Forwarded-For": client_address},
        ).status_code

    assert [attempt("198.51.100.1") for _ in range(3)] == [401, 401, 429]
    assert attempt("198.51.100.2") == 401  # another client behind the same proxy is not blocked
    app.extensions["cairn_indexes"].close()
    app.config["DATABASE"].close()
