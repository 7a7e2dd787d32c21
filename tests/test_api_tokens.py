"""API tokens: made on the account page or by `cairn tokens create`, shown once, stored as a hash,
revoked by their owner or a PlatformAdmin; and the API page. (The API itself: test_api.py.)"""

from __future__ import annotations

import hashlib

import peewee
import pytest
from bs4 import BeautifulSoup

from helpers import audit_log_refusing_writes, cli_runner
from portal.api.tokens import ApiToken, authenticate, create_token, revoke
from portal.auth.services import create_user
from portal.errors import Refused
from portal.models import AuditLog, User


def _page(response) -> BeautifulSoup:
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.mark.parametrize("role", ["PlatformAdmin", "AgentBuilder", "Auditor", "Member"])
def test_every_user_makes_a_token_on_the_account_page_and_sees_it_once(app, users, client_as, role):
    client = client_as(role)
    page = _page(client.get("/account/"))
    assert page.select_one("a[href='/account/api']") is not None
    created = client.post("/account/tokens", data={"name": "helpdesk sync"})
    assert created.status_code == 201 and created.headers["Cache-Control"] == "no-store"
    secret = _page(created).select_one("#new-token-secret").text
    token = ApiToken.get(ApiToken.user == users[role])
    assert token.secret_sha256 == hashlib.sha256(secret.encode()).hexdigest() and secret not in token.shown
    assert (token.name, token.last_used_at, token.revoked_at) == ("helpdesk sync", None, None)
    again = client.get("/account/").get_data(as_text=True)
    assert secret not in again and token.shown in again and "never" in again
    assert authenticate(secret).id == token.id
    assert ApiToken.get_by_id(token.id).last_used_at is not None  # the use is noted


def test_a_token_needs_a_name_of_at_most_80_characters(app, users, client_as):
    client = client_as("Auditor")
    for name in ("", "   ", "x" * 81):
        response = client.post("/account/tokens", data={"name": name})
        assert response.status_code == 422 and _page(response).select_one("#new-token-secret") is None
    assert ApiToken.select().count() == 0


def test_an_owner_revokes_their_token_and_it_stops_working_at_once(app, users, client_as):
    token, secret = create_token(users["Auditor"], "script")
    response = client_as("Auditor").post(f"/account/tokens/{token.id}/revoke")
    assert response.status_code == 303 and response.headers["Location"] == "/account/"
    assert ApiToken.get_by_id(token.id).is_revoked and authenticate(secret) is None
    assert AuditLog.select().where(AuditLog.action == "api_token.revoke").count() == 1


def test_only_a_platform_admin_revokes_someone_elses_token(app, users, client_as):
    token, secret = create_token(users["Member"], "bot")
    for role in ("AgentBuilder", "Auditor"):
        assert client_as(role).post(f"/account/tokens/{token.id}/revoke").status_code == 404
        assert client_as(role).get("/account/tokens/all").status_code == 404
    admin = client_as("PlatformAdmin")
    listed = _page(admin.get("/account/tokens/all"))
    assert users["Member"].email in listed.select_one("#token-list").text
    response = admin.post(f"/account/tokens/{token.id}/revoke")
    assert response.status_code == 303 and response.headers["Location"] == "/account/tokens/all"
    assert authenticate(secret) is None
    assert "revoked" in admin.get("/account/tokens/all").get_data(as_text=True)


def test_a_token_of_an_inactive_user_or_a_malformed_one_opens_nothing(app, users):
    token, secret = create_token(users["Auditor"], "script")
    assert authenticate(secret) is not None
    User.update(active=False).where(User.id == users["Auditor"].id).execute()
    assert authenticate(secret) is None
    for wrong in ("", "cairn_", secret[:-1], secret + "x", "Bearer " + secret):
        assert authenticate(wrong) is None
    with pytest.raises(Refused):
        create_token(User.get_by_id(users["Auditor"].id), "another")


def test_revoking_twice_changes_nothing(app, users):
    token, _ = create_token(users["Auditor"], "script")
    revoke(token, users["PlatformAdmin"])
    first = ApiToken.get_by_id(token.id).revoked_at
    revoke(token, None)
    assert ApiToken.get_by_id(token.id).revoked_at == first


def test_the_command_line_makes_lists_and_revokes_tokens(app, users):
    cli = cli_runner(app)
    secret = cli("tokens", "create", users["Auditor"].email, "--name", "nightly sync").stdout.strip()
    token = authenticate(secret)
    assert token is not None and token.user_id == users["Auditor"].id and token.name == "nightly sync"
    assert secret not in cli("tokens", "list", "--json").stdout
    assert "nightly sync" in cli("tokens", "list", users["Auditor"].email).stdout
    assert cli("tokens", "create", "nobody@example.test", "--name", "x", ok=False).returncode == 2
    assert cli("tokens", "create", users["Auditor"].email, "--name", " ", ok=False).returncode == 2
    cli("tokens", "revoke", str(token.id))
    assert authenticate(secret) is None


def test_the_api_page_describes_every_operation_from_the_openapi_document(app, users, client_as):
    from portal.api.blueprint import api

    page = _page(client_as("Member").get("/account/api"))
    shown = {h.text.strip() for h in page.select(".api-operation h2 code")}
    expected = {f"{method.upper()} /api/v1{path}" for path, item in api.document()["paths"].items() for method in item}
    assert shown == expected
    assert page.select_one("a[href='/api/v1/openapi.json']") is not None
    assert client_as(None).get("/account/api").status_code == 302  # a page like the others: signed in


def test_deleting_a_user_deletes_their_tokens(app, users):
    user = create_user("leaving@example.test", "correct horse battery", {"Auditor"})
    create_token(user, "script")
    User.delete().where(User.id == user.id).execute()
    assert ApiToken.select().count() == 0


def test_a_token_whose_audit_entry_cannot_be_written_is_neither_made_nor_revoked(app, users):
    """A token and its audit entry stand or fall together: no working token, and no revocation, that the log
    does not show."""
    admin = users["PlatformAdmin"]
    kept, kept_secret = create_token(admin, "kept")
    with audit_log_refusing_writes(app.config["DATABASE"]):
        with pytest.raises(peewee.DatabaseError):
            create_token(admin, "unlogged")
        with pytest.raises(peewee.DatabaseError):
            revoke(kept, admin)
    assert [t.name for t in ApiToken.select()] == ["kept"]
    assert authenticate(kept_secret) is not None  # still live: the revocation was rolled back with its entry
    assert [e.action for e in AuditLog.select()] == ["api_token.create"]
