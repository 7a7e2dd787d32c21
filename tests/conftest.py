"""Shared fixtures: a migrated temporary database, a real Lucene index in a temp folder,
users of every role, and a signed-in client per role.

Set CAIRN_TEST_DATABASE_URL=postgresql://… to run the suite against PostgreSQL
instead of the temporary SQLite file (each test gets an emptied schema).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import PASSWORD, ROLES, login, migrated_app
from portal.auth.services import create_user
from portal.packs.services import create_pack

# Commands run as subprocesses (`python -m portal.cli …`) import this checkout's code, not
# whichever copy of the project is installed in the virtualenv.
_ROOT = str(Path(__file__).resolve().parents[1])
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)


@pytest.fixture(autouse=True)
def cheap_password_hashing(monkeypatch):
    """scrypt costs ~0.2 s a hash; the suite creates hundreds of users."""
    monkeypatch.setattr("portal.auth.services.PASSWORD_HASH_METHOD", "pbkdf2:sha256:1000")


@pytest.fixture(scope="session")
def java():
    """One JVM for the whole session: it cannot be restarted within a process anyway."""
    from portal.search import jvm

    jvm.start()


@pytest.fixture
def root(tmp_path) -> Path:
    """A folder for Lucene indexes built directly, without an app."""
    return tmp_path / "indexes"


@pytest.fixture
def app(tmp_path):
    with migrated_app(tmp_path / "data") as app:
        yield app


@pytest.fixture
def users(app):
    """One user per role; the Member belongs to Acme Test Co."""
    return {
        role: create_user(
            f"{role.lower()}@example.test", PASSWORD, {role}, "Acme Test Co" if role == "Member" else None
        )
        for role in ROLES
    }


@pytest.fixture
def pack(app):
    return create_pack("ops", "Operations", "generic", description="Runbooks and notes")


@pytest.fixture
def other_pack(app):
    return create_pack("other", "Other pack", "generic")


@pytest.fixture
def client_as(app, users):
    """client_as("PlatformAdmin") → a test client signed in with that role (None: anonymous)."""

    def make(role: str | None):
        client = app.test_client()
        if role is not None:
            response = login(client, users[role].email)
            assert response.status_code == 302, response.data
        return client

    return make
