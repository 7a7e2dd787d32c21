"""API tokens as stored: a hash of the secret, never the secret (``portal.api.tokens`` makes and checks them)."""

from __future__ import annotations

from peewee import CharField, DateTimeField, ForeignKeyField

from portal.db import BaseModel
from portal.models.clock import utcnow
from portal.models.people import User

SHOWN_CHARS = 12  # "cairn_" and 6 characters of the secret: enough to tell tokens apart in a list
MAX_NAME_CHARS = 80


class ApiToken(BaseModel):
    user = ForeignKeyField(User, backref="api_tokens", on_delete="CASCADE")
    name = CharField(max_length=MAX_NAME_CHARS)
    shown = CharField(max_length=SHOWN_CHARS)  # the token's first characters
    secret_sha256 = CharField(max_length=64, unique=True)
    created_at = DateTimeField(default=utcnow)
    last_used_at = DateTimeField(null=True)
    revoked_at = DateTimeField(null=True)
    revoked_by = ForeignKeyField(User, null=True, backref="revoked_api_tokens", on_delete="SET NULL")

    class Meta:
        table_name = "api_token"

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    @classmethod
    def of_user(cls, user: User):
        return (
            cls.select()
            .where(cls.user == user.id)
            .order_by(cls.revoked_at.is_null(False), cls.created_at.desc(), cls.id.desc())
        )

    @classmethod
    def everyone(cls):
        return (
            cls.select(cls, User)
            .join(User, on=(cls.user == User.id))
            .order_by(cls.revoked_at.is_null(False), User.email, cls.created_at.desc(), cls.id.desc())
        )
