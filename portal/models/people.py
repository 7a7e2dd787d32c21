"""Companies and users: who signs in, with which roles, for which company."""

from __future__ import annotations

import secrets

from flask_login import UserMixin
from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField

from portal.db import BaseModel, JSONTextField, KeptSelect
from portal.models.clock import utcnow

# Every role, named once: access rules (portal/access.py), forms, the API and the command line read these.
ADMIN, BUILDER, AUDITOR, MEMBER = "PlatformAdmin", "AgentBuilder", "Auditor", "Member"
ROLES = (ADMIN, BUILDER, AUDITOR, MEMBER)
STAFF_ROLES = frozenset({ADMIN, BUILDER, AUDITOR})


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


class Company(BaseModel):
    name = CharField(unique=True)

    class Meta:
        table_name = "company"


class User(UserMixin, BaseModel):
    email = CharField(unique=True)
    password_hash = CharField()
    role_names = JSONTextField(column_name="roles", default=list)  # JSON list, in ROLES order
    company = ForeignKeyField(Company, null=True, backref="users", on_delete="SET NULL")
    active = BooleanField(default=True)
    created_at = DateTimeField(default=utcnow)
    # What the session cookie names (flask-login's "alternative id"); replaced on
    # sign-out and on a new password, which ends every session issued before.
    session_token = CharField(max_length=64, unique=True, default=new_session_token)

    class Meta:
        table_name = "user"

    def get_id(self) -> str:  # flask-login: the cookie stores this, never the row id
        return self.session_token

    def end_every_session(self) -> None:
        """Give the user a new session token, so no cookie issued before signs anyone in."""
        self.session_token = new_session_token()
        User.update(session_token=self.session_token).where(User.id == self.id).execute()

    @classmethod
    def by_session_token(cls, token: str) -> User | None:
        return _user_by_session_token.first(token) if token else None

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(self.role_names)

    @roles.setter
    def roles(self, value) -> None:
        unknown = set(value) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown role(s): {', '.join(sorted(unknown))}")
        self.role_names = [r for r in ROLES if r in set(value)]

    @property
    def is_active(self) -> bool:  # flask-login
        return self.active

    @classmethod
    def by_email(cls, email: str) -> User | None:
        return cls.get_or_none(cls.email == email.strip().lower())


# Every request signed in looks its user up by the cookie's token.
_user_by_session_token = KeptSelect(lambda token: User.select().where(User.session_token == token).limit(1))
