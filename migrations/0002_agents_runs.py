"""Agents and their pack grants, the audit log, runs and their receipts.

A run keeps its agent's slug and name, so it outlives the agent (``agent_id``
becomes NULL). A receipt row (``run_reference``) names its passage and document
by plain integers without foreign keys: it must outlive edits and deletions.
"""

from portal.migrate import run_sql

SCHEMA = """
CREATE TABLE agent (
    id {pk},
    slug VARCHAR(80) NOT NULL UNIQUE,
    name VARCHAR(255) NOT NULL,
    company_id INTEGER REFERENCES company (id) ON DELETE RESTRICT,
    instructions TEXT NOT NULL DEFAULT '',
    mode VARCHAR(16) NOT NULL DEFAULT 'preferred',
    seeded {bool} NOT NULL DEFAULT FALSE,
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL
);
CREATE TABLE agent_grant (
    id {pk},
    agent_id INTEGER NOT NULL REFERENCES agent (id) ON DELETE CASCADE,
    pack_id INTEGER NOT NULL REFERENCES pack (id) ON DELETE CASCADE,
    created_at {ts} NOT NULL
);
CREATE UNIQUE INDEX agent_grant_agent_id_pack_id ON agent_grant (agent_id, pack_id);
CREATE INDEX agent_grant_pack_id ON agent_grant (pack_id);
CREATE TABLE audit_log (
    id {pk},
    actor_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    action VARCHAR(64) NOT NULL,
    target_type VARCHAR(64) NOT NULL,
    target_id INTEGER,
    detail TEXT NOT NULL DEFAULT '{{}}',
    created_at {ts} NOT NULL
);
CREATE INDEX audit_log_target ON audit_log (target_type, target_id);
CREATE TABLE run (
    id {pk},
    agent_id INTEGER REFERENCES agent (id) ON DELETE SET NULL,
    agent_slug VARCHAR(80) NOT NULL,
    agent_name VARCHAR(255) NOT NULL,
    user_id INTEGER REFERENCES "user" (id) ON DELETE SET NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    status VARCHAR(32) NOT NULL,
    mode VARCHAR(16) NOT NULL,
    model VARCHAR(255) NOT NULL,
    model_called {bool} NOT NULL DEFAULT FALSE,
    warnings TEXT NOT NULL DEFAULT '[]',
    timings TEXT NOT NULL DEFAULT '{{}}',
    cited TEXT NOT NULL DEFAULT '[]',
    created_at {ts} NOT NULL
);
CREATE INDEX run_agent_id ON run (agent_id);
CREATE INDEX run_user_id ON run (user_id);
CREATE INDEX run_created_at ON run (created_at);
CREATE TABLE run_reference (
    id {pk},
    run_id INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
    n INTEGER NOT NULL,
    passage_id INTEGER NOT NULL,
    pack_slug VARCHAR(255) NOT NULL,
    pack_title VARCHAR(255) NOT NULL,
    document_pk INTEGER NOT NULL,
    document_id VARCHAR(80) NOT NULL,
    document_title VARCHAR(255) NOT NULL,
    version INTEGER NOT NULL,
    page INTEGER,
    heading_path TEXT NOT NULL DEFAULT '',
    line_start INTEGER NOT NULL,
    line_end INTEGER NOT NULL,
    text TEXT,
    figures TEXT NOT NULL DEFAULT '[]'
);
CREATE UNIQUE INDEX run_reference_run_id_n ON run_reference (run_id, n);
CREATE INDEX run_reference_document_pk ON run_reference (document_pk)
"""


def up(migrator, db):
    run_sql(db, SCHEMA)
