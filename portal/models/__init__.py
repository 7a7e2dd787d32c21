"""Peewee models and the queries that belong to them, one module per area; import them from here.

The schema itself is created by the numbered files in migrations/; these
classes must agree with them: tests/test_migrations.py checks that a freshly
migrated database shows no difference from ``ALL_MODELS`` (``playhouse.schema_diff``).
A foreign key that a composite index already starts with is declared
``index=False``: that index serves lookups and cascades by it.
"""

from portal.models.agents import GROUNDING_MODES, MAX_DESCRIPTION_CHARS, Agent, AgentGrant, AuditLog
from portal.models.clock import utcnow
from portal.models.describing import DescribeJob
from portal.models.feedback import Feedback, FeedbackTriage, RegressionCase
from portal.models.packs import (
    DOCUMENT_ID_PATTERN,
    DOCUMENT_ID_RE,
    MAX_ID_CHARS,
    MAX_TITLE_CHARS,
    PACK_KINDS,
    REVISIONS_KEPT,
    VISIBILITIES,
    Document,
    Figure,
    Pack,
    Passage,
    PendingIndexUpdate,
    Revision,
)
from portal.models.people import (
    ADMIN,
    AUDITOR,
    BUILDER,
    MEMBER,
    ROLES,
    STAFF_ROLES,
    Company,
    User,
    new_session_token,
)
from portal.models.runs import RUN_STATUSES, Conversation, ReceiptFigure, Run, RunReference
from portal.models.tokens import ApiToken

# The one list of every model: tests/test_migrations.py compares it with the migrated schema.
ALL_MODELS = (
    Company,
    User,
    Pack,
    Document,
    Revision,
    Figure,
    Passage,
    PendingIndexUpdate,
    Agent,
    AgentGrant,
    AuditLog,
    Conversation,
    Run,
    RunReference,
    ReceiptFigure,
    Feedback,
    FeedbackTriage,
    RegressionCase,
    ApiToken,
    DescribeJob,
)

__all__ = [
    "ADMIN",
    "ALL_MODELS",
    "AUDITOR",
    "BUILDER",
    "ApiToken",
    "DOCUMENT_ID_PATTERN",
    "DOCUMENT_ID_RE",
    "GROUNDING_MODES",
    "MAX_DESCRIPTION_CHARS",
    "MAX_ID_CHARS",
    "MAX_TITLE_CHARS",
    "MEMBER",
    "PACK_KINDS",
    "REVISIONS_KEPT",
    "ROLES",
    "RUN_STATUSES",
    "STAFF_ROLES",
    "VISIBILITIES",
    "Agent",
    "AgentGrant",
    "AuditLog",
    "Company",
    "Conversation",
    "Document",
    "Feedback",
    "FeedbackTriage",
    "Figure",
    "Pack",
    "Passage",
    "PendingIndexUpdate",
    "ReceiptFigure",
    "RegressionCase",
    "Revision",
    "Run",
    "RunReference",
    "User",
    "new_session_token",
    "utcnow",
]
