"""Peewee models and the queries that belong to them.

The schema itself is created by the numbered files in migrations/; these
classes must agree with them (tests migrate a fresh database and use these).
"""

from __future__ import annotations

import datetime as dt
import re

from flask_login import UserMixin
from peewee import (
    BooleanField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from portal.db import BaseModel

ROLES = ("PlatformAdmin", "AgentBuilder", "Auditor", "Member")
STAFF_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})
PACK_KINDS = ("generic", "company")
VISIBILITIES = ("staff", "shared", "company")
REVISIONS_KEPT = 10

DOCUMENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class Company(BaseModel):
    name = CharField(unique=True)

    class Meta:
        table_name = "company"


class User(UserMixin, BaseModel):
    email = CharField(unique=True)
    password_hash = CharField()
    roles_csv = CharField(column_name="roles", default="")
    company = ForeignKeyField(Company, null=True, backref="users", on_delete="SET NULL")
    active = BooleanField(default=True)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "user"

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(r for r in self.roles_csv.split(",") if r)

    @roles.setter
    def roles(self, value) -> None:
        unknown = set(value) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown role(s): {', '.join(sorted(unknown))}")
        self.roles_csv = ",".join(r for r in ROLES if r in set(value))

    def has_role(self, role: str) -> bool:
        return role in self.roles

    @property
    def is_staff(self) -> bool:
        return bool(self.roles & STAFF_ROLES)

    @property
    def is_active(self) -> bool:  # flask-login
        return self.active

    @classmethod
    def by_email(cls, email: str) -> "User | None":
        return cls.get_or_none(cls.email == email.strip().lower())


class Pack(BaseModel):
    slug = CharField(unique=True)
    title = CharField()
    description = TextField(default="")
    kind = CharField(default="generic")
    company = ForeignKeyField(Company, null=True, backref="packs", on_delete="RESTRICT")
    # Bumped in the same transaction as every change to the pack's passages; the
    # Lucene index records the generation it was built to, so a lagging or
    # missing index is detected at start and rebuilt from the database.
    index_generation = IntegerField(default=0)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "pack"

    def live_documents(self):
        return (Document.select()
                .where((Document.pack == self) & Document.deleted_at.is_null())
                .order_by(Document.title))


class Document(BaseModel):
    pack = ForeignKeyField(Pack, backref="documents", on_delete="CASCADE")
    doc_id = CharField(max_length=80)
    title = CharField()
    kind = CharField(default="markdown")  # markdown | text | docx | pdf | image
    current_version = IntegerField(default=0)
    visibility = CharField(default="staff")
    reader_roles_csv = CharField(column_name="reader_roles", default="")
    redacted = BooleanField(default=False)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)
    # Set on delete: the row stays as a tombstone so the id is never reused.
    deleted_at = DateTimeField(null=True)

    class Meta:
        table_name = "document"
        indexes = ((("pack", "doc_id"), True),)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def current_revision(self) -> "Revision | None":
        return (Revision.select()
                .where((Revision.document == self) & (Revision.version == self.current_version))
                .first())


class Revision(BaseModel):
    document = ForeignKeyField(Document, backref="revisions", on_delete="CASCADE")
    version = IntegerField()
    text = TextField()
    sha256 = CharField(max_length=64)
    original_name = CharField(null=True)
    original_path = CharField(null=True)  # relative to the data folder; never shown
    original_sha256 = CharField(max_length=64, null=True)
    original_content_type = CharField(null=True)
    original_size = IntegerField(null=True)
    pages = IntegerField(null=True)
    images_not_kept = TextField(default="{}")  # JSON {reason: count}
    created_by = ForeignKeyField(User, null=True, backref="revisions", on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "revision"
        indexes = ((("document", "version"), True),)


class Figure(BaseModel):
    revision = ForeignKeyField(Revision, backref="figures", on_delete="CASCADE")
    number = IntegerField()
    label = CharField(max_length=400)
    path = CharField()  # relative to the data folder
    width = IntegerField()
    height = IntegerField()

    class Meta:
        table_name = "figure"
        indexes = ((("revision", "number"), True),)


class Passage(BaseModel):
    revision = ForeignKeyField(Revision, backref="passages", on_delete="CASCADE")
    ordinal = IntegerField()
    text = TextField()
    line_start = IntegerField()
    line_end = IntegerField()
    char_start = IntegerField()
    char_end = IntegerField()
    heading_path = TextField(default="")
    page = IntegerField(null=True)

    class Meta:
        table_name = "passage"
        indexes = ((("revision", "ordinal"), True),)


ALL_MODELS = (Company, User, Pack, Document, Revision, Figure, Passage)
