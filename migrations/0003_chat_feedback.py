"""The support chat's conversations, answer ratings, their triage history and regression cases.

A chat turn is a run: ``run.conversation_id`` (nullable; try-page and command-line
runs have none) ties it to its conversation. A conversation keeps its agent's
slug and name, like a run, so it outlives the agent. A regression case names
its expected document and passage by plain integers, as a receipt does: it must
outlive edits and deletions (a deleted document is then reported as such).
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE conversation (
    id {pk},
    user_id INTEGER NOT NULL REFERENCES "user" (id) ON DELETE CASCADE,
    agent_id INTEGER REFERENCES agent (id) ON DELETE SET NULL,
    agent_slug VARCHAR(80) NOT NULL,
    agent_name VARCHAR(255) NOT NULL,
    title VARCHAR(255) NOT NULL,
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL
);
CREATE INDEX conversation_user_id_updated_at ON conversation (user_id, updated_at);
ALTER TABLE run ADD COLUMN conversation_id INTEGER REFERENCES conversation (id) ON DELETE SET NULL;
CREATE INDEX run_conversation_id ON run (conversation_id);
CREATE TABLE feedback (
    id {pk},
    run_id INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
    user_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    rating VARCHAR(16) NOT NULL,
    reasons TEXT NOT NULL DEFAULT '[]',
    note TEXT NOT NULL DEFAULT '',
    status VARCHAR(16) NOT NULL DEFAULT 'new',
    reviewer_note TEXT NOT NULL DEFAULT '',
    reviewed_by_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    reviewed_at {ts},
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL
);
CREATE UNIQUE INDEX feedback_run_id_user_id ON feedback (run_id, user_id);
CREATE INDEX feedback_rating_updated_at ON feedback (rating, updated_at);
CREATE TABLE feedback_triage (
    id {pk},
    feedback_id INTEGER NOT NULL REFERENCES feedback (id) ON DELETE CASCADE,
    status VARCHAR(16) NOT NULL,
    note TEXT NOT NULL DEFAULT '',
    actor_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    actor_email VARCHAR(255) NOT NULL,
    created_at {ts} NOT NULL
);
CREATE INDEX feedback_triage_feedback_id ON feedback_triage (feedback_id);
CREATE TABLE regression_case (
    id {pk},
    feedback_id INTEGER REFERENCES feedback (id) ON DELETE SET NULL,
    agent_id INTEGER REFERENCES agent (id) ON DELETE SET NULL,
    agent_slug VARCHAR(80) NOT NULL,
    question TEXT NOT NULL,
    pack_slug VARCHAR(255) NOT NULL,
    document_pk INTEGER NOT NULL,
    document_id VARCHAR(80) NOT NULL,
    document_title VARCHAR(255) NOT NULL,
    passage_id INTEGER,
    passage_version INTEGER,
    created_by_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    created_at {ts} NOT NULL
);
CREATE INDEX regression_case_feedback_id ON regression_case (feedback_id)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
