"""Answer feedback, its triage history and the regression cases made from it (migrations/0003)."""

from __future__ import annotations

from peewee import CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from portal.db import BaseModel, JSONTextField
from portal.models.agents import Agent
from portal.models.clock import utcnow
from portal.models.packs import MAX_ID_CHARS
from portal.models.people import User
from portal.models.runs import Run


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
    agent_slug = CharField(max_length=MAX_ID_CHARS)
    question = TextField()
    kind = CharField(max_length=16, default="expected_source")
    pack_slug = CharField(null=True)
    document_pk = IntegerField(null=True)
    document_id = CharField(max_length=MAX_ID_CHARS, null=True)
    document_title = CharField(null=True)
    passage_id = IntegerField(null=True)
    passage_version = IntegerField(null=True)
    created_by = ForeignKeyField(User, null=True, on_delete="SET NULL")
    created_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "regression_case"
