"""Conversations, runs and their receipts (migrations/0002, 0003, 0006, 0019, 0020)."""

from __future__ import annotations

from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from portal.db import BaseModel, JSONTextField
from portal.models.agents import Agent
from portal.models.clock import utcnow
from portal.models.packs import MAX_ID_CHARS
from portal.models.people import User

RUN_STATUSES = ("completed", "completed_with_warning", "stopped")


class Conversation(BaseModel):
    """A Member's chat with one agent; its turns are runs (``Run.conversation``)."""

    user = ForeignKeyField(User, backref="conversations", on_delete="CASCADE", index=False)
    agent = ForeignKeyField(Agent, null=True, backref="conversations", on_delete="SET NULL")
    agent_slug = CharField(max_length=MAX_ID_CHARS)  # kept: the conversation outlives the agent
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
    agent_slug = CharField(max_length=MAX_ID_CHARS)  # kept: the run outlives the agent
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
    absent_words = JSONTextField(default=list)  # the question's words no searched passage contained (evidence.py)
    evidence_gap = JSONTextField(default=dict)  # why there was no evidence besides those words (Choice.gap)
    read_as = TextField(default="")  # a follow-up as read, about what its conversation was about (follow_up)
    # A chat turn is a run; runs asked elsewhere (try page, `cairn ask`) have no conversation.
    conversation = ForeignKeyField(Conversation, null=True, backref="runs", on_delete="SET NULL", index=False)
    created_at = DateTimeField(default=utcnow, index=True)
    # What the provider charged, in millionths of a US dollar; set by calls priced by a setting
    # (describing figures: migrations/0019), None for answers.
    cost_microusd = IntegerField(null=True)

    class Meta:
        table_name = "run"
        # A conversation's turns in order (``Conversation.turns``), one page at a time (migrations/0012).
        indexes = ((("conversation", "created_at", "id"), False),)

    @property
    def question_as_read(self) -> str:
        """The question as it was answered: a follow-up as read (``read_as``), else as typed. What a regression case
        or another agent is asked, to be asked the same question."""
        return self.read_as or self.question

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
    document_id = CharField(max_length=MAX_ID_CHARS)
    document_title = CharField()
    version = IntegerField()
    page = IntegerField(null=True)
    heading_path = TextField(default="")
    line_start = IntegerField()
    line_end = IntegerField()
    text = TextField(null=True)
    figures = JSONTextField(default=list)  # [{"number", "label", "figure_id"}]
    # SHA-256 of the revision's full text, as issued: the grounding reference names it (migrations/0011).
    sha256 = CharField(max_length=64, null=True)

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
