"""Peewee models and the queries that belong to them.

The schema itself is created by the numbered files in migrations/; these
classes must agree with them: tests/test_migrations.py checks that a freshly
migrated database shows no difference from ``ALL_MODELS`` (``playhouse.schema_diff``).
A foreign key that a composite index already starts with is declared
``index=False``: that index serves lookups and cascades by it.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets

from flask_login import UserMixin
from peewee import (
    BooleanField,
    CharField,
    DateTimeField,
    ForeignKeyField,
    IntegerField,
    TextField,
)

from portal.db import BaseModel, JSONTextField

ROLES = ("PlatformAdmin", "AgentBuilder", "Auditor", "Member")
STAFF_ROLES = frozenset({"PlatformAdmin", "AgentBuilder", "Auditor"})
PACK_KINDS = ("generic", "company")
VISIBILITIES = ("staff", "shared", "company")
REVISIONS_KEPT = 10

DOCUMENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def new_session_token() -> str:
    return secrets.token_urlsafe(32)


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


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
    def by_session_token(cls, token: str) -> "User | None":
        return cls.get_or_none(cls.session_token == token) if token else None

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(self.role_names)

    @roles.setter
    def roles(self, value) -> None:
        unknown = set(value) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown role(s): {', '.join(sorted(unknown))}")
        self.role_names = [r for r in ROLES if r in set(value)]

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
    # Bumped in the same transaction as every change to the pack's passages, which
    # also writes a PendingIndexUpdate with the new value; the Lucene index records
    # the generation it shows, so a lagging, lost or missing index is detected.
    index_generation = IntegerField(default=0)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "pack"

    def live_documents(self):
        return (Document.select()
                .where((Document.pack == self) & Document.deleted_at.is_null())
                .order_by(Document.title))


class Document(BaseModel):
    pack = ForeignKeyField(Pack, backref="documents", on_delete="CASCADE", index=False)
    doc_id = CharField(max_length=80)
    title = CharField()
    kind = CharField(default="markdown")  # markdown | text | docx | pdf | image
    current_version = IntegerField(default=0)
    visibility = CharField(default="staff")
    reader_role_names = JSONTextField(column_name="reader_roles", default=list)  # JSON list
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

    @property
    def reader_roles(self) -> frozenset[str]:
        """The optional list of roles that may read it (empty: every role its visibility admits)."""
        return frozenset(self.reader_role_names)

    def current_revision(self) -> "Revision | None":
        return (Revision.select()
                .where((Revision.document == self) & (Revision.version == self.current_version))
                .first())


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
    created_by = ForeignKeyField(User, null=True, backref="revisions", on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "revision"
        indexes = ((("document", "version"), True),)


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
    doc_id = CharField(max_length=80)
    generation = IntegerField()

    class Meta:
        table_name = "index_pending"
        indexes = ((("pack", "generation"), True),)


# --- Agents, their grants, the audit log, conversations, runs and receipts (migrations/0002, 0003) ---

GROUNDING_MODES = ("open", "preferred", "required")
RUN_STATUSES = ("completed", "completed_with_warning", "stopped")


class Agent(BaseModel):
    slug = CharField(max_length=80, unique=True)
    name = CharField()
    company = ForeignKeyField(Company, null=True, backref="agents", on_delete="RESTRICT")
    instructions = TextField(default="")
    mode = CharField(max_length=16, default="preferred")
    seeded = BooleanField(default=False)  # made by the demo seed, which may reset it
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "agent"

    def granted_packs(self):
        return (Pack.select().join(AgentGrant, on=(AgentGrant.pack == Pack.id))
                .where(AgentGrant.agent == self).order_by(Pack.slug))


class AgentGrant(BaseModel):
    agent = ForeignKeyField(Agent, backref="grants", on_delete="CASCADE", index=False)
    pack = ForeignKeyField(Pack, backref="grants", on_delete="CASCADE")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "agent_grant"
        indexes = ((("agent", "pack"), True),)


class AuditLog(BaseModel):
    """Who changed what and when; ``detail`` is JSON describing the change."""

    actor = ForeignKeyField(User, null=True, backref="audit_entries", on_delete="SET NULL")
    action = CharField(max_length=64)
    target_type = CharField(max_length=64)
    target_id = IntegerField(null=True)
    detail = JSONTextField(default=dict)
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "audit_log"
        indexes = ((("target_type", "target_id"), False),)


class Conversation(BaseModel):
    """A Member's chat with one agent; its turns are runs (``Run.conversation``)."""

    user = ForeignKeyField(User, backref="conversations", on_delete="CASCADE", index=False)
    agent = ForeignKeyField(Agent, null=True, backref="conversations", on_delete="SET NULL")
    agent_slug = CharField(max_length=80)  # kept: the conversation outlives the agent
    agent_name = CharField()
    title = CharField()
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "conversation"
        indexes = ((("user", "updated_at"), False),)

    def turns(self, newest_first: bool = False):
        """Its runs in the order they were asked (or the reverse), the order of its index on ``run``."""
        order = (Run.created_at.desc(), Run.id.desc()) if newest_first else (Run.created_at, Run.id)
        return Run.select().where(Run.conversation == self).order_by(*order)


class Run(BaseModel):
    """One question put to an agent, with its answer; ``RunReference`` rows are its receipt."""

    agent = ForeignKeyField(Agent, null=True, backref="runs", on_delete="SET NULL")
    agent_slug = CharField(max_length=80)  # kept: the run outlives the agent
    agent_name = CharField()
    user = ForeignKeyField(User, null=True, backref="runs", on_delete="SET NULL")
    question = TextField()
    answer = TextField()
    status = CharField(max_length=32)
    mode = CharField(max_length=16)
    model = CharField()
    model_called = BooleanField(default=False)
    warnings = JSONTextField(default=list)  # [str]
    timings = JSONTextField(default=dict)  # {step: milliseconds}
    cited = JSONTextField(default=list)  # the reference numbers the answer cites
    # What the answer rests on: a key of portal.answers.grounding.ANSWER_BASES.
    answer_basis = CharField(max_length=16, default="documents")
    # The packs searched ({"slug", "title"}) as they were then: grants and titles change later.
    searched_packs = JSONTextField(default=list)
    # A chat turn is a run; runs asked elsewhere (try page, `cairn ask`) have no conversation.
    conversation = ForeignKeyField(Conversation, null=True, backref="runs", on_delete="SET NULL", index=False)
    created_at = DateTimeField(default=utcnow, index=True)

    class Meta:
        table_name = "run"
        # A conversation's turns in order (``Conversation.turns``), one page at a time (migrations/0012).
        indexes = ((("conversation", "created_at", "id"), False),)

    def references(self):
        return RunReference.select().where(RunReference.run == self).order_by(RunReference.n)


class RunReference(BaseModel):
    """One passage exactly as it was issued to a run, as reference ``[n]``.

    ``passage_id`` and ``document_pk`` are plain integers, not foreign keys: the
    receipt outlives edits and deletions. Deleting the document empties ``text``
    and the figure labels (its text is gone); the rest of the row stays.
    """

    run = ForeignKeyField(Run, backref="reference_rows", on_delete="CASCADE", index=False)
    n = IntegerField()
    passage_id = IntegerField()
    pack_slug = CharField()
    pack_title = CharField()
    document_pk = IntegerField(index=True)
    document_id = CharField(max_length=80)
    document_title = CharField()
    version = IntegerField()
    page = IntegerField(null=True)
    heading_path = TextField(default="")
    line_start = IntegerField()
    line_end = IntegerField()
    text = TextField(null=True)
    figures = JSONTextField(default=list)  # [{"number", "label", "figure_id"}]

    class Meta:
        table_name = "run_reference"
        indexes = ((("run", "n"), True),)


class ReceiptFigure(BaseModel):
    """A figure a receipt cites, kept after its revision was purged (migrations/0006).

    ``figure_id`` is the id the receipt's figure entry names (that figure row is
    gone); ``path`` is the kept copy under the document's folder. Deleting the
    document deletes both.
    """

    figure_id = IntegerField(unique=True)
    document_pk = IntegerField(index=True)
    path = CharField()  # relative to the data folder
    width = IntegerField()
    height = IntegerField()

    class Meta:
        table_name = "receipt_figure"


# --- Answer feedback and regression cases (migrations/0003) -------


class Feedback(BaseModel):
    """One person's rating of one answer (unique per run and user), with its triage state.

    ``reasons`` is a JSON list of reason keys (``portal.feedback.services.REASONS``).
    """

    run = ForeignKeyField(Run, backref="feedback", on_delete="CASCADE", index=False)
    user = ForeignKeyField(User, null=True, backref="feedback", on_delete="SET NULL")
    rating = CharField(max_length=16)
    reasons = JSONTextField(default=list)
    note = TextField(default="")
    status = CharField(max_length=16, default="new")
    reviewer_note = TextField(default="")
    reviewed_by = ForeignKeyField(User, null=True, backref="reviewed_feedback", on_delete="SET NULL")
    reviewed_at = DateTimeField(null=True)
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)  # when the rating was last given or changed

    class Meta:
        table_name = "feedback"
        indexes = ((("run", "user"), True), (("rating", "updated_at"), False))


class FeedbackTriage(BaseModel):
    """One change of a feedback item's triage status or reviewer note: who, when, what."""

    feedback = ForeignKeyField(Feedback, backref="triage_history", on_delete="CASCADE")
    status = CharField(max_length=16)
    note = TextField(default="")
    actor = ForeignKeyField(User, null=True, on_delete="SET NULL")
    actor_email = CharField()  # kept: the history still says who after the user is gone
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "feedback_triage"


class RegressionCase(BaseModel):
    """A question `cairn eval` checks against its agent: it should find a document (or passage) in
    the agent's top 8 (kind ``expected_source``), or it should get "no evidence" (kind ``no_evidence``,
    which names no document).

    ``document_pk`` and ``passage_id`` are plain integers, as in a receipt: the
    case outlives edits and deletions, and reports them.
    """

    feedback = ForeignKeyField(Feedback, null=True, backref="regression_cases", on_delete="SET NULL")
    agent = ForeignKeyField(Agent, null=True, backref="regression_cases", on_delete="SET NULL")
    agent_slug = CharField(max_length=80)
    question = TextField()
    kind = CharField(max_length=16, default="expected_source")
    pack_slug = CharField(null=True)
    document_pk = IntegerField(null=True)
    document_id = CharField(max_length=80, null=True)
    document_title = CharField(null=True)
    passage_id = IntegerField(null=True)
    passage_version = IntegerField(null=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "regression_case"


ALL_MODELS = (Company, User, Pack, Document, Revision, Figure, Passage, PendingIndexUpdate,
              Agent, AgentGrant, AuditLog, Conversation, Run, RunReference, ReceiptFigure,
              Feedback, FeedbackTriage, RegressionCase)
