"""Agents, their grants and the audit log (migrations/0002)."""

from __future__ import annotations

from peewee import BooleanField, CharField, DateTimeField, ForeignKeyField, IntegerField, TextField

from portal.db import BaseModel, JSONTextField
from portal.models.clock import utcnow
from portal.models.packs import MAX_ID_CHARS, Pack
from portal.models.people import Company, User

GROUNDING_MODES = ("open", "preferred", "required")
MAX_DESCRIPTION_CHARS = 300


class Agent(BaseModel):
    slug = CharField(max_length=MAX_ID_CHARS, unique=True)
    name = CharField()
    company = ForeignKeyField(Company, null=True, backref="agents", on_delete="RESTRICT")
    instructions = TextField(default="")
    mode = CharField(max_length=16, default="preferred")
    # A draft until offered: members see it in the chat only then (migrations/0015).
    offered = BooleanField(default=False)
    description = CharField(max_length=MAX_DESCRIPTION_CHARS, default="")  # shown when a member chooses an agent
    seeded = BooleanField(default=False)  # made by the demo seed, which may reset it
    created_at = DateTimeField(default=utcnow)
    updated_at = DateTimeField(default=utcnow)

    class Meta:
        table_name = "agent"

    def granted_packs(self):
        return (
            Pack.select()
            .join(AgentGrant, on=(AgentGrant.pack == Pack.id))
            .where(AgentGrant.agent == self)
            .order_by(Pack.slug)
        )


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
