"""Packs and their documents: revisions, figures, passages, the outbox of index work (migrations 0001, 0007, 0016)."""

from __future__ import annotations

import re

from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from portal.db import BaseModel, JSONTextField
from portal.models.clock import utcnow
from portal.models.people import Company, User

PACK_KINDS = ("generic", "company")
VISIBILITIES = ("staff", "shared", "company")
REVISIONS_KEPT = 10

# A document id and a pack or agent slug have at most this many characters: their patterns, columns and
# refusal messages all read it.
MAX_ID_CHARS = 80
DOCUMENT_ID_PATTERN = rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_ID_CHARS - 1}}}"  # unanchored: grounding references embed it
DOCUMENT_ID_RE = re.compile(f"^{DOCUMENT_ID_PATTERN}$")
MAX_TITLE_CHARS = 255  # a pack's or a document's title: the width of its column (PostgreSQL enforces it)


class Pack(BaseModel):
    slug = CharField(unique=True)
    title = CharField(max_length=MAX_TITLE_CHARS)
    description = TextField(default="")
    kind = CharField(default="generic")
    company = ForeignKeyField(Company, null=True, backref="packs", on_delete="RESTRICT")
    # The words its readers type for what its documents name otherwise (``portal.search.vocabulary``).
    vocabulary = TextField(default="")
    # Bumped in the same transaction as every change to the pack's passages, which
    # also writes a PendingIndexUpdate with the new value; the Lucene index records
    # the generation it shows, so a lagging, lost or missing index is detected.
    index_generation = IntegerField(default=0)
    created_at = DateTimeField(default=utcnow)
    # When its title, description or vocabulary last changed (None: never): a save based on an older form is
    # refused (``packs.services.edit_pack``).
    updated_at = DateTimeField(null=True)
    # Set on delete: the row stays as a tombstone so the slug is never reused (migrations/0016).
    deleted_at = DateTimeField(null=True)

    class Meta:
        table_name = "pack"

    @classmethod
    def live(cls):
        """Packs that are not deleted; every listing and lookup of packs starts here."""
        return cls.select().where(cls.deleted_at.is_null())

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    def live_documents(self):
        return Document.select().where((Document.pack == self) & Document.deleted_at.is_null()).order_by(Document.title)


class Document(BaseModel):
    pack = ForeignKeyField(Pack, backref="documents", on_delete="CASCADE", index=False)
    doc_id = CharField(max_length=MAX_ID_CHARS)
    title = CharField(max_length=MAX_TITLE_CHARS)
    kind = CharField(default="markdown")  # markdown | text | docx | pdf | image
    current_version = IntegerField(default=0)
    visibility = CharField(default="staff")
    reader_role_names = JSONTextField(column_name="reader_roles", default=list)  # JSON list
    redacted = BooleanField(default=False)
    # Edited on the document page: a new version's file no longer renames the document (migrations/0014).
    title_by_hand = BooleanField(default=False)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)
    # Set on delete: the row stays as a tombstone so the id is never reused.
    deleted_at = DateTimeField(null=True)
    # Set by `cairn sync` (migrations/0017): the folder and the file in it the document came from,
    # the file's SHA-256, when, and the version that sync made (another current version: edited since).
    sync_folder = TextField(null=True)
    sync_path = TextField(null=True)
    sync_sha256 = CharField(max_length=64, null=True)
    synced_at = DateTimeField(null=True)
    synced_version = IntegerField(null=True)

    class Meta:
        table_name = "document"
        indexes = ((("pack", "doc_id"), True),)

    @property
    def is_deleted(self) -> bool:
        return self.deleted_at is not None

    @property
    def reader_roles(self) -> frozenset[str]:
        """The optional list of roles that may read it (empty: every role its visibility admits)."""
        return frozenset(self.reader_role_names)

    def current_revision(self) -> Revision | None:
        return Revision.select().where((Revision.document == self) & (Revision.version == self.current_version)).first()


class Revision(BaseModel):
    document = ForeignKeyField(Document, backref="revisions", on_delete="CASCADE", index=False)
    version = IntegerField()
    text = TextField()
    sha256 = CharField(max_length=64)
    original_name = CharField(null=True)
    original_path = CharField(null=True)  # relative to the data folder; never shown
    original_sha256 = CharField(max_length=64, null=True)
    original_content_type = CharField(null=True)
    original_size = IntegerField(null=True)
    pages = IntegerField(null=True)
    images_not_kept = JSONTextField(default=dict)  # {reason: count}
    # Who could read it directly while it was the current revision (migrations/0014); the current
    # revision carries the document's own. Reading an older one needs both (SPEC 2).
    visibility = CharField(default="staff")
    reader_role_names = JSONTextField(column_name="reader_roles", default=list)
    # Its text was written in the browser (an edit, figure descriptions), not read from a file (migrations/0021);
    # a copy for a change of who may read keeps its source's. An upload replacing such a text says so.
    text_by_hand = BooleanField(default=False)
    created_by = ForeignKeyField(User, null=True, backref="revisions", on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "revision"
        indexes = ((("document", "version"), True),)

    @property
    def reader_roles(self) -> frozenset[str]:
        """The roles this revision was narrowed to while it was current (empty: none)."""
        return frozenset(self.reader_role_names)


class Figure(BaseModel):
    revision = ForeignKeyField(Revision, backref="figures", on_delete="CASCADE", index=False)
    number = IntegerField()
    label = CharField(max_length=400)
    path = CharField()  # relative to the data folder
    width = IntegerField()
    height = IntegerField()

    class Meta:
        table_name = "figure"
        indexes = ((("revision", "number"), True),)


class Passage(BaseModel):
    revision = ForeignKeyField(Revision, backref="passages", on_delete="CASCADE", index=False)
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


class PendingIndexUpdate(BaseModel):
    """A change to a pack's passages that its Lucene index may not show yet: the outbox of index work.

    Written in the same transaction as the change, with the pack generation the change made; deleted
    only after a Lucene commit that shows the document as the database has it (migrations/0007).
    """

    pack = ForeignKeyField(Pack, backref="pending_index_updates", on_delete="CASCADE", index=False)
    doc_id = CharField(max_length=MAX_ID_CHARS)
    generation = IntegerField()

    class Meta:
        table_name = "index_pending"
        indexes = ((("pack", "generation"), True),)
